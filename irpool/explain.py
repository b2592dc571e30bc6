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
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from . import divergences
from .arrays import check_elements
from .errors import IrpoolError, UsageError, option
from .families import FamilyPlan
from .geometry import AxisPlan, PoolPlan, auto_pads_formula, axis_size_formula
from .kernel import compiled, divisor
from .model import Graph, dims_text, format_shape, numpy_dtype
from .shapes import PoolingLayer, infer

SCHEMA = "irpool.explain/1"
SYSTEMS = {"openvino": "OpenVINO", "onnx": "onnxruntime", "torch": "PyTorch", "tf": "TensorFlow"}


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
class _Heading:
    """What every report of one layer starts with: where the layer is, its op, the
    convention, its attributes and its shapes."""

    layer: str
    op: str
    file: str | None
    line: int | None
    convention: str
    attributes: dict[str, str]
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]

    def heading_lines(self, what: str) -> list[str]:
        """The first lines of the report in text: the layer, where it is, the convention;
        `what` it does from the input shape to the output shape; its attributes."""
        where = "?"
        if self.file:
            where = f"{self.file}:{self.line}" if self.line is not None else self.file
        title = conv.get(self.convention).title
        word = "node" if (self.file or "").lower().endswith(".onnx") else "layer"
        return [
            f'{word} "{self.layer}" ({self.op}) at {where}; convention {self.convention} ({title})',
            f"  {what} {dims_text(self.input_shape)} -> {dims_text(self.output_shape)}",
            "  attributes: " + " ".join(f'{k}="{v}"' for k, v in self.attributes.items()),
        ]

    def heading_json(self) -> dict[str, Any]:
        """These fields as the report's JSON starts with them (shapes as lists)."""
        data = {f.name: getattr(self, f.name) for f in fields(_Heading)}
        return {k: list(v) if k.endswith("_shape") else v for k, v in data.items()}


@dataclass
class LayerReport(_Heading):
    reduce: str
    divisor_rule: str
    divisor_reason: str
    empty_result: str
    axes: list[AxisReport] = field(default_factory=list)
    borders: list[BorderWindow] = field(default_factory=list)
    conventions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    plan: PoolPlan | None = None
    divergences: list[str] = field(default_factory=list)
    """The known divergences this layer exercises (ids of the divergence table)."""
    plans: dict[str, PoolPlan | str] = field(default_factory=dict)
    """Every convention's plan of the layer, or why it refuses it (what --png compares)."""
    divergences_any: list[str] = field(default_factory=list)
    """The known divergences the layer exercises under any convention's plan (--png names
    them over the conventions it draws side by side)."""
    kernel: str = "numpy"
    """The kernel path that computes the layer: compiled or numpy (IRPOOL_KERNEL, numba)."""
    kernel_why: str = ""


@dataclass
class FamilyReport(_Heading):
    """One layer of a pooling family other than windows (adaptive, reductions, Lp, unpooling,
    quantised global): the plan the kernel receives, in words and JSON."""

    family: str
    lines: list[str]
    data: dict[str, Any]
    conventions: dict[str, str] = field(default_factory=dict)
    title: str = "pooling"
    """What the layer does, in words ("adaptive pooling", "reduction", ...)."""
    notes: list[str] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)
    plan: FamilyPlan | None = None


TAPS_SHOWN = 16
"""A first or last window with more taps shows the first and last few of them."""
NO_WINDOW = "window: none, the output is empty on this axis"
CHUNK = 1 << 16
"""Windows classified per numpy step (bounds the temporaries of a long axis)."""


def _window_span(a: AxisPlan, j: int) -> str:
    def kind(p: int) -> str:
        if 0 <= p < a.size:
            return str(p)
        if p < 0 or p < a.size + a.pad_end:
            return f"{p}(pad)"
        return f"{p}(overhang)"

    start = a.start(j)
    if a.window <= TAPS_SHOWN:
        shown = ", ".join(kind(start + t * a.dilation) for t in range(a.window))
    else:
        head = [kind(start + t * a.dilation) for t in range(3)]
        tail = [kind(start + t * a.dilation) for t in range(a.window - 3, a.window)]
        shown = f"{', '.join(head)}, ..., {', '.join(tail)} ({a.window} taps)"
    return f"window {j}: taps at {shown}"


