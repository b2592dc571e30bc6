"""The text of a bundle's repro.py: a script that needs nothing but the runtime and numpy.

It loads the small model, runs it on input.npz, compares each of the layer's outputs with
expected.npz (shapes, then numpy.isclose with the bundle's atol and rtol, NaN equal to NaN),
prints the first differing cells and exits 1 while they differ, 0 once they agree.
"""

from __future__ import annotations

from collections.abc import Sequence

_COMMON = '''
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, {model!r})
OUTPUTS = {outputs!r}  # the layer's outputs: tensor names of the model, in expected.npz order
BF16 = {bf16!r}  # arrays stored as their bfloat16 bits (uint16)
ATOL, RTOL = {atol!r}, {rtol!r}


def as_float(name, array):
    """bfloat16 bits as float32 values; anything else as it is."""
    if name in BF16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def differs(got, want):
    """The cells where two outputs differ, or None when their shapes differ."""
    if got.shape != want.shape:
        return None
    if got.dtype.kind in "iub" and want.dtype.kind in "iub":
        return got != want
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g, w, atol=ATOL, rtol=RTOL, equal_nan=True) | (g == w)
    return ~close


def report(outputs):
    expected = np.load(os.path.join(HERE, "expected.npz"))
    bad_outputs = 0
    for name, got in zip(OUTPUTS, outputs):
        want = as_float(name, expected[name])
        got = as_float(name, got)
        bad = differs(got, want)
        if bad is None:
            print(f"{{name}}: shape {{list(got.shape)}}, expected {{list(want.shape)}}")
            bad_outputs += 1
            continue
        count = int(np.count_nonzero(bad))
        if not count:
            print(f"{{name}}: {{got.size}} values as expected")
            continue
        bad_outputs += 1
        with np.errstate(invalid="ignore"):
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))[bad]
        finite = diff[np.isfinite(diff)]
        worst = f"max abs {{float(finite.max()):.6g}}" if finite.size else "NaN or inf"
        print(f"{{name}}: {{count}}/{{got.size}} values differ ({{worst}})")
        for index in np.argwhere(bad)[:8]:
            i = tuple(int(v) for v in index)
            print(f"  at {{list(i)}}: got {{got[i].item()!r}}, expected {{want[i].item()!r}}")
    if bad_outputs:
        print("REPRODUCED: " + {what!r})
        return 1
    print("not reproduced: the outputs are as expected (fixed?)")
    return 0
'''

_OPENVINO = """
import openvino as ov

PRECISION = {precision!r}


def run():
    core = ov.Core()
    model = core.read_model(MODEL)
    compiled = core.compile_model(model, "CPU", {{"INFERENCE_PRECISION_HINT": PRECISION}})
    request = compiled.create_infer_request()
    inputs = np.load(os.path.join(HERE, "input.npz"))
    for port in compiled.inputs:
        name = port.get_any_name()
        array = np.ascontiguousarray(inputs[name])
        if name in BF16:
            tensor = ov.Tensor(ov.Type.bf16, list(array.shape))
            tensor.data.view(np.uint16)[...] = array
        else:
            tensor = ov.Tensor(array)
        request.set_tensor(port, tensor)
    request.infer()
    out = []
    for name in OUTPUTS:
        tensor = request.get_tensor(compiled.output(name))
        data = np.array(tensor.data, copy=True)
        if tensor.element_type == ov.Type.bf16:
            data = data.view(np.uint16)
        out.append(data)
    return out


if __name__ == "__main__":
    print(f"openvino {{ov.get_version()}}, CPU, INFERENCE_PRECISION_HINT={{PRECISION}}")
    sys.exit(report(run()))
"""

_ONNXRUNTIME = """
import onnxruntime as ort


def run():
    session = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    inputs = np.load(os.path.join(HERE, "input.npz"))
    feeds = {{i.name: inputs[i.name] for i in session.get_inputs()}}
    return session.run(list(OUTPUTS), feeds)


if __name__ == "__main__":
    print(f"onnxruntime {{ort.__version__}}, CPUExecutionProvider")
    sys.exit(report(run()))
"""


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
