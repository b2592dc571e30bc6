"""`irpool check`: compare the declared `<dim>`s of an IR with the shapes openvino would infer.

openvino's reader ignores port dims and re-infers them silently; this module says, per layer and
per dim, where the file and the rules disagree, with the formula and its numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from .errors import Where
from .frontends import ir_xml
from .model import Edge, Graph, Layer, Port, Shape, format_shape
from .ops import REGISTRY, Bound
from .ops.registry import odd_spelling
from .quantize_shapes import QuantizeShape
from .shapes import Inference, PoolingLayer, dim_agrees, infer
from .skipped import skipped_layers
from .words import layer_word, port_name

SCHEMA = "irpool.check/1"

FindingKind = Literal[
    "output-dim",
    "rank",
    "edge",
    "parameter",
    "type",
    "openvino",
    "reading",
    "undeclared",
    "broadcast",
]


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    file: str
    line: int | None
    layer: str
    layer_id: int | None
    op: str
    version: str | None
    port: int | None
    axis: int | None
    declared: str
    inferred: str
    message: str
    formula: str | None = None

    def location(self) -> str:
        layer_id = str(self.layer_id) if self.layer_id is not None else None
        return str(Where(self.file, self.line, self.layer, layer_id, self.op, self.version))

    def to_json(self) -> dict[str, Any]:
        """The finding as `check --json` prints it: its fields, the op under "type"."""
        return {("type" if k == "op" else k): v for k, v in asdict(self).items()}


@dataclass
class LayerResult:
    pooling: PoolingLayer
    findings: list[Finding] = field(default_factory=list)


@dataclass
class CheckReport:
    path: str
    graph: Graph
    inference: Inference
    layers: list[LayerResult]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "kind": "onnx"
            if self.graph.format == "onnx"
            else "fragments"
            if self.graph.fragment
            else f"IR v{self.graph.ir_version}",
            "ok": self.ok,
            "pooling_layers": [
                {
                    "layer": r.pooling.layer.label,
                    "layer_id": r.pooling.layer.id,
                    "line": r.pooling.layer.line,
                    "type": r.pooling.layer.type,
                    "version": r.pooling.layer.version,
                    "op": r.pooling.spec.label,
                    "input": format_shape(r.pooling.input_shape),
                    "output": format_shape(r.pooling.output_shape),
                    "formulas": list(r.pooling.formulas),
                    "notes": list(r.pooling.notes),
                    "ok": not r.findings,
                }
                for r in self.layers
            ],
            "unverified": dict(Counter(la.type for la in self.inference.unverified)),
            "skipped": [sk.to_json() for sk in skipped_layers(self.graph)],
            "findings": [f.to_json() for f in self.findings],
        }


def _at(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else path


def _declared_text(dims: tuple[int, ...]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _finding(
    layer: Layer,
    kind: FindingKind,
    port: Port | None,
    axis: int | None,
    declared: str,
    inferred: str,
    message: str,
    formula: str | None = None,
    line: int | None = None,
) -> Finding:
    return Finding(
        kind=kind,
        file=layer.file or "",
        line=line if line is not None else (port.line if port is not None else layer.line),
        layer=layer.label,
        layer_id=layer.id,
        op=layer.type,
        version=layer.version,
        port=port.id if port is not None else None,
        axis=axis,
        declared=declared,
        inferred=inferred,
        message=message,
        formula=formula,
    )


def compare_port(
    layer: Layer,
    port: Port,
    inferred: Shape | None,
    formulas: tuple[str, ...] = (),
    what: str = "output",
    unknown: tuple[bool, ...] = (),
) -> list[Finding]:
    """Findings for one port whose dims are declared: rank, then each dim.  A dim marked
    `unknown` is a bound only (its input was written -1): a size within it is not a finding."""
    if inferred is None or port.dims is None:
        return []
    if len(port.dims) != len(inferred):
        return [
            _finding(
                layer,
                "rank",
                port,
                None,
                _declared_text(port.dims),
                format_shape(inferred),
                f"{port_name(layer, port, what)} declares {len(port.dims)} dims "
                f"{_declared_text(port.dims)}; inferred rank {len(inferred)} "
                f"{format_shape(inferred)}",
            )
        ]
    found: list[Finding] = []
    for axis, (d, dim) in enumerate(zip(port.dims, inferred, strict=True)):
        if dim_agrees(d, dim, axis < len(unknown) and unknown[axis]):
            continue
        if len(formulas) == len(inferred):  # one formula per dim (reductions)
            formula: str | None = formulas[axis]
        else:  # one per spatial axis
            formula = formulas[axis - 2] if axis >= 2 and axis - 2 < len(formulas) else None
        line = port.dim_lines[axis] if axis < len(port.dim_lines) else port.line
        found.append(
            _finding(
                layer,
                "output-dim" if what == "output" else "parameter",
                port,
                axis,
                str(d),
                str(dim),
                f"{port_name(layer, port, what)}, dim {axis}: declared {d}, inferred {dim}",
                formula,
                line,
            )
        )
    return found


def _edge_findings(graph: Graph) -> list[Finding]:
    found: list[Finding] = []
    for e in graph.edges:
        src, dst = graph.layer(e.from_layer), graph.layer(e.to_layer)
        out, inp = src.output_port(e.from_port), dst.input_port(e.to_port)
        if out is None or inp is None or out.dims is None:
            continue
        declared, said = inp.dims, ""
        if declared is None:
            # an IR port without <dim> declares a scalar (openvino's reader reads it so, and
            # then ignores input port dims); ONNX ports without dims are only unknown
            if graph.format != "ir" or not out.dims:
                continue
            declared, said = (), " (it has no <dim>, which declares a scalar)"
        if out.dims != declared:
            found.append(
                _finding(
                    dst,
                    "edge",
                    inp,
                    None,
                    _declared_text(declared),
                    _declared_text(out.dims),
                    f"input port {inp.id} declares {_declared_text(declared)}{said}, but the "
                    f'edge from "{src.label}" port {out.id} (line {out.line}) declares '
                    f"{_declared_text(out.dims)}",
                    line=inp.line,
                )
            )
    return found


def check_graph(
    graph: Graph,
    tensor_shapes: Mapping[str, tuple[int, ...]] | None = None,
    known_inputs: Mapping[int, Shape | None] | None = None,
    reuse: Mapping[int, Bound] | None = None,
) -> CheckReport:
    """Infer shapes and compare every declared dim of the graph with them; `known_inputs` are
    pooling input shapes a runtime inferred (by layer index), used instead of the file's;
    `reuse` the layers an earlier pass bound."""
    inference = infer(graph, tensor_shapes, known_inputs, reuse=reuse)
    findings: list[Finding] = []
    results: list[LayerResult] = []
    by_index = {pl.layer.index: pl for pl in inference.pooling}
    consumers: dict[int, list[Edge]] = {}
    for e in graph.edges:
        consumers.setdefault(e.from_layer, []).append(e)
    for layer in graph.layers:
        if layer.index in by_index:
            pl = _unverifiable_said(by_index[layer.index])
            result = LayerResult(pl)
            for port in layer.outputs:
                result.findings.extend(
                    compare_port(layer, port, pl.output_shape, pl.formulas, unknown=pl.unknown)
                )
            if pl.unknown:
                result.findings.extend(_unknown_dim_findings(graph, pl, result.findings, consumers))
            if graph.ir_version == 11:
                result.findings.extend(_type_findings(layer, inference))
            if graph.format == "ir":
                result.findings.extend(_reading_findings(layer, pl))
                result.findings.extend(_undeclared_input_findings(graph, layer, pl))
            results.append(result)
            findings.extend(result.findings)
        elif layer.index in inference.quantize:
            findings.extend(_quantize_findings(layer, inference.quantize[layer.index]))
        elif REGISTRY.role(layer) == "parameter" and layer.data.get("shape") is not None:
            shape = inference.parameter_shapes.get(layer.index)
            for port in layer.outputs:
                findings.extend(compare_port(layer, port, shape, what="output"))
                if graph.format == "ir" and port.dims is None and shape:
                    findings.append(_undeclared(layer, port, "output", shape))
    findings.extend(_edge_findings(graph))
    findings.extend(
        Finding(
            "reading",
            graph.path,
            1,
            "XML declaration",
            None,
            "xml",
            None,
            None,
            None,
            note.split('"')[1] if '"' in note else note,
            "UTF-8",
            note,
        )
        for note in graph.reading_notes
    )
    findings.sort(key=lambda f: (f.line or 0, f.axis or 0))
    return CheckReport(graph.path, graph, inference, results, findings)


def _quantize_findings(layer: Layer, qs: QuantizeShape) -> list[Finding]:
    """A FakeQuantize: its declared output dims against the data's shape, and ranges openvino
    refuses because they do not broadcast with the data."""
    found: list[Finding] = []
    for port in layer.outputs:
        found.extend(compare_port(layer, port, qs.output))
    if qs.refusal is not None:
        found.append(
            _finding(
                layer,
                "broadcast",
                None,
                None,
                format_shape(qs.bad_range),
                format_shape(qs.output),
                qs.refusal,
            )
        )
    return found


def _reading_findings(layer: Layer, pl: PoolingLayer) -> list[Finding]:
    """An attribute openvino reads leniently (a bool that is not true/false/1/0, numbers with
    trailing text): what openvino, and irpool with it, takes the text to mean."""
    found = []
    for attr in pl.spec.attrs:
        raw = layer.data.get(attr.wire)
        note = odd_spelling(attr, raw) if raw is not None else None
        if note is not None:
            found.append(
                _finding(layer, "reading", None, None, raw or '""', "as openvino reads it", note)
            )
    return found


def _undeclared(layer: Layer, port: Port, what: str, shape: Shape) -> Finding:
    return _finding(
        layer,
        "undeclared",
        port,
        None,
        "[]",
        format_shape(shape),
        f"{port_name(layer, port, what)} has no <dim>: nothing is declared (openvino's reader "
        f"takes it for a scalar), and the tensor there is {format_shape(shape)}",
    )


def _undeclared_input_findings(graph: Graph, layer: Layer, pl: PoolingLayer) -> list[Finding]:
    """A pooling layer's data input port without <dim> whose producer declares none either
    (where the producer declares dims, the edge finding says it)."""
    if not layer.inputs or pl.input_shape is None:
        return []
    port = layer.inputs[0]
    if port.dims is not None:
        return []
    edge = graph.producer(layer.id, port.id) if layer.id is not None else None
    if edge is not None:
        src = graph.layer(edge.from_layer).output_port(edge.from_port)
        if src is not None and src.dims:
            return []
    return [_undeclared(layer, port, "input", pl.input_shape)]


def _unknown_dim_findings(
    graph: Graph, pl: PoolingLayer, found: list[Finding], consumers: Mapping[int, list[Edge]]
) -> list[Finding]:
    """Where the rules give only bounds (an input written -1), two declarations that should be
    one still contradict each other: the output ports of a layer (openvino gives them one
    shape), and an output port and the input port at the other end of its edge.  Each such dim
    is a finding at this layer's port, which says that either declaration may be the wrong one."""
    layer, shape = pl.layer, pl.output_shape
    if shape is None:
        return []
    seen = {(f.port, f.axis) for f in found}
    ports = [p for p in layer.outputs if p.dims is not None and len(p.dims) == len(shape)]
    more: list[Finding] = []

    def add(port: Port, axis: int, other: int, where: str) -> None:
        assert port.dims is not None and shape is not None
        if (port.id, axis) in seen:
            return
        seen.add((port.id, axis))
        d = port.dims[axis]
        line = port.dim_lines[axis] if axis < len(port.dim_lines) else port.line
        more.append(
            _finding(
                layer,
                "output-dim",
                port,
                axis,
                str(d),
                str(shape[axis]),
                f"output port {port.id}, dim {axis}: declared {d}, but {where} declares {other}; "
                f"the rules bound it only to {shape[axis]} (the input dim is written -1), so "
                "either declaration may be the wrong one",
                line=line,
            )
        )

    first = ports[0] if ports else None
    for port in ports[1:]:
        assert first is not None and first.dims is not None and port.dims is not None
        for axis, (a, b) in enumerate(zip(first.dims, port.dims, strict=True)):
            if a != b and pl.is_unknown(axis):
                add(port, axis, a, f"output port {first.id} (both outputs have one shape)")
    if layer.id is None or graph.fragment:
        return more
    for e in consumers.get(layer.id, []):
        out = layer.output_port(e.from_port)
        dst = graph.layer(e.to_layer)
        inp = dst.input_port(e.to_port)
        if out is None or out not in ports or inp is None or inp.dims is None:
            continue
        assert out.dims is not None
        if len(inp.dims) != len(out.dims):
            continue
        for axis, (a, b) in enumerate(zip(out.dims, inp.dims, strict=True)):
            if a != b and pl.is_unknown(axis):
                add(out, axis, b, f'the edge to "{dst.label}" port {inp.id} (line {inp.line})')
    return more


