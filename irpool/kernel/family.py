"""The kernel table: one row per plan type, the function that executes a plan of that type.

`execute(plan, inputs)` looks the plan's type up here (a subclass finds its base's row) and
hands the row the layer's inputs; nothing here branches on a family.  A new family adds its
kernel module and one `register(ItsPlan, its_row)` call below (or from its own module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy.typing as npt

from ..errors import InputError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan
from ..families.lp import LpPlan
from ..families.qglobal import QGlobalPlan
from ..families.reduce import ReducePlan
from ..families.unpool import UnpoolPlan
from ..geometry import PoolPlan
from . import pool
from .adaptive import adaptive_pool
from .lp import lp_pool
from .qglobal import qlinear_global_average
from .reduction import reduce
from .unpool import max_unpool

Array = npt.NDArray[Any]

Kernel = Callable[[Any, Array, Sequence[Array | None]], list[Array]]
"""A row: (plan, the data input, every input of the layer in order) -> the layer's outputs."""

KERNELS: dict[type, Kernel] = {}
"""The kernel of each plan type."""


def register(plan_type: type, kernel: Kernel) -> None:
    """Make `kernel` the one that executes plans of `plan_type`."""
    KERNELS[plan_type] = kernel


def kernel_for(plan_type: type) -> Kernel | None:
    """The row of `plan_type`, or of the nearest base class that has one."""
    return next((KERNELS[t] for t in plan_type.__mro__ if t in KERNELS), None)


def execute(plan: FamilyPlan | PoolPlan, inputs: Sequence[Array | None]) -> list[Array]:
    """The outputs of a pooling layer: `inputs` are the layer's inputs in order (None where an
    optional one is missing); the plan was made for inputs[0]'s shape and dtype."""
    x = inputs[0] if inputs else None
    if x is None:
        raise InputError("the layer has no data input")
    if str(x.dtype.name) != plan.dtype:
        raise InputError(
            f"input has dtype {x.dtype.name}; the plan was made for {plan.dtype} (plan it for "
            "the dtype of its data)"
        )
    kernel = kernel_for(type(plan))
    if kernel is None:
        raise InputError(f"no kernel for a {type(plan).__name__}")
    return kernel(plan, x, inputs)


def _shape(x: Array, plan: FamilyPlan) -> None:
    if tuple(x.shape) != plan.input_shape:
        raise InputError(
            f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
        )


def _windows(plan: PoolPlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    values, indices = pool(x, plan)
    return [values] + ([indices] if indices is not None else [])


def _adaptive(plan: AdaptivePlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    return adaptive_pool(x, plan)


def _reduce(plan: ReducePlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    _shape(x, plan)
    return [reduce(x, plan)]


def _lp(plan: LpPlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    _shape(x, plan)
    return [lp_pool(x, plan)]


def _unpool(plan: UnpoolPlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    _shape(x, plan)
    indices = inputs[1] if len(inputs) > 1 else None
    if indices is None:
        raise InputError("MaxUnpool needs its indices input I")
    return [max_unpool(x, indices, plan)]


def _qglobal(plan: QGlobalPlan, x: Array, inputs: Sequence[Array | None]) -> list[Array]:
    _shape(x, plan)
    return [qlinear_global_average(list(inputs), plan)]


register(PoolPlan, _windows)
register(AdaptivePlan, _adaptive)
register(ReducePlan, _reduce)
register(LpPlan, _lp)
register(UnpoolPlan, _unpool)
register(QGlobalPlan, _qglobal)