def _classify(a: AxisPlan) -> tuple[list[int], list[int], list[int]]:
    """The windows of an axis that reach into the padding, past pads_end (ceil overhang), and
    those with no tap in the input; vectorised, CHUNK windows at a time."""
    padded: list[int] = []
    overhang: list[int] = []
    empty: list[int] = []
    for lo in range(0, a.out, CHUNK):
        j = np.arange(lo, min(lo + CHUNK, a.out), dtype=np.int64)
        starts = a.starts(j)
        last = starts + (a.window - 1) * a.dilation
        in_pad = (starts < 0) | (a.taps_between(a.size, a.size + a.pad_end, starts) > 0)
        padded.extend(int(v) for v in j[in_pad])
        overhang.extend(int(v) for v in j[last >= a.size + a.pad_end])
        empty.extend(int(v) for v in j[a.taps_between(0, a.size, starts) == 0])
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
        "openvino": "NaN where the clamped window extent (over the dilation, truncated) is 0, "
        "-0.0 where it is negative (openvino CPU divides the zero sum by it)",
        "nan": "NaN",
        "zero": "0",
    }[p.empty]


NAN_MAX_TEXT = {
    "ignore": "never wins (openvino: a window's maximum only grows by a strictly greater tap)",
    "first": "wins only as the first tap inside the input (onnxruntime's reference loop)",
    "propagate": "wins, and the index points at the last NaN of the window (PyTorch)",
    "mlas_generic": "never wins; an all-NaN window gives the lowest float32 (onnxruntime MLAS, "
    "generic kernel)",
    "mlas_global": "follows the lane order of onnxruntime's MLAS global kernel (maxps per lane, "
    "lanes combined; the last size % 4 elements with std::max)",
    "mlas_2d": "restarts the maximum at the next tap, and is the result when it is the last "
    "tap (onnxruntime MLAS 2-D kernel, maxps)",
    "mlas_3d": "restarts the maximum at the next tap, and is the result when it is the last "
    "tap (onnxruntime MLAS 3-D kernel, maxps)",
    "eigen_3d": "restarts the maximum at the next tap, and is the result when it is the last "
    "tap, for outputs Eigen computes one at a time; never wins in its packets of 8 channels "
    "(TensorFlow's MaxPool3D without oneDNN: CuboidMaxPooling)",
}
"""How each NaN policy of the plan treats a NaN tap (docs/semantics.md, Max pooling)."""


DivisorTable = float | list[npt.NDArray[Any]] | None
"""A plan's divisors: one number for every window ("full"), a vector per axis whose outer
product is the divisor of each window (as kernel.divisor builds it), or None (max pooling)."""


def divisor_table(p: PoolPlan) -> DivisorTable:
    """The divisors of a plan, computed once, per axis: the kernel's own vectors, taken from
    one-axis plans so that the outer product over the output is never built."""
    if p.reduce != "mean":
        return None
    if p.divisor == "full":
        whole = divisor(p)
        assert isinstance(whole, float)
        return whole
    vectors = []
    for a in p.axes:
        one = replace(p, axes=(a,), input_shape=(*p.input_shape[:2], a.size))
        vectors.append(np.asarray(divisor(one), dtype=np.float64))
    return vectors


def divisor_at(p: PoolPlan, table: DivisorTable, index: tuple[int, ...]) -> float | None:
    """The divisor of window `index`, or None (max pooling, or no such window in this plan)."""
    if table is None or any(j >= a.out for j, a in zip(index, p.axes, strict=True)):
        return None
    if isinstance(table, float):
        return table
    value = float(table[0][index[0]])
    for vector, j in zip(table[1:], index[1:], strict=True):
        value *= float(vector[j])
    return value


