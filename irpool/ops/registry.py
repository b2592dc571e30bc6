"""The op registry: every op version of every front end is one entry (an `OpSpec`).

An entry holds what irpool knows of one op version: its attributes (spelling in the file, name
inside irpool, kind, default, which are required), the family it belongs to (which decides the
kernel path and the shape rule), the element types it takes, its outputs, the convention its
front end implies, and the function that reads a layer's attributes into `PoolParams`.  The
front ends' modules (`ops/openvino.py`, `ops/onnx.py`, `ops/glue.py`) add their entries at import;
`lookup(layer)` is the one place that says which entry a layer of a model is, or that it is none.
Adding an op version is adding an entry (see docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..errors import IrpoolError, SpecError
from ..model import INT64_MAX, Layer, ascii_lower, ir_element_type

if TYPE_CHECKING:
    from ..geometry import PoolParams

INT64_MIN = -INT64_MAX - 1

Domain = Literal["openvino", "ai.onnx", "com.microsoft"]
AttrKind = Literal["ints", "int", "bool", "enum", "str"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: object = _Required()


@dataclass(frozen=True)
class Attr:
    """One attribute: its spelling in the file, its name inside irpool, kind and default."""

    wire: str
    name: str
    kind: AttrKind
    default: object = REQUIRED
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    note: str = ""

    @classmethod
    def enum(cls, wire: str, choices: str, note: str = "", name: str | None = None) -> Attr:
        """An attribute that takes one of `choices` (space-separated), the first by default."""
        values = tuple(choices.split())
        return cls(wire, name or wire, "enum", default=values[0], choices=values, note=note)


Kind = Literal["window", "qlinear", "family", "glue"]
"""What an entry is: a windowed pooling op (AvgPool, MaxPool, AveragePool), a quantised one
(QLinearAveragePool: dequantise, the windowed kernel, requantise), an op of another pooling
family (adaptive, reductions, Lp, unpooling, quantised global: the entry's `path` says which,
see irpool/families/), or glue that `run` executes around pooling layers (Parameter, Const,
Convert, Result, ...)."""

Role = Literal[
    "pooling",
    "parameter",
    "const",
    "convert",
    "identity",
    "reshape",
    "elementwise",
    "quantize",
    "result",
]
"""How `run` treats a layer of the entry (pooling layers, and the glue between them)."""


@dataclass(frozen=True)
class OpSpec:
    """One version of one op of one front end."""

    domain: Domain
    family: str
    since: int
    attrs: tuple[Attr, ...] = ()
    reduce: Literal["max", "mean"] | None = None
    roundings: tuple[str, ...] = ("floor", "ceil")
    outputs: int = 1
    dtypes: tuple[str, ...] = ()
    dtype_refusal: str = ""
    """The runtime's own words when it refuses an element type outside `dtypes`."""
    divisor_override: Literal["full"] | None = None
    source: str = ""
    kind: Kind = "window"
    role: Role = "pooling"
    read: Callable[[OpSpec, Layer, int | None], PoolParams] | None = field(
        default=None, compare=False, repr=False
    )
    """Reads a layer's attributes into PoolParams for an input rank (None: unknown), checking
    them as the runtime does (pooling entries); only a bound layer calls it."""
    execute: Callable[[Layer, list[Any]], list[Any]] | None = field(
        default=None, compare=False, repr=False
    )
    """Computes a glue layer's outputs from its inputs (glue entries)."""
    path: Any = field(default=None, compare=False, repr=False)
    """The family of a `family` entry (an irpool.families.Family: reads the layer, infers its
    shape, plans it, explains it); None for windowed and quantised entries (their family is
    families.windows', see Bound.family) and glue entries."""
    reference: Any = field(default=None, compare=False, repr=False)
    """An oracle row for an ONNX op no runtime irpool drives has a kernel for: an
    onnx.reference OpRun class that computes the op from its own definition (written apart
    from irpool's kernel).  compare hands it to onnx's reference evaluator, which stands in for
    onnxruntime on such a model; None for every op a runtime computes."""

    @property
    def label(self) -> str:
        """`AvgPool-14`, `AveragePool-19`, `QLinearAveragePool-1`."""
        return f"{self.family}-{self.since}"

    @property
    def pooling(self) -> bool:
        """Whether the entry is a pooling op (checked, run, explained and compared)."""
        return self.kind != "glue"

    @property
    def convention(self) -> str:
        """The convention a layer of this entry defaults to: openvino for IR layers, onnx
        (onnxruntime's behaviour) for ONNX nodes."""
        return "openvino" if self.domain == "openvino" else "onnx"

    def revised(self, since: int, source: str, *added: Attr, **changes: Any) -> OpSpec:
        """The op's version `since`: this one with the attributes `added` and the other
        fields `changes`."""
        return replace(self, since=since, attrs=(*self.attrs, *added), source=source, **changes)

    def wire_names(self) -> set[str]:
        return {a.wire for a in self.attrs}

    def wire(self, name: str) -> str:
        """The spelling in the file of the attribute irpool calls `name`."""
        return next((a.wire for a in self.attrs if a.name == name), name)


