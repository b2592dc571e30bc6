"""The pooling families (irpool/families/) prepared once: a plan's compiled kernel where numba
is installed and a kernel of irpool/kernel/numba_family.py serves the plan, else the numpy
core (kernel.family.execute).  Both give the same bits; the numpy core is the reference the
compiled kernels are tested against (tests/test_family_compiled.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy.typing as npt

from ..errors import UsageError
from ..families import FamilyPlan
from .family import execute

Array = npt.NDArray[Any]
Kernel = Callable[[Sequence[Array | None]], list[Array]]


def why_not(plan: FamilyPlan) -> str | None:
    """Why no compiled kernel computes this plan (None when one does)."""
    return f"no compiled kernel for a {type(plan).__name__} yet"


def _compiled(plan: FamilyPlan, threads: int) -> Kernel:
    raise UsageError(f"no compiled kernel for {type(plan).__name__}")


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