def _plans(pl: PoolingLayer, shape: tuple[int, ...], dtype: str) -> dict[str, PoolPlan | str]:
    plans: dict[str, PoolPlan | str] = {}
    for name in conv.CONVENTIONS:
        try:
            plans[name] = pl.bound.plan(shape, dtype, name)
        except IrpoolError as e:
            plans[name] = e.message
    return plans


def data_dtype(pl: PoolingLayer) -> str:
    """The dtype a layer's data has (its input port's element type; float32 where the file
    does not say, or names a type irpool cannot hold)."""
    port = pl.layer.inputs[0] if pl.layer.inputs else None
    if port is None or port.element_type is None:
        return "float32"
    try:
        return str(numpy_dtype(port.element_type).name)
    except IrpoolError:
        return "float32"


def _where(a: AxisPlan, j: int) -> str:
    last = a.start(j) + (a.window - 1) * a.dilation
    if j == 0 and a.pad_begin > 0:
        return "begin"
    if last >= a.size + a.pad_end:
        return "overhang"
    if last >= a.size:
        return "end"
    return "inner"


def _border_windows(
    p: PoolPlan,
    others: dict[str, PoolPlan | str],
    classified: Sequence[tuple[list[int], list[int], list[int]]],
) -> list[BorderWindow]:
    """One representative per kind of border window: per axis the first and last windows and
    any that reach into padding, the rest of an axis represented by one interior window."""
    per_axis: list[list[int]] = []
    specials: list[set[int]] = []
    for a, (padded, overhang, _) in zip(p.axes, classified, strict=True):
        special = set(padded) | set(overhang)
        interior = next((j for j in range(a.out) if j not in special), None)
        per_axis.append(sorted(special) + ([] if interior is None else [interior]))
        specials.append(special)
    inside_at: list[dict[int, int]] = []
    where_at: list[dict[int, str]] = []
    for a, js in zip(p.axes, per_axis, strict=True):
        counts = a.taps_between(0, a.size, a.starts(np.asarray(js, dtype=np.int64)))
        inside_at.append({j: int(c) for j, c in zip(js, counts, strict=True)})
        where_at.append({j: _where(a, j) for j in js})
    tables = {
        name: (other, divisor_table(other))
        for name, other in others.items()
        if isinstance(other, PoolPlan)
    }
    taps = math.prod(a.window for a in p.axes)
    result = []
    for index in itertools.product(*per_axis):
        if not any(j in special for j, special in zip(index, specials, strict=True)):
            continue
        inside = math.prod(counts[j] for j, counts in zip(index, inside_at, strict=True))
        where = "/".join(labels[j] for j, labels in zip(index, where_at, strict=True))
        divisors: dict[str, float | None] = {}
        for name in others:
            if name not in tables and name != p.convention:
                continue  # the convention refuses the layer (said under "other conventions")
            other_plan, table = tables.get(name, (None, None))
            divisors[name] = None if other_plan is None else divisor_at(other_plan, table, index)
        result.append(BorderWindow(index, where, inside, taps, divisors, _note(p, divisors)))
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


def _heading(pl: PoolingLayer, convention: str, input_shape: Sequence[int]) -> dict[str, Any]:
    """The fields every report of a layer starts with: where the layer is, its op, the
    convention, its attributes and the input shape."""
    return {
        "layer": pl.layer.label,
        "op": pl.spec.label,
        "file": pl.layer.file,
        "line": pl.layer.line,
        "convention": convention,
        "attributes": dict(pl.layer.data),
        "input_shape": tuple(input_shape),
    }


