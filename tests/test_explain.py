"""`irpool explain`: numbers checked by hand for the D1 and D2 cases of docs/semantics.md, the
picture, and the JSON twin."""

from __future__ import annotations

import json
import math
import re
import struct
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT, irpool, sweep
from hypothesis import given, settings
from strategies import pool_params

from irpool.errors import IrpoolError, LimitError, UsageError
from irpool.explain import explain_graph, explain_layer
from irpool.frontends.ir_xml import parse_text
from irpool.geometry import AxisPlan, PoolParams, plan
from irpool.kernel import divisor
from irpool.shapes import infer

D1 = """<layer id="1" name="d1" type="AvgPool" version="opset1">
  <data kernel="3" strides="2" pads_begin="1" pads_end="1" exclude-pad="false" rounding_type="ceil"/>
  <input><port id="0"><dim>1</dim><dim>1</dim><dim>6</dim></port></input>
  <output><port id="1"><dim>1</dim><dim>1</dim><dim>4</dim></port></output>
</layer>"""

D2 = """<layer id="1" name="d2" type="AvgPool" version="opset1">
  <data kernel="3" strides="3" pads_begin="1" pads_end="1" exclude-pad="true" rounding_type="ceil"/>
  <input><port id="0"><dim>1</dim><dim>1</dim><dim>2</dim></port></input>
  <output><port id="1"><dim>1</dim><dim>1</dim><dim>2</dim></port></output>
</layer>"""


def test_d1_divisors_of_the_overhang_window() -> None:
    (report,) = explain_graph(parse_text(D1, "d1.xml"))
    (axis,) = report.axes
    # ceil((6 + 1 + 1 - 3) / 2) + 1 = 4 windows starting at -1, 1, 3, 5
    assert axis.formula == "ceil((6 + 1 + 1 - 3) / 2) + 1 = 4"
    assert axis.padded_windows == [0, 3] and axis.overhang_windows == [3]
    last = next(b for b in report.borders if b.index == (3,))
    # window 3 = {x5, pad, overhang}: openvino counts the whole kernel, the others the two
    # positions within the declared pads
    assert last.taps_in_input == 1
    assert last.divisors == {"openvino": 3.0, "onnx": 2.0, "torch": 2.0}
    assert (
        last.note
        == "OpenVINO divides this window by 3; onnxruntime and PyTorch divide this window by 2"
    )
    first = next(b for b in report.borders if b.index == (0,))
    assert first.divisors == {"openvino": 3.0, "onnx": 3.0, "torch": 3.0} and first.note is None


def test_d2_extra_window_only_in_openvino() -> None:
    (report,) = explain_graph(parse_text(D2, "d2.xml"))
    (axis,) = report.axes
    # openvino keeps a window starting at 3 - 1 = 2 = n: positions 2 (pad), 3, 4 (overhang)
    assert report.output_shape == (1, 1, 2)
    assert (
        axis.empty_windows == [1]
        and axis.last_window == "window 1: taps at 2(pad), 3(overhang), 4(overhang)"
    )
    assert "NaN" in report.empty_result
    assert "onnx: output [1,1,1]" in report.conventions["onnx"] or report.conventions[
        "onnx"
    ].startswith("output [1,1,1]")
    extra = next(b for b in report.borders if b.index == (1,))
    assert extra.divisors["onnx"] is None and extra.divisors["torch"] is None
    assert "onnxruntime and PyTorch and TensorFlow have no such window" in (extra.note or "")


def test_d2_under_torch_convention_drops_the_window() -> None:
    (report,) = explain_graph(parse_text(D2, "d2.xml"), convention="torch")
    assert report.output_shape == (1, 1, 1)
    assert "minus 1" in report.axes[0].formula


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(
    "model,layer,panels",
    [
        ("fixtures/ir/pool_zoo.xml", "ap1_ceil", 2),  # D1: openvino beside onnx/torch
        ("fixtures/ir/ranks.xml", "avg1d", 1),
        ("fixtures/ir/ranks.xml", "max3d", 1),
    ],
)
def test_png_is_written(tmp_path: Path, model: str, layer: str, panels: int) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "w.png"
    result = irpool("explain", model, "--layer", layer, "--png", str(out))
    assert result.returncode == 0, result.stderr
    width, height = _png_size(out)
    # one panel is 900 pixels wide, 2-D panels side by side 520 each
    assert width == (900 if panels == 1 else 520 * panels)
    assert 300 <= height <= 1000  # the height follows the drawing (1-D: lanes)


