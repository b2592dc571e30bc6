"""Write OpenVINO IR (v11, or v10 on request) deterministically, in the format openvino writes.

Layers get ids in the order they are added (add producers before consumers); integer lists are
written `"2, 2"`, ports carry legacy precision names (`FP32`), tensor names are escaped as
openvino escapes them, the attributes of known layer types come in the order openvino's
serializer visits them, constants go to a `.bin` beside the `.xml`.  The same builder always
produces the same bytes.  `save` writes the files atomically; `from_graph` rebuilds a net that
irpool's reader parsed, so that a file read and written again keeps its graph.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

import numpy as np

from ..files import atomic_open, check_output
from ..model import ELEMENT_BITS, ELEMENT_TYPES, PRECISIONS, format_shape

if TYPE_CHECKING:
    from ..model import Graph, Layer

_PRECISION_OF = {et: prec for prec, et in PRECISIONS.items()}
_NUMPY_OF = ELEMENT_TYPES


# The order in which openvino's serializer writes the <data> attributes of a layer type (its
# visit_attributes order, as in the files of fixtures/ir/ written by ov.save_model 2026.4.1).
# Attributes a version lacks are skipped; attributes not listed follow in the order given.
ATTRIBUTE_ORDER: Mapping[str, tuple[str, ...]] = {
    "avgpool": (
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "exclude-pad",
        "auto_pad",
        "rounding_type",
        "dilations",
    ),
    "maxpool": (
        "strides",
        "dilations",
        "pads_begin",
        "pads_end",
        "kernel",
        "rounding_type",
        "auto_pad",
        "index_element_type",
        "axis",
    ),
    "parameter": ("shape", "element_type"),
    "const": ("element_type", "shape", "offset", "size"),
    "convert": ("destination_type",),
}

_ESCAPES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def quote(value: str) -> str:
    """An attribute value in double quotes, escaped as openvino's writer (pugixml) does."""
    return '"' + escape(value, _ESCAPES) + '"'


def ordered_data(layer_type: str, data: Mapping[str, str]) -> dict[str, str]:
    """`data` in the attribute order openvino writes for this layer type."""
    order = ATTRIBUTE_ORDER.get(layer_type.lower(), ())
    known = {key: data[key] for key in order if key in data}
    known.update((key, value) for key, value in data.items() if key not in known)
    return known


def int_list(values: Iterable[int]) -> str:
    """An integer list as openvino writes it: `"2, 2"`."""
    return ", ".join(str(int(v)) for v in values)


def escape_names(names: Iterable[str]) -> str:
    return ",".join(n.replace(",", "\\,") for n in names)


@dataclass(frozen=True)
class Ref:
    """An output of a layer in the builder: layer index and output number."""

    layer: int
    output: int


@dataclass
class _Out:
    dims: tuple[int, ...] | None  # None: no <dim> at all (dynamic rank)
    element_type: str
    names: tuple[str, ...] = ()


@dataclass
class _Layer:
    name: str
    type: str
    version: str
    data: dict[str, str] | None
    inputs: list[Ref]
    outputs: list[_Out]
    extra: dict[str, str] = field(default_factory=dict)


