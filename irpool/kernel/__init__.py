"""The one pooling core: values and, for max, indices of any PoolPlan, with numpy only.

How it works (docs/kernel.md has the measurements behind each choice):

* The input is viewed as planes (N*C, *spatial) and processed a chunk of planes at a time, so a
  large input is never copied or padded whole; a chunk's working set stays near the L2 cache.
* Polyphase layout: a chunk is copied once into one padded array per *phase*, the residue of a
  padded position modulo the stride on every axis.  In a phase array the window taps of all
  outputs are plain shifted copies of each other, so every tap of the window is a single long
  contiguous numpy operation (`acc[0:L] op= phase[shift:shift + L]`), whatever the stride,
  dilation or padding.  Taps are applied in row-major window order, so sums are accumulated
  in exactly the order openvino's CPU plugin uses (bit-identical float32 means, measured).
  The copy also converts to the compute type (float16/bfloat16 to float32, ...).
* The divisor of every window is a product of per-axis counts, an outer product of small
  vectors resolved from the plan's divisor rule.
* Max indices: after the values, the first tap (in scan order) equal to the window's maximum is
  found by a reverse scan over the taps; index = window base + tap offset, then the plan's
  index layout (flat over the tensor, per (N, C) plane, row- or column-major) is applied.
* Global pooling (one window per plane) is a reduction over a transposed copy.
* Rare cases (NaN policies other than openvino's, a maximum equal to the padding value) are
  fixed up with a direct per-tap scan over the unpadded chunk.
* onnxruntime's MLAS max kernels (the plan's `mlas_*` NaN rules) are plain maxima on chunks
  without NaN; a chunk holding a NaN is recomputed in the kernel's own order of operations.
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..env import env_int
from ..errors import InputError, SpecError
from ..geometry import PoolPlan
from . import compiled
from .average import direct_sum_chunk, mean_values, sum_chunk
from .lowp import flush_subnormals, integers_as_float32, round_to_integer, store
from .max_pool import half_max_chunk, max_chunk
from .reduce import global_pool
from .scratch import Scratch
from .windows import (
    block_layout,
    declared_counts,
    divisor,
    empty_windows,
    in_input_counts,
    is_global,
    layout,
    taps_of,
)
from .zero_sign import first_zero_signs

__all__ = [
    "CHUNK_BYTES",
    "PARALLEL_BYTES",
    "check_input",
    "declared_counts",
    "divisor",
    "empty_windows",
    "in_input_counts",
    "integers_as_float32",
    "pool",
    "round_to_integer",
    "thread_count",
]

CHUNK_BYTES = 2 << 20
"""Target size of the compute-type copy of one chunk of planes.  2 MiB, twice the L2 cache of
the development machine, measured 0-10% faster than 1 MiB on one thread and up to 35% on two
(fewer, longer numpy calls; the passes after the first run over halved data); max pooling
with indices keeps 1 MiB, whose index search buffers would otherwise pass the memory budget."""


PHASE_BYTES = 1 << 18
"""Smallest phase buffer of a strided sum worth one numpy operation per tap."""


Array = npt.NDArray[Any]


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def check_input(x: Array, plan: PoolPlan) -> str:
    """The dtype name of x if the plan was made for it (geometry.plan(..., dtype=)); raise
    otherwise, or where the plan's runtime refuses the layer for that dtype."""
    name = str(x.dtype.name)
    if name != plan.dtype:
        raise InputError(
            f"input has dtype {name}; the plan was made for {plan.dtype} (plan it for the dtype "
            "of its data)"
        )
    if tuple(x.shape) != plan.input_shape:
        raise InputError(
            f"input shape {_dims(x.shape)} does not match the plan's {_dims(plan.input_shape)}"
        )
    refused = plan.refusal(name)
    if refused is not None:
        raise SpecError(refused)
    return name


