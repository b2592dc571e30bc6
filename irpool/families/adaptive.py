"""Adaptive pooling: OpenVINO AdaptiveAvgPool-8 and AdaptiveMaxPool-8 (PyTorch's
adaptive_{avg,max}_pool{1,2,3}d).

The output size of each spatial axis is given (the second input, a Const in converted models);
output i of an axis of In inputs and Out outputs pools the window

    start = floor(i * In / Out),  end = ceil((i + 1) * In / Out)   (half-open)

so windows overlap when Out does not divide In, and hold one or two taps when Out > In.
Measured with openvino 2026.4.1 (CPU) and torch 2.13 (docs/semantics.md, "Adaptive pooling"):

* openvino's CPU plugin computes `end` as ceil(float32((i + 1) * In) / Out) in float32, equal
  to the exact ceiling while (i + 1) * In < 2^24; it computes in float32 only (f16/bf16 rounded
  once at the end, f64 saturated to float32, i64 wrapped to i32, integers rounded back half to
  even and saturated); an average sums the taps in row-major window order from +0.0, then
  divides once by the window volume; a maximum starts at the window's first tap and takes a
  tap only when it is strictly larger (ties keep the first, a NaN tap never wins, a NaN first
  tap stays); indices are flat within the (N, C) plane; index_element_type=i64 does not compile
  ("CPU plugin does not support i64 for use with oneDNN"); a zero-size spatial input gives an
  uninitialised output (D29).
* PyTorch uses the exact integer ceiling; an average divides by each axis's window length in
  turn (sum / kd / kh / kw, one rounding each, D32); a maximum starts at -inf with the first
  tap's index and takes a tap that is larger or NaN (the last NaN wins, D33); indices int64;
  integer inputs are refused.
* ONNX has no adaptive op: the onnx convention does not apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from ..conventions import Convention
from ..errors import ShapeError, SpecError
from ..geometry import FLOAT_DTYPES, INT_DTYPES
from ..model import Dim, Shape
from . import Array, Explained, Family, FamilyParams, FamilyPlan, Values, plan_head
from .reduce import REDUCE_MAX, REDUCE_MEAN, ReduceParams, ReducePlan

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec

Bins = Literal["float32_ceil", "exact"]
Division = Literal["once", "per_axis"]
MaxRule = Literal["first_strict", "nan_last"]


@dataclass(frozen=True, kw_only=True)
class AdaptiveParams(FamilyParams):
    reduce: Literal["mean", "max"]
    sizes: tuple[int, ...] | None
    """The output size per spatial axis (the second input's value); None when it is not a
    constant of the file."""
    indices: bool = False
    index_dtype: str = "int64"
    indices_used: bool = True
    """Whether the model reads the indices output (openvino turns an AdaptiveMaxPool to 1x1
    whose indices nobody reads into a ReduceMax)."""


@dataclass(frozen=True)
class AdaptiveAxis:
    """One spatial axis: input size, output size and the rule of its window ends; the windows
    themselves are computed from these on demand (an axis may have very many)."""

    size: int
    out: int
    rule: Bins = "exact"

    def windows(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(starts, ends) of every window, half-open."""
        return bins(self.size, self.out, self.rule)

    @property
    def starts(self) -> npt.NDArray[np.int64]:
        return self.windows()[0]

    @property
    def ends(self) -> npt.NDArray[np.int64]:
        return self.windows()[1]

    @property
    def lengths(self) -> npt.NDArray[np.int64]:
        starts, ends = self.windows()
        return np.asarray(ends - starts)

    @property
    def longest(self) -> int:
        lengths = self.lengths
        return int(lengths.max()) if lengths.size else 0


@dataclass(frozen=True, kw_only=True)
class AdaptivePlan(FamilyPlan):
    reduce: Literal["mean", "max"]
    axes: tuple[AdaptiveAxis, ...]
    bins: Bins
    division: Division
    """Divide a window sum once by its volume (openvino) or by each axis's length in turn
    (PyTorch)."""
    max_rule: MaxRule
    """first_strict: start at the first tap, take a strictly larger one (openvino);
    nan_last: start at -inf, take a larger or NaN tap (PyTorch)."""
    indices: bool
    index_dtype: str
    narrow_64bit: bool
    """f64 saturated to float32 and 64-bit integers wrapped to 32 bits before pooling."""
    as_reduce: ReducePlan | None = None
    """openvino: every output size 1 (and, for max, the indices unread): its CPU plugin runs
    the layer as ReduceMean / ReduceMax over the spatial axes (transformation
    AdaptivePoolToReduce; measured: its summation order, D17's NaN rule and ReduceMean's
    integer truncation apply)."""


@dataclass(frozen=True)
class AdaptiveRules:
    """What one convention does with an adaptive layer (the measurements are in the module
    docstring)."""

    bins: Bins
    division: Division
    max_rule: MaxRule
    float32_only: bool
    integers: bool
    index_dtype: str | None
    """The index type the runtime gives (None: the layer's index_element_type)."""


RULES = {
    "openvino": AdaptiveRules("float32_ceil", "once", "first_strict", True, True, None),
    "torch": AdaptiveRules("exact", "per_axis", "nan_last", False, False, "int64"),
}


def bins(size: int, out: int, rule: Bins) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(starts, ends) of the windows of one axis under a bin rule: start = floor(i * In / Out),
    end = ceil((i + 1) * In / Out), exactly or (openvino) in float32."""
    i = np.arange(out, dtype=np.int64)
    starts = (i * size) // out
    if rule == "exact":
        ends = -((-(i + 1) * size) // out)
    else:
        quotient = ((i + 1) * size).astype(np.float32) / np.float32(out)
        ends = np.ceil(quotient.astype(np.float32)).astype(np.int64)
    return np.asarray(starts), np.asarray(ends)


WINDOWS_SHOWN = 4096
"""explain --json lists at most this many windows per axis (windows_shown says how many)."""


def _count(n: int) -> str:
    return f"{n} window" + ("" if n == 1 else "s")


def _check_sizes(params: AdaptiveParams, shape: tuple[int, ...]) -> None:
    """Refuse an input rank other than 3 to 5, and an output size that is computed, has the
    wrong length or a negative value."""
    if not 3 <= len(shape) <= 5:
        raise SpecError(f"Expected a 3D, 4D or 5D tensor for the input; got rank {len(shape)}")
    if params.sizes is None:
        raise SpecError(
            f"{params.op}: the output size (input 1) is computed, not a constant; run the "
            "whole model"
        )
    if len(params.sizes) != len(shape) - 2:
        raise SpecError(
            "Output shape for spatial dimension not compatible with data shape: "
            f"{list(params.sizes)} for a rank-{len(shape)} input"
        )
    if any(s < 0 for s in params.sizes):
        raise SpecError(
            f"output size {list(params.sizes)} has a negative value: openvino's shape "
            "inference gives ? and its CPU plugin a 0-size dim; expected sizes >= 0"
        )


class Adaptive(Family):
    name = "adaptive"
    title = "adaptive pooling"
    value_inputs = (1,)
    conventions = ("openvino", "torch")

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> AdaptiveParams:
        from ..ops.registry import read_ir_attrs

        attrs = read_ir_attrs(spec, layer.data)
        notes = []
        unknown = sorted(set(layer.data) - spec.wire_names())
        if unknown:
            notes.append(f"attribute(s) {', '.join(unknown)} not part of {spec.label}; ignored")
        if rank is not None and not 3 <= rank <= 5:
            raise SpecError(f"Expected a 3D, 4D or 5D tensor for the input; got rank {rank}")
        sizes = values.get(1)
        if sizes is not None and rank is not None and len(sizes) != rank - 2:
            raise SpecError(
                "Output shape for spatial dimension not compatible with data shape: the output "
                f"size {list(sizes)} has {len(sizes)} value(s); expected {rank - 2}, one per "
                f"spatial axis of the rank-{rank} input"
            )
        if sizes is None:
            notes.append("the output size (input 1) is not a constant of the file")
        index = str(attrs.get("index_element_type", "i64"))
        if spec.outputs == 2 and index == "i64":
            notes.append(
                "index_element_type=i64: openvino's CPU plugin refuses to compile it ('CPU "
                "plugin does not support i64 for use with oneDNN'); its PyTorch front end writes "
                "i32 and a Convert"
            )
        return AdaptiveParams(
            op=spec.label,
            reduce="max" if spec.outputs == 2 else "mean",
            sizes=sizes,
            indices=spec.outputs == 2,
            index_dtype="int32" if index == "i32" else "int64",
            notes=tuple(notes),
        )

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        assert isinstance(params, AdaptiveParams)
        if not 3 <= len(shape) <= 5:
            raise SpecError(f"Expected a 3D, 4D or 5D tensor for the input; got rank {len(shape)}")
        dims: list[Dim] = [shape[0], shape[1]]
        formulas = []
        for i, n in enumerate(shape[2:]):
            if params.sizes is None:
                dims.append(Dim.dynamic())
                formulas.append("the output size (input 1) is not a constant: ?")
                continue
            out = params.sizes[i]
            if out < 0:
                dims.append(Dim.dynamic())
                formulas.append(
                    f"output size {out} (input 1) is negative: openvino's shape inference "
                    "gives ? (its CPU plugin a 0-size dim)"
                )
                continue
            dims.append(Dim.of(out))
            windows = (
                f"windows start = floor(i * {n.lo} / {out}), end = ceil((i + 1) * {n.lo} / {out})"
                if n.is_static
                else f"the input size {n} only moves the windows"
            )
            formulas.append(
                f"adaptive: output size = input 1 value [{i}] = {out} (the input size is not "
                f"used); {windows}"
            )
        return tuple(dims), tuple(formulas)

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> AdaptivePlan:
        assert isinstance(params, AdaptiveParams)
        rules = RULES.get(convention.name)
        if rules is None:
            raise SpecError(
                f"ONNX has no adaptive pooling op: the {convention.name} convention has no "
                f"meaning for {params.op} (openvino and torch do)"
            )
        _check_sizes(params, shape)
        assert params.sizes is not None
        if dtype not in FLOAT_DTYPES + INT_DTYPES:
            raise SpecError(f"{params.op} takes numeric data, not {dtype}")
        if dtype in INT_DTYPES and not rules.integers:
            kind = "avg" if params.reduce == "mean" else "max"
            raise SpecError(
                f'{convention.title} refuses integer data: "adaptive_{kind}_pool'
                f'{len(shape) - 2}d" not implemented for {dtype}'
            )
        out_sizes = params.sizes
        if any(n == 0 for n in shape[2:]) and any(o > 0 for o in out_sizes) and shape[0] > 0:
            where = "openvino leaves the output uninitialised (D29)"
            if convention.torch_checks:
                where = (
                    "PyTorch refuses it ('Expected input to have non-zero size for non-batch "
                    "dimensions')"
                )
            raise ShapeError(
                f"input {list(shape)} has a zero-size spatial axis: its windows are empty; {where}"
            )
        axes = tuple(
            AdaptiveAxis(n, o, rules.bins) for n, o in zip(shape[2:], out_sizes, strict=True)
        )
        index_dtype = rules.index_dtype or params.index_dtype
        refused = None
        if convention.cpu_plugin_kernels and params.indices and index_dtype == "int64":
            refused = (
                "openvino's CPU plugin does not compile AdaptiveMaxPool-8 with "
                "index_element_type=i64 ('CPU plugin does not support i64 for use with oneDNN')"
            )
        if rules.float32_only:
            compute = "float32"
        else:
            compute = "float64" if dtype == "float64" else "float32"
        as_reduce = None
        global_ = all(o == 1 for o in out_sizes)
        if (
            convention.cpu_plugin_kernels
            and global_
            and not (params.indices and params.indices_used)
        ):
            reduction = REDUCE_MAX if params.reduce == "max" else REDUCE_MEAN
            spatial = tuple(range(2, len(shape)))
            as_params = ReduceParams(op=params.op, kind=params.reduce, axes=spatial, keep=True)
            as_reduce = reduction.plan(as_params, shape, dtype, convention)
        out = (*shape[:2], *out_sizes)
        return AdaptivePlan(
            **plan_head(params, convention, shape, out, dtype, compute, refused),
            reduce=params.reduce,
            axes=axes,
            bins=rules.bins,
            division=rules.division,
            max_rule=rules.max_rule,
            indices=params.indices,
            index_dtype=index_dtype,
            narrow_64bit=rules.float32_only,
            as_reduce=as_reduce,
        )

    def output_types(self, params: FamilyParams, input_type: str | None) -> list[str | None]:
        assert isinstance(params, AdaptiveParams)
        if not params.indices:
            return [input_type]
        return [input_type, "i32" if params.index_dtype == "int32" else "i64"]

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, AdaptivePlan)
        lines = []
        data_axes = []
        for k, a in enumerate(plan.axes):
            rule = (
                f"start = floor(i * {a.size} / {a.out}), end = ceil((i + 1) * {a.size} / {a.out})"
            )
            if plan.bins == "float32_ceil":
                rule += " (end computed in float32, exact while (i + 1) * In < 2^24)"
            starts, ends = a.windows()
            lengths = ends - starts
            overlap = int(np.count_nonzero(starts[1:] < ends[:-1]))
            span = f"{lengths.min()}..{lengths.max()}" if lengths.size else "-"
            lines.append(
                f"axis {k + 2}: input {a.size}, output {a.out} ({_count(a.out)}); window lengths "
                f"{span}; {overlap} overlapping neighbour(s)"
            )
            lines.append(f"  {rule}")
            shown = list(range(a.out)) if a.out <= 8 else [0, 1, 2, a.out - 2, a.out - 1]
            for i in shown:
                lines.append(f"  window {i}: input [{starts[i]}, {ends[i]})")
                if a.out > 8 and i == 2:
                    lines.append(f"  ... ({a.out - 5} more)")
            data_axes.append(
                {
                    "axis": k + 2,
                    "size": a.size,
                    "output": a.out,
                    "rule": rule,
                    "windows": [
                        [int(s), int(e)]
                        for s, e in zip(starts[:WINDOWS_SHOWN], ends[:WINDOWS_SHOWN], strict=True)
                    ],
                    "windows_shown": min(a.out, WINDOWS_SHOWN),
                    "lengths": [int(lengths.min()), int(lengths.max())] if lengths.size else [0, 0],
                    "overlapping": overlap,
                }
            )
        if plan.reduce == "mean":
            how = (
                "the taps summed in row-major window order from +0.0, then divided once by the "
                "window volume"
                if plan.division == "once"
                else "the taps summed in row-major window order, then divided by each axis's "
                "window length in turn (sum / kd / kh / kw)"
            )
        else:
            how = (
                "the first tap, replaced only by a strictly larger one (ties keep the first; a "
                "NaN tap never wins, a NaN first tap stays); indices flat within the (N, C) plane"
                if plan.max_rule == "first_strict"
                else "-inf, replaced by a larger or NaN tap (the last NaN wins); indices flat "
                "within the (N, C) plane"
            )
        lines.insert(0, f"each output: {how}; computed in {plan.compute}")
        if plan.as_reduce is not None:
            from .reduce import describe_order

            lines.insert(
                1,
                "every output size is 1: openvino's CPU plugin runs the layer as "
                f"{'ReduceMax' if plan.reduce == 'max' else 'ReduceMean'} over the spatial axes "
                f"(AdaptivePoolToReduce): {describe_order(plan.as_reduce)}",
            )
        notes = []
        if plan.refused_by:
            notes.append(plan.refused_by)
        data = {
            "family": "adaptive",
            "reduce": plan.reduce,
            "bins": plan.bins,
            "division": plan.division,
            "max_rule": plan.max_rule if plan.reduce == "max" else None,
            "index_dtype": plan.index_dtype if plan.indices else None,
            "compute": plan.compute,
            "as_reduce": plan.as_reduce is not None,
            "axes": data_axes,
        }
        return Explained(lines, data, notes)

    def allowance(
        self, plan: FamilyPlan, inputs: Sequence[Array | None], expected: Array
    ) -> Array | None:
        """Exact, except where openvino runs the layer as a ReduceMean (every size 1): its
        summation order inside a real network may not be the planar one (see reduce)."""
        assert isinstance(plan, AdaptivePlan)
        if plan.as_reduce is None or plan.reduce != "mean":
            return None
        return REDUCE_MEAN.allowance(plan.as_reduce, inputs, expected)


ADAPTIVE = Adaptive()
