"""Shape propagation over a Graph: Parameter `shape` -> pooling rules -> every port.

Pooling layers get their output dims from the geometry rules (on interval bounds); every other
layer type is taken as declared.  `check` compares the result with the declared `<dim>`s; `run`
and `explain` use the same `PoolingLayer` objects.

A port of another layer type that declares `-1` says only "not static": openvino writes -1 for
every non-static dim, intervals included (measured with openvino 2026.4: a Parameter of shape
[1,3,2..3,8] keeps `shape="1,3,2..3,8"`, but a ReLU after it writes <dim>-1</dim>).  Such a dim
is *unknown* here: it is taken as [0, inf), and the dims a pooling layer derives from it are
bounds that openvino's own (narrower) input may sit inside, not the exact result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .errors import IrParseError, IrpoolError
from .geometry import PoolParams
from .model import (
    ELEMENT_BITS,
    OTHER_TYPES,
    Dim,
    Graph,
    Layer,
    Shape,
    format_shape,
    ir_element_type,
    parse_shape,
    shape_of,
)
from .ops import REGISTRY, Bound, bind
from .ops.binding import Inferred
from .ops.registry import OpSpec
from .quantize_shapes import QuantizeShape, fake_quantize_shape


@dataclass(frozen=True)
class PoolingLayer:
    """A pooling layer bound once (`bound`: its entry, attributes, convention and the plans it
    derives), with its shapes in and out as shape inference gives them."""

    bound: Bound
    input_shape: Shape | None
    output_shape: Shape | None
    formulas: tuple[str, ...]
    notes: tuple[str, ...] = ()
    unknown: tuple[bool, ...] = ()
    """Per output axis: the size rests on an input dim written as -1 (unknown), so the output
    dim is a bound, not openvino's exact result; empty when no axis is unknown."""

    @property
    def layer(self) -> Layer:
        return self.bound.layer

    @property
    def spec(self) -> OpSpec:
        return self.bound.spec

    @property
    def params(self) -> PoolParams:
        """The layer's parameters for its input rank (a windowed layer's)."""
        rank = None if self.input_shape is None else len(self.input_shape)
        params: PoolParams = self.bound.params_for(rank)
        return params

    def is_unknown(self, axis: int) -> bool:
        return axis < len(self.unknown) and self.unknown[axis]


def pooling_layer(
    bound: Bound, input_shape: Shape | None, unknown: tuple[bool, ...] = ()
) -> PoolingLayer:
    """A bound layer's shapes for an input shape (None = dynamic rank)."""
    inferred: Inferred = bound.infer(input_shape, unknown)
    return PoolingLayer(
        bound,
        input_shape,
        inferred.output_shape,
        inferred.formulas,
        bound.notes,
        inferred.unknown,
    )


@dataclass
class Inference:
    """Propagated shapes: key (layer index, port id) -> shape (None = dynamic rank)."""

    graph: Graph
    shapes: dict[tuple[int, int], Shape | None] = field(default_factory=dict)
    element_types: dict[tuple[int, int], str | None] = field(default_factory=dict)
    pooling: list[PoolingLayer] = field(default_factory=list)
    unverified: list[Layer] = field(default_factory=list)
    parameter_shapes: dict[int, Shape | None] = field(default_factory=dict)
    unknown: dict[tuple[int, int], tuple[bool, ...]] = field(default_factory=dict)
    """Per port: which dims are unknown (a declared -1 that may stand for an interval)."""
    declared: set[tuple[int, int]] = field(default_factory=set)
    """Ports whose shape is only what the file declares (layers of other types)."""
    bound: dict[int, Bound] = field(default_factory=dict)
    """Every pooling layer bound (by layer index), for a later pass to reuse."""
    quantize: dict[int, QuantizeShape] = field(default_factory=dict)
    """Every FakeQuantize's and elementwise glue layer's inferred output (by layer index)."""