def explain_layer(
    pl: PoolingLayer,
    input_shape: tuple[int, ...],
    convention: str | None = None,
    max_elements: int | None = None,
) -> LayerReport | FamilyReport:
    """The report of one pooling layer for a static input shape, under `convention` (default:
    the layer's own, openvino for IR layers and onnx for ONNX nodes).  An input or output above
    the element limit (`max_elements`, else IRPOOL_MAX_ELEMENTS) is refused with a LimitError
    before any window is looked at.  A layer of a pooling family gets a FamilyReport: its
    plan, and what the other conventions make of it."""
    name = convention or pl.bound.convention.name
    check_elements(tuple(input_shape), "the input", max_elements)
    dtype = data_dtype(pl)
    if not pl.bound.family.windows:
        return _family_report(pl, input_shape, name, dtype, max_elements)
    p = pl.bound.plan(input_shape, dtype, name)
    others = _plans(pl, input_shape, dtype)
    for other in others.values():
        if isinstance(other, PoolPlan):
            what = f"the output under the {other.convention} convention"
            check_elements(other.output_shape, what, max_elements)
    report = LayerReport(
        **_heading(pl, name, input_shape),
        output_shape=p.output_shape,
        reduce=p.reduce,
        divisor_rule=p.divisor,
        divisor_reason=p.divisor_reason,
        empty_result=_empty_result(p),
        notes=list(pl.notes),
        plan=p,
    )
    report.divergences = divergences.touched(p, params=pl.bound.params_for(len(input_shape)))
    report.kernel, report.kernel_why = compiled.describe(p)
    if p.reduce == "max":
        report.notes.append(f"NaN in a window: {NAN_MAX_TEXT[p.nan_max]}")
    if p.float_refusal is not None:
        report.notes.append(f"on float32/float16 data, {p.float_refusal}")
    if p.plugin_isa is not None and (p.dtype == "bfloat16" or np.dtype(p.dtype).kind in "iu"):
        report.notes.append(_isa_note(p))  # (float32/float16/float64 layers: no ISA rule)
    cv = conv.get(name)
    classified = [_classify(a) for a in p.axes]
    for i, (a, (padded, overhang, empty)) in enumerate(zip(p.axes, classified, strict=True)):
        params = pl.bound.params
        written = params.pads[i]
        pads_text = auto_pads_formula(params.auto_pad, a, cv) or (
            f"explicit: pads {a.pad_begin}, {a.pad_end}"
        )
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
                formula=axis_size_formula(a, p.shape_rule, cv),
                first_window=_window_span(a, 0) if a.out else NO_WINDOW,
                last_window=_window_span(a, a.out - 1) if a.out else NO_WINDOW,
                padded_windows=padded,
                overhang_windows=overhang,
                empty_windows=empty,
            )
        )
    report.borders = _border_windows(p, others, classified)
    report.plans = others
    report.divergences_any = _touched_by_any(pl, len(input_shape), others, report.divergences)
    for other_name, other in others.items():
        if isinstance(other, str):
            report.conventions[other_name] = f"refuses: {other}"
        else:
            report.conventions[other_name] = (
                f"output {format_shape(tuple(_dims(other.output_shape)))}, "
                f"divisor rule {other.divisor}"
            )
    return report


def _touched_by_any(
    pl: PoolingLayer, rank: int, plans: dict[str, PoolPlan | str], own: list[str]
) -> list[str]:
    """The divergences the layer exercises under its own plan (`own`) or any other."""
    params = pl.bound.params_for(rank)
    touched = [
        key
        for q in plans.values()
        if isinstance(q, PoolPlan)
        for key in divergences.touched(q, params=params)
    ]
    return list(dict.fromkeys([*own, *touched]))


def _family_report(
    pl: PoolingLayer, input_shape: tuple[int, ...], name: str, dtype: str, limit: int | None
) -> FamilyReport:
    family = pl.bound.family
    p = pl.bound.plan(input_shape, dtype, name)
    check_elements(p.output_shape, "the output", limit)
    told = family.explain(p)
    others: dict[str, str] = {}
    for other in conv.CONVENTIONS:
        if other == name:
            continue
        try:
            q = pl.bound.plan(input_shape, dtype, other)
            others[other] = f"output {list(q.output_shape)}" + (
                f"; {q.refused_by}" if q.refused_by else ""
            )
        except IrpoolError as e:
            others[other] = f"refuses: {e.message}"
    return FamilyReport(
        **_heading(pl, name, input_shape),
        output_shape=p.output_shape,
        family=family.name,
        lines=told.lines,
        data=told.data,
        conventions=others,
        notes=[*pl.notes, *told.notes],
        divergences=divergences.touched(p),
        plan=p,
        title=family.title,
    )


