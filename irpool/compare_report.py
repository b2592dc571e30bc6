"""What `compare` reports: the per-layer comparisons, the diagnosis of a mismatch, the probe's
effect, the report itself, and its text and JSON forms (schema irpool.compare/1)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .comparison import SUM_TOLERANCE as SUM_TOLERANCE
from .comparison import OutputComparison as OutputComparison
from .comparison import compare_arrays as compare_arrays
from .comparison import mismatch_cells as mismatch_cells
from .comparison import mismatch_map as mismatch_map
from .comparison import rounding_bound as rounding_bound
from .schemas import document
from .skipped import Skipped

Array = npt.NDArray[Any]


SCHEMA = "irpool.compare/1"


@dataclass
class Diagnosis:
    matches: list[str]
    divergences: list[str]
    cells: list[tuple[int, ...]]
    text: str


@dataclass
class LayerComparison:
    layer: str
    layer_id: int | None
    op: str
    line: int | None
    convention: str
    outputs: list[OutputComparison] = field(default_factory=list)
    passed: bool = True
    error: str | None = None
    diagnosis: Diagnosis | None = None
    notes: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    """The layer's attributes as written in the model."""
    plans: dict[str, Any] = field(default_factory=dict)
    """The layer under each convention on its actual input: the plan's switches (plan_to_json)
    with the output shape, or {"refuses": why}."""
    reference_bug: str | None = None
    """The values differ from onnx's reference evaluator's where that evaluator is known to be
    wrong (the bug): the layer counts as passed, flagged so."""


@dataclass
class ProbeEffect:
    """The model's final outputs with the probe (the outputs compare adds on every compared
    layer) against the same run without it: a probe that changes them no longer observes the
    model as deployed."""

    compared: int
    moved: int
    max_abs: float
    layers: list[str] = field(default_factory=list)
    """The compared layers whose tensors, asked for alone, move the final outputs."""
    runtime: str = "openvino"

    @property
    def text(self) -> str:
        if not self.moved:
            return (
                f"probe: the model's final outputs are the same with and without the probe "
                f"({self.compared} values, bit for bit)"
            )
        return (
            f"probe: asking {self.runtime} for the compared layers' tensors changed what it "
            "runs: "
            f"{self.moved} of the model's {self.compared} final output values moved (max abs "
            f"{_fmt(self.max_abs)}); "
            + (
                f"asked for alone, the tensors of {', '.join(repr(n) for n in self.layers)} "
                "do it: those results describe a probed execution, not the deployed one"
                if self.layers
                else "every layer result above describes that probed execution"
                if self.runtime != "openvino"
                else "no single layer's tensors do it alone: every layer result above "
                "describes that probed execution"
            )
        )


def probe_effect(plain: list[Array], probed: list[Array]) -> ProbeEffect:
    moved, total, worst = 0, 0, 0.0
    for a, b in zip(plain, probed, strict=False):
        if a.shape != b.shape:
            moved += int(max(a.size, b.size))
            total += int(max(a.size, b.size))
            continue
        total += int(a.size)
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            af, bf = a.astype(np.float64), b.astype(np.float64)
            diff = ~((af == bf) | (np.isnan(af) & np.isnan(bf)))
            if diff.any():
                worst = max(worst, float(np.nanmax(np.abs(af - bf)[diff], initial=0.0)))
        else:
            diff = a != b
        moved += int(diff.sum())
    return ProbeEffect(total, moved, worst)


class Unrunnable(Exception):
    """No runtime runs the model: its pooling layers are reported as skipped."""


@dataclass
class CompareReport:
    path: str
    precision: str
    openvino: str  # the oracle, described
    convention: str
    atol: float
    rtol: float
    layers: list[LayerComparison]
    missing: list[str]
    rounding: bool = False
    """Whether float means may differ by summation-order rounding (ONNX models, without
    `exact`)."""
    skipped: list[Skipped] = field(default_factory=list)
    """Pooling-like layers not compared (no entry in irpool), with the reason."""
    format: str = "ir"
    """The model's front end: ir or onnx (whose reports speak of nodes)."""
    precision_reason: str | None = None
    """Why openvino ran at `precision` (the plugin's default on this machine, or asked for)."""
    probe: ProbeEffect | None = None
    """Whether the probe changed what openvino computes (its final outputs), IR models."""
    probe_unchecked: str | None = None
    """Why the probe's effect on the final outputs was not checked (an IR model), or None."""

    def to_json(self) -> dict[str, Any]:
        """The report as `--json` prints it (schema irpool.compare/1)."""
        return to_json(self)

    @property
    def runtime(self) -> str:
        """The oracle's name: openvino, onnxruntime, or onnx-reference (onnx's evaluator)."""
        if self.openvino.startswith("onnxruntime"):
            return "onnxruntime"
        if self.openvino.startswith("onnx "):
            return "onnx-reference"
        return "openvino"

    @property
    def passed(self) -> bool:
        return all(layer.passed for layer in self.layers)

    @property
    def first_divergence(self) -> LayerComparison | None:
        return next((layer for layer in self.layers if not layer.passed), None)


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}"


