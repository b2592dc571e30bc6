"""irpool: check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX models.

>>> import irpool
>>> report = irpool.check("fixtures/spec/avgpool-1-examples.xml")   # doctest: +SKIP
>>> [f.message for f in report.findings]                             # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import convert_report as _onnx_convert_report  # noqa: F401
from .api import check, compile_pool, explain, load, pool, run
from .audit import convert_report
from .errors import IrpoolError

# The submodule irpool.convert_report (the ONNX report) is loaded above, before the function of
# the same name is bound: importing a submodule for the first time sets the package's attribute,
# so the function must come after it to stay irpool.convert_report.

__all__ = [
    "IrpoolError",
    "__version__",
    "check",
    "compile_pool",
    "convert_report",
    "explain",
    "load",
    "pool",
    "run",
]
