"""Op versions as rows of data: attribute schemas, defaults, allowed values, semantic switches.

A new op version is a new row (`dataclasses.replace` of the previous one), never a new class or
kernel branch.  `select(domain, family, version)` returns the newest row whose `since` is at most
`version`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..errors import SpecError
from ..model import INT64_MAX, parse_int

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


@dataclass(frozen=True)
class OpSpec:
    """One version of one pooling op of one front end."""

    domain: Domain
    family: str
    since: int
    attrs: tuple[Attr, ...]
    reduce: Literal["max", "mean"]
    roundings: tuple[str, ...] = ("floor", "ceil")
    outputs: int = 1
    dtypes: tuple[str, ...] = ()
    divisor_override: Literal["full"] | None = None
    source: str = ""

    @property
    def label(self) -> str:
        """`AvgPool-14`, `AveragePool-19`, `QLinearAveragePool-1`."""
        return f"{self.family}-{self.since}"

    def wire_names(self) -> set[str]:
        return {a.wire for a in self.attrs}


class Registry:
    """All known rows, looked up by front-end domain, family (case-insensitive) and version."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], list[OpSpec]] = {}
        self._names: dict[tuple[str, str], str] = {}

    def add(self, *rows: OpSpec) -> None:
        for row in rows:
            key = (row.domain, row.family.lower())
            self._rows.setdefault(key, []).append(row)
            self._rows[key].sort(key=lambda r: r.since)
            self._names[key] = row.family

    def families(self, domain: str) -> list[str]:
        return sorted(name for (d, _), name in self._names.items() if d == domain)

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


REGISTRY = Registry()


# -- reading attribute strings of IR <data> -------------------------------------------------


def parse_int_list(raw: str) -> tuple[int, ...] | None:
    """`"2, 2"` or `"2,2"` -> (2, 2); empty -> (); anything else, digits other than ASCII and
    values outside int64 included (openvino cannot parse them either), -> None."""
    text = raw.strip()
    if text == "":
        return ()
    out: list[int] = []
    for part in text.split(","):
        value = parse_int(part)
        if value is None or not INT64_MIN <= value <= INT64_MAX:
            return None
        out.append(value)
    return tuple(out)


def _brief(raw: str, limit: int = 60) -> str:
    """An attribute value short enough for a one-line message."""
    return raw if len(raw) <= limit else f"{raw[:limit]}... ({len(raw)} characters)"


def read_ir_value(attr: Attr, raw: str) -> object:
    """The typed value of one IR attribute string; SpecError saying what was expected."""
    if attr.kind == "ints":
        values = parse_int_list(raw)
        if values is None:
            raise SpecError(
                f'"{attr.wire}"="{_brief(raw)}" is not a list of 64-bit integers such as "2, 2"'
            )
        if attr.minimum is not None and any(v < attr.minimum for v in values):
            raise SpecError(
                f'"{attr.wire}"="{_brief(raw)}" has a value below {attr.minimum}; '
                f"expected integers >= {attr.minimum}"
            )
        return values
    if attr.kind == "int":
        values = parse_int_list(raw)
        if values is None or len(values) != 1:
            raise SpecError(f'"{attr.wire}"="{_brief(raw)}" is not a 64-bit integer')
        return values[0]
    if attr.kind == "bool":
        low = raw.strip().lower()
        if low not in ("true", "false"):
            raise SpecError(f'"{attr.wire}"="{_brief(raw)}"; expected true or false')
        return low == "true"
    if attr.kind == "enum":
        low = raw.strip().lower()
        if low not in attr.choices:
            choices = ", ".join(attr.choices)
            raise SpecError(f'"{attr.wire}"="{_brief(raw)}"; expected one of {choices}')
        return low
    return raw


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
