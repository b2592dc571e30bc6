"""`irpool extract`: a standalone repro of one layer."""

from __future__ import annotations

import argparse
from typing import Any

from ..cli_options import (
    Command,
)


def _cmd_extract(args: argparse.Namespace) -> int:
    from ..extract_command import run

    return run(args)


def _extract_options(p: Any) -> None:
    """write a minimal standalone repro of one layer (a bundle for a bug report)

    Cut one pooling layer out of a model (IR: the layer with Parameters of its real input's
    shape and type and its constant inputs; ONNX: the node alone with its opset), feed it the
    input the runtime gave it inside the full model, check that it still shows what the full
    model shows (else keep the full model's dynamic dims, then producers, then consumers),
    shrink the input while the finding persists, and write a folder that needs nothing but the
    runtime and numpy: the model, input.npz, expected.npz, repro.py (exit 1 while the
    difference reproduces, 0 once fixed), REPORT.md and bundle.json (docs/extract.md). Exit 0
    when the layer agrees, 1 when the bundle reproduces a difference, 2 invalid input, 3 the
    runtime is not installed.
    """
    from ..extract_command import add_options

    add_options(p)


EXTRACT = Command("extract", _cmd_extract, _extract_options)