@dataclass(frozen=True)
class Selected:
    """The entry a layer is, and a note on how it was chosen (None when the file says)."""

    spec: OpSpec
    note: str | None = None


Resolver = Callable[["Registry", Layer], Selected | None]


class Registry:
    """All known entries, looked up by front-end domain, family (case-insensitive) and version."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], list[OpSpec]] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._resolvers: dict[str, Resolver] = {}
        self._unhandled: dict[tuple[str, str], str] = {}

    def add(self, *rows: OpSpec) -> None:
        for row in rows:
            key = (row.domain, row.family.lower())
            self._rows.setdefault(key, []).append(row)
            self._rows[key].sort(key=lambda r: r.since)
            self._names[key] = row.family

    def unhandled(self, domain: str, op_type: str, reason: str) -> None:
        """Say that `op_type` of a domain is a pooling-like op irpool has no entry for, and why
        (the reports list each such layer by name instead of passing over it)."""
        self._unhandled[(domain, op_type.lower())] = reason

    def skip_reason(self, layer: Layer) -> str | None:
        """Why a layer of a pooling-like op irpool does not cover is not verified, run or
        compared (ROIPooling, ReduceMin, ...); None for every other layer."""
        domain = "openvino" if not layer.domain else layer.domain
        if domain == "":
            domain = "ai.onnx"
        if self.spec(layer) is not None:
            return None
        found = self._unhandled.get((domain, layer.type.lower()))
        if found is None and any(w in layer.type.lower() for w in ("pool", "reduce", "roi")):
            found = (
                f"irpool has no entry for {layer.type} in {domain}: an op outside the pooling "
                "family it covers (docs/index.md lists them)"
            )
        return found

    def remove(self, *rows: OpSpec) -> None:
        """Take entries out again (a test's own entries)."""
        for row in rows:
            key = (row.domain, row.family.lower())
            self._rows[key] = [r for r in self._rows.get(key, []) if r is not row]
            if not self._rows[key]:
                del self._rows[key]
                del self._names[key]

    def resolver(self, front_end: str, resolve: Resolver) -> None:
        """How layers of a front end ("ir" or "onnx") find their entry."""
        self._resolvers[front_end] = resolve

    def families(self, domain: str, pooling: bool = True, kind: Kind | None = None) -> list[str]:
        """The op types of a domain: its pooling ones (or its glue), of one kind if given."""
        return sorted(
            name
            for (d, key), name in self._names.items()
            if d == domain
            and self._rows[(d, key)][0].pooling == pooling
            and (kind is None or self._rows[(d, key)][0].kind == kind)
        )

    def has_family(self, domain: str, family: str) -> bool:
        return (domain, family.lower()) in self._rows

    def family_name(self, domain: str, family: str) -> str:
        return self._names[(domain, family.lower())]

    def versions(self, domain: str, family: str) -> list[OpSpec]:
        return list(self._rows.get((domain, family.lower()), []))

    def select(self, domain: str, family: str, version: int) -> OpSpec:
        """The newest row of `family` with since <= version; SpecError listing the known ones."""
        rows = self._rows.get((domain, family.lower()))
        if not rows:
            known = ", ".join(self.families(domain))
            raise SpecError(f"{family!r} is not a pooling op irpool knows; known: {known}")
        candidates = [r for r in rows if r.since <= version]
        if not candidates:
            listed = ", ".join(str(r.since) for r in rows)
            raise SpecError(
                f"{rows[0].family} has no version {version}; known versions start at: {listed}"
            )
        return candidates[-1]

    def lookup(self, layer: Layer) -> Selected | None:
        """The entry of a layer, or None for an op irpool has no entry for.  A known family in
        a version irpool does not know raises SpecError naming the layer."""
        resolve = self._resolvers["onnx" if layer.domain else "ir"]
        try:
            return resolve(self, layer)
        except IrpoolError as e:
            raise e.at(layer.where()) from None

    def spec(self, layer: Layer) -> OpSpec | None:
        """The entry of a layer, or None (see lookup)."""
        found = self.lookup(layer)
        return None if found is None else found.spec

    def role(self, layer: Layer) -> Role | None:
        """How `run` treats a layer (None: no entry)."""
        spec = self.spec(layer)
        return None if spec is None else spec.role

    def is_pooling(self, layer: Layer) -> bool:
        """Whether a layer is a pooling op of some front end."""
        spec = self.spec(layer)
        return spec is not None and spec.pooling

    def is_pooling_type(self, domain: str, family: str) -> bool:
        """Whether an op type names a pooling family of a domain (e.g. an openvino node's type
        name)."""
        rows = self._rows.get((domain, family.lower()))
        return rows is not None and rows[0].pooling


REGISTRY = Registry()
lookup = REGISTRY.lookup
spec_of = REGISTRY.spec
is_pooling = REGISTRY.is_pooling


# -- reading attribute strings of IR <data> -------------------------------------------------
#
# openvino 2026.4.1's IR reader, measured on 3,679 spellings (docs/semantics.md "Attribute
# spellings"): irpool accepts exactly what it accepts, reads it the same way, and refuses the
# rest saying what openvino expects.

C_SPACE = " \t\n\v\f\r"
"""What C's isspace() skips in front of a number."""


def parse_ir_int(text: str) -> int | None:
    """One integer as openvino's IR reader reads it (an item of an integer list, or an int64
    attribute such as axis): C white space is skipped in front, then an optional '-' and at
    least one ASCII digit are read as int64; whatever follows the digits is ignored ("2.5" is
    2, "1_0" is 1, "2e0" is 2, "2 3" is 2).  None where openvino refuses: no digit after the
    optional '-' ("+2", "- 2", "a", "", " "), or a value outside int64."""
    i = 0
    while i < len(text) and text[i] in C_SPACE:
        i += 1
    negative = i < len(text) and text[i] == "-"
    first = i + 1 if negative else i
    end = first
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    if end == first:
        return None
    value = int(text[first:end])
    value = -value if negative else value
    if not INT64_MIN <= value <= INT64_MAX:
        return None
    return value


def parse_int_list(raw: str) -> tuple[int, ...] | None:
    """An integer-list attribute (kernel, strides, pads, dilations) as openvino reads it: fields
    split at ',' as std::getline splits them, so one trailing ',' ends the list ("2,2," is
    (2, 2); "" is ()), each field read by `parse_ir_int`.  None where openvino refuses: an
    empty field elsewhere ("2,,2", ",2", "2,2,,"), or a field `parse_ir_int` refuses."""
    fields = raw.split(",")
    if fields[-1] == "":
        fields.pop()
    out: list[int] = []
    for part in fields:
        value = parse_ir_int(part) if part else None
        if value is None:
            return None
        out.append(value)
    return tuple(out)


def read_element_type(raw: str, what: str) -> str:
    """An element type attribute (a Parameter's element_type, a Convert's destination_type, an
    index_element_type) as openvino reads it: an exact type name in any ASCII case ("F32" is
    f32; "FP32", "f32 ", "int32" are refused); "undefined" reads as "dynamic"."""
    et = ir_element_type(raw)
    if et is None:
        raise SpecError(
            f'{what}="{_brief(raw)}" is not an element type openvino reads; expected an exact '
            "name such as f32, f16, bf16, i64, i32, u8 or boolean (any letter case, no spaces)"
        )
    return et


def _brief(raw: str, limit: int = 60) -> str:
    """An attribute value short enough for a one-line message (control characters escaped)."""
    shown = raw.encode("unicode_escape").decode("ascii") if not raw.isprintable() else raw
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(shown)} characters)"


