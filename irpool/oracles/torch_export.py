"""The torch.export route of the PyTorch oracle: the graph openvino's FX decoder converts,
grouped into one unit per torch call, each paired with its layers and replayed on openvino's
input."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy.typing as npt

from ..ops import torch as torch_ops
from ..source_ops import Traced, TracedOp, TracedOutput
from . import openvino_rt, refusals
from . import torch_base as base

Array = npt.NDArray[Any]


@dataclass
class _Unit:
    """One torch call's nodes in the graph openvino converted."""

    key: str
    function: str
    nodes: list[Any]
    pools: list[Any]
    inputs: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)


def _units(gm: Any) -> list[_Unit]:
    """The pooling calls of the decomposed graph, one per Python-level call (`torch_fn`)."""
    groups: dict[str, list[Any]] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        fn = node.meta.get("torch_fn")
        groups.setdefault(fn[0] if fn else node.name, []).append(node)
    units = []
    for key, nodes in groups.items():
        fn = nodes[0].meta.get("torch_fn")
        function = (
            str(fn[1]).rsplit(".", 1)[-1] if fn else torch_ops.function_of(str(nodes[0].target))
        )
        pools = [n for n in nodes if torch_ops.is_pooling(str(n.target))]
        if not pools and not torch_ops.is_pooling(function):
            continue
        members = set(nodes)
        unit = _Unit(key, function, nodes, pools)
        unit.outputs = [n for n in nodes if any(u not in members for u in n.users)]
        for n in nodes:
            for a in n.all_input_nodes:
                if a not in members and a.op != "get_attr" and a not in unit.inputs:
                    unit.inputs.append(a)
        units.append(unit)
    return units


def _root(node: Any) -> Any:
    """The node of the program as saved that a decomposed node comes from."""
    sources = node.meta.get("from_node") or []
    source = sources[-1] if sources else None
    while source is not None and getattr(source, "from_node", None):
        source = source.from_node[0]
    return source


def _module(node: Any) -> tuple[str, str]:
    """(module path, class) of the innermost module that issued a node; a module called more
    than once gets `@N` for its N-th call after the first."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return "", ""
    key, (path, cls) = list(stack.items())[-1]
    call = key.rsplit("@", 1)[1] if "@" in key else ""
    name = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
    return (f"{path}@{call}" if call else path), name.rsplit(".", 1)[-1]


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)')


_INSTALLED_TORCH = re.compile(r"[/\\](site|dist)-packages[/\\]torch[/\\]")
"""A path inside an installed torch package."""


def _code(trace: str) -> str:
    """`file:line: code` of the innermost frame outside torch in a stack trace (torch's own
    frames: under this torch, or under any installed torch: a saved program keeps the paths
    of the machine that exported it)."""
    torch_dir = os.path.dirname(base.load().__file__)
    user = [
        f
        for f in _FRAME.findall(trace or "")
        if not (f[0].startswith(torch_dir) or _INSTALLED_TORCH.search(f[0]))
    ]
    if not user:
        return ""  # a torch module called as the model itself: no line of the user's
    path, line, text = user[-1]
    return f"{os.path.basename(path)}:{line}: {text.strip()}"


def _arguments(node: Any) -> dict[str, Any]:
    """A call's arguments by the operator's argument names (tensors as %node)."""
    torch = base.load()
    schema = getattr(node.target, "_schema", None)
    names = [a.name for a in schema.arguments] if schema is not None else []

    def shown(value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            return f"%{value.name}"
        if isinstance(value, (list, tuple)):
            return [shown(v) for v in value]
        return value

    found = {names[i] if i < len(names) else f"arg{i}": shown(a) for i, a in enumerate(node.args)}
    found.update({k: shown(v) for k, v in node.kwargs.items()})
    for argument in schema.arguments if schema is not None else ():
        if argument.name not in found and argument.has_default_value():
            found[argument.name] = shown(argument.default_value)
    for tensor in ("self", "input"):
        found.pop(tensor, None)
    return found


def _refuse_divisor_override_export(ep: Any, path: str) -> None:
    for node in ep.graph.nodes:
        if node.op != "call_function" or "avg_pool" not in str(node.target):
            continue
        value = node.args[6] if len(node.args) > 6 else node.kwargs.get("divisor_override")
        if value is not None:
            raise base.divisor_refusal(
                path, f'node "{node.name}" ({node.target}, divisor_override={value})'
            )


def _run_export(gm: Any, tensors: Sequence[Any]) -> dict[Any, Any]:
    """Every node's value when torch runs the converted graph."""
    torch = base.load()
    env: dict[Any, Any] = {}

    interpreter: Any = torch.fx.Interpreter

    class Recorder(interpreter):  # type: ignore[misc]
        def run_node(self, n: Any) -> Any:
            env[n] = super().run_node(n)
            return env[n]

    with torch.no_grad():
        Recorder(gm).run(*tensors)
    return env


def _replay_export(unit: _Unit, env: dict[Any, Any], feed: dict[Any, Any]) -> dict[Any, Any]:
    """The unit's nodes run again, the values of `feed` replacing their nodes' values."""
    torch = base.load()
    local = {**env, **feed}
    with torch.no_grad():
        for n in unit.nodes:
            args = torch.fx.node.map_arg(n.args, lambda a: local[a])
            kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: local[a])
            local[n] = n.target(*args, **kwargs)
    return local


