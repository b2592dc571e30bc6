"""Fixtures of the pooling families (`irpool fixtures --preset family`, `--from` a model with
adaptive and reduce layers): openvino confirms every expected output, and the layers no case
is made of are listed with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import irpool

from irpool.frontends.ir_writer import NetBuilder


@pytest.mark.oracle
def test_family_preset_is_confirmed_by_openvino(ov: ModuleType, tmp_path: Path) -> None:
    out = irpool("fixtures", str(tmp_path / "fx"), "--preset", "family", "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    index = json.loads((tmp_path / "fx" / "index.json").read_text())
    assert index["counts"]["cases"] == index["counts"]["confirmed"] > 50
    ops = {c["op"] for c in index["cases"]}
    assert ops == {
        "AdaptiveAvgPool",
        "AdaptiveMaxPool",
        "ReduceMean",
        "ReduceMax",
        "ReduceSum",
        "ReduceL1",
        "ReduceL2",
    }
    meta = json.loads(
        (tmp_path / "fx" / "adaptivemaxpool8-2d-up-i32-f32" / "meta.json").read_text()
    )
    assert meta["constants"] == {"input1": [5, 11]}
    assert meta["plan"]["family"] == "adaptive"
    assert (tmp_path / "fx" / "adaptivemaxpool8-2d-up-i32-f32" / "model.bin").exists()


@pytest.mark.oracle
def test_from_a_model_lists_what_it_skips(ov: ModuleType, tmp_path: Path) -> None:
    """A model with an AdaptiveAvgPool, a ReduceMean, a ReduceMin and a ROIPooling: cases of
    the first two, the other two listed with the reason."""
    net = NetBuilder("mixed")
    x = net.parameter("x", [1, 3, 8, 8])
    rois = net.parameter("rois", [2, 5])
    size = net.const("size", np.array([3, 3], np.int64))
    a = net.op("AdaptiveAvgPool", "opset8", "adaptive", {}, [x, size], [([1, 3, 3, 3], "f32")])
    axes = net.const("axes", np.array([2, 3], np.int64))
    m = net.op(
        "ReduceMean", "opset1", "mean", {"keep_dims": "false"}, [a[0], axes], [([1, 3], "f32")]
    )
    r = net.op("ReduceMin", "opset1", "rmin", {"keep_dims": "false"}, [x, axes], [([1, 3], "f32")])
    roi = net.op(
        "ROIPooling",
        "opset2",
        "roi",
        {"pooled_h": "2", "pooled_w": "2", "spatial_scale": "0.5", "method": "max"},
        [x, rois],
        [([2, 3, 2, 2], "f32")],
    )
    for name, ref in (("o1", m[0]), ("o2", r[0]), ("o3", roi[0])):
        net.result(name, ref)
    path = str(tmp_path / "mixed.xml")
    net.save(path)
    out = irpool("fixtures", str(tmp_path / "fx"), "--from", path, "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    index = json.loads((tmp_path / "fx" / "index.json").read_text())
    assert [c["op"] for c in index["cases"]] == ["AdaptiveAvgPool", "ReduceMean"]
    assert all(c["status"] == "confirmed" for c in index["cases"])
    skipped = {s["name"]: s["reason"] for s in index["skipped"]}
    assert set(skipped) == {"rmin (ReduceMin-1)", "roi (ROIPooling-2)"}
    assert "region pooling" in skipped["roi (ROIPooling-2)"]
    assert "skip  roi (ROIPooling-2)" in out.stdout
    check = irpool("check", path)
    assert check.returncode == 0
    assert 'layer "roi" (ROIPooling-2): not verified' in check.stdout
