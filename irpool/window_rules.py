"""Pure integer rules of windowed pooling: pads after auto_pad, output sizes (also on
intervals), and the plan types (AxisPlan, PoolPlan).  The planner that fills a PoolPlan
(`geometry.plan`) and the runtimes' refusals (`window_refusals`) build on them; `check` reads
the same rules for interval dims.

Per spatial axis: input size n, window k, stride s, dilation d, pads (pb, pe),
k_eff = (k - 1) * d + 1.  Window j covers input positions j*s - pb + t*d for t in 0..k-1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .conventions import Convention, EmptyIndex, IntMean, NanMax
from .errors import ShapeError, SpecError
from .model import Dim, Plan

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
    indices_used: bool = True
    """Whether the model consumes the indices output (MaxPool-8/14): a fact of the graph, set
    by `bind`; the planner reads it (`Family.with_use`, Convention.integers_in_float32)."""

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
    avx512, avx2: the target its convention carries, Convention.target); None for other
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