def explain_family_rules(pl: PoolingLayer, convention: str | None = None) -> FamilyReport:
    """A family layer whose input is not static: its rules and output dims as shape inference
    gives them (each dim with its formula); the windows and the order of operations need a
    static input (--input-shape)."""
    import dataclasses

    family = pl.bound.family
    rank = None if pl.input_shape is None else len(pl.input_shape)
    params = pl.bound.params_for(rank)
    out = pl.output_shape
    first = 0 if out is not None and len(pl.formulas) == len(out) else 2
    lines = [
        f"input {format_shape(pl.input_shape)} is not static: the output dims as shape "
        f"inference gives them, {format_shape(out)}; give --input-shape N,C,... for the "
        "windows and the order of operations"
    ]
    lines += [f"dim {i + first}: {f}" for i, f in enumerate(pl.formulas)]
    fields = {
        k: (list(v) if isinstance(v, tuple) else v)
        for k, v in dataclasses.asdict(params).items()
        if k not in ("notes", "op") and isinstance(v, (int, float, str, bool, tuple, type(None)))
    }
    data = {"family": family.name, "dynamic_input": True, "formulas": list(pl.formulas), **fields}

    def dims(shape: Any) -> tuple[int, ...]:
        return () if shape is None else tuple(d.declared() for d in shape)

    return FamilyReport(
        **_heading(pl, convention or pl.bound.convention.name, dims(pl.input_shape)),
        output_shape=dims(out),
        family=family.name,
        lines=lines,
        data=data,
        notes=list(pl.notes),
        title=family.title,
    )


def _dims(shape: Sequence[int]) -> list[Any]:
    from .model import Dim

    return [Dim.of(n) for n in shape]


def explain_graph(
    graph: Graph,
    layer: str | None = None,
    convention: str | None = None,
    input_shape: tuple[int, ...] | None = None,
    max_elements: int | None = None,
) -> list[LayerReport | FamilyReport]:
    """Reports for the named pooling layer (irpool.lookup), or for all of them (see
    explain_layer).  A layer whose input irpool's rules leave dynamic gets the shape the model's
    runtime infers for it (irpool.inputs.pooling_inputs: openvino, or onnx's shape inference)."""
    inference = infer(graph)
    chosen = inference.pooling
    if layer is not None:
        from .compare import select_layers

        chosen = select_layers(graph, inference.pooling, [layer])
    reports: list[LayerReport | FamilyReport] = []
    runtime: dict[int, Any] | None = None
    for pl in chosen:
        shape = input_shape
        dims = pl.input_shape
        if shape is None and (dims is None or not all(d.is_static for d in dims)):
            # the layers before it may be of any type: the model's runtime's shapes
            from .inputs import pooling_inputs

            runtime = pooling_inputs(graph) if runtime is None else runtime
            dims = runtime.get(pl.layer.index, dims)
        dynamic = dims is None or not all(d.is_static for d in dims)
        if shape is None and dynamic and not pl.bound.family.windows:
            reports.append(explain_family_rules(pl, convention))
            continue
        if shape is None:
            if dynamic:
                raise UsageError(
                    f"the layer's input {format_shape(dims)} is not static; give the model's "
                    f"input shapes ({option('input_shape')}) or the layer's",
                    pl.layer.where(),
                )
            assert dims is not None
            shape = tuple(d.lo for d in dims)
        try:
            reports.append(explain_layer(pl, shape, convention, max_elements))
        except IrpoolError as e:
            raise e.at(pl.layer.where()) from None
    return reports


def format_family(r: FamilyReport) -> str:
    lines = r.heading_lines(r.title)
    lines.extend(f"  {line}" for line in r.lines)
    if r.conventions:
        shown = "; ".join(f"{k}: {v}" for k, v in r.conventions.items())
        lines.append(f"  other conventions: {shown}")
    for key in r.divergences:
        d = divergences.BY_ID[key]
        lines.append(f"  divergence {key}: {d.title} ({d.separates})")
    for note in r.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def format_report(r: LayerReport | FamilyReport) -> str:
    if isinstance(r, FamilyReport):
        return format_family(r)
    lines = r.heading_lines(f"{r.reduce} pooling")
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
    for key in r.divergences:
        d = divergences.BY_ID[key]
        lines.append(f"  divergence {key}: {d.title} ({d.separates})")
    lines.append(f"  kernel: {r.kernel_why}")
    for note in r.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _ranges(values: list[int]) -> str:
    if len(values) > 12:
        return ", ".join(map(str, values[:6])) + f", ... ({len(values)} windows)"
    return ", ".join(map(str, values))