class NetBuilder:
    """Builds one IR net; `xml()` and `bin()` give the files' contents, `save()` writes them."""

    def __init__(self, name: str = "irpool", ir_version: int = 11) -> None:
        if ir_version not in (10, 11):
            raise ValueError("ir_version must be 10 or 11")
        self.name = name
        self.ir_version = ir_version
        self._layers: list[_Layer] = []
        self._bin = bytearray()
        self._offsets: dict[bytes, int] = {}

    def dims(self, ref: Ref) -> tuple[int, ...] | None:
        return self._layers[ref.layer].outputs[ref.output].dims

    def element_type(self, ref: Ref) -> str:
        return self._layers[ref.layer].outputs[ref.output].element_type

    def parameter(self, name: str, shape: str | Sequence[int], element_type: str = "f32") -> Ref:
        """A Parameter; `shape` is a static list or openvino's text (`1,3,?,1..10`)."""
        if isinstance(shape, str):
            from ..model import parse_shape

            parsed = parse_shape(shape)
            text = shape.replace(" ", "")
            dims = None if parsed is None else tuple(d.declared() for d in parsed)
        else:
            dims = tuple(int(d) for d in shape)
            text = ",".join(str(d) if d >= 0 else "?" for d in dims)
        return self._add(
            _Layer(
                name,
                "Parameter",
                "opset1",
                {"shape": text, "element_type": element_type},
                [],
                [_Out(dims, element_type, (name,))],
            )
        )[0]

    def const(self, name: str, array: np.ndarray, element_type: str | None = None) -> Ref:
        """A Const whose bytes are appended to the .bin."""
        et = element_type or _element_type_of(array)
        if array.dtype.name == "bfloat16":
            array = array.view(np.uint16)
        return self.raw_const(name, et, array.shape, np.ascontiguousarray(array).tobytes())

    def raw_const(
        self,
        name: str,
        element_type: str,
        shape: Sequence[int],
        raw: bytes,
        names: Sequence[str] | None = None,
    ) -> Ref:
        """A Const given as its element type, shape and bytes (appended to the .bin)."""
        if len(raw) != const_size(element_type, shape):
            raise ValueError(
                f"Const {name!r}: {len(raw)} bytes for {element_type} {list(shape)}; expected "
                f"{const_size(element_type, shape)}"
            )
        # identical constants share their bytes in the .bin, as openvino's serializer does
        offset = self._offsets.get(raw, -1)
        if offset < 0:
            offset = self._offsets.setdefault(raw, len(self._bin))
            self._bin.extend(raw)
        data = {
            "element_type": element_type,
            "shape": int_list(shape),
            "offset": str(offset),
            "size": str(len(raw)),
        }
        tensor_names = (name,) if names is None else tuple(names)
        dims = tuple(int(d) for d in shape)
        return self._add(
            _Layer(name, "Const", "opset1", data, [], [_Out(dims, element_type, tensor_names)])
        )[0]

    def op(
        self,
        type: str,
        version: str,
        name: str,
        data: Mapping[str, str] | None,
        inputs: Sequence[Ref],
        outputs: Sequence[tuple[Sequence[int] | None, str]],
        names: Sequence[Sequence[str]] | None = None,
    ) -> list[Ref]:
        """Any layer: its data attributes, inputs, output dims/types and tensor names.

        The attributes of the types in ATTRIBUTE_ORDER are written in openvino's order, others
        in the order given."""
        outs = [
            _Out(
                None if dims is None else tuple(int(d) for d in dims),
                et,
                tuple(names[i]) if names else (),
            )
            for i, (dims, et) in enumerate(outputs)
        ]
        return self._add(
            _Layer(
                name,
                type,
                version,
                ordered_data(type, data) if data is not None else None,
                list(inputs),
                outs,
            )
        )

    def copy(
        self,
        layer: Layer,
        name: str,
        inputs: Sequence[Ref],
        outputs: Sequence[tuple[Sequence[int] | None, str]],
        names: Sequence[Sequence[str]] | None = None,
    ) -> list[Ref]:
        """A layer read from an IR, written again as it was (type, version, data)."""
        return self.op(
            layer.type,
            layer.version or "opset1",
            name,
            dict(layer.data) or None,
            inputs,
            outputs,
            names,
        )

    def result(self, name: str, ref: Ref, output_names: Sequence[str] | None = None) -> None:
        """A Result; IR v11 records its tensor names in `output_names`: by default, as openvino
        writes them, the names of the tensor it receives, or its own name if that has none."""
        if output_names is None:
            output_names = self._layers[ref.layer].outputs[ref.output].names or (name,)
        names = tuple(output_names)
        extra = {"output_names": escape_names(names)} if self.ir_version == 11 and names else {}
        self._add(_Layer(name, "Result", "opset1", None, [ref], [], extra))

    def _add(self, layer: _Layer) -> list[Ref]:
        self._layers.append(layer)
        index = len(self._layers) - 1
        return [Ref(index, k) for k in range(len(layer.outputs))]

    def bin(self) -> bytes:
        return bytes(self._bin)

    def save(self, xml_path: str, force: bool = False) -> list[str]:
        """Write the .xml, and the .bin beside it when the net has constants, each through a
        temporary file renamed into place; returns the paths written.

        Refuses (OutputError) a path that exists unless `force`, and a missing folder.  When
        either file cannot be written, neither is replaced.
        """
        bin_path = os.path.splitext(xml_path)[0] + ".bin"
        if bin_path == xml_path:
            raise ValueError(f"{xml_path}: expected a file name ending in .xml")
        paths = [xml_path] + ([bin_path] if self._bin else [])
        for path in paths:
            check_output(path, force)
        text = self.xml().encode("utf-8")
        with contextlib.ExitStack() as stack:
            xml_handle = stack.enter_context(atomic_open(xml_path))
            if self._bin:
                # entered last, renamed first: the .xml never names constants a missing .bin holds
                stack.enter_context(atomic_open(bin_path)).write(bytes(self._bin))
            xml_handle.write(text)
        return paths

    @staticmethod
    def from_graph(graph: Graph, weights: bytes | None = None) -> NetBuilder:
        """A builder holding the net irpool's reader parsed: the same layers, attributes, ports,
        tensor names and edges (layer ids renumbered in file order, port ids as openvino numbers
        them).  Const bytes come from `weights`, else from the .bin beside the graph's file."""
        from ..errors import IrParseError

        if graph.fragment or graph.ir_version not in (10, 11):
            raise IrParseError(f"{graph.path} holds layer fragments; expected a full net")
        net = NetBuilder(graph.name or "irpool", graph.ir_version)
        refs: dict[tuple[int, int], Ref] = {}
        loaded: list[bytes] = [] if weights is None else [weights]
        for layer in graph.topological():
            assert layer.id is not None
            inputs: list[Ref] = []
            for port in layer.inputs:
                edge = graph.producer(layer.id, port.id)
                assert edge is not None
                inputs.append(refs[(edge.from_layer, edge.from_port)])
            kind = layer.type.lower()
            name = layer.name or layer.label
            made: list[Ref]
            if kind == "parameter":
                et = layer.data.get("element_type", "f32").strip()
                made = [net.parameter(name, layer.data.get("shape", ""), et)]
                if layer.outputs:
                    net._layers[made[0].layer].outputs[0].names = layer.outputs[0].names
            elif kind in ("const", "constant"):
                from .ir_xml import const_layout

                et, shape, offset, _ = const_layout(graph, layer)
                if not loaded:
                    assert graph.weights_path is not None
                    with open(graph.weights_path, "rb") as handle:
                        loaded.append(handle.read())
                raw = loaded[0][offset : offset + const_size(et, shape)]
                names = layer.outputs[0].names if layer.outputs else ()
                made = [net.raw_const(name, et, shape, raw, names)]
            elif kind == "result":
                net.result(name, inputs[0])
                made = []
            else:
                made = net.copy(
                    layer,
                    name,
                    inputs,
                    [(p.dims, p.element_type or "f32") for p in layer.outputs],
                    [p.names for p in layer.outputs],
                )
            for port, ref in zip(layer.outputs, made, strict=True):
                refs[(layer.id, port.id)] = ref
        return net

    def xml(self) -> str:
        lines = [
            '<?xml version="1.0"?>',
            f'<net name={quote(self.name)} version="{self.ir_version}">',
            "\t<layers>",
        ]
        for lid, layer in enumerate(self._layers):
            attrs = (
                f'id="{lid}" name={quote(layer.name)} type={quote(layer.type)} '
                f"version={quote(layer.version)}"
            )
            for key, value in layer.extra.items():
                attrs += f" {key}={quote(value)}"
            lines.append(f"\t\t<layer {attrs}>")
            if layer.data is not None:
                data = " ".join(f"{key}={quote(v)}" for key, v in layer.data.items())
                lines.append(f"\t\t\t<data {data} />" if data else "\t\t\t<data />")
            if layer.inputs:
                lines.append("\t\t\t<input>")
                for port, ref in enumerate(layer.inputs):
                    src = self._layers[ref.layer].outputs[ref.output]
                    lines.extend(_port(port, src.element_type, src.dims, (), "\t\t\t\t"))
                lines.append("\t\t\t</input>")
            if layer.outputs:
                lines.append("\t\t\t<output>")
                first = len(layer.inputs)
                for k, out in enumerate(layer.outputs):
                    lines.extend(
                        _port(first + k, out.element_type, out.dims, out.names, "\t\t\t\t")
                    )
                lines.append("\t\t\t</output>")
            lines.append("\t\t</layer>")
        lines.append("\t</layers>")
        lines.append("\t<edges>")
        edges = []
        for lid, layer in enumerate(self._layers):
            for port, ref in enumerate(layer.inputs):
                src_port = len(self._layers[ref.layer].inputs) + ref.output
                edges.append((ref.layer, src_port, lid, port))
        for fl, fp, tl, tp in sorted(edges):
            lines.append(
                f'\t\t<edge from-layer="{fl}" from-port="{fp}" to-layer="{tl}" to-port="{tp}" />'
            )
        lines.append("\t</edges>")
        lines.append("</net>")
        return "\n".join(lines) + "\n"


