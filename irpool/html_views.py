"""What the HTML page shows, read from a `compare`, `convert-report` (ONNX) or audit JSON
report: one PageView of LayerViews and OutputViews, the attribute rows side by side."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
    values_a: list[Any] | None = None
    """Every value of side A, flat in C order (a small output that differs), else None."""
    values_b: list[Any] | None = None
    differing: list[int] = field(default_factory=list)
    """Flat indices of the values that count as differing (with values_a and values_b)."""

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
        differs = va != vb
        if key in ("shape_rule", "divisor"):
            words = SHAPE_RULE_WORDS if key == "shape_rule" else DIVISOR_WORDS
            va, vb = words.get(va, va), words.get(vb, vb)
        if key == "shape_rule" and pa.get("output_shape") == pb.get("output_shape"):
            # the rules differ elsewhere, not on this input: not what makes the values differ
            differs = False
            if va != vb:
                label = "shape rule (differs, but not on this input: same output shape)"
        if key == "empty":
            # openvino's rule differs from zero only where empty windows divide by their taps
            # in the input (kernel/windows.py); elsewhere both give 0
            va, vb = (
                _EMPTY.get(v if v != "openvino" or p.get("divisor") == "in_input" else "zero", v)
                for v, p in ((va, pa), (vb, pb))
            )
            label, differs = "a mean window with no input tap gives", va != vb
        rows.append(AttributeRow(label, va, vb, differs))
    return rows


_EMPTY = {
    "zero": "0",
    "openvino": "0 over the window's clamped extent (NaN where that is 0, -0.0 where negative)",
    "nan": "NaN",
}
"""The plan's names of what an empty window gives, in words for the page."""


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
    "values_a": "irpool",
    "values_b": "oracle",
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
    "values_a": "openvino",
    "values_b": "onnx",
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
    "values_a": "openvino",
    "values_b": "source",
}
"""Where an output of an audit (PyTorch, TensorFlow, IR) keeps them."""


def _output_view(
    o: Mapping[str, Any], hint: list[list[int]], keys: Mapping[str, str]
) -> OutputView:
    """One output of a report as the page shows it, its fields read where `keys` says."""

    def read(name: str) -> Any:
        return o.get(keys[name]) if name in keys else None

    cells = o.get("cell_values") or {}

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
        values_a=cells.get(keys["values_a"]),
        values_b=cells.get(keys["values_b"]),
        differing=[int(i) for i in cells.get("differing") or []],
    )


def _for_a_reader(text: str) -> str:
    """The CLI's diagnosis sentence without Python's notation: cells written as [3] or [1, 2]
    instead of tuples (3,) and (1, 2), quotes around rule names dropped."""
    text = re.sub(r"\[((?:\(\d+(?:, \d+)*,?\)(?:, )?)+)\]", lambda m: m[1], text)
    text = re.sub(r"\((\d+(?:, \d+)*),?\)", r"[\1]", text)
    return re.sub(r"'([a-z_]+)'", r"\1", text)


DIVISOR_WORDS = {
    "full": "every window by the full kernel volume (padding and ceil overhang included)",
    "declared": "each window by its taps up to the declared padding (the ceil overhang not "
    "counted)",
    "in_input": "each window by its taps inside the input (padding not counted)",
}
"""The plan's divisor rules, as the page says them."""


SHAPE_RULE_WORDS = {
    "floor": "floor",
    "ceil": "ceil, keeping a last window that starts in the right padding",
    "ceil_drop": "ceil, dropping a last window that starts in the right padding",
}
"""The plan's output-size rules, as the page says them."""


def _divisor_sentence(text: str) -> str:
    """'D1: the include-pad divisor: A uses 'full' (why); B uses 'declared'' as 'A divides
    every window by ...; B divides each window by ...'; other text unchanged."""
    m = re.fullmatch(
        r"(D\w+): the include-pad divisor: (.+?) uses '(\w+)' \(.*\); (.+?) uses '(\w+)'", text
    )
    if m is None or m[3] not in DIVISOR_WORDS or m[5] not in DIVISOR_WORDS:
        return text
    return f"{m[1]}: {m[2]} divides {DIVISOR_WORDS[m[3]]}; {m[4]} divides {DIVISOR_WORDS[m[5]]}"


