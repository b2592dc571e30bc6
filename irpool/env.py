"""Integer settings from the environment (IRPOOL_MAX_ELEMENTS, IRPOOL_MAX_XML_BYTES,
IRPOOL_THREADS): unset or empty means the default; anything but an integer >= 1 is an error."""

from __future__ import annotations

import os

from .errors import UsageError


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{name}={raw!r}: expected an integer >= 1")
    return value