def _port(
    port_id: int, et: str, dims: Sequence[int] | None, names: Sequence[str], indent: str
) -> list[str]:
    prec = _PRECISION_OF.get(et, et.upper())
    name_attr = f" names={quote(escape_names(names))}" if names else ""
    if not dims:
        return [f'{indent}<port id="{port_id}" precision="{prec}"{name_attr} />']
    out = [f'{indent}<port id="{port_id}" precision="{prec}"{name_attr}>']
    out.extend(f"{indent}\t<dim>{int(d)}</dim>" for d in dims)
    out.append(f"{indent}</port>")
    return out


def _element_type_of(array: np.ndarray) -> str:
    for et, name in _NUMPY_OF.items():
        if array.dtype.name == name:
            return et
    raise ValueError(f"no IR element type for numpy dtype {array.dtype}")


def numpy_dtype_name(element_type: str) -> str:
    return _NUMPY_OF[element_type]


def const_size(element_type: str, shape: Sequence[int]) -> int:
    """Bytes a Const of this type and shape needs."""
    bits = ELEMENT_BITS[element_type]
    return math.ceil(math.prod(shape) * bits / 8)


__all__ = [
    "ATTRIBUTE_ORDER",
    "NetBuilder",
    "Ref",
    "const_size",
    "format_shape",
    "int_list",
    "numpy_dtype_name",
    "ordered_data",
    "quote",
]
