"""`irpool convert-report`: what openvino's ONNX front end made of each ONNX pooling node.

The ONNX model is converted with openvino and run whole on its CPU plugin, each pooling node's
input and outputs (found through the ONNX tensor names the conversion keeps) added as outputs
of the converted model.  irpool computes every node under its `onnx` convention (which follows
onnxruntime) on the very input openvino gave it, so a difference belongs to the node's
conversion and not to the layers upstream; those may be of any type.  A difference is named
after the known divergences (D1, D2c, D4, D6, D10b).  With onnxruntime installed the model
runs there too (`irpool compare` on the ONNX model): a node whose onnxruntime output is not
what irpool's onnx convention makes of onnxruntime's input is reported as well.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .compare import (
    CompareOptions,
    OutputComparison,
    _json_value,
    _values_of,
    cell_records,
    compare_arrays,
    compare_model,
    conversion_record,
    mismatch_cells,
    rounding_bound,
    select_layers,
)
from .errors import IrpoolError, OracleMissing, OracleRefused, UsageError
from .families import FamilyPlan
from .geometry import PoolPlan
from .model import Graph
from .ops import REGISTRY
from .oracles import openvino_rt, refusals
from .schemas import document
from .shapes import PoolingLayer, infer
from .skipped import Skipped, skipped_layers

Array = npt.NDArray[Any]
SCHEMA = "irpool.convert-report/2"


@dataclass
class NodeReport:
    node: str
    op: str
    attributes: dict[str, Any]
    openvino_layer: str
    outputs: list[OutputComparison] = field(default_factory=list)
    same: bool = True
    divergence: str | None = None
    tensors: list[str] = field(default_factory=list)
    """The node's output tensor names, one per entry of `outputs` (`missing` for the rest)."""
    missing: list[str] = field(default_factory=list)
    """Output tensors the converted model does not have."""
    error: str | None = None
    """Why irpool could not compute the node (then nothing was compared)."""
    cells: list[tuple[int, ...]] = field(default_factory=list)
    """The first spatial positions where openvino's values differ, each once."""
    onnxruntime: str | None = None
    """What onnxruntime computes instead of the node's ONNX meaning (None: the same, or not
    asked)."""
    openvino_attributes: dict[str, str] = field(default_factory=dict)
    """Every attribute of the pooling op openvino placed for the node, as an IR writes it."""
    refused: str | None = None
    """openvino's front end refuses to convert the node (its words)."""
    skipped: str | None = None
    """Why the node was not compared (it is not converted or compared at all)."""
    notes: list[str] = field(default_factory=list)
    """What else the report knows of the node (onnxruntime's QDQ fusion of it)."""

    @property
    def divergence_id(self) -> str | None:
        if self.divergence is None or not self.divergence.startswith("D"):
            return None
        return self.divergence.split(":", 1)[0]


@dataclass
class ConvertReport:
    path: str
    openvino: str
    nodes: list[NodeReport]
    onnxruntime: str | None = None
    """onnxruntime's version when it checked the ONNX meanings, else None."""
    notes: list[str] = field(default_factory=list)
    atol: float = 0.0
    rtol: float = 0.0
    rounding: bool = True
    skipped_layers: list[Skipped] = field(default_factory=list)
    """Pooling-like nodes irpool has no entry for, with the reason."""

    def to_json(self) -> dict[str, Any]:
        """The report as `--json` prints it (schema irpool.convert-report/2)."""
        return to_json(self)

    @property
    def same(self) -> bool:
        return all(n.same for n in self.nodes)


def _divergence(pl: PoolingLayer, comparisons: list[OutputComparison], ov_layer: str) -> str:
    """The divergence (from the table) that explains an unfaithful conversion of a node."""
    from .divergences import Conversion, in_conversion

    facts = Conversion(
        kind=pl.spec.kind,
        reduce=pl.spec.reduce,
        attrs=pl.layer.attrs,
        shapes_differ=any(not c.shape_ok for c in comparisons),
        indices_differ=len(comparisons) > 1 and not comparisons[1].passed,
        openvino_layer=ov_layer,
    )
    return in_conversion(facts)


