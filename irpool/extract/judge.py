"""Whether a small model still shows a finding: run it as its repro.py does, compute what
irpool expects under the reference convention, and ask compare (or convert-report) which
divergence that is.

One Verdict per candidate: the repro's own rule (shapes, then numpy.isclose with the bundle's
atol/rtol, NaN equal to NaN) decides `reproduces`; the report's diagnosis names the divergence.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import conventions
from ..errors import IrpoolError
from ..model import Graph

Array = npt.NDArray[Any]
_ID = re.compile(r"^(D\d+[a-z]?)\b")


def divergence_id(text: str | None) -> str | None:
    """D1, D2c, ... at the start of a divergence's text; None for none."""
    if not text:
        return None
    m = _ID.match(text.strip())
    return m.group(1) if m else None


@dataclass
class Verdict:
    """What a model (the full one or a cut) shows for the layer."""

    reproduces: bool
    """The runtime's outputs of the layer differ from what irpool expects (repro.py's rule)."""
    divergence: str | None = None
    """The divergence compare or convert-report names for the difference (its full text)."""
    diagnosis: str | None = None
    runtime: list[Array] = field(default_factory=list)
    expected: list[Array] = field(default_factory=list)
    error: str | None = None
    """Why the candidate could not be judged (a runtime or irpool refused it)."""

    @property
    def divergence_id(self) -> str | None:
        return divergence_id(self.divergence)

    @property
    def gross(self) -> bool:
        """Some output differs by more than float rounding: a shape, a NaN, an index, or a
        value off by more than 1e-4 relative (a shrunk input must not trade the finding for a
        rounding difference that happens to keep its label)."""
        for got, want in zip(self.runtime, self.expected, strict=False):
            bad = differing(got, want, 0.0, 1e-4)
            if bad is None or bad.any():
                return True
        return False

    def same_finding(self, other: Verdict) -> bool:
        return (
            self.error is None
            and self.reproduces == other.reproduces
            and self.divergence_id == other.divergence_id
        )


def to_float(a: Array) -> Array:
    if a.dtype.name == "bfloat16":
        return np.asarray(a.astype(np.float32))
    return a


def differing(got: Array, want: Array, atol: float, rtol: float) -> Array | None:
    """The cells where two outputs differ (repro.py's rule), or None when the shapes differ."""
    if got.shape != want.shape:
        return None
    g, w = to_float(got), to_float(want)
    if g.dtype.kind in "iub" and w.dtype.kind in "iub":
        return np.asarray(g != w)
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g64, w64, atol=atol, rtol=rtol, equal_nan=True)
        close |= g64 == w64  # infinities of the same sign
    return np.asarray(~close)


def outputs_differ(runtime: list[Array], expected: list[Array], atol: float, rtol: float) -> bool:
    for got, want in zip(runtime, expected, strict=False):
        bad = differing(got, want, atol, rtol)
        if bad is None or bad.any():
            return True
    return len(runtime) < len(expected)


def first_cells(
    runtime: list[Array], expected: list[Array], atol: float, rtol: float, limit: int = 8
) -> list[dict[str, Any]]:
    """The first differing cells of each output: index, runtime's and irpool's values."""
    out: list[dict[str, Any]] = []
    for k, (got, want) in enumerate(zip(runtime, expected, strict=False)):
        bad = differing(got, want, atol, rtol)
        if bad is None:
            out.append(
                {"output": k, "runtime_shape": list(got.shape), "expected_shape": list(want.shape)}
            )
            continue
        for idx in np.argwhere(bad)[:limit]:
            i = tuple(int(v) for v in idx)
            out.append(
                {
                    "output": k,
                    "index": list(i),
                    "runtime": to_float(got)[i].item(),
                    "expected": to_float(want)[i].item(),
                }
            )
    return out


