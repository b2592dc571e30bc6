"""The TorchScript route of the PyTorch oracle: the inlined graph openvino's TorchScript
decoder converts, each pooling node paired with its layer and run again by torch on
openvino's input."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OracleRefused
from ..ops import torch as torch_ops
from ..source_ops import Traced, TracedOp, TracedOutput
from . import openvino_rt, refusals
from . import torch_base as base

Array = npt.NDArray[Any]


def _convert_script(module: Any, arrays: list[Array], path: str, live: bool) -> tuple[Any, Any]:
    """(openvino's decoder, the converted model) of a ScriptModule or a live module it traces."""
    torch = base.load()
    from openvino.frontend.pytorch.ts_decoder import TorchScriptPythonDecoder

    specs = [openvino_rt.input_spec(x.shape, x.dtype) for x in arrays]
    example = tuple(base.as_tensor(torch, x) for x in arrays) if live else None
    try:
        with refusals("openvino", path):
            decoder = TorchScriptPythonDecoder(module, example_input=example)
            model = openvino_rt.convert_object(decoder, specs)
    except OracleRefused:
        # a saved *scripted* module whose forward has Optional arguments (F.max_pool2d's
        # stride=None) does not convert as it is; openvino freezes the modules it scripts
        # itself, and so does irpool (then convert_model ignores `input`: reshape after)
        if live or not isinstance(module, torch.jit.ScriptModule):
            raise
        with refusals("openvino", path):
            decoder = TorchScriptPythonDecoder(torch.jit.freeze(module.eval()))
            model = openvino_rt.convert_object(decoder, specs)
    if not all(p.get_partial_shape().is_static for p in model.inputs):
        model.reshape([list(x.shape) for x in arrays])
    return decoder, model


def _hierarchy(node: Any) -> tuple[str, str]:
    """(module path, class) from a TorchScript node's module hierarchy."""
    text = node.getModuleHierarchy() if hasattr(node, "getModuleHierarchy") else ""
    parts = [p for p in text.split(".") if p and not p.startswith("UNKNOWN_INSTANCE")]
    path = ".".join(p.split("(", 1)[0] for p in parts)
    cls = parts[-1].split("(", 1)[1].rstrip(")") if parts and "(" in parts[-1] else ""
    return path, cls


def _flat_outputs(graph: Any) -> dict[str, int]:
    """debugName -> position among the model's outputs (returned tuples flattened)."""
    flat: list[str] = []

    def walk(value: Any) -> None:
        node = value.node()
        if node.kind() in ("prim::TupleConstruct", "prim::ListConstruct"):
            for v in node.inputs():
                walk(v)
        else:
            flat.append(value.debugName())

    for v in graph.outputs():
        walk(v)
    return {name: i for i, name in enumerate(flat)}


def _argument_names(node: Any) -> list[str]:
    torch = base.load()
    try:
        return [a.name for a in torch._C.parse_schema(node.schema()).arguments]
    except Exception:
        return [f"arg{i}" for i in range(node.inputsSize())]


def _probe_function(graph: Any, pools: list[Any]) -> tuple[Any, int]:
    """A function of (module, *inputs) returning the graph's outputs, then every pool node's
    inputs and outputs (run-time values of its arguments included)."""
    torch = base.load()
    original = list(graph.outputs())
    extra = [v for n in pools for v in (*n.inputs(), *n.outputs())]
    while len(list(graph.outputs())):
        graph.eraseOutput(0)
    values = original + extra
    pack = graph.create("prim::TupleConstruct", values)
    pack.output().setType(torch._C.TupleType([v.type() for v in values]))
    graph.appendNode(pack)
    graph.registerOutput(pack.output())
    return torch._C._create_function_from_graph("irpool_probe", graph), len(original)


def _attrs_fit(layer: Any, args: list[Any]) -> bool:
    """Whether an IR layer's window, strides and pads are those of a pooling call's arguments."""
    written = layer.get_attributes()
    if "kernel" not in written:
        return True
    try:
        k = [int(v) for v in args[1]]
        s = [int(v) for v in args[2]] or k
        p = [int(v) for v in args[3]]
    except (TypeError, ValueError, IndexError):
        return True
    n = len(k)
    return (
        list(written["kernel"])[-n:] == k
        and list(written["strides"])[-n:] == s
        and list(written["pads_begin"])[-n:] == p
    )


def _shape_fits(layer: Any, args: list[Any], own: list[Any]) -> bool:
    """Whether an IR layer's input and first output hold as many elements as the call's
    (a layer of another shape is never paired; torch and openvino are both channels-first,
    and a 1-D pool may be computed as a 2-D layer)."""
    torch = base.load()
    try:
        x, y = args[0], own[0]
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            return True
        got_in = layer.get_input_partial_shape(0)
        got_out = layer.get_output_partial_shape(0)
        if not (got_in.is_static and got_out.is_static):
            return True
        n_in = int(np.prod([d.get_length() for d in got_in]))
        n_out = int(np.prod([d.get_length() for d in got_out]))
        return bool(n_in == x.numel() and n_out == y.numel())
    except Exception:
        return True


def _pool_nodes(graph: Any, path: str) -> list[Any]:
    """The graph's pooling nodes; one with a divisor_override refused (it does not convert)."""
    pools = [
        n for n in graph.nodes() if n.kind().startswith("aten::") and torch_ops.is_pooling(n.kind())
    ]
    for n in pools:
        if "avg_pool" in n.kind() and n.inputsSize() > 6:
            given = n.inputsAt(6)
            if given.node().kind() != "prim::Constant" or given.toIValue() is not None:
                raise base.divisor_refusal(path, f"{n.kind()} (value {n.outputsAt(0).debugName()})")
    return pools


def _describe(n: Any) -> tuple[str, list[str], int, int, str, str, list[str]]:
    """What the pairing needs of a pooling node, read before the graph is changed to probe it:
    (kind, output names, input count, output count, module path, module class, argument
    names)."""
    module_path, cls = _hierarchy(n)
    outs = [o.debugName() for o in n.outputs()]
    return (n.kind(), outs, n.inputsSize(), n.outputsSize(), module_path, cls, _argument_names(n))


def trace_script(module: Any, arrays: list[Array], path: str, live: bool) -> Traced:
    torch = base.load()
    decoder, model = _convert_script(module, arrays, path, live)
    scripted = decoder.pt_module
    graph = scripted.inlined_graph
    pools = _pool_nodes(graph, path)
    described = [_describe(n) for n in pools]
    positions = _flat_outputs(graph)
    function, n_original = _probe_function(graph, pools)
    tensors = [base.as_tensor(torch, x) for x in arrays]
    with refusals("torch", path), torch.no_grad():
        produced = list(function(scripted._c, *tensors))[n_original:]
    pairing = _Pairing(model, positions)
    at = 0
    for kind, outs, n_in, n_out, module_path, cls, names in described:
        args = produced[at : at + n_in]
        own = produced[at + n_in : at + n_in + n_out]
        at += n_in + n_out
        pairing.add(kind, outs, args, own, (module_path, cls, names))
    values = base.probe(model, pairing.taps, arrays)
    ops = [_script_op(*entry, values) for entry in pairing.planned]
    for op in ops:
        op.merged_with = pairing.merged.get(op.name, [])
    route = "live module traced by openvino (TorchScript)" if live else "TorchScript"
    return Traced("torch", route, base.version(), {}, ops)


_Planned = tuple[
    str, list[str], str, str, list[str], list[Any], list[Any], list[Any], Any, list[Any], str
]
"""A paired node, as _script_op takes it (all but the values read)."""


class _Pairing:
    """Pairs each pooling node of the TorchScript graph, in order, with the openvino layers it
    became, and collects the ports whose values are read."""

    def __init__(self, model: Any, positions: dict[str, int]) -> None:
        self.positions = positions
        self.ports = openvino_rt.tensor_ports(model)
        self.results = model.get_results()
        self.by_kind: dict[str, list[Any]] = {}
        for op in model.get_ordered_ops():
            if openvino_rt.is_pool_layer(op):
                found = re.search(r"(?:^|/)(aten::\w+)/", op.get_friendly_name())
                if found:
                    self.by_kind.setdefault(found.group(1), []).append(op)
        self.claimed: dict[str, str] = {}
        """layer name -> the first op (its first output's name) paired with it."""
        self.merged: dict[str, list[str]] = {}
        self.planned: list[_Planned] = []
        self.taps: list[Any] = []

    def _named(self, out: str) -> tuple[Any, str]:
        """The port of openvino's model holding the node's first output, and how it was found."""
        named = self.ports.get(out)
        mapping = "tensor names (TorchScript value names)"
        if named is None and out in self.positions and self.positions[out] < len(self.results):
            named = self.results[self.positions[out]].input_value(0)
            mapping = "the model output at the same position"
        return named, mapping

    def add(
        self, kind: str, outs: list[str], args: list[Any], own: list[Any], where: tuple[Any, ...]
    ) -> None:
        claimed, ports = self.claimed, self.ports
        named, mapping = self._named(outs[0])
        if (
            named is not None
            and openvino_rt.is_pool_layer(named.get_node())
            and named.get_node().get_friendly_name() in claimed
        ):
            # openvino kept one layer for identical computations and moved this op's tensor
            # name onto it: both ops became that layer
            layer = named.get_node()
            first = claimed[layer.get_friendly_name()]
            self.merged.setdefault(first, []).append(outs[0])
            self.merged.setdefault(outs[0], []).append(first)
            layers = [layer]
            mapping = "tensor names (an identical op's layer: openvino keeps one for both)"
        else:
            layers, mapping = _script_layers(
                kind, named, args, own, self.by_kind, set(claimed), mapping
            )
        for la in layers:
            claimed.setdefault(la.get_friendly_name(), outs[0])
        layer = layers[0] if layers else None
        out_ports = [ports.get(name) for name in outs]
        if layer is not None:
            for i in range(len(out_ports)):
                if out_ports[i] is None and i < layer.get_output_size():
                    out_ports[i] = layer.output(i)
        in_port = layer.input_value(0) if layer is not None else None
        module_path, cls, names = where
        self.planned.append(
            (kind, outs, module_path, cls, names, args, own, layers, in_port, out_ports, mapping)
        )
        self.taps += [p for p in (in_port, *out_ports) if p is not None]


def _script_layers(
    kind: str,
    out: Any,
    args: list[Any],
    own: list[Any],
    by_kind: dict[str, list[Any]],
    claimed: set[str],
    how: str,
) -> tuple[list[Any], str]:
    """The openvino layers a pooling node became and how they were found: upstream of its output
    (`out`, found by `how`), else the next unclaimed layer of the op, one that fits first."""
    layers = openvino_rt.pooling_upstream(out) if out is not None else []
    layers = [la for la in layers if la.get_friendly_name() not in claimed]
    layers = [la for la in layers if f"{kind}/" in la.get_friendly_name()] or layers
    if not layers:
        rest = [
            la
            for la in by_kind.get(kind, [])
            if la.get_friendly_name() not in claimed and _shape_fits(la, args, own)
        ]
        fit = [la for la in rest if _attrs_fit(la, args)]
        layers = (fit or rest)[:1]
        how = (
            "the next layer of the same op whose attributes fit"
            if fit
            else "the next layer of the same op (by order only: check it)"
        )
    return layers, how


def _script_op(
    kind: str,
    outs: list[str],
    module_path: str,
    cls: str,
    names: list[str],
    args: list[Any],
    own: list[Any],
    layers: list[Any],
    in_port: Any,
    out_ports: list[Any],
    mapping: str,
    values: dict[tuple[str, int], Array],
) -> TracedOp:
    torch = base.load()
    attributes: dict[str, Any] = {}
    for i, value in enumerate(args[1:], start=1):
        name = names[i] if i < len(names) else f"arg{i}"
        if isinstance(value, torch.Tensor):
            value = value.tolist() if value.dim() == 0 else f"tensor{list(value.shape)}"
        attributes[name] = value
    function = torch_ops.function_of(kind)
    op = TracedOp(
        name=outs[0],
        op=kind,
        function=function,
        module=module_path,
        module_class=cls,
        attributes=attributes,
        layers=[base.ir_layer(la) for la in layers],
        mapping=mapping,
    )
    op.family, op.reduce = torch_ops.family_of(function)
    try:
        op.params = torch_ops.params_of_call(function, attributes)
    except Exception:
        op.params = None
    x = args[0]
    op.input_shape = tuple(x.shape)
    got_in = base.fit(values.get(base.port_key(in_port)), x) if in_port is not None else None
    replayed: list[Any] | None = None
    if got_in is not None and got_in.shape == tuple(x.shape):
        with torch.no_grad():
            out = getattr(torch.ops.aten, function)(base.as_tensor(torch, got_in), *args[1:])
        replayed = list(out) if isinstance(out, (tuple, list)) else [out]
    else:
        op.notes.append(
            "openvino's input of the layer is not in the converted model: torch's own value of "
            "the op is compared (end to end)"
        )
    op.nan_input = base.non_finite([got_in if got_in is not None else base.to_numpy(x)])
    for k, (name, port, mine) in enumerate(zip(outs, out_ports, own, strict=True)):
        got = base.fit(values.get(base.port_key(port)), mine) if port is not None else None
        again = base.to_numpy(replayed[k]) if replayed is not None else None
        op.outputs.append(
            TracedOutput(name, base.value_kind(mine), again, base.to_numpy(mine), got)
        )
    return op
