"""Reductions: OpenVINO ReduceMean-1, ReduceMax-1, ReduceSum-1, ReduceL1-4, ReduceL2-4 (what
global pooling becomes in an IR: torch `x.mean((2, 3))`, AdaptiveAvgPool2d(1), ONNX
GlobalAveragePool / GlobalMaxPool, Keras global pooling), and ONNX GlobalAveragePool /
GlobalMaxPool themselves (a mean or max over every spatial axis, kept as size-1 dims).

The plan resolves the order in which each runtime visits and combines the reduced elements,
because a float sum's value depends on it (measured, docs/semantics.md "Reductions"):

* `ov_jit` (openvino's CPU plugin, planar layout): the input viewed as (B, C, D, H, W); when W
  is reduced the elements of each output come in contiguous chunks (W, or H*W with H reduced),
  each folded by as many float32 lanes as the plugin's vector holds (16 with AVX-512, 8 with
  AVX2: the convention's target), the lanes combined by a fixed tree, the tree combined with
  the running value, the chunk's remaining elements one by one; otherwise one sequential fold.
  Max is the x86 MAXPS fold from the lowest float (a NaN survives only as the last element of
  its fold: D17).  Mean divides once by the count; L2 squares (no FMA) and takes the root.
  Integers are folded in float32 and the running value is stored into the integer output
  after every kernel call (truncated; 8-bit buffers saturate, u8's scalar store wraps: D27).
* `ov_reference` (rank > 5 with axes that are not one ascending run): one sequential fold.
* `mlas_global` (onnxruntime's GlobalAveragePool / GlobalMaxPool on float32): 4 lanes over
  the plane, combined (l0 op l2) op (l1 op l3), the remaining elements one by one (max: MAXPS
  in the lanes, std::max in the tail: D18); mean divides by the plane size.
* `sequential`: one fold in row-major order (PyTorch and onnxruntime's other reductions, whose
  own orders irpool does not reproduce: their float sums are compared within a stated bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..conventions import Convention
from ..conventions import get as get_convention
from ..errors import ShapeError, SpecError
from ..geometry import FLOAT_DTYPES, INT_DTYPES, Bf16Round
from ..model import Dim, Shape
from ..target import TITLES
from . import F32_EPS, Array, Explained, Family, FamilyParams, FamilyPlan, Values, plan_head

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec

Kind = Literal["mean", "max", "sum", "l1", "l2"]
Order = Literal["ov_jit", "ov_reference", "mlas_global", "sequential"]
NanMax = Literal["maxps", "mlas", "propagate", "first"]
EmptyRule = Literal["openvino", "zero_or_-inf", "nan_or_refuse"]


@dataclass(frozen=True, kw_only=True)
class ReduceParams(FamilyParams):
    kind: Kind
    axes: tuple[int, ...] | None
    """As written (the second input's value; None when it is not a constant); for the ONNX
    global ops, every spatial axis."""
    keep: bool
    global_op: bool = False
    """ONNX GlobalAveragePool / GlobalMaxPool (onnxruntime's own checks and kernel)."""


@dataclass(frozen=True)
class Schedule:
    """How openvino's CPU plugin (JIT, planar layout) visits the reduced elements (ov_jit order;
    the defaults: no such schedule)."""

    lanes: int = 0
    """ov_jit: float32 lanes of the plugin's vector register, which is also its block of
    outputs (16 with AVX-512, 8 with AVX2)."""
    view: tuple[int, ...] = ()
    """ov_jit: the (B, C, D, H, W) view of the input."""
    reduced: tuple[bool, ...] = ()
    """ov_jit: which of the five view axes are reduced (after the plugin's adjustments)."""
    chunk: int = 0
    """ov_jit: elements of one kernel call folded in `lanes` lanes (0: W is not reduced, one
    sequential fold)."""
    segment: int = 0
    """ov_jit: elements one kernel call adds before it stores the running value (integer
    outputs: where the store truncates and saturates)."""
    two_stage: bool = False
    """ov_jit: rank-5 C, D, W reduced with H kept (not L2): each (h, w) over (c, d) first, then
    each row over w in `lanes` lanes."""
    scalar_axes: tuple[int, ...] = ()
    scalar_from: int = 0
    """ov_jit: the outputs the plugin writes with its scalar store: those whose row-major index
    over the view axes `scalar_axes` of the output is >= scalar_from, a multiple of `lanes`
    (integer u8 stores, and the tree step of short max chunks)."""


@dataclass(frozen=True, kw_only=True)
class ReducePlan(Schedule, FamilyPlan):
    """A reduction's plan; an ov_jit order carries its Schedule's fields."""

    kind: Kind
    axes: tuple[int, ...]
    """The reduced axes, normalised (0 .. rank-1), ascending, each once."""
    keep: bool
    count: int
    """Elements reduced into each output."""
    order: Order
    nan_max: NanMax
    empty: EmptyRule
    integer_store: bool = False
    """Integer data: folded in float32, the running value stored into the integer output
    after every kernel call (openvino)."""
    plugin_isa: str = ""
    """openvino: the instruction set the plan models (Convention.target: avx512_amx, avx512_bf16,
    avx512, avx2)."""
    u8_vector_packs: bool = False
    """openvino, u8 output: the vector store packs like the scalar store (packusdw, packuswb:
    32768 and more become 0; AVX2) instead of saturating to [0, 255] (AVX-512)."""
    bf16_round: Bf16Round = "nearest_even"
    """openvino, bfloat16 data: how the float32 result becomes bfloat16: to nearest even
    (AVX-512), or up exactly when the first dropped bit and the last kept bit are both 1
    (AVX2: the plugin's Convert, which sees no other dropped bit)."""


@dataclass(frozen=True)
class ReduceRules:
    """What one convention does with a reduction (measurements in the module docstring)."""

    order: Order
    nan_max: NanMax
    empty: EmptyRule
    integers: bool


RULES = {
    "openvino": ReduceRules("ov_jit", "maxps", "openvino", True),
    "onnx": ReduceRules("sequential", "first", "zero_or_-inf", False),
    "torch": ReduceRules("sequential", "propagate", "nan_or_refuse", False),
}


def normalize(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """openvino's rule: each axis in [-rank, rank - 1] (a rank-0 input takes 0 and -1),
    negatives from the end, duplicates allowed."""
    out = []
    for a in axes:
        ok = -rank <= a < rank or (rank == 0 and a in (0, -1))
        if not ok:
            raise SpecError(f"Axis {a} out of the tensor rank range [{-rank}, {rank - 1}]")
        out.append(a + rank if a < 0 else a)
    return tuple(sorted(set(out)))


def _five_d(shape: tuple[int, ...]) -> tuple[list[int], list[int | None]]:
    """The plugin's (B, C, D, H, W) view of a rank <= 5 shape, and which input axis each view
    axis is (None: a size-1 axis it adds)."""
    r = len(shape)
    if r == 5:
        return list(shape), [0, 1, 2, 3, 4]
    if r == 4:
        return [shape[0], shape[1], 1, shape[2], shape[3]], [0, 1, None, 2, 3]
    if r == 3:
        return [1, shape[0], 1, shape[1], shape[2]], [None, 0, None, 1, 2]
    if r == 2:
        return [1, 1, 1, shape[0], shape[1]], [None, None, None, 0, 1]
    if r == 1:
        return [1, shape[0], 1, 1, 1], [None, 0, None, None, None]
    return [1, 1, 1, 1, 1], [None] * 5


def ov_schedule(
    shape: tuple[int, ...], written: Sequence[int], kind: Kind, lanes: int
) -> Schedule | None:
    """How openvino's CPU plugin (JIT, planar layout, vectors of `lanes` float32) visits the
    reduced elements; None when it takes its reference path (rank > 5 and the axes, as
    written, are not one ascending run).  `lanes` is also the plugin's block size: W chunks
    shorter than it take the gather path, and outputs from the last whole block of `lanes` on
    are written by its scalar store."""
    rank = len(shape)
    raw = [a + rank if a < 0 else a for a in written]
    axes = sorted(set(raw))
    if rank > 5:
        if not raw or not all(raw[i] == raw[i - 1] + 1 for i in range(1, len(raw))):
            return None
        a0, a1 = raw[0], raw[-1]
        shape = (
            math.prod(shape[:a0]),
            math.prod(shape[a0 : a1 + 1]),
            math.prod(shape[a1 + 1 :]),
        )
        axes = [1]
    dims, src = _five_d(shape)
    chosen = set(axes)
    out5 = [1 if (s is not None and s in chosen) else dims[k] for k, s in enumerate(src)]
    red = [dims[k] != out5[k] and out5[k] == 1 for k in range(5)]
    ib, ic, i_d, ih, iw = dims
    if red[3] and iw == 1:
        red[4] = True
    if red[1] and red[3] and i_d == 1:
        red[2] = True
    rn, rc, rd, rh, rw = red
    two_stage = rc and rd and not rh and rw and kind != "l2"
    total = math.prod(d for d, r in zip(dims, red, strict=True) if r)
    per_batch = total // ib if rn else total
    chunk = (ih * iw if rh else iw) if rw else 0
    if rw:
        segment = chunk
    elif rn and not (rc or rd or rh):
        segment = total
    elif (not rc and rh) or (rc and rd and rh) or (rc and not rd and not rh):
        segment = per_batch
    else:  # the generic loop: one kernel call (and one store) per reduced (c, d, h) element
        segment = 1
    scalar_axes: tuple[int, ...]
    if rw and not rc and not rd and chunk < lanes:
        scalar_axes, n = (1, 2, 3), ic * i_d * (1 if rh else ih)
    elif rw:
        scalar_axes, n = (), 0
    elif rn and not (rc or rd or rh):
        scalar_axes, n = (1, 2, 3, 4), ic * i_d * ih * iw
    elif rc and not rd and not rh:
        scalar_axes, n = (2, 3, 4), i_d * ih * iw
    else:
        scalar_axes, n = (4,), iw
    return Schedule(
        lanes, tuple(dims), tuple(red), chunk, segment, two_stage, scalar_axes, n // lanes * lanes
    )


def _title(kind: Kind) -> str:
    return {"mean": "mean", "max": "maximum", "sum": "sum", "l1": "sum of |x|", "l2": "L2 norm"}[
        kind
    ]


class Reduction(Family):
    """One reduction kind (an entry's path): Reduce<kind> of an IR, or an ONNX global pool."""

    name = "reduce"
    title = "reduction"
    value_inputs: tuple[int, ...] = (1,)

    def __init__(self, kind: Kind, global_op: bool = False) -> None:
        self.kind = kind
        self.global_op = global_op
        if global_op:
            self.value_inputs = ()

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> ReduceParams:
        notes: list[str] = []
        if self.global_op:
            from ..ops.onnx_attrs import read_attrs

            read_attrs(spec, layer.attrs)
            if rank is not None and rank < 3:
                raise SpecError(
                    "onnxruntime refuses: 'Input dimension cannot be less than 3.' (N, C and at "
                    f"least one spatial axis); got rank {rank}"
                )
            axes = None if rank is None else tuple(range(2, rank))
            return ReduceParams(op=spec.label, kind=self.kind, axes=axes, keep=True, global_op=True)
        from ..ops.registry import read_ir_attrs

        attrs = read_ir_attrs(spec, layer.data)
        unknown = sorted(set(layer.data) - spec.wire_names())
        if unknown:
            notes.append(f"attribute(s) {', '.join(unknown)} not part of {spec.label}; ignored")
        axes = values.get(1)
        if axes is None:
            notes.append("the axes (input 1) are not a constant of the file")
        elif rank is not None:
            normalize(axes, rank)
        keep = bool(attrs.get("keep_dims", False))
        if axes is not None and len(axes) == 0:
            notes.append(
                "no axes: openvino's shape inference gives the input shape; its CPU plugin "
                + (
                    "computes the identity (D30)"
                    if keep
                    else "refuses to compile it ('gets incorrect number of input/output "
                    "dimensions', D30)"
                )
            )
        return ReduceParams(op=spec.label, kind=self.kind, axes=axes, keep=keep, notes=tuple(notes))

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        assert isinstance(params, ReduceParams)
        rank = len(shape)
        axes = params.axes
        if params.global_op:
            if rank < 3:
                raise SpecError("onnxruntime refuses: 'Input dimension cannot be less than 3.'")
            axes = tuple(range(2, rank))
        if axes is None:
            if params.keep:
                return tuple(Dim.dynamic() for _ in shape), tuple(
                    "the axes (input 1) are not a constant: ?" for _ in shape
                )
            return None, ()
        chosen = normalize(axes, rank)
        dims: list[Dim] = []
        texts: list[str] = []
        for i, d in enumerate(shape):
            if i in chosen:
                if params.keep:
                    dims.append(Dim.of(1))
                    texts.append(f"input axis {i} ({d}) is reduced; keep_dims=true keeps it as 1")
                continue
            dims.append(d)
            texts.append(f"input axis {i} is not reduced: {d}")
        if not params.keep:
            gone = ", ".join(str(a) for a in chosen) or "none"
            texts = [f"{t} (keep_dims=false drops reduced axes {gone})" for t in texts]
        return tuple(dims), tuple(texts)

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> ReducePlan:
        assert isinstance(params, ReduceParams)
        rank = len(shape)
        if dtype not in FLOAT_DTYPES + INT_DTYPES:
            raise SpecError(f"{params.op} takes numeric data, not {dtype}")
        if params.global_op:
            return self._global_plan(params, shape, dtype, convention)
        if params.axes is None:
            raise SpecError(
                f"{params.op}: the axes (input 1) are computed, not a constant; run the whole model"
            )
        rules = RULES[convention.name]
        if dtype in INT_DTYPES and not rules.integers:
            raise SpecError(
                f"irpool's {convention.name} convention computes float reductions only; "
                f"{convention.title} gives integer reductions their own types and rules"
            )
        axes = normalize(params.axes, rank)
        count = math.prod(shape[a] for a in axes)
        out = tuple(
            1 if i in axes else d for i, d in enumerate(shape) if params.keep or i not in axes
        )
        refused = None
        if not params.axes and not params.keep and convention.cpu_plugin_kernels:
            refused = (
                "openvino's CPU plugin refuses to compile a reduction with no axes and "
                "keep_dims=false (D30)"
            )
        if convention.torch_checks and self.kind == "max" and count == 0 and 0 not in out:
            raise SpecError(
                f"PyTorch refuses: 'amax(): Expected reduction dim {axes[0]} to have non-zero "
                "size.'"
            )
        order: Order = rules.order
        schedule = None
        machine = get_convention(convention).target  # (the target the convention carries)
        isa = machine.isa if convention.cpu_plugin_kernels and machine is not None else None
        # AVX2 (measured here): 8 lanes, u8 vector stores pack, bfloat16 through the Convert
        avx2 = isa is not None and isa.name == "avx2"
        if order == "ov_jit":
            assert isa is not None
            schedule = ov_schedule(shape, params.axes, self.kind, isa.lanes)
            if schedule is None:
                order = "ov_reference"
        compute = "float64" if dtype == "float64" and not convention.narrow_64bit else "float32"
        base = dict(
            **plan_head(params, convention, shape, out, dtype, compute, refused),
            kind=self.kind,
            axes=axes,
            keep=params.keep,
            count=count,
            order=order,
            nan_max=rules.nan_max,
            empty=rules.empty,
            integer_store=dtype in INT_DTYPES,
            plugin_isa=isa.name if isa else "",
            u8_vector_packs=avx2,
            bf16_round="half_up_if_odd" if avx2 else "nearest_even",
        )
        if schedule is not None:
            return ReducePlan(**base, **asdict(schedule))
        return ReducePlan(**base)

    def _global_plan(
        self, params: ReduceParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> ReducePlan:
        """ONNX GlobalAveragePool / GlobalMaxPool: onnxruntime's MLAS kernel (onnx), what
        openvino's conversion makes of it (ReduceMean/ReduceMax over the spatial axes, kept),
        or PyTorch's mean / amax over them."""
        rank = len(shape)
        if rank < 3:
            raise SpecError("onnxruntime refuses: 'Input dimension cannot be less than 3.'")
        axes = tuple(range(2, rank))
        if convention.onnxruntime_kernels:
            if rank > 5:
                raise SpecError("onnxruntime refuses: 'Unsupported pooling size.' (rank > 5)")
            if any(d == 0 for d in shape[1:]):
                dims = "{" + ",".join(map(str, shape)) + "}"
                raise ShapeError(
                    f"onnxruntime refuses: 'Invalid input shape. Only N can be zero. Got:{dims}'"
                )
            if dtype not in ("float32", "float16"):
                raise SpecError(
                    f"onnxruntime has no {params.op} kernel for {dtype} (NOT_IMPLEMENTED); it "
                    "takes float32 and float16"
                )
            return ReducePlan(
                **plan_head(params, "onnx", shape, (*shape[:2], *(1 for _ in axes)), dtype),
                kind=self.kind,
                axes=axes,
                keep=True,
                count=math.prod(shape[2:]),
                order="mlas_global",
                nan_max="mlas",
                empty="zero_or_-inf",
            )
        as_reduce = ReduceParams(op=params.op, kind=self.kind, axes=axes, keep=True)
        return Reduction(self.kind).plan(as_reduce, shape, dtype, convention)

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, ReducePlan)
        lines = [
            f"{_title(plan.kind)} over axes {list(plan.axes)} of {list(plan.input_shape)}: "
            f"{plan.count} element(s) per output; keep_dims={'true' if plan.keep else 'false'} "
            f"-> {list(plan.output_shape)}",
            f"order: {describe_order(plan)}",
        ]
        if plan.kind == "mean":
            lines.append(f"mean = sum / {plan.count}, one division in {plan.compute}")
        if plan.kind == "l2":
            lines.append("L2 = sqrt(sum of x*x); the squares are not fused with the additions")
        if plan.kind == "max":
            lines.append(f"NaN: {NAN_TEXT[plan.nan_max]}")
        lines.append(f"an empty reduction (a zero-size axis) gives {empty_text(plan)}")
        if plan.integer_store:
            u8 = (
                "u8's stores turn 32768 and more into 0"
                if plan.u8_vector_packs
                else "u8's scalar store turns 32768 and more into 0"
            )
            lines.append(
                "integers: folded in float32; after every kernel call the running value is "
                "stored into the integer output (truncated toward zero, 8-bit outputs "
                f"saturate, {u8}: D27); means and roots truncated"
            )
        if plan.dtype == "bfloat16" and get_convention(plan.convention).cpu_plugin_kernels:
            lines.append(f"bfloat16 result: {BF16_TEXT[plan.bf16_round]}")
        data = {
            "family": "reduce",
            "reduce": plan.kind,
            "axes": list(plan.axes),
            "keep_dims": plan.keep,
            "count": plan.count,
            "order": plan.order,
            "view": list(plan.view),
            "reduced_view_axes": [k for k, r in enumerate(plan.reduced) if r],
            "chunk": plan.chunk,
            "lanes": plan.lanes or None,
            "plugin_isa": plan.plugin_isa or None,
            "nan_rule": plan.nan_max if plan.kind == "max" else None,
            "empty_result": empty_text(plan),
            "compute": plan.compute,
        }
        notes = [plan.refused_by] if plan.refused_by else []
        return Explained(lines, data, notes)

    def allowance(
        self, plan: FamilyPlan, inputs: Sequence[Array | None], expected: Array
    ) -> Array | None:
        """(n + 1) * eps * mean|x| for a mean of n elements (sums: the sum of |x|; L2: half
        of (n + 1) * eps * the norm), plus one unit in the last place of the result: the most
        two orders of adding n float32 terms can differ by (measured worst against openvino,
        onnxruntime and PyTorch: about 10 * eps * mean|x|, docs/semantics.md)."""
        assert isinstance(plan, ReducePlan)
        x = inputs[0] if inputs else None
        if plan.kind == "max" or x is None or x.dtype.kind in "iu":
            return None
        if expected.shape != plan.output_shape:
            return None
        xf = np.abs(x.astype(np.float64))
        keep = tuple(sorted(plan.axes))
        with np.errstate(invalid="ignore", over="ignore"):
            if plan.kind == "l2":
                total = np.sqrt(np.sum(xf * xf, axis=keep, keepdims=plan.keep))
                size = (plan.count + 1) * F32_EPS * total / 2
            else:
                total = np.sum(xf, axis=keep, keepdims=plan.keep)
                if plan.kind == "mean":
                    total = total / max(plan.count, 1)
                size = (plan.count + 1) * F32_EPS * total
            ulp = np.abs(np.spacing(np.abs(expected.astype(np.float32)))).astype(np.float64)
        return np.asarray(np.reshape(size, expected.shape) + ulp)


BF16_TEXT = {
    "nearest_even": "the float32 result rounded to nearest even",
    "half_up_if_odd": "the float32 result's high half, plus one when the first dropped bit and "
    "the last kept bit are both 1 (the plugin's Convert without AVX-512 sees no other dropped "
    "bit: 0x3EBEE000 gives 0x3EBE)",
}

NAN_TEXT = {
    "maxps": "MAXPS fold from the lowest float32: a NaN is kept only as the last element of "
    "its fold (a lane of a chunk, the tail); [1]*15 + [NaN] gives -3.4e38 (D17)",
    "mlas": "MAXPS in onnxruntime's 4 lanes (kept only as a lane's last element), std::max in "
    "the tail (never taken there): [1, NaN] gives 1 (D18)",
    "propagate": "any NaN makes the result NaN (PyTorch)",
    "first": "std::max from the first element: a NaN first element is kept, a later one "
    "never taken",
}


def describe_order(plan: ReducePlan) -> str:
    if plan.order == "ov_jit":
        names = "BCDHW"
        red = "".join(n for n, r in zip(names, plan.reduced, strict=True) if r) or "nothing"
        view = "x".join(map(str, plan.view))
        if plan.chunk:
            per_lane = plan.chunk // plan.lanes
            rest = plan.chunk - per_lane * plan.lanes
            return (
                f"openvino's CPU plugin (JIT, planar layout): the input viewed as (B,C,D,H,W) = "
                f"({view}), {red} reduced; each output's elements in chunks of {plan.chunk}: "
                f"{lanes_text(plan)} ({per_lane} element(s) each), the lane tree "
                f"{TREE_TEXT[plan.lanes]}, then the {rest} remaining element(s) one by one"
                + ("; first each (h, w) over (c, d)" if plan.two_stage else "")
            )
        return (
            f"openvino's CPU plugin (JIT, planar layout): the input viewed as (B,C,D,H,W) = "
            f"({view}), {red} reduced; W is kept, so each output is one sequential fold in "
            "row-major order"
        )
    if plan.order == "ov_reference":
        return (
            "openvino's CPU plugin, reference path (rank > 5, axes not one ascending run): one "
            "sequential fold in row-major order"
        )
    if plan.order == "mlas_global":
        return (
            "onnxruntime's MLAS global kernel: 4 lanes over each plane, combined (l0 op l2) op "
            "(l1 op l3), then the last size % 4 elements one by one"
        )
    return (
        "one sequential fold in row-major order (the runtime's own order is not reproduced: "
        "float sums agree within (n + 1) * eps * mean|x|)"
    )


TREE_TEXT = {
    16: "((0-3 op 4-7) op (8-11 op 12-15)), then (0 op 1) op (2 op 3)",
    8: "(0-3 op 4-7), then (0 op 1) op (2 op 3)",
}
"""The plugin's horizontal reduction of its lanes (horiz_reduce_store: the vector's 128-bit
quarters or halves, then movshdup/movhlps within one)."""


def lanes_text(plan: ReducePlan) -> str:
    """e.g. '8 lanes (AVX2)'."""
    return f"{plan.lanes} lanes ({TITLES.get(plan.plugin_isa, plan.plugin_isa)})"


def empty_text(plan: ReducePlan) -> str:
    if plan.empty == "openvino":
        avx2 = plan.bf16_round == "half_up_if_odd"
        bf16 = ", bf16 -inf: float32's through the Convert" if avx2 else ""
        return (
            "0 for sums and means (not NaN: D23), the lowest value of the output type for max "
            f"(f32 -3.4e38, f16 -inf, i32 INT32_MIN{bf16}: D19)"
        )
    if plan.empty == "zero_or_-inf":
        return "0 for sums and means, -inf for max"
    return "NaN for means, 0 for sums; PyTorch refuses a max (D19, D23)"


REDUCE_MEAN = Reduction("mean")
REDUCE_MAX = Reduction("max")
REDUCE_SUM = Reduction("sum")
REDUCE_L1 = Reduction("l1")
REDUCE_L2 = Reduction("l2")
GLOBAL_AVERAGE = Reduction("mean", global_op=True)
GLOBAL_MAX = Reduction("max", global_op=True)