def test_cli_json_and_unknown_layer() -> None:
    result = irpool("explain", "fixtures/ir/pool_zoo.xml", "--layer", "mp8_indices", "--json")
    doc = json.loads(result.stdout)
    assert doc["schema"] == "irpool.explain/1"
    (layer,) = doc["layers"]
    assert layer["op"] == "MaxPool-8" and layer["output_shape"] == [1, 3, 9, 9]
    bad = irpool("explain", "fixtures/ir/pool_zoo.xml", "--layer", "nope")
    assert bad.returncode == 2 and "mp8_indices" in bad.stderr


# -- formulas, limits and speed, --cell, the default convention ---------------------------------

_ANNOTATION = re.compile(r" \[[^\]]*\]")


def _formula_value(text: str) -> tuple[int, int]:
    """(the arithmetic evaluated exactly, the number after the last '='); [...] are notes."""
    expr, _, final = _ANNOTATION.sub("", text).rpartition(" = ")
    exact = re.sub(r"\d+", lambda m: f"Fraction({m.group()})", expr)
    names = {"Fraction": Fraction, "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc}
    value = eval(exact, {"__builtins__": {}}, {**names, "max": max})
    return int(value), int(final)


BASE = parse_text(
    """<layer id="1" name="p" type="MaxPool" version="opset8">
  <data kernel="2" strides="1" pads_begin="0" pads_end="0" dilations="1"/>
  <input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim></port></input>
  <output><port id="1"><dim>1</dim><dim>1</dim><dim>3</dim></port>
  <port id="2" precision="I64"><dim>1</dim><dim>1</dim><dim>3</dim></port></output>
</layer>""",
    "p.xml",
)


def _naive_classify(a: AxisPlan) -> tuple[list[int], list[int], list[int]]:
    padded, overhang, empty = [], [], []
    for j in range(a.out):
        taps = a.taps(j)
        if any(p < 0 or a.size <= p < a.size + a.pad_end for p in taps):
            padded.append(j)
        if any(p >= a.size + a.pad_end for p in taps):
            overhang.append(j)
        if not any(0 <= p < a.size for p in taps):
            empty.append(j)
    return padded, overhang, empty


@pytest.mark.parametrize("convention", ["openvino", "onnx", "torch", "tf"])
@settings(max_examples=sweep(quick=40, full=300), deadline=None)
@given(case=pool_params(window=6, stride=4, pad=4, size=14))
def test_report_agrees_with_the_plan(
    convention: str, case: tuple[PoolParams, tuple[int, ...]]
) -> None:
    """Every formula's arithmetic gives the number it ends in, which is the plan's size; the
    pads shown are the plan's; the window lists are the per-tap definitions; each border
    window's divisor is the kernel's divisor of that window under each convention."""
    params, shape = case
    base = infer(BASE).pooling[0]
    pl = replace(base, bound=base.bound.with_params(params))
    try:
        p = plan(params, shape, convention)
    except IrpoolError:
        with pytest.raises(IrpoolError):
            explain_layer(pl, shape, convention)
        return
    report = explain_layer(pl, shape, convention)
    assert report.output_shape == p.output_shape
    for a, axis in zip(p.axes, report.axes, strict=True):
        assert _formula_value(axis.formula) == (a.out, a.out), axis.formula
        assert axis.pads == (a.pad_begin, a.pad_end)
        if params.auto_pad in ("same_upper", "same_lower"):
            total, _, rest = axis.pads_text.partition("total pad = ")[2].rpartition(" -> ")
            assert rest == f"begin {a.pad_begin}, end {a.pad_end}", axis.pads_text
            assert _formula_value(total) == (a.pad_begin + a.pad_end,) * 2, axis.pads_text
        assert (axis.padded_windows, axis.overhang_windows, axis.empty_windows) == (
            _naive_classify(a)
        )
    kernels = {}
    for name in ("openvino", "onnx", "torch", "tf"):
        try:
            other = plan(params, shape, name)
        except IrpoolError:
            continue
        kernels[name] = (other, divisor(other) if other.reduce == "mean" else None)
    for b in report.borders:
        assert b.taps_in_input == math.prod(
            a.in_input(j) for a, j in zip(p.axes, b.index, strict=True)
        )
        for name, got in b.divisors.items():
            if name not in kernels or kernels[name][1] is None:
                assert got is None
                continue
            other, every = kernels[name]
            if any(j >= a.out for a, j in zip(other.axes, b.index, strict=True)):
                assert got is None
            elif isinstance(every, float):
                assert got == every
            else:
                assert got == float(every[b.index])


def test_long_axis_is_quick() -> None:
    """3,000,000 positions: about a second (the per-window Python loops took minutes)."""
    graph = parse_text(D1.replace("<dim>6</dim>", "<dim>3000000</dim>"), "d1.xml")
    started = time.perf_counter()
    (report,) = explain_graph(graph, input_shape=(1, 1, 3_000_000))
    assert time.perf_counter() - started < 10
    (axis,) = report.axes
    assert report.output_shape == (1, 1, 1_500_001)
    assert axis.padded_windows == [0, 1_500_000] and axis.overhang_windows == [1_500_000]
    assert [b.index for b in report.borders] == [(0,), (1_500_000,)]
    assert report.borders[1].divisors == {"openvino": 3.0, "onnx": 2.0, "torch": 2.0}


def test_work_above_the_limit_is_refused() -> None:
    graph = parse_text(D1, "d1.xml")
    with pytest.raises(LimitError, match="above the limit"):
        explain_graph(graph, input_shape=(1, 1, 10**12))
    with pytest.raises(LimitError, match="the input has shape"):
        explain_graph(graph, input_shape=(1, 1, 6), max_elements=5)
    # a small input whose padding makes a large output
    big_pads = D1.replace('pads_begin="1" pads_end="1"', 'pads_begin="1" pads_end="4000000000"')
    with pytest.raises(LimitError, match="output under the openvino convention"):
        explain_graph(parse_text(big_pads, "d1.xml"))


def test_cli_refuses_a_huge_input_quickly() -> None:
    started = time.perf_counter()
    result = irpool(
        "explain",
        "fixtures/divergences/d1_avgpool_ceil.xml",
        "--input-shape",
        "1,1,1000000000000",
        timeout=60,
    )
    assert time.perf_counter() - started < 10
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("irpool: fixtures/divergences/d1_avgpool_ceil.xml:")
    assert "1000000000000 elements, above the limit" in result.stderr


@pytest.mark.parametrize(
    ("layer", "cell", "message"),
    [
        ("mp1", "3", "--cell 3 has 1 value(s); expected 2 (I,J)"),
        ("mp1", "3,4,5", "--cell 3,4,5 has 3 value(s)"),
        ("mp1", "3,99", "--cell 3,99 is outside the output"),
    ],
)
def test_png_cell_must_name_a_drawn_window(
    tmp_path: Path, layer: str, cell: str, message: str
) -> None:
    out = tmp_path / "cell.png"
    result = irpool(
        "explain", "fixtures/ir/pool_zoo.xml", "--layer", layer, "--png", str(out), "--cell", cell
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not out.exists()


def test_png_cell_of_a_1d_layer(tmp_path: Path) -> None:
    from irpool.plot import draw

    (report,) = explain_graph(parse_text(D1, "d1.xml"))
    with pytest.raises(UsageError, match=r"cell 0,1 has 2 value\(s\); expected 1 \(I\)"):
        draw(report, str(tmp_path / "x.png"), [(0, 1)])
    with pytest.raises(UsageError, match="outside the output"):
        draw(report, str(tmp_path / "x.png"), [(4,)])
    assert not (tmp_path / "x.png").exists()


def test_onnx_model_defaults_to_the_onnx_convention(onnx: ModuleType, tmp_path: Path) -> None:
    """D2: onnxruntime drops the ceil window openvino keeps; explain of the ONNX model shows
    what `irpool run` computes for it."""
    from irpool.api import explain
    from irpool.frontends.onnx_model import load as load_onnx

    model = str(ROOT / "fixtures" / "divergences" / "d2_maxpool_ceil.onnx")
    out = tmp_path / "out.npz"
    ran = irpool("run", model, "-o", str(out))
    assert ran.returncode == 0, ran.stderr
    with np.load(out) as arrays:
        (shape,) = [arrays[k].shape for k in arrays.files]
    (report,) = explain(load_onnx(model))
    assert report.convention == "onnx"
    assert report.output_shape == shape == (1, 1, 1, 1)
    (openvino,) = explain(load_onnx(model), convention="openvino")
    assert openvino.output_shape == (1, 1, 2, 2)


@pytest.mark.parametrize("opset", [11, 19])
def test_explain_says_where_onnxruntime_refuses(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path, opset: int
) -> None:
    """SAME_UPPER with a kernel shorter than the stride: onnxruntime refuses AveragePool-11
    (negative pads on its MLAS path) and computes AveragePool-19; explain says which."""
    from onnx import TensorProto, helper

    node = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[1], strides=[3], auto_pad="SAME_UPPER"
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(str(path), options)
        session.run(None, {"x": np.ones((1, 1, 5), np.float32)})
        refused = False
    except Exception:
        refused = True
    out = irpool("explain", str(path))
    assert out.returncode == 0, out.stderr
    assert ("onnxruntime refuses" in out.stdout) == refused == (opset == 11), out.stdout
