"""FakeQuantize-1 and what openvino's CPU plugin makes of it around pooling layers.

Three readings of a FakeQuantize (FQ) with input range [il, ih], output range [ol, oh] and
`levels`:

* the specification, as openvino's reference implementation computes it in float32
  (`reference_fake_quantize`): x <= min(il, ih) gives ol, x > max(il, ih) gives oh, else
  round_half_even((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol;
* the CPU plugin's FakeQuantize node (`cpu_fake_quantize`): the ranges turned into float32
  scales and shifts once (isc = (levels-1)/(ih-il), ish = -il*(levels-1)/(ih-il),
  osc = (oh-ol)/(levels-1), osh = ol), then per element clamp to [il, ih], x*isc + ish,
  round half to even, *osc + osh (measured bit for bit, openvino 2026.4.1);
* the low-precision transformations (LPT) the CPU plugin runs before anything executes: an FQ
  whose output feeds a pooling layer LPT knows is split into a quantize step (the same FQ with
  output range [lo, hi] of u8 or i8: integer codes) and a dequantization (codes - shift) *
  scale, which LPT moves after the pooling layer, so the layer pools the integer codes
  (`Decomposition`).  An FQ after such a layer is fused with it: its input range divided by the
  scale, plus the shift (`fused_ranges`), and runs as a post-op of the layer's node unless
  the layer's output has another reader (a Result): then it is a Subgraph of its own
  (products rounded).  Every other reader of an FQ whose codes LPT pools (a Result) reads the
  dequantization, not the FQ's value.  Measured arithmetic: an average of codes is
  f32(f32(sum) * f32(1/count)); the dequantization is f32(f32(codes - shift) * scale).

Which precision LPT picks (LayerTransformation::getPrecisionDetails and
NetworkHelper::decomposeFakeQuantize, openvino 2026.4.1): an output range that does not cross
zero is u8 (a zero point where ol is not 0), one that crosses zero is i8 (a zero point unless
ol/oh is -levels/(levels-2) within 0.2%); a zero point with a range that crosses zero falls
back to u8.  Codes run from 0 (u8) or -128 (i8; -127 with 255 levels) to levels-1 above that.
scale = (oh - ol) / (hi - lo), shift = (lo*oh - hi*ol) / (oh - ol), in float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError

Array = npt.NDArray[Any]
F32 = np.float32

LPT_LEVELS = (255, 256)
"""The levels this module models LPT's decomposition for (NNCF's 8-bit quantizers)."""


@dataclass(frozen=True)
class FakeQuantizeParams:
    """The constants of one FakeQuantize, float32, each broadcast to the data's rank."""

    levels: int
    il: Array
    ih: Array
    ol: Array
    oh: Array

    @property
    def per_channel(self) -> bool:
        return any(a.size > 1 for a in (self.il, self.ih, self.ol, self.oh))


def fq_params(levels: int, ranges: list[Array], rank: int) -> FakeQuantizeParams:
    """The FQ constants (input_low, input_high, output_low, output_high) for data of `rank`
    (numpy broadcasting, as auto_broadcast=numpy does)."""
    if levels < 2:
        raise InputError(f"FakeQuantize levels must be at least 2, not {levels}")
    shaped = []
    for a in ranges:
        arr = np.asarray(a, dtype=F32)
        if arr.ndim > rank:
            arr = arr.reshape(arr.shape[arr.ndim - rank :])
        shaped.append(arr.reshape((1,) * (rank - arr.ndim) + arr.shape))
    return FakeQuantizeParams(int(levels), *shaped)


def reference_fake_quantize(x: Array, p: FakeQuantizeParams) -> Array:
    """The specification's formula as openvino's reference implementation computes it."""
    xf = np.asarray(x, dtype=F32)
    lev = F32(p.levels - 1)
    with np.errstate(all="ignore"):
        inner = np.rint((xf - p.il) / (p.ih - p.il) * lev) / lev * (p.oh - p.ol) + p.ol
        low = xf <= np.minimum(p.il, p.ih)
        high = xf > np.maximum(p.il, p.ih)
        out = np.where(low, p.ol, np.where(high, p.oh, inner))
    return np.asarray(out, dtype=F32)


def fma(a: Array, b: Array, c: Array) -> Array:
    """a*b + c in float32 with one rounding, as the plugin's jit code computes it (vfmadd):
    the float32 product is exact in float64."""
    with np.errstate(all="ignore"):
        wide = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
        return np.asarray(wide + np.asarray(c, dtype=np.float64), dtype=F32)


