"""ONNX's Add, Sub, Mul, Div, Max and Min as glue around pools, against onnxruntime: each op
on NaN, +-0, +-inf and integer edges, and a dequantization chain on float codes (Sub -> Mul ->
MaxPool: onnxruntime rounds twice, no fused multiply-add) run by `irpool run` bit
for bit."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from family_helpers import same_bits

from irpool.api import load
from irpool.run import run_graph

FLOATS = np.array(
    [np.nan, -0.0, 0.0, np.inf, -np.inf, -2.5, 3.0, 1e-3, 1e30, -1e-30, 5e-39, 3e38, 7.0],
    np.float32,
)


def _save(
    onnx: ModuleType, nodes: list[Any], inputs: list[Any], inits: list[Any], path: Path
) -> str:
    from onnx import helper

    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info("y", 1, None)], initializer=inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def _irpool(path: str, feeds: Any) -> np.ndarray:
    return np.asarray(run_graph(load(path), feeds).outputs["y"])


def _ort(path: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0])


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "int8"])
def test_binary_edges(
    ort: ModuleType, onnx: ModuleType, tmp_path: Path, op: str, dtype: str
) -> None:
    from onnx import helper
    from onnx.helper import np_dtype_to_tensor_dtype

    if dtype == "float32":
        values = FLOATS
    else:
        info = np.iinfo(dtype)
        raw = [info.min, -7, -1, 0, 1, 3, 7, 100, 200, info.max]
        values = np.array([v for v in raw if info.min <= v <= info.max], dtype)
    x0, x1 = np.repeat(values, values.size), np.tile(values, values.size)
    if op == "Div" and dtype != "float32":
        keep = x1 != 0
        x0, x1 = x0[keep], x1[keep]
    et = np_dtype_to_tensor_dtype(np.dtype(dtype))
    inputs = [helper.make_tensor_value_info(n, et, [x0.size]) for n in ("x0", "x1")]
    node = helper.make_node(op, ["x0", "x1"], ["y"])
    from onnx import helper as h

    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("y", et, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    feeds = {"x0": x0, "x1": x1}
    got = _irpool(path, feeds)
    assert same_bits(got, _ort(path, feeds))


@pytest.mark.oracle
def test_dequantization_chain_runs_as_onnxruntime(
    ort: ModuleType, onnx: ModuleType, tmp_path: Path
) -> None:
    """A MaxPool picks values, so the chain's elementwise arithmetic shows bit for bit (a
    float AveragePool after it differs from onnxruntime's by its summation order, which
    compare allows for)."""
    pool = "MaxPool"
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(9)
    zp = rng.integers(0, 256, (1, 3, 1, 1)).astype(np.float32)
    scale = rng.uniform(0.001, 0.2, (1, 3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Sub", ["x", "zp"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["m"]),
        helper.make_node(
            pool, ["m"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
    ]
    inits = [numpy_helper.from_array(zp, "zp"), numpy_helper.from_array(scale, "scale")]
    inputs = [helper.make_tensor_value_info("x", 1, [1, 3, 7, 7])]
    path = _save(onnx, nodes, inputs, inits, tmp_path / "m.onnx")
    codes = rng.integers(0, 256, (1, 3, 7, 7)).astype(np.float32)  # codes as floats
    got = _irpool(path, codes)
    assert same_bits(got, _ort(path, {"x": codes}))


@pytest.mark.oracle
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 6.0), (-0.0, 1.0), (None, None)])
@pytest.mark.parametrize("opset", [6, 13])
def test_clip_special_values(
    ort: ModuleType, onnx: ModuleType, tmp_path: Path, lo: Any, hi: Any, opset: int
) -> None:
    from onnx import helper, numpy_helper

    inits = []
    if opset >= 11:
        names = ["x"]
        if lo is not None:
            inits = [
                numpy_helper.from_array(np.array(lo, np.float32), "lo"),
                numpy_helper.from_array(np.array(hi, np.float32), "hi"),
            ]
            names += ["lo", "hi"]
        node = helper.make_node("Clip", names, ["y"])
    else:
        bounds = {} if lo is None else {"min": lo, "max": hi}
        node = helper.make_node("Clip", ["x"], ["y"], **bounds)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", 1, [FLOATS.size])],
        [helper.make_tensor_value_info("y", 1, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    assert same_bits(_irpool(path, {"x": FLOATS}), _ort(path, {"x": FLOATS}))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
def test_cast_sub_mul_max_pool(
    ort: ModuleType, onnx: ModuleType, tmp_path: Path, dtype: str
) -> None:
    """Integer codes -> Cast float -> Sub -> Mul -> Clip -> MaxPool, as onnxruntime runs it."""
    from onnx import helper, numpy_helper
    from onnx.helper import np_dtype_to_tensor_dtype

    rng = np.random.default_rng(12)
    info = np.iinfo(dtype)
    low, high = max(info.min, -(2**20)), min(info.max, 2**20)
    nodes = [
        helper.make_node("Cast", ["x"], ["f"], to=1),
        helper.make_node("Sub", ["f", "zp"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["m"]),
        helper.make_node("Clip", ["m", "lo", "hi"], ["c"]),
        helper.make_node(
            "MaxPool", ["c"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
    ]
    inits = [
        numpy_helper.from_array(rng.integers(low, high, (1, 3, 1, 1)).astype(np.float32), "zp"),
        numpy_helper.from_array(rng.uniform(0.001, 0.2, (1, 3, 1, 1)).astype(np.float32), "scale"),
        numpy_helper.from_array(np.array(-3.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
    ]
    et = np_dtype_to_tensor_dtype(np.dtype(dtype))
    inputs = [helper.make_tensor_value_info("x", et, [1, 3, 7, 7])]
    path = _save(onnx, nodes, inputs, inits, tmp_path / "m.onnx")
    codes = rng.integers(low, high, (1, 3, 7, 7)).astype(dtype)
    assert same_bits(_irpool(path, codes), _ort(path, {"x": codes}))
