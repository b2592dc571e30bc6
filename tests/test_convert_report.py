"""`irpool convert-report`: D4, --layer, the JSON report, networks with other layer types.

The truth each test rests on is measured in the test itself: the ONNX model run by onnxruntime
and its conversion run by openvino, side by side.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool

pytestmark = pytest.mark.oracle


def _save(
    onnx: ModuleType,
    path: Path,
    nodes: list[Any],
    x_shape: list[int],
    opset: int,
    outputs: list[str],
    inits: list[Any] | None = None,
) -> str:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        initializer=inits or [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.save(model, str(path))
    return str(path)


def _report(path: str, x: np.ndarray, **options: Any) -> tuple[Any, str, dict[str, Any]]:
    """convert_report in this process: the report, its text and its JSON (strict: no NaN)."""
    from irpool.convert_report import convert_report, format_report, to_json
    from irpool.frontends.onnx_model import load

    report = convert_report(load(path), {"X": x}, **options)
    doc = json.loads(json.dumps(to_json(report), allow_nan=False))
    return report, format_report(report), doc


def _both(path: str, x: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The model's outputs by onnxruntime and by openvino's conversion of it."""
    import onnxruntime
    import openvino

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    by_ort = [np.asarray(a) for a in session.run(None, {"X": x})]
    compiled = openvino.Core().compile_model(
        openvino.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
    )
    result = compiled([x])
    return by_ort, [np.asarray(result[o]) for o in compiled.outputs]


@pytest.mark.parametrize("op,opset", [("AveragePool", 19), ("MaxPool", 12)])
def test_same_auto_pad_with_dilations_is_d4(
    onnx: ModuleType, ort: ModuleType, ov: ModuleType, tmp_path: Path, op: str, opset: int
) -> None:
    from onnx import helper

    node = helper.make_node(
        op, ["X"], ["Y"], name="pool", kernel_shape=[3], dilations=[2], auto_pad="SAME_UPPER"
    )
    path = _save(onnx, tmp_path / "d4.onnx", [node], [1, 1, 7], opset, ["Y"])
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    by_ort, by_ov = _both(path, x)
    assert by_ort[0].shape == (1, 1, 5) and by_ov[0].shape == (1, 1, 7)  # docs/semantics.md D4
    report, text, doc = _report(path, x)
    assert not report.same
    assert "D4: auto_pad=SAME_UPPER with dilations [2]" in text
    assert "values: openvino [1,1,7], ONNX [1,1,5]" in text
    assert doc["schema"] == "irpool.convert-report/2" and doc["same"] is False
    node_doc = doc["nodes"][0]
    assert node_doc["divergence_id"] == "D4" and node_doc["same"] is False
    values = node_doc["outputs"][0]
    assert values["output"] == "values" and values["tensor"] == "Y"
    assert (values["openvino_shape"], values["onnx_shape"]) == ("[1,1,7]", "[1,1,5]")


def _network(onnx: ModuleType, path: Path) -> str:
    """Conv, Relu, MaxPool, Dropout, AveragePool (ceil, include pad: D1 territory avoided by
    pads 0) and a Flatten: layer types irpool does not execute around the pooling nodes."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["X", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["m"], name="mp", kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("Dropout", ["m"], ["d"], name="drop"),
        helper.make_node(
            "AveragePool",
            ["d"],
            ["a"],
            name="ap",
            kernel_shape=[2, 2],
            strides=[2, 2],
            ceil_mode=1,
        ),
        helper.make_node("Flatten", ["a"], ["Y"], name="flat"),
    ]
    return _save(onnx, path, nodes, [1, 3, 19, 19], 13, ["Y"], [w])


def test_network_with_other_layer_types(
    onnx: ModuleType, ort: ModuleType, ov: ModuleType, tmp_path: Path
) -> None:
    path = _network(onnx, tmp_path / "net.onnx")
    x = np.random.default_rng(4).standard_normal((1, 3, 19, 19)).astype(np.float32)
    by_ort, by_ov = _both(path, x)
    np.testing.assert_allclose(by_ov[0], by_ort[0], rtol=1e-5, atol=1e-5)  # they agree
    _, _, doc = _report(path, x)
    assert doc["same"] is True and doc["onnxruntime"] is not None
    assert [n["node"] for n in doc["nodes"]] == ["mp", "ap"]
    assert [n["openvino_layer"].split(" ")[0] for n in doc["nodes"]] == ["MaxPool-8", "AvgPool-16"]
    assert all(o["differing"] == 0 for n in doc["nodes"] for o in n["outputs"])


def test_layer_option(onnx: ModuleType, ort: ModuleType, ov: ModuleType, tmp_path: Path) -> None:
    path = _network(onnx, tmp_path / "net.onnx")
    by_name = irpool("convert-report", path, "--layer", "ap")
    assert by_name.returncode == 0, by_name.stdout + by_name.stderr
    assert 'node "ap"' in by_name.stdout and 'node "mp"' not in by_name.stdout
    x = np.random.default_rng(4).standard_normal((1, 3, 19, 19)).astype(np.float32)
    report, _, _ = _report(path, x, layers=["m"])  # the MaxPool's output tensor
    assert [n.node for n in report.nodes] == ["mp"] and report.same
    unknown = irpool("convert-report", path, "--layer", "conv")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert 'pooling nodes: "mp", "ap"' in unknown.stderr


def test_cells_are_spatial_positions_once(
    onnx: ModuleType, ort: ModuleType, ov: ModuleType, tmp_path: Path
) -> None:
    """D1 through the front end on two images of three channels: the same last window differs
    in each of the six planes, and the report names it once."""
    from onnx import helper

    node = helper.make_node(
        "AveragePool",
        ["X"],
        ["Y"],
        name="ap",
        kernel_shape=[3],
        strides=[2],
        pads=[1, 1],
        ceil_mode=1,
        count_include_pad=1,
    )
    path = _save(onnx, tmp_path / "d1.onnx", [node], [2, 3, 6], 11, ["Y"])
    x = np.tile(np.arange(1, 7, dtype=np.float32), (2, 3, 1))
    by_ort, by_ov = _both(path, x)
    differ = np.argwhere(by_ort[0] != by_ov[0])
    assert len(differ) == 6 and set(differ[:, 2].tolist()) == {3}
    report, _, doc = _report(path, x)
    assert not report.same
    node_doc = doc["nodes"][0]
    assert node_doc["cells"] == [[3]] and node_doc["divergence_id"] == "D1"
