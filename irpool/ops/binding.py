"""bind(graph, layer): the one reader of a pooling layer's attributes.

A layer becomes a `Bound`: its registry entry, its family (windowed pooling, adaptive pooling,
a reduction, ...: `Bound.family`), its attributes read by the family into its params, the
convention it runs under, and what the graph says about it (whether its indices output is used,
its constant inputs).  Nothing after `bind` reads a layer's attributes again:

* `Bound.plan(shape, dtype)` is the dtype-complete plan (a windowed layer's PoolPlan, another
  family's FamilyPlan) that the kernel executes, `explain` prints and `compare` computes with
  (made once per shape, dtype and convention, then reused);
* `Bound.infer(shape)` is the output shape `check` reports, on interval dims, by the same
  family's rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import conventions as conv
from ..conventions import Convention
from ..errors import IrParseError, IrpoolError, SpecError
from ..families import int_values
from ..families.windows import QLINEAR, WINDOWS
from ..frontends.ir_xml import read_const
from ..geometry import PoolParams
from ..model import Graph, Layer, Shape
from .registry import REGISTRY, OpSpec

if TYPE_CHECKING:
    from ..families import Family, Values

Array = npt.NDArray[Any]


def _dtype_name(dtype: str | np.dtype[Any]) -> str:
    return dtype if isinstance(dtype, str) else str(np.dtype(dtype).name)


@dataclass(frozen=True)
class Inferred:
    """A pooling layer's shapes as shape inference gives them (NCHW order for channels-last
    layers is undone: shapes are in the layer's own layout)."""

    input_shape: Shape | None
    output_shape: Shape | None
    formulas: tuple[str, ...]
    unknown: tuple[bool, ...] = ()
    """Per output axis: the size rests on an input dim written as -1, so the output dim is a
    bound, not openvino's exact result; empty when no axis is unknown."""


