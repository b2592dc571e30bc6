"""Where onnx's reference evaluator stands in for onnxruntime (no kernel) and is known to be
wrong, `compare` flags the evaluator's bug and counts the node as agreeing (exit 0).  The
truth for AveragePool-1 (padding excluded, its operator text) is onnxruntime's AveragePool-7
with count_include_pad=0 on the same input."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import irpool as irpool_cli

import irpool


def _average_pool(onnx: ModuleType, path: Path, opset: int) -> Path:
    from onnx import TensorProto, helper

    node = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 7, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.mark.oracle
def test_average_pool_1_is_the_evaluators_known_bug(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    v1 = _average_pool(onnx, tmp_path / "ap1.onnx", 6)
    v7 = _average_pool(onnx, tmp_path / "ap7.onnx", 7)
    x = np.random.default_rng(0).standard_normal((1, 1, 7, 11)).astype(np.float32)
    truth = ort.InferenceSession(str(v7), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    ours = irpool.run(str(v1), {"x": x}).outputs["y"]
    np.testing.assert_allclose(ours, truth[0], rtol=1e-6, atol=1e-7)
    o = irpool_cli("compare", str(v1))
    assert o.returncode == 0, o.stdout + o.stderr
    assert "BUG" in o.stdout and "AveragePool-1 excludes the padding" in o.stdout
    assert "please report it" not in o.stdout
    report = irpool.compare(str(v1))
    assert report.passed and report.layers[0].reference_bug
