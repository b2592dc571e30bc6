"""`irpool check`: spec examples, IR files written by openvino, corrupted dims, the CLI edge."""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, irpool, sweep
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import pool_params

from irpool import conventions
from irpool.check import check_file, check_graph
from irpool.errors import IrpoolError
from irpool.frontends.ir_xml import parse_text
from irpool.geometry import PoolParams, dilated, infer_shape, out_size, plan, shape_rule
from irpool.model import Dim

SPEC = ROOT / "fixtures" / "spec" / "avgpool-1-examples.xml"
WRITTEN_BY_OPENVINO = sorted((ROOT / "fixtures" / "ir").glob("*.xml")) + sorted(
    (ROOT / "fixtures" / "real").glob("*.xml")
)


def test_spec_examples_one_and_two_are_wrong() -> None:
    report = check_file(str(SPEC))
    assert [r.pooling.layer.index for r in report.layers if r.findings] == [0, 1]
    # Examples 1 and 2 declare 32x32 where openvino computes ceil(32 / 2) = 16.
    for r in report.layers[:2]:
        assert [(f.axis, f.declared, f.inferred) for f in r.findings] == [
            (2, "32", "16"),
            (3, "32", "16"),
        ]
    assert [r.pooling.output_shape[2].lo for r in report.layers] == [16, 16, 10, 15, 14]


def test_spec_examples_cli_exit_1_and_formula() -> None:
    out = irpool("check", str(SPEC.relative_to(ROOT)))
    assert out.returncode == 1, out.stderr
    fails = [line for line in out.stdout.splitlines() if "FAIL" in line]
    assert len(fails) == 4
    assert all('"#1"' in line or '"#2"' in line for line in fails)
    assert "floor((32 + 0 + 0 - 2) / 2) + 1 = 16" in out.stdout
    assert "floor((32 + 1 + 2 - 5) / 2) + 1 = 16" in out.stdout


@pytest.mark.parametrize("path", WRITTEN_BY_OPENVINO, ids=lambda p: p.name)
def test_files_written_by_openvino_pass(path: Path) -> None:
    report = check_file(str(path))
    assert report.ok, [f.message for f in report.findings]
    assert report.layers


def _dim_spans(text: str) -> list[re.Match[str]]:
    return list(re.finditer(r"<dim>(-?\d+)</dim>", text))


def _layer_at(text: str, offset: int) -> str:
    start = text.rfind("<layer ", 0, offset)
    return re.search(r'name="([^"]*)"', text[start:]).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("path", WRITTEN_BY_OPENVINO, ids=lambda p: p.name)
def test_one_corrupted_dim_is_found_and_named(path: Path) -> None:
    text = path.read_text()
    spans = _dim_spans(text)
    rng = random.Random(path.name)
    for m in rng.sample(spans, min(sweep(quick=10, full=60), len(spans))):
        old = int(m.group(1))
        new = old + 1 if old > 0 else (7 if old == -1 else 1)
        corrupted = text[: m.start(1)] + str(new) + text[m.end(1) :]
        report = check_graph(parse_text(corrupted, str(path)))
        layer = _layer_at(text, m.start())
        assert report.findings, f"dim {old}->{new} in {layer} went unnoticed"
        named = " ".join(f"{f.layer} {f.message}" for f in report.findings)
        assert layer in named, f"{layer} not named: {named}"


def test_json_report() -> None:
    out = irpool("check", "--json", str(SPEC.relative_to(ROOT)))
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["schema"] == "irpool.check/1" and doc["ok"] is False
    findings = doc["files"][0]["findings"]
    assert {(f["layer"], f["axis"], f["declared"], f["inferred"]) for f in findings} == {
        ("#1", 2, "32", "16"),
        ("#1", 3, "32", "16"),
        ("#2", 2, "32", "16"),
        ("#2", 3, "32", "16"),
    }


def test_invalid_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<net version="11"><layers><layer id="0" name="p" type="AvgPool" '
        'version="opset1"><data kernel="2,2" strides="0,1"/><input><port id="0">'
        "<dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input><output>"
        '<port id="1"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output>'
        "</layer></layers></net>"
    )
    out = irpool("check", str(bad))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"{bad}:1:" in out.stderr


def test_usage_errors_are_one_line() -> None:
    out = irpool("check")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    out = irpool("frobnicate")
    assert out.returncode == 2 and out.stderr.count("\n") == 1


def test_version_and_help() -> None:
    assert irpool("--version").stdout.startswith("irpool ")
    assert irpool("check", "--help").returncode == 0