@dataclass(frozen=True)
class Bound:
    """A pooling layer bound to its entry, convention and place in the graph.  Its attributes
    are read (by the entry's reader, with the runtime's checks in the runtime's order) once
    per input rank: the rank decides some of the checks."""

    layer: Layer
    spec: OpSpec
    convention: Convention
    indices_used: bool
    """Whether the model consumes the indices output (openvino pools integer MaxPool-8/14 layers
    in integers then, see Convention.integers_in_float32)."""
    note: str | None = None
    """How the entry was chosen, where the file does not say (a fragment without a version)."""
    channels_last: bool = False
    """The data is N, *spatial, C (com.microsoft QLinear ops with channels_last=1)."""
    given: PoolParams | None = None
    """Parameters given directly instead of read from the layer (see `with_params`)."""
    constants: tuple[Array | None, ...] = ()
    """The value of each input that is a constant of the file (an IR Const, an ONNX
    initializer), by input index; None for a computed input (family layers only)."""
    _params: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)
    _plans: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        return self.layer.label

    @property
    def family(self) -> Family:
        """The layer's family: the entry's `path`; windowed pooling (and its quantised form)
        for the entries of those kinds."""
        path: Family | None = self.spec.path
        if path is not None:
            return path
        return QLINEAR if self.spec.kind == "qlinear" else WINDOWS

    def values(self, given: Values | None = None) -> dict[int, tuple[int, ...]]:
        """The integer values of the family's value inputs: the file's constants, replaced by
        `given` (the arrays a run computed)."""
        out: dict[int, tuple[int, ...]] = {}
        for k in self.family.value_inputs:
            value = int_values(self.constants[k]) if k < len(self.constants) else None
            if value is not None:
                out[k] = value
        out.update(given or {})
        return out

    def params_for(
        self, rank: int | None, given: Values | None = None, indices_used: bool | None = None
    ) -> Any:
        """The layer's params (a PoolParams for windowed pooling, the family's params
        otherwise) for an input of `rank` dims (None: unknown rank) and the values of its value
        inputs (constants, or `given`), with the runtime's checks; errors name the layer."""
        family = self.family
        used = self.indices_used if indices_used is None else indices_used
        if self.given is not None:
            return family.with_use(self.given, used)
        values = self.values(given)
        key = (rank, tuple(sorted(values.items())), used)

        def read() -> Any:
            found = family.read(self.spec, self.layer, rank, values)
            return family.with_use(found, used)

        return self._kept(self._params, key, read)

    def plan(
        self,
        input_shape: tuple[int, ...],
        dtype: str | np.dtype[Any] = "float32",
        convention: str | Convention | None = None,
        indices_used: bool | None = None,
        given: Values | None = None,
    ) -> Any:
        """The plan (a PoolPlan for windowed pooling, the family's FamilyPlan otherwise) for
        data of `input_shape` (the layer's layout) and `dtype`, under the bound convention or
        another one, with the indices taken as used or not (compare's probe) and the value
        inputs `given` (a run's computed ones); made once, then reused; errors name the
        layer."""
        family = self.family
        cv = self.convention if convention is None else conv.get(convention)
        name = _dtype_name(dtype)
        used = self.indices_used if indices_used is None else indices_used
        rank = len(input_shape)
        params = self.params_for(rank, given, used)
        key = (tuple(input_shape), name, cv.name, cv.target, used, params)

        def make() -> Any:
            if cv.name not in (*family.conventions, "openvino", "onnx", "torch"):
                raise SpecError(
                    f"irpool has no {cv.name} rules for {family.title} ({params.op}); it "
                    f"computes it under the {', '.join(family.conventions)} convention(s)"
                )
            shape = tuple(int(n) for n in self._layout(tuple(input_shape)))
            return family.plan(params, shape, name, cv)

        return self._kept(self._plans, key, make)

    def output_types(self, input_type: str | None) -> list[str | None]:
        """The element types of the layer's outputs for an input of `input_type`."""
        return self.family.output_types(self.params_for(None), input_type)

    def with_params(self, params: PoolParams) -> Bound:
        """The same layer with other parameters (to explain what a variant would do)."""
        return Bound(
            self.layer,
            self.spec,
            self.convention,
            self.indices_used,
            self.note,
            self.channels_last,
            params,
            self.constants,
        )

    @property
    def params(self) -> Any:
        """The params read without an input rank."""
        return self.params_for(None)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reader noticed (ignored attributes, defaults openvino fills in, ...)."""
        read = next(iter(self._params.values()), None) or self.params
        return tuple(n for n in (self.note, *read.notes) if n)

    def _layout(self, shape: tuple[Any, ...]) -> tuple[Any, ...]:
        """A shape in the order the family's rules take: N, C, *spatial for a channels-last
        layer of a family whose rules are channels-first; else as it is."""
        if self.channels_last and self.family.channels_first and len(shape) > 2:
            return (shape[0], shape[-1], *shape[1:-1])
        return shape

    def _kept(self, cache: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
        """cache[key], made by `make` the first time it is asked for; errors name the layer."""
        found = cache.get(key)
        if found is None:
            try:
                found = make()
            except IrpoolError as e:
                raise e.at(self.layer.where()) from None
            cache[key] = found
        return found

    def infer(self, input_shape: Shape | None, unknown: tuple[bool, ...] = ()) -> Inferred:
        """Output shape and formulas for an input of interval dims (None: dynamic rank)."""
        rank = None if input_shape is None else len(input_shape)
        if input_shape is None or len(unknown) != len(input_shape) or not any(unknown):
            unknown = ()
        family = self.family
        shape = None if input_shape is None else self._layout(input_shape)
        marks = self._layout(unknown) if unknown else ()
        try:
            params = self.params_for(rank)
            out, texts = family.infer(params, shape, self.convention, marks)
        except IrpoolError as e:
            raise e.at(self.layer.where()) from None
        if family.channels_first:
            if out is not None and shape is not input_shape:
                out = (out[0], *out[2:], out[1])
                marks = (marks[0], *marks[2:], marks[1]) if marks else ()
            return Inferred(input_shape, out, texts, marks)
        marks = _carried(unknown, input_shape, out)
        if out is not None and family.value_inputs and not self.values():
            # the size or axes input is not a constant of the file (a fragment, a
            # computed input): the dims it decides are not verifiable, not wrong
            marks = tuple(
                (m if i < len(marks) else False) or not d.is_static
                for i, (m, d) in enumerate(zip(marks or (False,) * len(out), out, strict=True))
            )
            marks = marks if any(marks) else ()
        return Inferred(input_shape, out, texts, marks)


BIND_CALLS = 0
"""How many times `bind` ran in this process (tests check that a command binds each layer
once)."""


def bind(
    graph: Graph,
    layer: Layer,
    convention: str | Convention | None = None,
    indices_used: bool | None = None,
) -> Bound:
    """Bind a pooling layer of `graph`: the only place its attributes are read.

    `convention` overrides the layer's own (openvino for IR layers, onnx for ONNX nodes);
    `indices_used` overrides what the graph says (compare's openvino probe reads the indices of
    every MaxPool-8/14, so openvino computes them as used there)."""
    global BIND_CALLS
    BIND_CALLS += 1
    found = REGISTRY.lookup(layer)
    if found is None or not found.spec.pooling:
        raise SpecError(f"the layer is a {layer.type}, not a pooling layer", layer.where())
    spec = found.spec
    if not layer.domain and len(layer.outputs) > spec.outputs:
        raise IrParseError(
            f"{spec.label} has {spec.outputs} output(s); the layer declares "
            f"{len(layer.outputs)} output ports",
            layer.where(layer.outputs[spec.outputs].line),
        )
    used = indices_used if indices_used is not None else _indices_used(graph, layer)
    return Bound(
        layer=layer,
        spec=spec,
        convention=conv.get(convention or spec.convention),
        indices_used=used,
        note=found.note,
        channels_last=spec.kind in ("qlinear", "family") and bool(layer.attrs.get("channels_last")),
        constants=_constants(graph, layer) if spec.path is not None else (),
    )


def _carried(unknown: tuple[bool, ...], shape: Shape | None, out: Shape | None) -> tuple[bool, ...]:
    """Unknown (written -1) input dims carried to the output dims they become: kept N and C
    (a family's spatial sizes do not rest on the input's)."""
    if not unknown or shape is None or out is None or len(out) < 2:
        return ()
    marks = [False] * len(out)
    marks[0], marks[1] = unknown[0], unknown[1] if len(unknown) > 1 else False
    return tuple(marks) if any(marks) else ()


def _constants(graph: Graph, layer: Layer) -> tuple[Array | None, ...]:
    """The value of each input of a layer that is a constant: an ONNX initializer, or an IR
    Const read from the .bin beside the .xml (None where the input is computed, or the Const
    cannot be read: the reports then say the value is unknown)."""
    values: list[Array | None] = []
    for k, port in enumerate(layer.inputs):
        if graph.format == "onnx":
            values.append(constant_input(graph, layer, k))
            continue
        edge = graph.producer(layer.id, port.id) if layer.id is not None else None
        src = graph.layer(edge.from_layer) if edge is not None else None
        if src is None or REGISTRY.role(src) != "const" or graph.fragment:
            values.append(None)
            continue
        try:
            values.append(read_const(graph, src))
        except IrpoolError:
            values.append(None)
    return tuple(values)


def _indices_used(graph: Graph, layer: Layer) -> bool:
    """Whether an edge leaves the layer's second output (MaxPool-8/14 indices); a layer of a
    fragment file is taken as having them used (nothing says otherwise)."""
    if graph.fragment:
        return True
    if len(layer.outputs) < 2 or layer.id is None:
        return False
    return graph.consumed(layer.id, layer.outputs[1].id)


def constant_input(graph: Graph, layer: Layer, port: int) -> Array | None:
    """The value of a layer's input that is a constant (an ONNX initializer), or None."""
    p = layer.inputs[port] if port < len(layer.inputs) else None
    if p is None or not p.names or p.names[0] not in graph.initializers:
        return None
    return np.asarray(graph.initializers[p.names[0]])
