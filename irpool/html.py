"""One self-contained HTML page from a `compare` or `convert-report` JSON report.

`render_html(report)` takes the dict `irpool compare --json` or `irpool convert-report --json`
prints and returns a page that opens offline and can be attached to a bug report: the verdict,
a table of the layers, and for each layer that differs a heatmap of the cells that differ over
its output planes, both values at the worst cell, the two sides' attributes next to each other,
and the explanation irpool gives.  Everything is inline (CSS, SVG, PNG data URIs); the page has
no scripts and loads nothing.

The heatmap is drawn from the ``mismatch_map`` of an output (compare.mismatch_map): the spatial
cells that differ in at least one (N, C) plane, shaded by how many planes differ there.  A
report without it (written by an older irpool) still gets a picture, of the first differing
cells the report names, and the page says that the pattern may be incomplete.  When
the two sides disagree on the output shape, the picture shows which cells only one side has.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Report = Mapping[str, Any]

SAME = (233, 237, 242)
"""Shade of a cell where every plane agrees."""
ONLY_A = (66, 133, 244)
ONLY_B = (245, 159, 0)
LOW, HIGH = (252, 187, 161), (165, 15, 21)
"""Shades of a cell where one plane differs (LOW) up to every plane (HIGH)."""

RASTER_CELLS = 64
"""Planes wider or taller than this are drawn as one PNG image instead of one rect per cell."""
HINT_LIMIT = 8
"""How many differing cells irpool 0.1.0 names per layer (compare.mismatch_cells)."""
MAX_PANELS = 12
"""Depth slices of a 3-D output drawn at most (those with differences first)."""
PLANE_WIDTH, PLANE_HEIGHT = 520.0, 340.0
"""The largest size of one drawn plane, in CSS pixels."""


# -- the page's model ---------------------------------------------------------------------------


@dataclass
class OutputView:
    """One compared output, with side A (what is checked) and side B (the reference)."""

    name: str
    dtype: str
    shape_a: list[int] | None
    shape_b: list[int] | None
    passed: bool
    mismatches: int
    size: int
    max_abs: Any
    max_rel: Any
    max_ulp: Any
    worst_index: list[int] | None
    worst_a: Any
    worst_b: Any
    mask: Mapping[str, Any] | None
    hint: list[list[int]] = field(default_factory=list)
    min_atol: Any = None
    min_rtol: Any = None
    rounding: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0

    @property
    def shape_ok(self) -> bool:
        return self.shape_a == self.shape_b


@dataclass
class AttributeRow:
    key: str
    a: str
    b: str
    differs: bool = False


@dataclass
class LayerView:
    name: str
    op: str
    where: str
    passed: bool
    outputs: list[OutputView]
    divergences: list[str]
    explanations: list[tuple[str, str]]
    attributes_title: tuple[str, str]
    attributes: list[AttributeRow]
    written: list[tuple[str, str]]
    notes: list[str]
    error: str | None
    extra_cells: list[str] = field(default_factory=list)
    """Table cells particular to the report kind (convert-report: the openvino layer)."""

    @property
    def anchor(self) -> str:
        return "layer-" + re.sub(r"[^A-Za-z0-9_-]+", "-", self.name).strip("-")


@dataclass
class PageView:
    kind: str
    file: str
    schema: str
    irpool: str | None
    ok: bool
    verdict: str
    facts: list[tuple[str, str]]
    side_a: str
    side_b: str
    noun: str
    layers: list[LayerView]
    extra_headers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        report: Mapping[str, Any],
        kind: str,
        ok: bool,
        verdict: str,
        facts: list[tuple[str, str]],
        **rest: Any,
    ) -> PageView:
        """The page of `report`, whose file, schema and irpool version it shows."""
        file, schema = str(report.get("file", "")), str(report.get("schema", ""))
        return cls(kind, file, schema, report.get("irpool"), ok, verdict, facts, **rest)


# -- reading the reports ------------------------------------------------------------------------


def _shape(text: Any) -> list[int] | None:
    """[1,3,16,16] from "[1,3,16,16]" (None for anything else)."""
    if not isinstance(text, str) or not re.fullmatch(r"\[(\d+(,\d+)*)?\]", text):
        return None
    inner = text.strip("[]")
    return [int(v) for v in inner.split(",")] if inner else []


def _divergence_ids(texts: Iterable[str]) -> list[str]:
    found = []
    for t in texts:
        m = re.match(r"(D\d+[a-z]?)\b", t)
        key = m.group(1) if m else ("rounding" if t.startswith("summation") else None)
        if key and key not in found:
            found.append(key)
    return found


def _oracle_name(oracle: str) -> str:
    return oracle.split(" ")[0] if oracle else "oracle"


def _fmt_list(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt_list(v) for v in value) + "]"
    if value is None:
        return "—"
    return str(value)


PLAN_ROWS = (
    ("output_shape", "output shape"),
    ("shape_rule", "shape rule"),
    ("divisor", "divisor"),
    ("pads", "pads after auto_pad"),
    ("kernel", "kernel"),
    ("strides", "strides"),
    ("dilations", "dilations"),
    ("empty", "empty window gives"),
    ("nan_max", "NaN in a max window"),
    ("index_axis", "indices axis"),
    ("index_dtype", "indices type"),
    ("column_major", "indices column-major"),
    ("int_mean", "integer mean rounding"),
    ("narrow_64bit", "64-bit types narrowed"),
    ("integers_in_float32", "integers pooled in float32"),
)
INTEGER_ONLY = ("int_mean", "integers_in_float32")
"""Plan switches that change nothing for float data."""


def _plan_rows(plans: Mapping[str, Any], a: str, b: str, dtype: str) -> list[AttributeRow]:
    """The plan switches of conventions a and b, row by row; a row is left out when neither
    side has a value, and the integer switches are left out for float data."""
    pa, pb = plans.get(a, {}), plans.get(b, {})
    rows = []
    if "refuses" in pa or "refuses" in pb:
        rows.append(AttributeRow("plan", pa.get("refuses", "—"), pb.get("refuses", "—"), True))
        return rows
    integer = dtype.startswith(("int", "uint"))
    for key, label in PLAN_ROWS:
        if pa.get(key) is None and pb.get(key) is None:
            continue
        if key in INTEGER_ONLY and not integer:
            continue
        if key == "narrow_64bit" and not dtype.endswith("64"):
            continue
        va, vb = _fmt_list(pa.get(key)), _fmt_list(pb.get(key))
        rows.append(AttributeRow(label, va, vb, va != vb))
    return rows


_COMPARE_KEYS = {
    "name": "name",
    "shape_a": "computed",
    "shape_b": "produced",
    "passed": "passed",
    "mismatches": "mismatches",
    "worst_a": "worst_irpool",
    "worst_b": "worst_openvino",
    "rounding": "rounding",
    "min_atol": "min_atol",
    "min_rtol": "min_rtol",
}
"""Where an output of a compare report keeps each field of its view."""

_CONVERT_KEYS = {
    "name": "output",
    "shape_a": "openvino_shape",
    "shape_b": "onnx_shape",
    "passed": "same",
    "mismatches": "differing",
    "worst_a": "worst_openvino",
    "worst_b": "worst_onnx",
    "rounding": "summation_rounding",
}
"""Where an output of a convert report keeps them (no minimal tolerances)."""

_AUDIT_KEYS = {
    "name": "output",
    "shape_a": "openvino_shape",
    "shape_b": "source_shape",
    "passed": "same",
    "mismatches": "differing",
    "worst_a": "worst_openvino",
    "worst_b": "worst_source",
}
"""Where an output of an audit (PyTorch, TensorFlow, IR) keeps them."""


def _output_view(
    o: Mapping[str, Any], hint: list[list[int]], keys: Mapping[str, str]
) -> OutputView:
    """One output of a report as the page shows it, its fields read where `keys` says."""

    def read(name: str) -> Any:
        return o.get(keys[name]) if name in keys else None

    return OutputView(
        name=str(o.get(keys["name"], "values")),
        dtype=str(o.get("dtype", "")),
        shape_a=_shape(read("shape_a")),
        shape_b=_shape(read("shape_b")),
        passed=bool(read("passed")),
        mismatches=int(read("mismatches") or 0),
        size=int(o.get("size") or 0),
        max_abs=o.get("max_abs"),
        max_rel=o.get("max_rel"),
        max_ulp=o.get("max_ulp"),
        worst_index=o.get("worst_index"),
        worst_a=read("worst_a"),
        worst_b=read("worst_b"),
        mask=o.get("mismatch_map"),
        hint=hint,
        min_atol=read("min_atol"),
        min_rtol=read("min_rtol"),
        rounding=int(read("rounding") or 0),
        nan_mismatches=int(o.get("nan_mismatches") or 0),
        inf_mismatches=int(o.get("inf_mismatches") or 0),
    )


def _from_compare(report: Report) -> PageView:
    oracle = str(report.get("oracle", ""))
    who = _oracle_name(oracle)
    convention = str(report.get("convention", ""))
    natural = "onnx" if who == "onnxruntime" else "openvino"
    layers = []
    for entry in report.get("layers", []):
        diagnosis = entry.get("diagnosis") or {}
        hint = [list(c) for c in diagnosis.get("cells", [])]
        outputs = [
            _output_view(o, hint if o.get("name") == "values" else [], _COMPARE_KEYS)
            for o in entry.get("outputs", [])
        ]
        explanations = []
        if diagnosis.get("text"):
            explanations.append(("diagnosis", _for_a_reader(str(diagnosis["text"]))))
        matching = list(diagnosis.get("matching_conventions") or [])
        other = next((m for m in matching if m != convention), natural)
        plans = entry.get("plans") or {}
        dtype = outputs[0].dtype if outputs else ""
        attributes = _plan_rows(plans, convention, other, dtype) if plans else []
        written = [(str(k), str(v)) for k, v in (entry.get("attributes") or {}).items()]
        line = entry.get("line")
        layers.append(
            LayerView(
                name=str(entry.get("layer", "?")),
                op=str(entry.get("op", "")),
                where=f"line {line}" if line is not None else "",
                passed=bool(entry.get("passed")),
                outputs=outputs,
                divergences=_divergence_ids(diagnosis.get("divergences") or []),
                explanations=explanations,
                attributes_title=(
                    f"irpool, {convention} convention",
                    f"{other} convention" + (f" (reproduces {who})" if other in matching else ""),
                ),
                attributes=attributes,
                written=written,
                notes=[str(n) for n in entry.get("notes", [])],
                error=entry.get("error"),
            )
        )
    bad = [la for la in layers if not la.passed]
    noun = "node" if report.get("format") == "onnx" else "layer"
    if not bad:
        verdict = f"All {len(layers)} pooling {noun}(s) agree with {oracle or who}."
    else:
        ids = sorted({d for la in bad for d in la.divergences})
        verdict = (
            f"{len(bad)} of {len(layers)} pooling {noun}(s) differ from {who}; first diverging "
            f"{noun}: \u201c{report.get('first_diverging_layer') or bad[0].name}\u201d"
            + (f"; named divergences: {', '.join(ids)}" if ids else "")
            + "."
        )
    tolerance = f"atol {report.get('atol')}, rtol {report.get('rtol')}; indices exact"
    if report.get("summation_rounding"):
        tolerance += f"; float means also within {report['summation_rounding']}"
    facts = [
        ("model", str(report.get("file", ""))),
        ("oracle", oracle),
        ("irpool computes", f"the {convention} convention"),
        ("tolerance", tolerance),
    ]
    missing = list(report.get("missing_in_oracle") or report.get("missing_in_openvino") or [])
    if missing:
        facts.append(("not in the oracle's model", ", ".join(missing)))
    return PageView.of(
        report,
        "compare",
        bool(report.get("passed")),
        verdict,
        facts,
        side_a=f"irpool ({convention})",
        side_b=who,
        noun=noun,
        layers=layers,
    )


ONNX_TO_OPENVINO = (
    ("kernel_shape", "kernel"),
    ("strides", "strides"),
    ("dilations", "dilations"),
    ("pads", "pads_begin / pads_end"),
    ("auto_pad", "auto_pad"),
    ("ceil_mode", "rounding_type"),
    ("count_include_pad", "exclude-pad"),
    ("storage_order", None),
    (None, "axis"),
    (None, "index_element_type"),
)
"""Which ONNX attribute corresponds to which attribute of the openvino op, row by row."""


def _numbers(text: str) -> list[int] | None:
    found = re.findall(r"-?\d+", text)
    return [int(v) for v in found] if found and not re.search(r"[A-Za-z]", text) else None


def _openvino_attributes(node: Mapping[str, Any]) -> dict[str, str]:
    given = node.get("openvino_attributes")
    if isinstance(given, Mapping):
        return {str(k): str(v) for k, v in given.items()}
    m = re.search(r"\((.*)\)$", str(node.get("openvino_layer", "")))
    found = {}
    for part in m.group(1).split(", ") if m else []:
        key, _, value = part.partition("=")
        if value:
            found[key] = value
    return found


def _convert_rows(node: Mapping[str, Any]) -> list[AttributeRow]:
    onnx_attrs = {str(k): _fmt_list(v) for k, v in (node.get("attributes") or {}).items()}
    ov = _openvino_attributes(node)
    if "pads_begin" in ov or "pads_end" in ov:
        ov["pads_begin / pads_end"] = f"{ov.pop('pads_begin', '—')} / {ov.pop('pads_end', '—')}"
    rows = []
    used_a: set[str] = set()
    used_b: set[str] = set()
    for a, b in ONNX_TO_OPENVINO:
        va = onnx_attrs.get(a, "—") if a else "—"
        vb = ov.get(b, "—") if b else "—"
        if va == "—" and vb == "—":
            continue
        na, nb = _numbers(va), _numbers(vb)
        comparable = a in ("pads", "kernel_shape", "strides", "dilations")
        differs = comparable and na is not None and nb is not None and na != nb
        rows.append(AttributeRow(f"{a or '—'} \u2194 {b or '—'}", va, vb, differs))
        used_a.add(a or "")
        used_b.add(b or "")
    for k, v in onnx_attrs.items():
        if k not in used_a:
            rows.append(AttributeRow(f"{k} \u2194 —", v, "—"))
    for k, v in ov.items():
        if k not in used_b:
            rows.append(AttributeRow(f"— \u2194 {k}", "—", v))
    return rows


def _conversion_verdict(layers: list[LayerView], same: str, other: str, version: Any) -> str:
    """The banner of a convert-report page: all the same, or how many differ and the named
    divergences."""
    bad = [la for la in layers if not la.passed]
    if not bad:
        return f"All {len(layers)} pooling {same} after conversion by openvino {version}."
    ids = sorted({d for la in bad for d in la.divergences})
    return (
        f"{len(bad)} of {len(layers)} pooling {other} after conversion by openvino {version}"
        + (f"; named divergences: {', '.join(ids)}" if ids else "")
        + "."
    )


def _conversion_outputs(entry: Mapping[str, Any], keys: Mapping[str, str]) -> list[OutputView]:
    """The outputs of one converted node or op, the differing cells marked on the first."""
    hint = [list(c) for c in entry.get("cells", [])]
    return [
        _output_view(o, hint if k == 0 else [], keys)
        for k, o in enumerate(entry.get("outputs", []))
    ]


def _from_convert(report: Report) -> PageView:
    layers = []
    for node in report.get("nodes", []):
        outputs = _conversion_outputs(node, _CONVERT_KEYS)
        explanations = []
        if node.get("divergence"):
            explanations.append(("conversion", str(node["divergence"])))
        if node.get("onnxruntime"):
            explanations.append(("onnxruntime", str(node["onnxruntime"])))
        for name in node.get("missing_tensors") or []:
            explanations.append(("missing", f"tensor {name} is not in openvino's converted model"))
        divergence_id = node.get("divergence_id")
        layers.append(
            LayerView(
                name=str(node.get("node", "?")),
                op=str(node.get("op", "")),
                where="",
                passed=bool(node.get("same")),
                outputs=outputs,
                divergences=[str(divergence_id)] if divergence_id else [],
                explanations=explanations,
                attributes_title=("ONNX node", "openvino op"),
                attributes=_convert_rows(node),
                written=[],
                notes=[],
                error=node.get("error"),
                extra_cells=[str(node.get("openvino_layer", ""))],
            )
        )
    version = report.get("openvino")
    verdict = _conversion_verdict(
        layers, "node(s) compute their ONNX meaning", "node(s) compute something else", version
    )
    ort = report.get("onnxruntime")
    facts = [
        ("model", str(report.get("file", ""))),
        ("converted by", f"openvino {version}, run on its CPU plugin"),
        ("reference", "the node's ONNX meaning (irpool's onnx convention)"),
        ("onnxruntime", f"{ort}, checked against the ONNX meaning" if ort else "not asked"),
        ("tolerance", f"atol {report.get('atol')}, rtol {report.get('rtol')}; indices exact"),
    ]
    return PageView.of(
        report,
        "convert-report",
        bool(report.get("same")),
        verdict,
        facts,
        side_a="openvino (converted)",
        side_b="ONNX meaning",
        noun="node",
        extra_headers=["openvino op"],
        layers=layers,
        notes=[str(n) for n in report.get("notes", [])],
    )


FRAMEWORKS = {"torch": "PyTorch", "tf": "TensorFlow", "onnx": "ONNX"}


def _audit_rows(op: Mapping[str, Any]) -> list[AttributeRow]:
    """The framework op's attributes beside the attributes of the openvino layer(s) it became."""
    rows = [
        AttributeRow(f"{k} \u2194 —", _fmt_list(v), "—")
        for k, v in (op.get("attributes") or {}).items()
    ]
    for layer in op.get("openvino_layers") or []:
        for k, v in (layer.get("attributes") or {}).items():
            rows.append(AttributeRow(f"— \u2194 {k}", "—", _fmt_list(v)))
    return rows


