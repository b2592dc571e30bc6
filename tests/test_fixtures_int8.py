"""`irpool fixtures --preset int8`: quantized golden cases (FakeQuantize -> AvgPool / MaxPool /
ReduceMean -> [FakeQuantize]); openvino's CPU plugin confirms every expected output, and those
outputs are the plugin's low-precision arithmetic, not the specification computed in float."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import irpool

from irpool import lpt
from irpool.arrays import load_arrays
from irpool.testing import cases

fx = importlib.import_module("irpool.fixtures")


@pytest.fixture(scope="module")
def int8_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sets") / "int8"
    specs, skipped, settings = fx.plan_cases("int8", None, None, None, 0)
    fx.generate(str(out), specs, settings, skipped)
    return out


def test_int8_preset_holds_quantized_chains(int8_set: Path) -> None:
    metas = [dict(c.meta) for c in cases(int8_set)]
    assert len(metas) == 12
    assert {m["op_version"] if "op_version" in m else m["op"] for m in metas} >= {
        "AvgPool-1",
        "AvgPool-14",
        "MaxPool-1",
        "ReduceMean-1",
    }
    assert all(m["origin"] == "int8" and m["quantize"]["levels"] == 256 for m in metas)
    xml = (int8_set / "u8-avg1-fq" / "model.xml").read_text()
    assert xml.count('type="FakeQuantize"') == 2


def _reference_chain(meta: dict, x: np.ndarray, pooled_of) -> np.ndarray:  # type: ignore[type-arg]
    q = meta["quantize"]
    ranges = [np.asarray(v, dtype=np.float32) for v in q["input"]]
    p = lpt.fq_params(q["levels"], [*ranges, *ranges], x.ndim)
    y = pooled_of(lpt.reference_fake_quantize(x, p))
    if q["output"] is not None:
        out = [np.asarray(v, dtype=np.float32) for v in q["output"]]
        y = lpt.reference_fake_quantize(y, lpt.fq_params(q["levels"], [*out, *out], y.ndim))
    return y


def test_expected_outputs_are_lpt_arithmetic_not_the_spec_in_float(int8_set: Path) -> None:
    """At a 1.5 ratio of scales the plugin's one-step-off ties show: the expected output of
    the k2s2 average differs from the spec in float (FakeQuantize, mean of floats,
    FakeQuantize) by exactly one output step at some cells, and only there."""
    folder = int8_set / "zp-avg1-k2-fq15"
    meta = json.loads((folder / "meta.json").read_text())
    x = np.load(folder / "input.npy")
    want = load_arrays(str(folder / "expected.npz"))["values"]

    def mean2x2(a: np.ndarray) -> np.ndarray:
        n, c, h, w = a.shape
        return a.reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5), dtype=np.float32)

    ref = _reference_chain(meta, x, mean2x2)
    step = np.float32(3.825) / 255
    diff = np.abs(ref.astype(np.float64) - want)
    off = diff > step / 2
    assert 0 < off.sum() < off.size // 4
    assert np.allclose(diff[off], step, rtol=1e-3)
    assert (diff[~off] < 1e-6).all()


@pytest.mark.oracle
def test_openvino_confirms_the_int8_preset(ov: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "int8"
    done = irpool("fixtures", str(out), "--preset", "int8", "--verify")
    assert done.returncode == 0, done.stdout + done.stderr
    index = json.loads((out / "index.json").read_text())
    assert [c["status"] for c in index["cases"]] == ["confirmed"] * 12, index["reasons"]
