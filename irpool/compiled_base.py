"""What the modules of irpool.compile_model share (compiled_model.py, compiled_pool.py,
compiled_lpt.py): how a layer runs, a step on Values and on plain arrays, and the tensors of
irpool/run.py as the steps make them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .model import numpy_dtype

Array = npt.NDArray[Any]


@dataclass
class LayerPath:
    """How one pooling layer of a compiled model runs."""

    label: str
    type: str
    path: str
    """"compiled" (numba), "numpy" (the numpy core, plan prepared), or "interpreted" (the
    interpreter's own steps, plan looked up per call: an input held in another type than
    declared, a constant, or family value inputs computed by the model)."""
    why: str


class _Prepared:
    """A layer's step run on Values, and the same step on plain arrays (`direct`: a prepared
    kernel whose tensors are all held in their declared types)."""

    def __init__(
        self,
        run: Callable[[list[Any]], list[Any]],
        direct: Callable[[list[Any]], list[Any]] | None,
    ) -> None:
        self.run = run
        self.direct = direct

    def __call__(self, v: list[Any]) -> list[Any]:
        return self.run(v)


_RUN: list[Any] = []


def _run_module() -> Any:
    """irpool/run.py (the package's `run` attribute is the API function), imported once."""
    if not _RUN:
        import importlib

        _RUN.append(importlib.import_module(".run", __package__))
    return _RUN[0]


def _plain(v: Any) -> bool:
    """A tensor held in its declared type, computed per call (not a constant, not quantized)."""
    return bool(
        v.held == v.declared
        and v.constant is None
        and getattr(v, "quant", None) is None
        and v.jit_read is None
        and not v.late
        and v.array.dtype.name == numpy_dtype(v.declared).name
    )


def _value(array: Array, own: str, declared: str) -> Any:
    return _run_module().Value(array, own, declared)


_ELEMENT_TYPES: dict[np.dtype[Any], str] = {}


def _declared(array: Array) -> Any:
    """run._declared_value with the element type of each dtype looked up once (numpy's
    dtype.name is slow: tens of microseconds on a busy machine)."""
    rn = _run_module()
    et = _ELEMENT_TYPES.get(array.dtype)
    if et is None:
        et = _ELEMENT_TYPES[array.dtype] = rn.element_type_of_numpy(array.dtype.name) or "f32"
    return rn.Value(np.asarray(array), et, et)
