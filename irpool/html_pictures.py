"""The HTML page's pictures: the grid of differing cells of an output (from its mismatch map, the
first differing cells, or the two shapes), drawn as inline SVG planes over a PNG raster."""

from __future__ import annotations

import base64
import html
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .html_views import (
    HIGH,
    HINT_LIMIT,
    LOW,
    MAX_PANELS,
    ONLY_A,
    ONLY_B,
    PLANE_HEIGHT,
    PLANE_WIDTH,
    RASTER_CELLS,
    SAME,
    OutputView,
)


def _png(rgb: npt.NDArray[np.uint8]) -> bytes:
    """A truecolor PNG of an H x W x 3 uint8 array."""
    height, width = rgb.shape[:2]
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _shade(share: float) -> tuple[int, int, int]:
    t = min(max(share, 0.0), 1.0)
    return tuple(round(lo + (hi - lo) * t) for lo, hi in zip(LOW, HIGH, strict=True))  # type: ignore[return-value]


def _hex(rgb: Sequence[int]) -> str:
    r, g, b = rgb
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass
class Grid:
    """What one output's picture shows: per spatial cell a colour and, for differing cells, a
    tooltip; the spatial shape has 1 to 3 axes."""

    shape: tuple[int, ...]
    colors: npt.NDArray[np.uint8]
    tips: dict[tuple[int, ...], str]
    worst: tuple[int, ...] | None
    caption: str
    legend: list[tuple[str, str]]
    block: tuple[int, ...] | None = None