def to_json(r: LayerReport | FamilyReport) -> dict[str, Any]:
    if isinstance(r, FamilyReport):
        return {
            **r.heading_json(),
            **r.data,
            "text": r.lines,
            "conventions": r.conventions,
            "divergences": r.divergences,
            "notes": r.notes,
        }
    return {
        **r.heading_json(),
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
        "divergences": r.divergences,
        "plan": plan_json(r.plan) if r.plan is not None else None,
        "notes": r.notes,
        "kernel": {"path": r.kernel, "why": r.kernel_why},
    }


_PLAN_KEYS = (
    "convention",
    "dtype",
    "compute",
    "reduce",
    "shape_rule",
    "divisor",
    "empty",
    "nan_max",
    "nan_rule",
    "max_start",
    "empty_value",
    "sum_order",
    "int_mean",
    "integers_in_float32",
    "narrow_64bit",
    "plugin_isa",
    "bf16_flush",
    "bf16_round",
    "indices",
    "index_axis",
    "index_dtype",
    "column_major",
)
"""The PoolPlan fields plan_json shows, in order, under their own names."""
_SHOWN_ONLY_FOR = {
    **dict.fromkeys(("nan_max", "nan_rule", "max_start", "empty_value"), "max"),
    "sum_order": "mean",
    **dict.fromkeys(("index_axis", "index_dtype", "column_major"), "indices"),
    **dict.fromkeys(("bf16_flush", "bf16_round"), "bfloat16"),
}
"""Fields that mean something only for a max, a mean, a layer with indices or bfloat16 data
(else null)."""


def _isa_note(p: PoolPlan) -> str:
    """What the instruction set of openvino's CPU plugin (PoolPlan.plugin_isa) decides for this
    plan: bfloat16 rounding, integers in float32, refusals."""
    isa = conv.target().isa
    if isa.name == p.plugin_isa and isa.source == "this CPU":
        source = "this CPU; IRPOOL_OV_ISA names another"
    else:
        source = "--ov-isa" if isa.source == "--ov-isa" else "IRPOOL_OV_ISA"
    parts = [f"openvino's CPU plugin as on {p.plugin_isa} ({source})"]
    if p.dtype == "bfloat16":
        if p.bf16_round == "half_up_if_odd":
            parts.append(
                "bfloat16 pooled in float32 and rounded as ov::bfloat16 rounds (half an ulp "
                "added only where the kept half is odd; subnormals kept)"
            )
        else:
            flushed = ", subnormals flushed" if p.bf16_flush else ""
            parts.append(f"bfloat16 results rounded to nearest even{flushed}")
    if p.runtime_refusal is not None:
        parts.append(p.runtime_refusal)
    elif p.integers_in_float32:
        parts.append("integers pooled in float32 and rounded back half to even")
    return "; ".join(parts)


def plan_json(p: PoolPlan) -> dict[str, Any]:
    """The plan the kernel executes for this layer, switch by switch (what `run` computes)."""

    def shown(name: str) -> Any:
        only = _SHOWN_ONLY_FOR.get(name)
        applies = {"indices": p.indices, "bfloat16": p.dtype == "bfloat16"}
        if only is not None and not applies.get(only, p.reduce == only):
            return None
        value = getattr(p, name)
        return _finite(value) if name in ("max_start", "empty_value") else value

    return {**{name: shown(name) for name in _PLAN_KEYS}, "refusal": p.refusal(p.dtype)}


def _finite(value: float | int) -> float | int | str:
    """A number for JSON: -inf as the string "-inf"."""
    return value if math.isfinite(value) else str(value)
