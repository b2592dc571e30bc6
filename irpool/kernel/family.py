"""The kernel paths of the pooling families (irpool/families/): one function per plan type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from ..errors import InputError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan
from ..families.reduce import ReducePlan

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
    raise InputError(f"no kernel for a {type(plan).__name__}")