def expected_values(
    graph: Graph, layer_name: str, ins: list[Array], convention: str
) -> list[Array]:
    """irpool's outputs of the layer on its inputs under `convention`; for a global or
    adaptive pool whose framework irpool has no rules for (TensorFlow's reductions), the
    framework's own outputs, as convert-report computes them."""
    from ..run_one import run_layer

    extra = {f"input{k}": a for k, a in enumerate(ins) if k > 0}
    if conventions.get(convention).cpu_plugin_kernels:
        quantized = _lpt_values(graph, layer_name, ins)
        if quantized is not None:
            return quantized
    try:
        _, outs = run_layer(graph, layer_name, ins[0], convention, extra=extra)
    except IrpoolError:
        found = framework_values(graph, layer_name, ins, convention)
        if found is None:
            raise
        return found
    return [outs[k] for k in sorted(outs, key=lambda s: int(s.removeprefix("output")))]


def _lpt_values(graph: Graph, layer_name: str, ins: list[Array]) -> list[Array] | None:
    """A pooling layer openvino's CPU plugin runs on integer codes (a FakeQuantize before it,
    and no fused one after it): its outputs as the plugin computes them (compare's rule,
    irpool/compare_lpt.py); None for any other layer."""
    from ..compare_lpt import compare_values, quantized_layers
    from ..lookup import find
    from ..ops.binding import bind

    layer = find(graph, layer_name)
    q = quantized_layers(graph, [layer]).get(layer.name or "")
    if q is None or q.read_at is not None:
        return None
    got, _, _ = compare_values(bind(graph, layer, "openvino"), q, ins[0])
    return list(got)


def framework_values(
    graph: Graph, layer_name: str, ins: list[Array], convention: str
) -> list[Array] | None:
    """The source framework's outputs of an adaptive or global pool (what convert-report
    compares an IR's ReduceMean/ReduceMax/Adaptive*Pool with), or None."""
    from ..lookup import find
    from ..ops.openvino import pooling_like

    layer = find(graph, layer_name)
    kind = pooling_like(layer.type)
    framework = conventions.get(convention).framework
    if kind is None or framework is None or not ins:
        return None
    family, reduce = kind
    argument = [int(v) for v in np.ravel(ins[1])] if len(ins) > 1 else []
    keep = str(layer.data.get("keep_dims", "false")).lower() == "true"
    if framework == "torch":
        from ..oracles import torch_rt

        _, want = torch_rt.pooling_like(family, reduce, ins[0], argument, keep)
        return [w if k == 0 else w.astype(np.int64) for k, w in enumerate(want)]
    if family != "reduce":
        return None
    from ..oracles import tensorflow_rt

    _, want = tensorflow_rt.reduce(reduce, ins[0], argument, keep)
    return want


def diagnose_ir(
    graph: Graph,
    arrays: Mapping[str, Array],
    layer_name: str,
    convention: str,
    atol: float,
    rtol: float,
    precision: str,
) -> tuple[bool, str | None, str | None]:
    """(passed, divergence, diagnosis) of one layer of an IR: compare's under the openvino or
    onnx convention; under a source framework's (torch, tf), convert-report's audit of the IR
    against that framework."""
    if conventions.get(convention).framework is not None:
        from ..audit_ir import audit_ir

        audited = audit_ir(graph, dict(arrays), convention, atol, rtol, [layer_name])
        op = audited.ops[0] if audited.ops else None
        if op is None:
            return True, None, None
        text = op.divergence or op.error
        return op.same is not False, op.divergence if divergence_id(op.divergence) else None, text
    from ..compare import CompareOptions, compare_model

    options = CompareOptions(convention, atol, rtol, precision)
    report = compare_model(graph, dict(arrays), [layer_name], options)
    layer = report.layers[0] if report.layers else None
    if layer is None:
        return True, None, None
    if layer.diagnosis is not None:
        first = layer.diagnosis.divergences[0] if layer.diagnosis.divergences else None
        return layer.passed, first, layer.diagnosis.text
    return layer.passed, None, f"irpool refuses the layer: {layer.error}" if layer.error else None


