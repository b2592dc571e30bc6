"""`irpool check` where the file cannot say everything: dims openvino writes as -1, two ports of
one edge that disagree, and openvino's own shapes as the witness (`--openvino`).

The truth is openvino itself: a file it writes with `save_model` is intact, and after one <dim>
is changed, the layer that holds that <dim> is the one to name.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, irpool
from hypothesis import given, settings
from hypothesis import strategies as st

from irpool.check import add_openvino_findings, check_file, check_graph
from irpool.frontends.ir_xml import parse_text

SQUEEZENET = ROOT / "fixtures" / "real" / "squeezenet.xml"


def _save(ov: ModuleType, model: Any, path: Path) -> str:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path.read_text()


def test_openvino_writes_intervals_as_minus_one(ov: ModuleType, tmp_path: Path) -> None:
    """The measurement the unknown dims rest on: the Parameter keeps its interval in `shape`,
    every port writes -1 for it, and a pooling output that is static on the interval is written
    as its number."""
    import openvino.opset1 as o1

    x = o1.parameter(ov.PartialShape("[1,3,2..3,8]"), np.float32, name="x")
    relu = o1.relu(x, name="relu")
    pool = o1.max_pool(relu, [2, 2], [0, 0], [0, 0], [2, 1], "floor", name="pool")
    text = _save(ov, ov.Model([pool.output(0)], [x], "m"), tmp_path / "m.xml")
    assert 'shape="1,3,2..3,8"' in text
    assert str(pool.output(0).get_partial_shape()) == "[1,3,1,4]"
    relu_ports = text[text.index('name="relu"') : text.index('name="pool"')]
    assert re.findall(r"<dim>(-?\d+)</dim>", relu_ports) == ["1", "3", "-1", "8"] * 2


def _interval_models(ov: ModuleType) -> list[tuple[str, Any]]:
    """openvino models whose pooling input reaches it through another layer type from an
    interval Parameter, so that the file writes -1 where openvino knew an interval."""
    import openvino.opset1 as o1
    import openvino.opset8 as o8
    import openvino.opset14 as o14

    models = []
    x = o1.parameter(ov.PartialShape("[1,3,2..3,8]"), np.float32, name="x")
    p = o1.max_pool(o1.relu(x, name="relu"), [2, 2], [0, 0], [0, 0], [2, 1], "floor", name="pool")
    models.append(("relu", ov.Model([p.output(0)], [x], "relu")))
    x = o1.parameter(ov.PartialShape("[1,2,7..8,9]"), np.float32, name="x")
    w = np.ones((2, 2, 1, 1), np.float32)
    conv = o1.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1], name="conv")
    p = o14.avg_pool(conv, [4, 4], [0, 0], [0, 0], [4, 4], True, "ceil_torch", name="pool")
    models.append(("conv", ov.Model([p.output(0)], [x], "conv")))
    a = o1.parameter(ov.PartialShape("[1,1,3..4,6]"), np.float32, name="a")
    b = o1.parameter(ov.PartialShape("[1,2,3..4,6]"), np.float32, name="b")
    cat = o1.concat([a, b], 1, name="concat")
    p = o8.max_pool(cat, [3, 3], [1, 1], [0, 0], [0, 0], [3, 3], "floor", "explicit", "i32", 0)
    p.set_friendly_name("pool")
    models.append(("concat", ov.Model([p.output(0), p.output(1)], [a, b], "concat")))
    return models


def test_intact_interval_files_pass_and_each_pooling_dim_is_guarded(
    ov: ModuleType, tmp_path: Path
) -> None:
    """No finding on the intact files; a changed output <dim> of the pooling layer is still a
    finding at that layer (against the other output port, or the port at the edge's far end),
    though the rules alone only bound it."""
    for name, model in _interval_models(ov):
        path = str(tmp_path / f"{name}.xml")
        text = _save(ov, model, Path(path))
        report = check_graph(parse_text(text, path))
        assert report.ok, (name, [f.message for f in report.findings])
        pool = text.index('name="pool"')
        outputs = text.index("<output>", pool)
        end = text.index("</layer>", pool)
        for m in re.finditer(r"<dim>(-?\d+)</dim>", text[outputs:end]):
            old = int(m.group(1))
            new = old + 2 if old > 0 else 5
            at = outputs + m.start(1)
            corrupted = text[:at] + str(new) + text[at + len(m.group(1)) :]
            found = check_graph(parse_text(corrupted, path)).findings
            assert any(f.layer == "pool" for f in found), (name, old, new)


@st.composite
def _interval_cases(draw: st.DrawFn) -> tuple[str, int, int, int, int, int, str, str]:
    lo = draw(st.integers(1, 9))
    hi = lo + draw(st.integers(0, 4))
    k = draw(st.integers(1, 4))
    s = draw(st.integers(1, 3))
    pb = draw(st.integers(0, k - 1))
    pe = draw(st.integers(0, k - 1))
    rounding = draw(st.sampled_from(["floor", "ceil", "ceil_torch"]))
    layer = draw(st.sampled_from(["relu", "sigmoid", "conv"]))
    return f"[1,2,{lo}..{hi},5]", k, s, pb, pe, draw(st.integers(1, 2)), rounding, layer


@settings(max_examples=60, deadline=None, derandomize=True)
@given(case=_interval_cases())
def test_openvino_written_interval_chains_pass(
    ov: ModuleType, tmp_path_factory: pytest.TempPathFactory, case: tuple[Any, ...]
) -> None:
    """Interval Parameter -> another layer type (written -1) -> MaxPool-14: irpool accepts every
    file openvino writes (where openvino accepts the geometry)."""
    import openvino.opset1 as o1
    import openvino.opset14 as o14

    shape, k, s, pb, pe, d, rounding, kind = case
    x = o1.parameter(ov.PartialShape(shape), np.float32, name="x")
    if kind == "relu":
        mid = o1.relu(x, name="mid")
    elif kind == "sigmoid":
        mid = o1.sigmoid(x, name="mid")
    else:
        w = np.ones((2, 2, 1, 1), np.float32)
        mid = o1.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1], name="mid")
    try:
        pool = o14.max_pool(
            mid, [s, 1], [d, 1], [pb, 0], [pe, 0], [k, 1], rounding, "explicit", "i64", 0
        )
    except Exception:
        return  # openvino refuses the geometry on these bounds
    pool.set_friendly_name("pool")
    path = tmp_path_factory.mktemp("chain") / "m.xml"
    _save(ov, ov.Model([pool.output(0), pool.output(1)], [x], "m"), path)
    report = check_file(str(path))
    assert report.ok, (case, str(pool.output(0).get_partial_shape()), report.findings)


def _corrupt_first_output(text: str, layer: str, axis: int, delta: int) -> tuple[str, int]:
    """The text with `<dim>` `axis` of the first output port of `layer` changed by `delta`."""
    start = text.index(f'name="{layer}"')
    out = text.index("<output>", start)
    m = list(re.finditer(r"<dim>(-?\d+)</dim>", text[out:]))[axis]
    at = out + m.start(1)
    return text[:at] + str(int(m.group(1)) + delta) + text[at + len(m.group(1)) :], at


@pytest.mark.parametrize(("layer", "axis"), [("n1", 3), ("n16", 1), ("n1", 2)])
def test_a_wrong_producer_does_not_blame_the_pooling_layer(layer: str, axis: int) -> None:
    """squeezenet as openvino wrote it, with one output <dim> of the ReLU or Concat before a
    MaxPool changed: the edge is reported, the MaxPool (whose own ports are intact) is not."""
    text, _ = _corrupt_first_output(SQUEEZENET.read_text(), layer, axis, 5)
    report = check_graph(parse_text(text, str(SQUEEZENET)))
    assert not report.ok
    assert {f.kind for f in report.findings} == {"edge"}
    assert all(layer in f.message for f in report.findings)
    assert all(not r.findings for r in report.layers)
    disputed = [n for r in report.layers for n in r.pooling.notes if "disputed" in n]
    assert len(disputed) == 1 and "inferred from input port 0" in disputed[0]


@pytest.mark.parametrize(("layer", "axis"), [("n1", 3), ("n16", 1)])
def test_openvino_shapes_name_only_the_wrong_layer(
    ov: ModuleType, tmp_path: Path, layer: str, axis: int
) -> None:
    """`check --openvino`: the pooling layers are inferred from openvino's inputs, so the only
    shape finding is openvino's on the changed layer."""
    text, _ = _corrupt_first_output(SQUEEZENET.read_text(), layer, axis, 5)
    path = tmp_path / "squeezenet.xml"
    path.write_text(text)
    (tmp_path / "squeezenet.bin").symlink_to(SQUEEZENET.with_suffix(".bin"))
    report = check_file(str(path))
    add_openvino_findings(report)
    assert [f.layer for f in report.findings if f.kind == "openvino"] == [layer]
    assert {f.kind for f in report.findings} == {"openvino", "edge"}
    assert all(not r.findings for r in report.layers)


def test_openvino_inputs_replace_the_files(ov: ModuleType, tmp_path: Path) -> None:
    """Where the file gives only -1, `--openvino` verifies against openvino's interval: the
    pooling output is then exact (and a wrong declared size inside the old bounds is found)."""
    import openvino.opset1 as o1

    x = o1.parameter(ov.PartialShape("[1,3,2..3,8]"), np.float32, name="x")
    p = o1.max_pool(o1.relu(x, name="relu"), [2, 2], [0, 0], [0, 0], [2, 1], "floor", name="pool")
    path = tmp_path / "m.xml"
    text = _save(ov, ov.Model([p.output(0)], [x], "m"), path)
    report = check_file(str(path))
    add_openvino_findings(report)
    assert report.ok
    assert str(report.layers[0].pooling.output_shape[2]) == "1"
    pool = text.index('name="pool"')
    out = text.index("<output>", pool)
    m = list(re.finditer(r"<dim>(-?\d+)</dim>", text[out:]))[2]
    at = out + m.start(1)
    text = text[:at] + "2" + text[at + 1 :]
    # the Result's input port too, so that no edge gives it away
    result = text.index('type="Result"')
    m = list(re.finditer(r"<dim>(-?\d+)</dim>", text[result:]))[2]
    at = result + m.start(1)
    path.write_text(text[:at] + "2" + text[at + 1 :])
    plain = check_file(str(path))
    assert plain.ok  # 2 lies within 1.., which is all the file lets irpool know
    assert "declared 2 lies within, not verifiable" in plain.layers[0].pooling.formulas[0]
    add_openvino_findings(plain)
    assert [(f.kind, f.layer, f.axis, f.declared) for f in plain.findings if f.axis] == [
        ("output-dim", "pool", 2, "2")
    ]


def test_unknown_element_type_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(
        '<net name="n" version="11"><layers>\n'
        '<layer id="0" name="x" type="Parameter" version="opset1">\n'
        '<data shape="1,1,4" element_type="f99"/>\n'
        '<output><port id="0" precision="FP32"><dim>1</dim><dim>1</dim><dim>4</dim></port>'
        "</output></layer>\n"
        '<layer id="1" name="p" type="MaxPool" version="opset1">\n'
        '<data kernel="2" strides="2" pads_begin="0" pads_end="0"/>\n'
        '<input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim></port></input>\n'
        '<output><port id="1"><dim>1</dim><dim>1</dim><dim>2</dim></port></output></layer>\n'
        "</layers><edges>"
        '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges></net>\n'
    )
    out = irpool("check", str(path))
    assert out.returncode == 2, out.stdout
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"{path}:2:" in out.stderr and '"f99"' in out.stderr
    assert "f32" in out.stderr and "bf16" in out.stderr
