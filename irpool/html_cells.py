"""The HTML page's table of every value of a small output that differs: both sides' values
cell by cell, one small table per (N, C) plane, the differing cells shaded.

A report carries the values (``cell_values``) only for an output that differs and has at most
256 values on each side (comparison.CELL_VALUES); a larger output keeps its heatmap and worst
cell alone.  When the two sides disagree on the shape, each side gets its own tables and the
cells the other side lacks are marked.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from .html_views import OutputView


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _text(value: Any, other: Any) -> str:
    """A value as short as shows it apart from `other` (6 significant digits, more when two
    different floats would read the same)."""
    if not isinstance(value, float):
        return str(value)
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    for digits in (6, 9, 17):
        text = f"{value:.{digits}g}"
        if not isinstance(other, float) or other == value or text != f"{other:.{digits}g}":
            return text
    return repr(value)


def _layout(shape: Sequence[int]) -> tuple[tuple[int, ...], int, int]:
    """How an output is cut into tables: (the shape of the planes' index, rows, columns).
    N, C (and a depth axis) index the planes; the last two axes are rows and columns, a
    single spatial axis is one row."""
    dims = tuple(shape)
    if len(dims) >= 4:
        return dims[:-2], dims[-2], dims[-1]
    if len(dims) == 3:
        return dims[:-1], 1, dims[-1]
    if len(dims) == 2:
        return (), dims[0], dims[1]
    return (), 1, dims[0] if dims else 1


def _plane_indices(lead: tuple[int, ...]) -> list[tuple[int, ...]]:
    planes: list[tuple[int, ...]] = [()]
    for n in lead:
        planes = [(*p, k) for p in planes for k in range(n)]
    return planes


def _table(
    label: str,
    rows: int,
    cols: int,
    cell: Any,
) -> str:
    """One plane as a table: column numbers on top, row numbers on the left, `cell(r, c)`
    giving each cell's (class, inner HTML)."""
    head = "".join(f"<th>{c}</th>" for c in range(cols))
    body = []
    for r in range(rows):
        tds = "".join(
            f'<td class="{klass}">{inner}</td>'
            for klass, inner in (cell(r, c) for c in range(cols))
        )
        body.append(f"<tr><th>{r if rows > 1 else ''}</th>{tds}</tr>")
    return (
        f'<table class="cells"><caption>{_e(label)}</caption><thead><tr><th></th>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table>"
    )


def _full(index: tuple[int, ...], r: int, c: int, ndim: int) -> tuple[int, ...]:
    """The index in the whole output of cell (r, c) of plane `index` (see _layout)."""
    if ndim >= 4:
        return (*index, r, c)
    if ndim == 3:
        return (*index, c)
    return ((r, c) if ndim == 2 else (c,))[:ndim]


def _plane_label(index: tuple[int, ...]) -> str:
    return "plane [" + ", ".join(map(str, index)) + "]" if index else "the output"


def _paired(out: OutputView, side_a: str, side_b: str) -> str:
    """Both sides' values in one table per plane, side A on top of side B in each cell."""
    assert out.values_a is not None and out.values_b is not None and out.shape_a is not None
    lead, rows, cols = _layout(out.shape_a)
    differing = set(out.differing)
    tables = []
    for k, index in enumerate(_plane_indices(lead)):
        base = k * rows * cols

        def cell(r: int, c: int, base: int = base) -> tuple[str, str]:
            at = base + r * cols + c
            a, b = out.values_a[at], out.values_b[at]  # type: ignore[index]
            klass = "differs" if at in differing else "same"
            inner = f'<span class="a">{_e(_text(a, b))}</span>'
            inner += f'<span class="b">{_e(_text(b, a))}</span>'
            return klass, inner

        tables.append(_table(_plane_label(index), rows, cols, cell))
    legend = (
        f'<p class="stats">Every value, both sides: in each cell <b>{_e(side_a)}</b> on top, '
        f"<b>{_e(side_b)}</b> below; shaded where they differ beyond the tolerance "
        f"({len(differing)} of {len(out.values_a)}).</p>"
    )
    return legend + f'<div class="planes">{"".join(tables)}</div>'


def _one_side(values: list[Any], shape: list[int], other: list[int] | None, mark: str) -> str:
    """One side's values, table by table; a cell outside the other side's shape is marked
    (class only-`mark`, in the colour the heatmap gives the cells only this side has)."""
    lead, rows, cols = _layout(shape)
    tables = []
    for k, index in enumerate(_plane_indices(lead)):
        base = k * rows * cols

        def cell(
            r: int, c: int, base: int = base, index: tuple[int, ...] = index
        ) -> tuple[str, str]:
            full = _full(index, r, c, len(shape))
            only = other is not None and (
                len(other) != len(shape) or any(i >= n for i, n in zip(full, other, strict=True))
            )
            value = values[base + r * cols + c]
            klass = f"only-{mark}" if only else "same"
            return klass, f'<span class="a">{_e(_text(value, None))}</span>'

        tables.append(_table(_plane_label(index), rows, cols, cell))
    return f'<div class="planes">{"".join(tables)}</div>'


def cells_block(out: OutputView, side_a: str, side_b: str) -> str:
    """Every value of both sides of a small output that differs (empty when the report
    does not carry them)."""
    if out.values_a is None or out.values_b is None:
        return ""
    if out.shape_ok and out.shape_a is not None:
        return f'<div class="every">{_paired(out, side_a, side_b)}</div>'
    if out.shape_a is None or out.shape_b is None:
        return ""
    parts = [
        '<p class="stats">Every value of each side (the shapes differ); marked: the cells the '
        "other side does not have (coloured as in the picture above).</p>"
    ]
    for name, values, shape, other, mark in (
        (side_a, out.values_a, out.shape_a, out.shape_b, "a"),
        (side_b, out.values_b, out.shape_b, out.shape_a, "b"),
    ):
        shown = "[" + ", ".join(map(str, shape)) + "]"
        parts.append(f"<h5>{_e(name)} {_e(shown)}</h5>{_one_side(values, shape, other, mark)}")
    return f'<div class="every">{"".join(parts)}</div>'


CSS = """
.every { margin-top: 12px; }
.every h5 { margin: 10px 0 4px; font-size: 13px; }
.planes { display: flex; gap: 18px; flex-wrap: wrap; align-items: flex-start; }
table.cells { width: auto; border-collapse: collapse; font-size: 12px; }
table.cells caption { text-align: left; color: var(--muted); font-size: 12px; padding: 2px 0; }
table.cells th { padding: 2px 6px; font-weight: 500; background: none; text-align: center;
  border: none; }
table.cells td { padding: 3px 7px; border: 1px solid var(--line); text-align: right;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
table.cells td span { display: block; line-height: 1.3; }
table.cells td.same span.b { color: var(--muted); }
table.cells td.differs { background: #fdecea; box-shadow: inset 0 0 0 2px var(--bad); }
table.cells td.differs span.a { color: var(--ink); font-weight: 600; }
table.cells td.differs span.b { color: var(--bad); font-weight: 600; }
table.cells td.only-a { background: #e8f0fe; box-shadow: inset 0 0 0 2px #4285f4; }
table.cells td.only-b { background: #fff4e5; box-shadow: inset 0 0 0 2px #f59f00; }
"""