def _from_audit(report: Report) -> PageView:
    """A convert-report of a PyTorch or TensorFlow model, or of an IR (irpool.convert-report/3)."""
    title = FRAMEWORKS.get(str(report.get("framework")), str(report.get("framework")))
    layers = []
    for op in report.get("ops", []):
        outputs = _conversion_outputs(op, _AUDIT_KEYS)
        explanations = [("conversion", str(op["divergence"]))] if op.get("divergence") else []
        ov_layers = ", ".join(
            f"{la.get('name')} ({la.get('op')})" for la in op.get("openvino_layers") or []
        )
        layers.append(
            LayerView(
                name=str(op.get("name", "?")),
                op=str(op.get("op", "")),
                where=str(op.get("module") or ""),
                passed=op.get("same") is not False,
                outputs=outputs,
                divergences=[str(op["divergence_id"])] if op.get("divergence_id") else [],
                explanations=explanations,
                attributes_title=(f"{title} op", "openvino layer"),
                attributes=_audit_rows(op),
                written=[],
                notes=[str(n) for n in op.get("notes") or []],
                error=op.get("error"),
                extra_cells=[ov_layers],
            )
        )
    version = report.get("openvino")
    verdict = _conversion_verdict(
        layers,
        f"op(s) compute what {title} computes",
        f"op(s) compute something else than {title}",
        version,
    )
    source = report.get("source") or {}
    facts = [
        ("model", str(report.get("file", ""))),
        ("converted by", f"openvino {version}, run on its CPU plugin"),
        ("reference", f"{title} {report.get('framework_version') or ''}".strip()),
        ("tolerance", f"atol {report.get('atol')}, rtol {report.get('rtol')}; indices exact"),
    ]
    if source:
        how = "given" if source.get("given") else "detected"
        facts.append(
            ("source framework", f"{FRAMEWORKS.get(str(source.get('framework')), '?')} ({how})")
        )
    return PageView.of(
        report,
        "convert-report",
        report.get("same") is not False,
        verdict,
        facts,
        side_a="openvino (converted)",
        side_b=title,
        noun="op",
        extra_headers=["openvino layer(s)"],
        layers=layers,
        notes=[str(n) for n in report.get("notes", [])],
    )


