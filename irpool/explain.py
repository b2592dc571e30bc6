"""`irpool explain`: one pooling layer in numbers (and, with matplotlib, in a picture).

For every spatial axis: the attributes as written, the pads after auto_pad, the output-size
formula with its numbers, the first and last window, the windows that reach into the padding
or the ceil overhang, empty windows and what they produce, and the divisor of every kind of
border window under each convention, with a note where the runtimes disagree.  Everything is
read off the same PoolPlan the kernel receives.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import conventions as conv
from .errors import IrpoolError, UsageError
from .geometry import AxisPlan, PoolParams, PoolPlan, pads_formula, plan, size_formula
from .kernel import divisor
from .model import Graph, format_shape
from .shapes import PoolingLayer, infer

SCHEMA = "irpool.explain/1"
SYSTEMS = {"openvino": "OpenVINO", "onnx": "onnxruntime", "torch": "PyTorch"}


@dataclass
class AxisReport:
    axis: int
    size: int
    window: int
    stride: int
    dilation: int
    pads_written: tuple[int, int]
    pads: tuple[int, int]
    pads_text: str
    out: int
    formula: str
    first_window: str
    last_window: str
    padded_windows: list[int]
    overhang_windows: list[int]
    empty_windows: list[int]


@dataclass
class BorderWindow:
    index: tuple[int, ...]
    where: str
    taps_in_input: int
    taps: int
    divisors: dict[str, float | None]
    note: str | None = None


@dataclass
class LayerReport:
    layer: str
    op: str
    file: str | None
    line: int | None
    convention: str
    attributes: dict[str, str]
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    reduce: str
    divisor_rule: str
    divisor_reason: str
    empty_result: str
    axes: list[AxisReport] = field(default_factory=list)
    borders: list[BorderWindow] = field(default_factory=list)
    conventions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    plan: PoolPlan | None = None


def _window_span(a: AxisPlan, j: int) -> str:
    taps = a.taps(j)
    kinds = []
    for p in taps:
        if 0 <= p < a.size:
            kinds.append(str(p))
        elif p < 0 or p < a.size + a.pad_end:
            kinds.append(f"{p}(pad)")
        else:
            kinds.append(f"{p}(overhang)")
    return f"window {j}: taps at {', '.join(kinds)}"


def _classify(a: AxisPlan) -> tuple[list[int], list[int], list[int]]:
    padded, overhang, empty = [], [], []
    for j in range(a.out):
        taps = a.taps(j)
        if any(p < 0 or a.size <= p < a.size + a.pad_end for p in taps):
            padded.append(j)
        if any(p >= a.size + a.pad_end for p in taps):
            overhang.append(j)
        if not any(0 <= p < a.size for p in taps):
            empty.append(j)
    return padded, overhang, empty


def _empty_result(p: PoolPlan) -> str:
    if p.reduce == "max":
        return {
            "lowest": "the lowest finite value of the type (-3.4e38 for f32; -inf shows for f16)",
            "-inf": "-inf",
        }[p.empty]
    if p.divisor != "in_input":
        return "0 (a zero sum over a non-zero divisor)"
    return {
        "openvino": "NaN where the clamped window extent is 0, -0.0 where it is negative "
        "(openvino CPU divides the zero sum by it)",
        "nan": "NaN",
        "zero": "0",
    }[p.empty]


def _divisor_at(p: PoolPlan, index: tuple[int, ...]) -> float | None:
    if p.reduce != "mean":
        return None
    if any(j >= a.out for j, a in zip(index, p.axes, strict=True)):
        return None
    div = divisor(p)
    if isinstance(div, float):
        return div
    return float(np.asarray(div)[index])


def _plans(params: PoolParams, shape: tuple[int, ...]) -> dict[str, PoolPlan | str]:
    plans: dict[str, PoolPlan | str] = {}
    for name in conv.CONVENTIONS:
        try:
            plans[name] = plan(params, shape, name)
        except IrpoolError as e:
            plans[name] = e.message
    return plans


def _border_windows(p: PoolPlan, others: dict[str, PoolPlan | str]) -> list[BorderWindow]:
    """One representative per kind of border window: per axis the first and last windows and
    any that reach into padding, the rest of an axis represented by one interior window."""
    per_axis: list[list[int]] = []
    for a in p.axes:
        padded, overhang, _ = _classify(a)
        special = sorted(set(padded) | set(overhang))
        interior = [j for j in range(a.out) if j not in special]
        per_axis.append(special + interior[:1])
    result = []
    for index in itertools.product(*per_axis):
        touches = [
            j in _classify(a)[0] or j in _classify(a)[1] for j, a in zip(index, p.axes, strict=True)
        ]
        if not any(touches):
            continue
        taps = math.prod(a.window for a in p.axes)
        inside = math.prod(a.in_input(j) for j, a in zip(index, p.axes, strict=True))
        parts = []
        for j, a in zip(index, p.axes, strict=True):
            if j == 0 and a.pad_begin > 0:
                parts.append("begin")
            elif any(t >= a.size + a.pad_end for t in a.taps(j)):
                parts.append("overhang")
            elif any(t >= a.size for t in a.taps(j)):
                parts.append("end")
            else:
                parts.append("inner")
        divisors: dict[str, float | None] = {}
        for name, other in others.items():
            divisors[name] = _divisor_at(other, index) if isinstance(other, PoolPlan) else None
        result.append(
            BorderWindow(index, "/".join(parts), inside, taps, divisors, _note(p, divisors))
        )
    return result


def _note(p: PoolPlan, divisors: dict[str, float | None]) -> str | None:
    """'OpenVINO divides this window by 9; onnxruntime and PyTorch divide it by 6'."""
    if p.reduce != "mean":
        return None
    groups: dict[float | None, list[str]] = {}
    for name, d in divisors.items():
        groups.setdefault(d, []).append(SYSTEMS[name])
    if len(groups) < 2:
        return None
    parts = []
    for d, names in groups.items():
        who, plural = " and ".join(names), len(names) > 1
        if d is None:
            parts.append(f"{who} {'have' if plural else 'has'} no such window")
        else:
            parts.append(f"{who} divide{'' if plural else 's'} this window by {d:g}")
    return "; ".join(parts)


def explain_layer(
    pl: PoolingLayer, input_shape: tuple[int, ...], convention: str | None = None
) -> LayerReport:
    """The report of one pooling layer for a static input shape."""
    name = convention or "openvino"
    p = plan(pl.params, input_shape, name)
    others = _plans(pl.params, input_shape)
    layer = pl.layer
    report = LayerReport(
        layer=layer.label,
        op=pl.spec.label,
        file=layer.file,
        line=layer.line,
        convention=name,
        attributes=dict(layer.data),
        input_shape=tuple(input_shape),
        output_shape=p.output_shape,
        reduce=p.reduce,
        divisor_rule=p.divisor,
        divisor_reason=p.divisor_reason,
        empty_result=_empty_result(p),
        notes=list(pl.notes),
        plan=p,
    )
    for i, a in enumerate(p.axes):
        written = pl.params.pads[i]
        if pl.params.auto_pad in ("same_upper", "same_lower"):
            d = a.dilation if conv.get(name).same_pads_dilated else 1
            pads_text = pads_formula(
                a.size, a.window, a.stride, d, pl.params.auto_pad == "same_upper"
            )
        elif pl.params.auto_pad == "valid":
            pads_text = "valid: pads 0, 0"
        else:
            pads_text = f"explicit: pads {a.pad_begin}, {a.pad_end}"
        padded, overhang, empty = _classify(a)
        report.axes.append(
            AxisReport(
                axis=i + 2,
                size=a.size,
                window=a.window,
                stride=a.stride,
                dilation=a.dilation,
                pads_written=written,
                pads=(a.pad_begin, a.pad_end),
                pads_text=pads_text,
                out=a.out,
                formula=size_formula(
                    a.size, a.window, a.stride, a.dilation, a.pad_begin, a.pad_end, p.shape_rule
                ),
                first_window=_window_span(a, 0),
                last_window=_window_span(a, a.out - 1),
                padded_windows=padded,
                overhang_windows=overhang,
                empty_windows=empty,
            )
        )
    report.borders = _border_windows(p, others)
    for other_name, other in others.items():
        if isinstance(other, str):
            report.conventions[other_name] = f"refuses: {other}"
        else:
            report.conventions[other_name] = (
                f"output {format_shape(tuple(_dims(other.output_shape)))}, "
                f"divisor rule {other.divisor}"
            )
    return report


def _dims(shape: Sequence[int]) -> list[Any]:
    from .model import Dim

    return [Dim.of(n) for n in shape]


def explain_graph(
    graph: Graph,
    layer: str | None = None,
    convention: str | None = None,
    input_shape: tuple[int, ...] | None = None,
) -> list[LayerReport]:
    """Reports for the named pooling layer, or for all of them."""
    inference = infer(graph)
    chosen = [
        pl
        for pl in inference.pooling
        if layer is None
        or pl.layer.name == layer
        or (pl.layer.name is None and pl.layer.label == layer)
    ]
    if layer is not None and not chosen:
        names = ", ".join(pl.layer.label for pl in inference.pooling) or "none"
        raise UsageError(f'{graph.path} has no pooling layer "{layer}"; pooling layers: {names}')
    reports = []
    for pl in chosen:
        shape = input_shape
        if shape is None:
            if pl.input_shape is None or not all(d.is_static for d in pl.input_shape):
                raise UsageError(
                    f'layer "{pl.layer.label}" has a dynamic input '
                    f"{format_shape(pl.input_shape)}; give --input-shape"
                )
            shape = tuple(d.lo for d in pl.input_shape)
        try:
            reports.append(explain_layer(pl, shape, convention))
        except IrpoolError as e:
            raise e.at(pl.layer.where()) from None
    return reports


def format_report(r: LayerReport) -> str:
    where = f"{r.file}:{r.line}" if r.file else "?"
    conv_title = conv.get(r.convention).title
    lines = [
        f'layer "{r.layer}" ({r.op}) at {where}; convention {r.convention} ({conv_title})',
        f"  {r.reduce} pooling {list(r.input_shape)} -> {list(r.output_shape)}",
        "  attributes: " + " ".join(f'{k}="{v}"' for k, v in r.attributes.items()),
    ]
    if r.reduce == "mean":
        lines.append(f"  divisor: {r.divisor_reason}")
    lines.append(f"  a window with no tap in the input gives {r.empty_result}")
    for a in r.axes:
        lines.append(
            f"  axis {a.axis}: size {a.size}, kernel {a.window}, stride {a.stride}, "
            f"dilation {a.dilation}; written pads {a.pads_written[0]}, {a.pads_written[1]}"
        )
        lines.append(f"    pads: {a.pads_text}")
        lines.append(f"    output: {a.formula}")
        lines.append(f"    first {a.first_window}")
        lines.append(f"    last  {a.last_window}")
        if a.padded_windows:
            lines.append(f"    windows reaching into the padding: {_ranges(a.padded_windows)}")
        if a.overhang_windows:
            lines.append(
                f"    windows reaching past pads_end (ceil overhang): {_ranges(a.overhang_windows)}"
            )
        if a.empty_windows:
            lines.append(f"    windows with no tap in the input: {_ranges(a.empty_windows)}")
    if r.reduce == "mean" and r.borders:
        lines.append("  border windows (taps inside the input / taps; divisor by convention):")
        for b in r.borders:
            divs = ", ".join(
                f"{SYSTEMS[k]} {'-' if v is None else f'{v:g}'}" for k, v in b.divisors.items()
            )
            lines.append(f"    {b.index} {b.where}: {b.taps_in_input}/{b.taps}; {divs}")
            if b.note:
                lines.append(f"      note: {b.note}")
    lines.append("  other conventions: " + "; ".join(f"{k}: {v}" for k, v in r.conventions.items()))
    for note in r.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _ranges(values: list[int]) -> str:
    if len(values) > 12:
        return ", ".join(map(str, values[:6])) + f", ... ({len(values)} windows)"
    return ", ".join(map(str, values))


def to_json(r: LayerReport) -> dict[str, Any]:
    return {
        "layer": r.layer,
        "op": r.op,
        "file": r.file,
        "line": r.line,
        "convention": r.convention,
        "attributes": r.attributes,
        "input_shape": list(r.input_shape),
        "output_shape": list(r.output_shape),
        "reduce": r.reduce,
        "divisor_rule": r.divisor_rule,
        "divisor_reason": r.divisor_reason,
        "empty_result": r.empty_result,
        "axes": [
            {
                "axis": a.axis,
                "size": a.size,
                "kernel": a.window,
                "stride": a.stride,
                "dilation": a.dilation,
                "pads_written": list(a.pads_written),
                "pads": list(a.pads),
                "pads_rule": a.pads_text,
                "output": a.out,
                "formula": a.formula,
                "first_window": a.first_window,
                "last_window": a.last_window,
                "padded_windows": a.padded_windows,
                "overhang_windows": a.overhang_windows,
                "empty_windows": a.empty_windows,
            }
            for a in r.axes
        ],
        "border_windows": [
            {
                "index": list(b.index),
                "kind": b.where,
                "taps_in_input": b.taps_in_input,
                "taps": b.taps,
                "divisors": b.divisors,
                "note": b.note,
            }
            for b in r.borders
        ],
        "conventions": r.conventions,
        "notes": r.notes,
    }