def read_ir_value(attr: Attr, raw: str) -> object:
    """The typed value of one IR attribute string as openvino reads it; SpecError saying what
    openvino expects where it refuses the string."""

    def refused(what: str, expected: str) -> SpecError:
        return SpecError(f'"{attr.wire}"="{_brief(raw)}"{what}; expected {expected}')

    if attr.kind == "ints":
        values = parse_int_list(raw)
        if values is None:
            raise refused(
                " is not a list openvino reads",
                'comma-separated 64-bit integers such as "2,2" (each ASCII digits with an '
                "optional leading '-', no empty item)",
            )
        if attr.minimum is not None and any(v < attr.minimum for v in values):
            raise refused(f" has a value below {attr.minimum}", f"integers >= {attr.minimum}")
        return values
    if attr.kind == "int":
        value = parse_ir_int(raw)
        if value is None:
            raise refused(
                " is not an integer openvino reads", "ASCII digits with an optional leading '-'"
            )
        return value
    if attr.kind == "bool":
        low = ascii_lower(raw)
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        return attr.default  # openvino accepts any other string and keeps the default
    if attr.kind == "enum":
        low = ascii_lower(raw)
        if attr.choices == ("i64", "i32"):  # an element type, then the op's own check
            et = read_element_type(raw, f'"{attr.wire}"')
            if et not in attr.choices:
                raise refused("", "i64 or i32 (openvino refuses other index types)")
            return et
        if low not in attr.choices:
            choices = ", ".join(attr.choices)
            raise refused(
                " is not a value openvino reads",
                f"one of {choices} exactly (any letter case, no spaces)",
            )
        return low
    return raw


