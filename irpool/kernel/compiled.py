"""The compiled path: numba kernels that compute a plan bit for bit as the numpy core does.

It is optional (the `fast` extra installs numba) and is used by `kernel.pool` whenever numba is
installed and the plan is one it serves; `IRPOOL_KERNEL=numpy` forces the numpy core, the
reference.  Importing this module imports numpy only: numba and `numba_kernels` are imported by
the first `prepare`, and each kernel is compiled, or loaded from numba's on-disk cache, on its
first call.  fastmath is off everywhere, so every float operation is the IEEE one numpy does,
in the same order.

What it serves (`why_not` names the reason for anything else, which then runs on numpy):

* float32, float16 and bfloat16 data computed in float32 (half types travel as their bits and
  are converted in the kernels, exactly as numpy converts them); 1 to 3 spatial axes; any
  window, stride, dilation, pads, auto_pad and rounding;
* averages under every divisor rule (the divisor table is `windows.divisor(plan)`, so the rules
  stay in one place), the sums in row-major tap order from +0.0; windows without a tap in the
  input only under openvino's rule (0 / extent) or with the full divisor;
* maxima under openvino's NaN rule (`ignore`: from `plan.max_start`, a tap kept only when
  strictly greater), with or without indices in every layout of the plan; a window whose
  maximum is zero keeps the sign of its first zero tap, as openvino's scan does.

Kernels (numba_kernels.py): `avg_run` (polyphase and blocked, up to nine taps per pass over a
block of sums that stays in L1), `avg_direct_run` (windows that share no input element),
`global_avg_run` (one window per plane, eight planes in independent chains), `max_run`
(separable: the window's rows folded into a row buffer, then the last axis) and `max_idx_run`
(a row-major scan per window).  docs/performance.md has the measurements.

Threads: the work (chunks of planes or rows, or planes) is split into contiguous ranges of
about equal work, one per thread; every kernel releases the GIL and every range has its own
scratch, so the bits do not depend on the split.  A prepared function owns its scratch and is
not re-entrant: `run` keeps one per thread.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import importlib.util
import math
import os
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import UsageError
from ..geometry import AxisPlan, PoolPlan
from .lowp import flush_subnormals
from .windows import divisor, in_input_counts, is_global

Array = npt.NDArray[Any]
Result = tuple[Array, Array | None]

KINDS = {"float32": 0, "float16": 1, "bfloat16": 2}
"""The dtypes served and the kernels' code for them."""

ENV = "IRPOOL_KERNEL"
SETTINGS = ("auto", "numpy", "compiled")

PHASE_BYTES = 384 << 10
"""Target size of the phase buffers of one chunk of an average: they stay in L2 while the taps
read them (128 KiB measured 15% slower on avg3d)."""

BLOCK_ELEMENTS = 2048
"""Flat positions summed per block: 8 KiB of float32 sums, in L1 while every tap is added
(1024 and 4096 measured within 4%)."""

VECTOR_SLACK = 128
"""Items of slack after the phase and sum buffers of averages: numba_kernels._vsum_taps sums
whole blocks of 128 positions (numba_kernels.BLOCK), the last one reaching past the positions
asked for (its sums there are never read)."""

ROW_LIMIT = 6 << 20
"""The largest buffer the smallest unit of work may need (one output row's phases for an
average, one padded input row for a max); longer rows are left to the numpy core."""

PARALLEL_BYTES = 1 << 20
"""Inputs smaller than this run on the calling thread alone: handing work to a second thread
costs more than it saves there (gap7 on two threads: 1.02x openvino, 0.43x on one)."""

ZERO = np.float32(0.0)
"""+0.0 passed to the kernels as an argument: as a constant, LLVM turns the short zeroing loops
of the phase fill into memset calls, which cost more than the few stores they replace."""

# the plan fields the compiled path reads or that cannot change what it computes for the
# dtypes it serves; a field added to PoolPlan later is served only at its default value
_KNOWN_FIELDS = frozenset(
    {
        "op",
        "convention",
        "input_shape",
        "axes",
        "reduce",
        "shape_rule",
        "divisor",
        "divisor_reason",
        "empty",
        "nan_max",
        "indices",
        "index_axis",
        "column_major",
        "index_dtype",
        "int_mean",
        "narrow_64bit",
        "empty_index",
        "integers_in_float32",
        "float_refusal",
        "dtype",
        "compute",
        "nan_rule",
        "max_start",
        "empty_value",
        "sum_order",
        "via",
        "indices_used",  # decides refusals and integer handling upstream, not the values
        "runtime_refusal",  # run refuses such a plan before the kernel; fixtures compute it
        "bf16_flush",  # served: kernels of kind 3 for means, a flush after them for maxima
        "plugin_isa",  # decides the plan's other fields, nothing in the kernel
        "bf16_round",  # served at nearest_even; why_not refuses bfloat16 data otherwise
    }
)