def dim_agrees(declared: int, inferred: Dim, unknown: bool = False) -> bool:
    """Whether a declared dim can be what openvino writes for the inferred one: the static size,
    or -1 for a non-static dim.  An `unknown` inferred dim (derived from a -1 that may have been
    an interval) holds only bounds: any size within them may be openvino's exact result."""
    if declared == -1:
        return not inferred.is_static
    if unknown and not inferred.is_static:
        return inferred.contains(declared)
    return inferred.is_static and inferred.lo == declared


def unknown_dims(dims: tuple[int, ...] | None) -> tuple[bool, ...]:
    """Which of a port's declared dims are -1."""
    return tuple(d == -1 for d in dims) if dims is not None else ()


def require_port_dims(layer: Layer) -> None:
    """An IR rule: the output ports of a pooling layer declare their dims.  (An input port
    without dims stands for an input of dynamic rank; its shape comes along the edge.)"""
    if layer.domain:
        return
    spec = REGISTRY.spec(layer)
    if spec is not None and spec.path is not None:
        return  # openvino writes a rank-0 output (a full reduction) without <dim>s too
    for port in layer.outputs:
        if port.dims is None:
            raise IrParseError(
                f"output port {port.id} of a pooling layer has no <dim>; expected one per "
                "output dimension",
                layer.where(port.line),
            )


def infer(
    graph: Graph,
    tensor_shapes: Mapping[str, tuple[int, ...]] | None = None,
    known_inputs: Mapping[int, Shape | None] | None = None,
    convention: str | None = None,
    reuse: Mapping[int, Bound] | None = None,
) -> Inference:
    """Propagate shapes through a net (or each fragment on its own).  Layers of other types keep
    their declared output dims, or `tensor_shapes[tensor name]` where none are declared.
    `known_inputs[layer index]` is the input shape of a pooling layer as some runtime inferred
    it (exact, e.g. openvino's); it replaces what the file says."""
    result = Inference(graph)
    index_of = {la.id: la.index for la in graph.layers if la.id is not None}
    for layer in graph.topological():
        if REGISTRY.is_pooling(layer):
            require_port_dims(layer)
            bound = (reuse or {}).get(layer.index) or bind(graph, layer, convention)
            result.bound[layer.index] = bound
            pl = _infer_pooling_in_graph(graph, bound, result, index_of, known_inputs or {})
            result.pooling.append(pl)
            in_et = _pooling_input_type(graph, layer, result, index_of)
            types = bound.output_types(in_et)
            for k, port in enumerate(layer.outputs):
                result.shapes[(layer.index, port.id)] = pl.output_shape
                result.unknown[(layer.index, port.id)] = pl.unknown
                result.element_types[(layer.index, port.id)] = types[min(k, len(types) - 1)]
        elif REGISTRY.role(layer) == "parameter":
            shape = parameter_shape(layer)
            result.parameter_shapes[layer.index] = shape
            et = parameter_element_type(layer)
            for port in layer.outputs:
                result.shapes[(layer.index, port.id)] = shape
                result.element_types[(layer.index, port.id)] = et or port.element_type
                if layer.data.get("shape") is None:
                    result.unknown[(layer.index, port.id)] = unknown_dims(port.dims)
                    result.declared.add((layer.index, port.id))
        elif REGISTRY.role(layer) == "quantize":
            _infer_fake_quantize(graph, layer, result, index_of)
        elif _infer_elementwise(graph, layer, result, index_of):
            pass
        else:
            if REGISTRY.role(layer) != "result":
                result.unverified.append(layer)
            for port in layer.outputs:
                dims = port.dims
                if dims is None and tensor_shapes is not None and port.names:
                    dims = tensor_shapes.get(port.names[0])
                result.shapes[(layer.index, port.id)] = shape_of(dims) if dims is not None else None
                result.unknown[(layer.index, port.id)] = unknown_dims(dims)
                result.declared.add((layer.index, port.id))
                result.element_types[(layer.index, port.id)] = port.element_type
    return result


