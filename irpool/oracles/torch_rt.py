"""PyTorch as an oracle of the conversion audit: load a program, convert it with openvino's
PyTorch front end, find each pooling op's layer in the converted model, and run torch's own
computation of the op on the input openvino gave that layer.

Measured with torch 2.13 and openvino 2026.4.1 (docs/debugging-a-converted-model.md):

* A `.pt2` file (torch.export) is a zip holding `archive_format`; a TorchScript file holds
  `data.pkl` or `constants.pkl`.
* openvino converts an ExportedProgram through its FX decoder, which first runs torch's
  decompositions: the graph it converts is the decoder's `pt_module`, whose node names (not the
  saved program's) name the IR's layers (`<node>/<aten op>/<type>`) and tensors (`<node>:0`).
  Each decomposed node keeps `torch_fn` (the Python-level call it came from: a 1-D pool is
  unsqueeze, a 2-D pool and squeeze; an LPPool a chain around avg_pool), `nn_module_stack` (the
  module path), `from_node` (back to the saved program's node) and `stack_trace` (the user's
  line).  Grouping by `torch_fn` gives one unit per torch call.
* A TorchScript module converts through openvino's TorchScript decoder (which traces a live
  module exactly as `ov.convert_model(module, example_input=...)` does); the IR keeps each
  value's debug name as a tensor name, except on model outputs (found by position instead).
  Running a copy of the inlined graph that also returns every pool node's inputs and outputs
  gives torch's values, the run-time arguments included.
* Without `input=` every dim converts dynamic; a loaded TorchScript module's inputs have no
  element type (the CPU plugin then refuses the model): shapes and types are always given.
* `divisor_override` does not convert ("do not support divisor_override input"): refused
  before openvino sees it.  openvino's FX decoder logs a traceback for each op it cannot take out
  of torch's decomposition table: harmless, silenced.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import warnings
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OracleMissing, OracleRefused, Where
from ..ops import torch as torch_ops
from ..source_ops import DeclaredInputs, IrLayer, Traced, TracedOp, TracedOutput
from . import openvino_rt, refusals, unreadable

Array = npt.NDArray[Any]
Kind = Literal["export", "torchscript", "module"]


def load() -> Any:
    """The torch module, or OracleMissing saying how to install it."""
    try:
        import torch
    except ImportError:
        raise OracleMissing("torch is not installed; pip install 'irpool[torch]'") from None
    return torch


def version() -> str:
    return str(load().__version__)


@contextmanager
def quiet() -> Iterator[None]:
    """Silence openvino's FX decoder (tracebacks through the root logger) and torch's warnings."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


@dataclass
class Program(DeclaredInputs):
    """A torch model to audit, and what it says of its inputs."""

    kind: Kind
    obj: Any
    """The ExportedProgram, ScriptModule or torch.nn.Module."""
    path: str
    route: str = "trace"
    """For a live module: 'trace' (what ov.convert_model(module, example_input=...) does) or
    'export' (torch.export, as convert_model(..., dynamo=True) does)."""


