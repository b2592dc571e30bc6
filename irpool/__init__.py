"""irpool: check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX models."""

from __future__ import annotations

__version__ = "0.1.0"