def _scales(p: FakeQuantizeParams) -> tuple[Array, Array, Array]:
    lev = F32(p.levels - 1)
    with np.errstate(all="ignore"):
        isc = lev / (p.ih - p.il)
        ish = (-p.il * lev) / (p.ih - p.il)
        osc = (p.oh - p.ol) / lev
    return isc, ish, osc


def cpu_steps(x: Array, p: FakeQuantizeParams, fused: bool = False) -> Array:
    """The CPU plugin's quantize step: clamp, x*isc + ish, round half to even (the step
    number, a float32 integer).  `fused`: the FQ is a post-op of a Pooling or Reduce node,
    whose jit code computes x*isc + ish with one rounding (fma); a Subgraph or FakeQuantize
    node rounds the product first (measured: 2 of 1,352 cells tell them apart)."""
    with np.errstate(all="ignore"):
        return np.asarray(np.rint(cpu_position(x, p, fused)), dtype=F32)


def cpu_position(x: Array, p: FakeQuantizeParams, fused: bool = False) -> Array:
    """The CPU plugin's quantize step before it rounds: clamp, x*isc + ish (float32; one
    rounding where `fused`, as in cpu_steps)."""
    isc, ish, _ = _scales(p)
    with np.errstate(all="ignore"):
        xc = np.minimum(p.ih, np.maximum(p.il, np.asarray(x, dtype=F32)))
        return np.asarray(fma(xc, isc, ish) if fused else xc * isc + ish, dtype=F32)


def reference_position(x: Array, p: FakeQuantizeParams) -> tuple[Array, Array, Array]:
    """The specification's step before it rounds, as reference_fake_quantize computes it:
    (x - il) / (ih - il) * (levels - 1) in float32, and where x is at or below the range
    (step 0) or above it (step levels - 1)."""
    xf = np.asarray(x, dtype=F32)
    with np.errstate(all="ignore"):
        t = np.asarray((xf - p.il) / (p.ih - p.il) * F32(p.levels - 1), dtype=F32)
        low = xf <= np.minimum(p.il, p.ih)
        high = xf > np.maximum(p.il, p.ih)
    return t, np.broadcast_to(low, t.shape), np.broadcast_to(high, t.shape)


def cpu_fake_quantize(
    x: Array, p: FakeQuantizeParams, fused: bool = False, fma_out: bool | None = None
) -> Array:
    """The CPU plugin's FakeQuantize (float32 in and out); `fused` as in cpu_steps.  `fma_out`
    (default: `fused`): the output step is fma(steps, osc, ol), one rounding, as a post-op does
    and as the Subgraph that takes a dequantization fused into its ranges does (measured: a
    MaxPool on i8 codes, then a FakeQuantize with ol != 0: 17 of 48 cells tell them apart)."""
    _, _, osc = _scales(p)
    steps = cpu_steps(x, p, fused)
    with np.errstate(all="ignore"):
        if fused if fma_out is None else fma_out:
            return fma(steps, osc, p.ol)
        return np.asarray(steps * osc + p.ol, dtype=F32)


@dataclass(frozen=True)
class Decomposition:
    """LPT's split of an FQ into integer codes and a dequantization."""

    precision: str
    """u8 or i8: the type of the codes."""
    lo: float
    hi: float
    scale: Array
    shift: Array | None
    """None: no Subtract (no zero point, or every shift is 0)."""

    def codes(self, x: Array, p: FakeQuantizeParams) -> Array:
        """The quantize step's output: the FQ with output range [lo, hi], as float32."""
        q = FakeQuantizeParams(
            p.levels, p.il, p.ih, np.asarray(F32(self.lo)), np.asarray(F32(self.hi))
        )
        return cpu_fake_quantize(x, q)

    def for_rank(self, rank: int) -> Decomposition:
        """The same decomposition for a tensor of `rank` (a reduction without keep_dims
        drops axes): per-tensor values as one, per-channel ones on axis 1."""

        def shaped(a: Array | None) -> Array | None:
            if a is None or a.ndim == rank:
                return a
            if a.size == 1:
                return a.reshape((1,) * rank)
            return a.reshape((1, a.size) + (1,) * max(rank - 2, 0))

        scale = shaped(self.scale)
        assert scale is not None
        return Decomposition(self.precision, self.lo, self.hi, scale, shaped(self.shift))

    def dequantize(self, codes: Array) -> Array:
        """(codes - shift) * scale in float32."""
        with np.errstate(all="ignore"):
            v = np.asarray(codes, dtype=F32)
            if self.shift is not None:
                v = v - self.shift
            return np.asarray(v * self.scale, dtype=F32)

    def dequantize_subgraph(self, codes: Array) -> Array:
        """The dequantization as the Subgraph that also quantizes computes it, when LPT leaves
        the next layer in float32: fma(codes, scale, -(shift * scale)) (measured: 0 of 726
        cells; (codes - shift) * scale mismatches 23-111)."""
        if self.shift is None:
            return self.dequantize(codes)
        with np.errstate(all="ignore"):
            return fma(codes, self.scale, -(self.shift * self.scale))

    @property
    def positive(self) -> bool:
        return bool((self.scale > 0).all())

    def describe(self) -> str:
        zp = "" if self.shift is None else ", zero point"
        per = "per channel" if self.scale.size > 1 else "per tensor"
        return f"{self.precision} codes [{self.lo:g}, {self.hi:g}]{zp}, {per} scale"


