"""Tensors as a runtime holds them between the layers of a net, and the glue layers.

Under openvino's convention a tensor travels as the CPU plugin holds it (ops/elements.py): in
its internal type, f16 in float32, integers of float32 layers kept in float32, constants folded
at compile time; a `Value` carries that beside the type the model declares.  Convert, the
elementwise glue and the shape glue (Squeeze, Reshape, Concat, ...) act on Values here;
`run.run_graph` walks the net and runs the pooling layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import IrParseError, IrpoolError
from .model import Layer, element_type_of_numpy, numpy_dtype
from .ops import elements
from .ops.registry import read_element_type
from .run_inputs import V10_OUTPUTS, v10_output

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Value:
    """A tensor as the runtime holds it between layers."""

    array: Array
    held: str
    """The element type of `array` (openvino's CPU plugin: its internal type, see
    ops/elements.py; f16 tensors made inside a net are held in f32)."""
    declared: str
    """The element type the model declares for the tensor."""
    constant: Array | None = None
    """For a tensor openvino computes when it compiles the model (a Const, and Converts and
    MaxPools of constants, folded): the model's constant, of the declared type; `array` is
    what the plugin stores for it."""
    jit_read: Array | None = None
    constant_type: str | None = None
    """The element type `constant` is of when it is not the declared one (a folded f16 MaxPool
    is evaluated, and kept, in float32)."""
    late: bool = False
    """A constant folded only after the plugin has retyped the model to its inference precision
    (downstream of an f64 MaxPool of a constant): a Convert to f16 there rounds nothing."""
    quant: Any = None
    """A tensor a FakeQuantize made: LPT's codes beside the value (lpt_run.Quant), or None."""
    """What the plugin's jit consumers read instead of `array` (a u8 AvgPool of several
    channels: an empty window's NaN mean reaches them as 255, see `_u8_blocked_nan`)."""

    @property
    def folded_type(self) -> str:
        """The element type of `constant`."""
        return self.constant_type or self.declared

    @property
    def late_type(self) -> str:
        """The element type of `constant` once the plugin has retyped f64 and f16 to f32."""
        return LATE_RETYPE.get(self.folded_type, self.folded_type)

    def output(self, v10: bool = False) -> Array:
        """The tensor as a Result of the model gives it."""
        if v10 and self.constant is not None:
            # the retyping is a Convert in the model, folded with the constant (measured: an
            # i64 constant wraps to i32 there, where the plugin's storage would clamp it)
            target = V10_OUTPUTS.get(self.declared, "f32")
            value, held = elements.store_folded(self.constant, self.folded_type, target)
            return elements.deliver(value, held, target)
        if self.late and self.constant is not None and self.declared != self.late_type:
            # the Result's conversion is folded too (static_cast: no clamp at f64)
            return elements.fold_convert(self.constant, self.late_type, self.declared)
        if v10:
            return v10_output(self.array, self.held, self.declared)
        return elements.deliver(self.array, self.held, self.declared)


def declared_value(array: Array) -> Value:
    et = element_type_of_numpy(array.dtype.name) or "f32"
    return Value(np.asarray(array), et, et)


LATE_RETYPE = {**elements.HELD, "f16": "f32"}
"""How the CPU plugin retypes a model (f32 inference precision: f64 and f16 to f32, the types
held as i32 to i32, boolean to u8) before its own constant folding: constants downstream of an
f64 MaxPool of a constant are folded after it."""


INTERNAL = ("f32", "f16", "bf16", "i32", "i8", "u8")
"""The types openvino's CPU plugin computes in (f16 only as a Parameter's own type)."""


JIT_CONVERTS = ("f32", "f64", "f16", "bf16", "i8")
"""Destinations of a Convert from u8 that the plugin runs as a jit subgraph (measured)."""