def format_report(report: CompareReport) -> str:
    allowed = (
        f"; float means also within summation-order rounding, {SUM_TOLERANCE}"
        if report.rounding
        else ""
    )
    why = f" ({report.precision_reason})" if report.precision_reason else ""
    lines = [
        f"{report.path}: {report.openvino}{why}; irpool convention {report.convention}; "
        f"tolerance atol={report.atol:g} rtol={report.rtol:g} (indices exact{allowed})"
    ]
    who = {"onnx-reference": "reference"}.get(report.runtime, report.runtime)
    word = "node" if report.format == "onnx" else "layer"
    for layer in report.layers:
        status = "ok  " if layer.passed else "DIFF"
        if layer.reference_bug:
            status = "BUG "  # the reference evaluator's, not irpool's
        where = f"{report.path}:{layer.line}" if layer.line is not None else report.path
        lines.append(f'  {status}  {where}: {word} "{layer.layer}" ({layer.op})')
        if layer.error:
            lines.append(f"          irpool refuses the {word}: {layer.error}")
        for o in layer.outputs:
            lines += _output_lines(o, who)
        for note in layer.notes:
            lines.append(f"          note: {note}")
        if layer.diagnosis:
            lines.append(f"          diagnosis: {layer.diagnosis.text}")
    for name in report.missing:
        lines.append(f'  skip  {word} "{name}": not in {who}\'s model (it reaches no output)')
    for sk in report.skipped:
        where = f"{report.path}:{sk.line}" if sk.line is not None else report.path
        lines.append(f'  skip  {where}: {word} "{sk.layer}" ({sk.op}): not compared: {sk.reason}')
    if report.probe is not None:
        lines.append(f"  {report.probe.text}")
    elif report.probe_unchecked is not None:
        lines.append(f"  probe: not checked: {report.probe_unchecked}")
    lines.append(_summary(report, word))
    return "\n".join(lines)


def _output_lines(o: OutputComparison, who: str) -> list[str]:
    """The lines of one output of a compared layer: shapes and metrics, then its worst cell."""
    shapes = (
        f"declared {o.declared}, irpool {o.inferred}, {who} {o.produced}"
        if o.name == "values"
        else f"{who} {o.produced}"
    )
    line = f"          {o.name}: {o.dtype} {shapes}"
    if o.shape_ok:
        line += (
            f"; max abs {_fmt(o.max_abs)}, rel {_fmt(o.max_rel)}"
            + (f", ulp {_fmt(o.max_ulp)}" if o.max_ulp is not None else "")
            + f"; {o.mismatches}/{o.size} differ"
        )
        if o.rounding:
            line += (
                f" (and {o.rounding} by summation-order rounding, at most "
                f"{_fmt(o.rounding_share)} of the bound)"
            )
        if o.nan_mismatches or o.inf_mismatches:
            line += f"; NaN mismatches {o.nan_mismatches}, Inf mismatches {o.inf_mismatches}"
    else:
        line += f"; irpool computes {o.computed}"
    lines = [line]
    if o.worst_index is not None:
        lines.append(
            f"            worst at {list(o.worst_index)}: irpool {o.worst_irpool!r}, "
            f"{who} {o.worst_openvino!r}; passes with atol >= {_fmt(o.min_atol)} "
            f"or rtol >= {_fmt(o.min_rtol)}"
        )
    return lines


def _summary(report: CompareReport, word: str) -> str:
    n_bad = sum(1 for layer in report.layers if not layer.passed)
    n_skipped = len(report.missing) + len(report.skipped)
    summary = (
        f"{report.path}: {len(report.layers)} pooling {word}(s) compared, {n_bad} differ, "
        f"{n_skipped} skipped"
    )
    n_bug = sum(1 for layer in report.layers if layer.reference_bug)
    if n_bug:
        summary += (
            f"; {n_bug} {word}(s) differ only where onnx's reference evaluator is known to be "
            "wrong (BUG: the evaluator's)"
        )
    first = report.first_divergence
    if first is not None:
        summary += f'; first diverging {word} in topological order: "{first.layer}"'
    return summary


