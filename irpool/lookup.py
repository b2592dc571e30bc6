"""Finding a layer from what a person types: the one lookup every `--layer` (and every `layer`
argument of the Python API) goes through.

A query picks a layer by, in this order: its exact name (or `#N`, the N-th layer of a file of
unnamed fragments), its id in the file (`8`, or `id=8`), the name of one of its output tensors,
then whole parts of its name (the pieces between `/`, `::` and `.`: `avg_pool2d` picks
`aten::avg_pool2d/AvgPool` and not `aten::adaptive_avg_pool2d/...`), and finally a part of
its name that only one layer has (`features.2` for
`__module.features.2/aten::max_pool2d/MaxPool`).  The first rule that matches decides; a part
of a name that several layers share is refused with their names, and a query that matches
nothing is answered with the closest names (difflib) and the list of pooling layers.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .errors import UsageError, Where
from .model import Graph, Layer

T = TypeVar("T")
SHOWN = 8
"""Candidates a message lists at most."""


def noun(graph: Graph) -> str:
    """What a pooling layer is called in the model's own vocabulary."""
    return "pooling node" if graph.format == "onnx" else "pooling layer"


def _id_of(query: str) -> int | None:
    text = query.strip()
    if text.lower().startswith("id="):
        text = text[3:].strip()
    return int(text) if text.isdigit() else None


def _names(layer: Layer) -> list[str]:
    """Every name a layer answers to: its name (or label) and its output tensors' names."""
    out = [layer.label]
    for port in layer.outputs:
        out.extend(n for n in port.names if n and n not in out)
    return out


def _quoted(labels: Iterable[str]) -> str:
    items = [f'"{label}"' for label in labels]
    if len(items) > SHOWN:
        return ", ".join(items[:SHOWN]) + f", ... ({len(items)} in all)"
    return ", ".join(items) or "none"


def _exact_rules(query: str) -> list[Callable[[Layer], bool]]:
    number = _id_of(query)
    return [
        lambda la: la.answers_to(query),
        lambda la: number is not None and la.id == number,
        lambda la: any(query in port.names for port in la.outputs),
    ]


_SEPARATORS = re.compile(r"/|::|\.")


def _whole_parts(query: str, name: str, fold: bool) -> bool:
    """Whether the query is one or more whole consecutive parts of the name (parts separated
    by `/`, `::` or `.`), with case folded if `fold`."""
    if fold:
        query, name = query.lower(), name.lower()
    want = [p for p in _SEPARATORS.split(query) if p]
    have = _SEPARATORS.split(name)
    if not want:
        return False
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def matches(layers: Sequence[Layer], query: str) -> list[Layer]:
    """The layers a query picks under the first rule that picks any (see the module text);
    several only for a part of a name that several layers share (case is ignored when no
    layer has the part as written)."""
    for rule in _exact_rules(query):
        found = [la for la in layers if rule(la)]
        if found:
            return found
    for fold in (False, True):
        found = [la for la in layers if la.name is not None and _whole_parts(query, la.name, fold)]
        if found:
            return found
    found = [la for la in layers if la.name is not None and query in la.name]
    if found:
        return found
    lowered = query.lower()
    return [la for la in layers if la.name is not None and lowered in la.name.lower()]


def closest(layers: Sequence[Layer], query: str, n: int = 5) -> list[str]:
    """The labels of the layers whose names (or output tensor names) look most like `query`."""
    by_name: dict[str, str] = {}
    for la in layers:
        for name in _names(la):
            by_name.setdefault(name, la.label)
    scored = difflib.get_close_matches(query, list(by_name), n=n * 2, cutoff=0.3)
    # a short query against long names: score the last part of each name too
    tails = {name.rsplit("/", 1)[-1]: name for name in by_name}
    scored += [tails[t] for t in difflib.get_close_matches(query, list(tails), n=n, cutoff=0.5)]
    out: list[str] = []
    for name in scored:
        label = by_name[name]
        if label not in out:
            out.append(label)
    return out[:n]


def find(
    graph: Graph,
    query: str,
    candidates: Sequence[Layer] | None = None,
    what: str | None = None,
) -> Layer:
    """The one layer `query` picks.  Exact names, ids and tensor names are looked up among every
    layer of the graph (the caller says what it does with a layer of another type); parts of
    names among `candidates` (default: every layer).  UsageError naming the candidates when
    the query is ambiguous or matches nothing."""
    pool = list(candidates) if candidates is not None else list(graph.layers)
    what = what or noun(graph)
    where = Where(file=graph.path)
    # exact names first among the candidates (an ONNX Result bears its tensor's name), then
    # among every layer (the caller says what it does with a layer of another type)
    for layers in (pool, graph.layers):
        for rule in _exact_rules(query):
            exact = [la for la in layers if rule(la)]
            if len(exact) == 1:
                return exact[0]
            if exact:
                raise UsageError(
                    f'"{query}" names {len(exact)} layers: {_quoted(la.label for la in exact)}; '
                    "give the name or the id",
                    where,
                )
    found = matches(pool, query)
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(
            f'"{query}" is part of the name of {len(found)} {what}s: '
            f"{_quoted(la.label for la in found)}; give more of the name, or the id",
            where,
        )
    near = closest(pool, query)
    hint = f"; closest: {_quoted(near)}" if near else ""
    raise UsageError(
        f'no {what} "{query}" (by name, id, output tensor name or part of a name){hint}; '
        f"{what}s: {_quoted(la.label for la in pool)}",
        where,
    )


def find_all(
    graph: Graph,
    queries: Sequence[str],
    candidates: Sequence[Layer],
    what: str | None = None,
) -> list[Layer]:
    """The layers of several queries, each once, in the candidates' order; every query must
    pick exactly one of the candidates."""
    what = what or noun(graph)
    chosen: set[int] = set()
    for query in queries:
        layer = find(graph, query, candidates, what)
        if layer.index not in {la.index for la in candidates}:
            raise UsageError(
                f'"{query}" is "{layer.label}", of type {layer.type}, not a {what}; '
                f"{what}s: {_quoted(la.label for la in candidates)}",
                layer.where(),
            )
        chosen.add(layer.index)
    return [la for la in candidates if la.index in chosen]


def pick(items: Sequence[T], layers: Sequence[Layer], chosen: Sequence[Layer]) -> list[T]:
    """The items (one per layer, in the same order) whose layer was chosen."""
    wanted = {la.index for la in chosen}
    return [item for item, la in zip(items, layers, strict=True) if la.index in wanted]
