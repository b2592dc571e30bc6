"""One vocabulary per front end: ONNX reports speak ONNX (nodes, inputs and outputs named by
their position and tensor), IR reports speak IR (layers, ports by id).  Every text report
names layers and ports through these functions."""

from __future__ import annotations

from .model import Graph, Layer, Port


def is_onnx(layer: Layer) -> bool:
    """Whether the layer is a node of an ONNX model (its nodes carry a domain)."""
    return bool(layer.domain)


def layer_word(graph_or_layer: Graph | Layer) -> str:
    """'node' for ONNX, 'layer' for IR."""
    if isinstance(graph_or_layer, Graph):
        return "node" if graph_or_layer.format == "onnx" else "layer"
    return "node" if is_onnx(graph_or_layer) else "layer"


def port_name(layer: Layer, port: Port, io: str = "output") -> str:
    """How a report names one input or output of a layer: `output port 1` in an IR,
    `output 0 (tensor "y")` in ONNX (its position among the node's outputs)."""
    if not is_onnx(layer):
        return f"{io} port {port.id}"
    ports = layer.outputs if io == "output" else layer.inputs
    k = next((i for i, p in enumerate(ports) if p.id == port.id), port.id)
    name = port.names[0] if port.names else ""
    return f'{io} {k} (tensor "{name}")' if name else f"{io} {k}"
