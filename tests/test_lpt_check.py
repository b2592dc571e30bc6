"""`irpool check` on FakeQuantize: its output shape inferred as openvino's shape inference gives
it (the data's shape; ranges that must broadcast with the data), checked against openvino."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import irpool
from lpt_zoo import zoo

from irpool import api


def _saved(ov: Any, name: str, tmp_path: Path) -> Path:
    _, build = zoo(ov)[name]
    path = tmp_path / "m.xml"
    ov.save_model(build(), str(path), compress_to_fp16=False)
    return path


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["zp-ap1_pad+fq", "pc-ap1_ceil+fq", "zp-ap1-3d+fq"])
def test_check_verifies_fake_quantize(ov: Any, name: str, tmp_path: Path) -> None:
    path = _saved(ov, name, tmp_path)
    report = api.check(str(path))
    assert report.ok and not report.findings
    assert "FakeQuantize" not in {la.type for la in report.inference.unverified}
    fqs = [la for la in report.graph.layers if la.type == "FakeQuantize"]
    model = ov.Core().read_model(str(path))
    want = {
        op.get_friendly_name(): str(op.get_output_partial_shape(0)).replace(" ", "")
        for op in model.get_ops()
        if op.get_type_name() == "FakeQuantize"
    }
    assert len(fqs) == len(want) == 2
    for la in fqs:
        got = report.inference.quantize[la.index].output
        assert "[" + ",".join(str(d) for d in got or ()) + "]" == want[la.label]


@pytest.mark.oracle
def test_check_finds_a_wrong_fake_quantize_dim_and_ranges_that_do_not_broadcast(
    ov: Any, tmp_path: Path
) -> None:
    """A per-channel FakeQuantize ([1,6,1,1] ranges) on data made 4-channel: openvino refuses
    the model; check names the range and the FakeQuantize's declared channel dim."""
    path = _saved(ov, "pc-ap1_ceil+fq", tmp_path)
    xml = path.read_text()
    # the Parameter's shape and its port's channel dim: 6 -> 4
    xml = re.sub(r'shape="1,6,', 'shape="1,4,', xml, count=1)
    xml = re.sub(r"(<dim>1</dim>\s*<dim>)6(</dim>)", r"\g<1>4\2", xml, count=1)
    path.write_text(xml)
    with pytest.raises(Exception, match=r"broadcast|inconsistent"):
        ov.Core().read_model(str(path))
    report = api.check(str(path))
    kinds = {(f.kind, f.op) for f in report.findings}
    assert ("broadcast", "FakeQuantize") in kinds
    assert ("output-dim", "FakeQuantize") in kinds
    bad = next(f for f in report.findings if f.kind == "broadcast")
    assert bad.declared == "[1,6,1,1]" and bad.inferred.startswith("[1,4,")
    done = irpool("check", str(path))
    assert done.returncode == 1, done.stderr
    assert "do not broadcast with the data" in done.stdout
