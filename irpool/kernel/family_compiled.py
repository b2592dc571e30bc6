"""The pooling families (irpool/families/) prepared once: a plan's compiled kernel where numba
is installed and a kernel of irpool/kernel/numba_family.py serves the plan, else the numpy
core (kernel.family.execute).  Both give the same bits; the numpy core is the reference the
compiled kernels are tested against (tests/test_family_compiled.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import UsageError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan
from ..families.lp import LpPlan
from ..families.reduce import ReducePlan
from ..families.unpool import UnpoolPlan
from ..geometry import PoolPlan
from .adaptive import _compute_input, _divide, _positions, store_rounded
from .compiled import NumbaModule
from .family import execute
from .reduction import (
    INT32_MIN,
    LOWEST32,
    _bf16_half_up_if_odd,
    _ov_output,
    _scalar_mask,
    _to_float32,
    ov_float32,
)

Array = npt.NDArray[Any]
Kernel = Callable[[Sequence[Array | None]], list[Array]]


FLOATS = ("float32", "float16", "bfloat16", "float64")
INTEGERS = ("int8", "uint8", "int32", "int64")


def why_not(plan: FamilyPlan) -> str | None:
    """Why no compiled kernel computes this plan (None when one does)."""
    if 0 in plan.input_shape or 0 in plan.output_shape:
        return "the input or the output is empty"
    if isinstance(plan, ReducePlan):
        return _reduce_why_not(plan)
    if isinstance(plan, AdaptivePlan):
        if not 1 <= len(plan.axes) <= 3:
            return f"{len(plan.axes)} spatial axes: it computes 1 to 3"
        if plan.compute not in ("float32", "float64"):
            return f"compute type {plan.compute}"
        if any(a.longest < 1 for a in plan.axes):
            return "an empty window"
        return None
    if isinstance(plan, LpPlan):
        if not 1 <= len(plan.window.axes) <= 3:
            return f"{len(plan.window.axes)} spatial axes: it computes 1 to 3"
        return None
    if isinstance(plan, UnpoolPlan):
        return None
    return f"no compiled kernel for a {type(plan).__name__} yet"


def _compiled(plan: FamilyPlan, threads: int) -> Kernel:
    if isinstance(plan, ReducePlan):
        return _ReduceKernel(plan)
    if isinstance(plan, AdaptivePlan):
        return _AdaptiveKernel(plan)
    if isinstance(plan, LpPlan):
        return _LpKernel(plan, threads)
    if isinstance(plan, UnpoolPlan):
        return _UnpoolKernel(plan)
    raise UsageError(f"no compiled kernel for {type(plan).__name__}")


kernels = NumbaModule("numba_family")
"""numba_family, imported on first use (as compiled.py's kernels)."""


# -- reductions -------------------------------------------------------------------------------


def _reduce_why_not(plan: ReducePlan) -> str | None:
    if plan.order != "ov_jit":
        return f"the {plan.order} order: it computes openvino's JIT order"
    if plan.dtype not in FLOATS + INTEGERS:
        return f"{plan.dtype} data: it computes float and int8/uint8/int32/int64 data"
    if plan.dtype in INTEGERS and not plan.chunk >= plan.lanes > 0:
        return (
            "integer data outside the W-chunk schedule (the plugin stores its running value "
            "into the integer output mid-fold)"
        )
    if plan.two_stage:
        return "the two-stage schedule (C, D and W reduced, H kept)"
    if plan.count == 0:
        return "an empty reduction"
    if plan.lanes not in (8, 16):
        return f"{plan.lanes} lanes"
    return None


def _offsets(dims: Sequence[int], strides: Sequence[int]) -> Array:
    """Flat offsets of every index over `dims` (row-major) with these element strides."""
    off = np.zeros(1, np.int64)
    for d, st in zip(dims, strides, strict=True):
        off = (off[:, None] + np.arange(d, dtype=np.int64)[None, :] * st).reshape(-1)
    return off


class _ReduceKernel:
    """A ReducePlan in openvino's JIT order on float data (kernel/reduction.py _openvino): the
    float32 values folded by numba_family's kernels, the conversions around them the numpy
    core's own."""

    def __init__(self, plan: ReducePlan) -> None:
        self.plan = plan
        self.k = kernels()
        view, red = plan.view, plan.reduced
        strides = [int(np.prod(view[i + 1 :], dtype=np.int64)) for i in range(5)]
        keep = [i for i in range(5) if not red[i]]
        reduced = [i for i in range(5) if red[i]]
        self.is_max = plan.kind == "max"
        self.pre = {"l1": 1, "l2": 2}.get(plan.kind, 0)
        self.post = {"mean": 1, "l2": 2}.get(plan.kind, 0)
        self.lane_init = np.float32(LOWEST32 if self.is_max else 0.0)
        self.dst_init = self.lane_init
        self.nout = int(np.prod([view[i] for i in keep], dtype=np.int64))
        self.store, self.packed = 0, np.zeros(self.nout, np.bool_)
        if plan.dtype in INTEGERS:
            # the plugin's integer output buffer (kernel/reduction.py _OvFold)
            self.store = {"int8": 1, "uint8": 2}.get(plan.dtype, 3)
            lowest = {"int8": -128, "uint8": 0}.get(plan.dtype, INT32_MIN)
            self.lane_init = np.float32(INT32_MIN if self.is_max else 0)
            self.dst_init = np.float32(lowest if self.is_max else 0)
            if plan.dtype == "uint8":
                scalar = np.ones(self.nout) if plan.u8_vector_packs else _scalar_mask(plan)
                self.packed = np.ascontiguousarray(scalar, dtype=np.bool_)
        if plan.chunk:
            inner = [4, 3] if plan.chunk == view[3] * view[4] and red[3] else [4]
            outer = [i for i in reduced if i not in inner]
            self.obase = _offsets([view[i] for i in keep], [strides[i] for i in keep])
            self.cbase = _offsets([view[i] for i in outer], [strides[i] for i in outer])
            self.scalar = plan.chunk < plan.lanes
            if self.scalar:
                self.smode = np.ascontiguousarray(_scalar_mask(plan), dtype=np.bool_)
            self.mode = "scalar" if self.scalar else "chunks"
            if not self.is_max and self.scalar:
                self.mode = "sequential"
        else:
            self.mode = "sequential"
        if self.mode == "sequential":
            run = 1
            for i in reversed(keep):
                if strides[i] != run:
                    break
                run *= view[i]
            runs = [i for i in keep if strides[i] >= run]
            self.run = run
            self.obase = _offsets([view[i] for i in runs], [strides[i] for i in runs])
            self.roff = _offsets([view[i] for i in reduced], [strides[i] for i in reduced])
        self.f32 = np.dtype(np.float32) if plan.dtype == "float32" else None
        self.shape, self.out_shape = tuple(plan.input_shape), tuple(plan.output_shape)
        self._warm()

    def _warm(self) -> None:
        x = np.zeros(int(np.prod(self.plan.view)), np.float32)
        self._fold(x)

    def _fold(self, xf: Array) -> Array:
        k, plan = self.k, self.plan
        out = np.empty(self.nout, np.float32)
        post, count = self.post, plan.count
        if self.mode == "chunks":
            k.reduce_chunks(
                xf,
                self.obase,
                self.cbase,
                plan.chunk,
                plan.lanes,
                self.is_max,
                self.pre,
                self.lane_init,
                self.dst_init,
                post,
                count,
                self.store,
                self.packed,
                out,
            )
        elif self.mode == "scalar":
            k.reduce_scalar_chunks(
                xf,
                self.obase,
                self.cbase,
                plan.chunk,
                self.pre,
                self.lane_init,
                self.lane_init,
                self.smode,
                post,
                count,
                out,
            )
        else:
            k.reduce_sequential(
                xf,
                self.obase,
                self.run,
                self.roff,
                self.is_max,
                self.pre,
                self.lane_init,
                post,
                count,
                out,
            )
        return out

    def __call__(self, inputs: Sequence[Array | None]) -> list[Array]:
        x = inputs[0]
        assert x is not None
        if x.dtype is self.f32 and x.shape == self.shape:
            # the hot path: float32 data of the planned shape
            return [self._fold(np.ascontiguousarray(x).reshape(-1)).reshape(self.out_shape)]
        plan = self.plan
        x = _planned_input(plan, inputs)
        if x is None:
            return execute(plan, inputs)  # its errors
        if self.store:
            xf, acc_dtype = ov_float32(x)
            res = self._fold(np.ascontiguousarray(xf).reshape(-1)).reshape(plan.output_shape)
            return [_ov_output(res, plan, x.dtype, acc_dtype)]
        xf = x if x.dtype == np.float32 else _to_float32(x)
        res = self._fold(np.ascontiguousarray(xf).reshape(-1)).reshape(plan.output_shape)
        if x.dtype == np.float64:
            big = float(np.finfo(np.float32).max)
            return [np.asarray(np.clip(res.astype(np.float64), -big, big))]
        if x.dtype.name == "bfloat16" and plan.bf16_round == "half_up_if_odd":
            return [_bf16_half_up_if_odd(res).view(x.dtype)]
        return [res if x.dtype == np.float32 else np.asarray(res.astype(x.dtype))]


class PreparedFamily:
    """A family plan prepared once: `f(inputs)` is `kernel.family.execute(plan, inputs)`, bit
    for bit; `path` is "compiled" or "numpy" and `why` says why."""

    def __init__(self, plan: FamilyPlan, threads: int = 1, path: str | None = None) -> None:
        from . import compiled

        self.plan = plan
        chosen = compiled.setting() if path is None else path
        if chosen not in compiled.SETTINGS:
            raise UsageError(f"kernel path {chosen!r}: expected auto, numpy or compiled")
        reason = why_not(plan)
        self._kernel: Kernel | None = None
        if chosen == "numpy":
            self.why = "numpy core"
        elif not compiled.installed():
            if chosen == "compiled":
                raise UsageError("the compiled kernel path needs numba: pip install 'irpool[fast]'")
            self.why = "numpy core (numba is not installed: pip install 'irpool[fast]')"
        elif reason is not None:
            self.why = f"numpy core (the compiled path does not serve this plan: {reason})"
        else:
            self._kernel = _compiled(plan, threads)
            self.why = "compiled (numba), bit-identical to the numpy core"
        self.path = "compiled" if self._kernel is not None else "numpy"

    def __call__(self, inputs: Sequence[Array | None]) -> list[Array]:
        if self._kernel is not None:
            return self._kernel(inputs)
        return execute(self.plan, inputs)

    def __repr__(self) -> str:
        return (
            f"<PreparedFamily {type(self.plan).__name__} {list(self.plan.input_shape)}: {self.why}>"
        )


def prepare(plan: FamilyPlan, threads: int = 1, path: str | None = None) -> PreparedFamily:
    return PreparedFamily(plan, threads, path)


# -- adaptive pooling -------------------------------------------------------------------------


def _planned_input(plan: FamilyPlan, inputs: Sequence[Array | None]) -> Array | None:
    """The input when it has the dtype and shape the kernel was prepared for, else None (the
    numpy core then runs the plan, and raises its errors)."""
    x = inputs[0]
    assert x is not None
    if tuple(x.shape) != plan.input_shape or _dtype_name(x.dtype) != plan.dtype:
        return None
    return x


_NAMES: dict[np.dtype[Any], str] = {}


def _dtype_name(dtype: np.dtype[Any]) -> str:
    """dtype.name, looked up once per dtype (numpy computes it in Python, slowly)."""
    name = _NAMES.get(dtype)
    if name is None:
        name = _NAMES[dtype] = str(dtype.name)
    return name


class _WindowLoop:
    """numba_family's window loop (`adaptive`) over per-axis tap tables (positions clamped into
    the input, and whether each lies inside): what the adaptive and the Lp kernels share."""

    def __init__(
        self,
        tables: list[tuple[Array, Array]],
        input_shape: Sequence[int],
        output_shape: Sequence[int],
    ) -> None:
        self.k = kernels()
        lead = 3 - len(tables)
        self.tables = [(np.zeros((1, 1), np.int64), np.ones((1, 1), np.bool_))] * lead + tables
        spatial = [1] * lead + list(input_shape[2:])
        self.s0, self.s1 = spatial[1] * spatial[2], spatial[2]
        self.plane = int(np.prod(input_shape[2:], dtype=np.int64))
        self.planes = int(np.prod(input_shape[:2], dtype=np.int64))
        self.count = int(np.prod(output_shape, dtype=np.int64))

    def _window_loop(
        self, x: Array, is_max: bool, first_strict: bool, sums: bool
    ) -> tuple[Array, Array]:
        """Each window's max (with its index) or sum, over the flat input `x`."""
        (p0, v0), (p1, v1), (p2, v2) = self.tables
        out = np.empty(self.count, x.dtype)
        idx = np.empty(self.count, np.int64)
        self.k.adaptive(
            np.ascontiguousarray(x).reshape(-1),
            self.planes,
            self.plane,
            p0,
            v0,
            p1,
            v1,
            p2,
            v2,
            self.s0,
            self.s1,
            is_max,
            first_strict,
            x.dtype.type(0),
            out,
            idx,
            sums,
        )
        return out, idx


class _AdaptiveKernel(_WindowLoop):
    """An AdaptivePlan (kernel/adaptive.py adaptive_pool): the window loop in numba_family's
    kernel, the conversions around it the numpy core's own; a layer openvino runs as a
    reduction (as_reduce) on the reduction kernel."""

    def __init__(self, plan: AdaptivePlan) -> None:
        self.plan = plan
        self.reduce: Kernel | None = None
        if plan.as_reduce is not None:
            self.reduce = (
                _ReduceKernel(plan.as_reduce)
                if why_not(plan.as_reduce) is None
                else (lambda ins: execute(plan.as_reduce, ins))  # type: ignore[arg-type]
            )
        tables = []
        for a in plan.axes:
            pos, valid = _positions(a)
            tables.append((np.ascontiguousarray(pos, np.int64), np.ascontiguousarray(valid)))
        super().__init__(tables, plan.input_shape, plan.output_shape)
        self.cdt = np.dtype(plan.compute)
        if plan.as_reduce is None or plan.indices:
            self._loop(np.zeros(self.planes * self.plane, self.cdt))

    def _loop(self, xc: Array) -> tuple[Array, Array]:
        plan = self.plan
        return self._window_loop(xc, plan.reduce == "max", plan.max_rule == "first_strict", False)

    def __call__(self, inputs: Sequence[Array | None]) -> list[Array]:
        plan = self.plan
        x = _planned_input(plan, inputs)
        if x is None:
            return execute(plan, inputs)  # its errors
        if plan.as_reduce is not None and not plan.indices:
            assert self.reduce is not None
            return self.reduce([x])
        xc = np.ascontiguousarray(_compute_input(x, plan)).reshape(-1)
        acc, idx = self._loop(xc)
        shape = plan.output_shape
        spatial = acc.reshape(-1, *shape[2:])
        if plan.reduce == "mean":
            with np.errstate(invalid="ignore", over="ignore"):
                spatial = _divide(spatial.astype(self.cdt), plan)
        result = np.asarray(spatial, dtype=self.cdt).reshape(shape)
        if x.dtype.kind in "iu":
            values = store_rounded(result, x.dtype)
        else:
            values = np.asarray(result.astype(x.dtype))
        if self.reduce is not None:
            values = self.reduce([x])[0]
        if plan.indices:
            return [values, np.asarray(idx.reshape(shape).astype(plan.index_dtype))]
        return [values]


# -- Lp pooling -------------------------------------------------------------------------------


def _window_tables(plan: PoolPlan) -> list[tuple[Array, Array]]:
    """Per axis: each output's tap positions clamped into the input and whether the tap lies
    inside (kernel/lp.py _taps)."""
    tables = []
    for a in plan.axes:
        out = np.arange(a.out, dtype=np.int64)[:, None] * a.stride - a.pad_begin
        pos = out + np.arange(a.window, dtype=np.int64)[None, :] * a.dilation
        valid = (pos >= 0) & (pos < a.size)
        tables.append(
            (np.ascontiguousarray(np.clip(pos, 0, max(a.size - 1, 0))), np.ascontiguousarray(valid))
        )
    return tables


class _LpKernel(_WindowLoop):
    """An LpPlan (kernel/lp.py lp_pool): the window sums in numba_family's window loop, the
    averages and reductions of openvino's decomposition prepared once (PreparedPool, the
    reduction kernel); the powers are the numpy core's own (libm.py)."""

    def __init__(self, plan: LpPlan, threads: int) -> None:
        from .lp import window_counts
        from .prepared import PreparedPool

        self.plan = plan
        window = plan.window
        super().__init__(_window_tables(window), window.input_shape, window.output_shape)
        self.average: PreparedPool | None = None
        self.sum: Kernel | None = None
        if plan.rule == "openvino":
            if plan.sum_plan is not None:
                sp = plan.sum_plan
                self.sum = (
                    _ReduceKernel(sp) if why_not(sp) is None else (lambda ins: execute(sp, ins))
                )
            else:
                assert plan.average is not None
                self.average = PreparedPool(plan.average, threads)
        else:
            self._sums(np.zeros(self.planes * self.plane, np.float32))
        if plan.rule == "torch":
            self.counts = np.maximum(window_counts(window), 1).astype(np.float32)

    def _sums(self, t: Array) -> Array:
        out, _ = self._window_loop(t, False, False, True)
        return out.reshape(self.plan.window.output_shape)

    def __call__(self, inputs: Sequence[Array | None]) -> list[Array]:
        from .libm import pow_to_float, power_rules, powf
        from .lp import _torch_pow

        plan = self.plan
        x = _planned_input(plan, inputs)
        if x is None:
            return execute(plan, inputs)  # its errors
        f32 = np.float32
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if plan.rule == "onnxruntime":
                terms = pow_to_float(np.abs(x.astype(f32)), plan.p)
                y = powf(self._sums(terms), float(f32(1) / f32(plan.p)))
            elif plan.rule == "openvino":
                terms = power_rules(np.abs(x.astype(f32)), plan.p)
                if self.sum is not None:
                    m = self.sum([terms])[0]
                else:
                    assert self.average is not None
                    m, _ = self.average.run(terms)
                    m = np.asarray((m * f32(plan.scale)).astype(f32))
                y = m if plan.p == 1 else power_rules(m, float(f32(1.0 / plan.p)))
            else:
                terms = _torch_pow(x.astype(f32), plan.p)
                mean = np.asarray((self._sums(terms) / self.counts).astype(f32))
                y = _torch_pow(np.asarray((mean * f32(plan.scale)).astype(f32)), 1.0 / plan.p)
        return [np.asarray(np.asarray(y).astype(x.dtype))]


# -- max unpooling ----------------------------------------------------------------------------


class _UnpoolKernel:
    """An UnpoolPlan (kernel/unpool.py max_unpool): the scatter in numba_family's loops; any
    input the numpy core would refuse goes to it, for its checks and words."""

    def __init__(self, plan: UnpoolPlan) -> None:
        self.plan = plan
        self.k = kernels()
        self.size = int(np.prod(plan.output_shape, dtype=np.int64))
        self.planes = int(np.prod(plan.input_shape[:2], dtype=np.int64))
        self.plane = int(np.prod(plan.output_shape[2:], dtype=np.int64))
        self.per = int(np.prod(plan.input_shape[2:], dtype=np.int64))
        self._scatter(np.zeros(self.planes * self.per, np.float32), np.zeros(0, np.int64))

    def _scatter(self, x: Array, idx: Array) -> tuple[Array, int]:
        y = np.zeros(self.size, x.dtype)
        if idx.size != x.size:
            return y, 0
        if self.plan.layout == "tensor":
            bad = self.k.unpool_tensor(x, idx, self.size, y)
        else:
            bad = self.k.unpool_planes(x, idx, self.planes, self.per, self.plane, y)
        return y, int(bad)

    def __call__(self, inputs: Sequence[Array | None]) -> list[Array]:
        x = inputs[0]
        indices = inputs[1] if len(inputs) > 1 else None
        plan = self.plan
        if (
            x is None
            or indices is None
            or str(x.dtype.name) != plan.dtype
            or tuple(x.shape) != plan.input_shape
            or indices.shape != x.shape
            or indices.dtype.kind not in "iu"
            or x.dtype.name not in ("float32", "float64", "int32", "int64", "int8", "uint8")
        ):
            return execute(plan, inputs)  # its errors
        flat = np.ascontiguousarray(x).reshape(-1)
        y, bad = self._scatter(flat, np.ascontiguousarray(indices, dtype=np.int64).reshape(-1))
        if bad >= 0:
            return execute(plan, inputs)  # its error, in its words
        return [y.reshape(plan.output_shape)]