def _family_divergence(used: FamilyPlan, x: Array) -> str | None:
    """The divergence a family node's input exercises that can separate openvino's
    conversion from onnxruntime (NaN and -inf in a global max, summation orders)."""
    from .divergences import BY_ID, touched

    found = touched(used, x)
    for key in ("D20", "D17", "D18", "D19", "D23", "D31"):
        if key in found:
            return f"{key}: {BY_ID[key].title}"
    return None


@dataclass
class _Node:
    """A pooling node and the converted model's tensors of it (None: not found)."""

    pl: PoolingLayer
    inputs: list[Any]
    outputs: list[Any]
    names: list[str]


def _tensor_names(port_names: Sequence[str]) -> str:
    return port_names[0] if port_names and port_names[0] else ""


def _find_tensor(graph: Graph, by_tensor: Mapping[str, Any], name: str) -> Any:
    """The converted model's output holding ONNX tensor `name`, also when a pass-through op
    downstream (Identity, Dropout: openvino's front end removes them) lent it its own name
    (measured on inception_v1, whose last AveragePool output is read by a Dropout); None when
    there is none."""
    seen = set()
    while name and name not in seen:
        if name in by_tensor:
            return by_tensor[name]
        seen.add(name)
        readers = [
            la
            for la in graph.layers
            if la.inputs and la.inputs[0].names[:1] == (name,) and la.outputs
        ]
        if len(readers) != 1 or REGISTRY.role(readers[0]) != "identity":
            return None
        name = _tensor_names(readers[0].outputs[0].names)
    return None


def _run_converted(
    converted: Any, nodes: list[_Node], inputs: Mapping[str, Array]
) -> dict[tuple[str, int, bool], Array]:
    """Run the converted model with every wanted tensor as an output (f16 node inputs read as
    the plugin holds them); values by source and whether read as held (node inputs)."""
    taps: list[Any] = []
    held: list[bool] = []
    for node in nodes:
        ins = [o for o in node.inputs if o is not None]
        outs = [o for o in node.outputs if o is not None]
        taps += ins + outs
        held += [True] * len(ins) + [False] * len(outs)
    values = openvino_rt.probe(converted, taps, inputs, held=held)
    return {
        (*_key(tap), reads): value for tap, reads, value in zip(taps, held, values, strict=True)
    }


def _key(output: Any) -> tuple[str, int]:
    return output.get_node().get_friendly_name(), output.get_index()


def _onnx_meaning(
    pl: PoolingLayer, ins: list[Array | None], like: np.dtype[Any] | None
) -> tuple[PoolPlan | FamilyPlan, list[Array], Array]:
    """The node under irpool's onnx convention: (plan, outputs, the input the plan ran on)."""
    if not pl.bound.family.windows:
        from .compare import _family_values

        fused, outs = _family_values(pl, ins, "onnx", like)
        x = ins[0]
        assert x is not None
        return fused, outs, x
    if pl.spec.kind == "qlinear":
        from .run import run_qlinear

        used, q = run_qlinear(pl.bound, ins, "onnx")
        x = ins[0]
        assert x is not None
        return used, [q], x
    x = ins[0]
    if x is None:
        raise UsageError("the node has no input", pl.layer.where())
    used, got = _values_of(pl, x, "onnx", like)
    return used, got, x


