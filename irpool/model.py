"""The front-end independent model: dims as intervals, ports, layers, edges, graphs.

Nothing here knows about lxml or onnx objects; every object keeps the file and line it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from .errors import InputError, IrParseError, Where

INT64_MAX = 2**63 - 1
T = TypeVar("T")


@dataclass(frozen=True)
class Dim:
    """A dimension as an interval [lo, hi]; hi None means unbounded; static when lo == hi."""

    lo: int
    hi: int | None

    @staticmethod
    def of(n: int) -> Dim:
        return Dim(n, n)

    @staticmethod
    def dynamic() -> Dim:
        return Dim(0, None)

    @property
    def is_static(self) -> bool:
        return self.hi is not None and self.lo == self.hi

    def contains(self, n: int) -> bool:
        return n >= self.lo and (self.hi is None or n <= self.hi)

    @property
    def value(self) -> int:
        """The size of a static dim."""
        if self.hi is None or self.lo != self.hi:
            raise ValueError(f"dim {self} is not static")
        return self.lo

    def __str__(self) -> str:
        if self.is_static:
            return str(self.lo)
        if self.hi is None:
            return "?" if self.lo == 0 else f"{self.lo}.."
        return f"..{self.hi}" if self.lo == 0 else f"{self.lo}..{self.hi}"

    def declared(self) -> int:
        """How openvino writes this dim in a port: its size, or -1 when not static."""
        return self.lo if self.is_static else -1


Shape = tuple[Dim, ...]
"""A shape of known rank; a dynamic rank is represented by None where it may occur."""


def shape_of(dims: Sequence[int]) -> Shape:
    """A static shape, with -1 read as a fully dynamic dim (as in IR port dims)."""
    return tuple(Dim.dynamic() if d == -1 else Dim.of(d) for d in dims)


def format_shape(shape: Shape | None) -> str:
    """A shape as every report writes it: `[1,3,?,1..40]` (`[...]` for a dynamic rank)."""
    if shape is None:
        return "[...]"
    return "[" + ",".join(str(d) for d in shape) + "]"


def dims_text(dims: Sequence[int]) -> str:
    """The shape of an actual array, written as format_shape writes shapes: `[1,3,32,32]`."""
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


_INT = re.compile(r"^[+-]?[0-9]+$")


def parse_int(text: str) -> int | None:
    """An integer written in decimal with optional sign and surrounding spaces, else None."""
    text = text.strip()
    if not _INT.match(text):
        return None
    return int(text)


def parse_dim(text: str) -> Dim:
    """A dim of a Parameter `shape` attribute: `5`, `?`, `-1`, `a..b`, `..b`, `a..`.

    Raises ValueError with a short reason.
    """
    t = text.strip()
    if t in ("?", "-1"):
        return Dim.dynamic()
    if ".." in t:
        lo_s, _, hi_s = t.partition("..")
        lo = parse_int(lo_s) if lo_s.strip() else 0
        hi = parse_int(hi_s) if hi_s.strip() else None
        if lo is None or (hi_s.strip() and hi is None):
            raise ValueError(f"{text!r} is not an interval a..b")
        if lo < 0 or (hi is not None and (hi < lo or hi > INT64_MAX)):
            raise ValueError(f"{text!r} is not an interval with 0 <= a <= b")
        return Dim(lo, hi)
    n = parse_int(t)
    if n is None or n < -1 or n > INT64_MAX:
        raise ValueError(f"{text!r} is not a dimension (an integer >= -1, '?', or 'a..b')")
    return Dim.of(n)


def parse_shape(text: str) -> Shape | None:
    """A Parameter `shape` attribute: dims split by commas, `[...]` allowed, `...` = any rank."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1].strip()
    if t == "...":
        return None
    if t == "":
        return ()
    return tuple(parse_dim(p) for p in t.split(","))


