"""`irpool convert-report`: what openvino's ONNX front end made of each ONNX pooling node.

The ONNX model is converted with openvino; each pooling node is mapped, through its output
tensor names, to what the converted model computes there (and the pooling layer openvino put
upstream); the converted model runs on openvino's CPU plugin and its values are compared with
what the ONNX node means (irpool's `onnx` convention, which follows onnxruntime).  A difference
is named after the known divergences (D2c, D6, D10b, D1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy.typing as npt

from .compare import OutputComparison, compare_arrays
from .model import Graph
from .oracles import openvino_rt, refusals
from .run import run_graph
from .shapes import infer

Array = npt.NDArray[Any]
SCHEMA = "irpool.convert-report/1"


@dataclass
class NodeReport:
    node: str
    op: str
    attributes: dict[str, Any]
    openvino_layer: str
    outputs: list[OutputComparison] = field(default_factory=list)
    same: bool = True
    divergence: str | None = None


@dataclass
class ConvertReport:
    path: str
    openvino: str
    nodes: list[NodeReport]

    @property
    def same(self) -> bool:
        return all(n.same for n in self.nodes)


def _upstream_pooling(output: Any) -> str:
    """The pooling op openvino placed at or above an output, described with its attributes."""
    seen: set[str] = set()
    frontier = [output.get_node()]
    while frontier:
        node = frontier.pop(0)
        if node.get_friendly_name() in seen:
            continue
        seen.add(node.get_friendly_name())
        if node.get_type_name() in ("AvgPool", "MaxPool"):
            version = node.get_type_info().version_id.removeprefix("opset")
            attrs = node.get_attributes()
            keys = ("rounding_type", "exclude-pad", "auto_pad", "axis")
            shown = ", ".join(f"{k}={attrs[k]}" for k in keys if k in attrs)
            return f"{node.get_type_name()}-{version} ({shown})"
        frontier.extend(node.input_value(i).get_node() for i in range(node.get_input_size()))
    return "no pooling layer found upstream"


def _divergence(
    layer_op: str, attrs: Mapping[str, Any], comparisons: list[OutputComparison], ov_layer: str
) -> str:
    shapes_differ = any(not c.shape_ok for c in comparisons)
    if layer_op == "QLinearAveragePool":
        if shapes_differ and attrs.get("channels_last"):
            return "D10b: openvino's front end ignores channels_last"
        return (
            "D10b: openvino's decomposition of QLinearAveragePool truncates instead of "
            "rounding and wraps the integer subtraction of the zero point"
        )
    if shapes_differ and attrs.get("ceil_mode"):
        return (
            f"D2c: the node became {ov_layer}, whose rounding keeps a last window starting "
            "in the right padding; onnxruntime drops it"
        )
    if len(comparisons) > 1 and not comparisons[1].passed and attrs.get("storage_order"):
        return (
            "D6: for storage_order=1 openvino transposes the row-major index tensor instead "
            "of computing column-major indices"
        )
    if layer_op == "AveragePool" and attrs.get("count_include_pad") and attrs.get("ceil_mode"):
        return (
            f"D1: the node became {ov_layer}; openvino divides windows reaching the ceil "
            "overhang by the whole kernel"
        )
    return "no known divergence explains the difference: a runtime or irpool bug"


def convert_report(
    graph: Graph, inputs: Mapping[str, Array], atol: float = 1e-6, rtol: float = 1e-5
) -> ConvertReport:
    """Convert the ONNX model with openvino and compare every pooling node."""
    ov = openvino_rt.load()
    with refusals("openvino", graph.path):
        converted = ov.convert_model(graph.path)
    by_tensor: dict[str, Any] = {}
    for op in converted.get_ordered_ops():
        for out in op.outputs():
            for name in out.get_names():
                by_tensor.setdefault(name, out)
    truth = run_graph(graph, inputs)
    inference = infer(graph)
    wanted: list[Any] = []
    plan_nodes = []
    for pl in inference.pooling:
        names = [p.names[0] for p in pl.layer.outputs if p.names]
        outs = [by_tensor.get(n) for n in names]
        plan_nodes.append((pl, names, outs))
        wanted.extend(o for o in outs if o is not None)
    if wanted:
        converted.add_outputs(wanted)
    keys: dict[tuple[str, int], int] = {}
    for i, result in enumerate(converted.get_results()):
        src = result.input(0).get_source_output()
        keys.setdefault((src.get_node().get_friendly_name(), src.get_index()), i)
    with refusals("openvino", graph.path):
        compiled = openvino_rt.compile_model(converted)
        request = compiled.create_infer_request()
        for param in converted.get_parameters():
            aliases = {param.get_friendly_name(), *param.output(0).get_names()}
            key = next(n for n in aliases if n in inputs)
            request.set_tensor(param.output(0), openvino_rt.to_tensor(inputs[key]))
        request.infer()
    report = ConvertReport(graph.path, openvino_rt.version(), [])
    for pl, names, outs in plan_nodes:
        layer = pl.layer
        present = [o for o in outs if o is not None]
        ov_layer = _upstream_pooling(present[0]) if present else "not found in the converted model"
        node = NodeReport(layer.label, pl.spec.label, dict(layer.attrs), ov_layer)
        for k, (name, out) in enumerate(zip(names, outs, strict=True)):
            expected = truth.tensors[f"{layer.label}:{layer.outputs[k].id}"]
            if out is None:
                node.same = False
                continue
            index = keys[(out.get_node().get_friendly_name(), out.get_index())]
            got = openvino_rt.from_tensor(request.get_output_tensor(index))
            exact = k > 0 or expected.dtype.kind in "iu"
            c = compare_arrays("values" if k == 0 else "indices", got, expected, atol, rtol, exact)
            c.declared = name
            node.outputs.append(c)
        node.same = node.same and all(c.passed for c in node.outputs)
        if not node.same:
            node.divergence = _divergence(layer.type, layer.attrs, node.outputs, ov_layer)
        report.nodes.append(node)
    return report


def format_report(report: ConvertReport) -> str:
    lines = [
        f"{report.path}: converted by openvino {report.openvino}; each pooling node against "
        "its ONNX meaning (onnxruntime's, irpool's onnx convention)"
    ]
    for n in report.nodes:
        status = "same" if n.same else "DIFF"
        lines.append(f'  {status}  node "{n.node}" ({n.op}) -> {n.openvino_layer}')
        for c in n.outputs:
            if not c.shape_ok:
                lines.append(f"          {c.name}: openvino {c.computed}, ONNX {c.produced}")
            elif c.mismatches:
                lines.append(
                    f"          {c.name}: {c.mismatches}/{c.size} differ, max abs "
                    f"{c.max_abs:.3g} at {list(c.worst_index or ())}"
                )
        if n.divergence:
            lines.append(f"          {n.divergence}")
    bad = sum(1 for n in report.nodes if not n.same)
    lines.append(
        f"{report.path}: {len(report.nodes)} pooling node(s), {bad} computed differently "
        "after conversion"
    )
    return "\n".join(lines)


def to_json(report: ConvertReport) -> dict[str, Any]:
    from .compare import outputs_json

    return {
        "schema": SCHEMA,
        "file": report.path,
        "openvino": report.openvino,
        "same": report.same,
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
                "divergence": n.divergence,
                "outputs": outputs_json(n.outputs),
            }
            for n in report.nodes
        ],
    }