def judge_ir(
    path: str,
    layer_name: str,
    arrays: Mapping[str, Array],
    convention: str,
    precision: str,
    atol: float,
    rtol: float,
    n_outputs: int,
) -> Verdict:
    """The verdict of the small IR at `path` on `arrays`: openvino runs it as repro.py does
    (its first `n_outputs` outputs are the layer's), irpool computes the layer on the input
    openvino gave it inside the small model, and compare names the divergence."""
    from ..api import load
    from ..oracles import bundle_rt, openvino_rt, refusals

    try:
        graph = load(path)
        ran = bundle_rt.run_openvino(path, arrays, precision)
        runtime = [a for _, a in ran[:n_outputs]]
        with refusals("openvino", path):
            found, _ = openvino_rt.probe_layers(
                path,
                [layer_name],
                arrays,
                openvino_rt.LayerProbe(precision, held=False, outputs=False),
            )
        ins = found[layer_name][0] if layer_name in found else []
        expected = expected_values(graph, layer_name, ins, convention)
        _, divergence, diagnosis = diagnose_ir(
            graph, arrays, layer_name, convention, atol, rtol, precision
        )
    except IrpoolError as e:
        return Verdict(False, error=e.message)
    reproduces = outputs_differ(runtime, expected, atol, rtol)
    return Verdict(reproduces, divergence, diagnosis, runtime, expected)


def _verdict(
    report: Any, runtime: list[Array], expected: list[Array], atol: float, rtol: float
) -> Verdict:
    layer = report.layers[0] if report.layers else None
    divergence = None
    diagnosis = None
    if layer is not None and layer.diagnosis is not None:
        diagnosis = layer.diagnosis.text
        if layer.diagnosis.divergences:
            divergence = layer.diagnosis.divergences[0]
    elif layer is not None and layer.error:
        diagnosis = f"irpool refuses the layer: {layer.error}"
    reproduces = outputs_differ(runtime, expected, atol, rtol)
    return Verdict(reproduces, divergence, diagnosis, runtime, expected)


def judge_onnx(
    path: str,
    label: str,
    arrays: Mapping[str, Array],
    runtime_name: str,
    precision: str,
    atol: float,
    rtol: float,
) -> Verdict:
    """The verdict of a one-node ONNX model: openvino's conversion of it (runtime openvino, as
    convert-report audits it) or onnxruntime (as compare checks it) against irpool's onnx
    convention."""
    from ..api import load
    from ..oracles import bundle_rt

    try:
        graph = load(path)
        from .cut import onnx_inputs

        layer = next(la for la in graph.layers if la.label == label)
        names = onnx_inputs(graph, layer)
        ins = [np.asarray(arrays[n]) for n in names]
        expected = expected_values(graph, label, ins, "onnx")
        if runtime_name == "openvino":
            from ..convert_report import convert_report

            ran = bundle_rt.run_openvino(path, arrays, precision)
            runtime = [a for _, a in ran]
            report = convert_report(graph, dict(arrays), atol, rtol, [label], exact=False)
            node = report.nodes[0] if report.nodes else None
            reproduces = outputs_differ(runtime, expected, atol, rtol)
            divergence = node.divergence if node is not None else None
            return Verdict(
                reproduces,
                divergence if divergence_id(divergence) else None,
                divergence,
                runtime,
                expected,
            )
        from ..compare import CompareOptions, compare_model

        ran = bundle_rt.run_onnxruntime(path, arrays)
        runtime = [a for _, a in ran]
        options = CompareOptions("onnx", atol, rtol, exact=True)
        compared = compare_model(graph, dict(arrays), [label], options)
    except IrpoolError as e:
        return Verdict(False, error=e.message)
    return _verdict(compared, runtime, expected, atol, rtol)


def write_candidate(folder: str, name: str, data: bytes, weights: bytes = b"") -> str:
    """Write a candidate model into a scratch folder; its path."""
    path = os.path.join(folder, name)
    with open(path, "wb") as handle:
        handle.write(data)
    if weights and path.endswith(".xml"):
        with open(path[:-4] + ".bin", "wb") as handle:
            handle.write(weights)
    elif path.endswith(".xml") and os.path.exists(path[:-4] + ".bin"):
        os.remove(path[:-4] + ".bin")
    return path
