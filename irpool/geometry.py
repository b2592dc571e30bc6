"""Pure integer rules of pooling: pads after auto_pad, output sizes (also on intervals), PoolPlan.

Everything that decides a number is resolved here, before the kernel runs.  The same functions
serve `check` (shapes, with interval dims) and `run` (a PoolPlan for a static input shape).

Per spatial axis: input size n, window k, stride s, dilation d, pads (pb, pe),
k_eff = (k - 1) * d + 1.  Window j covers input positions j*s - pb + t*d for t in 0..k-1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from .conventions import Convention, EmptyIndex, IntMean, NanMax
from .cpu import BF16_ISAS, tf_uses_onednn
from .cpu import plugin_isa as _plugin_isa
from .errors import InputError, ShapeError, SpecError
from .model import Dim, Plan, Shape

Reduce = Literal["max", "mean"]
AutoPad = Literal["explicit", "same_upper", "same_lower", "valid"]
Rounding = Literal["floor", "ceil", "ceil_torch"]
ShapeRule = Literal["floor", "ceil", "ceil_drop"]
Divisor = Literal["none", "in_input", "declared", "full"]
Empty = Literal["openvino", "nan", "zero", "lowest", "-inf"]
Pads = tuple[tuple[int, int], ...]
SumOrder = Literal["row_major"]
Bf16Round = Literal["nearest_even", "half_up_if_odd"]

F32_LOWEST = float(np.finfo(np.float32).min)
BF16_LOWEST = float(np.array([0xFF7F0000], dtype=np.uint32).view(np.float32)[0])
"""The lowest finite bfloat16, -3.3895e38."""
FLOAT_DTYPES = ("float64", "float32", "float16", "bfloat16")
INT_DTYPES = ("int8", "uint8", "int32", "int64")
MLAS_POLICIES = ("mlas_generic", "mlas_global", "mlas_2d", "mlas_3d")


@dataclass(frozen=True)
class PoolParams:
    """What one pooling op instance asks for, in irpool's own terms (no wire spellings).

    Built by the op tables of each front end from the attributes of a layer or node.
    """

    op: str
    reduce: Reduce
    window: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: Pads
    auto_pad: AutoPad = "explicit"
    rounding: Rounding = "floor"
    count_pad: bool = False
    indices: bool = False
    index_axis: int = 0
    column_major: bool = False
    index_dtype: str = "int64"
    divisor_override: Literal["full"] | None = None
    openvino_checks: bool = False
    onnxruntime_mlas: bool = False
    """onnxruntime runs this node's float32/float16 data through its MLAS kernels (set by the
    ONNX op rows: AveragePool-7..18 unless ceil_mode and count_include_pad are both set, MaxPool
    without Indices, dilations > 1 or storage_order=1); see Convention.onnxruntime_kernels."""
    dilations_written: bool = True
    """The layer writes its dilations (an openvino MaxPool-8/14 or AvgPool-16 may leave them
    out or empty: read as ones, but its reference implementation then fails)."""
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def rank(self) -> int:
        """Number of spatial axes."""
        return len(self.window)


def dilated(window: int, dilation: int) -> int:
    """Extent of a dilated window: (k - 1) * d + 1."""
    return (window - 1) * dilation + 1


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def ceil_div_array(a: Any, b: int) -> Any:
    return -(-a // b)


def trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as C++ divides."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def same_pads(
    n: int, window: int, stride: int, dilation: int, upper: bool, clamp: bool = True
) -> tuple[int, int]:
    """SAME pads: total = (ceil(n/s) - 1)*s + k_eff - n, at least 0 unless `clamp` is off (as in
    onnxruntime, where it can be negative); the odd one goes to the end for same_upper and to
    the beginning for same_lower (halves rounded toward zero, as C++ divides)."""
    total = (ceil_div(n, stride) - 1) * stride + dilated(window, dilation) - n
    if clamp:
        total = max(0, total)
    head = trunc_div(total, 2) if upper else trunc_div(total + 1, 2)
    return head, total - head


def shape_rule(rounding: Rounding, convention: Convention) -> ShapeRule:
    """The output-size rule a rounding attribute means under a convention."""
    if rounding == "floor":
        return "floor"
    if rounding == "ceil_torch" or not convention.ceil_keeps_window_in_pad:
        return "ceil_drop"
    return "ceil"


def out_size(
    n: int, k_eff: int, stride: int, pb: int, pe: int, rule: ShapeRule, truncate: bool = False
) -> int:
    """Output length: floor or ceil((n + pb + pe - k_eff) / s) + 1, the ceil_drop rule giving one
    less when the last window would start at or after n + pb (in the right padding).

    openvino clamps the span n + pb + pe - k_eff at 0 (interval bounds), and with n + pb = 0
    (only a dynamic lower bound) drops nothing, as its unsigned `n + pb - 1` wraps around.
    With `truncate` (onnxruntime) a negative span is divided rounding toward zero instead.
    """
    span = n + pb + pe - k_eff
    if not truncate:
        span = max(0, span)
    if rule == "floor":
        return trunc_div(span, stride) + 1
    q = ceil_div(span, stride)
    if rule == "ceil_drop" and q * stride >= n + pb and (truncate or n + pb > 0):
        return q
    return q + 1


def _term(value: int) -> str:
    """A number inside a sum: negative ones in parentheses (onnxruntime's SAME pads can be)."""
    return str(value) if value >= 0 else f"({value})"


def size_formula(
    n: int,
    window: int,
    stride: int,
    dilation: int,
    pb: int,
    pe: int,
    rule: ShapeRule,
    out: int,
    truncate: bool = False,
) -> str:
    """The output-size formula with its numbers, ending in `out`, the size it gives:
    `ceil((32 + 0 + 1 - 2) / 2) + 1 = 16`.

    `pb`, `pe` and `out` are the values the plan (or the shape inference) uses; the steps are
    written as out_size computes them: `max(0, ...)` where a negative span is clamped (openvino,
    not `truncate`), `trunc(...)` where onnxruntime's division rounds a negative span toward
    zero (`truncate`), and `... + 1 - 1 [minus 1: ...]` where ceil_drop drops the last window.
    """
    k_eff = dilated(window, dilation)
    k_text = str(k_eff) if dilation == 1 else f"{k_eff} [k_eff = ({window} - 1) * {dilation} + 1]"
    span = n + pb + pe - k_eff
    terms = f"{n} + {_term(pb)} + {_term(pe)} - {k_text}"
    if span < 0 and not truncate:
        numerator, span = f"max(0, {terms})", 0
    else:
        numerator = f"({terms})"
    if rule == "floor":
        fn = "trunc" if span < 0 else "floor"
        q = trunc_div(span, stride)
    else:
        fn, q = "ceil", ceil_div(span, stride)
    text = f"{fn}({numerator} / {stride}) + 1"
    if rule == "ceil_drop" and q * stride >= n + pb and (truncate or n + pb > 0):
        text += (
            f" - 1 [minus 1: the last window would start at {q} * {stride} - {_term(pb)} = "
            f"{q * stride - pb} >= {n}, in the right padding]"
        )
    return f"{text} = {out}"


def pads_formula(a: AxisPlan, upper: bool, convention: Convention) -> str:
    """SAME pads of an axis as `convention` computes them, ending in the pads the plan uses:
    from the dilated kernel unless the convention takes the undilated one (onnxruntime, D4),
    clamped at 0 unless the convention lets the total go negative (onnxruntime)."""
    n, window, stride, dilation = a.size, a.window, a.stride, a.dilation
    pb, pe = a.pad_begin, a.pad_end
    if dilation == 1:
        k_text = str(window)
    elif convention.same_pads_dilated:
        k_text = f"{dilated(window, dilation)} [k_eff = ({window} - 1) * {dilation} + 1]"
    else:
        k_text = (
            f"{window} [the undilated kernel: {convention.title} ignores dilation {dilation} here]"
        )
    total = f"(ceil({n} / {stride}) - 1) * {stride} + {k_text} - {n}"
    if not convention.onnxruntime_sizes:
        total = f"max(0, {total})"
    return (
        f"{'same_upper' if upper else 'same_lower'}: total pad = {total} = {pb + pe} -> "
        f"begin {pb}, end {pe}"
    )


# -- intervals ---------------------------------------------------------------------------------


def out_dim(params: PoolParams, axis: int, n: Dim, rule: ShapeRule, convention: Convention) -> Dim:
    """Output dim on interval bounds, as openvino's shape inference computes it.

    Explicit and valid padding work on each bound (an unbounded upper bound stays unbounded);
    same_upper/same_lower on a non-static dim give a fully dynamic dim, since the pads would
    differ between the bounds.
    """
    if params.auto_pad in ("same_upper", "same_lower") and not n.is_static:
        return Dim.dynamic()
    pb, pe = axis_pads(params, axis, n.lo, convention)
    k_eff = dilated(params.window[axis], params.dilations[axis])
    stride = params.strides[axis]
    lo = out_size(n.lo, k_eff, stride, pb, pe, rule)
    hi = None if n.hi is None else out_size(n.hi, k_eff, stride, pb, pe, rule)
    return Dim(lo, hi)


# -- the plan ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AxisPlan:
    """One spatial axis of a plan, all plain integers."""

    size: int
    window: int
    stride: int
    dilation: int
    pad_begin: int
    pad_end: int
    out: int

    @property
    def k_eff(self) -> int:
        return dilated(self.window, self.dilation)

    def start(self, j: int) -> int:
        """Input position of the first tap of window j (negative in the left padding)."""
        return j * self.stride - self.pad_begin

    def taps(self, j: int) -> list[int]:
        return [self.start(j) + t * self.dilation for t in range(self.window)]

    def starts(self, j: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
        """First-tap positions of windows j (all windows by default), in int64 unless the
        positions could overflow it (then Python integers)."""
        j = np.arange(self.out, dtype=np.int64) if j is None else np.asarray(j)
        far = max(abs(self.start(0)), abs(self.start(max(self.out - 1, 0))) + self.k_eff)
        if max(far, self.size + abs(self.pad_end)) >= 1 << 62:
            return np.asarray([self.start(int(i)) for i in j], dtype=object)
        return np.asarray(j, dtype=np.int64) * self.stride - self.pad_begin

    def taps_between(
        self, lo: int, hi: int, starts: npt.NDArray[Any] | None = None
    ) -> npt.NDArray[Any]:
        """Per window (given by its first tap's position; all windows by default): how many
        of its taps start + t * d (t = 0 .. k-1) lie in [lo, hi).  The one count every rule
        of taps inside the input, the declared pads or the padding derives from."""
        starts = self.starts() if starts is None else starts
        d = self.dilation
        first = np.maximum(0, -((starts - lo) // d))  # ceil((lo - start) / d)
        stop = np.minimum(self.window, -((starts - hi) // d))  # ceil((hi - start) / d)
        return np.asarray(np.maximum(0, stop - first))

    def in_input_counts(self) -> npt.NDArray[Any]:
        """Per window: taps inside the input."""
        return self.taps_between(0, self.size)

    def declared_counts(self) -> npt.NDArray[Any]:
        """Per window: taps inside the declared pads (the ceil overhang beyond pad_end not
        counted)."""
        return self.taps_between(-self.pad_begin, self.size + self.pad_end)

    def in_input(self, j: int) -> int:
        return int(self.taps_between(0, self.size, self.starts(np.asarray([j])))[0])

    def declared(self, j: int) -> int:
        """Taps within the declared pads (the ceil overhang beyond pad_end not counted)."""
        starts = self.starts(np.asarray([j]))
        return int(self.taps_between(-self.pad_begin, self.size + self.pad_end, starts)[0])

    def has_empty(self) -> bool:
        """Whether some window of the axis has no tap inside the input.  Only a window that
        starts before the input or at its end can miss it; of those starting before it, the
        first one and one period of the stride against the dilation decide (so a huge axis
        costs no more than a small one)."""
        if self.out == 0:
            return False
        if self.start(self.out - 1) >= self.size:
            return True
        before = min(self.out, ceil_div(self.pad_begin, self.stride))
        count = min(before, self.dilation + 1)
        start = np.arange(count, dtype=np.int64) * self.stride - self.pad_begin
        first = np.where(
            start < 0, start + ceil_div_array(-start, self.dilation) * self.dilation, start
        )
        reach = start + (self.window - 1) * self.dilation
        return bool(np.any((first > reach) | (first >= self.size)))

    def tap_range(self, t: int) -> tuple[int, int]:
        """Half-open range of windows j whose tap t lies inside the input."""
        offset = t * self.dilation - self.pad_begin
        lo = max(0, ceil_div(-offset, self.stride))
        hi = min(self.out, ceil_div(self.size - offset, self.stride))
        return lo, max(lo, hi)


@dataclass(frozen=True)
class PoolPlan(Plan):
    """Everything the kernel needs, resolved: geometry and named semantic switches."""

    axes: tuple[AxisPlan, ...]
    reduce: Reduce
    shape_rule: ShapeRule
    divisor: Divisor
    divisor_reason: str
    empty: Empty
    nan_max: NanMax
    indices: bool = False
    index_axis: int = 0
    column_major: bool = False
    index_dtype: str = "int64"
    indices_used: bool = True
    """Whether the model consumes the indices output (MaxPool-8/14)."""
    int_mean: IntMean = "half_even"
    narrow_64bit: bool = False
    empty_index: EmptyIndex = "plane_start"
    integers_in_float32: bool = False
    """Integer inputs are pooled in float32 and rounded back (Convention.integers_in_float32,
    decided for this layer: channels, dilations, whether its indices are used)."""
    float_refusal: str | None = None
    """Why the runtime of the convention refuses this layer for float32/float16 data (onnxruntime's
    MLAS kernels take no negative pads, D5); other element types are computed."""
    dtype: str = "float32"
    """numpy name of the arrays the plan takes (and gives back): float32, bfloat16, int8, ..."""
    compute: str = "float32"
    """numpy name of the type the kernel computes in (float16/bfloat16 in float32, float64 and
    int64 narrowed to 32 bits by openvino's CPU plugin, integer means in int32 or int64)."""
    nan_rule: NanMax = "ignore"
    """The NaN rule the kernel applies to this dtype: `nan_max`, except that onnxruntime's MLAS
    kernels serve float32/float16 only (other types take its reference loop, 'first') and its
    generic MLAS loop is the 'ignore' rule."""
    max_start: float | int = F32_LOWEST
    """The value every max starts from (openvino: the lowest finite value of the compute type;
    bfloat16 layers with an empty window: bfloat16's own lowest, measured)."""
    empty_value: float | int = F32_LOWEST
    """The value of a max window without any tap in the input."""
    sum_order: SumOrder = "row_major"
    """The order window sums are accumulated in: every tap in row-major window order from +0.0
    (openvino; irpool's other conventions use it too, within a stated bound for onnxruntime)."""
    via: PoolPlan | None = None
    """Integer data that the runtime pools in float32 (`integers_in_float32`): the float32 plan
    it runs as; the results are rounded back half to even and saturated."""
    bf16_flush: bool = False
    """bfloat16 results are rounded from float32 with subnormals flushed to a zero of their
    sign (openvino's CPU plugin on AVX-512, Convention.cpu_plugin_kernels); else not."""
    bf16_round: Bf16Round = "nearest_even"
    """How float32 results are rounded to bfloat16: to nearest even, or `half_up_if_odd`
    (openvino's CPU plugin on a CPU without AVX-512, which pools bfloat16 in float32 and
    converts the result as ov::bfloat16 rounds: half an ulp is added only where the kept half
    is odd, so an even one is truncated; subnormals kept, no NaN case; measured)."""
    plugin_isa: str | None = None
    """The instruction set of openvino's CPU plugin the plan models (avx512_amx, avx512_bf16,
    avx512, avx2: irpool.cpu.plugin_isa() when the plan is built); None for other
    conventions."""
    runtime_refusal: str | None = None
    """Why the runtime has no kernel for this layer on data of this plan's dtype (openvino's CPU
    plugin on AVX-512: a bfloat16 MaxPool-8/14 with its indices used, a one-channel i32 AvgPool
    that needs the reference kernel; on AVX2: a one-channel i32 AvgPool oneDNN's integer jit
    does not take, see _avx2_integer_jit), or None."""

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.input_shape[:2] + tuple(a.out for a in self.axes)

    def refusal(self, element_type: str | None) -> str | None:
        """The reason the runtime refuses this layer for data of `element_type` (a numpy name
        such as float32, or an element type such as f32; None counts as float32), or None."""
        if self.float_refusal is not None and element_type in (
            None,
            "float32",
            "float16",
            "f32",
            "f16",
        ):
            return self.float_refusal
        return None

    @property
    def pads(self) -> Pads:
        return tuple((a.pad_begin, a.pad_end) for a in self.axes)


def check_params(params: PoolParams, spatial: int) -> None:
    """Raise unless every list has one value per spatial axis and values are in range."""
    for name, values in (
        ("kernel", params.window),
        ("strides", params.strides),
        ("dilations", params.dilations),
        ("pads", params.pads),
    ):
        if len(values) != spatial:
            raise SpecError(
                f'"{name}" has {len(values)} values; expected {spatial}, one per spatial axis'
            )
    if any(k < 1 for k in params.window):
        raise SpecError(f"kernel {list(params.window)} has a value below 1; expected >= 1")
    if any(s < 1 for s in params.strides):
        raise SpecError("Strides has zero dimension(s): expected strides >= 1")
    if any(d < 1 for d in params.dilations):
        raise SpecError("Kernel dilations has zero dimension(s): expected dilations >= 1")
    if any(p < 0 for pair in params.pads for p in pair):
        raise SpecError("pads have a negative value; expected pads >= 0")


def check_axis(params: PoolParams, axis: int, n: int, pb: int, pe: int) -> None:
    """Raise the errors openvino's shape inference raises for one static spatial axis."""
    k_eff = dilated(params.window[axis], params.dilations[axis])
    if k_eff > n + pb + pe:
        raise ShapeError(
            f"Kernel after dilation has size (dim: {k_eff}) larger than the data shape after "
            f"padding (dim: {n + pb + pe}) at axis {axis}; expected the window to fit"
        )
    excluded = params.reduce == "mean" and not params.count_pad
    if params.openvino_checks and excluded and (pb >= k_eff or pe >= k_eff):
        raise ShapeError(
            f"Kernel after dilation is sometimes entirely in the padding area for axis "
            f"{axis} (pads {pb}, {pe}; window {k_eff}); with exclude-pad=true expected "
            "pads smaller than the window"
        )


def axis_pads(
    params: PoolParams, axis: int, n: int, convention: Convention, clamp_same: bool = True
) -> tuple[int, int]:
    """(before, after) pads of one axis after auto_pad; written pads count only if explicit.
    A convention whose runtime refuses the written pads of the axis raises (D11).  SAME pads
    are clamped at 0 unless `clamp_same` is off or the convention has onnxruntime's sizes."""
    if convention.onnxruntime_kernels:
        _refuse_pads_over_kernel(params, axis)
    if params.auto_pad == "valid":
        return 0, 0
    if params.auto_pad in ("same_upper", "same_lower"):
        d = params.dilations[axis] if convention.same_pads_dilated else 1
        return same_pads(
            n,
            params.window[axis],
            params.strides[axis],
            d,
            params.auto_pad == "same_upper",
            clamp=clamp_same and not convention.onnxruntime_sizes,
        )
    return params.pads[axis]


def axis_plan(
    params: PoolParams, axis: int, n: int, convention: Convention, clamp_same: bool = True
) -> AxisPlan:
    """One static spatial axis resolved: pads after auto_pad, the output size under the
    convention's rule, and the errors the runtime raises for it (the one derivation `plan` and
    shape inference share)."""
    k, s, d = params.window[axis], params.strides[axis], params.dilations[axis]
    pb, pe = axis_pads(params, axis, n, convention, clamp_same)
    rule = shape_rule(params.rounding, convention)
    if convention.torch_checks:
        out = torch_out_size(n, dilated(k, d), s, pb, pe, rule)
        if out < 1:
            raise ShapeError(
                f"output size {out} at axis {axis} (window {dilated(k, d)}, input {n}, pads "
                f"{pb}, {pe}); PyTorch refuses it: Output size is too small"
            )
        return AxisPlan(n, k, s, d, pb, pe, out)
    if not convention.onnxruntime_sizes:
        check_axis(params, axis, n, pb, pe)
    out = out_size(n, dilated(k, d), s, pb, pe, rule, truncate=convention.onnxruntime_sizes)
    if out < 0:
        raise ShapeError(
            f"output size {out} at axis {axis} is negative (window {dilated(k, d)}, input {n}, "
            f"pads {pb}, {pe}); onnxruntime refuses it"
        )
    return AxisPlan(n, k, s, d, pb, pe, out)


def torch_out_size(n: int, k_eff: int, stride: int, pb: int, pe: int, rule: ShapeRule) -> int:
    """PyTorch's output length (pooling_output_shape): floor((n + pb + pe - k_eff + (ceil ?
    s - 1 : 0)) / s) + 1 with floor division (a window larger than the padded input can still
    give one output), less one with ceil when the last window starts at or after n + pb."""
    ceil = rule != "floor"
    out = (n + pb + pe - k_eff + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= n + pb:
        out -= 1
    return out


def torch_refusal(
    params: PoolParams, shape: tuple[int, ...], convention: Convention, indices: bool
) -> str | None:
    """What PyTorch raises for this call (the first line of its message), in its order, or
    None.  `indices`: the call returns indices (1-D max pooling without them is max_pool1d,
    which has checks of its own); 1-D calls run as 2-D ones with a height of 1."""
    rank = len(shape) - 2
    k, d, s = params.window, params.dilations, params.strides
    max_pool = params.reduce == "max"
    pads = [max(axis_pads(params, i, n, convention)) for i, n in enumerate(shape[2:])]
    rule = shape_rule(params.rounding, convention)
    outs = [
        torch_out_size(n, dilated(k[i], d[i]), s[i], pads[i], pads[i], rule)
        for i, n in enumerate(shape[2:])
    ]
    zero = _torch_zero_dims(shape, max_pool, indices)
    if max_pool and rank == 1 and not indices:
        if zero is not None:
            return zero
        if pads[0] > k[0] // 2:
            return (
                "max_pool1d() padding should be at most half of kernel size, but got "
                f"padding={pads[0]} and kernel_size={k[0]}"
            )
        if outs[0] <= 0:
            return f"max_pool1d() Invalid computed output size: {outs[0]}"
        return None
    for i in range(rank):
        dil = d[i]  # 1 in every torch average pooling call (an IR AvgPool-16 may have more)
        if pads[i] > dilated(k[i], dil) // 2:
            return (
                "pad should be at most half of effective kernel size, but got "
                f"pad={pads[i]}, kernel_size={k[i]} and dilation={dil}"
            )
    if zero is not None:
        return zero
    if max_pool and any(pads[i] > k[i] // 2 for i in range(rank)):
        if rank == 3:
            return (
                "pad should be smaller than or equal to half of kernel size, but got "
                f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {pads[0]} padW: {pads[2]} "
                f"padH: {pads[1]}"
            )
        kh, ph = (k[0], pads[0]) if rank == 2 else (1, 0)
        return (
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pads[-1]}, padH = {ph}, kW = {k[-1]}, kH = {kh}"
        )
    if not max_pool and rank == 3 and any(n < k[i] for i, n in enumerate(shape[2:])):
        t, h, w = shape[2:]
        return (
            f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
            f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )
    if any(o < 1 for o in outs):
        lift = [1] if rank == 1 else []
        given = "x".join(str(v) for v in [shape[1], *lift, *shape[2:]])
        got = "x".join(str(v) for v in [shape[1], *lift, *outs])
        return (
            f"Given input size: ({given}). Calculated output size: ({got}). Output size is "
            "too small"
        )
    return None


def _torch_zero_dims(shape: tuple[int, ...], max_pool: bool, indices: bool) -> str | None:
    """PyTorch's words for a zero dimension other than N (N = 0 runs)."""
    if not any(n == 0 for n in shape[1:]):
        return None
    rank = len(shape) - 2
    listed = ", ".join(str(n) for n in shape)
    if rank == 3:
        where = "max_pool3d_with_indices_out_cpu_template()" if max_pool else "avg_pool3d()"
        return (
            f"{where}: Expected input's non-batch dimensions to have positive length, but "
            f"input has a shape of [{listed}] and non-batch dimension 0 has length zero!"
        )
    if rank == 1 and max_pool and not indices:
        return (
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
            f"size for input, but got:[{listed}]"
        )
    if rank == 1:
        listed = ", ".join(str(n) for n in (*shape[:2], 1, shape[2]))
    return (
        "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
        f"but got:[{listed}]"
    )


def axis_size_formula(a: AxisPlan, rule: ShapeRule, convention: Convention) -> str:
    """size_formula with an axis's numbers, as `convention` computes the size."""
    return size_formula(
        a.size,
        a.window,
        a.stride,
        a.dilation,
        a.pad_begin,
        a.pad_end,
        rule,
        a.out,
        truncate=convention.onnxruntime_sizes,
    )


def auto_pads_formula(auto_pad: str, a: AxisPlan, convention: Convention) -> str | None:
    """How auto_pad gives an axis's pads (the SAME formula, or valid's zeros); None when the
    pads are the written ones."""
    if auto_pad in ("same_upper", "same_lower"):
        return pads_formula(a, auto_pad == "same_upper", convention)
    if auto_pad == "valid":
        return "valid: pads 0, 0"
    return None


def axis_formula(params: PoolParams, a: AxisPlan, convention: Convention) -> str:
    """How an axis's output size comes about, with its numbers: the SAME pads when auto_pad
    computes them, then the size formula."""
    text = axis_size_formula(a, shape_rule(params.rounding, convention), convention)
    pads = auto_pads_formula(params.auto_pad, a, convention)
    return text if pads is None else f"{pads}; {text}"


def check_zero_dims(shape: tuple[int | None, ...], convention: Convention) -> None:
    """Refuse zero-sized dims (None: not static) as the convention's runtime does: openvino
    refuses N = 0 and C = 0 (its shape inference); onnxruntime runs N = 0 (an empty output) and
    refuses C = 0 and, with N > 0, any spatial 0 ("Only N can be zero"; measured with
    onnxruntime 1.32 on every MaxPool and AveragePool version); PyTorch runs N = 0 and refuses
    every other zero (torch 2.13; its own words come from `torch_refusal`)."""
    if shape[1] == 0:
        raise ShapeError("Channel count is zero; expected C >= 1")
    if convention.torch_checks:
        zero = next((i for i, n in enumerate(shape[2:]) if n == 0), None)
        if zero is not None:
            raise ShapeError(f"PyTorch refuses a spatial size 0 (axis {zero}); only N can be zero")
        return
    if not convention.onnxruntime_sizes:
        if shape[0] == 0:
            raise ShapeError("Batch size is zero; expected N >= 1")
        return
    zero = next((i for i, n in enumerate(shape[2:]) if n == 0), None)
    if zero is not None and shape[0] != 0:
        raise ShapeError(
            f'onnxruntime refuses a spatial size 0 (axis {zero}): "Invalid input shape. Only '
            'N can be zero." (pool_attributes.h); expected every spatial size >= 1'
        )


def infer_shape(
    params: PoolParams,
    input_shape: Shape | None,
    convention: Convention,
    unknown: tuple[bool, ...] = (),
) -> tuple[Shape | None, tuple[str, ...]]:
    """Output shape and per-axis formulas for an input shape of interval dims (None: dynamic
    rank), as openvino's shape inference computes them: a static axis through `axis_plan`, a
    non-static one on its bounds (`out_dim`).  `unknown` marks input dims written as -1.  A
    static input is also planned, so that shape inference refuses what `plan` refuses."""
    check_params(params, params.rank if input_shape is None else len(input_shape) - 2)
    if input_shape is None:
        return tuple(Dim.dynamic() for _ in range(2 + params.rank)), ()
    batch, channels = input_shape[0], input_shape[1]
    static = tuple(d.lo if d.is_static else None for d in input_shape)
    check_zero_dims(static, convention)
    rule = shape_rule(params.rounding, convention)
    dims: list[Dim] = [batch, channels]
    formulas: list[str] = []
    for i, n in enumerate(input_shape[2:]):
        if n.is_static:
            a = axis_plan(params, i, n.lo, convention)
            dims.append(Dim.of(a.out))
            formulas.append(axis_formula(params, a, convention))
            continue
        dim = out_dim(params, i, n, rule, convention)
        written = 2 + i < len(unknown) and unknown[2 + i]
        formulas.append(_interval_formula(params, i, n, rule, convention, dim, written))
        dims.append(dim)
    if all(d.is_static for d in input_shape):
        plan(params, tuple(d.lo for d in input_shape), convention)
    return tuple(dims), tuple(formulas)


def _interval_formula(
    params: PoolParams,
    i: int,
    n: Dim,
    rule: ShapeRule,
    convention: Convention,
    dim: Dim,
    unknown: bool = False,
) -> str:
    """The formula on each bound of a non-static dim, ending in the bounds of `dim` (out_dim's
    result, which clamps a negative span at 0 as openvino does on interval bounds).  An
    `unknown` dim (written -1) is said to be one."""
    shown_n = f"{n} (written -1: openvino may know narrower bounds)" if unknown else str(n)
    if params.auto_pad in ("same_upper", "same_lower"):
        return f"{params.auto_pad} on the non-static dim {shown_n}: the pads differ per size, so ?"
    pb, pe = axis_pads(params, i, n.lo, convention)
    k, s, d = params.window[i], params.strides[i], params.dilations[i]
    parts = [f"on the bounds of {shown_n}:"]
    for name, bound, out in (("lower", n.lo, dim.lo), ("upper", n.hi, dim.hi)):
        if bound is None or out is None:
            parts.append(f"{name} unbounded")
        else:
            shown = size_formula(bound, k, s, d, pb, pe, rule, out)
            parts.append(f"{name} {shown}")
    return " ".join(parts[:1]) + " " + "; ".join(parts[1:])


_AS_WRITTEN = ("op", "reduce", "indices", "index_axis", "column_major", "index_dtype")
"""PoolPlan fields that are the layer's PoolParams unchanged."""
_AS_CONVENTION = ("int_mean", "narrow_64bit", "empty_index")
"""PoolPlan fields that are the Convention's switches unchanged."""


def plan(
    params: PoolParams,
    input_shape: tuple[int, ...],
    convention: Convention | str = "openvino",
    indices_used: bool = True,
    dtype: str | np.dtype[Any] = "float32",
) -> PoolPlan:
    """Resolve an op's parameters, a static input shape (N, C, *spatial) and the dtype of the
    data into a PoolPlan.

    `indices_used`: whether the model consumes a MaxPool-8/14's indices output (OpenVINO
    computes integer layers differently then, see Convention.integers_in_float32)."""
    cv = conv.get(convention)
    if len(input_shape) < 3:
        raise ShapeError(
            f"input has rank {len(input_shape)}; expected (N, C, *spatial) with at least one "
            "spatial axis"
        )
    spatial = len(input_shape) - 2
    check_params(params, spatial)
    if cv.torch_checks:
        used = params.indices and indices_used
        refused = torch_refusal(params, tuple(input_shape), cv, used)
        if refused is not None:
            raise SpecError(f"PyTorch refuses: {refused}")
    check_zero_dims(tuple(input_shape), cv)
    sizes = tuple(input_shape[2:])
    rule = shape_rule(params.rounding, cv)
    # TensorFlow's Eigen cuboid kernels: SAME pads unclamped, their own NaN rule (eigen_cuboid)
    eigen = cv.eigen_cuboid and spatial == 3 and not params.indices
    dtype_name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    eigen = eigen and all(d == 1 for d in params.dilations) and not tf_uses_onednn(dtype_name)
    axes = [axis_plan(params, i, n, cv, not eigen) for i, n in enumerate(sizes)]
    pads = tuple((a.pad_begin, a.pad_end) for a in axes)
    _refuse_inexpressible(params, axes, cv)
    divisor, reason = _divisor(params, pads, cv)
    if params.reduce == "max":
        empty: Empty = "lowest" if cv.empty_max == "lowest" else "-inf"
    else:
        empty = cv.empty_mean
    # MLAS has no Indices output and no dilation: such a node runs onnxruntime's own loop
    mlas = cv.onnxruntime_kernels and params.onnxruntime_mlas and not params.indices
    mlas = mlas and all(a.dilation == 1 for a in axes)
    nan_max: NanMax = cv.nan_max
    if mlas and params.reduce == "max":
        nan_max = mlas_max_kernel(tuple(axes))
    elif eigen and params.reduce == "max":
        nan_max = "eigen_3d"
    refusal = _negative_pads_refusal(params, sizes, pads) if mlas else None
    isa = _plugin_isa().name if cv.cpu_plugin_kernels else None
    keeps_integers = params.reduce == "max" and params.indices and indices_used
    in_float32 = cv.integers_in_float32 and not keeps_integers
    if isa == "avx2":
        # oneDNN's integer jit (jit_uni_i8i8_pooling) takes one channel only where it can
        # (_avx2_integer_jit); elsewhere the reference kernel computes in float32
        in_float32 = in_float32 and (
            input_shape[1] > 1 or not _avx2_integer_jit(tuple(input_shape), tuple(axes), 4)
        )
    else:
        # AVX-512 (with or without AVX512_BF16 or AMX): one channel stays on the integer jit
        # unless the layer needs oneDNN's reference kernel (a dilation, or a window wholly in
        # the padding or the ceil overhang), which pools in float32 (measured on AVX-512 and on
        # AVX-512 with AMX: an empty window's INT32_MAX comes back as 2147483520)
        in_float32 = in_float32 and (input_shape[1] > 1 or _reference_kernel_axes(tuple(axes)))
    base = PoolPlan(
        **{name: getattr(params, name) for name in _AS_WRITTEN},
        **{name: getattr(cv, name) for name in _AS_CONVENTION},
        convention=cv.name,
        input_shape=tuple(input_shape),
        axes=tuple(axes),
        shape_rule=rule,
        divisor=divisor,
        divisor_reason=reason,
        empty=empty,
        nan_max=nan_max,
        integers_in_float32=in_float32,
        float_refusal=refusal,
        bf16_flush=cv.cpu_plugin_kernels and isa in BF16_ISAS,
        bf16_round="half_up_if_odd" if isa == "avx2" else "nearest_even",
        plugin_isa=isa,
        indices_used=indices_used,
    )
    return for_dtype(base, dtype)


def _refuse_inexpressible(params: PoolParams, axes: list[AxisPlan], cv: Convention) -> None:
    """Raise for a layer the convention's runtime has no op for (TensorFlow: ceil rounding that
    changes a size, an average that counts padding)."""
    if cv.floor_only and params.rounding != "floor":
        for i, a in enumerate(axes):
            floor = out_size(a.size, a.k_eff, a.stride, a.pad_begin, a.pad_end, "floor")
            if floor != a.out:
                raise SpecError(
                    f"{cv.title} has no ceil rounding: rounding_type={params.rounding} gives "
                    f"{a.out} outputs on spatial axis {i} where rounding down gives {floor}"
                )
    padded = any(a.pad_begin or a.pad_end for a in axes)
    if cv.mean_excludes_padding and params.reduce == "mean" and params.count_pad and padded:
        raise SpecError(
            f"{cv.title}'s average pooling never counts padding; this layer counts pads "
            f"{[(a.pad_begin, a.pad_end) for a in axes]} (exclude-pad=false)"
        )


def for_dtype(base: PoolPlan, dtype: str | np.dtype[Any]) -> PoolPlan:
    """The plan for data of one dtype: the type the kernel computes in, the NaN rule it applies,
    where a max starts, and (integers pooled in float32) the float32 plan it runs as."""
    name = dtype if isinstance(dtype, str) else str(np.dtype(dtype).name)
    if name not in FLOAT_DTYPES + INT_DTYPES:
        allowed = ", ".join(FLOAT_DTYPES + INT_DTYPES)
        raise InputError(f"dtype {name} is not supported; expected one of {allowed}")
    integer = name in INT_DTYPES
    in_float32 = base.integers_in_float32 and integer
    if base.plugin_isa == "avx2" and name in ("int8", "uint8"):
        # 8-bit data keeps its own type on AVX2 (oneDNN's integer jit or reference kernel,
        # whatever the channels; measured)
        in_float32 = False
    via = None
    if in_float32:
        via = for_dtype(replace(base, integers_in_float32=False), "float32")
    compute = _compute_dtype(name, base)
    start, empty = _max_start(name, compute, base)
    return replace(
        base,
        dtype=name,
        compute=compute,
        nan_rule=_nan_rule(base.nan_max, name),
        max_start=start,
        empty_value=empty,
        integers_in_float32=in_float32,
        via=via,
        runtime_refusal=_plugin_refusal(name, base) if base.plugin_isa is not None else None,
    )


def _reference_kernel(p: PoolPlan) -> bool:
    """Whether openvino's CPU plugin runs the layer on oneDNN's reference kernel rather than a
    jit one: a dilation > 1, or a window with no tap in the input (measured)."""
    return _reference_kernel_axes(p.axes)


def _reference_kernel_axes(axes: tuple[AxisPlan, ...]) -> bool:
    return any(a.dilation > 1 for a in axes) or any(a.has_empty() for a in axes)


def _avx2_integer_jit(shape: tuple[int, ...], axes: tuple[AxisPlan, ...], lanes: int) -> bool:
    """Whether oneDNN's integer pooling jit (jit_uni_i8i8_pooling) takes a layer on AVX2 or
    SSE4.1: no dilation, no window without a tap in the input (its pads, the ceil overhang
    included, below the kernel), and at least one vector of `lanes` elements (4 int32 for
    SSE4.1) in batch x channels x the smaller of each axis's input and output size ("safe
    load-and-store"; AVX-512 has no such condition).  Measured with openvino 2026.4.1 on an
    AVX2 CPU: [1, 1, 4] with a kernel of 2 and stride 1 (3 outputs) is refused, [1, 1, 5]
    runs."""
    if any(a.dilation > 1 for a in axes) or any(a.has_empty() for a in axes):
        return False
    count = shape[0] * shape[1] * math.prod(min(a.size, a.out) for a in axes)
    return count >= lanes


def _plugin_refusal(name: str, p: PoolPlan) -> str | None:
    """Where openvino's CPU plugin has no kernel for the layer on data of dtype `name`
    (measured with openvino 2026.4.1; Convention.cpu_plugin_kernels)."""
    empty_axis = any(a.size == 0 for a in p.axes) and math.prod(p.output_shape) > 0
    if empty_axis and not (p.reduce == "max" and p.indices and p.indices_used):
        # found by `irpool fuzz`: MaxPool-1/8 (indices unused) and AvgPool-1 over (1, 1, 0)
        # with pads_end 1 give a different value on every run; MaxPool-8 with its indices used
        # gives the lowest float (D40)
        return (
            f"openvino's CPU plugin computes no value for a {p.op} over a zero-length axis whose "
            "pads give it an output: the output is uninitialised memory (D40); expected every "
            "spatial size >= 1"
            + (", or the indices output used" if p.reduce == "max" and p.indices else "")
        )
    if p.plugin_isa == "avx2":
        return _avx2_refusal(name, p)
    if name == "bfloat16" and p.reduce == "max" and p.indices and p.indices_used:
        return (
            f"openvino's CPU plugin cannot compile a bfloat16 {p.op} whose indices output is "
            'used ("Cannot fallback on ngraph reference implementation"); expected the '
            "indices unused, or float32 data"
        )
    if name in ("int32", "int64") and p.reduce == "mean" and p.input_shape[1] == 1:
        dilated = any(a.dilation > 1 for a in p.axes)
        if _reference_kernel(p):
            why = "a dilation > 1" if dilated else "a window with no tap in the input"
            return (
                f"openvino's CPU plugin has no kernel for a one-channel i32 {p.op} with {why} "
                '("Supported primitive descriptors list is empty for node"); expected '
                "float data, more than one channel, or windows that all reach the input"
            )
    return None


def _avx2_refusal(name: str, p: PoolPlan) -> str | None:
    """`_plugin_refusal` on an AVX2 CPU (measured with openvino 2026.4.1): a bfloat16
    MaxPool-8/14 whose indices are used runs (openvino's reference op, in float32); a
    one-channel i32 AvgPool runs only on oneDNN's integer jit (`_avx2_integer_jit`), which
    takes no dilation, no window without a tap in the input, and needs at least 4 elements in
    batch x channels x the smaller of each axis's input and output size."""
    one_channel_mean = p.reduce == "mean" and p.input_shape[1] == 1
    if name not in ("int32", "int64") or not one_channel_mean:
        return None
    if _avx2_integer_jit(p.input_shape, p.axes, 4):
        return None
    if any(a.dilation > 1 for a in p.axes):
        why = "a dilation > 1"
    elif any(a.has_empty() for a in p.axes):
        why = "a window with no tap in the input"
    else:
        why = (
            "fewer than 4 elements in batch x channels x the smaller of each axis's input and "
            "output size (oneDNN's integer jit on AVX2/SSE4.1)"
        )
    return (
        f"openvino's CPU plugin (AVX2) has no kernel for a one-channel i32 {p.op} with {why} "
        '("Supported primitive descriptors list is empty for node"); expected float data or '
        "more than one channel"
    )


def _compute_dtype(name: str, p: PoolPlan) -> str:
    """The type the kernel works in for data of dtype `name`."""
    if name in ("float16", "bfloat16", "float32"):
        return "float32"
    if name == "float64":
        return "float32" if p.narrow_64bit else "float64"
    if name == "int64" and p.narrow_64bit:
        return "int32"
    if p.reduce == "mean":
        return "int64" if p.int_mean == "trunc" else "int32"
    return name


def _nan_rule(policy: NanMax, name: str) -> NanMax:
    """onnxruntime's MLAS kernels are float32 ones (float16 runs through them in float32); other
    types take its reference loop, the 'first' rule.  MLAS's generic loop, std::max from
    lowest(), is the 'ignore' rule."""
    if policy not in MLAS_POLICIES:
        return policy
    if name not in ("float32", "float16"):
        return "first"
    return "ignore" if policy == "mlas_generic" else policy


def _max_start(name: str, compute: str, p: PoolPlan) -> tuple[float | int, float | int]:
    """(start value of every max, value of a window without taps in the input).

    The start is the lowest finite value of the compute type, as openvino's CPU plugin starts
    (float16 outputs then show -inf where nothing beats it).  For bfloat16 input that plugin
    runs oneDNN's reference kernel where a dilation is > 1 or a window has no tap in the input,
    and that kernel starts every window from bfloat16's own lowest value (measured).  With the
    '-inf' rule an empty window is -inf."""
    kind = np.dtype(compute).kind
    lowest: float | int = (
        float(np.finfo(compute).min) if kind == "f" else int(np.iinfo(compute).min)
    )
    native = p.plugin_isa is not None and p.plugin_isa != "avx2"  # bfloat16 kernels
    if name == "bfloat16" and p.empty == "lowest" and native and _reference_kernel(p):
        lowest = BF16_LOWEST
    if p.empty == "-inf" and kind == "f":
        return lowest, -math.inf
    return lowest, lowest


MLAS_ROW_BUFFER = 2048 - 3
"""Elements of the row buffer of MLAS's vector pooling kernels (MLAS_POOL_REDUCTION_BUFFER_STACK
less the padding it keeps for reading whole vectors): the padded last axis must fit in it."""


def mlas_max_kernel(axes: tuple[AxisPlan, ...]) -> NanMax:
    """The MLAS kernel onnxruntime's float32 MaxPool runs for this geometry, which decides what
    NaN and -inf give (MlasPool; measured against onnxruntime 1.32, docs/semantics.md):

    * `mlas_global`: every window is its whole plane, with stride 1 and no padding;
    * `mlas_2d` / `mlas_3d`: the vector kernels, for 2-D and 3-D with a stride of at most 2 on
      the last axis, windows of at most 32 and a padded last axis that fits the row buffer;
    * `mlas_generic`: the plain loop, everything else (every 1-D window but the global one).
    """
    if all(a.window == a.size and a.stride == 1 and a.pad_begin == a.pad_end == 0 for a in axes):
        return "mlas_global"
    if len(axes) in (2, 3) and axes[-1].stride <= 2 and all(a.window <= 32 for a in axes):
        room = MLAS_ROW_BUFFER
        for pad in (axes[-1].pad_begin, axes[-1].pad_end):
            room = room - pad if room >= pad else 0
        if room >= axes[-1].size:
            return "mlas_2d" if len(axes) == 2 else "mlas_3d"
    return "mlas_generic"


def _refuse_pads_over_kernel(params: PoolParams, axis: int) -> None:
    """onnxruntime refuses a written pad >= its (undilated) kernel when it creates the node,
    whatever auto_pad says (measured; D11)."""
    (pb, pe), k = params.pads[axis], params.window[axis]
    if pb >= k or pe >= k:
        raise SpecError(
            f"onnxruntime refuses: pads ({pb}, {pe}) on axis {axis} are not smaller than the "
            f"kernel {k} ('Pad should be smaller than kernel', even with auto_pad; "
            "docs/semantics.md D11); expected pads < kernel"
        )


def _negative_pads_refusal(params: PoolParams, sizes: tuple[int, ...], pads: Pads) -> str | None:
    """onnxruntime's MLAS kernels refuse the negative pads its SAME_* arithmetic gives when the
    (undilated) kernel is smaller than the stride: 'padding values must be non-negative'."""
    for i, (pb, pe) in enumerate(pads):
        if pb < 0 or pe < 0:
            runs = "AveragePool-7..18" if params.reduce == "mean" else "MaxPool without Indices"
            return (
                "onnxruntime refuses: negative pads from SAME_* with kernel < stride "
                f"(auto_pad={params.auto_pad.upper()}, kernel_shape={list(params.window)}, "
                f"strides={list(params.strides)}: input size {sizes[i]} on axis {i} gives pads "
                f"({pb}, {pe})); its MLAS kernels ({runs} on float data) take no negative "
                "pads, where AveragePool-19+ computes (docs/semantics.md D5)"
            )
    return None


def _divisor(params: PoolParams, pads: Pads, cv: Convention) -> tuple[Divisor, str]:
    if params.reduce == "max":
        return "none", "max pooling has no divisor"
    if not params.count_pad:
        return "in_input", "padding excluded: each window is divided by its taps inside the input"
    if params.divisor_override == "full":
        return "full", f"{params.op} divides every window by the full kernel volume"
    if cv.onnxruntime_kernels and params.onnxruntime_mlas:
        return "full", (
            f"{cv.title} runs {params.op} with ceil_mode=0 through MLAS, which divides every "
            "window by the full kernel volume (also one larger than the padded input)"
        )
    if cv.count_pad_divisor == "declared":
        return "declared", (
            f"{cv.title}: padding counted up to the declared pads; the ceil overhang beyond "
            "pads_end is not counted"
        )
    if any(p for pair in pads for p in pair):
        return "full", (
            f"{cv.title}: padding counted and some pad is non-zero, so every window is divided "
            "by the full kernel volume (ceil overhang included)"
        )
    return "in_input", (
        f"{cv.title}: padding counted but all pads are zero, so each window is divided by its "
        "taps inside the input"
    )
