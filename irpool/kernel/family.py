"""The kernel paths of the pooling families (irpool/families/): one function per plan type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from ..errors import InputError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan
from ..families.lp import LpPlan
from ..families.qglobal import QGlobalPlan
from ..families.reduce import ReducePlan
from ..families.unpool import UnpoolPlan

Array = npt.NDArray[Any]


def execute(plan: FamilyPlan, inputs: Sequence[Array | None]) -> list[Array]:
    """The outputs of a family layer: `inputs` are the layer's inputs in order (None where an
    optional one is missing); the plan was made for inputs[0]'s shape and dtype."""
    x = inputs[0] if inputs else None
    if x is None:
        raise InputError("the layer has no data input")
    if str(x.dtype.name) != plan.dtype:
        raise InputError(
            f"input has dtype {x.dtype.name}; the plan was made for {plan.dtype} (plan it for "
            "the dtype of its data)"
        )
    if isinstance(plan, AdaptivePlan):
        from .adaptive import adaptive_pool

        return adaptive_pool(x, plan)
    if isinstance(plan, ReducePlan):
        from .reduction import reduce

        if tuple(x.shape) != plan.input_shape:
            raise InputError(
                f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
            )
        return [reduce(x, plan)]
    if isinstance(plan, LpPlan):
        from .lp import lp_pool

        _shape(x, plan)
        return [lp_pool(x, plan)]
    if isinstance(plan, UnpoolPlan):
        from .unpool import max_unpool

        _shape(x, plan)
        indices = inputs[1] if len(inputs) > 1 else None
        if indices is None:
            raise InputError("MaxUnpool needs its indices input I")
        return [max_unpool(x, indices, plan)]
    if isinstance(plan, QGlobalPlan):
        from .qglobal import qlinear_global_average

        _shape(x, plan)
        return [qlinear_global_average(list(inputs), plan)]
    raise InputError(f"no kernel for a {type(plan).__name__}")


def _shape(x: Array, plan: FamilyPlan) -> None:
    if tuple(x.shape) != plan.input_shape:
        raise InputError(
            f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
        )
