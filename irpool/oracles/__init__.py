"""The runtimes irpool checks itself against: openvino, onnxruntime, onnx's reference evaluator,
and the source frameworks of converted models (torch, tensorflow).

Each is imported lazily; a missing one raises OracleMissing (exit 3).  A runtime that refuses a
model raises OracleRefused (exit 2) with the runtime's own reason on one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import IrpoolError, OracleRefused, Where

_RUNTIME_MODULES = ("openvino", "onnxruntime", "onnx", "torch", "tensorflow", "keras")


_DUMP = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
"""A `name=value` line, such as the parameter dumps under an openvino check that failed."""


def _reason(error: BaseException) -> str:
    """The runtime's message without its source-location lines and parameter dumps: the last
    line that says why."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    told = [
        ln
        for ln in lines
        if not ln.rstrip(":").endswith((".cpp", ".hpp"))
        and not ln.startswith(("Exception from src/", "Check '"))
        and not _DUMP.match(ln)
    ]
    return (told or lines or [type(error).__name__])[-1]


@contextmanager
def unreadable(system: str, path: str) -> Iterator[None]:
    """Loading a model file with a framework's own loader: whatever it raises (torch and
    tensorflow raise ValueError, KeyError, ... for a file they cannot read) is one
    OracleRefused line saying the file cannot be read."""
    try:
        yield
    except IrpoolError:
        raise
    except Exception as e:
        raise OracleRefused(
            f"{system} cannot read the model: {_reason(e)}", Where(file=path)
        ) from None


@contextmanager
def refusals(system: str, path: str | None = None) -> Iterator[None]:
    """Turn a runtime's exception inside the block into one OracleRefused line."""
    try:
        yield
    except IrpoolError:
        raise
    except Exception as e:
        module = type(e).__module__.split(".")[0]
        if not isinstance(e, RuntimeError) and module not in _RUNTIME_MODULES:
            raise
        raise OracleRefused(f"{system} refused the model: {_reason(e)}", Where(file=path)) from None