def file_kind(path: str) -> Kind | None:
    """'export' for a torch.export archive (.pt2), 'torchscript' for a torch.jit.save file, None
    for anything else."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = {n.rsplit("/", 1)[-1] for n in archive.namelist()}
    except (OSError, zipfile.BadZipFile):
        return None
    if "archive_format" in names or any(n.startswith("serialized_") for n in names):
        return "export"
    if names & {"data.pkl", "constants.pkl"}:
        return "torchscript"
    return None


def open_file(path: str) -> Program:
    """A .pt2 program or a TorchScript file, loaded (the file may run code: audit only models
    you trust, as with torch.load)."""
    kind = file_kind(path)
    if kind is None:
        raise InputError(
            "not a torch.export archive (.pt2, torch.export.save) or a TorchScript file "
            "(torch.jit.save)",
            Where(file=path),
        )
    torch = load()
    with quiet(), unreadable("torch", path):
        obj = torch.export.load(path) if kind == "export" else torch.jit.load(path).eval()
    return from_object(obj, path)


def from_object(obj: Any, path: str = "<module>", route: str = "trace") -> Program:
    """An ExportedProgram, a ScriptModule or a live torch.nn.Module as a Program."""
    torch = load()
    if isinstance(obj, torch.export.ExportedProgram):
        names, shapes, dtypes = _exported_inputs(obj)
        return Program(
            "export", obj, path, input_names=names, input_shapes=shapes, input_dtypes=dtypes
        )
    if isinstance(obj, torch.jit.ScriptModule):
        args = [a.name for a in obj.forward.schema.arguments][1:]
        return Program("torchscript", obj, path, **_untyped(args))
    if isinstance(obj, torch.nn.Module):
        names = [
            p.name
            for p in inspect.signature(obj.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if route not in ("trace", "export"):
            raise InputError(f"route {route!r}; expected trace or export")
        return Program("module", obj.eval(), path, route, **_untyped(names))
    raise InputError(
        f"{type(obj).__name__} is not a torch.nn.Module, ScriptModule or ExportedProgram"
    )


F32 = np.dtype(np.float32)


def _untyped(names: list[str]) -> dict[str, Any]:
    """Inputs of unknown shapes, taken as float32 (a ScriptModule's or a module's)."""
    n = len(names)
    return {"input_names": names, "input_shapes": [None] * n, "input_dtypes": [F32] * n}


def _exported_inputs(
    ep: Any,
) -> tuple[list[str], list[tuple[int, ...] | None], list[np.dtype[Any]]]:
    names = list(ep.graph_signature.user_inputs)
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    shapes: list[tuple[int, ...] | None] = []
    dtypes: list[np.dtype[Any]] = []
    for name in names:
        value = nodes[name].meta.get("val") if name in nodes else None
        dims = getattr(value, "shape", None)
        if dims is not None and all(isinstance(d, int) for d in dims):
            shapes.append(tuple(int(d) for d in dims))
        else:
            shapes.append(None)
        dtype = getattr(value, "dtype", None)
        dtypes.append(_numpy_dtype(dtype) if dtype is not None else np.dtype(np.float32))
    return names, shapes, dtypes


def _numpy_dtype(dtype: Any) -> np.dtype[Any]:
    torch = load()
    return np.dtype(str(torch.empty((), dtype=dtype).numpy().dtype))


def trace(program: Program, arrays: list[Array]) -> Traced:
    """Convert the program with openvino and pair each pooling op with its layer, with torch's
    and openvino's values on the same input."""
    torch = load()
    openvino_rt.load()
    with quiet():
        if program.kind == "export":
            traced = _trace_export(program.obj, arrays, program.path, "torch.export program")
        elif program.kind == "torchscript":
            traced = _trace_script(program.obj, arrays, program.path, live=False)
        elif program.route == "export":
            tensors = tuple(torch.from_numpy(np.ascontiguousarray(x)) for x in arrays)
            with refusals("torch", program.path):
                ep = torch.export.export(program.obj, tensors)
            traced = _trace_export(ep, arrays, program.path, "live module through torch.export")
        else:
            traced = _trace_script(program.obj, arrays, program.path, live=True)
    traced.inputs = {n: tuple(x.shape) for n, x in zip(program.input_names, arrays, strict=False)}
    return traced


def _refuse(path: str, what: str) -> OracleRefused:
    return OracleRefused(
        f"{what} has divisor_override: openvino's PyTorch front end cannot convert it "
        '("Translation for aten::avg_pool2d do not support divisor_override input"), so there '
        "is no conversion to audit (torch.onnx drops divisor_override silently, too)",
        Where(file=path),
    )


def _tensor(torch: Any, x: Array) -> Any:
    return torch.from_numpy(np.ascontiguousarray(x))


