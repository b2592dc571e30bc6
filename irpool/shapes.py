"""Shape propagation over a Graph: Parameter `shape` -> pooling rules -> every port.

Pooling layers get their output dims from the geometry rules (on interval bounds); every other
layer type is taken as declared.  `check` compares the result with the declared `<dim>`s; `run`
and `explain` use the same `PoolingLayer` objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .conventions import ONNX, OPENVINO, Convention
from .errors import IrParseError, IrpoolError, ShapeError
from .geometry import (
    PoolParams,
    ShapeRule,
    axis_pads,
    check_axis,
    check_params,
    dilated,
    out_dim,
    out_size,
    pads_formula,
    shape_rule,
    size_formula,
)
from .model import Dim, Graph, Layer, Port, Shape, parse_shape, shape_of
from .ops import onnx as onnx_ops
from .ops import openvino as ov_ops
from .ops.spec import OpSpec


@dataclass(frozen=True)
class PoolingLayer:
    """A pooling layer with its op row, resolved parameters, and shapes in and out."""

    layer: Layer
    spec: OpSpec
    params: PoolParams
    input_shape: Shape | None
    output_shape: Shape | None
    formulas: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def output_ports(self) -> tuple[Port, ...]:
        return self.layer.outputs


@dataclass
class Inference:
    """Propagated shapes: key (layer index, port id) -> shape (None = dynamic rank)."""

    graph: Graph
    shapes: dict[tuple[int, int], Shape | None] = field(default_factory=dict)
    element_types: dict[tuple[int, int], str | None] = field(default_factory=dict)
    pooling: list[PoolingLayer] = field(default_factory=list)
    unverified: list[Layer] = field(default_factory=list)
    parameter_shapes: dict[int, Shape | None] = field(default_factory=dict)


def is_pooling(layer: Layer) -> bool:
    """An OpenVINO pooling layer, or an ONNX pooling node (which carries its domain)."""
    if layer.domain:
        from .frontends.onnx_model import is_pooling as onnx_pooling

        return onnx_pooling(layer)
    return ov_ops.is_pooling(layer.type)


def pooling_spec(layer: Layer) -> tuple[OpSpec, str | None] | None:
    """The op row of a pooling layer, or None for other types; errors name the layer."""
    if not is_pooling(layer):
        return None
    try:
        if layer.domain:
            version = int((layer.version or "opset1").removeprefix("opset"))
            return onnx_ops.select(layer.type, layer.domain, version), None
        return ov_ops.select(layer.type, layer.version, layer.data)
    except IrpoolError as e:
        raise e.at(layer.where()) from None


def layer_params(layer: Layer, spec: OpSpec, rank: int | None) -> PoolParams:
    """PoolParams of a pooling layer of either front end."""
    if layer.domain:
        return onnx_ops.params(spec, layer.attrs, rank, indices=len(layer.outputs) > 1)
    return ov_ops.params(spec, layer.data, rank)


def convention_of(layer: Layer) -> Convention:
    """The default convention of a layer: openvino for IR layers, onnx for ONNX nodes."""
    return ONNX if layer.domain else OPENVINO


def infer_pooling(layer: Layer, input_shape: Shape | None) -> PoolingLayer:
    """Params and output shape of one pooling layer for an input shape (None = dynamic rank)."""
    selected = pooling_spec(layer)
    assert selected is not None
    spec, version_note = selected
    if not layer.domain and len(layer.outputs) > spec.outputs:
        raise IrParseError(
            f"{spec.label} has {spec.outputs} output(s); the layer declares "
            f"{len(layer.outputs)} output ports",
            layer.where(layer.outputs[spec.outputs].line),
        )
    rank = None if input_shape is None else len(input_shape)
    if layer.domain and input_shape is not None and layer.attrs.get("channels_last"):
        input_shape = (input_shape[0], input_shape[-1], *input_shape[1:-1])
    try:
        params = layer_params(layer, spec, rank)
        output, formulas = _output_shape(params, input_shape, convention_of(layer))
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    if layer.domain and output is not None and layer.attrs.get("channels_last"):
        output = (output[0], *output[2:], output[1])
    notes = tuple(n for n in (version_note, *params.notes) if n)
    return PoolingLayer(layer, spec, params, input_shape, output, formulas, notes)


def _output_shape(
    params: PoolParams, input_shape: Shape | None, convention: Convention = OPENVINO
) -> tuple[Shape | None, tuple[str, ...]]:
    check_params(params, params.rank if input_shape is None else len(input_shape) - 2)
    if input_shape is None:
        return tuple(Dim.dynamic() for _ in range(2 + params.rank)), ()
    batch, channels = input_shape[0], input_shape[1]
    if batch.is_static and batch.lo == 0:
        raise ShapeError("Batch size is zero; expected N >= 1")
    if channels.is_static and channels.lo == 0:
        raise ShapeError("Channel count is zero; expected C >= 1")
    rule = shape_rule(params.rounding, convention)
    truncate = convention.onnxruntime_sizes
    dims: list[Dim] = [batch, channels]
    formulas: list[str] = []
    for i, n in enumerate(input_shape[2:]):
        k, s, d = params.window[i], params.strides[i], params.dilations[i]
        if not n.is_static:
            dim = out_dim(params, i, n, rule, convention)
            formulas.append(_interval_formula(params, i, n, rule, convention, dim))
            dims.append(dim)
            continue
        pb, pe = axis_pads(params, i, n.lo, convention)
        if not truncate:
            check_axis(params, i, n.lo, pb, pe)
        # the size plan() gives for this input, from the same pads and rule as the text
        out = out_size(n.lo, dilated(k, d), s, pb, pe, rule, truncate=truncate)
        if out < 0:
            raise ShapeError(
                f"output size {out} at axis {i} is negative (window {dilated(k, d)}, input "
                f"{n.lo}, pads {pb}, {pe}); onnxruntime refuses it"
            )
        text = size_formula(n.lo, k, s, d, pb, pe, rule, out, truncate=truncate)
        if params.auto_pad in ("same_upper", "same_lower"):
            upper = params.auto_pad == "same_upper"
            text = f"{pads_formula(n.lo, k, s, d, pb, pe, upper, convention)}; {text}"
        elif params.auto_pad == "valid":
            text = "valid: pads 0, 0; " + text
        formulas.append(text)
        dims.append(Dim.of(out))
    return tuple(dims), tuple(formulas)


def _interval_formula(
    params: PoolParams, i: int, n: Dim, rule: ShapeRule, convention: Convention, dim: Dim
) -> str:
    """The formula on each bound of a non-static dim, ending in the bounds of `dim` (out_dim's
    result, which clamps a negative span at 0 as openvino does on interval bounds)."""
    if params.auto_pad in ("same_upper", "same_lower"):
        return f"{params.auto_pad} on the non-static dim {n}: the pads differ per size, so ?"
    pb, pe = axis_pads(params, i, n.lo, convention)
    k, s, d = params.window[i], params.strides[i], params.dilations[i]
    parts = [f"on the bounds of {n}:"]
    for name, bound, out in (("lower", n.lo, dim.lo), ("upper", n.hi, dim.hi)):
        if bound is None or out is None:
            parts.append(f"{name} unbounded")
        else:
            shown = size_formula(bound, k, s, d, pb, pe, rule, out)
            parts.append(f"{name} {shown}")
    return " ".join(parts[:1]) + " " + "; ".join(parts[1:])


def require_port_dims(layer: Layer) -> None:
    """An IR rule: the output ports of a pooling layer declare their dims.  (An input port
    without dims stands for an input of dynamic rank; its shape comes along the edge.)"""
    if layer.domain:
        return
    for port in layer.outputs:
        if port.dims is None:
            raise IrParseError(
                f"output port {port.id} of a pooling layer has no <dim>; expected one per "
                "output dimension",
                layer.where(port.line),
            )


def infer(graph: Graph, tensor_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Inference:
    """Propagate shapes through a net (or each fragment on its own).  Layers of other types keep
    their declared output dims, or `tensor_shapes[tensor name]` where none are declared."""
    result = Inference(graph)
    index_of = {la.id: la.index for la in graph.layers if la.id is not None}
    for layer in graph.topological():
        if is_pooling(layer):
            require_port_dims(layer)
            input_shape = _pooling_input(graph, layer, result, index_of)
            pl = infer_pooling(layer, input_shape)
            result.pooling.append(pl)
            in_et = _pooling_input_type(graph, layer, result, index_of)
            for k, port in enumerate(layer.outputs):
                result.shapes[(layer.index, port.id)] = pl.output_shape
                if k == 0:
                    result.element_types[(layer.index, port.id)] = in_et
                else:
                    result.element_types[(layer.index, port.id)] = (
                        "i32" if pl.params.index_dtype == "int32" else "i64"
                    )
        elif layer.type.lower() == "parameter":
            shape = parameter_shape(layer)
            result.parameter_shapes[layer.index] = shape
            et = layer.data.get("element_type")
            for port in layer.outputs:
                result.shapes[(layer.index, port.id)] = shape
                result.element_types[(layer.index, port.id)] = (
                    et.strip() if et else port.element_type
                )
        else:
            if layer.type.lower() != "result":
                result.unverified.append(layer)
            for port in layer.outputs:
                dims = port.dims
                if dims is None and tensor_shapes is not None and port.names:
                    dims = tensor_shapes.get(port.names[0])
                result.shapes[(layer.index, port.id)] = shape_of(dims) if dims is not None else None
                result.element_types[(layer.index, port.id)] = port.element_type
    return result


def parameter_shape(layer: Layer) -> Shape | None:
    """A Parameter's shape: its `shape` attribute, else its declared output dims."""
    raw = layer.data.get("shape")
    if raw is not None:
        try:
            return parse_shape(raw)
        except ValueError as e:
            raise IrParseError(
                f'Parameter shape="{raw}": {e}; expected dims such as 1,3,?,1..10', layer.where()
            ) from None
    if layer.outputs and layer.outputs[0].dims is not None:
        return shape_of(layer.outputs[0].dims)
    raise IrParseError(
        "Parameter has neither a shape attribute nor output dims; expected one of them",
        layer.where(),
    )


def _pooling_input(
    graph: Graph, layer: Layer, result: Inference, index_of: dict[int, int]
) -> Shape | None:
    if not layer.inputs:
        raise IrParseError(
            "pooling layer has no input port; expected <input><port> with the input dims",
            layer.where(),
        )
    port = layer.inputs[0]
    if graph.fragment:
        if port.dims is None:
            raise IrParseError(
                f"input port {port.id} has no <dim>; expected the input dims of the fragment",
                layer.where(port.line),
            )
        return shape_of(port.dims)
    assert layer.id is not None
    edge = graph.producer(layer.id, port.id)
    if edge is None:  # an ONNX initializer
        value = graph.initializers.get(port.names[0]) if port.names else None
        return shape_of(value.shape) if value is not None else None
    return result.shapes.get((index_of[edge.from_layer], edge.from_port))


def _pooling_input_type(
    graph: Graph, layer: Layer, result: Inference, index_of: dict[int, int]
) -> str | None:
    port = layer.inputs[0]
    if graph.fragment or layer.id is None:
        return port.element_type
    edge = graph.producer(layer.id, port.id)
    if edge is None:
        return port.element_type
    return result.element_types.get((index_of[edge.from_layer], edge.from_port))