def trace_export(ep: Any, arrays: list[Array], path: str, route: str) -> Traced:
    torch = base.load()
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    _refuse_divisor_override_export(ep, path)
    specs = [openvino_rt.input_spec(x.shape, x.dtype) for x in arrays]
    with refusals("openvino", path):
        decoder = TorchFXPythonDecoder.from_exported_program(ep)
        model = openvino_rt.convert_object(decoder, specs)
    gm = decoder.pt_module
    saved = {n.name: n for n in ep.graph.nodes}
    tensors = [base.as_tensor(torch, x) for x in arrays]
    with refusals("torch", path):
        env = _run_export(gm, tensors)
    ports = openvino_rt.tensor_ports(model)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    parameters = model.get_parameters()
    pools = [op for op in model.get_ordered_ops() if openvino_rt.is_pool_layer(op)]

    def port_of(node: Any) -> Any:
        if node.op == "placeholder":
            i = placeholders.index(node)
            return parameters[i].output(0) if i < len(parameters) else None
        return ports.get(f"{node.name}:0")

    planned: list[tuple[_Unit, list[Any], list[Any], list[Any], str]] = []
    taps: list[Any] = []
    owner: dict[str, int] = {}
    """layer name -> the index of the unit whose nodes name it."""
    merged: dict[int, list[int]] = {}
    for unit in _units(gm):
        names = {n.name for n in unit.nodes}
        layers = [op for op in pools if op.get_friendly_name().split("/", 1)[0] in names]
        ins = [port_of(n) for n in unit.inputs]
        outs = [port_of(n) for n in unit.outputs]
        mapping = "tensor names <node>:0 and layer names <node>/<aten op>/<type>"
        here = len(planned)
        for la in layers:
            owner.setdefault(la.get_friendly_name(), here)
        kept = outs[0].get_node() if outs and outs[0] is not None else None
        if not layers and kept is not None and kept.get_friendly_name() in owner:
            # openvino kept one layer for identical computations and moved this call's
            # tensor name onto it: both calls became that layer
            layers = [kept]
            first = owner[kept.get_friendly_name()]
            merged.setdefault(first, []).append(here)
            merged.setdefault(here, []).append(first)
            mapping = "tensor names <node>:0 (an identical call's layer: openvino keeps one)"
        for k, node in enumerate(unit.outputs):
            if outs[k] is None and layers:
                index = 0 if base.value_kind(env[node]) == "values" else 1
                if index < layers[0].get_output_size():
                    outs[k] = layers[0].output(index)
                    mapping = "layer names <node>/<aten op>/<type> (an output has no name)"
        planned.append((unit, layers, ins, outs, mapping))
        taps += [p for p in (*ins, *outs) if p is not None]
    values = base.probe(model, taps, arrays)
    ops = []
    for unit, layers, ins, outs, mapping in planned:
        ops.append(_export_op(unit, layers, ins, outs, mapping, env, values, saved))
    for i, op in enumerate(ops):
        op.merged_with = [ops[j].name for j in merged.get(i, [])]
    return Traced("torch", route, base.version(), {}, ops)


def _export_op(
    unit: _Unit,
    layers: list[Any],
    ins: list[Any],
    outs: list[Any],
    mapping: str,
    env: dict[Any, Any],
    values: dict[tuple[str, int], Array],
    saved: dict[str, Any],
) -> TracedOp:
    torch = base.load()
    main = unit.pools[0] if unit.pools else unit.nodes[0]
    root = _root(main)
    origin = saved.get(root.name) if root is not None else None
    origin = origin if origin is not None else main
    module, module_class = _module(main)
    attributes = _arguments(origin)
    aten = str(origin.target)
    function = unit.function
    op = TracedOp(
        name=origin.name,
        op=aten,
        function=function,
        module=module,
        module_class=module_class,
        code=_code(origin.meta.get("stack_trace") or main.meta.get("stack_trace") or ""),
        attributes=attributes,
        layers=[base.ir_layer(la) for la in layers],
        mapping=mapping,
    )
    op.family, op.reduce = torch_ops.family_of(torch_ops.function_of(aten))
    try:
        op.params = torch_ops.params_of_call(torch_ops.function_of(aten), attributes)
    except Exception:
        op.params = None
    feed: dict[Any, Any] = {}
    missing = []
    seen = []
    for node, port in zip(unit.inputs, ins, strict=True):
        value = env.get(node)
        if not isinstance(value, torch.Tensor):
            continue
        got = values.get(base.port_key(port)) if port is not None else None
        got = base.fit(got, value)
        if got is None or got.shape != tuple(value.shape):
            missing.append(node.name)
            continue
        feed[node] = base.as_tensor(torch, got)
        seen.append(got)
    if unit.inputs:
        first = env.get(unit.inputs[0])
        op.input_shape = tuple(first.shape) if isinstance(first, torch.Tensor) else None
    if missing:
        op.notes.append(
            f"openvino's value of {', '.join(missing)} (the op's input) is not in the converted "
            "model: torch's own value of the op is compared (end to end)"
        )
    replayed = None if missing else _replay_export(unit, env, feed)
    op.nan_input = base.non_finite(seen or [base.to_numpy(env[n]) for n in unit.inputs if n in env])
    for node, port in zip(unit.outputs, outs, strict=True):
        own = env[node]
        if not isinstance(own, torch.Tensor):
            continue
        mine = base.to_numpy(replayed[node]) if replayed is not None else None
        got = base.fit(values.get(base.port_key(port)), own) if port is not None else None
        op.outputs.append(
            TracedOutput(node.name, base.value_kind(own), mine, base.to_numpy(own), got)
        )
    return op
