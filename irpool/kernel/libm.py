"""The C library's pow and powf, element by element.

openvino's CPU plugin (Power with an exponent other than 1, 2, 3, 4 and 0.5) and onnxruntime's
LpPool call the C library's powf/pow; numpy's own float32 power is a different implementation
that differs from glibc's powf in about one result of eight at the last bit (measured).  The C
functions are called through ctypes; where no C library can be loaded, numpy's power stands in
(results may then differ by an ulp, and `EXACT` says so).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

_LIB: Any = None
_LOADED = False


def _lib() -> Any:
    global _LIB, _LOADED
    if not _LOADED:
        _LOADED = True
        name = ctypes.util.find_library("m")
        try:
            lib = ctypes.CDLL(name) if name else None
        except OSError:
            lib = None
        if lib is not None:
            lib.powf.restype = ctypes.c_float
            lib.powf.argtypes = [ctypes.c_float, ctypes.c_float]
            lib.pow.restype = ctypes.c_double
            lib.pow.argtypes = [ctypes.c_double, ctypes.c_double]
        _LIB = lib
    return _LIB


def exact() -> bool:
    """Whether the C library's functions are used (bit-exact with the runtimes on glibc)."""
    return _lib() is not None


def powf(base: Array, exponent: Array | float) -> Array:
    """C powf(base, exponent) in float32, elementwise with numpy broadcasting."""
    a = np.asarray(base, dtype=np.float32)
    b = np.asarray(exponent, dtype=np.float32)
    lib = _lib()
    if lib is None:
        with np.errstate(all="ignore"):
            return np.asarray(np.power(a, b), dtype=np.float32)
    a, b = np.broadcast_arrays(a, b)
    if a.size == 0:
        return np.zeros(a.shape, np.float32)
    if b.ndim == 0 or bool(np.all(b == b.flat[0])):
        return _unique_pow(a, float(b.flat[0]), lib.powf, np.float32)
    fn = np.frompyfunc(lib.powf, 2, 1)
    return np.asarray(fn(a, b), dtype=np.float32)


def pow_to_float(base: Array, exponent: float) -> Array:
    """float(pow(double(base), double(exponent))): C pow in double, one rounding to float32
    (onnxruntime's LpPool terms)."""
    a = np.asarray(base, dtype=np.float64)
    if exponent == 1:
        return np.asarray(a.astype(np.float32))
    if exponent == 2:
        return np.asarray((a * a).astype(np.float32))  # exact in double
    lib = _lib()
    if lib is None:
        with np.errstate(all="ignore"):
            return np.asarray(np.power(a, exponent).astype(np.float32))
    if a.size == 0:
        return np.zeros(a.shape, np.float32)
    return _unique_pow(a, float(exponent), lib.pow, np.float64).astype(np.float32)


def _unique_pow(a: Array, exponent: float, fn: Any, dtype: Any) -> Array:
    """fn(v, exponent) for each distinct value of a (inputs repeat a lot: quantised data,
    window sums of small integers), mapped back."""
    flat = np.ascontiguousarray(np.asarray(a, dtype=dtype).reshape(-1))
    bits = flat.view(np.uint32 if flat.dtype.itemsize == 4 else np.uint64)
    _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
    call = np.frompyfunc(lambda v: fn(v, exponent), 1, 1)
    results = np.asarray(call(flat[first]), dtype=dtype)
    return np.asarray(results[inverse].reshape(a.shape))


def power_rules(x: Array, exponent: float) -> Array:
    """openvino's CPU Power of float32 data by a scalar float32 exponent (measured): 1 copies,
    2 is x*x, 3 is x*x*x, 4 is (x*x)*(x*x), 0.5 the square root, anything else powf."""
    xf = np.asarray(x, dtype=np.float32)
    k = np.float32(exponent)
    with np.errstate(all="ignore"):
        if k == 1:
            return xf.copy()
        if k == 2:
            return np.asarray(xf * xf)
        if k == 3:
            return np.asarray(xf * xf * xf)
        if k == 4:
            return np.asarray((xf * xf) * (xf * xf))
        if k == np.float32(0.5):
            return np.asarray(np.sqrt(xf))
    return powf(xf, float(k))
