"""Working buffers a thread reuses from chunk to chunk of one pool() call."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


class Scratch:
    """Working buffers one thread reuses from chunk to chunk of one pool() call.

    Fresh buffers for every chunk cost a page fault per 4 KiB: glibc hands freed blocks of a
    few hundred KiB back to the kernel, so each chunk faulted its memory in again (measured on
    large_avg: 219 ms with fresh buffers, 124 ms with glibc told to keep them)."""

    def __init__(self) -> None:
        self._buffers: dict[object, Array] = {}

    def take(self, key: object, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
        """An uninitialised array; the same key returns the same memory until the next take."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        buf = self._buffers.get(key)
        if buf is None or buf.nbytes < nbytes:
            buf = np.empty(max(nbytes, 1), np.uint8)
            self._buffers[key] = buf
        return buf[:nbytes].view(dtype).reshape(shape)
