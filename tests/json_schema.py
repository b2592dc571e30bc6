"""A small JSON Schema validator for the subset docs/fixtures.md uses: type, const, enum,
properties, required, additionalProperties, items, minItems, maxItems, minimum, pattern and
local $ref ("#/$defs/name").  Returns the list of problems, each with its JSON path."""

from __future__ import annotations

import re
from typing import Any

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
KNOWN = {
    "$schema",
    "$id",
    "$defs",
    "title",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "pattern",
    "$ref",
}


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/$defs/"), f"only local $defs references are supported: {ref}"
    target: dict[str, Any] = root["$defs"][ref.removeprefix("#/$defs/")]
    return target


def validate(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> list[str]:
    root = schema if root is None else root
    problems: list[str] = []
    _check(value, schema, root, "$", problems)
    return problems


def _check(
    value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, out: list[str]
) -> None:
    unknown = set(schema) - KNOWN
    assert not unknown, f"schema keyword(s) this validator does not know: {unknown}"
    if "$ref" in schema:
        _check(value, _resolve(root, schema["$ref"]), root, path, out)
        return
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            out.append(f"{path}: {value!r} is not of type {kinds}")
            return
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if TYPES["number"](value) and "minimum" in schema and value < schema["minimum"]:
        out.append(f"{path}: {value!r} is below {schema['minimum']}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{path}: {len(value)} items, fewer than {schema['minItems']}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: {len(value)} items, more than {schema['maxItems']}")
        if "items" in schema:
            for i, item in enumerate(value):
                _check(item, schema["items"], root, f"{path}[{i}]", out)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path}: required key {key!r} is missing")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                _check(item, props[key], root, f"{path}.{key}", out)
            elif extra is False:
                out.append(f"{path}: key {key!r} is not allowed")
            elif isinstance(extra, dict):
                _check(item, extra, root, f"{path}.{key}", out)
