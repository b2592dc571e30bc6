"""irpool: check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX models.

Every command has a function here that takes a path or an in-memory model and returns a typed
report (a dataclass with the data of the command's JSON, `to_json()`):

>>> import irpool
>>> report = irpool.check("fixtures/spec/avgpool-1-examples.xml")   # doctest: +SKIP
>>> [f.message for f in report.findings]                             # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

# The modules whose names the functions below take (irpool.check, irpool.compare, ...) are
# imported first: importing a submodule for the first time sets the package's attribute of its
# name, so the function must be bound after it to stay irpool.<name>.  The modules stay
# importable by name (from irpool.compare import compare_model).
from . import check as _check_module  # noqa: F401
from . import compare as _compare_module  # noqa: F401
from . import convert_report as _onnx_convert_report  # noqa: F401
from . import explain as _explain_module  # noqa: F401
from . import fixtures as _fixtures_module  # noqa: F401
from . import run as _run_module  # noqa: F401
from . import extract as _extract_module  # noqa: F401
from .api import (
    ExplainReport,
    check,
    compare,
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
from .extract import ExtractResult, extract
from .errors import IrpoolError
from .run_report import RunReport

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
    "compile_pool",
    "convert_report",
    "explain",
    "extract",
    "fixtures",
    "load",
    "pool",
    "run",
]
