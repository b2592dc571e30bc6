"""onnx's shape inference as a witness: what it says of a model's tensors and of one pooling
node (`check` on ONNX models quotes it where it differs from onnxruntime's sizes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def model_shapes(
    model: Any, inputs: Mapping[str, Sequence[int]] | None = None
) -> dict[str, tuple[int, ...]]:
    """Tensor shapes onnx's shape inference derives (empty where it cannot), for the graph
    inputs' declared shapes or the static `inputs` shapes given by name.  The graph outputs'
    and intermediate tensors' declared shapes are cleared first (on a copy), so that what is
    read for them is onnx's result, not the declaration."""
    from onnx import ModelProto, shape_inference

    from ..frontends.onnx_model import _dims

    copy = ModelProto()
    copy.CopyFrom(model)
    for out in copy.graph.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    if inputs:
        del copy.graph.value_info[:]
        for info in copy.graph.input:
            if info.name in inputs and info.type.HasField("tensor_type"):
                shape = info.type.tensor_type.shape
                shape.ClearField("dim")
                for d in inputs[info.name]:
                    shape.dim.add().dim_value = int(d)
    try:
        inferred = shape_inference.infer_shapes(copy, strict_mode=False)
    except Exception:
        return {}
    shapes = {}
    for info in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]:
        dims, _ = _dims(info.type)
        if dims is not None:
            shapes[info.name] = dims
    return shapes


def node_shape(model: Any, node: Any, dims: list[int]) -> list[int] | None:
    """The output shape onnx's shape inference gives one node on an input of `dims`, or None
    where onnx says nothing:
    the node alone in a model of the same opsets, so that a divergence upstream does not count
    here."""
    from onnx import TensorProto, helper, shape_inference

    if not node.input:
        return None
    types = {
        info.name: info.type.tensor_type.elem_type
        for info in [*model.graph.input, *model.graph.value_info, *model.graph.output]
        if info.type.HasField("tensor_type")
    }
    x = node.input[0]
    graph = helper.make_graph(
        [node],
        "one_node",
        [helper.make_tensor_value_info(x, types.get(x, TensorProto.FLOAT), dims)],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output if o],
    )
    one = helper.make_model(graph, opset_imports=list(model.opset_import))
    one.ir_version = model.ir_version
    try:
        inferred = shape_inference.infer_shapes(one, strict_mode=True)
    except Exception:
        return None
    out = inferred.graph.output[0].type.tensor_type
    if not out.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else -1 for d in out.shape.dim]