def _grid_from_mask(out: OutputView, mask: Mapping[str, Any]) -> Grid:
    planes = max(int(mask.get("planes", 1)), 1)
    shape = tuple(int(n) for n in mask["shape"])
    worst = tuple(out.worst_index[2:]) if out.worst_index else None
    if mask.get("truncated") and "coarse" in mask:
        coarse = mask["coarse"]
        block = tuple(int(b) for b in coarse["block"])
        cshape = tuple(int(n) for n in coarse["shape"])
        counts = np.asarray(coarse["differing"], dtype=np.float64).reshape(cshape)
        colors = np.empty((*cshape, 3), dtype=np.uint8)
        colors[...] = SAME
        per_block = float(math.prod(block))
        tips = {}
        for idx in zip(*np.nonzero(counts), strict=True):
            key = tuple(int(i) for i in idx)
            colors[key] = _shade(counts[key] / per_block)
            lo = [k * b for k, b in zip(key, block, strict=True)]
            tips[key] = f"cells from {lo}: {int(counts[key])} of {int(per_block)} differ"
        worst_block = tuple(w // b for w, b in zip(worst, block, strict=True)) if worst else None
        caption = (
            f"{mask.get('differing_cells')} of {math.prod(shape)} spatial cells differ; too many "
            f"to list, so each square is a block of {'x'.join(map(str, block))} cells, darker "
            "where more of its cells differ"
        )
        return Grid(cshape, colors, tips, worst_block, caption, _legend(planes, True), block)
    colors = np.empty((*shape, 3), dtype=np.uint8)
    colors[...] = SAME
    tips = {}
    for cell in mask.get("cells", []):
        key = tuple(int(i) for i in cell[:-1])
        n = int(cell[-1])
        colors[key] = _shade(n / planes)
        tips[key] = f"{list(key)}: {n} of {planes} plane(s) differ"
    total = math.prod(shape)
    caption = (
        f"{mask.get('differing_cells', len(tips))} of {total} spatial cell(s) differ in at least "
        f"one of the {planes} (N, C) plane(s)"
    )
    return Grid(shape, colors, tips, worst, caption, _legend(planes, False))


def _legend(planes: int, blocks: bool) -> list[tuple[str, str]]:
    if blocks:
        return [(_hex(SAME), "no cell differs"), (_hex(LOW), "few"), (_hex(HIGH), "all cells")]
    if planes == 1:
        return [(_hex(SAME), "same"), (_hex(HIGH), "differs")]
    return [
        (_hex(SAME), "same in every plane"),
        (_hex(_shade(1 / planes)), "1 plane differs"),
        (_hex(HIGH), f"all {planes} planes differ"),
    ]


def _grid_from_hint(out: OutputView) -> Grid | None:
    shape = out.shape_b or out.shape_a
    if not shape or len(shape) < 3:
        return None
    spatial = tuple(shape[2:])
    colors = np.empty((*spatial, 3), dtype=np.uint8)
    colors[...] = SAME
    tips = {}
    for cell in out.hint:
        key = tuple(int(i) for i in cell)
        if len(key) == len(spatial) and all(0 <= k < n for k, n in zip(key, spatial, strict=True)):
            colors[key] = HIGH
            tips[key] = f"{list(key)} differs"
    worst = tuple(out.worst_index[2:]) if out.worst_index else None
    if worst is not None and len(worst) == len(spatial):
        colors[worst] = HIGH
        tips.setdefault(worst, f"{list(worst)} differs (the worst cell)")
    if len(out.hint) < HINT_LIMIT:
        caption = (
            f"the {len(out.hint)} spatial cell(s) the report names as differing (it names up to "
            f"{HINT_LIMIT}, so these are all of them; {out.mismatches} value(s) differ over the "
            "(N, C) planes)"
        )
    else:
        caption = (
            f"the report names only the first {HINT_LIMIT} differing cells and the worst one "
            f"({out.mismatches} value(s) differ in all): the pattern may be incomplete; the "
            "proposed mismatch_map would show all of it"
        )
    return Grid(
        spatial,
        colors,
        tips,
        worst,
        caption,
        [(_hex(SAME), "not named"), (_hex(HIGH), "named as differing")],
    )


def _grid_of_shapes(out: OutputView, side_a: str, side_b: str) -> Grid | None:
    a, b = out.shape_a, out.shape_b
    if not a or not b or len(a) != len(b) or len(a) < 3:
        return None
    sa, sb = tuple(a[2:]), tuple(b[2:])
    union = tuple(max(x, y) for x, y in zip(sa, sb, strict=True))
    colors = np.empty((*union, 3), dtype=np.uint8)
    tips = {}
    for idx in np.ndindex(*union):
        in_a = all(i < n for i, n in zip(idx, sa, strict=True))
        in_b = all(i < n for i, n in zip(idx, sb, strict=True))
        colors[idx] = (
            SAME if in_a and in_b else ONLY_A if in_a else ONLY_B if in_b else (255, 255, 255)
        )
        if in_a != in_b:
            tips[idx] = f"{list(idx)}: only {side_a if in_a else side_b} has this cell"
    caption = (
        f"the shapes differ: {side_a} {a}, {side_b} {b}; coloured cells exist on one side only"
    )
    legend = [
        (_hex(SAME), "both"),
        (_hex(ONLY_A), f"only {side_a}"),
        (_hex(ONLY_B), f"only {side_b}"),
    ]
    return Grid(union, colors, tips, None, caption, legend)


def _ticks(n: int, cell: float) -> list[int]:
    step = max(1, math.ceil(16 / max(cell, 1e-9)))
    for nice in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if nice >= step:
            step = nice
            break
    shown = list(range(0, n, step))
    if n - 1 not in shown and (n - 1 - shown[-1]) * cell >= 14:
        shown.append(n - 1)
    return shown


def _plane_svg(
    colors: npt.NDArray[np.uint8],
    tips: Mapping[tuple[int, ...], str],
    worst: tuple[int, ...] | None,
    prefix: tuple[int, ...],
    cell: float,
    x0: float,
    y0: float,
    row_label: str | None,
    col_label: str,
) -> list[str]:
    """One H x W plane (H = 1 for a 1-D output) at (x0, y0), with its axis ticks."""
    height, width = colors.shape[:2]
    parts: list[str] = []
    w, h = width * cell, height * cell
    gap = 1.0 if cell >= 6 else 0.0
    if width > RASTER_CELLS or height > RASTER_CELLS or cell < 4:
        data = base64.b64encode(_png(np.ascontiguousarray(colors))).decode("ascii")
        parts.append(
            f'<image x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" '
            f'href="data:image/png;base64,{data}"><title>{len(tips)} cell(s) differ</title></image>'
        )
    else:
        parts.append(f'<rect x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}" fill="#fff"/>')
        for i in range(height):
            for j in range(width):
                key = (*prefix, i, j) if row_label is not None else (*prefix, j)
                fill = _hex(colors[i, j])
                tip = tips.get(key)
                rect = (
                    f'<rect x="{x0 + j * cell:g}" y="{y0 + i * cell:g}" '
                    f'width="{cell - gap:g}" height="{cell - gap:g}" fill="{fill}"'
                )
                if tip:
                    parts.append(f'{rect} class="diff"><title>{html.escape(tip)}</title></rect>')
                else:
                    parts.append(rect + "/>")
    if worst is not None:
        parts += _worst_marker(worst, prefix, row_label is not None, cell, gap, x0, y0)
    for j in _ticks(width, cell):
        parts.append(
            f'<text class="tick" x="{x0 + (j + 0.5) * cell:g}" y="{y0 + h + 12:g}" '
            f'text-anchor="middle">{j}</text>'
        )
    parts.append(
        f'<text class="axis" x="{x0 + w / 2:g}" y="{y0 + h + 26:g}" '
        f'text-anchor="middle">{html.escape(col_label)}</text>'
    )
    if row_label is not None:
        for i in _ticks(height, cell):
            parts.append(
                f'<text class="tick" x="{x0 - 4:g}" y="{y0 + (i + 0.5) * cell + 3.5:g}" '
                f'text-anchor="end">{i}</text>'
            )
        parts.append(
            f'<text class="axis" x="{x0 - 26:g}" y="{y0 + h / 2:g}" text-anchor="middle" '
            f'transform="rotate(-90 {x0 - 26:g} {y0 + h / 2:g})">{html.escape(row_label)}</text>'
        )
    return parts


def _worst_marker(
    worst: tuple[int, ...],
    prefix: tuple[int, ...],
    two_d: bool,
    cell: float,
    gap: float,
    x0: float,
    y0: float,
) -> list[str]:
    """An outline around the worst cell when it lies in this plane (a ring when cells are
    too small to outline)."""
    here = worst[len(prefix) :]
    if worst[: len(prefix)] != prefix or len(here) != (2 if two_d else 1):
        return []
    i, j = (here[0], here[1]) if two_d else (0, here[0])
    if cell < 8:
        cx, cy = x0 + (j + 0.5) * cell, y0 + (i + 0.5) * cell
        return [
            f'<circle class="worst" cx="{cx:g}" cy="{cy:g}" r="7" fill="none" stroke="#111" '
            'stroke-width="2"><title>the worst cell</title></circle>'
        ]
    return [
        f'<rect class="worst" x="{x0 + j * cell - 1.5:g}" y="{y0 + i * cell - 1.5:g}" '
        f'width="{cell + 2 - gap:g}" height="{cell + 2 - gap:g}" fill="none" stroke="#111" '
        'stroke-width="2.5"><title>the worst cell</title></rect>'
    ]


def _grid_svg(grid: Grid, label: str) -> str:
    """The SVG of a grid: one plane, a strip (1-D), or one plane per depth slice (3-D)."""
    shape = grid.shape
    block = f" (blocks of {'x'.join(map(str, grid.block))})" if grid.block else ""
    names = {1: ["axis 2"], 2: ["axis 2", "axis 3"], 3: ["axis 2", "axis 3", "axis 4"]}[len(shape)]
    if len(shape) == 1:
        width = shape[0]
        cell = min(36.0, max(2.0, PLANE_WIDTH / width))
        left, top = 8.0, 8.0
        parts = _plane_svg(
            grid.colors.reshape(1, width, 3),
            grid.tips,
            grid.worst,
            (),
            cell,
            left,
            top,
            None,
            names[0] + block,
        )
        total_w, total_h = left + width * cell + 8, top + cell + 34
    elif len(shape) == 2:
        height, width = shape
        cell = min(32.0, PLANE_WIDTH / width, PLANE_HEIGHT / height)
        cell = max(cell, 1.0)
        left, top = 40.0, 8.0
        parts = _plane_svg(
            grid.colors,
            grid.tips,
            grid.worst,
            (),
            cell,
            left,
            top,
            names[0] + block,
            names[1] + block,
        )
        total_w, total_h = left + width * cell + 8, top + height * cell + 34
    else:
        depth, height, width = shape
        slices = _chosen_slices(grid, depth)
        cell = min(26.0, 200.0 / width, 180.0 / height)
        cell = max(cell, 1.0)
        panel_w, panel_h = width * cell + 48, height * cell + 58
        columns = max(1, min(len(slices), int(620 // panel_w)))
        parts = []
        for n, d in enumerate(slices):
            x0 = 40.0 + (n % columns) * panel_w
            y0 = 22.0 + (n // columns) * panel_h
            differs = sum(1 for k in grid.tips if k[0] == d)
            parts.append(
                f'<text class="panel" x="{x0:g}" y="{y0 - 8:g}">{html.escape(names[0])} = {d}'
                f"{block} \u00b7 {differs} differ</text>"
            )
            parts += _plane_svg(
                grid.colors[d],
                grid.tips,
                grid.worst,
                (d,),
                cell,
                x0,
                y0,
                names[1] + block,
                names[2] + block,
            )
        rows = math.ceil(len(slices) / columns)
        total_w = 40.0 + columns * panel_w
        total_h = 22.0 + rows * panel_h - 20
    return (
        f'<svg class="heatmap" role="img" aria-label="{html.escape(label)}" '
        f'xmlns="http://www.w3.org/2000/svg" width="{total_w:g}" height="{total_h:g}" '
        f'viewBox="0 0 {total_w:g} {total_h:g}">' + "".join(parts) + "</svg>"
    )


def _chosen_slices(grid: Grid, depth: int) -> list[int]:
    with_diff = sorted({k[0] for k in grid.tips})
    if depth <= MAX_PANELS:
        return list(range(depth))
    chosen = with_diff[:MAX_PANELS]
    for d in range(depth):
        if len(chosen) >= MAX_PANELS:
            break
        if d not in chosen:
            chosen.append(d)
    return sorted(chosen)


def _picture(out: OutputView, side_a: str, side_b: str) -> tuple[Grid | None, str]:
    """The grid to draw for an output, and a remark when some slices are left out."""
    grid: Grid | None
    if not out.shape_ok:
        grid = _grid_of_shapes(out, side_a, side_b)
    elif out.mask is not None and out.mask.get("shape"):
        grid = _grid_from_mask(out, out.mask)
    elif out.hint or out.worst_index:
        grid = _grid_from_hint(out)
    else:
        grid = None
    remark = ""
    if grid is not None and len(grid.shape) == 3 and grid.shape[0] > MAX_PANELS:
        remark = (
            f"; {MAX_PANELS} of {grid.shape[0]} depth slices drawn (those with differences first)"
        )
    return grid, remark
