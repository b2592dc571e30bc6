"""The per-element glue of a compiled model (irpool.compile_model) on numba kernels: Convert to
float32 (from u8, i8, i32 and f16), Multiply, Add and Subtract of float32 tensors by a constant,
ReLU, Abs and Sqrt of float32, Power of float32 by a scalar 0.5, 1, 2, 3 or 4,
where every tensor the layer reads per call is held in its declared type.

A glue layer is prepared for the dtypes and shapes of one program (compile_model builds one per
input signature): `prepare_*` returns a function of the layer's input arrays, the numba kernel
where one serves the layer, else the numpy core's own function (ops/glue.py,
ops/elements.py), which stays the reference: the kernels compute the same IEEE operation per
element (numba_glue.py; tests/test_glue_compiled.py checks them bit for bit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled import NumbaModule, installed

Array = npt.NDArray[Any]
Direct = Callable[[list[Any]], list[Any]]

kernels = NumbaModule("numba_glue")
"""numba_glue, imported on first use."""

_F32 = np.dtype(np.float32)
_TO_F32 = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int32))
_UNARY = {"relu": 0, "abs": 1, "sqrt": 2}
_POWERS = {0.5: 2, 2.0: 3, 3.0: 4, 4.0: 5, 1.0: 6}
"""Power's scalar exponents computed without powf, and the kernel's op for each."""


def _serve(path: str) -> bool:
    return path != "numpy" and installed()


def _flat(x: Array) -> Array:
    return x.reshape(-1)  # a copy only where x is not contiguous


def prepare_convert(
    src: np.dtype[Any], target: np.dtype[Any], shape_size: int, path: str
) -> Direct | None:
    """A Convert of a tensor held as `src` whose value (held in float32) is `src` widened:
    the kernel for u8, i8, i32 and f16 sources, None where none serves."""
    if not _serve(path) or target != _F32 or shape_size == 0:
        return None
    if src in _TO_F32:
        kernel = kernels().to_f32
        view = None
    elif src == np.dtype(np.float16):
        kernel = kernels().half_to_f32
        view = np.dtype(np.uint16)
    else:
        return None

    def run(v: list[Any]) -> list[Any]:
        x = v[0]
        out = np.empty(x.shape, _F32)
        flat = _flat(x)
        kernel(flat.view(view) if view is not None else flat, out.reshape(-1))
        return [out]

    kernel(np.zeros(1, view or src), np.empty(1, _F32))  # loaded now, not on the first call
    return run


def _pattern(shape: tuple[int, ...], other: tuple[int, ...]) -> tuple[int, int] | None:
    """(mid, inner) when `other` broadcast to `shape` varies along one run of axes only
    (a scalar, a per-channel vector, a tensor of the same shape), else None."""
    if len(other) > len(shape):
        return None
    padded = (1,) * (len(shape) - len(other)) + other
    varying = [k for k, (s, o) in enumerate(zip(shape, padded, strict=True)) if o != 1]
    if any(padded[k] != shape[k] for k in varying):
        return None
    if not varying:
        return 1, math.prod(shape)
    lo, hi = varying[0], varying[-1] + 1
    if any(padded[k] != shape[k] for k in range(lo, hi)):
        return None
    return math.prod(shape[lo:hi]), math.prod(shape[hi:])


def prepare_elementwise(
    layer_type: str, arrays: Sequence[Array], moving: Sequence[bool], path: str
) -> tuple[Direct, str] | None:
    """A kernel for an elementwise layer whose inputs (in order, None dropped) are `arrays`
    (their traced values: the dtypes and shapes of every call), None where none serves.
    `moving[k]`: input k is computed per call (else it is a constant, passed on every call as
    the same array)."""
    if not _serve(path) or not arrays or not moving[0]:
        return None
    if any(a.dtype != _F32 for a in arrays) or arrays[0].size == 0:
        return None
    x = arrays[0]
    shape = tuple(x.shape)
    op = _UNARY.get(layer_type.lower(), -1) if len(arrays) == 1 else -1
    if layer_type == "Power" and len(arrays) == 2 and not moving[1] and arrays[1].size == 1:
        # a scalar exponent openvino computes by multiplication or the square root
        # (kernel/libm.py power_rules), the result of the input's shape
        try:
            fits = np.broadcast_shapes(shape, arrays[1].shape) == shape
        except ValueError:  # numpy's function raises the layer's error
            fits = False
        if fits:
            op = _POWERS.get(float(np.float32(arrays[1].reshape(-1)[0])), -1)
    if op >= 0:
        unary = kernels().unary

        def run_unary(v: list[Any]) -> list[Any]:
            out = np.empty(shape, _F32)
            unary(_flat(v[0]), op, out.reshape(-1))
            return [out]

        unary(np.zeros(1, _F32), op, np.empty(1, _F32))
        return run_unary, f"compiled (numba): {layer_type} of float32"
    if layer_type not in ("Multiply", "Add", "Subtract") or len(arrays) != 2:
        return None
    b = arrays[1]
    fit = _pattern(shape, tuple(b.shape))
    if fit is None:
        return None
    if moving[1] or bool(np.isnan(b).any()):
        # a constant without NaN only: of two NaNs, which payload survives a product is the
        # compiler's choice of operand order
        return None
    mid, inner = fit
    kernel = kernels().by_constant
    shift = layer_type != "Multiply"
    negate = layer_type == "Subtract"

    def run_binary(v: list[Any]) -> list[Any]:
        a, s = v[0], v[1]
        out = np.empty(shape, _F32)
        flat = _flat(s)
        kernel(_flat(a), -flat if negate else flat, mid, inner, shift, out.reshape(-1))
        return [out]

    kernel(np.zeros(1, _F32), np.ones(1, _F32), 1, 1, shift, np.empty(1, _F32))
    return run_binary, f"compiled (numba): {layer_type} of float32"


def fake_quantize(x: Array, p: Any, fused: bool = False, fma_out: bool | None = None) -> Array:
    """lpt.cpu_fake_quantize (same arguments, the same bits) on numba_glue's kernel where it
    serves: float32 data, constants that vary along one run of axes, no NaN among the
    constants and no zero among the clamp bounds (numpy's maximum and minimum pick a zero's
    sign by their loop); else lpt.cpu_fake_quantize itself."""
    from .. import lpt

    if not installed() or x.dtype != _F32 or x.size == 0:
        return lpt.cpu_fake_quantize(x, p, fused, fma_out)
    key = (
        tuple(x.shape),
        p.levels,
        *((np.shape(c), np.asarray(c).tobytes()) for c in (p.il, p.ih, p.ol, p.oh)),
    )
    consts = _FQ_CONSTANTS.get(key)
    if consts is None:
        consts = _fq_constants(tuple(x.shape), p)
        if len(_FQ_CONSTANTS) >= 64:
            _FQ_CONSTANTS.clear()
        _FQ_CONSTANTS[key] = consts
    if not consts:
        return lpt.cpu_fake_quantize(x, p, fused, fma_out)
    out = np.empty(x.shape, _F32)
    kernels().fake_quantize(
        _flat(x), *consts, fused, fused if fma_out is None else fma_out, out.reshape(-1)
    )
    return out


_FQ_CONSTANTS: dict[Any, tuple[Any, ...]] = {}
"""The kernel's constants per data shape and FakeQuantize constants (a model's FQs call with
the same ones every time); () where the kernel does not serve them."""


def fq_layout(shape: tuple[int, ...], p: Any) -> tuple[list[Array], tuple[int, int]] | None:
    """A FakeQuantize's constants (il, ih, isc, ish, osc, ol) as float32, flat along the one
    run of axes of `shape` they vary on, and that run's (mid, inner); None where they vary on
    more than one run or hold a NaN."""
    from .. import lpt

    isc, ish, osc = lpt._scales(p)
    consts = [p.il, p.ih, isc, ish, osc, p.ol]
    try:
        common = np.broadcast_shapes(*(np.shape(c) for c in consts))
    except ValueError:
        return None
    fit = _pattern(shape, tuple(common))
    flat = [np.broadcast_to(np.asarray(c, _F32), common).reshape(-1) for c in consts]
    if fit is None or any(bool(np.isnan(c).any()) for c in flat):
        return None
    return flat, fit


def _fq_constants(shape: tuple[int, ...], p: Any) -> tuple[Any, ...]:
    """(il, ih, isc, ish, osc, ol flat along their run of axes, mid, inner), or ()."""
    layout = fq_layout(shape, p)
    if layout is None or not (layout[0][0].all() and layout[0][1].all()):
        return ()
    kernels()  # numba imported here, not on a timed call
    return (*layout[0], *layout[1])