def convert_layer(layer: Layer, src: Value, plugin: bool) -> Value:
    """A Convert layer: folded for a constant input, as the plugin runs it otherwise
    (ops/elements.py), or (other conventions) from the declared type to the declared one."""
    raw = layer.data.get("destination_type")
    if raw is None:
        raise IrParseError("Convert has no destination_type", layer.where())
    try:
        target = read_element_type(raw, "destination_type")
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    numpy_dtype(target, layer.where())  # a type irpool holds
    if target == src.declared and src.constant is None and src.held in INTERNAL:
        return Value(src.array, src.held, target, None, src.jit_read)
    if not plugin:
        if target == src.declared:
            return declared_value(src.output())
        value, held = elements.convert(src.output(), src.declared, target)
        return Value(elements.deliver(value, held, target), target, target)
    if src.constant is not None and src.late:
        # folded after the plugin retyped f64 and f16 to f32 (static_cast between the new types)
        retyped = LATE_RETYPE.get(target, target)
        value = elements.fold_convert(src.constant, src.late_type, retyped)
        if target == "f32":  # stored as a float32 constant (an f64 one keeps its subnormals)
            value = elements.flush_f32(value)
        return Value(value, retyped, target, value, constant_type=retyped, late=True)
    if src.constant is not None:
        constant = elements.fold_convert(src.constant, src.folded_type, target)
        stored, held = elements.store_folded(src.constant, src.folded_type, target)
        return Value(stored, held, target, constant, late=src.late)
    if (
        src.held == "f32"
        and src.declared in elements.INTEGRAL
        and target in elements.INTEGRAL
        and elements.held_type(target) == elements.held_type(src.declared)
    ):
        # the plugin drops a Convert between two types it holds alike (i32 -> i64: both i32),
        # so an integer tensor a float32 layer left in float32 stays so (measured: i32 AvgPool
        # -> Convert i64 -> AvgPool keeps 2147483648.0 where a Result reads 2147483520)
        return Value(src.array, src.held, target, None, src.jit_read)
    x, held = read_integers(src)
    if src.jit_read is not None and target in JIT_CONVERTS:
        x = src.jit_read
    value, held = elements.convert(x, held, target)
    return Value(value, held, target)


def read_integers(src: Value) -> tuple[Array, str]:
    """A tensor as a layer that keeps integers reads it: an integer tensor held in float32 is
    reordered to its integer type first (rounded half to even, saturated)."""
    if src.held == "f32" and src.declared in elements.INTEGRAL:
        return (
            elements.reorder_to_integer(src.array, src.declared),
            elements.held_type(src.declared),
        )
    return src.array, src.held


def half_held(v: Value) -> bool:
    """An f16 tensor made inside the net, or a bf16 one on an AVX2 CPU
    (elements.bf16_held_in_f32), which the plugin holds in float32: layers compute on it so."""
    return v.held == "f32" and v.declared in ("f16", "bf16")


def elementwise_layer(layer: Layer, execute: Any, ins: list[Value]) -> list[Value]:
    """An elementwise glue layer, computed in the type its inputs are held in: an f16 tensor
    held in float32 stays so (openvino runs an f16 net in float32 at f32 inference precision),
    every other tensor is read in its declared type."""
    held = next((v.declared for v in ins if half_held(v)), None)
    arrays = [v.array if half_held(v) else v.output() for v in ins]
    outs = glue(execute, layer, list(arrays))
    if held is not None:
        return [Value(a, "f32", held) if a.dtype == np.float32 else declared_value(a) for a in outs]
    return [declared_value(a) for a in outs]


def reshape_layer(
    layer: Layer, execute: Any, ins: list[Value], plugin: bool, notes: list[str] | None = None
) -> list[Value]:
    """Squeeze, Unsqueeze, Reshape, Split, Concat: the shape changes, the values stay as held
    (an integer tensor held in float32 is reordered first; ONNX rounds an f16 tensor held in
    float32 back to f16).  Inputs of the first one's types travel as it does (Concat); the
    others (shapes, axes) are read in their declared types."""
    src = ins[0]
    unmeasured = src.held not in (src.declared, elements.held_type(src.declared))
    if plugin and notes is not None and (unmeasured or src.jit_read is not None):
        notes.append(
            f'layer "{layer.label}" ({layer.type}): a {src.declared} tensor the CPU plugin holds '
            f"as {src.held} was not measured through a {layer.type}; irpool assumes the plugin "
            "keeps holding it so"
        )
    if not plugin:
        return [declared_value(a) for a in glue(execute, layer, [v.output() for v in ins])]
    x, held = read_integers(src)

    def like(v: Value, stored: bool) -> Array:
        if v.declared != src.declared or v.held != src.held:
            return v.output()
        if not stored and v.constant is not None:
            return v.constant
        return read_integers(v)[0]

    shaped = glue(execute, layer, [x, *(like(v, True) for v in ins[1:])])
    if src.constant is not None:
        constants = glue(execute, layer, [src.constant, *(like(v, False) for v in ins[1:])])
        return [
            Value(np.asarray(a), held, src.declared, np.asarray(c))
            for a, c in zip(shaped, constants, strict=True)
        ]
    return [Value(np.asarray(a), held, src.declared) for a in shaped]


def glue(execute: Any, layer: Layer, ins: list[Array | None]) -> list[Array]:
    """A glue layer's outputs; its errors name the layer."""
    try:
        outs: list[Array] = execute(layer, [a for a in ins if a is not None])
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return outs
