"""The runtimes as `irpool extract` uses them: run a small model file as its repro.py does
(read, compile, infer, outputs in order), openvino's shapes of its layers, and the value a
tensor of a converted ONNX model has inside openvino.

Imported lazily (only irpool/oracles/ imports the runtimes); a missing runtime raises
OracleMissing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import openvino_rt, refusals


def run_openvino(
    path: str, inputs: Mapping[str, np.ndarray], precision: str = openvino_rt.DEFAULT_PRECISION
) -> list[tuple[list[str], np.ndarray]]:
    """Read the model file at `path` (IR or ONNX) with openvino, compile it for the CPU with
    `precision`, run it on `inputs` (by Parameter or tensor name) and return its outputs in
    order, each with its tensor names: what a bundle's repro.py does."""
    with refusals("openvino", path):
        core = openvino_rt.core()
        model = core.read_model(path)
        openvino_rt.guard(model)
        compiled = core.compile_model(model, "CPU", openvino_rt.config(precision))
        request = compiled.create_infer_request()
        for port in compiled.inputs:
            names = sorted(port.get_names())
            key = next((n for n in names if n in inputs), None)
            if key is None:
                key = next(iter(inputs)) if len(inputs) == 1 else names[0]
            request.set_tensor(port, openvino_rt.to_tensor(inputs[key]))
        request.infer()
        return [
            (sorted(out.get_names()), openvino_rt.from_tensor(request.get_output_tensor(i)))
            for i, out in enumerate(compiled.outputs)
        ]


def output_dims(path: str) -> dict[tuple[str, int], tuple[int, ...] | None]:
    """openvino's inferred dims of every layer output of the IR at `path` (by friendly name
    and output number; -1 for a dynamic dim, None for a dynamic rank)."""
    with refusals("openvino", path):
        model = openvino_rt.read_path(path)
        out: dict[tuple[str, int], tuple[int, ...] | None] = {}
        for op in model.get_ordered_ops():
            for i in range(op.get_output_size()):
                shape = op.get_output_partial_shape(i)
                if shape.rank.is_dynamic:
                    out[(op.get_friendly_name(), i)] = None
                else:
                    out[(op.get_friendly_name(), i)] = tuple(
                        d.get_length() if d.is_static else -1 for d in shape
                    )
        return out


def converted_tensors(
    path: str,
    names: Sequence[str],
    inputs: Mapping[str, np.ndarray],
    precision: str = openvino_rt.DEFAULT_PRECISION,
) -> dict[str, np.ndarray]:
    """The values the tensors `names` of an ONNX model have inside openvino's conversion of
    it, run on `inputs` (a model input among them is the input itself)."""
    with refusals("openvino", path):
        converted = openvino_rt.convert(path)
        ports = openvino_rt.tensor_ports(converted)
        taps = [ports[n] for n in names if n in ports and n not in inputs]
        values = openvino_rt.probe(converted, taps, inputs, precision)
    found = {n: np.asarray(inputs[n]) for n in names if n in inputs}
    wanted = [n for n in names if n in ports and n not in inputs]
    found.update(zip(wanted, values, strict=True))
    return found


def run_onnxruntime(
    path: str, inputs: Mapping[str, np.ndarray]
) -> list[tuple[list[str], np.ndarray]]:
    """Run the ONNX model at `path` with onnxruntime's CPU provider; outputs in order."""
    from . import onnxruntime_rt

    _, ort = onnxruntime_rt.load()
    with refusals("onnxruntime", path):
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {i.name: inputs[i.name] for i in session.get_inputs()}
        names = [o.name for o in session.get_outputs()]
        values = session.run(names, feeds)
    return [([n], np.asarray(v)) for n, v in zip(names, values, strict=True)]


def versions(runtime: str) -> dict[str, Any]:
    """The runtime's and numpy's versions, as a bug report gives them."""
    found: dict[str, Any] = {"numpy": np.__version__}
    if runtime == "onnxruntime":
        from . import onnxruntime_rt

        _, ort = onnxruntime_rt.load()
        found["onnxruntime"] = ort.__version__
    else:
        found["openvino"] = str(openvino_rt.load().get_version())
    return found
