"""The windowed planner: a layer's PoolParams, an input shape, a dtype and a convention
resolved into the PoolPlan the kernel executes (`plan`, `for_dtype`), and the output shape on
interval dims (`infer_shape`).  The pure integer rules (window_rules) and the runtimes' refusals
(window_refusals) it builds on are re-exported here, where callers have always found them."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from . import conventions as conv
from .conventions import Convention, NanMax
from .errors import InputError, ShapeError, SpecError
from .model import Dim, Shape
from .window_refusals import _avx2_integer_jit as _avx2_integer_jit
from .window_refusals import _avx2_refusal as _avx2_refusal
from .window_refusals import _negative_pads_refusal as _negative_pads_refusal
from .window_refusals import _plugin_refusal as _plugin_refusal
from .window_refusals import _reference_kernel as _reference_kernel
from .window_refusals import _reference_kernel_axes as _reference_kernel_axes
from .window_refusals import _refuse_inexpressible as _refuse_inexpressible
from .window_refusals import _torch_zero_dims as _torch_zero_dims
from .window_refusals import check_zero_dims as check_zero_dims
from .window_refusals import torch_refusal as torch_refusal
from .window_rules import BF16_LOWEST as BF16_LOWEST
from .window_rules import F32_LOWEST as F32_LOWEST
from .window_rules import FLOAT_DTYPES as FLOAT_DTYPES
from .window_rules import INT_DTYPES as INT_DTYPES
from .window_rules import MLAS_POLICIES as MLAS_POLICIES
from .window_rules import AutoPad as AutoPad
from .window_rules import AxisPlan as AxisPlan
from .window_rules import Bf16Round as Bf16Round
from .window_rules import Divisor as Divisor
from .window_rules import Empty as Empty
from .window_rules import Pads as Pads
from .window_rules import PoolParams as PoolParams
from .window_rules import PoolPlan as PoolPlan
from .window_rules import Reduce as Reduce
from .window_rules import Rounding as Rounding
from .window_rules import ShapeRule as ShapeRule
from .window_rules import SumOrder as SumOrder
from .window_rules import _refuse_pads_over_kernel as _refuse_pads_over_kernel
from .window_rules import _term as _term
from .window_rules import auto_pads_formula as auto_pads_formula
from .window_rules import axis_formula as axis_formula
from .window_rules import axis_pads as axis_pads
from .window_rules import axis_plan as axis_plan
from .window_rules import axis_size_formula as axis_size_formula
from .window_rules import ceil_div as ceil_div
from .window_rules import ceil_div_array as ceil_div_array
from .window_rules import check_axis as check_axis
from .window_rules import check_params as check_params
from .window_rules import dilated as dilated
from .window_rules import out_dim as out_dim
from .window_rules import out_size as out_size
from .window_rules import pads_formula as pads_formula
from .window_rules import same_pads as same_pads
from .window_rules import shape_rule as shape_rule
from .window_rules import size_formula as size_formula
from .window_rules import torch_out_size as torch_out_size
from .window_rules import trunc_div as trunc_div


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
    data into a PoolPlan, under the convention and the target it carries (Convention.target:
    the machine modelled, never read from the CPU here).

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
    machine = cv.target
    assert machine is not None  # (conventions.get gives every convention its target)
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
    eigen = eigen and all(d == 1 for d in params.dilations)
    eigen = eigen and not machine.tf_uses_onednn(dtype_name)
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
    isa = machine.isa.name if cv.cpu_plugin_kernels else None
    keeps_integers = params.reduce == "max" and params.indices and indices_used
    in_float32 = cv.integers_in_float32 and not keeps_integers
    in_float32 = in_float32 and _pools_integers_in_float32(tuple(input_shape), tuple(axes), isa)
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
        bf16_flush=cv.cpu_plugin_kernels and machine.isa.bf16_instructions,
        bf16_round="half_up_if_odd" if isa == "avx2" else "nearest_even",
        plugin_isa=isa,
        indices_used=indices_used,
    )
    return for_dtype(base, dtype)


def _pools_integers_in_float32(
    input_shape: tuple[int, ...], axes: tuple[AxisPlan, ...], isa: str | None
) -> bool:
    """Whether openvino's CPU plugin pools an integer layer in float32 rather than on its
    integer jit: always with more than one channel; with one, where the jit cannot take it."""
    if input_shape[1] > 1:
        return True
    if isa == "avx2":
        # oneDNN's integer jit (jit_uni_i8i8_pooling) takes one channel only where it can
        # (_avx2_integer_jit); elsewhere the reference kernel computes in float32
        return not _avx2_integer_jit(input_shape, axes, 4)
    # AVX-512 (with or without AVX512_BF16 or AMX): one channel stays on the integer jit
    # unless the layer needs oneDNN's reference kernel (a dilation, or a window wholly in
    # the padding or the ceil overhang), which pools in float32 (measured on AVX-512 and on
    # AVX-512 with AMX: an empty window's INT32_MAX comes back as 2147483520)
    return _reference_kernel_axes(axes)


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
