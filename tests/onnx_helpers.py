"""Shared helper of the ONNX tests: a model of one node, built with onnx.helper (import onnx
only where a test has it, through the `onnx` fixture)."""

from __future__ import annotations

from typing import Any

Tensor = tuple[str, int, list[Any] | None]
"""A graph input or output: name, element type (TensorProto) and shape (None: undeclared)."""


def one_node_model(
    node: Any,
    inputs: list[Tensor],
    outputs: list[Tensor],
    opset: int,
    inits: list[Any] | None = None,
) -> Any:
    """A ModelProto of one node (IR version 10); a com.microsoft node also imports that domain."""
    from onnx import helper

    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(*t) for t in inputs],
        [helper.make_tensor_value_info(*t) for t in outputs],
        initializer=inits or [],
    )
    imports = [helper.make_opsetid("", opset)]
    if node.domain == "com.microsoft":
        imports.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    return model