def test_cli_reference_is_current() -> None:
    from irpool.cli_doc import markdown

    assert (ROOT / "docs" / "cli.md").read_text() == markdown(), (
        "regenerate: python -m irpool.cli_doc > docs/cli.md"
    )


# -- formulas: the text is the arithmetic that gave the inferred size --------------------------

_ANNOTATION = re.compile(r" \[[^\]]*\]")


def formula_value(text: str) -> tuple[int, int]:
    """(the arithmetic of a formula evaluated exactly, the number after its last '='); the
    annotations in [...] (k_eff, minus 1, undilated kernel) are explanations, not terms."""
    from fractions import Fraction

    expr, _, final = _ANNOTATION.sub("", text).rpartition(" = ")
    exact = re.sub(r"\d+", lambda m: f"Fraction({m.group()})", expr)
    names = {
        "Fraction": Fraction,
        "floor": math.floor,
        "ceil": math.ceil,
        "trunc": math.trunc,
        "max": max,
    }
    value = eval(exact, {"__builtins__": {}}, names)
    return int(value), int(final)


def pads_value(text: str) -> tuple[int, int, int, int]:
    """(total evaluated, total shown, begin, end) of `same_upper: total pad = ... -> begin B, end E`."""
    m = re.fullmatch(r"same_(?:upper|lower): total pad = (.*) -> begin (-?\d+), end (-?\d+)", text)
    assert m, text
    value, shown = formula_value(m.group(1))
    return value, shown, int(m.group(2)), int(m.group(3))


LAYERS = pool_params(window=7, stride=5, pad=5, size=20, channels=2, openvino_checks=True)


@pytest.mark.parametrize("convention", ["openvino", "onnx", "torch"])
@settings(max_examples=sweep(quick=50, full=400), deadline=None)
@given(case=LAYERS)
def test_formula_ends_in_the_planned_size(
    convention: str, case: tuple[PoolParams, tuple[int, ...]]
) -> None:
    """Static dims: shape inference (check) and plan() (run, explain) agree on the size, or both
    refuse; the formula's arithmetic, evaluated exactly, gives the number it ends in, which is
    that size; SAME pads are the plan's pads and their total is the formula's."""
    params, shape = case
    cv = conventions.get(convention)
    try:
        p = plan(params, shape, cv)
    except IrpoolError:
        with pytest.raises(IrpoolError):
            infer_shape(params, tuple(Dim.of(n) for n in shape), cv)
        return
    dims, formulas = infer_shape(params, tuple(Dim.of(n) for n in shape), cv)
    assert tuple(d.lo for d in dims) == p.output_shape
    for a, text in zip(p.axes, formulas, strict=True):
        *pads_text, size_text = text.split("; ")
        value, final = formula_value(size_text)
        assert value == final == a.out, text
        if params.auto_pad in ("same_upper", "same_lower"):
            total, shown, begin, end = pads_value(pads_text[0])
            assert total == shown == begin + end and (begin, end) == (a.pad_begin, a.pad_end), text
            assert ("undilated" in text) == (a.dilation > 1 and not cv.same_pads_dilated)
        if params.rounding == "floor" and "trunc(" in size_text:
            assert cv.onnxruntime_sizes, text  # only onnxruntime divides toward zero
        if "max(0, " in size_text.split(" + 1")[0]:
            assert not cv.onnxruntime_sizes, text  # onnxruntime does not clamp the span


@settings(max_examples=sweep(quick=50, full=400), deadline=None)
@given(
    case=LAYERS,
    bounds=st.tuples(st.integers(0, 15), st.integers(0, 8) | st.none()),
)
def test_interval_formula_ends_in_each_bound(
    case: tuple[PoolParams, tuple[int, ...]], bounds: tuple[int, int | None]
) -> None:
    """A non-static dim: the formula on each bound ends in the bound of the inferred dim, which
    is out_size on that bound."""
    params, shape = case
    lo, extra = bounds
    n = Dim(lo, None if extra is None else lo + extra + 1)
    dims_in = (Dim.of(1), Dim.of(2), n, *(Dim.of(v) for v in shape[3:]))
    try:
        dims, formulas = infer_shape(params, dims_in, conventions.OPENVINO)
    except IrpoolError:
        return
    if params.auto_pad in ("same_upper", "same_lower"):
        assert dims[2] == Dim.dynamic() and formulas[0].endswith("so ?")
        return
    pb, pe = (0, 0) if params.auto_pad == "valid" else params.pads[0]
    k_eff = dilated(params.window[0], params.dilations[0])
    rule = shape_rule(params.rounding, conventions.OPENVINO)
    lower, _, upper = formulas[0].partition(": lower ")[2].partition("; upper ")
    value, final = formula_value(lower)
    assert value == final == dims[2].lo == out_size(n.lo, k_eff, params.strides[0], pb, pe, rule)
    if n.hi is None:
        assert upper == "unbounded" and dims[2].hi is None
    else:
        value, final = formula_value(upper)
        assert value == final == dims[2].hi
        assert final == out_size(n.hi, k_eff, params.strides[0], pb, pe, rule)


