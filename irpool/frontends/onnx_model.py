"""ONNX models (`.onnx`) -> Graph, with the `onnx` extra.

Graph inputs become Parameter layers, nodes become layers with their typed attributes
(`Layer.attrs`), graph outputs become Result layers named after the output tensors;
initializers stay as arrays in `Graph.initializers`.  Port ids follow the IR convention
(inputs 0..n-1, outputs from n).  External data is only read from beside the model.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import IrParseError, OracleMissing, SpecError, Where
from ..model import Edge, Graph, Layer, Port, element_type_of_numpy
from .safe_io import read_regular_file, refuse_compressed

MAX_ONNX_BYTES = 2 * 1024**3
POOLING = {
    ("ai.onnx", "AveragePool"),
    ("ai.onnx", "MaxPool"),
    ("com.microsoft", "QLinearAveragePool"),
}

_ET = {
    1: "f32",
    2: "u8",
    3: "i8",
    5: "i16",
    6: "i32",
    7: "i64",
    9: "boolean",
    10: "f16",
    11: "f64",
    12: "u32",
    13: "u64",
    16: "bf16",
    4: "u16",
}


def load_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise OracleMissing("reading .onnx files needs onnx; pip install 'irpool[onnx]'") from None
    return onnx


def is_onnx_path(path: str) -> bool:
    return path.lower().endswith(".onnx")


def domain_of(node_domain: str) -> str:
    return "ai.onnx" if node_domain in ("", "ai.onnx") else node_domain


def is_pooling(layer: Layer) -> bool:
    return (domain_of(layer.domain), layer.type) in POOLING


def read_model(path: str) -> Any:
    """The ModelProto of a file: a regular file, not compressed, parsed without side effects."""
    data = read_regular_file(path, MAX_ONNX_BYTES)
    refuse_compressed(data, path)
    problem = wire_problem(data)
    if problem is not None:  # exit 2 with or without onnx installed: no model to read
        raise IrParseError(f"not a readable ONNX model ({problem})", Where(path))
    onnx = load_onnx()
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf's DecodeError and friends
        raise IrParseError(f"not a readable ONNX model ({type(e).__name__})", Where(path)) from None
    if not model.graph.node and not model.graph.input:
        raise IrParseError("ONNX model has an empty graph; expected nodes", Where(path))
    from onnx import external_data_helper

    if any(external_data_helper.uses_external_data(t) for t in model.graph.initializer):
        base = os.path.dirname(os.path.abspath(path))
        for tensor in model.graph.initializer:
            if not external_data_helper.uses_external_data(tensor):
                continue
            info = {e.key: e.value for e in tensor.external_data}
            target = os.path.realpath(os.path.join(base, info.get("location", "")))
            if os.path.dirname(target) != base and not target.startswith(base + os.sep):
                raise IrParseError(
                    f"initializer {tensor.name!r} points outside the model's folder; refused",
                    Where(path),
                )
        try:
            external_data_helper.load_external_data_for_model(model, base)
        except (OSError, ValueError) as e:
            raise IrParseError(f"cannot read external data: {e}", Where(path)) from None
    return model


_MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2, 26: 2}
"""The wire type of each field of onnx.proto's ModelProto, by field number (ir_version,
producer_name, producer_version, domain, model_version, doc_string, graph, opset_import,
metadata_props, training_info, functions, configuration)."""


def wire_problem(data: bytes) -> str | None:
    """Why `data` cannot be an ONNX ModelProto, read as protobuf's wire format without the
    onnx package (so that a file that is no model is refused the same way whether or not onnx
    is installed); None when it may be one: well-formed top-level fields, the known ones of the
    right wire type, and a graph among them."""
    position, end, graph = 0, len(data), False

    def varint() -> int:
        nonlocal position
        value, shift = 0, 0
        while position < end and shift < 70:
            byte = data[position]
            position += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise ValueError

    try:
        while position < end:
            key = varint()
            number, wire = key >> 3, key & 7
            if number == 0 or _MODEL_FIELDS.get(number, wire) != wire:
                return f"byte {position}: not a ModelProto field"
            if wire == 0:
                varint()
            elif wire == 1 or wire == 5:
                position += 8 if wire == 1 else 4
            elif wire == 2:
                length = varint()  # read before position is: it moves position
                position += length
            else:
                return f"byte {position}: not a ModelProto field"
            if position > end:
                return "truncated protobuf"
            graph = graph or number == 7
    except ValueError:
        return "truncated protobuf"
    return None if graph else "no graph in the protobuf"


def _dims(value_type: Any) -> tuple[tuple[int, ...] | None, str | None]:
    if not value_type.HasField("tensor_type"):
        return None, None
    tensor = value_type.tensor_type
    et = _ET.get(tensor.elem_type)
    if not tensor.HasField("shape"):
        return None, et
    dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim)
    return dims, et


def shape_text(dims: tuple[int, ...] | None) -> str:
    if dims is None:
        return "..."
    return ",".join("?" if d < 0 else str(d) for d in dims)


def _attr_value(attr: Any) -> object:
    from onnx import helper

    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
    return value


def to_graph(model: Any, path: str) -> Graph:
    """The Graph of a ModelProto."""
    g = model.graph
    opsets = {domain_of(o.domain): int(o.version) for o in model.opset_import}
    initializers = _initializers(g, path)
    declared: dict[str, tuple[tuple[int, ...] | None, str | None]] = {}
    for info in [*g.input, *g.value_info, *g.output]:
        declared[info.name] = _dims(info.type)
    net = _Layers(path, declared)
    net.add_inputs(g.input, initializers)
    net.add_nodes(g.node, opsets, initializers)
    net.add_outputs(g.output)
    return Graph(
        path=path,
        layers=tuple(net.layers),
        edges=net.edges(initializers),
        ir_version=None,
        name=g.name or None,
        format="onnx",
        opsets=opsets,
        initializers=initializers,
    )


def _initializers(g: Any, path: str) -> dict[str, Any]:
    """The graph's initializers as arrays, by name."""
    from onnx import numpy_helper

    initializers = {}
    for tensor in g.initializer:
        try:
            initializers[tensor.name] = numpy_helper.to_array(tensor)
        except Exception as e:
            raise IrParseError(
                f"initializer {tensor.name!r} is unreadable ({e})", Where(path)
            ) from None
    return initializers


