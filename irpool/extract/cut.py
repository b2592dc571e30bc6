"""The small model of a bundle: a cut of the full model around one layer.

An IR cut is a set of layers of the full net.  Every edge that enters the cut from outside
becomes a Parameter of the small model (the runtime's value of that tensor is its input),
except an edge from a constant subgraph (Const, or a Convert of one: the decompression
pattern), which is copied with its bytes.  Every output of a layer of the cut that the full
model read (an edge leaving it, or a Result) becomes a Result, and so does every output of the
layer the bundle is about (what a layer-by-layer probe makes an output of the model).

An ONNX cut is the node alone as a one-node model with its opset (the graph inputs are the
node's computed inputs, its initializers stay initializers).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..frontends.ir_writer import NetBuilder, Ref, const_size
from ..model import Graph, Layer
from ..ops import REGISTRY

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Feed:
    """One input of the small model: the full model's tensor (producer layer id and output
    port) that enters the cut, and the Parameter's name."""

    name: str
    from_layer: int
    from_port: int


@dataclass
class IrCut:
    """A set of layers of an IR net around `target`, and how it was grown."""

    graph: Graph
    target: Layer
    layers: set[int]
    dynamic: bool = False
    """Keep the full model's dynamic dims on the Parameters (else the input's static shape)."""
    kept: list[str] = field(default_factory=list)
    """What the cut keeps beyond the layer, in words (for the report)."""

    def copy(self) -> IrCut:
        return IrCut(self.graph, self.target, set(self.layers), self.dynamic, list(self.kept))


def _is_const(layer: Layer) -> bool:
    return REGISTRY.role(layer) == "const" or layer.type.lower() in ("const", "constant")


def constant_closure(graph: Graph, layer_id: int) -> set[int] | None:
    """The layers of the constant subgraph that computes layer `layer_id`'s outputs (it and
    everything above it), or None when a Parameter (or anything not constant) feeds it."""
    seen: set[int] = set()
    todo = [layer_id]
    while todo:
        lid = todo.pop()
        if lid in seen:
            continue
        layer = graph.layer(lid)
        if REGISTRY.role(layer) == "parameter" or layer.type.lower() == "parameter":
            return None
        seen.add(lid)
        if _is_const(layer):
            continue
        if not layer.inputs or len(seen) > 16:
            return None
        for port in layer.inputs:
            edge = graph.producer(lid, port.id)
            if edge is None:
                return None
            todo.append(edge.from_layer)
    return seen


def closed(cut: IrCut) -> set[int]:
    """The cut's layers with the constant subgraphs that feed them."""
    graph = cut.graph
    out = set(cut.layers)
    for lid in list(cut.layers):
        for port in graph.layer(lid).inputs:
            edge = graph.producer(lid, port.id)
            if edge is None or edge.from_layer in out:
                continue
            consts = constant_closure(graph, edge.from_layer)
            if consts is not None:
                out |= consts
    return out


def feeds(cut: IrCut) -> list[Feed]:
    """The tensors that enter the cut (producer outside, not constant), in the order of the
    cut's layers and ports; one Parameter each."""
    graph = cut.graph
    inside = closed(cut)
    found: list[tuple[int, int]] = []
    for layer in graph.topological():
        assert layer.id is not None
        if layer.id not in inside:
            continue
        for port in layer.inputs:
            edge = graph.producer(layer.id, port.id)
            if edge is None or edge.from_layer in inside:
                continue
            key = (edge.from_layer, edge.from_port)
            if key not in found:
                found.append(key)
    if len(found) == 1:
        return [Feed("input", *found[0])]
    return [Feed(f"input{k}", *key) for k, key in enumerate(found)]


def grow_producers(cut: IrCut) -> IrCut | None:
    """The cut with the layers that produce its inputs (one level up), or None when only
    Parameters feed it."""
    graph = cut.graph
    added: list[Layer] = []
    for feed in feeds(cut):
        layer = graph.layer(feed.from_layer)
        if REGISTRY.role(layer) == "parameter" or layer.type.lower() == "parameter":
            continue
        added.append(layer)
    return _grown(cut, added, "producer")


def grow_consumers(cut: IrCut) -> IrCut | None:
    """The cut with the layers that read its outputs (one level down, not Results), or
    None when there are none."""
    graph = cut.graph
    inside = closed(cut)
    added: list[Layer] = []
    for e in graph.edges:
        if e.from_layer in inside and e.to_layer not in inside:
            layer = graph.layer(e.to_layer)
            if REGISTRY.role(layer) == "result" or layer.type.lower() == "result":
                continue
            if layer not in added:
                added.append(layer)
    return _grown(cut, added, "consumer")


def _grown(cut: IrCut, added: list[Layer], role: str) -> IrCut | None:
    """The cut with the added layers, each noted as its role; None when none was added."""
    if not added:
        return None
    grown = cut.copy()
    for layer in added:
        assert layer.id is not None
        grown.layers.add(layer.id)
        grown.kept.append(f"{role} {layer.label} ({layer.type})")
    return grown


def _weights(graph: Graph) -> bytes:
    if graph.weights is not None:
        return graph.weights
    if graph.weights_path is None or not os.path.exists(graph.weights_path):
        return b""
    with open(graph.weights_path, "rb") as handle:
        return handle.read()


def _shape_text(static: Sequence[int], declared: Sequence[int] | None, dynamic: bool) -> str:
    if not dynamic or declared is None or len(declared) != len(static):
        return ",".join(str(int(d)) for d in static)
    return ",".join("?" if d < 0 else str(int(s)) for s, d in zip(static, declared, strict=True))


