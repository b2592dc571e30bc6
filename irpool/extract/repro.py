"""The text of a bundle's repro.py: a script that needs nothing but the runtime and numpy.

It loads the small model, runs it on input.npz, compares each of the layer's outputs with
expected.npz (shapes, then numpy.isclose with the bundle's atol and rtol, NaN equal to NaN),
prints the first differing cells and exits 1 while they differ, 0 once they agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from .templates import template

_COMMON = template("repro_common.py.txt")

_OPENVINO = template("repro_openvino.py.txt")

_ONNXRUNTIME = template("repro_onnxruntime.py.txt")


def script(
    runtime: str,
    model: str,
    outputs: Sequence[str],
    what: str,
    atol: float,
    rtol: float,
    precision: str,
    bf16: Sequence[str] = (),
    title: str = "",
) -> str:
    """repro.py's text."""
    head = (
        "#!/usr/bin/env python3\n"
        f'"""{title or "A minimal reproducer written by irpool extract."}\n\n'
        "Needs only numpy and the runtime. Exits 1 while the runtime's output differs from\n"
        "expected.npz (the difference is printed), 0 once it is as expected.\n"
        '"""\n'
    )
    common = _COMMON.format(
        model=model, outputs=tuple(outputs), bf16=tuple(bf16), atol=atol, rtol=rtol, what=what
    )
    tail = _OPENVINO if runtime == "openvino" else _ONNXRUNTIME
    return head + common + tail.format(precision=precision)