class _Layers:
    """The layers of an ONNX graph as they are built: a Parameter per graph input, a layer per
    node, a Result per graph output (a layer's id and index its position), and which layer's
    port produces each tensor."""

    def __init__(
        self, path: str, declared: dict[str, tuple[tuple[int, ...] | None, str | None]]
    ) -> None:
        self.path = path
        self.declared = declared
        self.layers: list[Layer] = []
        self.producer: dict[str, tuple[int, int]] = {}

    def port(self, k: int, tensor: str, names: tuple[str, ...]) -> Port:
        dims, et = self.declared.get(tensor, (None, None))
        return Port(k, et, names, dims, None)

    def add(
        self,
        name: str,
        type: str,
        version: str,
        data: dict[str, str],
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        **rest: Any,
    ) -> Layer:
        """A layer appended to `layers` (its id and index its position); `rest`: attrs and
        domain of a node."""
        lid = len(self.layers)
        layer = Layer(
            id=lid,
            name=name,
            type=type,
            version=version,
            data=data,
            inputs=inputs,
            outputs=outputs,
            file=self.path,
            line=None,
            index=lid,
            **rest,
        )
        self.layers.append(layer)
        return layer

    def add_inputs(self, graph_inputs: Any, initializers: dict[str, Any]) -> None:
        """A Parameter for each graph input that is not an initializer."""
        for inp in graph_inputs:
            if inp.name in initializers:
                continue
            dims, et = self.declared[inp.name]
            self.add(
                inp.name,
                "Parameter",
                "opset1",
                {"shape": shape_text(dims), "element_type": et or "f32"},
                inputs=(),
                outputs=(self.port(0, inp.name, (inp.name,)),),
            )
            self.producer[inp.name] = (len(self.layers) - 1, 0)

    def add_nodes(self, nodes: Any, opsets: dict[str, int], initializers: dict[str, Any]) -> None:
        """A layer for each node, its attributes read and its outputs' tensors recorded."""
        for node in nodes:
            lid = len(self.layers)
            domain = domain_of(node.domain)
            attrs = {a.name: _attr_value(a) for a in node.attribute}
            n_in = len(node.input)
            port = self.port
            layer = self.add(
                node.name or (node.output[0] if node.output else f"node{lid}"),
                node.op_type,
                f"opset{opsets.get(domain, 1)}",
                {k: str(v) for k, v in attrs.items()},
                inputs=tuple(port(k, t, (t,) if t else ()) for k, t in enumerate(node.input)),
                # "" is an omitted optional output
                outputs=tuple(port(n_in + k, t, (t,)) for k, t in enumerate(node.output) if t),
                attrs=attrs,
                domain=domain,
            )
            if (domain, node.op_type) == ("com.microsoft", "QLinearAveragePool"):
                check_qlinear_inputs(layer, initializers)
            for k, t in enumerate(node.output):
                if t:
                    self.producer[t] = (lid, n_in + k)

    def add_outputs(self, graph_outputs: Any) -> None:
        """A Result for each graph output."""
        for out in graph_outputs:
            self.add(
                out.name,
                "Result",
                "opset1",
                {},
                inputs=(self.port(0, out.name, (out.name,)),),
                outputs=(),
            )

    def edges(self, initializers: dict[str, Any]) -> tuple[Edge, ...]:
        """An edge from each tensor's producer to each layer port that reads it (initializers
        are read as constants, not edges)."""
        edges: list[Edge] = []
        for layer in self.layers:
            for port in layer.inputs:
                if not port.names or port.names[0] in initializers:
                    continue
                tensor = port.names[0]
                if tensor not in self.producer:
                    raise IrParseError(
                        f'node "{layer.label}" reads tensor {tensor!r}, which nothing produces',
                        Where(self.path),
                    )
                src = self.producer[tensor]
                assert layer.id is not None
                edges.append(Edge(src[0], src[1], layer.id, port.id, None))
        return tuple(edges)