def _input_shape(
    graph: Graph, layer: Layer, k: int, result: Inference, index_of: dict[int, int]
) -> tuple[Shape | None, tuple[bool, ...]]:
    """The shape flowing into a layer's k-th input port (and which dims are unknown): its
    producer's, else what the port declares."""
    port = layer.inputs[k]
    edge = None if graph.fragment or layer.id is None else graph.producer(layer.id, port.id)
    if edge is not None:
        key = (index_of[edge.from_layer], edge.from_port)
        return result.shapes.get(key), result.unknown.get(key, ())
    return (shape_of(port.dims), unknown_dims(port.dims)) if port.dims is not None else (None, ())


def _infer_elementwise(
    graph: Graph, layer: Layer, result: Inference, index_of: dict[int, int]
) -> bool:
    """An elementwise glue layer (ops/glue.py): its output shape from its inputs' (False: not
    one irpool infers; the declared dims stand)."""
    from .ops.glue import elementwise_shape

    if REGISTRY.role(layer) not in ("elementwise", "convert") or graph.fragment:
        return False
    got = [_input_shape(graph, layer, k, result, index_of) for k in range(len(layer.inputs))]
    qs = elementwise_shape(layer, [shape for shape, _ in got])
    if qs is None:
        return False
    if not all(_declared_as(port.dims, qs.output) for port in layer.outputs):
        # the file says otherwise (or -1): its dims stand, as for other layer types, and the
        # edges after it are checked against them; inputs that do not broadcast still count
        if qs.refusal is not None:
            result.quantize[layer.index] = replace(qs, output=None)
        return False
    result.quantize[layer.index] = qs
    unknown = got[0][1] if qs.output is not None and len(got[0][1]) == len(qs.output) else ()
    for port in layer.outputs:
        result.shapes[(layer.index, port.id)] = qs.output
        result.unknown[(layer.index, port.id)] = unknown
        result.element_types[(layer.index, port.id)] = port.element_type
    return True


def _declared_as(dims: tuple[int, ...] | None, shape: Shape | None) -> bool:
    """Whether declared dims (None: none declared) are exactly a static inferred shape."""
    if dims is None:
        return True
    if shape is None or len(dims) != len(shape):
        return False
    return all(d.is_static and d.lo == n for d, n in zip(shape, dims, strict=True))


def _infer_fake_quantize(
    graph: Graph, layer: Layer, result: Inference, index_of: dict[int, int]
) -> None:
    """FakeQuantize-1: the data's shape, the ranges checked against it as openvino does."""
    if len(layer.inputs) != 5:
        raise IrParseError(
            f"FakeQuantize has {len(layer.inputs)} input ports; expected 5 (data, input_low, "
            "input_high, output_low, output_high)",
            layer.where(),
        )
    data, unknown = _input_shape(graph, layer, 0, result, index_of)
    ranges = [_input_shape(graph, layer, k, result, index_of)[0] for k in range(1, 5)]
    qs = fake_quantize_shape(data, ranges, layer.data.get("auto_broadcast", "numpy"))
    result.quantize[layer.index] = qs
    for port in layer.outputs:
        result.shapes[(layer.index, port.id)] = qs.output
        result.unknown[(layer.index, port.id)] = unknown
        result.element_types[(layer.index, port.id)] = port.element_type


def parameter_element_type(layer: Layer) -> str | None:
    """A Parameter's `element_type` in the IR short spelling, or None where it has none."""
    raw = layer.data.get("element_type")
    if raw is None:
        return None
    et = ir_element_type(raw)  # as openvino reads it: a type name in any ASCII case
    if et is None:
        known = ", ".join((*ELEMENT_BITS, *OTHER_TYPES))
        raise IrParseError(
            f'Parameter element_type="{raw}" is not an element type openvino reads; expected '
            f"one of {known} (any letter case, no spaces)",
            layer.where(),
        )
    return et


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


@dataclass(frozen=True)
class _Witness:
    """One account of a pooling layer's input: its shape, unknown dims, and where it is from."""

    shape: Shape | None
    unknown: tuple[bool, ...]
    source: str