def _diagnosis(
    diagnosis: Mapping[str, Any], convention: str, who: str, values: OutputView | None = None
) -> list[tuple[str, str]]:
    """A compare diagnosis for a reader: which convention gives the oracle's numbers, each
    divergence behind it (with its title), and the cells that differ; the CLI's sentence,
    cleaned of Python's notation, when no convention reproduces them."""
    matching = [str(m) for m in diagnosis.get("matching_conventions") or []]
    named = [str(d) for d in diagnosis.get("divergences") or []]
    if not matching or not named or named[0].startswith("summation"):
        return [("diagnosis", _for_a_reader(str(diagnosis.get("text") or "")))]
    which = " and ".join(f"the {m}" for m in matching)
    lines = [
        (
            "diagnosis",
            f"{who}'s numbers are what irpool computes under {which} convention"
            f"{'s' if len(matching) > 1 else ''}, not under the {convention} convention it "
            "was asked for: the two conventions compute this layer differently.",
        )
    ]
    for text in named:
        lines.append(("why", _titled(_for_a_reader(_divisor_sentence(text)))))
    cells = [list(c) for c in diagnosis.get("cells") or []]
    if cells:
        shown = ", ".join(_fmt_list(c) for c in cells)
        mask = values.mask if values is not None else None
        if mask and int(mask.get("differing_cells", 0)) > len(cells):
            total = math.prod(int(n) for n in mask["shape"])
            lines.append(
                (
                    "where",
                    f"{mask['differing_cells']} of {total} spatial cells differ (the map "
                    f"below); the first {len(cells)}: {shown}",
                )
            )
        else:
            lines.append(("where", f"spatial cells that differ: {shown}"))
    return lines


def _titled(text: str) -> str:
    """A sentence that starts with a divergence id ("D2c: ...", "D3 (D1): ...") with the
    divergence's title after the id."""
    from .divergences import BY_ID

    m = re.match(r"(D\d+[a-z]?)\b", text)
    d = BY_ID.get(m[1]) if m else None
    if m is None or d is None:
        return text
    return f"{m[1]}, {d.title}{text[m.end() :]}"


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
        values = next((o for o in outputs if o.name == "values"), None)
        explanations = (
            _diagnosis(diagnosis, convention, who, values) if diagnosis.get("text") else []
        )
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
            explanations.append(("conversion", _titled(str(node["divergence"]))))
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


AUDIT_PAIRS = (
    (("kernel_size", "ksize", "pool_size"), ("kernel",)),
    (("stride", "strides"), ("strides",)),
    (("padding",), ("pads_begin", "pads_end", "auto_pad")),
    (("dilation", "dilations", "dilation_rate"), ("dilations",)),
    (("ceil_mode",), ("rounding_type",)),
    (("count_include_pad",), ("exclude-pad",)),
    (("return_indices",), ("index_element_type", "axis")),
)
"""Which attributes of a PyTorch or TensorFlow op say what which attributes of the openvino
layer say, row by row (the rest follow, one side each)."""


def _audit_rows(op: Mapping[str, Any]) -> list[AttributeRow]:
    """The framework op's attributes beside the attributes of the openvino layer it became
    (paired as AUDIT_PAIRS says when it became one layer); an attribute neither side sets is
    left out."""
    source = {str(k): v for k, v in (op.get("attributes") or {}).items() if v is not None}
    layers = op.get("openvino_layers") or []
    target = {str(k): v for k, v in (layers[0].get("attributes") or {}).items()} if layers else {}
    rows = []
    if len(layers) == 1:
        for names, ov_names in AUDIT_PAIRS:
            a = [n for n in names if n in source]
            b = [n for n in ov_names if n in target]
            if not a or not b:
                continue
            rows.append(
                AttributeRow(
                    f"{' / '.join(a)} \u2194 {' / '.join(b)}",
                    " / ".join(_fmt_list(source.pop(n)) for n in a),
                    " / ".join(_fmt_list(target.pop(n)) for n in b),
                )
            )
    rows += [AttributeRow(f"{k} \u2194 \u2014", _fmt_list(v), "\u2014") for k, v in source.items()]
    rest = [(k, v) for la in layers[1:] for k, v in (la.get("attributes") or {}).items()]
    for k, v in [*target.items(), *rest]:
        rows.append(AttributeRow(f"\u2014 \u2194 {k}", "\u2014", _fmt_list(v)))
    return rows


def _from_audit(report: Report) -> PageView:
    """A convert-report of a PyTorch or TensorFlow model, or of an IR (irpool.convert-report/3)."""
    title = FRAMEWORKS.get(str(report.get("framework")), str(report.get("framework")))
    layers = []
    for op in report.get("ops", []):
        outputs = _conversion_outputs(op, _AUDIT_KEYS)
        explanations = (
            [("conversion", _titled(str(op["divergence"])))] if op.get("divergence") else []
        )
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