QLINEAR_INPUTS = ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point")


def check_qlinear_inputs(layer: Layer, initializers: dict[str, Any]) -> None:
    """What onnxruntime checks when it loads a com.microsoft QLinearAveragePool (measured with
    onnxruntime 1.32; its type inference runs before any data): 4 or 5 inputs; no input listed
    as "" (the contrib schema calls the zero points optional, but its type inference reads every
    listed input and fails on an empty one); zero points of X's element type; float32 scales;
    scales and zero points of rank 0 where their shape is known."""
    where = layer.where()
    names = [p.names[0] if p.names else "" for p in layer.inputs]
    if not 4 <= len(names) <= 5:
        raise SpecError(
            f"QLinearAveragePool has {len(names)} inputs; expected 4 or 5 "
            f"({', '.join(QLINEAR_INPUTS)}; y_zero_point may be left out)",
            where,
        )
    kinds: list[tuple[str | None, tuple[int, ...] | None]] = []
    for port, name in zip(layer.inputs, names, strict=True):
        if name in initializers:
            array = initializers[name]
            kinds.append((element_type_of_numpy(array.dtype.name), tuple(array.shape)))
        else:
            kinds.append((port.element_type, port.dims))
    for k, name in enumerate(names[1:], start=1):
        what = QLINEAR_INPUTS[k]
        if not name:
            raise SpecError(
                f'QLinearAveragePool input {k} ({what}) is listed as "" (omitted): onnxruntime '
                "refuses to load the model ('[TypeInferenceError] Input data type does not "
                "match the expected data type'), although the contrib schema calls it optional; "
                "expected a scalar zero point of X's type there (0 for none); only a trailing "
                "y_zero_point can be left out, by giving 4 inputs",
                where,
            )
        et, dims = kinds[k]
        want = "f32" if what.endswith("scale") else kinds[0][0]
        if et is not None and want is not None and et != want:
            raise SpecError(
                f"QLinearAveragePool {what} is {et}; onnxruntime refuses it (scales are "
                f"float32, zero points have X's element type); expected {want}",
                where,
            )
        if dims is not None and len(dims) != 0:
            raise SpecError(
                f"QLinearAveragePool {what} has shape {list(dims)}; onnxruntime refuses it "
                "('Scale and Zero-point must be a scalar'); expected a rank-0 tensor",
                where,
            )


def load(path: str) -> Graph:
    """Read a `.onnx` file into a Graph."""
    return to_graph(read_model(path), path)