def _json_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (np.floating, np.integer)):
        return _json_value(v.item())
    return v


def outputs_json(outputs: Any) -> list[dict[str, Any]]:
    """Per-output comparison records as JSON objects (non-finite numbers as strings; a
    mismatch map only where values differ)."""
    records = []
    for o in outputs:
        record = {
            k: _json_value(v)
            for k, v in o.__dict__.items()
            if not (k in ("mismatch_map", "cell_values") and v is None)
        }
        record["worst_oracle"] = record["worst_openvino"]  # the neutral name of the same value
        if o.cell_values is not None:
            record["cell_values"] = {
                "irpool": o.cell_values[0],
                "oracle": o.cell_values[1],
                "differing": o.cell_values[2],
            }
        records.append(record)
    return records


def conversion_record(c: OutputComparison, other: str) -> dict[str, Any]:
    """One output of a converted op as its report writes it (values not yet JSON-safe):
    openvino's values against `other`'s ("onnx" in convert-report, "source" in the audit of
    a PyTorch or TensorFlow model)."""
    return {
        "output": c.name,
        "tensor": c.declared,
        "dtype": c.dtype,
        "openvino_shape": c.computed,
        f"{other}_shape": c.produced,
        "same": c.passed,
        "exact": c.exact,
        "differing": c.mismatches,
        "size": c.size,
        "max_abs": c.max_abs,
        "max_rel": c.max_rel,
        "max_ulp": c.max_ulp,
        "worst_index": c.worst_index,
        "worst_openvino": c.worst_irpool,
        f"worst_{other}": c.worst_openvino,
        "nan_mismatches": c.nan_mismatches,
        "inf_mismatches": c.inf_mismatches,
    }



def cell_records(c: OutputComparison, other: str) -> dict[str, Any]:
    """The differing-cell map and, for a small output, every value of both sides, as a
    converted op's report writes them beside `conversion_record`'s keys."""
    record: dict[str, Any] = {}
    if c.mismatch_map is not None:
        record["mismatch_map"] = c.mismatch_map
    if c.cell_values is not None:
        record["cell_values"] = {
            "openvino": c.cell_values[0],
            other: c.cell_values[1],
            "differing": c.cell_values[2],
        }
    return record

def to_json(report: CompareReport) -> dict[str, Any]:
    return {
        **document(SCHEMA, report.path),
        "format": report.format,
        "oracle": report.openvino,
        "runtime": report.runtime,
        "device": "CPU",
        "inference_precision_hint": report.precision if report.runtime == "openvino" else None,
        "inference_precision_reason": report.precision_reason,
        "probe": None
        if report.probe is None
        else {
            "final_values": report.probe.compared,
            "final_values_moved": report.probe.moved,
            "max_abs": report.probe.max_abs,
        },
        "convention": report.convention,
        "atol": report.atol,
        "rtol": report.rtol,
        "summation_rounding": SUM_TOLERANCE if report.rounding else None,
        "passed": report.passed,
        "first_diverging_layer": report.first_divergence.layer if report.first_divergence else None,
        "missing_in_openvino": report.missing,
        "missing_in_oracle": report.missing,
        "skipped": [
            *[
                {"layer": name, "type": None, "line": None, "reason": "not in the runtime's model"}
                for name in report.missing
            ],
            *[sk.to_json() for sk in report.skipped],
        ],
        "layers": [
            {
                "layer": layer.layer,
                "layer_id": layer.layer_id,
                "op": layer.op,
                "line": layer.line,
                "passed": layer.passed,
                "error": layer.error,
                "notes": layer.notes,
                "attributes": layer.attributes,
                "plans": layer.plans,
                "outputs": outputs_json(layer.outputs),
                "diagnosis": None
                if layer.diagnosis is None
                else {
                    "matching_conventions": layer.diagnosis.matches,
                    "divergences": layer.diagnosis.divergences,
                    "cells": [list(c) for c in layer.diagnosis.cells],
                    "text": layer.diagnosis.text,
                },
            }
            for layer in report.layers
        ],
    }


def progress_bar(stream: Any = sys.stderr) -> Callable[[int, int, str], None]:
    """A progress callback drawing a bar on `stream` (irpool.progress, tqdm)."""
    from .progress import progress_bar as bar

    return bar("compare", "layer", stream, force=True)
