"""Lp pooling: ONNX LpPool-1/2/11/18/22 and GlobalLpPool-1/2/22 (PyTorch's lp_pool1d/2d/3d).

y = (sum over the window of |x|^p)^(1/p), with the runtimes disagreeing on which taps count
and how (measured with onnxruntime 1.32, openvino 2026.4.1, onnx 1.23, torch 2.13;
docs/semantics.md "Lp pooling"):

* onnxruntime: over the taps inside the input only (padding and the ceil overhang add
  nothing, nothing is rescaled), each term float(pow(double |x|, double p)), summed in
  row-major window order in float32 from 0, then powf(sum, 1.0f / p).  No kernel for
  LpPool-1, GlobalLpPool-1 and GlobalLpPool-22 (NOT_IMPLEMENTED).
* openvino's ONNX front end: Abs -> Power(p) -> AvgPool (exclude-pad=false; AvgPool-16 with
  ceil_torch when ceil_mode or dilations) -> Multiply(prod k) -> Power(float32(1/p)); its
  average divides by prod(k) as soon as any pad is non-zero (then x prod(k) gives the plain
  sum) but by the taps inside the input when all pads are 0, so a partial ceil window is
  scaled by prod(k) / taps (D20, as in onnx's reference evaluator and PyTorch).  GlobalLpPool:
  Split over C -> Abs/Power -> ReduceSum -> Sqrt/Power -> Concat.
* PyTorch: avg_pool(x.pow(p)) * prod(k), then .pow(1/p): the power is signed (no abs, D21),
  there is no padding, and ceil_mode scales a partial window as openvino does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..conventions import Convention
from ..errors import SpecError
from ..geometry import FLOAT_DTYPES, PoolParams, PoolPlan, infer_shape
from ..geometry import plan as window_plan
from ..model import Shape
from . import F32_EPS, Array, Explained, Family, FamilyParams, FamilyPlan, Values, plan_head
from .reduce import REDUCE_SUM, ReduceParams, ReducePlan

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec

Rule = Literal["onnxruntime", "openvino", "torch"]


@dataclass(frozen=True, kw_only=True)
class LpParams(FamilyParams):
    p: float
    window: PoolParams | None
    """The window geometry (kernel, strides, pads, dilations, auto_pad, ceil_mode); None for
    GlobalLpPool (the whole plane)."""
    runs_in_onnxruntime: bool = True
    """onnxruntime 1.32 has a kernel for this op version."""


@dataclass(frozen=True, kw_only=True)
class LpPlan(FamilyPlan):
    p: float
    rule: Rule
    window: PoolPlan
    """The window geometry as the convention computes it (a PoolPlan of the windows)."""
    average: PoolPlan | None = None
    """openvino: the AvgPool (exclude-pad=false) its front end writes."""
    sum_plan: ReducePlan | None = None
    """openvino, GlobalLpPool: the ReduceSum its front end writes."""

    @property
    def scale(self) -> int:
        """prod(kernel): the multiplier after the average (openvino, PyTorch)."""
        return math.prod(a.window for a in self.window.axes)


class Lp(Family):
    name = "lp"
    title = "Lp pooling"

    def __init__(self, global_op: bool = False) -> None:
        self.global_op = global_op

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> LpParams:
        from ..ops import onnx_attrs as onnx_ops

        attrs = dict(layer.attrs)
        known = onnx_ops.read_attrs(spec, attrs)
        raw_p = known.get("p", 2)
        try:
            p = float(raw_p)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise SpecError(
                f'{spec.label}: attribute "p" must be a number; got {raw_p!r}'
            ) from None
        runs = spec.since >= 2 and not (self.global_op and spec.since >= 22)
        notes = []
        if not runs:
            notes.append(
                f"onnxruntime 1.32 has no kernel for {spec.label} (NOT_IMPLEMENTED): compare "
                "uses onnx's reference evaluator"
            )
        if self.global_op:
            if rank is not None and rank < 3:
                raise SpecError(f"{spec.label} takes (N, C, *spatial); got rank {rank}")
            return LpParams(
                op=spec.label, p=p, window=None, runs_in_onnxruntime=runs, notes=tuple(notes)
            )
        if "kernel" not in known or known["kernel"] is None:
            raise SpecError(
                f'attribute "kernel_shape" is missing; irpool needs it for {spec.label}'
            )
        without_p = {k: v for k, v in attrs.items() if k != "p"}
        window = onnx_ops.params(
            replace(spec, attrs=tuple(a for a in spec.attrs if a.wire != "p")),
            without_p,
            rank,
            indices=False,
        )
        return LpParams(
            op=spec.label,
            p=p,
            window=replace(window, reduce="mean", notes=()),
            runs_in_onnxruntime=runs,
            notes=tuple(notes) + window.notes,
        )

    def _window(self, params: LpParams, shape: tuple[int, ...] | None) -> PoolParams:
        if params.window is not None:
            return params.window
        assert shape is not None
        n = len(shape) - 2
        return PoolParams(
            op=params.op,
            reduce="mean",
            window=tuple(shape[2:]),
            strides=(1,) * n,
            dilations=(1,) * n,
            pads=((0, 0),) * n,
        )

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        from ..model import Dim

        assert isinstance(params, LpParams)
        if params.window is None:
            if len(shape) < 3:
                raise SpecError(f"{params.op} takes (N, C, *spatial); got rank {len(shape)}")
            out = (shape[0], shape[1], *(Dim.of(1) for _ in shape[2:]))
            return out, tuple("global: the whole plane, 1" for _ in shape[2:])
        return infer_shape(params.window, shape, convention)

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> LpPlan:
        assert isinstance(params, LpParams)
        if dtype not in FLOAT_DTYPES:
            raise SpecError(f"{params.op} takes float data, not {dtype}")
        if len(shape) < 3:
            raise SpecError(f"{params.op} takes (N, C, *spatial); got rank {len(shape)}")
        base = self._window(params, shape)
        refused = None
        if convention.onnxruntime_kernels:
            rule: Rule = "onnxruntime"
            if not params.runs_in_onnxruntime:
                refused = f"onnxruntime 1.32 has no kernel for {params.op} (NOT_IMPLEMENTED)"
            elif dtype != "float32":
                refused = f"onnxruntime's {params.op} kernel takes float32, not {dtype}"
            geometry = base
        elif convention.onnx_front_end:
            rule = "openvino"
            geometry = replace(
                base,
                count_pad=True,
                rounding="ceil_torch" if base.rounding == "ceil" else base.rounding,
            )
        else:
            rule = "torch"
            if any(p for pair in base.pads for p in pair) or base.auto_pad != "explicit":
                raise SpecError(
                    "PyTorch's lp_pool has no padding: the torch convention has no meaning for "
                    f"{params.op} with pads or auto_pad"
                )
            if any(d != 1 for d in base.dilations):
                raise SpecError("PyTorch's lp_pool has no dilation")
            geometry = base
        windows = window_plan(geometry, shape, convention, dtype="float32")
        average = windows if rule == "openvino" and params.window is not None else None
        sum_plan = None
        if rule == "openvino" and params.window is None:
            as_sum = ReduceParams(
                op=params.op, kind="sum", axes=tuple(range(2, len(shape))), keep=True
            )
            sum_plan = REDUCE_SUM.plan(as_sum, shape, "float32", convention)
        return LpPlan(
            **plan_head(params, convention, shape, windows.output_shape, dtype, "float32", refused),
            p=params.p,
            rule=rule,
            window=windows,
            average=average,
            sum_plan=sum_plan,
        )

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, LpPlan)
        p = f"{plan.p:g}"
        if plan.rule == "onnxruntime":
            how = (
                f"(sum over the taps inside the input of float(pow(double |x|, {p})))^(1/{p}): "
                "float32 sum in row-major window order, powf(sum, 1.0f / p); padding and the "
                "ceil overhang add nothing (D20)"
            )
        elif plan.rule == "openvino":
            how = (
                f"openvino's conversion: Power(|x|, {p}) -> AvgPool exclude-pad=false -> "
                f"x {plan.scale} -> Power(float32(1/{p})); the average divides by "
                f"{plan.window.divisor_reason}"
            )
        else:
            how = (
                f"PyTorch's lp_pool: avg_pool(x^{p}) x {plan.scale}, then ^(1/{p}); the power "
                "is signed (D21); a partial ceil window is scaled by kernel / taps (D20)"
            )
        lines = [f"p = {p}; {how}"]
        data_axes = []
        for k, a in enumerate(plan.window.axes):
            lines.append(
                f"axis {k + 2}: size {a.size}, kernel {a.window}, stride {a.stride}, dilation "
                f"{a.dilation}, pads {a.pad_begin}, {a.pad_end} -> {a.out}"
            )
            data_axes.append(
                {
                    "axis": k + 2,
                    "size": a.size,
                    "kernel": a.window,
                    "stride": a.stride,
                    "dilation": a.dilation,
                    "pads": [a.pad_begin, a.pad_end],
                    "output": a.out,
                }
            )
        data = {
            "family": "lp",
            "reduce": "lp",
            "p": plan.p,
            "rule": plan.rule,
            "scale": plan.scale,
            "shape_rule": plan.window.shape_rule,
            "axes": data_axes,
        }
        notes = [plan.refused_by] if plan.refused_by else []
        return Explained(lines, data, notes)

    def allowance(
        self, plan: FamilyPlan, inputs: Sequence[Array | None], expected: Array
    ) -> Array | None:
        """Another order of the window sum, a reference that averages before it multiplies,
        or another pow: (taps + 1) * eps / p of the result, plus two units in the last
        place (measured: onnx's reference and PyTorch within 2 ulp of the float64 formula)."""
        assert isinstance(plan, LpPlan)
        taps = math.prod(a.window for a in plan.window.axes)
        value = np.abs(expected.astype(np.float64))
        with np.errstate(invalid="ignore", over="ignore"):
            ulp = np.abs(np.spacing(np.abs(expected.astype(np.float32)))).astype(np.float64)
            bound = value * (taps + 1) * F32_EPS / max(abs(plan.p), 1.0) + 2 * ulp
        return np.asarray(bound)


LP = Lp()
GLOBAL_LP = Lp(global_op=True)