# -- which path -----------------------------------------------------------------------------


def setting() -> str:
    """IRPOOL_KERNEL: `auto` (unset or empty: the compiled path when numba is installed and it
    serves the plan), `numpy` (always the numpy core) or `compiled` (as auto, but an error when
    numba is missing)."""
    raw = os.environ.get(ENV, "").strip().lower() or "auto"
    if raw == "numba":
        raw = "compiled"
    if raw not in SETTINGS:
        raise UsageError(f"{ENV}={raw!r}: expected auto, numpy or compiled")
    return raw


_INSTALLED: list[bool] = []


def installed() -> bool:
    """Whether numba can be imported (found without importing it)."""
    if not _INSTALLED:
        _INSTALLED.append(importlib.util.find_spec("numba") is not None)
    return _INSTALLED[0]


def _has_empty(plan: PoolPlan) -> bool:
    return any(bool((in_input_counts(a) == 0).any()) for a in plan.axes)


def _row_bytes(plan: PoolPlan) -> int:
    """Bytes of the smallest unit of work: one output row's phases (average) or one padded
    input row (max)."""
    last = plan.axes[-1]
    if plan.reduce == "max":
        return (last.size + last.pad_begin + last.pad_end) * 4
    rows = math.prod(1 + _qmax(a) for a in plan.axes[:-1])
    phases = math.prod(len(_residues(a)) for a in plan.axes)
    return phases * rows * (last.out + _qmax(last)) * 4


def why_not(plan: PoolPlan) -> str | None:
    """Why the compiled path does not compute this plan (None when it does)."""
    for f in dataclasses.fields(plan):
        if f.name not in _KNOWN_FIELDS and getattr(plan, f.name) != f.default:
            return f"the plan's {f.name} is {getattr(plan, f.name)!r}, which it does not implement"
    if plan.dtype not in KINDS or plan.compute != "float32":
        return f"{plan.dtype} data: it computes float32, float16 and bfloat16"
    if plan.dtype == "bfloat16" and plan.bf16_round != "nearest_even":
        return f"bfloat16 rounding {plan.bf16_round}: it rounds to nearest even only"
    if not 1 <= len(plan.axes) <= 3:
        return f"{len(plan.axes)} spatial axes: it computes 1 to 3"
    if any(a.out <= 0 for a in plan.axes) or 0 in plan.input_shape:
        return "the input or the output is empty"
    if plan.sum_order != "row_major":
        return f"sum order {plan.sum_order}"
    if _row_bytes(plan) > ROW_LIMIT:
        return "a row is longer than its buffers (6 MiB)"
    if plan.reduce == "max":
        if plan.nan_rule != "ignore":
            return f"NaN rule {plan.nan_rule}: it has openvino's (ignore) only"
        if plan.indices and plan.empty_index not in ("plane_start", "minus_one"):
            return f"index of an empty window: {plan.empty_index}"
        if plan.indices and np.dtype(plan.index_dtype).kind not in "iu":
            return f"index dtype {plan.index_dtype}"
        if _start(plan) is None:
            return f"max start {plan.max_start} is not a {plan.dtype} value"
        if plan.empty_value != plan.max_start and _has_empty(plan):
            return f"a window without taps gives {plan.empty_value}, not the start value"
        return None
    if plan.reduce == "mean":
        if plan.divisor not in ("in_input", "declared", "full"):
            return f"divisor rule {plan.divisor}"
        if plan.empty not in ("openvino", "zero", "nan"):
            return f"empty-window rule {plan.empty}"
        if plan.empty != "openvino" and bool((np.asarray(divisor(plan)) == 0).any()):
            return f"windows without taps under the {plan.empty} rule"
        return None
    return f"reduce {plan.reduce}"


def serves(plan: PoolPlan) -> bool:
    """Whether the compiled path computes this plan (made for its dtype)."""
    return why_not(plan) is None