def _unverifiable_said(pl: PoolingLayer) -> PoolingLayer:
    """The layer with its formulas saying, on each unknown spatial axis, whether the declared
    size lies within the bounds (then nothing can be verified) or outside them."""
    port = pl.layer.outputs[0] if pl.layer.outputs else None
    shape = pl.output_shape
    if not pl.unknown or port is None or port.dims is None or shape is None:
        return pl
    if len(port.dims) != len(shape):
        return pl
    formulas = list(pl.formulas)
    for i in range(len(formulas)):
        axis = i + 2
        if not pl.is_unknown(axis) or axis >= len(shape) or shape[axis].is_static:
            continue
        d = port.dims[axis]
        if d == -1:
            formulas[i] += "; declared -1 (not static), as openvino writes it"
        elif shape[axis].contains(d):
            formulas[i] += f"; declared {d} lies within, not verifiable"
        else:
            formulas[i] += f"; declared {d} lies outside"
    return replace(pl, formulas=tuple(formulas))


def _type_findings(layer: Layer, inference: Inference) -> list[Finding]:
    found = []
    for port in layer.outputs:
        inferred = inference.element_types.get((layer.index, port.id))
        if inferred and port.element_type and inferred != port.element_type:
            found.append(
                _finding(
                    layer,
                    "type",
                    port,
                    None,
                    port.element_type,
                    inferred,
                    f"output port {port.id} declares element type {port.element_type}; "
                    f"inferred {inferred}",
                )
            )
    return found


