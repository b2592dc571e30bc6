"""compare's INFERENCE_PRECISION_HINT as the CPU plugin really runs it
(irpool/oracles/openvino_precision.py).  Each test reads the truth from openvino on the machine
running it (the compiled model's hint, the runtime model's node precisions), so the same tests
pass on a CPU with and without bfloat16 arithmetic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from irpool import api

pytestmark = pytest.mark.oracle


def _model(ov: Any, probed: bool) -> Any:
    """Convolution -> AvgPool -> MaxPool -> Convolution; `probed`: a Result on each pool too,
    as compare's probe adds them."""
    o1 = ov.opset1
    x = o1.parameter([1, 3, 11, 11], np.float32, name="x")
    rng = np.random.default_rng(1)
    w1 = o1.constant(rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32))
    w2 = o1.constant(rng.uniform(-1, 1, (4, 4, 1, 1)).astype(np.float32))
    conv = o1.convolution(x, w1, [1, 1], [0, 0], [0, 0], [1, 1])
    avg = o1.avg_pool(conv, [1, 1], [1, 1], [1, 1], [3, 3], False)
    top = o1.max_pool(avg, [1, 1], [0, 0], [0, 0], [2, 2])
    out = o1.convolution(top, w2, [1, 1], [0, 0], [0, 0], [1, 1])
    results = [o1.result(out)] + ([o1.result(avg), o1.result(top)] if probed else [])
    return ov.Model(results, [x], "convpool")


def _compiled(ov: Any, model: Any, hint: str) -> tuple[str, list[str]]:
    """The compiled model's hint and its Pooling nodes' runtime precisions."""
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
    raw = compiled.get_property("INFERENCE_PRECISION_HINT")
    pools = [
        str(op.get_rt_info()["runtimePrecision"].astype(str))
        for op in compiled.get_runtime_model().get_ordered_ops()
        if str(op.get_rt_info()["layerType"].astype(str)) == "Pooling"
    ]
    return str(raw.get_type_name()), pools


@pytest.mark.parametrize("hint", ["f32", "bf16", "f16"])
def test_compare_says_what_the_hint_ran(ov: Any, tmp_path: Path, hint: str) -> None:
    path = str(tmp_path / "m.xml")
    ov.save_model(_model(ov, probed=False), path, compress_to_fp16=False)
    ran, deployed = _compiled(ov, _model(ov, probed=False), hint)
    _, probed = _compiled(ov, _model(ov, probed=True), hint)
    assert probed == ["f32", "f32"]  # a pool that feeds a Result runs in f32 at every hint
    x = np.random.default_rng(2).standard_normal((1, 3, 11, 11)).astype(np.float32)
    doc = api.compare(path, {"x": x}, precision=hint).to_json()
    assert doc["inference_precision_hint"] == hint
    reason = doc["inference_precision_reason"]
    if ran == "f32":
        want = "asked for" if hint == "f32" else "asked for; the CPU plugin runs f32 instead"
        assert reason.startswith(want), reason
        assert deployed == ["f32", "f32"]
    else:
        assert deployed == [ran, ran]  # between two Convolutions the pools run at the hint
        assert "the compared layers ran in f32" in reason, reason
        assert doc["probe"]["final_values_moved"] > 0  # and the probe changes that
    assert doc["passed"] is True, [o for la in doc["layers"] for o in la["outputs"]]
    assert len(doc["layers"]) == 2


def test_the_default_precision_is_the_plugins(ov: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "m.xml")
    ov.save_model(_model(ov, probed=False), path, compress_to_fp16=False)
    default = str(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name())
    x = np.random.default_rng(3).standard_normal((1, 3, 11, 11)).astype(np.float32)
    doc = api.compare(path, {"x": x}).to_json()
    assert doc["inference_precision_hint"] == default
    assert doc["inference_precision_reason"].startswith("the CPU plugin's default")
    assert doc["passed"] is True


def test_a_net_of_pooling_layers_runs_in_f32_at_every_hint(ov: Any, tmp_path: Path) -> None:
    """No Convolution, FullyConnected or MatMul: the whole net is the tail the plugin keeps in
    f32, so `irpool run` (which models the f32 plugin) is what runs at bf16 too; the measured
    bf16 = f32 bytes of quantized pooling graphs are this rule."""
    o1 = ov.opset1
    x = o1.parameter([1, 4, 12, 12], np.float32, name="x")
    avg = o1.avg_pool(x, [1, 1], [1, 1], [1, 1], [3, 3], False)
    model = ov.Model([o1.result(o1.max_pool(avg, [2, 2], [0, 0], [0, 0], [2, 2]))], [x], "pools")
    path = str(tmp_path / "pools.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    data = np.random.default_rng(4).standard_normal((1, 4, 12, 12)).astype(np.float32)
    ours = next(iter(api.run(path, {"x": data}).outputs.values()))
    for hint in ("f32", "bf16", "f16"):
        _, pools = _compiled(ov, model, hint)
        assert pools == ["f32", "f32"], (hint, pools)
        compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        theirs = np.asarray(compiled({0: data})[compiled.outputs[0]])
        assert theirs.tobytes() == ours.tobytes(), hint