def _numpy(value: Any) -> Array:
    return np.asarray(value.detach().cpu().numpy())


def _kind(value: Any) -> Literal["values", "indices"]:
    floating = getattr(value, "is_floating_point", None)
    return "values" if floating is None or floating() else "indices"


def _ir_layer(op: Any) -> IrLayer:
    return IrLayer(op.get_friendly_name(), openvino_rt.op_label(op), openvino_rt.attributes(op))


def _key(port: Any) -> tuple[str, int]:
    return port.get_node().get_friendly_name(), port.get_index()


def _probe(model: Any, ports: list[Any], arrays: list[Array]) -> dict[tuple[str, int], Array]:
    unique = list({_key(p): p for p in ports}.values())
    with refusals("openvino"):
        values = openvino_rt.probe(model, unique, openvino_rt.parameter_inputs(model, arrays))
    return {_key(p): v for p, v in zip(unique, values, strict=True)}


def _fit(value: Array | None, like: Any) -> Array | None:
    """openvino's value in torch's shape when only the layout of dims differs (a 1-D pool that
    openvino computes as a 2-D layer between Unsqueeze and Squeeze)."""
    if value is None:
        return None
    shape = tuple(like.shape)
    if value.shape != shape and value.size == int(np.prod(shape)):
        return value.reshape(shape)
    return value


def _non_finite(values: list[Any]) -> bool:
    for v in values:
        if v is not None and v.dtype.kind == "f" and not bool(np.isfinite(v).all()):
            return True
    return False


# -- torch.export programs --------------------------------------------------------------------


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
    torch_dir = os.path.dirname(load().__file__)
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
    torch = load()
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
            raise _refuse(path, f'node "{node.name}" ({node.target}, divisor_override={value})')


def _run_export(gm: Any, tensors: Sequence[Any]) -> dict[Any, Any]:
    """Every node's value when torch runs the converted graph."""
    torch = load()
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
    torch = load()
    local = {**env, **feed}
    with torch.no_grad():
        for n in unit.nodes:
            args = torch.fx.node.map_arg(n.args, lambda a: local[a])
            kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: local[a])
            local[n] = n.target(*args, **kwargs)
    return local


def _trace_export(ep: Any, arrays: list[Array], path: str, route: str) -> Traced:
    torch = load()
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    _refuse_divisor_override_export(ep, path)
    specs = [openvino_rt.input_spec(x.shape, x.dtype) for x in arrays]
    with refusals("openvino", path):
        decoder = TorchFXPythonDecoder.from_exported_program(ep)
        model = openvino_rt.convert_object(decoder, specs)
    gm = decoder.pt_module
    saved = {n.name: n for n in ep.graph.nodes}
    tensors = [_tensor(torch, x) for x in arrays]
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
                index = 0 if _kind(env[node]) == "values" else 1
                if index < layers[0].get_output_size():
                    outs[k] = layers[0].output(index)
                    mapping = "layer names <node>/<aten op>/<type> (an output has no name)"
        planned.append((unit, layers, ins, outs, mapping))
        taps += [p for p in (*ins, *outs) if p is not None]
    values = _probe(model, taps, arrays)
    ops = []
    for unit, layers, ins, outs, mapping in planned:
        ops.append(_export_op(unit, layers, ins, outs, mapping, env, values, saved))
    for i, op in enumerate(ops):
        op.merged_with = [ops[j].name for j in merged.get(i, [])]
    return Traced("torch", route, version(), {}, ops)


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
    torch = load()
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
        layers=[_ir_layer(la) for la in layers],
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
        got = values.get(_key(port)) if port is not None else None
        got = _fit(got, value)
        if got is None or got.shape != tuple(value.shape):
            missing.append(node.name)
            continue
        feed[node] = _tensor(torch, got)
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
    op.nan_input = _non_finite(seen or [_numpy(env[n]) for n in unit.inputs if n in env])
    for node, port in zip(unit.outputs, outs, strict=True):
        own = env[node]
        if not isinstance(own, torch.Tensor):
            continue
        mine = _numpy(replayed[node]) if replayed is not None else None
        got = _fit(values.get(_key(port)), own) if port is not None else None
        op.outputs.append(TracedOutput(node.name, _kind(own), mine, _numpy(own), got))
    return op