# -- pictures -----------------------------------------------------------------------------------


def _png(rgb: npt.NDArray[np.uint8]) -> bytes:
    """A truecolor PNG of an H x W x 3 uint8 array."""
    height, width = rgb.shape[:2]
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _shade(share: float) -> tuple[int, int, int]:
    t = min(max(share, 0.0), 1.0)
    return tuple(round(lo + (hi - lo) * t) for lo, hi in zip(LOW, HIGH, strict=True))  # type: ignore[return-value]


def _hex(rgb: Sequence[int]) -> str:
    r, g, b = rgb
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass
class Grid:
    """What one output's picture shows: per spatial cell a colour and, for differing cells, a
    tooltip; the spatial shape has 1 to 3 axes."""

    shape: tuple[int, ...]
    colors: npt.NDArray[np.uint8]
    tips: dict[tuple[int, ...], str]
    worst: tuple[int, ...] | None
    caption: str
    legend: list[tuple[str, str]]
    block: tuple[int, ...] | None = None


def _grid_from_mask(out: OutputView, mask: Mapping[str, Any]) -> Grid:
    planes = max(int(mask.get("planes", 1)), 1)
    shape = tuple(int(n) for n in mask["shape"])
    worst = tuple(out.worst_index[2:]) if out.worst_index else None
    if mask.get("truncated") and "coarse" in mask:
        coarse = mask["coarse"]
        block = tuple(int(b) for b in coarse["block"])
        cshape = tuple(int(n) for n in coarse["shape"])
        counts = np.asarray(coarse["differing"], dtype=np.float64).reshape(cshape)
        colors = np.empty((*cshape, 3), dtype=np.uint8)
        colors[...] = SAME
        per_block = float(math.prod(block))
        tips = {}
        for idx in zip(*np.nonzero(counts), strict=True):
            key = tuple(int(i) for i in idx)
            colors[key] = _shade(counts[key] / per_block)
            lo = [k * b for k, b in zip(key, block, strict=True)]
            tips[key] = f"cells from {lo}: {int(counts[key])} of {int(per_block)} differ"
        worst_block = tuple(w // b for w, b in zip(worst, block, strict=True)) if worst else None
        caption = (
            f"{mask.get('differing_cells')} of {math.prod(shape)} spatial cells differ; too many "
            f"to list, so each square is a block of {'x'.join(map(str, block))} cells, darker "
            "where more of its cells differ"
        )
        return Grid(cshape, colors, tips, worst_block, caption, _legend(planes, True), block)
    colors = np.empty((*shape, 3), dtype=np.uint8)
    colors[...] = SAME
    tips = {}
    for cell in mask.get("cells", []):
        key = tuple(int(i) for i in cell[:-1])
        n = int(cell[-1])
        colors[key] = _shade(n / planes)
        tips[key] = f"{list(key)}: {n} of {planes} plane(s) differ"
    total = math.prod(shape)
    caption = (
        f"{mask.get('differing_cells', len(tips))} of {total} spatial cell(s) differ in at least "
        f"one of the {planes} (N, C) plane(s)"
    )
    return Grid(shape, colors, tips, worst, caption, _legend(planes, False))


def _legend(planes: int, blocks: bool) -> list[tuple[str, str]]:
    if blocks:
        return [(_hex(SAME), "no cell differs"), (_hex(LOW), "few"), (_hex(HIGH), "all cells")]
    if planes == 1:
        return [(_hex(SAME), "same"), (_hex(HIGH), "differs")]
    return [
        (_hex(SAME), "same in every plane"),
        (_hex(_shade(1 / planes)), "1 plane differs"),
        (_hex(HIGH), f"all {planes} planes differ"),
    ]


def _grid_from_hint(out: OutputView) -> Grid | None:
    shape = out.shape_b or out.shape_a
    if not shape or len(shape) < 3:
        return None
    spatial = tuple(shape[2:])
    colors = np.empty((*spatial, 3), dtype=np.uint8)
    colors[...] = SAME
    tips = {}
    for cell in out.hint:
        key = tuple(int(i) for i in cell)
        if len(key) == len(spatial) and all(0 <= k < n for k, n in zip(key, spatial, strict=True)):
            colors[key] = HIGH
            tips[key] = f"{list(key)} differs"
    worst = tuple(out.worst_index[2:]) if out.worst_index else None
    if worst is not None and len(worst) == len(spatial):
        colors[worst] = HIGH
        tips.setdefault(worst, f"{list(worst)} differs (the worst cell)")
    if len(out.hint) < HINT_LIMIT:
        caption = (
            f"the {len(out.hint)} spatial cell(s) the report names as differing (it names up to "
            f"{HINT_LIMIT}, so these are all of them; {out.mismatches} value(s) differ over the "
            "(N, C) planes)"
        )
    else:
        caption = (
            f"the report names only the first {HINT_LIMIT} differing cells and the worst one "
            f"({out.mismatches} value(s) differ in all): the pattern may be incomplete; the "
            "proposed mismatch_map would show all of it"
        )
    return Grid(
        spatial,
        colors,
        tips,
        worst,
        caption,
        [(_hex(SAME), "not named"), (_hex(HIGH), "named as differing")],
    )


def _grid_of_shapes(out: OutputView, side_a: str, side_b: str) -> Grid | None:
    a, b = out.shape_a, out.shape_b
    if not a or not b or len(a) != len(b) or len(a) < 3:
        return None
    sa, sb = tuple(a[2:]), tuple(b[2:])
    union = tuple(max(x, y) for x, y in zip(sa, sb, strict=True))
    colors = np.empty((*union, 3), dtype=np.uint8)
    tips = {}
    for idx in np.ndindex(*union):
        in_a = all(i < n for i, n in zip(idx, sa, strict=True))
        in_b = all(i < n for i, n in zip(idx, sb, strict=True))
        colors[idx] = (
            SAME if in_a and in_b else ONLY_A if in_a else ONLY_B if in_b else (255, 255, 255)
        )
        if in_a != in_b:
            tips[idx] = f"{list(idx)}: only {side_a if in_a else side_b} has this cell"
    caption = (
        f"the shapes differ: {side_a} {a}, {side_b} {b}; coloured cells exist on one side only"
    )
    legend = [
        (_hex(SAME), "both"),
        (_hex(ONLY_A), f"only {side_a}"),
        (_hex(ONLY_B), f"only {side_b}"),
    ]
    return Grid(union, colors, tips, None, caption, legend)


def _ticks(n: int, cell: float) -> list[int]:
    step = max(1, math.ceil(16 / max(cell, 1e-9)))
    for nice in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if nice >= step:
            step = nice
            break
    shown = list(range(0, n, step))
    if n - 1 not in shown and (n - 1 - shown[-1]) * cell >= 14:
        shown.append(n - 1)
    return shown


def _plane_svg(
    colors: npt.NDArray[np.uint8],
    tips: Mapping[tuple[int, ...], str],
    worst: tuple[int, ...] | None,
    prefix: tuple[int, ...],
    cell: float,
    x0: float,
    y0: float,
    row_label: str | None,
    col_label: str,
) -> list[str]:
    """One H x W plane (H = 1 for a 1-D output) at (x0, y0), with its axis ticks."""
    height, width = colors.shape[:2]
    parts: list[str] = []
    w, h = width * cell, height * cell
    gap = 1.0 if cell >= 6 else 0.0
    if width > RASTER_CELLS or height > RASTER_CELLS or cell < 4:
        data = base64.b64encode(_png(np.ascontiguousarray(colors))).decode("ascii")
        parts.append(
            f'<image x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" '
            f'href="data:image/png;base64,{data}"><title>{len(tips)} cell(s) differ</title></image>'
        )
    else:
        parts.append(f'<rect x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}" fill="#fff"/>')
        for i in range(height):
            for j in range(width):
                key = (*prefix, i, j) if row_label is not None else (*prefix, j)
                fill = _hex(colors[i, j])
                tip = tips.get(key)
                rect = (
                    f'<rect x="{x0 + j * cell:g}" y="{y0 + i * cell:g}" '
                    f'width="{cell - gap:g}" height="{cell - gap:g}" fill="{fill}"'
                )
                if tip:
                    parts.append(f'{rect} class="diff"><title>{html.escape(tip)}</title></rect>')
                else:
                    parts.append(rect + "/>")
    if worst is not None:
        parts += _worst_marker(worst, prefix, row_label is not None, cell, gap, x0, y0)
    for j in _ticks(width, cell):
        parts.append(
            f'<text class="tick" x="{x0 + (j + 0.5) * cell:g}" y="{y0 + h + 12:g}" '
            f'text-anchor="middle">{j}</text>'
        )
    parts.append(
        f'<text class="axis" x="{x0 + w / 2:g}" y="{y0 + h + 26:g}" '
        f'text-anchor="middle">{html.escape(col_label)}</text>'
    )
    if row_label is not None:
        for i in _ticks(height, cell):
            parts.append(
                f'<text class="tick" x="{x0 - 4:g}" y="{y0 + (i + 0.5) * cell + 3.5:g}" '
                f'text-anchor="end">{i}</text>'
            )
        parts.append(
            f'<text class="axis" x="{x0 - 26:g}" y="{y0 + h / 2:g}" text-anchor="middle" '
            f'transform="rotate(-90 {x0 - 26:g} {y0 + h / 2:g})">{html.escape(row_label)}</text>'
        )
    return parts


def _worst_marker(
    worst: tuple[int, ...],
    prefix: tuple[int, ...],
    two_d: bool,
    cell: float,
    gap: float,
    x0: float,
    y0: float,
) -> list[str]:
    """An outline around the worst cell when it lies in this plane (a ring when cells are
    too small to outline)."""
    here = worst[len(prefix) :]
    if worst[: len(prefix)] != prefix or len(here) != (2 if two_d else 1):
        return []
    i, j = (here[0], here[1]) if two_d else (0, here[0])
    if cell < 8:
        cx, cy = x0 + (j + 0.5) * cell, y0 + (i + 0.5) * cell
        return [
            f'<circle class="worst" cx="{cx:g}" cy="{cy:g}" r="7" fill="none" stroke="#111" '
            'stroke-width="2"><title>the worst cell</title></circle>'
        ]
    return [
        f'<rect class="worst" x="{x0 + j * cell - 1.5:g}" y="{y0 + i * cell - 1.5:g}" '
        f'width="{cell + 2 - gap:g}" height="{cell + 2 - gap:g}" fill="none" stroke="#111" '
        'stroke-width="2.5"><title>the worst cell</title></rect>'
    ]


def _grid_svg(grid: Grid, label: str) -> str:
    """The SVG of a grid: one plane, a strip (1-D), or one plane per depth slice (3-D)."""
    shape = grid.shape
    block = f" (blocks of {'x'.join(map(str, grid.block))})" if grid.block else ""
    names = {1: ["axis 2"], 2: ["axis 2", "axis 3"], 3: ["axis 2", "axis 3", "axis 4"]}[len(shape)]
    if len(shape) == 1:
        width = shape[0]
        cell = min(36.0, max(2.0, PLANE_WIDTH / width))
        left, top = 8.0, 8.0
        parts = _plane_svg(
            grid.colors.reshape(1, width, 3),
            grid.tips,
            grid.worst,
            (),
            cell,
            left,
            top,
            None,
            names[0] + block,
        )
        total_w, total_h = left + width * cell + 8, top + cell + 34
    elif len(shape) == 2:
        height, width = shape
        cell = min(32.0, PLANE_WIDTH / width, PLANE_HEIGHT / height)
        cell = max(cell, 1.0)
        left, top = 40.0, 8.0
        parts = _plane_svg(
            grid.colors,
            grid.tips,
            grid.worst,
            (),
            cell,
            left,
            top,
            names[0] + block,
            names[1] + block,
        )
        total_w, total_h = left + width * cell + 8, top + height * cell + 34
    else:
        depth, height, width = shape
        slices = _chosen_slices(grid, depth)
        cell = min(26.0, 200.0 / width, 180.0 / height)
        cell = max(cell, 1.0)
        panel_w, panel_h = width * cell + 48, height * cell + 58
        columns = max(1, min(len(slices), int(620 // panel_w)))
        parts = []
        for n, d in enumerate(slices):
            x0 = 40.0 + (n % columns) * panel_w
            y0 = 22.0 + (n // columns) * panel_h
            differs = sum(1 for k in grid.tips if k[0] == d)
            parts.append(
                f'<text class="panel" x="{x0:g}" y="{y0 - 8:g}">{html.escape(names[0])} = {d}'
                f"{block} \u00b7 {differs} differ</text>"
            )
            parts += _plane_svg(
                grid.colors[d],
                grid.tips,
                grid.worst,
                (d,),
                cell,
                x0,
                y0,
                names[1] + block,
                names[2] + block,
            )
        rows = math.ceil(len(slices) / columns)
        total_w = 40.0 + columns * panel_w
        total_h = 22.0 + rows * panel_h - 20
    return (
        f'<svg class="heatmap" role="img" aria-label="{html.escape(label)}" '
        f'xmlns="http://www.w3.org/2000/svg" width="{total_w:g}" height="{total_h:g}" '
        f'viewBox="0 0 {total_w:g} {total_h:g}">' + "".join(parts) + "</svg>"
    )


def _chosen_slices(grid: Grid, depth: int) -> list[int]:
    with_diff = sorted({k[0] for k in grid.tips})
    if depth <= MAX_PANELS:
        return list(range(depth))
    chosen = with_diff[:MAX_PANELS]
    for d in range(depth):
        if len(chosen) >= MAX_PANELS:
            break
        if d not in chosen:
            chosen.append(d)
    return sorted(chosen)


def _picture(out: OutputView, side_a: str, side_b: str) -> tuple[Grid | None, str]:
    """The grid to draw for an output, and a remark when some slices are left out."""
    grid: Grid | None
    if not out.shape_ok:
        grid = _grid_of_shapes(out, side_a, side_b)
    elif out.mask is not None and out.mask.get("shape"):
        grid = _grid_from_mask(out, out.mask)
    elif out.hint or out.worst_index:
        grid = _grid_from_hint(out)
    else:
        grid = None
    remark = ""
    if grid is not None and len(grid.shape) == 3 and grid.shape[0] > MAX_PANELS:
        remark = (
            f"; {MAX_PANELS} of {grid.shape[0]} depth slices drawn (those with differences first)"
        )
    return grid, remark


# -- the page -----------------------------------------------------------------------------------


CSS = """
:root { --ok: #1e7e34; --bad: #b3261e; --ink: #1f2328; --muted: #5b6470; --line: #d8dee4;
  --soft: #f6f8fa; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 32px 48px; }
header.top { display: flex; align-items: baseline; gap: 14px; flex-wrap: wrap;
  border-bottom: 1px solid var(--line); padding-bottom: 10px; }
header.top h1 { font-size: 22px; margin: 0; }
header.top .kind { color: var(--muted); font-size: 14px; }
code, .mono, td.num, pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas,
  "Liberation Mono", monospace; font-size: 13px; }
.verdict { margin: 18px 0 10px; padding: 14px 18px; border-radius: 8px; font-size: 17px;
  font-weight: 600; border: 1px solid; display: flex; gap: 12px; align-items: center; }
.verdict.ok { background: #e9f6ec; border-color: #a7d8b4; color: var(--ok); }
.verdict.bad { background: #fdecea; border-color: #f1b5b0; color: var(--bad); }
.verdict .mark { font-size: 22px; line-height: 1; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px;
  margin: 12px 0 22px; font-size: 14px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 28px 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 13px; color: var(--muted); }
td.num { text-align: right; white-space: nowrap; }
tr.bad td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
.pill { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px;
  font-weight: 700; letter-spacing: .02em; }
.pill.ok { background: #e9f6ec; color: var(--ok); }
.pill.bad { background: #fdecea; color: var(--bad); }
.tag { display: inline-block; padding: 0 6px; margin-right: 4px; border-radius: 4px;
  background: #eef2ff; color: #3730a3; font-size: 12px; font-weight: 600; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
article.layer { border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px 18px;
  margin: 18px 0; break-inside: avoid; }
article.layer h3 { margin: 0 0 6px; font-size: 17px; display: flex; gap: 10px;
  align-items: baseline; flex-wrap: wrap; }
article.layer h3 .op { color: var(--muted); font-weight: 500; font-size: 14px; }
.explain { margin: 8px 0 12px; padding: 10px 14px; background: var(--soft);
  border-left: 3px solid var(--bad); border-radius: 4px; overflow-wrap: anywhere; }
.explain b { text-transform: uppercase; font-size: 11px; letter-spacing: .06em;
  color: var(--muted); margin-right: 6px; }
.output { margin-top: 14px; }
.output h4 { margin: 0 0 4px; font-size: 15px; }
.stats { color: var(--muted); font-size: 13px; margin: 0 0 8px; }
.cols { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
figure { margin: 0; max-width: 100%; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 13px; max-width: 640px; margin-top: 4px; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted);
  margin-top: 4px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
  vertical-align: -2px; margin-right: 4px; border: 1px solid #c9d1d9; }
.legend i.worst { background: #fff; border: 2.5px solid #111; }
svg.heatmap { display: block; max-width: 100%; height: auto; }
svg.heatmap text { font: 10px ui-monospace, Menlo, Consolas, monospace; fill: #5b6470; }
svg.heatmap text.axis, svg.heatmap text.panel { font: 11px system-ui, sans-serif; fill: #1f2328; }
svg.heatmap rect.diff:hover { stroke: #111; stroke-width: 1; }
.side { min-width: 280px; flex: 1; }
.side table { margin-bottom: 14px; }
.side th:first-child, .side td:first-child { width: 34%; }
td.differs { background: #fff4e5; font-weight: 600; }
.muted { color: var(--muted); }
details { margin-top: 28px; }
details pre { background: var(--soft); padding: 12px; border-radius: 6px; overflow: auto;
  max-height: 480px; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line);
  padding-top: 10px; }
@media print { main { max-width: none; padding: 0; } details { display: none; } }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0:
            return "0"
        return f"{value:.{digits}g}"
    return str(value)


def _exact(value: Any) -> str:
    """An element value as the report holds it (floats in full)."""
    if value is None:
        return "—"
    return repr(value) if isinstance(value, float) else str(value)


def _status(passed: bool) -> str:
    return '<span class="pill ok">same</span>' if passed else '<span class="pill bad">DIFF</span>'


def _diff_summary(out: OutputView) -> str:
    if not out.shape_ok:
        return f"shape {_fmt_list(out.shape_a)} vs {_fmt_list(out.shape_b)}"
    return f"{_num(out.mismatches)}/{_num(out.size)}"


def _layers_table(page: PageView) -> str:
    heads = [
        "",
        page.noun,
        "op",
        *page.extra_headers,
        "values differ",
        "indices differ",
        "max abs",
        "max ulp",
        "divergence",
    ]
    rows = []
    for la in page.layers:
        values = next((o for o in la.outputs if o.name == "values"), None)
        indices = next((o for o in la.outputs if o.name == "indices"), None)
        name = _e(la.name)
        if not la.passed:
            name = f'<a href="#{_e(la.anchor)}">{name}</a>'
        if la.where:
            name += f' <span class="muted">{_e(la.where)}</span>'
        cells = [
            _status(la.passed),
            name,
            _e(la.op),
            *(_e(c) for c in la.extra_cells),
            f'<span class="mono">{_e(_diff_summary(values))}</span>' if values else "—",
            f'<span class="mono">{_e(_diff_summary(indices))}</span>' if indices else "—",
            _e(_num(values.max_abs)) if values and values.shape_ok else "—",
            _e(_num(values.max_ulp, 3)) if values and values.shape_ok else "—",
            "".join(_divergence_tag(d) for d in la.divergences)
            or (_e("irpool refuses: " + la.error) if la.error else ""),
        ]
        tds = "".join(
            f'<td class="num">{c}</td>'
            if k in (len(cells) - 3, len(cells) - 2)
            else f"<td>{c}</td>"
            for k, c in enumerate(cells)
        )
        rows.append(f'<tr class="{"ok" if la.passed else "bad"}">{tds}</tr>')
    head = "".join(f"<th>{_e(h)}</th>" for h in heads)
    body = "".join(rows)
    return f'<table class="layers"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _worst_table(out: OutputView, page: PageView) -> str:
    if out.worst_index is None:
        return ""
    diff = ""
    if isinstance(out.worst_a, (int, float)) and isinstance(out.worst_b, (int, float)):
        diff = _num(abs(float(out.worst_a) - float(out.worst_b)), 6)
    return (
        '<table class="worst"><thead><tr><th>worst cell</th>'
        f'<th class="mono">{_e(out.worst_index)}</th></tr></thead><tbody>'
        f'<tr><td>{_e(page.side_a)}</td><td class="mono">{_e(_exact(out.worst_a))}</td></tr>'
        f'<tr><td>{_e(page.side_b)}</td><td class="mono">{_e(_exact(out.worst_b))}</td></tr>'
        f'<tr><td>difference</td><td class="mono">{_e(diff or "—")}</td></tr>'
        "</tbody></table>"
    )


def _attributes_table(la: LayerView) -> str:
    parts = []
    if la.attributes:
        a, b = la.attributes_title
        rows = "".join(
            f"<tr><td>{_e(r.key)}</td>"
            f'<td class="mono{" differs" if r.differs else ""}">{_e(r.a)}</td>'
            f'<td class="mono{" differs" if r.differs else ""}">{_e(r.b)}</td></tr>'
            for r in la.attributes
        )
        parts.append(
            f'<table class="attributes"><thead><tr><th>attribute</th><th>{_e(a)}</th>'
            f"<th>{_e(b)}</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    if la.written:
        rows = "".join(
            f'<tr><td>{_e(k)}</td><td class="mono">{_e(v)}</td></tr>' for k, v in la.written
        )
        parts.append(
            '<table class="written"><thead><tr><th>as written</th><th>value</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
    if not parts:
        parts.append(
            '<p class="muted">This report carries no attributes of the layer (proposed: '
            "<code>attributes</code> and <code>plans</code> per layer).</p>"
        )
    return "".join(parts)


def _output_block(out: OutputView, page: PageView, la: LayerView) -> str:
    share = f" ({100 * out.mismatches / out.size:.3g}%)" if out.size else ""
    if out.shape_ok:
        stats = (
            f"{_num(out.mismatches)} of {_num(out.size)} {out.dtype} value(s) differ{share}; "
            f"max abs {_num(out.max_abs)}, rel {_num(out.max_rel)}"
            + (f", ulp {_num(out.max_ulp, 3)}" if out.max_ulp is not None else "")
        )
        if out.min_atol is not None and out.mismatches:
            stats += (
                f"; passes with atol \u2265 {_num(out.min_atol)} "
                f"or rtol \u2265 {_num(out.min_rtol)}"
            )
        if out.rounding:
            stats += f"; {out.rounding} more within summation-order rounding"
        if out.nan_mismatches or out.inf_mismatches:
            stats += f"; NaN mismatches {out.nan_mismatches}, Inf mismatches {out.inf_mismatches}"
    else:
        stats = (
            f"{out.dtype}: {page.side_a} {_fmt_list(out.shape_a)}, "
            f"{page.side_b} {_fmt_list(out.shape_b)}"
        )
    grid, remark = _picture(out, page.side_a, page.side_b)
    figure = ""
    if grid is not None:
        legend = "".join(
            f'<span><i style="background:{c}"></i>{_e(t)}</span>' for c, t in grid.legend
        )
        if grid.worst is not None:
            legend += '<span><i class="worst"></i>the worst cell</span>'
        label = f"{la.name} {out.name}: cells that differ"
        figure = (
            f'<figure>{_grid_svg(grid, label)}<div class="legend">{legend}</div>'
            f"<figcaption>{_e(grid.caption + remark)}</figcaption></figure>"
        )
    return (
        f'<section class="output" data-output="{_e(out.name)}"><h4>{_e(out.name)} '
        f'{_status(out.passed)}</h4><p class="stats">{_e(stats)}</p>'
        f'<div class="cols">{figure}<div class="side">{_worst_table(out, page)}</div></div>'
        "</section>"
    )


def _layer_article(la: LayerView, page: PageView) -> str:
    explanations = "".join(
        f'<div class="explain"><b>{_e(k)}</b>{_e(v)}</div>' for k, v in la.explanations
    )
    if la.error:
        explanations += (
            f'<div class="explain"><b>irpool</b>refuses the {page.noun}: {_e(la.error)}</div>'
        )
    notes = "".join(f'<p class="muted">note: {_e(n)}</p>' for n in la.notes)
    outputs = "".join(_output_block(o, page, la) for o in la.outputs if not o.passed)
    tags = "".join(_divergence_tag(d, named=True) for d in la.divergences)
    where = f'<span class="op">{_e(la.where)}</span>' if la.where else ""
    extra = "".join(f'<span class="op">\u2192 {_e(c)}</span>' for c in la.extra_cells)
    return (
        f'<article class="layer" id="{_e(la.anchor)}"><h3>{_e(la.name)}'
        f'<span class="op">{_e(la.op)}</span>{extra}{where}{_status(la.passed)}{tags}</h3>'
        f"{explanations}{notes}{outputs}"
        f'<h4>Attributes side by side</h4><div class="side">{_attributes_table(la)}</div></article>'
    )


def _for_a_reader(text: str) -> str:
    """The CLI's diagnosis sentence without Python's notation: cells written as [3] or [1, 2]
    instead of tuples (3,) and (1, 2), quotes around rule names dropped."""
    text = re.sub(r"\[((?:\(\d+(?:, \d+)*,?\)(?:, )?)+)\]", lambda m: m[1], text)
    text = re.sub(r"\((\d+(?:, \d+)*),?\)", r"[\1]", text)
    return re.sub(r"'([a-z_]+)'", r"\1", text)


def _divergence_row(key: str) -> tuple[str, str, str] | None:
    """The title, the runtimes it separates and what was measured, of a known divergence (the
    row of docs/divergences.md), or None for a key that is no divergence id."""
    from .divergences import BY_ID

    d = BY_ID.get(key)
    return (d.title, d.separates, d.measured) if d is not None else None


def _divergence_tag(key: str, named: bool = False) -> str:
    """A divergence id as a link to its row in the page's list of divergences; `named`: with
    its title after the id."""
    row = _divergence_row(key)
    if row is None:
        return f'<span class="tag">{_e(key)}</span>'
    text = f"{key}: {row[0]}" if named else key
    return (
        f'<a class="tag" href="#divergence-{_e(key)}" title="{_e(row[0])} ({_e(row[1])})">'
        f"{_e(text)}</a>"
    )


def _divergence_legend(page: PageView) -> str:
    """The known divergences the page names, each as docs/divergences.md lists it."""
    keys = sorted({d for la in page.layers for d in la.divergences}, key=_natural_key)
    rows = [(k, r) for k in keys if (r := _divergence_row(k)) is not None]
    if not rows:
        return ""
    items = "".join(
        f'<dt id="divergence-{_e(k)}">{_e(k)}: {_e(title)}</dt>'
        f"<dd>{_e(separates)}; measured: {_e(measured.replace('`', ''))}</dd>"
        for k, (title, separates, measured) in rows
    )
    return (
        "<h2>Divergences named here</h2>"
        '<p class="muted">Each is a row of docs/divergences.md (the table "Known divergences"), '
        "where the runtimes were measured.</p>"
        f'<dl class="facts">{items}</dl>'
    )


def _natural_key(key: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", key)
    return (int(digits) if digits else 0, key)


def _page(page: PageView, report: Report) -> str:
    name = page.file.rsplit("/", 1)[-1] or page.file
    bad = [la for la in page.layers if not la.passed]
    title = f"irpool {page.kind}: {name} \u2014 " + (
        "all agree" if page.ok else f"{len(bad)} of {len(page.layers)} differ"
    )
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in page.facts)
    notes = "".join(f'<p class="muted">note: {_e(n)}</p>' for n in page.notes)
    details = "".join(_layer_article(la, page) for la in bad)
    if bad:
        details = f"<h2>What differs</h2>{details}"
    raw = json.dumps(report, indent=2, allow_nan=False, default=str)
    version = f"irpool {page.irpool}" if page.irpool else "irpool"
    mark = "\u2713" if page.ok else "\u2717"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="{_e(version)}">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f'<header class="top"><h1>{_e(name)}</h1><span class="kind">irpool {_e(page.kind)}'
        "</span></header>"
        f'<div class="verdict {"ok" if page.ok else "bad"}" role="status">'
        f'<span class="mark">{mark}</span><span>{_e(page.verdict)}</span></div>'
        f'<dl class="facts">{facts}</dl>{notes}'
        f"<h2>{_e(page.noun.capitalize())}s</h2>{_layers_table(page)}{details}"
        f"{_divergence_legend(page)}"
        f"<details><summary>The JSON report ({_e(page.schema)})</summary><pre>{_e(raw)}</pre>"
        "</details>"
        f"<footer>Made by {_e(version)} from its {_e(page.schema)} report. The page is "
        "self-contained: it loads nothing and runs no scripts.</footer>"
        "</main></body></html>\n"
    )


def render_html(report: Report) -> str:
    """The page of a compare (irpool.compare/1) or convert-report (irpool.convert-report/2 for
    ONNX, /3 for PyTorch, TensorFlow and IR models) report dict; ValueError for any other
    document."""
    schema = str(report.get("schema", ""))
    if schema.startswith("irpool.compare/"):
        page = _from_compare(report)
    elif schema == "irpool.convert-report/3":
        page = _from_audit(report)
    elif schema.startswith("irpool.convert-report/"):
        page = _from_convert(report)
    else:
        raise ValueError(f"render_html takes a compare or convert-report report, not {schema!r}")
    return _page(page, report)