def convert_report(
    graph: Graph,
    inputs: Mapping[str, Array],
    atol: float = 1e-6,
    rtol: float = 1e-5,
    layers: list[str] | None = None,
    exact: bool = False,
) -> ConvertReport:
    """Convert the ONNX model with openvino and compare every (or each named) pooling node.
    Float means may also differ by summation-order rounding (compare.rounding_bound) unless
    `exact`."""
    openvino_rt.load()
    # a QDQ model's pooling nodes as onnxruntime runs them (irpool/qdq.py): the group's codes
    # in, codes out, held against the same tensors of openvino's conversion
    from .qdq import onnxruntime_graph

    original = graph
    graph, fusions = onnxruntime_graph(graph)
    fused = {f.node: f for f in fusions}
    pooling = select_layers(graph, infer(graph).pooling, layers)
    try:
        with refusals("openvino", graph.path):
            converted = openvino_rt.convert(graph.path)
    except OracleRefused as e:
        reason = e.message.removeprefix("openvino refused the model: ").lstrip("- ").strip()
        note = f"openvino refused to convert the model: {reason}"
        report, checked = _new_report(original, pooling, inputs, atol, rtol, exact, True, note)
        return _not_converted(report, checked, pooling, reason)
    by_tensor: dict[str, Any] = {}
    for op in converted.get_ordered_ops():
        for out in op.outputs():
            for name in out.get_names():
                by_tensor.setdefault(name, out)
    nodes = []
    for pl in pooling:
        in_names = [_tensor_names(p.names) for p in pl.layer.inputs]
        ins = [
            None if not n or n in graph.initializers else _find_tensor(graph, by_tensor, n)
            for n in in_names
        ]
        names = [_tensor_names(p.names) for p in pl.layer.outputs]
        outs = [_find_tensor(graph, by_tensor, n) for n in names]
        fusion = fused.get(pl.layer.label)
        if fusion is not None:
            # openvino folds each Q -> DQ pair into one FakeQuantize: the codes are gone, the
            # dequantized tensors around them stay (their codes are recovered exactly)
            if ins and ins[0] is None and fusion.floats_in:
                ins[0] = by_tensor.get(fusion.floats_in)
            if outs and outs[0] is None and fusion.floats_out:
                outs[0] = by_tensor.get(fusion.floats_out)
        nodes.append(_Node(pl, ins, outs, names))
    with refusals("openvino", graph.path):
        values = _run_converted(converted, nodes, inputs)
    report, checked = _new_report(original, pooling, inputs, atol, rtol, exact, not layers)
    for node in nodes:
        fusion = fused.get(node.pl.layer.label)
        made = _node_report(graph, node, values, atol, rtol, exact, checked, fusion)
        report.nodes.append(made)
    return report


def _not_converted(
    report: ConvertReport,
    checked: Mapping[str, str | None],
    pooling: list[PoolingLayer],
    reason: str,
) -> ConvertReport:
    """openvino refuses to convert the model (MaxUnpool and QLinearGlobalAveragePool have no
    conversion rule): every pooling node is reported, the ones openvino names as refused, the
    others as not compared; onnxruntime still checks what each node means."""
    for pl in pooling:
        layer = pl.layer
        node = NodeReport(layer.label, pl.spec.label, dict(layer.attrs), "not converted")
        names = {f"{layer.type}-{pl.spec.since}", f"{layer.domain}.{layer.type}", layer.type}
        if any(n in reason for n in names):
            node.refused = reason
            node.same = False
        else:
            node.skipped = (
                "openvino refused to convert the model (another node), so nothing of it ran"
            )
        node.onnxruntime = checked.get(layer.label)
        report.nodes.append(node)
    return report


def _new_report(
    graph: Graph,
    pooling: list[PoolingLayer],
    inputs: Mapping[str, Array],
    atol: float,
    rtol: float,
    exact: bool,
    skipped: bool,
    note: str | None = None,
) -> tuple[ConvertReport, dict[str, str | None]]:
    """A new report (`note` its first note; the skipped layers listed where `skipped`) and
    onnxruntime's word on each node (_ask_onnxruntime)."""
    report = ConvertReport(
        graph.path, openvino_rt.version(), [], atol=atol, rtol=rtol, rounding=not exact
    )
    if note is not None:
        report.notes.append(note)
    if skipped:
        report.skipped_layers = skipped_layers(graph)
    return report, _ask_onnxruntime(graph, pooling, inputs, report)


