"""The JSON Schemas (Draft 2020-12) of every JSON document irpool writes, shipped as files:
`check-1.json` (irpool.check/1), `run-1.json`, `explain-1.json`, `compare-1.json`,
`convert-report-2.json` (ONNX), `convert-report-3.json` (source models and IRs),
`fixtures-summary-1.json` (what the commands print with --json), `fuzz-1.json` (a fuzz
campaign's summary), `error-1.json` (what any command prints with --json when it fails: exit
2, 3 or 70), and
`fixture-1.json`, `fixtures-1.json` (a fixture case's meta.json and a set's index.json).

irpool never validates at run time (no jsonschema dependency); these functions hand the files
to a validator:

>>> from jsonschema import Draft202012Validator        # doctest: +SKIP
>>> Draft202012Validator(irpool.schemas.for_document(doc)).validate(doc)  # doctest: +SKIP
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

NAMES = (
    "check-1",
    "run-1",
    "explain-1",
    "compare-1",
    "convert-report-2",
    "convert-report-3",
    "fixtures-summary-1",
    "fixture-1",
    "fixtures-1",
    "extract-1",
    "fuzz-1",
    "error-1",
)


def document(tag: str, file: str | None = None) -> dict[str, Any]:
    """The first keys of every document irpool writes: its schema tag and irpool's version,
    then the file it speaks of, where there is one."""
    from .. import __version__

    head = {"schema": tag, "irpool": __version__}
    return head if file is None else {**head, "file": file}


def file_name(tag: str) -> str:
    """The file of a document tag: irpool.compare/1 -> compare-1.json."""
    name, _, version = tag.removeprefix("irpool.").partition("/")
    return f"{name}-{version}.json"


@cache
def load(name: str) -> dict[str, Any]:
    """A schema by file name (compare-1 or compare-1.json) or by the tag it describes
    (irpool.compare/1)."""
    if name.startswith("irpool."):
        name = file_name(name)
    if not name.endswith(".json"):
        name += ".json"
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def for_document(document: Any) -> dict[str, Any]:
    """The schema a document names in its "schema" key."""
    return load(str(document["schema"]))
