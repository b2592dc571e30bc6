"""The glue `run` executes between pooling layers: Parameter, Const, Convert, Result, the
shape-only ops (Squeeze, Unsqueeze, Reshape, Split, Concat), pass-throughs (Identity, Dropout)
the elementwise ops openvino's converters decompose Lp pooling into (Abs, Sign, ReLU, Sqrt,
Multiply, Power, ConvertLike), and the arithmetic NNCF and the converters write around pools
(Subtract and Multiply dequantizing, Add for biases, Clamp, Minimum and Maximum for ReLU6,
Divide, Negative).

Each is one registry entry with a role (how the graph walk treats it) and, where it computes
something from its inputs, the function that does.  What Convert computes was measured with
openvino 2026.4.1 (docs/semantics.md); so was every elementwise op's handling of NaN, signed
zeros and infinities on float32 (docs/semantics.md, "Glue"):

* Abs clears the sign bit; Sign gives NaN for NaN, +0 for +-0 and +-1 for +-inf; ReLU gives 0
  for NaN and +0 for -0; Sqrt keeps -0 and gives NaN below 0; Multiply, Add, Subtract and
  Negative are IEEE; Divide multiplies by the float32 reciprocal; Maximum is `a > b ? a : b`
  and Minimum `a < b ? a : b` (so NaN only wins in the second place); Clamp is Maximum then
  Minimum (NaN gives the lower bound).
* Integers: u8 and i8 saturate, i32 wraps, i64 is computed on its low 32 bits (the plugin
  holds it as i32); see each function.
* Power with a scalar exponent: 1 copies, 2 is x*x, 3 is x*x*x, 4 is (x*x)*(x*x), 0.5 is the
  square root, any other the C library's powf (bit for bit); a tensor exponent: powf per
  element.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, SpecError
from ..model import Layer, element_type_of_numpy, numpy_dtype
from .registry import REGISTRY, Domain, OpSpec, Role

Array = npt.NDArray[Any]


def convert(array: Array, element_type: str) -> Array:
    """openvino's Convert: floats to integers truncate toward zero and wrap (measured)."""
    dtype = numpy_dtype(element_type)
    if dtype.kind in "iu" and array.dtype.kind not in "iu":
        with np.errstate(invalid="ignore"):
            wide = np.nan_to_num(np.trunc(array.astype(np.float64)), nan=0.0)
            return np.asarray(wide.astype(np.int64).astype(dtype))
    return np.asarray(array.astype(dtype))


def squeeze(layer: Layer, ins: list[Array]) -> list[Array]:
    """Squeeze: axes from the attribute (ONNX opset < 13) or the second input; none: every
    axis of size 1."""
    raw = _axes(layer, ins)
    x = ins[0]
    if raw is None:
        return [np.asarray(np.squeeze(x))]
    return [np.asarray(np.squeeze(x, axis=tuple(int(a) % x.ndim for a in raw)))]


def unsqueeze(layer: Layer, ins: list[Array]) -> list[Array]:
    """Unsqueeze: a dim of size 1 inserted at each axis (of the result's rank)."""
    raw = _axes(layer, ins) or []
    x = ins[0]
    rank = x.ndim + len(raw)
    for a in sorted(int(a) % rank for a in raw):
        x = np.expand_dims(x, a)
    return [np.asarray(x)]


def _axes(layer: Layer, ins: list[Array]) -> list[int] | None:
    given = layer.attrs.get("axes")
    if isinstance(given, (list, tuple)):
        return [int(v) for v in given]
    if len(ins) > 1:
        return [int(v) for v in np.asarray(ins[1]).ravel()]
    return None


def _float32(x: Array) -> bool:
    return x.dtype.kind == "f" or x.dtype.name == "bfloat16"


def abs_(layer: Layer, ins: list[Array]) -> list[Array]:
    return [np.asarray(np.abs(ins[0]))]