def _ask_onnxruntime(
    graph: Graph, pooling: list[PoolingLayer], inputs: Mapping[str, Array], report: ConvertReport
) -> dict[str, str | None]:
    """Per node label: None when onnxruntime computes the node's ONNX meaning (within the
    report's tolerance), else what it does.  Empty when onnxruntime is missing or refuses the
    model (a note says so)."""
    if not pooling:
        return {}
    try:
        names = [pl.layer.label for pl in pooling]
        exact = not report.rounding
        options = CompareOptions("onnx", report.atol, report.rtol, exact=exact)
        compared = compare_model(graph, inputs, names, options)
    except OracleMissing:
        report.notes.append(
            "onnxruntime is not installed: the ONNX meaning is irpool's onnx convention alone"
        )
        return {}
    except OracleRefused as e:
        report.notes.append(f"{e.message}; the ONNX meaning is irpool's onnx convention alone")
        return {}
    except KeyError as e:
        report.notes.append(
            f"onnxruntime cannot show tensor {e}; the ONNX meaning is irpool's onnx convention "
            "alone"
        )
        return {}
    if compared.runtime != "onnxruntime":
        report.notes.append(
            f"the ONNX meanings were checked against {compared.openvino} instead of onnxruntime"
        )
    else:
        report.onnxruntime = compared.openvino.split(" CPU")[0].removeprefix("onnxruntime ")
    found: dict[str, str | None] = {}
    for layer in compared.layers:
        if layer.passed:
            found[layer.layer] = None
        elif layer.error is not None:
            found[layer.layer] = f"irpool refuses the node: {layer.error}"
        else:
            values = layer.outputs[0] if layer.outputs else None
            detail = (
                f"{values.mismatches}/{values.size} values differ, max abs {values.max_abs:.3g}"
                if values is not None and values.shape_ok and values.mismatches
                else ", ".join(
                    f"{o.name} {o.produced} (irpool {o.computed})"
                    for o in layer.outputs
                    if not o.shape_ok
                )
                or ", ".join(f"{o.name} differ" for o in layer.outputs if not o.passed)
            )
            why = f"; {layer.diagnosis.text}" if layer.diagnosis else ""
            found[layer.layer] = (
                f"onnxruntime's own output is not irpool's onnx convention on onnxruntime's "
                f"input ({detail}){why}"
            )
    return found


def _node_report(
    graph: Graph,
    node: _Node,
    values: Mapping[tuple[str, int, bool], Array],
    atol: float,
    rtol: float,
    exact: bool,
    checked: Mapping[str, str | None],
    fusion: Any = None,
) -> NodeReport:
    """One node: openvino's values of its outputs against its ONNX meaning on openvino's
    input; `fusion` (irpool/qdq.py) where onnxruntime fuses the node with the QuantizeLinear
    and DequantizeLinear around it, which then make its input and output (codes)."""
    pl, layer = node.pl, node.pl.layer
    present = [o for o in node.outputs if o is not None]
    ov_layer = (
        openvino_rt.upstream_pooling(present[0]) if present else "not found in the converted model"
    )
    report = NodeReport(layer.label, pl.spec.label, dict(layer.attrs), ov_layer)
    if present:
        report.openvino_attributes = openvino_rt.upstream_pooling_attributes(present[0])
    report.onnxruntime = checked.get(layer.label)
    ins = _node_inputs(graph, node, values)
    if isinstance(ins, str):
        report.same = False
        report.error = ins
        return report
    if fusion is not None and fusion.params and ins and ins[0] is not None:
        ins[0] = _as_codes(ins[0], fusion.params[0], fusion.params[1])
    like = None
    if node.outputs and node.outputs[0] is not None:
        like = values[(*_key(node.outputs[0]), False)].dtype
    lpt_codes: Array | None = None
    tol = (atol, rtol, exact)
    try:
        if fusion is not None:
            from .qdq import onnxruntime_codes

            used, want, x, lpt_codes = onnxruntime_codes(pl, ins, like, _onnx_meaning)
            report.notes.append(fusion.describe())
        else:
            used, want, x = _onnx_meaning(pl, ins, like)
    except IrpoolError as e:
        report.same = False
        report.error = e.message
        return report
    first_got = _compare_outputs(report, pl, node, values, used, ins, x, want, fusion, tol)
    report.same = (
        not report.missing and all(c.passed for c in report.outputs) and report.onnxruntime is None
    )
    converted_same = not report.missing and all(c.passed for c in report.outputs)
    if not converted_same and fusion is not None:
        from .qdq import qdq_divergence

        report.divergence = qdq_divergence(fusion, pl.layer, first_got, want[0], lpt_codes)
    elif not converted_same:
        report.divergence = _divergence(pl, report.outputs, ov_layer)
        if isinstance(used, FamilyPlan) and report.divergence.startswith("no known"):
            report.divergence = _family_divergence(used, x) or report.divergence
    if not converted_same:
        first = report.outputs[0] if report.outputs else None
        if first is not None and first.shape_ok:
            report.cells = mismatch_cells(
                first_got if first_got is not None else values[(*_key(node.outputs[0]), False)],
                want[0],
            )
    return report