def check_file(path: str) -> CheckReport:
    """Read an IR file (or an ONNX model, by its .onnx suffix) and check it."""
    from .frontends.onnx_model import is_onnx_path

    if is_onnx_path(path):
        return check_onnx_file(path)
    return check_graph(ir_xml.load(path))


def check_onnx_file(path: str) -> CheckReport:
    """Check an ONNX model: declared shapes (value_info, outputs) against onnxruntime's sizes,
    with notes where the operator text of the node's version or onnx's own shape inference
    would say something else (D2b, D4, D5, D14).  A node onnxruntime refuses to run is an
    error, not a size."""
    from .frontends import onnx_model
    from .ops import onnx as onnx_ops
    from .oracles import onnx_shapes

    model = onnx_model.read_model(path)
    graph = onnx_model.to_graph(model, path)
    inferred = onnx_shapes.model_shapes(model)
    report = check_graph(graph, inferred)
    onnx_version = onnx_model.load_onnx().__version__
    nodes = {n.output[0]: n for n in model.graph.node if n.output and n.output[0]}
    for result in report.layers:
        pl = result.pooling
        if not pl.bound.family.windows:
            _plan_family(pl)
            continue
        notes = list(pl.notes)
        shape = pl.input_shape
        if shape is not None and all(d.is_static for d in shape) and pl.output_shape is not None:
            _refuse_like_onnxruntime(pl)
            runtime = [d.lo if d.is_static else -1 for d in pl.output_shape]
            channels_last = pl.bound.channels_last
            spatial = [d.lo for d in (shape[1:-1] if channels_last else shape[2:])]
            spec_sizes = [
                onnx_ops.spec_output_size(pl.spec, pl.params, i, n) for i, n in enumerate(spatial)
            ]
            runtime_spatial = runtime[1:-1] if channels_last else runtime[2:]
            if spec_sizes != runtime_spatial:
                notes.append(
                    f"the {pl.spec.label} operator text gives spatial size {spec_sizes}; "
                    f"onnxruntime computes {runtime_spatial} (docs/semantics.md "
                    f"{_divergence(pl)})"
                )
            out_name = pl.layer.outputs[0].names[0] if pl.layer.outputs[0].names else None
            node = nodes.get(out_name) if out_name else None
            said = None
            if node is not None and pl.layer.domain == "ai.onnx":
                said = onnx_shapes.node_shape(model, node, [d.lo for d in shape])
            if said is not None and said != runtime and -1 not in said:
                notes.append(
                    f"onnx {onnx_version} shape inference gives {said}; onnxruntime computes "
                    f"{runtime} ({_divergence(pl)})"
                )
        result.pooling = replace(pl, notes=tuple(notes))
    return report


