"""Pure integer rules of pooling: pads after auto_pad, output sizes (also on intervals), PoolPlan.

Everything that decides a number is resolved here, before the kernel runs.  The same functions
serve `check` (shapes, with interval dims) and `run` (a PoolPlan for a static input shape).

Per spatial axis: input size n, window k, stride s, dilation d, pads (pb, pe),
k_eff = (k - 1) * d + 1.  Window j covers input positions j*s - pb + t*d for t in 0..k-1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from . import conventions as conv
from .conventions import Convention, EmptyIndex, IntMean, NanMax
from .errors import ShapeError, SpecError
from .model import Dim

Reduce = Literal["max", "mean"]
AutoPad = Literal["explicit", "same_upper", "same_lower", "valid"]
Rounding = Literal["floor", "ceil", "ceil_torch"]
ShapeRule = Literal["floor", "ceil", "ceil_drop"]
Divisor = Literal["none", "in_input", "declared", "full"]
Empty = Literal["openvino", "nan", "zero", "lowest", "-inf"]
Pads = tuple[tuple[int, int], ...]

SHAPE_RULE_TEXT: dict[ShapeRule, str] = {
    "floor": "floor",
    "ceil": "ceil (a last window starting in the right padding is kept)",
    "ceil_drop": "ceil, dropping a last window that would start in the right padding",
}


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


def pads_formula(
    n: int,
    window: int,
    stride: int,
    dilation: int,
    pb: int,
    pe: int,
    upper: bool,
    convention: Convention,
) -> str:
    """SAME pads as `convention` computes them, ending in the pads `pb`, `pe` the plan uses:
    from the dilated kernel unless the convention takes the undilated one (onnxruntime, D4),
    clamped at 0 unless the convention lets the total go negative (onnxruntime)."""
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

    def in_input(self, j: int) -> int:
        return sum(1 for p in self.taps(j) if 0 <= p < self.size)

    def declared(self, j: int) -> int:
        """Taps within the declared pads (the ceil overhang beyond pad_end not counted)."""
        return sum(1 for p in self.taps(j) if -self.pad_begin <= p < self.size + self.pad_end)

    def tap_range(self, t: int) -> tuple[int, int]:
        """Half-open range of windows j whose tap t lies inside the input."""
        offset = t * self.dilation - self.pad_begin
        lo = max(0, ceil_div(-offset, self.stride))
        hi = min(self.out, ceil_div(self.size - offset, self.stride))
        return lo, max(lo, hi)


@dataclass(frozen=True)
class PoolPlan:
    """Everything the kernel needs, resolved: geometry and named semantic switches."""

    op: str
    convention: str
    input_shape: tuple[int, ...]
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
    int_mean: IntMean = "half_even"
    narrow_64bit: bool = False
    empty_index: EmptyIndex = "plane_start"
    integers_in_float32: bool = False
    """Integer inputs are pooled in float32 and rounded back (Convention.integers_in_float32,
    decided for this layer: channels, dilations, whether its indices are used)."""
    float_refusal: str | None = None
    """Why the runtime of the convention refuses this layer for float32/float16 data (onnxruntime's
    MLAS kernels take no negative pads, D5); other element types are computed."""

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.input_shape[:2] + tuple(a.out for a in self.axes)

    def refusal(self, element_type: str | None) -> str | None:
        """The reason the runtime refuses this layer for data of `element_type` (a numpy name
        such as float32, or an element type such as f32; None counts as float32), or None."""
        if self.float_refusal is None:
            return None
        if element_type in (None, "float32", "float16", "f32", "f16"):
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


def axis_pads(params: PoolParams, axis: int, n: int, convention: Convention) -> tuple[int, int]:
    """(before, after) pads of one axis after auto_pad; written pads count only if explicit.
    A convention whose runtime refuses the written pads of the axis raises (D11)."""
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
            clamp=not convention.onnxruntime_sizes,
        )
    return params.pads[axis]


def resolve_pads(params: PoolParams, sizes: tuple[int, ...], convention: Convention) -> Pads:
    """(before, after) per axis after auto_pad."""
    return tuple(axis_pads(params, i, n, convention) for i, n in enumerate(sizes))


def plan(
    params: PoolParams,
    input_shape: tuple[int, ...],
    convention: Convention | str = "openvino",
    indices_used: bool = True,
) -> PoolPlan:
    """Resolve an op's parameters and a static input shape (N, C, *spatial) into a PoolPlan.

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
    if input_shape[0] == 0:
        raise ShapeError("Batch size is zero; expected N >= 1")
    if input_shape[1] == 0:
        raise ShapeError("Channel count is zero; expected C >= 1")
    sizes = tuple(input_shape[2:])
    pads = resolve_pads(params, sizes, cv)
    rule = shape_rule(params.rounding, cv)
    axes: list[AxisPlan] = []
    for i, (n, k, s, d, (pb, pe)) in enumerate(
        zip(sizes, params.window, params.strides, params.dilations, pads, strict=True)
    ):
        if not cv.onnxruntime_sizes:
            check_axis(params, i, n, pb, pe)
        out = out_size(n, dilated(k, d), s, pb, pe, rule, truncate=cv.onnxruntime_sizes)
        if out < 0:
            raise ShapeError(
                f"output size {out} at axis {i} is negative (window {dilated(k, d)}, input {n}, "
                f"pads {pb}, {pe}); onnxruntime refuses it"
            )
        axes.append(AxisPlan(n, k, s, d, pb, pe, out))
    divisor, reason = _divisor(params, pads, cv)
    if params.reduce == "max":
        empty: Empty = "lowest" if cv.empty_max == "lowest" else "-inf"
    else:
        empty = cv.empty_mean
    # MLAS has no Indices output: a node that asks for them runs onnxruntime's own loop
    mlas = cv.onnxruntime_kernels and params.onnxruntime_mlas and not params.indices
    nan_max: NanMax = cv.nan_max
    if mlas and params.reduce == "max":
        nan_max = mlas_max_kernel(tuple(axes))
    refusal = _negative_pads_refusal(params, sizes, pads) if mlas else None
    keeps_integers = params.reduce == "max" and params.indices and indices_used
    in_float32 = cv.integers_in_float32 and not keeps_integers
    in_float32 = in_float32 and (input_shape[1] > 1 or any(a.dilation > 1 for a in axes))
    return PoolPlan(
        op=params.op,
        convention=cv.name,
        input_shape=tuple(input_shape),
        axes=tuple(axes),
        reduce=params.reduce,
        shape_rule=rule,
        divisor=divisor,
        divisor_reason=reason,
        empty=empty,
        nan_max=nan_max,
        indices=params.indices,
        index_axis=params.index_axis,
        column_major=params.column_major,
        index_dtype=params.index_dtype,
        int_mean=cv.int_mean,
        narrow_64bit=cv.narrow_64bit,
        empty_index=cv.empty_index,
        integers_in_float32=in_float32,
        float_refusal=refusal,
    )


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