def _node_inputs(
    graph: Graph, node: _Node, values: Mapping[tuple[str, int, bool], Array]
) -> list[Array | None] | str:
    """The node's inputs as openvino's converted model holds them (initializers from the ONNX
    graph), or why one cannot be found."""
    ins: list[Array | None] = []
    for port, source in zip(node.pl.layer.inputs, node.inputs, strict=True):
        name = _tensor_names(port.names)
        if not name:
            ins.append(None)
        elif name in graph.initializers:
            ins.append(np.asarray(graph.initializers[name]))
        elif source is not None:
            ins.append(values[(*_key(source), True)])
        else:
            return f"its input tensor {name!r} is not in openvino's converted model"
    return ins


def _compare_outputs(
    report: NodeReport,
    pl: Any,
    node: _Node,
    values: Mapping[tuple[str, int, bool], Array],
    used: Any,
    ins: list[Array | None],
    x: Any,
    want: Any,
    fusion: Any,
    tol: tuple[float, float, bool],
) -> Array | None:
    """Each output openvino computed against its ONNX meaning, into `report`; the first
    output as compared (codes where onnxruntime fuses the node), or None."""
    atol, rtol, exact = tol
    first_got: Array | None = None
    for k, (name, out) in enumerate(zip(node.names, node.outputs, strict=True)):
        if out is None or k >= len(want):
            report.missing.append(name)
            continue
        got = values[(*_key(out), False)]
        if k == 0 and fusion is not None and fusion.params:
            got = _as_codes(got, fusion.params[2], fusion.params[3])
            first_got = got
        expected = want[k]
        exact_k = k > 0 or expected.dtype.kind in "iu"
        allowance = None
        if k == 0 and not exact and isinstance(used, FamilyPlan):
            allowance = pl.bound.family.allowance(used, ins, expected)
        elif k == 0 and not exact and pl.spec.kind != "qlinear":
            assert isinstance(used, PoolPlan)
            allowance = rounding_bound(used, x, expected)
        c = compare_arrays(
            "values" if k == 0 else "indices", got, expected, atol, rtol, exact_k, allowance
        )
        c.declared = name
        report.tensors.append(name)
        report.outputs.append(c)
    return first_got


