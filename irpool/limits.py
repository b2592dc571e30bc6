"""The size limit of every array irpool allocates, checked before anything is allocated."""

from __future__ import annotations

import math

from .env import env_int
from .errors import LimitError, Where, option
from .model import dims_text

DEFAULT_MAX_ELEMENTS = 1 << 30
"""Largest array (input, output or intermediate) irpool allocates: 2^30 elements.
`--max-elements` or IRPOOL_MAX_ELEMENTS change it."""


def max_elements(override: int | None = None) -> int:
    if override is not None:
        return override
    return env_int("IRPOOL_MAX_ELEMENTS", DEFAULT_MAX_ELEMENTS)


def check_elements(
    shape: tuple[int, ...], what: str, limit: int | None = None, where: Where | None = None
) -> None:
    """Refuse, before anything is allocated, an array larger than the limit."""
    count = math.prod(shape)
    cap = max_elements(limit)
    if count > cap:
        raise LimitError(
            f"{what} has shape {dims_text(shape)} = {count} elements, above the limit of {cap} "
            f"({option('max_elements')} or IRPOOL_MAX_ELEMENTS raise it)",
            where,
        )
