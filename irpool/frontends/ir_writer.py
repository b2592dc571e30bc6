"""Write OpenVINO IR (v11, or v10 on request) deterministically, in the format openvino writes.

Layers get ids in the order they are added (add producers before consumers); integer lists are
written `"2, 2"`, ports carry legacy precision names (`FP32`), tensor names are escaped as
openvino escapes them, constants go to a `.bin` beside the `.xml`.  The same builder always
produces the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

import numpy as np

from ..model import PRECISIONS, format_shape

_PRECISION_OF = {et: prec for prec, et in PRECISIONS.items()}
_NUMPY_OF = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u64": "uint64",
    "u32": "uint32",
    "u16": "uint16",
    "u8": "uint8",
    "boolean": "bool",
}


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
    """Builds one IR net; `xml()` and `bin()` give the files' contents."""

    def __init__(self, name: str = "irpool", ir_version: int = 11) -> None:
        if ir_version not in (10, 11):
            raise ValueError("ir_version must be 10 or 11")
        self.name = name
        self.ir_version = ir_version
        self._layers: list[_Layer] = []
        self._bin = bytearray()

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
        raw = np.ascontiguousarray(array).tobytes()
        offset = len(self._bin)
        self._bin.extend(raw)
        data = {
            "element_type": et,
            "shape": int_list(array.shape),
            "offset": str(offset),
            "size": str(len(raw)),
        }
        return self._add(
            _Layer(name, "Const", "opset1", data, [], [_Out(tuple(array.shape), et, (name,))])
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
        """Any layer: its data attributes (in the order given), inputs and output dims/types."""
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
                name, type, version, dict(data) if data is not None else None, list(inputs), outs
            )
        )

    def result(self, name: str, ref: Ref) -> None:
        extra = {"output_names": name} if self.ir_version == 11 else {}
        self._add(_Layer(name, "Result", "opset1", None, [ref], [], extra))

    def _add(self, layer: _Layer) -> list[Ref]:
        self._layers.append(layer)
        index = len(self._layers) - 1
        return [Ref(index, k) for k in range(len(layer.outputs))]

    def bin(self) -> bytes:
        return bytes(self._bin)

    def xml(self) -> str:
        lines = [
            '<?xml version="1.0"?>',
            f'<net name={quoteattr(self.name)} version="{self.ir_version}">',
            "\t<layers>",
        ]
        for lid, layer in enumerate(self._layers):
            attrs = (
                f'id="{lid}" name={quoteattr(layer.name)} type="{layer.type}" '
                f'version="{layer.version}"'
            )
            for key, value in layer.extra.items():
                attrs += f" {key}={quoteattr(value)}"
            lines.append(f"\t\t<layer {attrs}>")
            if layer.data is not None:
                data = " ".join(f"{key}={quoteattr(v)}" for key, v in layer.data.items())
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
    name_attr = f" names={quoteattr(escape_names(names))}" if names else ""
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
    bits = {
        "f64": 64,
        "i64": 64,
        "u64": 64,
        "f32": 32,
        "i32": 32,
        "u32": 32,
        "f16": 16,
        "bf16": 16,
        "i16": 16,
        "u16": 16,
        "i8": 8,
        "u8": 8,
        "boolean": 8,
    }[element_type]
    return math.ceil(math.prod(shape) * bits / 8)


__all__ = ["NetBuilder", "Ref", "const_size", "format_shape", "int_list", "numpy_dtype_name"]