def _plan_family(pl: PoolingLayer) -> None:
    """Plan a family layer of an ONNX model for its static input, so that a node onnxruntime
    refuses (a global pool of rank 6, ...) is refused here too."""
    shape = pl.input_shape
    if shape is None or not all(d.is_static for d in shape):
        return
    port = pl.layer.inputs[0] if pl.layer.inputs else None
    dtype = "float32"
    if port is not None and port.element_type:
        from .model import numpy_dtype

        dtype = numpy_dtype(port.element_type).name
    pl.bound.plan(tuple(d.lo for d in shape), dtype)


def _divergence(pl: PoolingLayer) -> str:
    """Which divergence (from the table) explains a size of an ONNX node that onnx's shape
    inference or the operator text gives differently from onnxruntime."""
    from .divergences import in_shape

    return in_shape(pl.params)


def _refuse_like_onnxruntime(pl: PoolingLayer) -> None:
    """Raise where onnxruntime refuses the node at run time ("padding values must be
    non-negative"): the onnx convention's plan knows which kernel onnxruntime would run and
    whether it takes the node's SAME_* pads for the node's element type (docs/semantics.md D5;
    measured with onnxruntime 1.32: AveragePool before 19 and float MaxPool on the MLAS path
    refuse negative pads, the other kernels compute)."""
    from .errors import ShapeError

    shape = pl.input_shape
    if shape is None or not all(d.is_static for d in shape):
        return
    p = pl.bound.plan(tuple(d.lo for d in shape))
    port = pl.layer.inputs[0] if pl.layer.inputs else None
    reason = p.refusal(port.element_type if port is not None else None)
    if reason is not None:
        raise ShapeError(reason, pl.layer.where())