# -- TorchScript ------------------------------------------------------------------------------


def _convert_script(module: Any, arrays: list[Array], path: str, live: bool) -> tuple[Any, Any]:
    """(openvino's decoder, the converted model) of a ScriptModule or a live module it traces."""
    torch = load()
    from openvino.frontend.pytorch.ts_decoder import TorchScriptPythonDecoder

    specs = [openvino_rt.input_spec(x.shape, x.dtype) for x in arrays]
    example = tuple(_tensor(torch, x) for x in arrays) if live else None
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
    torch = load()
    try:
        return [a.name for a in torch._C.parse_schema(node.schema()).arguments]
    except Exception:
        return [f"arg{i}" for i in range(node.inputsSize())]


def _probe_function(graph: Any, pools: list[Any]) -> tuple[Any, int]:
    """A function of (module, *inputs) returning the graph's outputs, then every pool node's
    inputs and outputs (run-time values of its arguments included)."""
    torch = load()
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
    torch = load()
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


def _trace_script(module: Any, arrays: list[Array], path: str, live: bool) -> Traced:
    torch = load()
    decoder, model = _convert_script(module, arrays, path, live)
    scripted = decoder.pt_module
    graph = scripted.inlined_graph
    pools = [
        n for n in graph.nodes() if n.kind().startswith("aten::") and torch_ops.is_pooling(n.kind())
    ]
    for n in pools:
        if "avg_pool" in n.kind() and n.inputsSize() > 6:
            given = n.inputsAt(6)
            if given.node().kind() != "prim::Constant" or given.toIValue() is not None:
                raise _refuse(path, f"{n.kind()} (value {n.outputsAt(0).debugName()})")
    described = []
    for n in pools:
        module_path, cls = _hierarchy(n)
        described.append(
            (
                n.kind(),
                [o.debugName() for o in n.outputs()],
                n.inputsSize(),
                n.outputsSize(),
                module_path,
                cls,
                _argument_names(n),
            )
        )
    positions = _flat_outputs(graph)
    function, n_original = _probe_function(graph, pools)
    tensors = [_tensor(torch, x) for x in arrays]
    with refusals("torch", path), torch.no_grad():
        produced = list(function(scripted._c, *tensors))[n_original:]
    ports = openvino_rt.tensor_ports(model)
    results = model.get_results()
    by_kind: dict[str, list[Any]] = {}
    for op in model.get_ordered_ops():
        if openvino_rt.is_pool_layer(op):
            found = re.search(r"(?:^|/)(aten::\w+)/", op.get_friendly_name())
            if found:
                by_kind.setdefault(found.group(1), []).append(op)
    claimed: dict[str, str] = {}
    """layer name -> the first op (its first output's name) paired with it."""
    merged: dict[str, list[str]] = {}
    planned = []
    taps: list[Any] = []
    at = 0
    for kind, outs, n_in, n_out, module_path, cls, names in described:
        args = produced[at : at + n_in]
        own = produced[at + n_in : at + n_in + n_out]
        at += n_in + n_out
        named = ports.get(outs[0])
        mapping = "tensor names (TorchScript value names)"
        if named is None and outs[0] in positions and positions[outs[0]] < len(results):
            named = results[positions[outs[0]]].input_value(0)
            mapping = "the model output at the same position"
        if (
            named is not None
            and openvino_rt.is_pool_layer(named.get_node())
            and named.get_node().get_friendly_name() in claimed
        ):
            # openvino kept one layer for identical computations and moved this op's tensor
            # name onto it: both ops became that layer
            layer = named.get_node()
            first = claimed[layer.get_friendly_name()]
            merged.setdefault(first, []).append(outs[0])
            merged.setdefault(outs[0], []).append(first)
            layers = [layer]
            mapping = "tensor names (an identical op's layer: openvino keeps one for both)"
        else:
            layers, mapping = _script_layers(kind, named, args, own, by_kind, set(claimed), mapping)
        for la in layers:
            claimed.setdefault(la.get_friendly_name(), outs[0])
        layer = layers[0] if layers else None
        out_ports = [ports.get(name) for name in outs]
        if layer is not None:
            for i in range(len(out_ports)):
                if out_ports[i] is None and i < layer.get_output_size():
                    out_ports[i] = layer.output(i)
        in_port = layer.input_value(0) if layer is not None else None
        planned.append(
            (kind, outs, module_path, cls, names, args, own, layers, in_port, out_ports, mapping)
        )
        taps += [p for p in (in_port, *out_ports) if p is not None]
    values = _probe(model, taps, arrays)
    ops = [_script_op(*entry, values) for entry in planned]
    for op in ops:
        op.merged_with = merged.get(op.name, [])
    route = "live module traced by openvino (TorchScript)" if live else "TorchScript"
    return Traced("torch", route, version(), {}, ops)


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
    torch = load()
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
        layers=[_ir_layer(la) for la in layers],
        mapping=mapping,
    )
    op.family, op.reduce = torch_ops.family_of(function)
    try:
        op.params = torch_ops.params_of_call(function, attributes)
    except Exception:
        op.params = None
    x = args[0]
    op.input_shape = tuple(x.shape)
    got_in = _fit(values.get(_key(in_port)), x) if in_port is not None else None
    replayed: list[Any] | None = None
    if got_in is not None and got_in.shape == tuple(x.shape):
        with torch.no_grad():
            out = getattr(torch.ops.aten, function)(_tensor(torch, got_in), *args[1:])
        replayed = list(out) if isinstance(out, (tuple, list)) else [out]
    else:
        op.notes.append(
            "openvino's input of the layer is not in the converted model: torch's own value of "
            "the op is compared (end to end)"
        )
    op.nan_input = _non_finite([got_in if got_in is not None else _numpy(x)])
    for k, (name, port, mine) in enumerate(zip(outs, out_ports, own, strict=True)):
        got = _fit(values.get(_key(port)), mine) if port is not None else None
        again = _numpy(replayed[k]) if replayed is not None else None
        op.outputs.append(TracedOutput(name, _kind(mine), again, _numpy(mine), got))
    return op


# -- adaptive and global pools of an IR (convert-report on an IR of PyTorch origin) -----------


def pooling_like(
    family: str, reduce: str, x: Array, argument: list[int], keep: bool
) -> tuple[str, list[Array]]:
    """(the torch call, its outputs) of an adaptive pool of output size `argument`, or of a
    mean/amax over the axes `argument`, on x."""
    torch = load()
    functional = torch.nn.functional
    t = _tensor(torch, x)
    with torch.no_grad():
        if family == "adaptive":
            n = len(argument)
            name = f"adaptive_{'avg' if reduce == 'mean' else 'max'}_pool{n}d"
            if reduce == "mean":
                return f"F.{name}(x, {argument})", [_numpy(getattr(functional, name)(t, argument))]
            values, indices = getattr(functional, name)(t, argument, return_indices=True)
            return f"F.{name}(x, {argument}, return_indices=True)", [
                _numpy(values),
                _numpy(indices),
            ]
        if reduce == "mean":
            return f"x.mean(dim={argument}, keepdim={keep})", [
                _numpy(t.mean(dim=argument, keepdim=keep))
            ]
        return f"x.amax(dim={argument}, keepdim={keep})", [
            _numpy(t.amax(dim=argument, keepdim=keep))
        ]
