"""The kernel paths of the pooling families (irpool/families/): one function per plan type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from ..errors import InputError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan

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
    raise InputError(f"no kernel for a {type(plan).__name__}")