def sign(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's Sign: NaN stays NaN, +-0 gives +0 (measured)."""
    x = ins[0]
    out = np.sign(x)
    if out.dtype.kind == "f":
        out = np.where(out == 0, out.dtype.type(0), out)
    return [np.asarray(out.astype(x.dtype))]


def relu(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's ReLU: NaN gives 0, -0 gives +0 (measured)."""
    x = ins[0]
    return [np.asarray(np.where(x > 0, x, x.dtype.type(0)).astype(x.dtype))]


def sqrt(layer: Layer, ins: list[Array]) -> list[Array]:
    with np.errstate(invalid="ignore"):
        return [np.asarray(np.sqrt(ins[0]).astype(ins[0].dtype))]


def _broadcast(layer: Layer, a: Array, b: Array) -> None:
    mode = layer.data.get("auto_broadcast", "numpy").strip().lower()
    if mode == "none" and a.shape != b.shape:
        raise InputError(
            f"{layer.type} with auto_broadcast=none takes inputs of one shape; got "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise InputError(
            f"{layer.type}: shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
        ) from None


def _wide(a: Array) -> Array:
    return a.astype(np.int64)


def _integer_rule(a: Array, b: Array, wide: Any) -> Array:
    """An integer arithmetic op as the CPU plugin computes it (measured): u8 and i8 saturate;
    i32 wraps; i64 (held as i32) keeps the low 32 bits of each input, wraps in i32 and
    widens back.  Other integer types are computed in their declared type, wrapping
    (unmeasured)."""
    dtype = a.dtype
    if dtype in (np.uint8, np.int8):
        info = np.iinfo(dtype)
        return np.asarray(np.clip(wide(_wide(a), _wide(b)), info.min, info.max).astype(dtype))
    if dtype == np.int64:
        low = wide(_wide(a.astype(np.int32)), _wide(b.astype(np.int32)))
        return np.asarray(low.astype(np.int32).astype(np.int64))
    return np.asarray(wide(_wide(a), _wide(b)).astype(dtype))


def _binary(layer: Layer, ins: list[Array], floats: Any, integers: Any) -> list[Array]:
    """A binary elementwise op with numpy/none broadcasting; the result has the first
    input's type (openvino's validation makes both inputs one type)."""
    a, b = ins[0], ins[1]
    _broadcast(layer, a, b)
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iu":
            return [_integer_rule(a, b, integers)]
        return [np.asarray(np.asarray(floats(a, b)).astype(a.dtype))]


def multiply(layer: Layer, ins: list[Array]) -> list[Array]:
    """Multiply: IEEE on floats; u8/i8 saturate, i32 wraps (measured)."""
    return _binary(layer, ins, np.multiply, np.multiply)


def add(layer: Layer, ins: list[Array]) -> list[Array]:
    """Add: IEEE on floats; u8/i8 saturate, i32 wraps (measured)."""
    return _binary(layer, ins, np.add, np.add)


def _subtract_wide(a: Array, b: Array) -> Array:
    return a - b


def subtract(layer: Layer, ins: list[Array]) -> list[Array]:
    """Subtract: IEEE on floats; u8 saturates, i32 wraps; i8 adds the saturated negation of
    the second input, saturating (so x - (-128) is x + 127; measured)."""
    if ins[0].dtype == np.int8:
        return _binary(layer, ins, np.subtract, lambda a, b: a + np.minimum(-b, 127))
    return _binary(layer, ins, np.subtract, _subtract_wide)


def divide(layer: Layer, ins: list[Array]) -> list[Array]:
    """Divide as the CPU plugin computes it (measured; m_pythondiv makes no difference there):
    float32 multiplies by the float32 reciprocal of the divisor; i32 (and i64 held as i32)
    divides in float32 and truncates, a quotient outside i32 (or NaN) giving INT32_MIN; u8 and
    i8 truncate toward zero, saturating (-128 / -1 is 127)."""
    a, b = ins[0], ins[1]
    _broadcast(layer, a, b)
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    with np.errstate(all="ignore"):
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            af, bf = a.astype(np.float32), b.astype(np.float32)
            return [np.asarray((af * (np.float32(1) / bf)).astype(a.dtype))]
        if a.dtype in (np.int32, np.int64):
            q = np.trunc(
                a.astype(np.int32).astype(np.float32).astype(np.float64)
                / b.astype(np.int32).astype(np.float32).astype(np.float64)
            ).astype(np.float32).astype(np.float64)
            bad = np.isnan(q) | (q >= 2.0**31) | (q < -(2.0**31))
            out = np.where(bad, -(2**31), np.nan_to_num(q)).astype(np.int64).astype(np.int32)
            return [np.asarray(out.astype(a.dtype))]
        wa, wb = _wide(a), _wide(b)
        safe = np.where(wb == 0, 1, wb)
        q = np.abs(wa) // np.abs(safe) * np.where((wa < 0) != (safe < 0), -1, 1)
        q = np.where(wb == 0, 0, q)
        if a.dtype in (np.uint8, np.int8):
            info = np.iinfo(a.dtype)
            q = np.clip(q, info.min, info.max)
        return [np.asarray(q.astype(a.dtype))]


def _select_max(a: Array, b: Array) -> Array:
    return np.where(a > b, a, b)


def _select_min(a: Array, b: Array) -> Array:
    return np.where(a < b, a, b)


def maximum(layer: Layer, ins: list[Array]) -> list[Array]:
    """Maximum: `a > b ? a : b` (measured: a NaN first input gives the second, a NaN second
    input gives NaN); integers compare exactly (i64 on its low 32 bits)."""
    return _binary(layer, ins, _select_max, np.maximum)


def minimum(layer: Layer, ins: list[Array]) -> list[Array]:
    """Minimum: `a < b ? a : b` (measured, as Maximum)."""
    return _binary(layer, ins, _select_min, np.minimum)


def negative(layer: Layer, ins: list[Array]) -> list[Array]:
    """Negative: flips a float's sign bit (NaN stays NaN, 0 gives -0); i8 saturates (-128
    gives 127), i32 wraps, i64 is negated on its low 32 bits (measured).  The plugin refuses
    unsigned inputs."""
    x = ins[0]
    if x.dtype.kind == "u":
        raise InputError(f"Negative of an unsigned ({x.dtype.name}) tensor: openvino refuses it")
    zero = np.zeros((), x.dtype)
    if x.dtype.kind in "iu":
        return [_integer_rule(np.broadcast_to(zero, x.shape), x, np.subtract)]
    return [np.asarray(np.negative(x))]


def clamp(layer: Layer, ins: list[Array]) -> list[Array]:
    """Clamp-1: min(max(x, lo), hi) by the Maximum and Minimum rules, so NaN gives lo and -0
    against a +0 bound gives +0 (measured).  The bounds are float attributes: float32 inputs
    take them rounded to float32; i32 (and i64) take ceil(min) and floor(max); u8 and i8
    truncate both (measured: u8 Clamp 2.5..100.7 has the bounds 2 and 100).  Bounds outside
    the type's range are clipped into it."""
    x = ins[0]
    try:
        lo = float(layer.data["min"])
        hi = float(layer.data["max"])
    except (KeyError, ValueError):
        raise InputError("Clamp needs numeric min and max attributes") from None
    if lo > hi:
        raise InputError(f"Clamp: min {lo} is above max {hi}")
    if x.dtype.kind in "iu":
        if x.dtype in (np.uint8, np.int8):
            lo_i, hi_i = math.trunc(lo), math.trunc(hi)
        else:
            lo_i, hi_i = math.ceil(lo), math.floor(hi)
        info = np.iinfo(np.int32 if x.dtype == np.int64 else x.dtype)
        lo_i = min(max(lo_i, info.min), info.max)
        hi_i = min(max(hi_i, info.min), info.max)
        v = x.astype(np.int32) if x.dtype == np.int64 else x
        out = np.minimum(np.maximum(v.astype(np.int64), lo_i), hi_i)
        return [np.asarray(out.astype(x.dtype))]
    lo_f, hi_f = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
    xf = x.astype(np.float32)
    out = _select_min(_select_max(xf, lo_f), hi_f)
    return [np.asarray(out.astype(x.dtype))]


def power(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's Power on float32 (measured): small integer exponents and 0.5 by
    multiplication and the square root, anything else by the C library's powf."""
    from ..kernel.libm import power_rules, powf

    x, e = ins[0], ins[1]
    _broadcast(layer, x, e)
    if not _float32(x) or x.dtype.itemsize > 4:
        with np.errstate(all="ignore"):
            return [np.asarray(np.power(x, e.astype(x.dtype)).astype(x.dtype))]
    xf = x.astype(np.float32)
    if e.size == 1:
        shape = np.broadcast_shapes(x.shape, e.shape)
        out = np.broadcast_to(power_rules(xf, float(e.reshape(-1)[0])), shape)
    else:
        out = powf(xf, e.astype(np.float32))
    return [np.asarray(np.asarray(out).astype(x.dtype))]


def convert_like(layer: Layer, ins: list[Array]) -> list[Array]:
    """ConvertLike: the first input converted as Convert would to the second's type."""
    target = element_type_of_numpy(ins[1].dtype.name)
    if target is None:
        raise SpecError(f"ConvertLike to {ins[1].dtype.name} is not supported")
    return [convert(ins[0], target)]


def reshape(layer: Layer, ins: list[Array]) -> list[Array]:
    """Reshape-1: the target shape is the second input; with special_zero, a 0 copies the
    input's dim at that position; one -1 takes what is left."""
    x = ins[0]
    target = [int(v) for v in np.asarray(ins[1]).reshape(-1)]
    special = layer.data.get("special_zero", "false").strip().lower() == "true"
    if special:
        target = [x.shape[i] if v == 0 and i < x.ndim else v for i, v in enumerate(target)]
    if target.count(-1) > 1:
        raise SpecError(f"Reshape target {target} has more than one -1")
    try:
        return [np.asarray(x.reshape(target))]
    except ValueError:
        raise InputError(
            f"Reshape of {list(x.shape)} to {target}: the element counts differ"
        ) from None


def split(layer: Layer, ins: list[Array]) -> list[Array]:
    """Split-1: `num_splits` equal parts along the axis the second input names."""
    x = ins[0]
    axis = int(np.asarray(ins[1]).reshape(-1)[0])
    parts = int(layer.data.get("num_splits", "1"))
    if not -x.ndim <= axis < x.ndim:
        raise SpecError(f"Split axis {axis} is outside the rank-{x.ndim} input")
    if parts < 1 or x.shape[axis] % parts:
        raise SpecError(
            f"Split: dim {x.shape[axis]} of axis {axis} does not divide into {parts} parts"
        )
    return [np.asarray(p) for p in np.split(x, parts, axis=axis)]


def concat(layer: Layer, ins: list[Array]) -> list[Array]:
    axis = int(layer.data.get("axis", "0"))
    try:
        return [np.asarray(np.concatenate(ins, axis=axis))]
    except (ValueError, np.exceptions.AxisError) as e:
        raise InputError(f"Concat on axis {axis}: {e}") from None


def _f32_const(fed: tuple[Layer, int] | None, tensors: Any) -> Array | None:
    if fed is None:
        return None
    value = tensors.get(f"{fed[0].label}:{fed[1]}")
    if value is None or np.asarray(value).dtype != np.float32:
        return None
    return np.asarray(value)


def _split(graph: Any, layer: Layer) -> tuple[tuple[Layer, int], tuple[Layer, int]] | None:
    """(what feeds the data input, the Const input) of a two-input layer with one Const input
    (a Subtract's Const second only); None otherwise."""
    if len(layer.inputs) != 2:
        return None
    first, second = graph.feeder(layer, 0), graph.feeder(layer, 1)
    if first is None or second is None:
        return None
    if second[0].type == "Const" and first[0].type != "Const":
        return first, second
    if layer.type != "Subtract" and first[0].type == "Const" and second[0].type != "Const":
        return second, first
    return None


def _only_reader(graph: Any, layer: Layer) -> bool:
    return sum(1 for e in graph.edges if e.from_layer == layer.id) == 1


def _shift_then_scale(graph: Any, layer: Layer) -> tuple[Any, ...] | None:
    """A Multiply by a Const whose data is an Add or Subtract of a Const read by nothing else:
    (the Add/Subtract's data, its Const, its type, the Multiply's Const)."""
    if layer.type != "Multiply":
        return None
    split = _split(graph, layer)
    if split is None or split[0][0].type not in ("Add", "Subtract"):
        return None
    inner_layer = split[0][0]
    inner = _split(graph, inner_layer)
    if inner is None or not _only_reader(graph, inner_layer):
        return None
    return inner[0], inner[1], inner_layer.type, split[1]


def folded_pair(graph: Any, layer: Layer) -> tuple[Any, ...] | None:
    """The pairs the CPU plugin folds into x*s + b: a Multiply by a Const after an Add or
    Subtract of one, an Add of a Const after a Multiply by one, and an Add of a Const after
    such a Multiply (each inner layer read by nothing else; the Const on either input, a
    Subtract's second).  (the data x as fed, the scale's Const, the parts of b in order:
    ("Add" or "Subtract" before the scale, or "bias" after it, the Const)); None otherwise."""
    found: tuple[Any, ...] | None = None
    pair = _shift_then_scale(graph, layer)
    if pair is not None:
        src, c, kind, scale = pair
        found = (src, scale, ((kind, c),))  # a shift before the scale
    elif layer.type == "Add":
        split = _split(graph, layer)
        if split is None or split[0][0].type != "Multiply" or not _only_reader(graph, split[0][0]):
            return None
        mul = split[0][0]
        inner = _shift_then_scale(graph, mul)
        if inner is not None:
            src, c, kind, scale = inner
            found = (src, scale, ((kind, c), ("bias", split[1])))
        else:
            scaled = _split(graph, mul)
            if scaled is None:
                return None
            found = (scaled[0], scaled[1], (("bias", split[1]),))
    if found is None:
        return None
    src = found[0]
    # longer chains fold further (not measured), except through a shift read elsewhere too,
    # which stays a layer of its own (measured)
    alone = found[2][0][0] == "bias" and not _only_reader(graph, src[0])
    if src[0].type in ("Add", "Subtract", "Multiply") and not alone:
        return None
    if _constant(graph, src[0]):
        return None  # the plugin folds a constant chain when it compiles: not measured
    return found


def fused_affine(graph: Any, layer: Layer, tensors: Any) -> Array | None:
    """What the CPU plugin computes for a `folded_pair`: its transformations fold the chain
    into x*s + b, which one fused node computes with one rounding (fma); b is folded in
    float32 first: (+-c)*s for a shift before the scale, plus a bias added after it
    (measured: 0 mismatching cells, the Const on either input; op by op mismatches 27-46%).
    None: no such chain of float32 tensors.  `tensors` maps "label:port" to the arrays
    computed so far."""
    found = folded_pair(graph, layer)
    if found is None:
        return None
    src, scale_fed, parts = found
    x, scale = _f32_const(src, tensors), _f32_const(scale_fed, tensors)
    if x is None or scale is None:
        return None
    consts = [_f32_const(fed, tensors) for _, fed in parts]
    from ..lpt import fma

    bias: Array | None = None
    with np.errstate(all="ignore"):
        for (kind, _), c in zip(parts, consts, strict=True):
            if c is None:
                return None
            if kind == "bias":
                bias = c if bias is None else (bias + c).astype(np.float32)
            else:
                shifted = (c * scale).astype(np.float32)
                bias = -shifted if kind == "Subtract" else shifted
        assert bias is not None
        return fma(x, scale, bias)


def _constant(graph: Any, layer: Layer, depth: int = 0) -> bool:
    """Whether a layer's output depends on Consts only (as far as 16 layers up)."""
    if layer.type == "Const":
        return True
    if layer.type == "Parameter" or not layer.inputs or depth > 16:
        return False
    fed = [graph.feeder(layer, k) for k in range(len(layer.inputs))]
    return all(f is not None and _constant(graph, f[0], depth + 1) for f in fed)


def _numpy_binary(layer: Layer, ins: list[Array], how: Any) -> list[Array]:
    """An ONNX binary op as onnxruntime's CPU kernels compute it (measured with onnxruntime on
    NaN, +-0, +-inf and integer edges): numpy's own arithmetic, IEEE on floats (Max and Min
    propagate NaN), integers wrapping."""
    if len(ins) != 2:
        raise InputError(f"{layer.type} of {len(ins)} inputs: irpool runs two")
    if "broadcast" in layer.attrs or "axis" in layer.attrs:
        raise InputError(
            f"{layer.type} with the broadcast/axis attributes of opset < 7: irpool runs "
            "numpy-style broadcasting only (opset 7 and later)"
        )
    a, b = ins[0], ins[1]
    _broadcast(layer, a, b)
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    with np.errstate(all="ignore"):
        return [np.asarray(np.asarray(how(a, b)).astype(a.dtype))]


def onnx_div(layer: Layer, ins: list[Array]) -> list[Array]:
    """ONNX Div: IEEE on floats; integers truncate toward zero, wrapping (i32 INT_MIN / -1 is
    INT_MIN, as C++ computes it in onnxruntime).  An integer division by zero is refused
    (onnxruntime's process dies of it)."""

    def div(a: Array, b: Array) -> Array:
        if a.dtype.kind not in "iu":
            return np.divide(a, b)
        if bool((b == 0).any()):
            raise InputError("Div: an integer division by zero (onnxruntime crashes on it)")
        wa, wb = a.astype(np.int64), b.astype(np.int64)
        with np.errstate(over="ignore"):
            q = np.abs(wa) // np.abs(wb) * np.where((wa < 0) != (wb < 0), -1, 1)
        return q.astype(a.dtype)

    return _numpy_binary(layer, ins, div)


def onnx_clip(layer: Layer, ins: list[Array]) -> list[Array]:
    """ONNX Clip as onnxruntime computes it (measured): x < lo ? lo : x, then > hi ? hi : x,
    so NaN passes and -0 against a +0 bound stays -0.  The bounds are inputs 1 and 2 (opset
    11 and later) or the min/max attributes (opset 6); an absent one is the type's lowest or
    largest finite value, so inf is clipped to FLT_MAX (measured)."""
    x = ins[0]
    lo: Array | None
    hi: Array | None
    if len(ins) == 3:
        lo, hi = ins[1], ins[2]
    elif len(ins) == 2 and len(layer.inputs) == 2:
        lo, hi = ins[1], None
    elif len(ins) == 1:
        raw_lo, raw_hi = layer.attrs.get("min"), layer.attrs.get("max")
        lo = None if raw_lo is None else np.asarray(raw_lo, x.dtype)
        hi = None if raw_hi is None else np.asarray(raw_hi, x.dtype)
    else:
        raise InputError("Clip with only its max input: irpool does not run it")
    info: Any = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    lo = np.asarray(info.min if lo is None else lo).astype(x.dtype).reshape(())
    hi = np.asarray(info.max if hi is None else hi).astype(x.dtype).reshape(())
    out = np.where(x < lo, lo, x)
    out = np.where(out > hi, hi, out)
    return [np.asarray(out.astype(x.dtype))]


_ONNX_FLOATS = {1: np.float32, 10: np.float16, 11: np.float64}


def onnx_cast(layer: Layer, ins: list[Array]) -> list[Array]:
    """ONNX Cast to a float type (exact from 8-bit integers and float16, nearest for wider
    integers, as onnxruntime does: measured for float32); other targets are not run."""
    to = layer.attrs.get("to")
    dtype = _ONNX_FLOATS.get(int(to)) if isinstance(to, (int, np.integer)) else None
    if dtype is None:
        raise InputError(f"Cast to ONNX type {to}: irpool runs casts to float types only")
    return [np.asarray(ins[0].astype(dtype))]


BINARY = ("Multiply", "Subtract", "Add", "Divide", "Maximum", "Minimum", "Power")
"""The elementwise glue of two inputs that broadcast (numpy or none)."""
UNARY = ("Abs", "Sign", "ReLU", "Sqrt", "Negative", "Clamp", "Convert")
"""The elementwise glue whose output has its input's shape."""


def elementwise_shape(layer: Layer, shapes: list[Any]) -> Any:
    """The output shape of an elementwise glue layer from its inputs' shapes (None: dynamic
    rank or not an elementwise op irpool infers), as a QuantizeShape (refusal: the inputs do
    not broadcast, so openvino refuses the layer)."""
    from ..model import format_shape
    from ..quantize_shapes import QuantizeShape, broadcast_merge

    if layer.type in UNARY and shapes:
        return QuantizeShape(shapes[0])
    if layer.type not in BINARY or len(shapes) != 2 or None in shapes:
        return None
    a, b = shapes
    mode = layer.data.get("auto_broadcast", "numpy").strip().lower()
    if mode == "none":
        same = len(a) == len(b) and all(
            not (x.is_static and y.is_static and x.lo != y.lo) for x, y in zip(a, b, strict=True)
        )
        merged = broadcast_merge(a, b) if same else None
    elif mode == "numpy":
        merged = broadcast_merge(a, b)
    else:
        return None  # pdpd: not modelled
    if merged is None:
        how = "have one shape" if mode == "none" else "broadcast (numpy rules)"
        return QuantizeShape(
            a,
            f"{layer.type} inputs {format_shape(a)} and {format_shape(b)} do not {how} "
            f"(auto_broadcast={mode}): openvino refuses the layer",
            b,
        )
    return QuantizeShape(merged)


def _entries(domain: Domain, role: Role, *names: str, **executed: Any) -> list[OpSpec]:
    """One entry per op of `domain` in `role`: `names` need no code of their own, `executed`
    maps an op to the function that computes it."""
    ops = {**dict.fromkeys(names), **executed}
    return [
        OpSpec(domain, name, 1, kind="glue", role=role, source="glue", execute=run)
        for name, run in ops.items()
    ]


GLUE_OPS = (
    *_entries("openvino", "parameter", "Parameter"),
    *_entries("openvino", "const", "Const"),
    *_entries("openvino", "convert", "Convert"),
    *_entries("openvino", "result", "Result"),
    *_entries(
        "openvino",
        "reshape",
        Squeeze=squeeze,
        Unsqueeze=unsqueeze,
        Reshape=reshape,
        Split=split,
        Concat=concat,
    ),
    *_entries(
        "openvino",
        "elementwise",
        Abs=abs_,
        Sign=sign,
        ReLU=relu,
        Sqrt=sqrt,
        Multiply=multiply,
        Subtract=subtract,
        Add=add,
        Divide=divide,
        Maximum=maximum,
        Minimum=minimum,
        Negative=negative,
        Clamp=clamp,
        Power=power,
        ConvertLike=convert_like,
    ),
    *_entries("openvino", "identity", "Identity"),
    *_entries("ai.onnx", "identity", "Identity", "Dropout"),
    *_entries("ai.onnx", "reshape", Squeeze=squeeze, Unsqueeze=unsqueeze),
    *_entries(
        "ai.onnx",
        "elementwise",
        Add=lambda layer, ins: _numpy_binary(layer, ins, np.add),
        Sub=lambda layer, ins: _numpy_binary(layer, ins, np.subtract),
        Mul=lambda layer, ins: _numpy_binary(layer, ins, np.multiply),
        Div=onnx_div,
        Max=lambda layer, ins: _numpy_binary(layer, ins, np.maximum),
        Min=lambda layer, ins: _numpy_binary(layer, ins, np.minimum),
        Clip=onnx_clip,
        Cast=onnx_cast,
    ),
)
REGISTRY.add(*GLUE_OPS)