def format_report(report: CheckReport, verbose: bool = False) -> str:
    """Human-readable report: a line per pooling layer, details for each disagreement."""
    lines: list[str] = []
    g = report.graph
    kind = (
        "ONNX model"
        if g.format == "onnx"
        else "layer fragments"
        if g.fragment
        else f"IR v{g.ir_version} net"
    )
    word = layer_word(g)
    lines.append(f"{report.path}: {kind}, {len(report.layers)} pooling {word}(s)")
    for r in report.layers:
        pl = r.pooling
        la = pl.layer
        head = f'{_at(report.path, la.line)}: {word} "{la.label}" ({pl.spec.label})'
        shapes = f"{format_shape(pl.input_shape)} -> {format_shape(pl.output_shape)}"
        if not r.findings:
            lines.append(f"  ok    {head} {shapes}")
        for f in r.findings:
            lines.append(
                f'  FAIL  {_at(report.path, f.line)}: {word} "{la.label}" ({pl.spec.label}): '
                f"{f.message}"
            )
            if f.formula:
                lines.append(f"          {f.formula}")
        if verbose or r.findings:
            said = {f.message for f in r.findings}
            lines.extend(f"          note: {note}" for note in pl.notes if note not in said)
        if verbose and not r.findings:
            first = 0 if len(pl.formulas) == len(pl.output_shape or ()) else 2
            lines.extend(
                f"          dim {axis + first}: {formula}"
                for axis, formula in enumerate(pl.formulas)
            )
    for f in report.findings:
        if f.kind in ("edge", "parameter", "openvino", "broadcast") or (
            f.kind in ("reading", "undeclared") and not any(f in r.findings for r in report.layers)
        ):
            where = _at(f.file, f.line) if f.op == "xml" else f.location()
            lines.append(f"  FAIL  {where}: {f.message}")
    for sk in skipped_layers(report.graph):
        lines.append(
            f'  skip  {_at(report.path, sk.line)}: layer "{sk.layer}" ({sk.op}): not verified '
            f"(taken as declared): {sk.reason}"
        )
    unverified = Counter(la.type for la in report.inference.unverified)
    if unverified:
        listed = ", ".join(f"{t} x{n}" for t, n in sorted(unverified.items()))
        lines.append(f"  unverified (other layer types, taken as declared): {listed}")
    if report.findings:
        lines.append(f"{report.path}: {_summary(report.findings, g.format == 'onnx')}")
    else:
        lines.append(f"{report.path}: all declared shapes agree")
    return "\n".join(lines)