def choose(plan: PoolPlan, path: str | None = None) -> tuple[bool, str]:
    """(whether the compiled path runs the plan, why): `path` overrides IRPOOL_KERNEL."""
    chosen = setting() if path is None else path
    if chosen not in SETTINGS:
        raise UsageError(f"kernel path {chosen!r}: expected auto, numpy or compiled")
    if chosen == "numpy":
        return False, "numpy core (IRPOOL_KERNEL=numpy)" if path is None else "numpy core"
    if not installed():
        if chosen == "compiled":
            raise UsageError(
                f"the compiled kernel path needs numba: pip install 'irpool[fast]' (or unset {ENV})"
            )
        return False, "numpy core (numba is not installed: pip install 'irpool[fast]')"
    reason = why_not(plan)
    if reason is not None:
        return False, f"numpy core (the compiled path does not serve this plan: {reason})"
    return True, "compiled (numba), bit-identical to the numpy core"


def describe(plan: PoolPlan) -> tuple[str, str]:
    """Which path computes the plan under the current setting: ("compiled" or "numpy", why),
    for explain (an integer layer that openvino pools in float32 is asked of its float32 plan)."""
    target = plan.via if plan.via is not None else plan
    try:
        use, why = choose(target)
    except UsageError as e:
        return "numpy", f"numpy core ({e})"
    if plan.via is not None:
        why = f"{why}; the {plan.dtype} data pooled in float32 and rounded back"
    return ("compiled" if use else "numpy"), why


# -- preparing a plan -------------------------------------------------------------------------


_LOCK = threading.Lock()


class NumbaModule:
    """A module of numba kernels, imported on the first call (imports numba; nothing compiles
    until a kernel's first call)."""

    def __init__(self, name: str) -> None:
        self.name = f"{__package__}.{name}"
        self._module: list[Any] = []
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        if not self._module:
            with self._lock:
                if not self._module:
                    self._module.append(self._import())
        return self._module[0]

    def _import(self) -> Any:
        """The module, with numba's disk cache where numba finds a writable place for it
        (beside the module, else the user's cache directory, or NUMBA_CACHE_DIR); where it
        finds none (a read-only install and no writable home), without the cache: each process
        then compiles the kernels it uses."""
        try:
            return importlib.import_module(self.name)
        except RuntimeError as e:
            if "no locator available" not in str(e):
                raise
        sys.modules.pop(self.name, None)
        os.environ["IRPOOL_NUMBA_CACHE"] = "0"
        return importlib.import_module(self.name)


_kernels = NumbaModule("numba_kernels")


class _Kernels:
    """The kernel module, imported on the first attribute read (prepared plans hold this, so
    that preparing a plan does not import numba)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_kernels(), name)


_LAZY = _Kernels()
_WARM: set[tuple[str, str, str | None]] = set()
"""Kernel specialisations loaded in this process."""
_WARMING = threading.Lock()


_TRIVIAL = AxisPlan(size=1, window=1, stride=1, dilation=1, pad_begin=0, pad_end=0, out=1)


def _axes3(plan: PoolPlan) -> tuple[AxisPlan, ...]:
    """The plan's axes as three (1-D and 2-D run as 3-D with trivial leading axes)."""
    return (_TRIVIAL,) * (3 - len(plan.axes)) + plan.axes