def pool(
    x: Array,
    plan: PoolPlan,
    threads: int | None = None,
    path: str | None = None,
    spaces: dict[int, Scratch] | None = None,
) -> tuple[Array, Array | None]:
    """Pool x (N, C, *spatial) exactly as the plan says: (values, indices or None).  The plan
    decides everything (made for x's dtype); the kernel only chooses how to compute it.

    Chunks of planes run on `threads` threads (default: IRPOOL_THREADS, else the CPU count, at
    most 8); results do not depend on it.  `path` is `auto` (the compiled path where numba is
    installed and it serves the plan, else this numpy core), `numpy` or `compiled` (default:
    IRPOOL_KERNEL, else auto); both paths give the same bits.  `spaces`: working buffers per
    thread kept from call to call (a prepared pool passes its own)."""
    name = check_input(x, plan)
    if plan.via is not None:
        values, indices = pool(integers_as_float32(x), plan.via, threads, path, spaces)
        return round_to_integer(values, x.dtype), indices
    done = compiled.run(x, plan, thread_count(threads), path)
    if done is not None:
        return done
    out = np.empty(plan.output_shape, dtype=x.dtype)
    want_indices = plan.indices and plan.reduce == "max"
    idx = np.empty(plan.output_shape, dtype=np.dtype(plan.index_dtype)) if want_indices else None
    if out.size == 0:
        return out, idx
    job = _Chunks.of(x, plan, name, out, idx, {} if spaces is None else spaces)
    starts = range(0, job.planes, job.rows)
    workers = thread_count(threads)
    if workers > 1 and len(starts) > 1 and x.nbytes >= PARALLEL_BYTES:
        list(_executor(workers).map(job.run, starts))
    else:
        for p0 in starts:
            job.run(p0)
    return out, idx


def _chunk_bytes(plan: PoolPlan, name: str, lay: Any, want_indices: bool) -> int:
    """The size of the compute-type copy of one chunk of planes for this plan."""
    chunk_bytes = CHUNK_BYTES // 2 if want_indices else CHUNK_BYTES
    if plan.reduce == "mean" and len(lay.phases) == 1 and len(taps_of(plan.axes).number) > 16:
        # many-tap sums over one phase make one pass per tap over the whole chunk: keep it
        # smaller (measured)
        chunk_bytes //= 2
    elif plan.reduce == "mean":
        # strided sums split a chunk into one buffer per phase and every tap runs over one of
        # them: keep each at least PHASE_BYTES, or short operations (and, with threads,
        # contention for the GIL between them) dominate (measured on avg3d: 2.6x with threads)
        chunk_bytes = max(chunk_bytes, min(4 * CHUNK_BYTES, len(lay.phases) * PHASE_BYTES))
    if plan.reduce == "mean" and name == "float16":
        # a float16 chunk is widened to float32 in a buffer of its own first (lowp.widen):
        # half the planes keep the memory as it was (3% slower on f16_avg, measured)
        chunk_bytes //= 2
    return chunk_bytes


