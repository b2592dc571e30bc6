"""A plan prepared once and run many times (irpool.compile_pool): the kernel path is chosen,
the compiled path's kernel loaded (or compiled) and its tables built, before the first call,
as a runtime compiles a model once and then only runs it; every path keeps its working
buffers from call to call."""

from __future__ import annotations

import threading
from typing import Any

import numpy.typing as npt

from ..geometry import PoolPlan
from . import compiled
from .scratch import Scratch

Array = npt.NDArray[Any]


class PreparedPool:
    """Pool inputs of one shape and dtype under one plan: `f(x)` gives the values, or (values,
    indices) for a max plan with indices, bit for bit what `kernel.pool(x, plan)` gives.

    `path` is "compiled" or "numpy" and `why` says why (IRPOOL_KERNEL, numba missing, or what
    the compiled path does not serve).  Safe to call from several threads at once: the
    compiled path's prepared form is kept per calling thread, and the numpy core's buffers
    per worker thread."""

    def __init__(self, plan: PoolPlan, threads: int, path: str | None = None) -> None:
        self.plan = plan
        self.threads = threads
        target = plan.via if plan.via is not None else plan
        use, self.why = compiled.choose(target, path)
        self.path = "compiled" if use else "numpy"
        self._local = threading.local()
        self._spaces: dict[int, Scratch] = {}
        if use:
            # numba and the kernel are loaded now (or compiled, the first time on a machine),
            # so that the first call runs at full speed
            self._local.prepared = compiled.prepare(target, threads)
            self._local.prepared.warm()

    def _compiled(self) -> compiled.Prepared:
        prepared: compiled.Prepared | None = getattr(self._local, "prepared", None)
        if prepared is None:
            target = self.plan.via if self.plan.via is not None else self.plan
            prepared = self._local.prepared = compiled.prepare(target, self.threads)
        return prepared

    def run(self, x: Array) -> tuple[Array, Array | None]:
        """(values, indices or None), as kernel.pool returns them."""
        from . import check_input, integers_as_float32, pool, round_to_integer

        if self.path == "numpy":
            return pool(x, self.plan, self.threads, "numpy", self._spaces)
        check_input(x, self.plan)
        if self.plan.via is not None:
            values, indices = self._compiled()(integers_as_float32(x))
            return round_to_integer(values, x.dtype), indices
        return self._compiled()(x)

    def __call__(self, x: Array) -> Array | tuple[Array, Array]:
        values, indices = self.run(x)
        if indices is not None:
            return values, indices
        return values

    def __repr__(self) -> str:
        shape = list(self.plan.input_shape)
        return f"<PreparedPool {self.plan.reduce} {shape} {self.plan.dtype}: {self.why}>"