def _summary(findings: list[Finding], onnx: bool = False) -> str:
    """`4 declared dim(s) disagree at 2 port(s)` (ONNX: `output(s)`), and the other kinds of
    finding counted."""
    dims = [f for f in findings if f.kind in ("output-dim", "rank", "parameter")]
    parts = []
    if dims:
        places = len({(f.layer, f.layer_id, f.port) for f in dims})
        where = "output(s)" if onnx else "port(s)"
        parts.append(f"{len(dims)} declared dim(s) disagree at {places} {where}")
    others = Counter(f.kind for f in findings if f not in dims)
    names = {
        "type": "declared element type(s) disagree",
        "edge": "edge(s) join ports that declare different dims",
        "openvino": "declared shape(s) disagree with openvino",
        "reading": "text(s) openvino reads leniently (read as it reads them)",
        "undeclared": "port(s) declare no dims",
        "broadcast": "input(s) or range(s) that do not broadcast with the data",
    }
    parts.extend(f"{n} {names[kind]}" for kind, n in sorted(others.items()))
    return "; ".join(parts)


def _matches_openvino(declared: tuple[int, ...], shape: str) -> bool:
    dims = shape.strip("[]").split(",") if shape.strip("[]") else []
    if len(dims) != len(declared):
        return False
    for d, o in zip(declared, dims, strict=True):
        o = o.strip()
        if d == -1:
            if o.isdigit():
                return False
        elif o != str(d):
            return False
    return True


def _openvino_inputs(graph: Graph, shapes: Mapping[str, list[str]]) -> dict[int, Shape | None]:
    """The input shape of each pooling layer of an IR as openvino infers it (by layer index):
    the shape openvino gives the producer's output port."""
    from .model import parse_shape

    known: dict[int, Shape | None] = {}
    if graph.format != "ir" or graph.fragment:
        return known
    for layer in graph.layers:
        if not REGISTRY.is_pooling(layer) or layer.id is None or not layer.inputs:
            continue
        edge = graph.producer(layer.id, layer.inputs[0].id)
        if edge is None:
            continue
        src = graph.layer(edge.from_layer)
        k = next((i for i, p in enumerate(src.outputs) if p.id == edge.from_port), None)
        said = shapes.get(src.name or "")
        if k is None or said is None or k >= len(said):
            continue
        try:
            known[layer.index] = parse_shape(said[k])
        except ValueError:
            continue
    return known


def add_openvino_findings(report: CheckReport) -> None:
    """Ask openvino for every layer's output shapes and add a finding for each declared
    output port that disagrees (openvino's own reader never reports them)."""
    from .oracles import openvino_rt, refusals

    with refusals("openvino", report.path):
        shapes = openvino_rt.output_shapes(report.path)
    known = _openvino_inputs(report.graph, shapes)
    if known:
        # openvino knows every layer's true input: infer the pooling layers from it, so that a
        # wrong dim of another layer type is not taken for the pooling layer's input
        again = check_graph(report.graph, known_inputs=known, reuse=report.inference.bound)
        report.inference, report.layers, report.findings = (
            again.inference,
            again.layers,
            again.findings,
        )
    for layer in report.graph.layers:
        if layer.name is None or layer.name not in shapes:
            continue
        for port, shape in zip(layer.outputs, shapes[layer.name], strict=False):
            if port.dims is None or _matches_openvino(port.dims, shape):
                continue
            report.findings.append(
                _finding(
                    layer,
                    "openvino",
                    port,
                    None,
                    _declared_text(port.dims),
                    shape,
                    f"output port {port.id} declares {_declared_text(port.dims)}; openvino "
                    f"infers {shape}",
                )
            )
    report.findings.sort(key=lambda f: (f.line or 0, f.axis or 0))
