"""convert-report on a TensorFlow model whose deployed conversion (its own dynamic input shapes)
computes other outputs than the static-shape conversion convert-report traces: a
`max_pool_with_argmax` whose indices are read, SAME padding, dynamic H and W.  The truth is
openvino and TensorFlow run end to end here; the report must say it did not observe the
deployed model, by how much the final outputs moved and why."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def _saved(tf: ModuleType, folder: Path, shape: list[int | None]) -> Path:
    class Arg(tf.Module):  # type: ignore[misc, name-defined]
        @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32)])
        def __call__(self, x: Any) -> Any:
            v, i = tf.nn.max_pool_with_argmax(x, 3, 3, "SAME", name="argmax")
            return v + tf.cast(i, tf.float32) * 0.25

    path = folder / "saved_model"
    tf.saved_model.save(Arg(), str(path))
    return path


def _deployed_error(ov: ModuleType, tf: ModuleType, path: Path, x: np.ndarray) -> float:
    want = tf.saved_model.load(str(path))(tf.constant(x)).numpy()
    compiled = ov.Core().compile_model(
        ov.convert_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
    )
    return float(np.abs(compiled({0: x})[compiled.outputs[0]] - want).max())


def test_convert_report_says_when_it_did_not_run_the_deployed_model(
    tf: ModuleType, ov: ModuleType, tmp_path: Path
) -> None:
    x = np.random.default_rng(0).uniform(-1, 1, (1, 7, 9, 1)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    dynamic = _saved(tf, tmp_path / "dyn", [1, None, None, 1])
    assert _deployed_error(ov, tf, dynamic, x) > 0.5  # the deployed model is wrong
    done = irpool("convert-report", str(dynamic), "-i", str(tmp_path / "x.npy"), "--json")
    report = json.loads(done.stdout)
    said = [n for n in report["notes"] if n.startswith("not the deployed model")]
    assert len(said) == 1 and "the static input shapes changed what runs" in said[0]
    moved = float(said[0].split("max abs ")[1].split(")")[0])
    assert moved == pytest.approx(_deployed_error(ov, tf, dynamic, x), rel=1e-5)

    static = _saved(tf, tmp_path / "static", [1, 7, 9, 1])
    assert _deployed_error(ov, tf, static, x) == 0.0
    done = irpool("convert-report", str(static), "-i", str(tmp_path / "x.npy"), "--json")
    assert not [n for n in json.loads(done.stdout)["notes"] if "deployed" in n]