def _witnesses(
    graph: Graph, layer: Layer, result: Inference, index_of: dict[int, int]
) -> list[_Witness]:
    """What the file says the input of a pooling layer is: the producer's shape (the Parameter's
    `shape`, an inferred pooling output, or another layer's declared dims); and, when the
    producer only declares its dims and the layer's own input port declares others, that port
    too, first: two declarations disagree, and the layer's own port is the nearer witness."""
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
        return [_Witness(shape_of(port.dims), unknown_dims(port.dims), "input port")]
    assert layer.id is not None
    edge = graph.producer(layer.id, port.id)
    if edge is None:  # an ONNX initializer
        value = graph.initializers.get(port.names[0]) if port.names else None
        return [_Witness(shape_of(value.shape) if value is not None else None, (), "initializer")]
    key = (index_of[edge.from_layer], edge.from_port)
    src = graph.layer(edge.from_layer)
    out = src.output_port(edge.from_port)
    produced = _Witness(
        result.shapes.get(key), result.unknown.get(key, ()), f'the edge from "{src.label}"'
    )
    if (
        key in result.declared
        and out is not None
        and out.dims is not None
        and port.dims is not None
        and out.dims != port.dims
    ):
        own = _Witness(shape_of(port.dims), unknown_dims(port.dims), f"input port {port.id}")
        return [own, produced]
    return [produced]


def _agrees(layer: Layer, pl: PoolingLayer) -> bool:
    """Whether every declared output dim of a pooling layer agrees with `pl`'s output shape."""
    shape = pl.output_shape
    if shape is None:
        return True
    for port in layer.outputs:
        if port.dims is None:
            continue
        if len(port.dims) != len(shape):
            return False
        for axis, (d, dim) in enumerate(zip(port.dims, shape, strict=True)):
            if not dim_agrees(d, dim, pl.is_unknown(axis)):
                return False
    return True


def _infer_pooling_in_graph(
    graph: Graph,
    bound: Bound,
    result: Inference,
    index_of: dict[int, int],
    known_inputs: Mapping[int, Shape | None],
) -> PoolingLayer:
    """A pooling layer inferred from its input: a known (runtime) input if given, else the file's
    account of it; of two disagreeing accounts, the one the declared outputs agree with (else
    the layer's own input port), with a note saying so."""
    layer = bound.layer
    witnesses = _witnesses(graph, layer, result, index_of)
    if layer.index in known_inputs:
        known = known_inputs[layer.index]
        pl = pooling_layer(bound, known)
        file_shape = witnesses[0].shape
        if format_shape(file_shape) != format_shape(known):
            note = (
                f"input {format_shape(known)} as openvino infers it; the file declares "
                f"{format_shape(file_shape)}"
            )
            pl = replace(pl, notes=(*pl.notes, note))
        return pl
    if len(witnesses) == 1:
        w = witnesses[0]
        return pooling_layer(bound, w.shape, w.unknown)
    inferred: list[tuple[_Witness, PoolingLayer]] = []
    refusal: IrpoolError | None = None
    for w in witnesses:
        try:
            inferred.append((w, pooling_layer(bound, w.shape, w.unknown)))
        except IrpoolError as e:
            refusal = refusal or e
    if not inferred:
        assert refusal is not None
        raise refusal
    used, chosen = next(((w, pl) for w, pl in inferred if _agrees(layer, pl)), inferred[0])
    if refusal is not None:
        why = f"the other gives no output: {refusal.message}"
    elif _agrees(layer, chosen):
        why = "the declared output agrees with it"
    else:
        why = "the declared output agrees with neither"
    own, produced = witnesses
    note = (
        f"input disputed: input port {layer.inputs[0].id} declares {format_shape(own.shape)}, "
        f"{produced.source} declares {format_shape(produced.shape)}; inferred from "
        f"{used.source} ({why})"
    )
    return replace(chosen, notes=(*chosen.notes, note))


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