def _qmax(a: AxisPlan) -> int:
    return max((t * a.dilation) // a.stride for t in range(a.window))


def _residues(a: AxisPlan) -> list[int]:
    return sorted({(t * a.dilation) % a.stride for t in range(a.window)})


def _key(bits: int) -> int:
    """The int16 key of float16/bfloat16 bits: ordered like the numbers (numba_kernels.hkey)."""
    signed = bits - 0x10000 if bits & 0x8000 else bits
    magnitude = signed & 0x7FFF
    return magnitude if signed >= 0 else -magnitude


def _start(plan: PoolPlan) -> Any:
    """Where every max starts (plan.max_start): a float32, or for half types the int16 key of
    the half value it becomes (float32 lowest rounds to -inf); None if it is not such a value."""
    start = np.float32(plan.max_start)
    if plan.dtype == "float32":
        return start
    with np.errstate(over="ignore"):
        half = np.array([start]).astype(_dtype(plan.dtype))
    if float(half.astype(np.float32)[0]) != float(start) and not np.isinf(half[0]):
        return None
    return np.int16(_key(int(half.view(np.uint16)[0])))


def _dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        from ..model import bfloat16

        bf = bfloat16()
        if bf is None:
            raise UsageError("bfloat16 data needs ml_dtypes")
        return bf
    return np.dtype(name)


def _split(weights: list[int], parts: int) -> list[tuple[int, int]]:
    """Contiguous ranges of items with about equal total weight."""
    total = sum(weights)
    bounds: list[tuple[int, int]] = []
    acc, start = 0, 0
    for i, w in enumerate(weights):
        acc += w
        if len(bounds) < parts - 1 and acc * parts >= total * (len(bounds) + 1):
            bounds.append((start, i + 1))
            start = i + 1
    bounds.append((start, len(weights)))
    return [b for b in bounds if b[1] > b[0]]


def _divisors(plan: PoolPlan) -> Array:
    """The divisor of every window (windows.divisor), float32, flat in output order."""
    div = divisor(plan)
    size = math.prod(a.out for a in plan.axes)
    if np.ndim(div) == 0:
        return np.full(size, div, np.float32)
    return np.ascontiguousarray(np.asarray(div, dtype=np.float32).reshape(-1))


def _geometry(axes: tuple[AxisPlan, ...], last: Callable[[AxisPlan], int]) -> Array:
    """(3, 6) int64: size, stride, dilation, pad_begin, out and `last(axis)` per axis."""
    return np.array(
        [[a.size, a.stride, a.dilation, a.pad_begin, a.out, last(a)] for a in axes], np.int64
    )


Runner = Callable[[int, int, Array, Array, int, Array | None], None]
"""run(lo, hi, x, out, scratch number, indices): one range of the work."""
Built = tuple[Runner, list[tuple[int, int]], str]
"""(runner, ranges of work, the kernel's name)."""


def _global_average(plan: PoolPlan, kind: int, k: Any, workers: int) -> Built:
    div = np.float32(_divisors(plan)[0])
    planes = plan.input_shape[0] * plan.input_shape[1]

    def run(lo: int, hi: int, xv: Array, ov: Array, i: int, iv: Array | None) -> None:
        k.global_avg_run(xv.reshape(planes, -1), ov, kind, lo, hi, div)

    return run, _split([1] * planes, workers), "global_avg_run"


def _direct_average(plan: PoolPlan, kind: int, k: Any, workers: int) -> Built:
    axes = _axes3(plan)
    geo = _geometry(axes, lambda a: a.window)
    div = _divisors(plan)
    ranges = _split([1] * (plan.input_shape[0] * plan.input_shape[1]), workers)
    accs = [np.zeros(axes[2].out + 16, np.float32) for _ in ranges]

    def run(lo: int, hi: int, xv: Array, ov: Array, i: int, iv: Array | None) -> None:
        k.avg_direct_run(xv, ov, kind, geo, lo, hi, accs[i], div, ZERO)

    return run, ranges, "avg_direct_run"


def _chunks(
    planes: int, axes: tuple[AxisPlan, ...], qmax: list[int], nph: int, wp: int
) -> list[tuple[int, int, int, int, int, int]]:
    """Chunks of an average (p0, p1, od0, od1, oh0, oh1) whose phases fill about PHASE_BYTES:
    whole planes, or blocks of depth, or blocks of rows of one plane."""
    od, oh = axes[0].out, axes[1].out
    slab = (oh + qmax[1]) * wp
    plane_phase = nph * (od + qmax[0]) * slab * 4
    chunks = []
    if plane_phase <= PHASE_BYTES:
        per = max(1, PHASE_BYTES // plane_phase)
        for p0 in range(0, planes, per):
            chunks.append((p0, min(planes, p0 + per), 0, od, 0, oh))
    elif od > 1 and nph * (1 + qmax[0]) * slab * 4 <= PHASE_BYTES:
        per = max(1, PHASE_BYTES // (nph * slab * 4) - qmax[0])
        for p in range(planes):
            for d0 in range(0, od, per):
                chunks.append((p, p + 1, d0, min(od, d0 + per), 0, oh))
    else:
        per = max(1, PHASE_BYTES // (nph * (1 + qmax[0]) * wp * 4) - qmax[1])
        for p in range(planes):
            for d0 in range(od):
                for h0 in range(0, oh, per):
                    chunks.append((p, p + 1, d0, d0 + 1, h0, min(oh, h0 + per)))
    return chunks


def _average(plan: PoolPlan, kind: int, k: Any, workers: int) -> Built:
    """The polyphase average: per chunk, one zero-padded buffer per phase (the residue of a
    padded position modulo the stride, per axis), then the taps in row-major order."""
    axes = _axes3(plan)
    qmax = [_qmax(a) for a in axes]
    geo = np.array(
        [
            [a.size, a.stride, a.dilation, a.pad_begin, a.out, q]
            for a, q in zip(axes, qmax, strict=True)
        ],
        np.int64,
    )
    residues = [_residues(a) for a in axes]
    res = np.zeros((3, max(len(r) for r in residues) + 1), np.int64)
    for i, r in enumerate(residues):
        res[i, 0] = len(r)
        res[i, 1 : 1 + len(r)] = r
    index = [{r: j for j, r in enumerate(rr)} for rr in residues]
    tap_rows = []
    for td in range(axes[0].window):
        for th in range(axes[1].window):
            for tw in range(axes[2].window):
                ts = (td, th, tw)
                rs = [(t * a.dilation) % a.stride for t, a in zip(ts, axes, strict=True)]
                qs = [(t * a.dilation) // a.stride for t, a in zip(ts, axes, strict=True)]
                phase = (index[0][rs[0]] * len(residues[1]) + index[1][rs[1]]) * len(residues[2])
                tap_rows.append((phase + index[2][rs[2]], *qs))
    taps = np.array(tap_rows, np.int64)
    nph = math.prod(len(r) for r in residues)
    # shared padding: the trailing zeros of a phase row are left out where the next row's
    # leading zeros are as many (a read past a row's end lands there)
    aw, ow = axes[2], axes[2].out
    leads = [max(0, -(-(aw.pad_begin - r) // aw.stride)) for r in residues[2]]
    fills = [-(-(aw.size + aw.pad_begin - r) // aw.stride) for r in residues[2]]
    wp = max(ow, min(ow + qmax[2], max(fills)), ow + qmax[2] - min(leads))
    planes = plan.input_shape[0] * plan.input_shape[1]
    chunks = _chunks(planes, axes, qmax, nph, wp)
    chunk_arr = np.array(chunks, np.int64)

    def length(c: tuple[int, ...]) -> int:
        p0, p1, d0, d1, h0, h1 = c
        slab = (h1 - h0 + qmax[1]) * wp
        depth = (p1 - p0) * (d1 - d0 + qmax[0]) * slab
        return depth + qmax[0] * slab + qmax[1] * wp + qmax[2] + 32

    biggest = max(length(c) for c in chunks)
    ranges = _split([(c[1] - c[0]) * (c[3] - c[2]) * (c[5] - c[4]) for c in chunks], workers)
    phase_bufs = [np.zeros(nph * biggest + VECTOR_SLACK, np.float32) for _ in ranges]
    rows_per_block = max(1, BLOCK_ELEMENTS // wp)
    acc_bufs = [np.empty(rows_per_block * wp + VECTOR_SLACK, np.float32) for _ in ranges]
    div = _divisors(plan)
    offsets = [np.empty(len(taps), np.int64) for _ in ranges]

    def run(lo: int, hi: int, xv: Array, ov: Array, i: int, iv: Array | None) -> None:
        k.avg_run(
            xv,
            ov,
            kind,
            geo,
            res,
            taps,
            chunk_arr,
            lo,
            hi,
            phase_bufs[i],
            acc_bufs[i],
            div,
            rows_per_block,
            offsets[i],
            ZERO,
            wp,
        )

    return run, ranges, "avg_run"


def _max_indices(plan: PoolPlan, kind: int, k: Any, workers: int) -> Built:
    axes = _axes3(plan)
    geo = _geometry(axes, lambda a: a.window)
    lowest = _start(plan)
    sizes = [a.size for a in axes]
    rank = len(plan.axes)
    if plan.column_major:
        strides = [math.prod(sizes[3 - rank : i]) for i in range(3)]
    else:
        strides = [math.prod(sizes[i + 1 :]) for i in range(3)]
    istr = np.array(strides, np.int64)
    plane_size = math.prod(sizes)
    missing = 0 if plan.empty_index == "plane_start" else -sum(strides[3 - rank :])
    modulus = math.prod(plan.input_shape[plan.index_axis :]) if plan.index_axis > 0 else 0
    ranges = _split([1] * (plan.input_shape[0] * plan.input_shape[1]), workers)
    rows = [np.empty(2 * axes[0].window * axes[1].window, np.int64) for _ in ranges]

    def run(lo: int, hi: int, xv: Array, ov: Array, i: int, iv: Array | None) -> None:
        k.max_idx_run(
            xv, ov, iv, kind, geo, lo, hi, lowest, istr, plane_size, modulus, missing, rows[i]
        )

    return run, ranges, "max_idx_run"


def _max(plan: PoolPlan, kind: int, k: Any, workers: int) -> Built:
    axes = _axes3(plan)
    geo = _geometry(axes, lambda a: a.window)
    lowest = _start(plan)
    a = axes[2]
    span = max(a.pad_begin + a.size, (a.out - 1) * a.stride + (a.window - 1) * a.dilation + 1)
    ranges = _split([1] * (plan.input_shape[0] * plan.input_shape[1]), workers)
    # a padded row holding `lowest` outside the input (the kernel writes only the inside)
    bufs = [np.full(span + 64, lowest, np.float32 if kind == 0 else np.int16) for _ in ranges]

    def run(lo: int, hi: int, xv: Array, ov: Array, i: int, iv: Array | None) -> None:
        k.max_run(xv, ov, kind, geo, lo, hi, bufs[i], lowest)

    return run, ranges, "max_run"


_EXECUTORS: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _executor(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    with _LOCK:
        if workers not in _EXECUTORS:
            _EXECUTORS[workers] = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="irpool-compiled"
            )
        return _EXECUTORS[workers]


class Prepared:
    """A plan prepared for the compiled path: its tables and per-range scratch are built
    once (numpy only: numba is imported when a kernel is first needed); calling it with an
    input of the plan's shape and dtype gives (values, indices or None).  Not re-entrant (it
    owns its scratch): one per thread, or a lock."""

    def __init__(self, plan: PoolPlan, threads: int = 1) -> None:
        reason = why_not(plan)
        if reason is not None:
            raise UsageError(f"the compiled path does not serve this plan: {reason}")
        self.plan = plan
        kind = KINDS[plan.dtype]
        if plan.bf16_flush and kind == 2 and plan.reduce == "mean":
            kind = 3  # bfloat16 rounded as openvino's CPU plugin rounds (subnormals flushed)
        workers = max(1, threads)
        k = _LAZY
        if plan.reduce == "mean" and is_global(plan):
            built = _global_average(plan, kind, k, workers)
        elif plan.reduce == "mean" and all(
            (a.window - 1) * a.dilation < a.stride for a in plan.axes
        ):
            built = _direct_average(plan, kind, k, workers)
        elif plan.reduce == "mean":
            built = _average(plan, kind, k, workers)
        elif plan.indices:
            built = _max_indices(plan, kind, k, workers)
        else:
            built = _max(plan, kind, k, workers)
        self._run, self.ranges, kernel = built
        nbytes = math.prod(plan.input_shape) * np.dtype(_dtype(plan.dtype)).itemsize
        if len(self.ranges) > 1 and nbytes < PARALLEL_BYTES:
            self.ranges = [(self.ranges[0][0], self.ranges[-1][1])]
        self._raw = np.dtype(np.float32 if kind == 0 else np.uint16)
        self._dtype = _dtype(plan.dtype)
        self._indices = plan.indices
        # a bfloat16 maximum is one of its taps (or the start value): flushing its subnormals
        # after the kernel is what flushing before the rounding does
        self._flush = plan.bf16_flush and plan.dtype == "bfloat16"
        self._index_dtype = np.dtype(plan.index_dtype)
        self.key = (kernel, self._raw.name, self._index_dtype.name if plan.indices else None)
        """The kernel and argument types this plan runs: one numba specialisation."""

    @property
    def ready(self) -> bool:
        """Whether its kernel specialisation is loaded (or compiled) in this process."""
        return self.key in _WARM

    def warm(self) -> None:
        """Load its kernel specialisation from numba's disk cache, or compile it: the kernel
        run over an empty range of work with arguments of the real types."""
        if self.ready:
            return
        with _WARMING:
            if not self.ready:
                empty = np.empty(0, self._raw)
                idx = np.empty(0, self._index_dtype) if self._indices else None
                self._run(0, 0, empty, np.empty(0, self._raw), 0, idx)
                _WARM.add(self.key)

    def __call__(self, x: Array) -> Result:
        if not self.ready:
            self.warm()
        plan = self.plan
        out = np.empty(plan.output_shape, self._dtype)
        xv = np.ascontiguousarray(x).view(self._raw).reshape(-1)
        ov = out.view(self._raw).reshape(-1)
        indices = np.empty(plan.output_shape, self._index_dtype) if self._indices else None
        iv = indices.reshape(-1) if indices is not None else None
        first, *rest = self.ranges
        if rest:
            pool = _executor(len(self.ranges))
            futures = [
                pool.submit(self._run, lo, hi, xv, ov, i, iv)
                for i, (lo, hi) in enumerate(rest, start=1)
            ]
            self._run(first[0], first[1], xv, ov, 0, iv)
            for future in futures:
                future.result()
        else:
            self._run(first[0], first[1], xv, ov, 0, iv)
        if self._flush:
            flush_subnormals(out)
        return out, indices


def prepare(plan: PoolPlan, threads: int = 1) -> Prepared:
    """The plan prepared for the compiled path (raises UsageError where it does not serve)."""
    return Prepared(plan, threads)


_LOCAL = threading.local()
CACHED = 16
"""Plans each thread remembers (least recently used dropped): prepared, or not served."""

WARM_AFTER = 1 << 22
"""In auto mode, the compiled kernels start loading in the background once the numpy core has
pooled this many input elements for plans the compiled path serves (16 MB of float32): a
short run (a command on a small model) never pays numba's start-up (0.3-0.5 s with a warm
cache, minutes of compiling with a cold one), and a long one switches over within a second."""

_QUEUE: queue.SimpleQueue[Prepared] = queue.SimpleQueue()
_PENDING: set[tuple[str, str, str | None]] = set()
_FAILED: dict[tuple[str, str, str | None], str] = {}
_SEEN = [0]
_WORKER: list[threading.Thread] = []


def _warm_in_background(prepared: Prepared, elements: int) -> None:
    """Count the elements the numpy core pooled instead; past WARM_AFTER, have a daemon
    thread load (or compile) this plan's kernel."""
    with _LOCK:
        _SEEN[0] += elements
        if prepared.key in _PENDING or _SEEN[0] < WARM_AFTER:
            return
        _PENDING.add(prepared.key)
        _QUEUE.put(prepared)
        if not _WORKER:
            worker = threading.Thread(target=_warmer, name="irpool-warm", daemon=True)
            _WORKER.append(worker)
            worker.start()


def _warmer() -> None:
    while True:
        prepared = _QUEUE.get()
        try:
            prepared.warm()
        except Exception as e:  # numba could not build it: the numpy core keeps the plan
            _FAILED[prepared.key] = f"{type(e).__name__}: {e}"


def run(x: Array, plan: PoolPlan, threads: int = 1, path: str | None = None) -> Result | None:
    """Pool x on the compiled path if it serves the plan (and `path`, else IRPOOL_KERNEL,
    allows it), with a prepared form of the plan kept by the calling thread; None when the
    numpy core is to do it.  `compiled` loads (or compiles) the kernel before the call;
    `auto` uses the compiled path once its kernel is loaded, which happens in the background
    (see WARM_AFTER), and the numpy core until then: both give the same bits.  The plan is
    looked up by its object first (cheap), then by its value."""
    chosen = setting() if path is None else path
    if chosen == "numpy":
        return None
    cache: OrderedDict[Any, tuple[PoolPlan, Prepared | None]] | None = getattr(
        _LOCAL, "cache", None
    )
    if cache is None:
        cache = _LOCAL.cache = OrderedDict()
    key: Any = (id(plan), threads, chosen)
    hit = cache.get(key)
    if hit is None or hit[0] is not plan:
        hit = cache.get((plan, threads, chosen))
        if hit is None:
            use, _ = choose(plan, chosen)
            hit = (plan, Prepared(plan, threads) if use else None)
            cache[(plan, threads, chosen)] = hit
        cache[key] = hit
    # a reused id() of a freed plan is an old key: it moves to the end before the oldest
    # entries are dropped, so it is never one of them
    cache.move_to_end(key)
    while len(cache) > 2 * CACHED:
        cache.popitem(last=False)
    prepared = hit[1]
    if prepared is None:
        return None
    if chosen == "auto" and not prepared.ready:
        if prepared.key not in _FAILED:
            _warm_in_background(prepared, x.size)
        return None
    return prepared(x)
