"""QDQ models built with onnx.helper for the tests: x (float32) -> QuantizeLinear ->
DequantizeLinear -> pool -> QuantizeLinear -> DequantizeLinear -> y, as quantization tools
write them, and onnxruntime's own view of one (its optimized model's node types)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def qdq_model(
    op: str = "AveragePool",
    attrs: dict[str, Any] | None = None,
    dtype: Any = np.uint8,
    scales: tuple[Any, Any] = (0.05, 0.05),
    zero_points: tuple[Any, Any] | None = (128, 128),
    opset: int = 13,
    shape: tuple[int, ...] = (2, 3, 8, 8),
    axis: int | None = None,
    pool_output: bool = False,
    out_dtype: Any = None,
) -> Any:
    """The model (per-axis scales when `axis` is given; no zero points with None;
    `pool_output` makes the pool's float output a graph output too)."""
    from onnx import TensorProto, helper, numpy_helper

    attrs = {"kernel_shape": [3] * (len(shape) - 2)} if attrs is None else attrs
    out_dtype = dtype if out_dtype is None else out_dtype
    inits = [
        numpy_helper.from_array(np.asarray(scales[0], np.float32), "s_in"),
        numpy_helper.from_array(np.asarray(scales[1], np.float32), "s_out"),
    ]
    zp_in: list[str] = []
    zp_out: list[str] = []
    if zero_points is not None:
        inits.append(numpy_helper.from_array(np.asarray(zero_points[0], dtype), "z_in"))
        inits.append(numpy_helper.from_array(np.asarray(zero_points[1], out_dtype), "z_out"))
        zp_in, zp_out = ["z_in"], ["z_out"]
    kw = {} if axis is None else {"axis": axis}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_in", *zp_in], ["xq"], name="q_in", **kw),
        helper.make_node("DequantizeLinear", ["xq", "s_in", *zp_in], ["xd"], name="dq_in", **kw),
        helper.make_node(op, ["xd"], ["p"], name="pool", **attrs),
        helper.make_node("QuantizeLinear", ["p", "s_out", *zp_out], ["pq"], name="q_out"),
        helper.make_node("DequantizeLinear", ["pq", "s_out", *zp_out], ["y"], name="dq_out"),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if pool_output:
        outputs.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, None))
    graph = helper.make_graph(
        nodes,
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        outputs,
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def save(model: Any, path: Path) -> str:
    import onnx

    onnx.save(model, str(path))
    return str(path)


def onnxruntime_outputs(path: str, x: np.ndarray, optimized: Path | None = None) -> list[Any]:
    """onnxruntime's outputs at its default optimization level; `optimized` receives the
    optimized model (its node types say what onnxruntime fused)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    if optimized is not None:
        options.optimized_model_filepath = str(optimized)
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in session.run(None, {"x": x})]


def node_types(path: Path) -> list[str]:
    import onnx

    return [n.op_type for n in onnx.load(str(path)).graph.node]


def inputs(shape: tuple[int, ...], scale: float, seed: int = 0) -> np.ndarray:
    """Float inputs over the whole code range, with exact .5 ties of the input scale."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 80 * scale).astype(np.float32)
    flat = x.reshape(-1)
    k = flat.size // 8
    flat[:k] = (rng.integers(-100, 100, k) + 0.5).astype(np.float32) * np.float32(scale)
    return x


def exact_inputs(
    shape: tuple[int, ...], scale: float, zero_point: int, dtype: Any, seed: int = 0
) -> np.ndarray:
    """Float inputs that are codes times the scale, (c - zp) * scale: both runtimes' first
    quantizer gives back c, so what differs after it belongs to the pool."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    codes = rng.integers(info.min, info.max + 1, shape)
    return ((codes - zero_point) * np.float32(scale)).astype(np.float32)


def openvino_outputs(path: str, x: np.ndarray) -> np.ndarray:
    """openvino's output of the converted model as it stands (no probe), f32 precision."""
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(
        openvino.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
    )
    return np.asarray(compiled({"x": x})[0])
