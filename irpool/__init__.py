"""irpool: check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX models.

>>> import irpool
>>> report = irpool.check("fixtures/spec/avgpool-1-examples.xml")   # doctest: +SKIP
>>> [f.message for f in report.findings]                             # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import check, compile_pool, explain, load, pool, run
from .errors import IrpoolError

__all__ = [
    "IrpoolError",
    "__version__",
    "check",
    "compile_pool",
    "explain",
    "load",
    "pool",
    "run",
]