def build_ir(
    cut: IrCut,
    arrays: Mapping[str, Array],
    dims: Mapping[tuple[str, int], tuple[int, ...] | None] | None = None,
) -> NetBuilder:
    """The small IR of a cut whose Parameters take `arrays` (by Feed name): Parameters of the
    arrays' shapes and types (the full model's dynamic dims kept when the cut is dynamic),
    constant subgraphs copied, Results on the outputs the full model read and on every output
    of the target.  `dims` gives each layer output's dims (by layer name and output number);
    without it, the full model's declared dims are written."""
    from ..frontends.ir_xml import const_layout
    from ..model import ELEMENT_TYPES

    graph = cut.graph
    inside = closed(cut)
    net = NetBuilder(graph.name or "irpool_extract", 11)
    refs: dict[tuple[int, int], Ref] = {}
    weights: bytes | None = None
    for feed in feeds(cut):
        array = arrays[feed.name]
        producer = graph.layer(feed.from_layer)
        port = producer.output_port(feed.from_port)
        et = next((k for k, v in ELEMENT_TYPES.items() if v == array.dtype.name), None)
        if port is not None and port.element_type:
            et = port.element_type
        declared = port.dims if port is not None else None
        text = _shape_text(array.shape, declared, cut.dynamic)
        refs[(feed.from_layer, feed.from_port)] = net.parameter(feed.name, text, et or "f32")
    used: set[tuple[int, int]] = set()
    for e in graph.edges:
        if e.from_layer in inside and e.to_layer not in inside:
            used.add((e.from_layer, e.from_port))
    results: list[tuple[str, Ref]] = []
    target_results: list[tuple[str, Ref]] = []
    for layer in graph.topological():
        assert layer.id is not None
        if layer.id not in inside:
            continue
        name = layer.name or layer.label
        inputs = [refs[_edge_key(graph, layer, port.id)] for port in layer.inputs]
        if _is_const(layer):
            if weights is None:
                weights = _weights(graph)
            et, shape, offset, _ = const_layout(graph, layer)
            raw = weights[offset : offset + const_size(et, shape)]
            names = layer.outputs[0].names if layer.outputs else ()
            made = [net.raw_const(name, et, shape, raw, names)]
        else:
            outs = []
            for k, p in enumerate(layer.outputs):
                d = dims.get((name, k)) if dims is not None else None
                outs.append((d if d is not None else p.dims, p.element_type or "f32"))
            out_names = [
                p.names or ((f"{name}:{k}",) if layer is cut.target else ())
                for k, p in enumerate(layer.outputs)
            ]
            made = net.copy(layer, name, inputs, outs, out_names)
        for port, ref in zip(layer.outputs, made, strict=True):
            refs[(layer.id, port.id)] = ref
            if _is_const(layer):
                continue
            if layer is cut.target or layer.id == cut.target.id:
                target_results.append((f"{name}/sink_port_{port.id}", ref))
            elif (layer.id, port.id) in used:
                results.append((f"{name}/sink_port_{port.id}", ref))
    for rname, ref in [*target_results, *results]:
        net.result(rname, ref)
    return net


def _edge_key(graph: Graph, layer: Layer, port_id: int) -> tuple[int, int]:
    assert layer.id is not None
    edge = graph.producer(layer.id, port_id)
    assert edge is not None
    return edge.from_layer, edge.from_port


# -- ONNX -------------------------------------------------------------------------------------


def onnx_node(graph: Graph, layer: Layer) -> Any:
    """The NodeProto of `layer` in the ONNX model at graph.path (by its first output)."""
    from ..frontends.onnx_model import read_model

    model = read_model(graph.path)
    first = layer.outputs[0].names[0] if layer.outputs and layer.outputs[0].names else None
    for node in model.graph.node:
        if first is not None and node.output and node.output[0] == first:
            return model, node
    raise LookupError(f"node {layer.label} not found in {graph.path}")


def onnx_inputs(graph: Graph, layer: Layer) -> list[str]:
    """The node's computed inputs (tensor names not initializers), in order."""
    out = []
    for port in layer.inputs:
        name = port.names[0] if port.names else ""
        if name and name not in graph.initializers and name not in out:
            out.append(name)
    return out


def build_onnx(graph: Graph, layer: Layer, arrays: Mapping[str, Array]) -> bytes:
    """The node alone as a one-node ONNX model with the full model's opsets: its computed
    inputs as graph inputs of the arrays' shapes and types, its initializers kept, its outputs
    as graph outputs (their shapes left to the runtime)."""
    import onnx
    from onnx import helper, numpy_helper

    model, node = onnx_node(graph, layer)
    inputs = []
    for name in onnx_inputs(graph, layer):
        array = arrays[name]
        elem = helper.np_dtype_to_tensor_dtype(array.dtype)
        inputs.append(helper.make_tensor_value_info(name, elem, list(array.shape)))
    inits = []
    for port in layer.inputs:
        name = port.names[0] if port.names else ""
        if name and name in graph.initializers:
            inits.append(numpy_helper.from_array(np.asarray(graph.initializers[name]), name))
    outputs = []
    elem_of = {}
    for vi in [*model.graph.value_info, *model.graph.output, *model.graph.input]:
        if vi.type.HasField("tensor_type"):
            elem_of[vi.name] = vi.type.tensor_type.elem_type
    x_elem = inputs[0].type.tensor_type.elem_type if inputs else onnx.TensorProto.FLOAT
    for k, name in enumerate(node.output):
        if not name:
            continue
        elem = elem_of.get(name, x_elem if k == 0 else onnx.TensorProto.INT64)
        outputs.append(helper.make_tensor_value_info(name, elem, None))
    g = helper.make_graph([node], "irpool_extract", inputs, outputs, inits)
    small = helper.make_model(g, opset_imports=list(model.opset_import))
    small.ir_version = model.ir_version
    return bytes(small.SerializeToString())