def test_formula_rules_as_the_convention_computes() -> None:
    """The reviewer's cases: onnxruntime truncates a negative span, takes SAME pads from the
    undilated kernel and does not clamp them; a dropped ceil window says minus 1 and still
    ends in the size."""
    mp = PoolParams(
        op="MaxPool", reduce="max", window=(3,), strides=(2,), dilations=(1,), pads=((0, 0),)
    )
    _, (text,) = infer_shape(mp, (Dim.of(1), Dim.of(1), Dim.of(2)), conventions.ONNX)
    assert text == "trunc((2 + 0 + 0 - 3) / 2) + 1 = 1"
    same = replace(mp, window=(3,), strides=(1,), dilations=(2,), auto_pad="same_upper")
    _, (text,) = infer_shape(same, (Dim.of(1), Dim.of(1), Dim.of(6)), conventions.ONNX)
    assert text.startswith(
        "same_upper: total pad = (ceil(6 / 1) - 1) * 1 + 3 [the undilated kernel: onnxruntime "
        "ignores dilation 2 here] - 6 = 2 -> begin 1, end 1; "
    )
    assert text.endswith("floor((6 + 1 + 1 - 5 [k_eff = (3 - 1) * 2 + 1]) / 1) + 1 = 4")
    _, (text,) = infer_shape(same, (Dim.of(1), Dim.of(1), Dim.of(6)), conventions.OPENVINO)
    assert "max(0, (ceil(6 / 1) - 1) * 1 + 5 [k_eff = (3 - 1) * 2 + 1] - 6) = 4" in text
    neg = replace(mp, window=(1,), strides=(3,), auto_pad="same_upper")
    _, (text,) = infer_shape(neg, (Dim.of(1), Dim.of(1), Dim.of(5)), conventions.ONNX)
    assert text == (
        "same_upper: total pad = (ceil(5 / 3) - 1) * 3 + 1 - 5 = -1 -> begin 0, end -1; "
        "floor((5 + 0 + (-1) - 1) / 3) + 1 = 2"
    )
    drop = replace(mp, strides=(3,), pads=((1, 1),), rounding="ceil_torch")
    _, (text,) = infer_shape(drop, (Dim.of(1), Dim.of(1), Dim.of(2)), conventions.OPENVINO)
    assert text == (
        "ceil((2 + 1 + 1 - 3) / 3) + 1 - 1 [minus 1: the last window would start at 1 * 3 - 1 "
        "= 2 >= 2, in the right padding] = 1"
    )
    assert formula_value(text) == (1, 1)


def _onnx_maxpool(path: Path, n: int, **attrs: Any) -> str:
    from onnx import TensorProto, helper, save

    node = helper.make_node("MaxPool", ["x"], ["y"], name="p", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    save(model, str(path))
    return str(path)


@pytest.mark.parametrize(
    ("n", "attrs"),
    [
        (2, {"kernel_shape": [3], "strides": [2]}),
        (1, {"kernel_shape": [4], "strides": [2]}),
        (6, {"kernel_shape": [3], "strides": [1], "dilations": [2], "auto_pad": "SAME_UPPER"}),
        (2, {"kernel_shape": [3], "strides": [3], "pads": [1, 1], "ceil_mode": 1}),
    ],
)
def test_onnx_check_formula_is_onnxruntime_size(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path, n: int, attrs: dict[str, Any]
) -> None:
    """`check -v` on an ONNX node: the inferred size is onnxruntime's, and the formula ends in it."""
    import numpy as np

    path = _onnx_maxpool(tmp_path / "m.onnx", n, **attrs)
    want = ort.InferenceSession(path).run(None, {"x": np.ones((1, 1, n), np.float32)})[0].shape
    out = irpool("check", "-v", path)
    assert out.returncode == 0, out.stderr
    shown = re.search(r"-> \[([\d,]+)\]", out.stdout)
    assert shown and tuple(int(v) for v in shown.group(1).split(",")) == want, out.stdout
    (line,) = [s for s in out.stdout.splitlines() if "dim 2: " in s]
    text = line.split("dim 2: ", 1)[1].split("; ")[-1]
    assert formula_value(text) == (want[2], want[2]), line
