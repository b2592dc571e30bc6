"""OpenVINO IR (`model.xml`) and pasted `<layer>` fragments -> Graph.

The parser is hardened: no DTD is loaded, no entity is resolved, nothing is fetched, a DOCTYPE is
refused before parsing, libxml2's size limits stay on.  The reader has no per-op knowledge: it
records layers, attribute strings, ports and edges with their lines and checks the structural
rules of an IR (see docs/security.md and docs/cli.md).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import etree

from ..errors import IrParseError, IrpoolError, Where
from ..model import (
    ELEMENT_BITS,
    INT64_MAX,
    OTHER_TYPES,
    Edge,
    Graph,
    Layer,
    Port,
    check_no_cycle,
    ir_element_type,
    normalize_element_type,
    numpy_dtype,
    parse_int,
)
from .safe_io import (
    decode_xml,
    encoding_note,
    max_xml_bytes,
    read_range,
    read_regular_file,
    refuse_compressed,
    regular_file_size,
)

_WRAPPER = "irpool-fragments"


def _parser() -> etree.XMLParser:
    # collect_ids stays at its default: with lxml 6.1 / libxml2 2.14, collect_ids=False makes
    # libxml2 read an external DTD named by the document even with load_dtd=False.
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=False,
        remove_pis=False,
        strip_cdata=True,
    )


def load(path: str) -> Graph:
    """Read an IR file (a `<net>` of version 10 or 11, or `<layer>` fragments) into a Graph."""
    data = read_regular_file(path, max_xml_bytes())
    refuse_compressed(data, path)
    text = decode_xml(data, path)
    graph = parse_text(text, path)
    note = encoding_note(data)
    return graph if note is None else replace(graph, reading_notes=(note,))


def parse_text(text: str, path: str = "<string>", weights: bytes | None = None) -> Graph:
    """Parse the decoded text of an IR file; `path` names it in messages; `weights` are the
    bytes of its .bin when they are not in a file beside it."""
    text = _blank_declaration(text)
    root_name, root_line = _scan_prolog(text, path)
    if root_name == "net":
        root = _parse_xml(text, path)
        return _read_net(root, path, weights)
    if root_name == "layer":
        cleaned = _drop_placeholders(text)
        root = _parse_xml(f"<{_WRAPPER}>{cleaned}</{_WRAPPER}>", path)
        return _read_fragments(root, path)
    raise IrParseError(
        f"root element is <{root_name}>; expected a <net> root (an OpenVINO IR) "
        "or <layer> fragments",
        Where(file=path, line=root_line),
    )


def _blank_declaration(text: str) -> str:
    """Replace the XML declaration by spaces (lxml refuses it in decoded text; lines stay)."""
    if text.startswith("<?xml"):
        end = text.find("?>")
        if end != -1:
            decl = text[: end + 2]
            return re.sub(r"[^\n]", " ", decl) + text[end + 2 :]
    return text


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


_XML_SPACE = " \t\r\n"
_SPACE_RUN = re.compile(r"[ \t\r\n]+")
_ELEMENT_NAME = re.compile(r"<([A-Za-z_][\w.:-]*)")


def _scan_prolog(text: str, path: str) -> tuple[str, int]:
    """The name and line of the first element; refuses a DOCTYPE before anything is parsed."""
    i, n = 0, len(text)
    while i < n:
        if text[i] in _XML_SPACE:
            # one regex step over a run of whitespace (a character loop takes seconds on the
            # megabytes of blank lines a hostile file can start with)
            space = _SPACE_RUN.match(text, i)
            i = space.end() if space else i + 1
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end == -1:
                raise IrParseError("unterminated comment", Where(path, _line_at(text, i)))
            i = end + 3
        elif text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end == -1:
                raise IrParseError(
                    "unterminated processing instruction", Where(path, _line_at(text, i))
                )
            i = end + 2
        elif text.startswith("<!", i):
            kind = "DOCTYPE" if text[i : i + 9].upper() == "<!DOCTYPE" else "declaration"
            raise IrParseError(
                f"the file has a {kind} (DTD) block; an IR never has one, and irpool does not "
                "load DTDs or expand entities; remove it",
                Where(path, _line_at(text, i)),
            )
        elif text[i] == "<":
            m = _ELEMENT_NAME.match(text, i)
            if not m:
                break
            return m.group(1), _line_at(text, i)
        else:
            break
    if i >= n:
        raise IrParseError("file has no XML element; expected a <net> root", Where(path, 1))
    raise IrParseError(
        "text before the first element; expected an XML document with a <net> root",
        Where(path, _line_at(text, i)),
    )


_TAG = re.compile(r"<[A-Za-z_][^<>]*>")


def _drop_placeholders(text: str) -> str:
    """Blank the `...` placeholders the docs write in tags: `<layer ... type="AvgPool" ...>`."""

    def clean(m: re.Match[str]) -> str:
        tag = m.group(0)
        out: list[str] = []
        quote: str | None = None
        i = 0
        while i < len(tag):
            c = tag[i]
            if quote is not None:
                if c == quote:
                    quote = None
                out.append(c)
                i += 1
            elif c in "\"'":
                quote = c
                out.append(c)
                i += 1
            elif tag.startswith("...", i):
                j = i
                while j < len(tag) and tag[j] == ".":
                    j += 1
                out.append(" " * (j - i))
                i = j
            else:
                out.append(c)
                i += 1
        return "".join(out)

    return _TAG.sub(clean, text)


def _parse_xml(text: str, path: str) -> etree._Element:
    try:
        return etree.fromstring(text, _parser())
    except etree.XMLSyntaxError as e:
        msg = str(e.msg if getattr(e, "msg", None) else e)
        msg = re.sub(r",? line \d+, column \d+$", "", msg).strip()
        if "huge" in msg.lower() or "depth" in msg.lower() or "too long" in msg.lower():
            msg += " (irpool keeps libxml2's size limits on)"
        line = e.lineno if e.lineno and e.lineno > 0 else None
        raise IrParseError(f"XML syntax error: {msg}", Where(path, line)) from None
    except (ValueError, MemoryError) as e:
        raise IrParseError(f"cannot parse XML: {e}", Where(path)) from None


def _line(el: etree._Element) -> int | None:
    line = el.sourceline
    return line if isinstance(line, int) else None


def _elements(parent: etree._Element) -> Iterable[etree._Element]:
    """Child elements, skipping comments, processing instructions and entities."""
    for child in parent:
        if isinstance(child.tag, str):
            yield child


def _text(el: etree._Element) -> str:
    return "".join(str(t) for t in el.itertext())


def _int_attr(
    el: etree._Element, key: str, path: str, what: str, where: Where, minimum: int = 0
) -> int:
    raw = el.get(key)
    if raw is None:
        raise IrParseError(f"{what} has no {key!r} attribute; expected an integer", where)
    value = parse_int(raw)
    if value is None or value < minimum or value > INT64_MAX:
        raise IrParseError(f"{what} has {key}={raw!r}; expected an integer >= {minimum}", where)
    return value


def _read_net(root: etree._Element, path: str, data: bytes | None = None) -> Graph:
    where = Where(path, _line(root))
    raw_version = root.get("version")
    version = parse_int(raw_version) if raw_version is not None else None
    if version not in (10, 11):
        shown = f'version="{raw_version}"' if raw_version is not None else "no version attribute"
        raise IrParseError(f"<net> has {shown}; expected IR version 10 or 11", where)
    layers_el = [c for c in _elements(root) if c.tag == "layers"]
    if not layers_el:
        raise IrParseError("<net> has no <layers> element; expected one", where)
    if len(layers_el) > 1:
        raise IrParseError(
            "<net> has several <layers> elements; expected one", Where(path, _line(layers_el[1]))
        )
    layers: list[Layer] = []
    seen: dict[int, Layer] = {}
    for index, el in enumerate(_elements(layers_el[0])):
        if el.tag != "layer":
            raise IrParseError(
                f"unexpected <{el.tag}> inside <layers>; expected <layer>",
                Where(path, _line(el)),
            )
        layer = _read_layer(el, path, index, fragment=False)
        assert layer.id is not None
        if layer.id in seen:
            raise IrParseError(
                f"layer id {layer.id} is used twice (also at line {seen[layer.id].line}); "
                "expected unique ids",
                layer.where(),
            )
        seen[layer.id] = layer
        layers.append(layer)
    edges = _read_edges(root, path, seen)
    weights = os.path.splitext(path)[0] + ".bin"
    graph = Graph(
        path=path,
        layers=tuple(layers),
        edges=tuple(edges),
        ir_version=version,
        name=root.get("name"),
        weights_path=weights,
        weights=None if data is None else bytes(data),
        conversion=_conversion_parameters(root),
    )
    _check_connected(graph)
    check_no_cycle(graph)
    for layer in graph.layers:
        if layer.type.lower() in ("const", "constant"):
            const_layout(graph, layer)
    return graph


def _conversion_parameters(root: etree._Element) -> dict[str, str]:
    """<rt_info><conversion_parameters><NAME value="..."/> of the net, by NAME."""
    found: dict[str, str] = {}
    for info in (c for c in _elements(root) if c.tag == "rt_info"):
        for group in (c for c in _elements(info) if c.tag == "conversion_parameters"):
            for item in _elements(group):
                found[str(item.tag)] = item.get("value") or ""
    return found


def _read_fragments(root: etree._Element, path: str) -> Graph:
    layers: list[Layer] = []
    for index, el in enumerate(_elements(root)):
        if el.tag != "layer":
            raise IrParseError(
                f"unexpected <{el.tag}> between layer fragments; expected only <layer> elements",
                Where(path, _line(el)),
            )
        layers.append(_read_layer(el, path, index, fragment=True))
    return Graph(path=path, layers=tuple(layers), edges=(), ir_version=None, fragment=True)


def _read_layer(el: etree._Element, path: str, index: int, fragment: bool) -> Layer:
    line = _line(el)
    name = el.get("name")
    ltype = el.get("type")
    version = el.get("version")
    raw_id = el.get("id")
    partial = Where(
        path, line, layer=name or f"#{index + 1}", op=ltype, version=version, layer_id=raw_id
    )
    layer_id: int | None = None
    if raw_id is not None or not fragment:
        layer_id = _int_attr(el, "id", path, "layer", partial)
    if ltype is None or not ltype.strip():
        raise IrParseError("layer has no 'type' attribute; expected one such as AvgPool", partial)
    if version is None and not fragment:
        raise IrParseError(
            "layer has no 'version' attribute; expected an opset name such as opset1", partial
        )
    data: dict[str, str] = {}
    inputs: tuple[Port, ...] = ()
    outputs: tuple[Port, ...] = ()
    seen_sections: set[str] = set()
    for child in _elements(el):
        tag = child.tag
        if tag in ("data", "input", "output"):
            if tag in seen_sections:
                raise IrParseError(
                    f"layer has several <{tag}> elements; expected at most one",
                    Where(path, _line(child)).merged(partial),
                )
            seen_sections.add(tag)
        if tag == "data":
            data = {str(k): str(v) for k, v in child.attrib.items()}
        elif tag in ("input", "output"):
            ports = tuple(_read_port(p, path, partial) for p in _elements(child) if p.tag == "port")
            ids = [p.id for p in ports]
            dup = next((i for i in ids if ids.count(i) > 1), None)
            if dup is not None:
                raise IrParseError(
                    f"port id {dup} appears twice in <{tag}>; expected unique port ids",
                    Where(path, _line(child)).merged(partial),
                )
            if tag == "input":
                inputs = ports
            else:
                outputs = ports
    in_ids = {p.id for p in inputs}
    clash = next((p.id for p in outputs if p.id in in_ids), None)
    if clash is not None:
        raise IrParseError(
            f"port id {clash} is both an input and an output; expected distinct port ids",
            partial,
        )
    return Layer(
        id=layer_id,
        name=name,
        type=ltype.strip(),
        version=version.strip() if version is not None else None,
        data=data,
        inputs=inputs,
        outputs=outputs,
        file=path,
        line=line,
        index=index,
    )


def split_names(raw: str) -> tuple[str, ...]:
    """Tensor names of a port: comma-separated, a literal comma escaped as `\\,`."""
    names: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] == ",":
            cur.append(",")
            i += 2
            continue
        if c == ",":
            names.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    names.append("".join(cur).strip())
    return tuple(n for n in names if n)


def _read_port(el: etree._Element, path: str, layer_where: Where) -> Port:
    where = Where(path, _line(el)).merged(layer_where)
    port_id = _int_attr(el, "id", path, "port", where)
    et: str | None = None
    for key in ("element_type", "precision"):
        raw = el.get(key)
        if raw is not None:
            et = normalize_element_type(raw)
            if et is None:
                known = ", ".join((*ELEMENT_BITS, *OTHER_TYPES))
                raise IrParseError(
                    f"port {port_id} has {key}={raw!r}; expected one of {known} "
                    "(or FP32, FP16, I64, U8, ...)",
                    where,
                )
            break
    dims: list[int] = []
    dim_lines: list[int | None] = []
    has_dims = False
    for d in _elements(el):
        if d.tag != "dim":
            continue
        has_dims = True
        if any(True for _ in _elements(d)):
            raise IrParseError(
                f"port {port_id}: <dim> holds an element; expected an integer",
                Where(path, _line(d)).merged(layer_where),
            )
        raw = _text(d)
        value = parse_int(raw)
        if value is None or value < -1 or value > INT64_MAX:
            raise IrParseError(
                f"port {port_id}: <dim>{raw.strip()}</dim> is not a dimension; "
                "expected an integer >= -1 (-1 = dynamic)",
                Where(path, _line(d)).merged(layer_where),
            )
        dims.append(value)
        dim_lines.append(_line(d))
    names_raw = el.get("names")
    return Port(
        id=port_id,
        element_type=et,
        names=split_names(names_raw) if names_raw else (),
        dims=tuple(dims) if has_dims else None,
        line=_line(el),
        dim_lines=tuple(dim_lines),
    )


def _read_edges(root: etree._Element, path: str, layers: dict[int, Layer]) -> list[Edge]:
    edges_el = [c for c in _elements(root) if c.tag == "edges"]
    if len(edges_el) > 1:
        raise IrParseError(
            "<net> has several <edges> elements; expected one", Where(path, _line(edges_el[1]))
        )
    if not edges_el:
        return []
    edges: list[Edge] = []
    fed: dict[tuple[int, int], int | None] = {}
    for el in _elements(edges_el[0]):
        where = Where(path, _line(el))
        if el.tag != "edge":
            raise IrParseError(f"unexpected <{el.tag}> inside <edges>; expected <edge>", where)
        fl = _int_attr(el, "from-layer", path, "edge", where)
        fp = _int_attr(el, "from-port", path, "edge", where)
        tl = _int_attr(el, "to-layer", path, "edge", where)
        tp = _int_attr(el, "to-port", path, "edge", where)
        for lid in (fl, tl):
            if lid not in layers:
                raise IrParseError(f"edge names layer id {lid}, which does not exist", where)
        dst = layers[tl]
        _check_edge_port("leaves", layers[fl], fp, "output", where)
        _check_edge_port("enters", dst, tp, "input", where)
        if (tl, tp) in fed:
            raise IrParseError(
                f'input port {tp} of layer "{dst.label}" (id={tl}) has a second incoming edge '
                f"(first at line {fed[(tl, tp)]}); expected at most one",
                where,
            )
        fed[(tl, tp)] = _line(el)
        edges.append(Edge(fl, fp, tl, tp, _line(el)))
    return edges


def _check_edge_port(verb: str, layer: Layer, port: int, kind: str, where: Where) -> None:
    """Refuse an edge that `verb`s (leaves, enters) a port the layer does not have."""
    ports = layer.outputs if kind == "output" else layer.inputs
    if all(p.id != port for p in ports):
        ids = ", ".join(str(p.id) for p in ports) or "none"
        raise IrParseError(
            f'edge {verb} port {port} of layer "{layer.label}" (id={layer.id}), which has no '
            f"such {kind} port; its {kind} ports: {ids}",
            where,
        )


def _check_connected(graph: Graph) -> None:
    fed = {(e.to_layer, e.to_port) for e in graph.edges}
    for layer in graph.layers:
        for port in layer.inputs:
            if (layer.id, port.id) not in fed:
                raise IrParseError(
                    f"input port {port.id} has no incoming edge; expected every input of a "
                    "net to be connected",
                    layer.where(port.line),
                )


CONST_BITS = ELEMENT_BITS


def const_layout(graph: Graph, layer: Layer) -> tuple[str, tuple[int, ...], int, int]:
    """(element_type, shape, offset, size) of a Const, checked against its attributes and the
    .bin beside the .xml: the bytes exist and `size` matches the type and shape."""
    where = layer.where()
    data = layer.data
    raw_et = data.get("element_type") or ""
    et = ir_element_type(raw_et) or raw_et  # openvino's reading: any ASCII case, no spaces
    if et not in CONST_BITS:
        raise IrParseError(
            f'Const element_type "{raw_et}" is not one irpool reads; expected one of '
            f"{', '.join(CONST_BITS)} (any letter case, no spaces)",
            where,
        )
    raw_shape = data.get("shape", "")
    shape: list[int] = []
    for part in raw_shape.split(",") if raw_shape.strip() else []:
        value = parse_int(part)
        if value is None or value < 0:
            raise IrParseError(f'Const shape="{raw_shape}" is not a list of sizes >= 0', where)
        shape.append(value)
    fields = {}
    for key in ("offset", "size"):
        value = parse_int(data.get(key, ""))
        if value is None or value < 0:
            raise IrParseError(
                f'Const {key}="{data.get(key, "")}" is missing or negative; expected bytes >= 0',
                where,
            )
        fields[key] = value
    count = 1
    for d in shape:
        count *= d
    needed = -(-count * CONST_BITS[et] // 8)
    if fields["size"] != needed:
        raise IrParseError(
            f"Const size={fields['size']} does not match {et} {shape}: expected {needed} bytes",
            where,
        )
    bin_path = graph.weights_path
    if graph.weights is not None:
        if fields["offset"] + fields["size"] > len(graph.weights):
            raise IrParseError(
                f"Const reads bytes {fields['offset']}..{fields['offset'] + fields['size']} but "
                f"the weights have {len(graph.weights)} bytes",
                where,
            )
        return et, tuple(shape), fields["offset"], fields["size"]
    if not bin_path or not os.path.lexists(bin_path):
        raise IrParseError(
            f"Const needs weights, but {bin_path} does not exist beside the .xml", where
        )
    try:
        bin_size = regular_file_size(bin_path, "weights")
    except IrpoolError as e:
        raise IrParseError(f"Const needs weights, but {e.message}", where) from None
    if fields["offset"] + fields["size"] > bin_size:
        raise IrParseError(
            f"Const reads bytes {fields['offset']}..{fields['offset'] + fields['size']} but "
            f"{os.path.basename(bin_path or '')} has {bin_size} bytes",
            where,
        )
    return et, tuple(shape), fields["offset"], fields["size"]


def read_const(graph: Graph, layer: Layer) -> npt.NDArray[Any]:
    """A Const's value from the .bin beside the .xml (offset, size and type checked)."""
    et, shape, offset, size = const_layout(graph, layer)
    dtype = numpy_dtype(et, layer.where())
    if graph.weights is not None:
        data = graph.weights[offset : offset + size]
    else:
        assert graph.weights_path is not None
        try:
            data = read_range(graph.weights_path, offset, size, "weights")
        except IrpoolError as e:
            raise e.at(layer.where()) from None
    count = math.prod(shape)
    values: npt.NDArray[Any] = np.frombuffer(data[: count * dtype.itemsize], dtype=dtype)
    return np.asarray(values.reshape(shape).copy())