@dataclass(frozen=True)
class _Chunks:
    """One pool call cut into chunks of planes: what every chunk shares, and `run(p0)`, which
    pools the chunk starting at plane p0 into the outputs."""

    plan: PoolPlan
    name: str
    cdt: np.dtype[Any]
    xs: Array
    out_s: Array
    idx_s: Array | None
    out_dtype: np.dtype[Any]
    lay: Any
    planes: int
    rows: int
    block_rows: int
    fast_global: bool
    direct_sums: bool
    held: dict[int, Scratch]
    flush: bool

    @classmethod
    def of(
        cls,
        x: Array,
        plan: PoolPlan,
        name: str,
        out: Array,
        idx: Array | None,
        held: dict[int, Scratch],
    ) -> _Chunks:
        cdt = np.dtype(plan.compute)
        planes = plan.input_shape[0] * plan.input_shape[1]
        spatial_in = plan.input_shape[2:]
        spatial_out = plan.output_shape[2:]
        xs = np.ascontiguousarray(x).reshape((planes, *spatial_in))
        out_s = out.reshape((planes, *spatial_out))
        idx_s = idx.reshape((planes, *spatial_out)) if idx is not None else None
        plane_bytes = max(1, math.prod(spatial_in)) * cdt.itemsize
        lay = layout(plan.axes)
        chunk_bytes = _chunk_bytes(plan, name, lay, idx is not None)
        rows = max(1, chunk_bytes // plane_bytes)
        fast_global = is_global(plan) and (
            plan.reduce == "mean"
            or (idx_s is None and (plan.nan_rule == "ignore" or cdt.kind != "f"))
        )
        # a plane larger than a chunk is processed in blocks of output rows (means only)
        block_rows = plan.axes[0].out
        if plan.reduce == "mean" and not fast_global and plane_bytes > chunk_bytes:
            per_row = plane_bytes / max(1, plan.axes[0].size) * plan.axes[0].stride
            block_rows = max(1, min(plan.axes[0].out, int(chunk_bytes // max(per_row, 1))))
        # windows that share no input element (kernel <= stride): each tap reads its strided
        # slice of the input directly, cheaper than copying the input into phase buffers
        # (measured on avg2x2)
        direct_sums = (
            plan.reduce == "mean"
            and block_rows == plan.axes[0].out
            and cdt == x.dtype
            and len(lay.taps) <= len(lay.phases)
        )
        flush = plan.bf16_flush and name == "bfloat16"
        return cls(
            plan, name, cdt, xs, out_s, idx_s, out.dtype, lay, planes, rows, block_rows,
            fast_global, direct_sums, held, flush,
        )  # fmt: skip

    def put(self, values: Array, dst: Array) -> None:
        store(values, dst, self.name, self.flush, self.plan.bf16_round)

    def run(self, p0: int) -> None:
        plan, name, cdt, out_s = self.plan, self.name, self.cdt, self.out_s
        lowest, empty_value = plan.max_start, plan.empty_value
        work = self.held.setdefault(threading.get_ident(), Scratch())
        p1 = min(self.planes, p0 + self.rows)
        raw = self.xs[p0:p1]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if self.fast_global:
                values = global_pool(raw, plan, name, cdt, lowest)
                if plan.reduce == "mean":
                    values = mean_values(values, plan, self.out_dtype)
                self.put(values, out_s[p0:p1])
            elif plan.reduce == "mean":
                self._means(raw, p0, p1, work)
            elif name in ("float16", "bfloat16") and plan.nan_rule == "ignore":
                out_s[p0:p1] = half_max_chunk(raw, plan, name, lowest, self.idx_s, p0, work)
                if self.flush:
                    flush_subnormals(out_s[p0:p1])
            else:
                dst = out_s[p0:p1]
                values = max_chunk(
                    raw, plan, name, cdt, lowest, empty_value, self.idx_s, p0, work, dst
                )
                if values is not dst:
                    self.put(values, dst)
                elif self.flush:
                    flush_subnormals(dst)
            if plan.reduce == "max":
                first_zero_signs(raw, plan, out_s[p0:p1])

    def _means(self, raw: Array, p0: int, p1: int, work: Scratch) -> None:
        plan, lay = self.plan, self.lay
        for j0 in range(0, plan.axes[0].out, self.block_rows):
            j1 = min(plan.axes[0].out, j0 + self.block_rows)
            if self.direct_sums:
                sums = direct_sum_chunk(raw, plan, self.cdt, work)
            else:
                part = lay if self.block_rows == plan.axes[0].out else block_layout(lay, j0, j1)
                sums = sum_chunk(raw, part, self.name, self.cdt, work)
            dst = self.out_s[p0:p1, j0:j1]
            means = mean_values(sums, plan, self.out_dtype, slice(j0, j1), work, dst)
            if means is not dst:
                self.put(means, dst)


PARALLEL_BYTES = 1 << 20
"""Inputs at least this large are split over threads (numpy releases the GIL in its loops)."""


_EXECUTORS: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def thread_count(requested: int | None) -> int:
    """Threads for one pool call: `requested`, else IRPOOL_THREADS, else the CPU count (at
    most 8)."""
    if requested is not None:
        return max(1, requested)
    return env_int("IRPOOL_THREADS", min(os.cpu_count() or 1, 8))


def _executor(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    if workers not in _EXECUTORS:
        _EXECUTORS[workers] = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="irpool"
        )
    return _EXECUTORS[workers]