def odd_spelling(attr: Attr, raw: str) -> str | None:
    """A note where openvino reads a string differently from how it looks: a bool that is not
    true/false/1/0 (the default is kept), or numbers with trailing text it ignores."""
    if attr.kind == "bool" and ascii_lower(raw) not in ("true", "false", "1", "0"):
        return (
            f'"{attr.wire}"="{_brief(raw)}" is not true, false, 1 or 0; openvino reads it as '
            f"the default ({str(attr.default).lower()})"
        )
    if attr.kind in ("ints", "int"):
        fields = raw.split(",") if attr.kind == "ints" else [raw]
        if attr.kind == "ints" and fields and fields[-1] == "":
            fields.pop()
        for part in fields:
            stripped = part.strip(C_SPACE)
            if stripped and not re.fullmatch(r"-?[0-9]+", stripped):
                return (
                    f'"{attr.wire}"="{_brief(raw)}": openvino reads the digits of each item '
                    f"and ignores what follows them (read as {read_ir_value(attr, raw)})"
                )
    return None


def read_ir_attrs(spec: OpSpec, data: Mapping[str, str]) -> dict[str, object]:
    """Typed attribute values by irpool name, with defaults filled in; unknown wires ignored."""
    values: dict[str, object] = {}
    for attr in spec.attrs:
        raw = data.get(attr.wire)
        if raw is None:
            if attr.default is REQUIRED:
                raise SpecError(f'attribute "{attr.wire}" is missing; {spec.label} requires it')
            values[attr.name] = attr.default
        else:
            values[attr.name] = read_ir_value(attr, raw)
    return values