def _precision(levels: int, ol: Array, oh: Array) -> tuple[str | None, bool]:
    """getPrecisionDetails: (u8, i8 or None, has a zero point)."""
    zero = F32(1e-6)
    ratio = F32(-F32(levels) / (F32(levels) - F32(2)))
    signed_p = unsigned_p = True
    has_zp = normal = False
    for lo, hi in zip(ol.ravel(), oh.ravel(), strict=True):
        if abs(lo) < zero and abs(hi) < zero:
            continue
        normal = True
        if np.signbit(lo) != np.signbit(hi) and abs(lo) >= zero:
            unsigned_p = False
            if hi != 0:
                expected = ratio if levels in (16, 256, 65536) else F32(-1)
                actual = F32(lo / hi)
                if abs((actual - expected) / min(actual, expected)) > F32(0.002):
                    has_zp = True
            else:
                has_zp = True
        else:
            signed_p = False
            if abs(lo) >= zero:
                has_zp = True
    if not normal:
        signed_p = bool((ol < 0).any())
        unsigned_p = not signed_p
    if has_zp:
        return None, True
    if signed_p and not unsigned_p:
        return "i8", False
    if unsigned_p and not signed_p:
        return "u8", False
    return None, has_zp


def decompose(p: FakeQuantizeParams) -> Decomposition | None:
    """LPT's decomposition of an FQ on activations (None: the levels are not modelled)."""
    if p.levels not in LPT_LEVELS:
        return None
    ol, oh = np.broadcast_arrays(p.ol, p.oh)
    precision, has_zp = _precision(p.levels, ol, oh)
    if precision is None:
        precision, has_zp = "u8", True
    if precision == "u8":
        lo, hi = 0.0, float(p.levels - 1)
    else:
        lo, hi = (-128.0, 127.0) if p.levels == 256 else (-127.0, 127.0)
    flo, fhi = F32(lo), F32(hi)
    with np.errstate(all="ignore"):
        span = (oh - ol).astype(F32)
        same = span == 0
        shifts = np.where(same, F32(0), (flo * oh - fhi * ol) / np.where(same, F32(1), span))
        scales = np.where(same, F32(1), span / (fhi - flo))
    shifts = np.where(shifts == 0, F32(0), shifts).astype(F32)
    scales = np.where(np.abs(scales) < F32(1e-32), F32(1e-32), scales)
    scales = np.clip(scales, F32(-1e32), F32(1e32)).astype(F32)
    shift = shifts if has_zp and bool((shifts != 0).any()) else None
    return Decomposition(precision, lo, hi, scales, shift)


def fused_ranges(p: FakeQuantizeParams, d: Decomposition) -> FakeQuantizeParams:
    """An FQ that follows a pooling layer whose dequantization LPT moved after it: the
    Multiply fused first (input range / scale), then the Subtract (+ shift), in float32."""
    with np.errstate(all="ignore"):
        il, ih = p.il / d.scale, p.ih / d.scale
        if d.shift is not None:
            il, ih = il + d.shift, ih + d.shift
    return FakeQuantizeParams(p.levels, il.astype(F32), ih.astype(F32), p.ol, p.oh)


def reduce_mean_of_codes(sums: Array, count: int) -> Array:
    """The plugin's ReduceMean of codes before dequantization: f32(sum) / count (measured:
    the reciprocal multiply mismatches 1-3 of 8 outputs)."""
    with np.errstate(all="ignore"):
        return np.asarray(np.asarray(sums, dtype=F32) / F32(count), dtype=F32)


def mean_of_codes(sums: Array, count: Array) -> Array:
    """The plugin's AvgPool of u8/i8 codes before dequantization: f32(sum) * f32(1/count)."""
    with np.errstate(all="ignore"):
        recip = F32(1) / np.asarray(count, dtype=F32)
        return np.asarray(np.asarray(sums, dtype=F32) * recip, dtype=F32)
