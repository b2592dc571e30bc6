"""irpool: check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX models.

Every command has a function here that takes a path or an in-memory model and returns a typed
report (a dataclass with the data of the command's JSON, `to_json()`):

>>> import irpool
>>> report = irpool.check("fixtures/spec/avgpool-1-examples.xml")   # doctest: +SKIP
>>> [f.message for f in report.findings]                             # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names are loaded on first use (PEP 562), so that `import irpool` and the command
# line's --help do not import numpy, the kernels and every front end.  Several of them share
# their name with a submodule (irpool.check, irpool.compare, ...): importing that submodule
# would set the package attribute to the module, so the package refuses that one assignment
# and the name keeps meaning the function.  The modules stay importable by name
# (from irpool.compare import compare_model).
_PUBLIC: dict[str, str] = {
    "ExplainReport": "api",
    "check": "api",
    "compare": "api",
    "compile_model": "api",
    "compile_pool": "api",
    "convert_report": "api",
    "explain": "api",
    "extract": "extract",
    "ExtractResult": "extract",
    "fixtures": "api",
    "load": "api",
    "pool": "api",
    "run": "api",
    "CompareReport": "compare",
    "ConvertReport": "convert_report",
    "IrpoolError": "errors",
    "RunReport": "run_report",
}

if TYPE_CHECKING:
    from .api import (
        ExplainReport,
        check,
        compare,
        compile_model,
        compile_pool,
        convert_report,
        explain,
        fixtures,
        load,
        pool,
        run,
    )
    from .compare import CompareReport
    from .convert_report import ConvertReport
    from .errors import IrpoolError
    from .extract import ExtractResult, extract
    from .run_report import RunReport


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'irpool' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


class _Package(types.ModuleType):
    """The irpool package: a submodule named like a public function (check, compare, run, ...)
    does not replace the function when it is imported."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PUBLIC and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "CompareReport",
    "ConvertReport",
    "ExplainReport",
    "ExtractResult",
    "IrpoolError",
    "RunReport",
    "__version__",
    "check",
    "compare",
    "compile_model",
    "compile_pool",
    "convert_report",
    "explain",
    "extract",
    "fixtures",
    "load",
    "pool",
    "run",
]