# Element types.  ELEMENT_BITS: every type an IR may name, with its width in bits (a Const of
# it needs ceil(count * bits / 8) bytes); ELEMENT_TYPES: those numpy can hold, and as what.
ELEMENT_BITS: Mapping[str, int] = {
    "f64": 64,
    "f32": 32,
    "f16": 16,
    "bf16": 16,
    "i64": 64,
    "i32": 32,
    "i16": 16,
    "i8": 8,
    "u64": 64,
    "u32": 32,
    "u16": 16,
    "u8": 8,
    "boolean": 8,
    "i4": 4,
    "u4": 4,
    "nf4": 4,
    "u1": 1,
    "u2": 2,
    "u3": 3,
    "u6": 6,
    "f8e4m3": 8,
    "f8e5m2": 8,
    "f8e8m0": 8,
    "f4e2m1": 4,
}
ELEMENT_TYPES: Mapping[str, str] = {
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
OTHER_TYPES = ("string", "dynamic")
"""Types a port may name that have no fixed width."""

# legacy port precisions: the short name in capitals (FP32 for the float types, BOOL)
PRECISIONS: Mapping[str, str] = {
    **{et.upper(): et for et in ELEMENT_BITS if not et.startswith("f")},
    **{f"FP{et[1:]}": et for et in ("f64", "f32", "f16")},
    **{et.upper(): et for et in ELEMENT_BITS if et.startswith("f") and len(et) > 3},
    "BF16": "bf16",
    "BOOL": "boolean",
}
_NUMPY_TO_ET = {v: k for k, v in ELEMENT_TYPES.items()}


def normalize_element_type(text: str) -> str | None:
    """The IR short name (`f32`) for an element_type or precision spelling, or None if unknown."""
    t = text.strip()
    if t in ELEMENT_BITS or t in OTHER_TYPES:
        return t
    if t.upper() in PRECISIONS:
        return PRECISIONS[t.upper()]
    if t.lower() in ELEMENT_BITS or t.lower() in OTHER_TYPES:
        return t.lower()
    if t.lower() == "bool":
        return "boolean"
    return None


ELEMENT_TYPE_NAMES = (
    "undefined",
    "dynamic",
    "boolean",
    "bf16",
    "f16",
    "f32",
    "f64",
    "i4",
    "i8",
    "i16",
    "i32",
    "i64",
    "u1",
    "u2",
    "u3",
    "u4",
    "u6",
    "u8",
    "u16",
    "u32",
    "u64",
    "nf4",
    "f8e4m3",
    "f8e5m2",
    "string",
    "f4e2m1",
    "f8e8m0",
)
"""The names openvino's reader takes for an element type attribute (any ASCII case)."""


def ascii_lower(text: str) -> str:
    """Lower-case A-Z only, as openvino's readers do (no Unicode case folding)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def ir_element_type(raw: str) -> str | None:
    """An element type attribute as openvino's IR reader reads it: an exact type name in any
    ASCII case ("F32" is f32; "FP32", "f32 " and "int32" are not names), "undefined" read as
    "dynamic"; None where openvino refuses the string."""
    low = ascii_lower(raw)
    if low not in ELEMENT_TYPE_NAMES:
        return None
    return "dynamic" if low == "undefined" else low


def element_type_of_numpy(name: str) -> str | None:
    """The IR short name for a numpy dtype name (`float32` -> `f32`)."""
    return _NUMPY_TO_ET.get(name)


@lru_cache(maxsize=1)
def bfloat16() -> np.dtype[Any] | None:
    """numpy dtype of ml_dtypes.bfloat16, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    dtype: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
    return dtype


def numpy_dtype(element_type: str, where: Where | None = None) -> np.dtype[Any]:
    """The numpy dtype that holds tensors of an element type (`f32` -> float32); InputError
    for a type irpool cannot hold (or bf16 without ml_dtypes)."""
    if element_type == "bf16":
        bf = bfloat16()
        if bf is None:
            raise InputError("bfloat16 needs ml_dtypes; pip install 'irpool[bf16]'", where)
        return bf
    name = ELEMENT_TYPES.get(element_type)
    if name is None:
        raise InputError(
            f"element type {element_type} is not supported; irpool executes "
            "f64, f32, f16, bf16, i64, i32, i8 and u8 tensors",
            where,
        )
    return np.dtype(name)


@dataclass(frozen=True)
class Plan:
    """What every plan starts with (a windowed PoolPlan, a family's FamilyPlan): the op it
    was bound from, the convention it computes under, and the shape of the data it takes."""

    op: str
    """The op and version as the registry names it (AvgPool-1, ReduceMean-1, ...)."""
    convention: str
    input_shape: tuple[int, ...]


@dataclass(frozen=True)
class Port:
    """A port as written: its id, type, tensor names and declared dims (-1 = dynamic)."""

    id: int
    element_type: str | None
    names: tuple[str, ...]
    dims: tuple[int, ...] | None
    line: int | None
    dim_lines: tuple[int | None, ...] = ()


@dataclass(frozen=True)
class Layer:
    """A layer (or ONNX node) as written; `data` keeps the attribute strings of `<data>`."""

    id: int | None
    name: str | None
    type: str
    version: str | None
    data: Mapping[str, str]
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    file: str | None
    line: int | None
    index: int = 0
    attrs: Mapping[str, object] = field(default_factory=dict, compare=False)
    """Typed attributes of an ONNX node (IR layers keep their strings in `data`)."""
    domain: str = ""

    @property
    def label(self) -> str:
        """How messages name the layer: its name, else its position in the file."""
        return self.name if self.name is not None else f"#{self.index + 1}"

    def answers_to(self, name: str) -> bool:
        """Whether `name` (as given to --layer) picks this layer: its name, or `#N` for the
        N-th layer of the file when the layer has no name."""
        return self.name == name or (self.name is None and self.label == name)

    def where(self, line: int | None = None) -> Where:
        return Where(
            file=self.file,
            line=line if line is not None else self.line,
            layer=self.label,
            layer_id=str(self.id) if self.id is not None else None,
            op=self.type,
            version=self.version,
            noun="node" if self.domain else "layer",
        )

    def input_port(self, port_id: int) -> Port | None:
        return next((p for p in self.inputs if p.id == port_id), None)

    def output_port(self, port_id: int) -> Port | None:
        return next((p for p in self.outputs if p.id == port_id), None)


@dataclass(frozen=True)
class Edge:
    from_layer: int
    from_port: int
    to_layer: int
    to_port: int
    line: int | None


@dataclass(frozen=True)
class Graph:
    """A parsed model: a full net (ir_version 10/11), or a file of bare layer fragments."""

    path: str
    layers: tuple[Layer, ...]
    edges: tuple[Edge, ...]
    ir_version: int | None
    name: str | None = None
    fragment: bool = False
    weights_path: str | None = None
    format: str = "ir"
    """`ir` for OpenVINO IR and fragments, `onnx` for ONNX models."""
    opsets: Mapping[str, int] = field(default_factory=dict, compare=False)
    initializers: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """ONNX initializers by tensor name (numpy arrays)."""
    weights: bytes | None = field(default=None, compare=False, repr=False)
    """The .bin's bytes, when the IR was given in memory (they replace weights_path)."""
    conversion: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """What openvino's converter recorded in the IR's <rt_info><conversion_parameters>
    (framework, input_model, ...): one mark of the framework a model came from."""
    reading_notes: tuple[str, ...] = field(default=(), compare=False)
    """What irpool took lenient text of the file to mean, where openvino reads it without a
    word (an XML declaration naming an encoding openvino ignores); `check` reports each."""
    _by_id: dict[int, Layer] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update({la.id: la for la in self.layers if la.id is not None})

    def layer(self, layer_id: int) -> Layer:
        return self._by_id[layer_id]

    def producer(self, layer_id: int, port_id: int) -> Edge | None:
        """The edge feeding input port `port_id` of layer `layer_id`, if any."""
        return self._inputs_index().get((layer_id, port_id))

    def feeder(self, layer: Layer, k: int = 0) -> tuple[Layer, int] | None:
        """The layer (and its output port) feeding input `k` of `layer`, if any."""
        if layer.id is None or k >= len(layer.inputs):
            return None
        edge = self.producer(layer.id, layer.inputs[k].id)
        return None if edge is None else (self.layer(edge.from_layer), edge.from_port)

    def _inputs_index(self) -> dict[tuple[int, int], Edge]:
        cache: dict[tuple[int, int], Edge] | None = getattr(self, "_in_cache", None)
        if cache is None:
            cache = {(e.to_layer, e.to_port): e for e in self.edges}
            object.__setattr__(self, "_in_cache", cache)
        return cache

    def consumed(self, layer_id: int, port_id: int) -> bool:
        """Whether some edge leaves output port `port_id` of layer `layer_id`."""
        cache: set[tuple[int, int]] | None = getattr(self, "_out_cache", None)
        if cache is None:
            cache = {(e.from_layer, e.from_port) for e in self.edges}
            object.__setattr__(self, "_out_cache", cache)
        return (layer_id, port_id) in cache

    def topological(self) -> list[Layer]:
        """Layers in an order where every producer comes before its consumers (Kahn, stable)."""
        if self.fragment:
            return list(self.layers)
        indeg = {la.id: 0 for la in self.layers}
        succ: dict[int | None, list[int]] = {la.id: [] for la in self.layers}
        for e in self.edges:
            indeg[e.to_layer] += 1
            succ[e.from_layer].append(e.to_layer)
        position = {la.id: i for i, la in enumerate(self.layers)}
        ready = sorted((i for i, d in indeg.items() if d == 0), key=lambda i: position[i])
        order: list[Layer] = []
        import heapq

        heap = [(position[i], i) for i in ready]
        heapq.heapify(heap)
        while heap:
            _, lid = heapq.heappop(heap)
            assert lid is not None
            order.append(self._by_id[lid])
            for nxt in succ[lid]:
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    heapq.heappush(heap, (position[nxt], nxt))
        return order

    def __iter__(self) -> Iterator[Layer]:
        return iter(self.layers)


def port_inputs(
    graph: Graph,
    layer: Layer,
    index_of: Mapping[int | None, int],
    produced: Callable[[tuple[int, int]], T],
    initializer: Callable[[Any], T],
) -> list[T | None]:
    """A layer's inputs, port by port: `produced((producer's layer index, its output port))`,
    `initializer(array)` for an ONNX initializer, or None for an omitted optional ONNX input."""
    got: list[T | None] = []
    for port in layer.inputs:
        assert layer.id is not None
        edge = graph.producer(layer.id, port.id)
        if edge is not None:
            got.append(produced((index_of[edge.from_layer], edge.from_port)))
        elif port.names and port.names[0] in graph.initializers:
            got.append(initializer(np.asarray(graph.initializers[port.names[0]])))
        else:
            got.append(None)
    return got


def check_no_cycle(graph: Graph) -> None:
    """Raise if the edges of a net form a cycle (named by one layer on it)."""
    order = graph.topological()
    if len(order) != len(graph.layers):
        placed = {la.id for la in order}
        stuck = next(la for la in graph.layers if la.id not in placed)
        raise IrParseError(
            "the edges form a cycle through this layer; expected a directed acyclic graph",
            stuck.where(),
        )