def _as_codes(values: Array, scale: Array, zero_point: Array) -> Array:
    """openvino's tensor of a fused QDQ node as the codes onnxruntime's fused node holds: a
    dequantized float tensor's codes, or int8 codes shifted into u8 where onnxruntime runs the
    pair in u8 (its zero point then u8)."""
    from .qdq import to_codes

    if values.dtype.kind == "f":
        return to_codes(values, scale, zero_point, zero_point.dtype)
    if values.dtype == np.int8 and zero_point.dtype == np.uint8:
        return (values.astype(np.int16) + 128).astype(np.uint8)
    return values


def format_report(report: ConvertReport) -> str:
    lines = [
        f"{report.path}: converted by openvino {report.openvino}; each pooling node against "
        "its ONNX meaning (onnxruntime's, irpool's onnx convention)"
    ]
    lines.extend(f"  note: {note}" for note in report.notes)
    for n in report.nodes:
        status = "skip" if n.skipped else "same" if n.same else "DIFF"
        lines.append(f'  {status}  node "{n.node}" ({n.op}) -> {n.openvino_layer}')
        if n.refused:
            lines.append(
                f"          openvino refuses to convert it ({n.refused}); irpool runs it "
                "(irpool run), onnxruntime too"
            )
        if n.skipped:
            lines.append(f"          not compared: {n.skipped}")
        if n.error:
            lines.append(f"          irpool cannot compute the node: {n.error}")
        for c in n.outputs:
            if not c.shape_ok:
                lines.append(f"          {c.name}: openvino {c.computed}, ONNX {c.produced}")
            elif c.mismatches:
                lines.append(
                    f"          {c.name}: {c.mismatches}/{c.size} differ, max abs "
                    f"{c.max_abs:.3g} at {list(c.worst_index or ())}"
                )
        lines.extend(f"          {name}: not in openvino's converted model" for name in n.missing)
        if n.divergence:
            lines.append(f"          {n.divergence}")
        if n.onnxruntime:
            lines.append(f"          onnxruntime: {n.onnxruntime}")
        lines.extend(f"          note: {note}" for note in n.notes)
    bad = sum(1 for n in report.nodes if not n.same and not n.skipped)
    skipped = sum(1 for n in report.nodes if n.skipped) + len(report.skipped_layers)
    lines.extend(
        f'  skip  node "{sk.layer}" ({sk.op}): not compared: {sk.reason}'
        for sk in report.skipped_layers
    )
    lines.append(
        f"{report.path}: {len(report.nodes)} pooling node(s), {bad} computed differently "
        f"after conversion, {skipped} skipped"
    )
    return "\n".join(lines)


def _output_json(c: OutputComparison) -> dict[str, Any]:
    """One output of a node: openvino's values against the node's ONNX meaning."""
    record = conversion_record(c, "onnx")
    record.update(summation_rounding=c.rounding, shape_ok=c.shape_ok)
    record.update(cell_records(c, "onnx"))
    return {k: _json_value(v) for k, v in record.items()}


def to_json(report: ConvertReport) -> dict[str, Any]:
    return {
        **document(SCHEMA, report.path),
        "openvino": report.openvino,
        "onnxruntime": report.onnxruntime,
        "atol": report.atol,
        "rtol": report.rtol,
        "summation_rounding": report.rounding,
        "same": report.same,
        "notes": report.notes,
        "skipped": [sk.to_json() for sk in report.skipped_layers],
        "nodes": [
            {
                "node": n.node,
                "op": n.op,
                "attributes": {
                    k: (list(v) if isinstance(v, (list, tuple)) else v)
                    for k, v in n.attributes.items()
                },
                "openvino_layer": n.openvino_layer,
                "same": n.same,
                "error": n.error,
                "divergence": n.divergence,
                "divergence_id": n.divergence_id,
                "cells": [list(c) for c in n.cells],
                "missing_tensors": n.missing,
                "onnxruntime": n.onnxruntime,
                "openvino_refused": n.refused,
                "skipped": n.skipped,
                "outputs": [_output_json(c) for c in n.outputs],
                "openvino_attributes": n.openvino_attributes,
                "notes": n.notes,
            }
            for n in report.nodes
        ],
    }
