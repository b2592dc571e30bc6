"""`irpool explain --png`: one pooling layer drawn with matplotlib (the `plot` extra, Agg).

The picture shows the input positions of the drawn axes, the declared padding around them and
the ceil overhang beyond it, and the windows of a few output cells (corners and centre by
default, or --cell), each tap of a window as a square.  The legend says, per window, how many
of its taps lie inside the input and, for a mean, what it is divided by under the convention.

* A 1-D layer is a strip of input positions with one lane per window underneath, so that
  overlapping windows stay apart; the figure is as tall as its lanes.
* A 2-D layer is the input plane, rows down and columns across.
* A 3-D layer is drawn as the plane of its last two axes for one window of its first axis
  (--depth); the title says which window and which input positions it covers.

Every axis has integer ticks at cell centres, the legends sit outside the drawing, and only
the kinds of cell the layer has are listed.  Large planes are one image (no patch per cell).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import OracleMissing, UsageError, option
from .explain import FamilyReport, LayerReport, divisor_at, divisor_table
from .files import atomic_write_bytes
from .geometry import AxisPlan
from .model import dims_text

DPI = 100
WIDTH_IN = 9.0
COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#e377c2", "#8c564b", "#17becf")
"""Window colours: none of them near the padding blue or the overhang orange."""
REGION_COLORS = {"input": "#ffffff", "padding": "#c6dbef", "overhang": "#fdd0a2"}
REGION_LABELS = {
    "input": "input",
    "padding": "declared padding",
    "overhang": "ceil overhang (beyond pads_end)",
}
GRID_LINES_UP_TO = 80
"""Cell borders are drawn when an axis has at most this many positions."""
TAPS_DRAWN_UP_TO = 400
"""A window with more taps is drawn as its outline and a light fill, not tap by tap."""


def default_cells(axes: Sequence[AxisPlan]) -> list[tuple[int, ...]]:
    """First, last and middle windows on each of the drawn axes (corners and centre)."""
    picks = [sorted({0, a.out // 2, a.out - 1}) for a in axes]
    if len(axes) == 1:
        return [(j,) for j in picks[0]]
    rows, cols = picks
    cells = [(rows[0], cols[0]), (rows[0], cols[-1]), (rows[-1], cols[0]), (rows[-1], cols[-1])]
    centre = (axes[0].out // 2, axes[1].out // 2)
    return list(dict.fromkeys([*cells, centre]))


def check_cells(cells: Sequence[tuple[int, ...]], axes: Sequence[AxisPlan]) -> None:
    """Each --cell names one window per drawn axis (the last one or two spatial axes), inside
    the output; a UsageError otherwise."""
    outs = [a.out for a in axes]
    names = "I" if len(axes) == 1 else "I,J"
    for cell in cells:
        text = ",".join(map(str, cell))
        if len(cell) != len(axes):
            raise UsageError(
                f"{option('cell')} {text} has {len(cell)} value(s); expected {len(axes)} "
                f"({names}), one "
                f"per drawn axis of the output {outs}"
            )
        if any(not 0 <= j < n for j, n in zip(cell, outs, strict=True)):
            raise UsageError(f"{option('cell')} {text} is outside the output {outs}")


def _kind(a: AxisPlan, p: int) -> str:
    """input, padding (declared) or overhang (past pads_end, or before pads_begin)."""
    if 0 <= p < a.size:
        return "input"
    if -a.pad_begin <= p < a.size + a.pad_end:
        return "padding"
    return "overhang"


def _extent(a: AxisPlan) -> tuple[int, int]:
    """First and last position drawn on an axis: the padding and every window's taps."""
    last_tap = a.start(a.out - 1) + (a.window - 1) * a.dilation
    return min(-a.pad_begin, a.start(0)), max(last_tap, a.size + a.pad_end - 1)


def _tap_text(a: AxisPlan, j: int) -> str:
    """Taps of window j as positions, marked (pad) or (overhang) outside the input."""
    marks = {"input": "", "padding": "(pad)", "overhang": "(overhang)"}
    taps = a.taps(j)
    shown = [f"{p}{marks[_kind(a, p)]}" for p in taps]
    if len(shown) > 8:
        shown = [*shown[:3], "...", *shown[-3:]]
    return ", ".join(shown)


@dataclass(frozen=True)
class Window:
    """One drawn output cell: its index on the drawn axes and in the whole output."""

    cell: tuple[int, ...]
    full: tuple[int, ...]
    color: str
    label: str


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise OracleMissing(
            f"{option('png')} needs matplotlib; pip install 'irpool[plot]'"
        ) from None
    return plt


def _windows(
    report: LayerReport,
    drawn: Sequence[AxisPlan],
    cells: Sequence[tuple[int, ...]],
    depth: int | None,
) -> list[Window]:
    """The chosen cells with their legend text: taps inside the input and the divisor."""
    assert report.plan is not None
    plan = report.plan
    table = divisor_table(plan)
    found = []
    for k, cell in enumerate(cells):
        full = (depth, *cell) if depth is not None else tuple(cell)
        inside = math.prod(a.in_input(j) for a, j in zip(plan.axes, full, strict=True))
        taps = math.prod(a.window for a in plan.axes)
        text = f"out {','.join(map(str, cell))}: {inside} of {taps} taps in the input"
        if depth is not None:
            here = math.prod(a.in_input(j) for a, j in zip(drawn, cell, strict=True))
            per_plane = math.prod(a.window for a in drawn)
            text += f" ({here} of {per_plane} per drawn plane)"
        shown = divisor_at(plan, table, full)
        if shown is not None:
            text += f", divided by {shown:g}"
        found.append(Window(tuple(cell), full, COLORS[k % len(COLORS)], text))
    return found


def _title(report: LayerReport, depth: int | None) -> str:
    assert report.plan is not None
    head = (
        f"{report.layer} ({report.op}), {report.convention} convention: "
        f"{dims_text(report.input_shape)} \u2192 {dims_text(report.output_shape)}"
    )
    if depth is None:
        return head
    a = report.plan.axes[0]
    return (
        f"{head}\nslice drawn: window {depth} of {a.out} on axis {report.axes[0].axis} "
        f"(input positions {_tap_text(a, depth)}); axes {report.axes[1].axis} and "
        f"{report.axes[2].axis} below"
    )


def _region_handles(kinds: set[str]) -> list[Any]:
    from matplotlib.patches import Patch

    handles = []
    for kind in ("input", "padding", "overhang"):
        if kind in kinds:
            handles.append(
                Patch(
                    facecolor=REGION_COLORS[kind],
                    edgecolor="#888888",
                    hatch="//" if kind == "overhang" else None,
                    label=REGION_LABELS[kind],
                )
            )
    return handles


def _window_handles(windows: Sequence[Window]) -> list[Any]:
    from matplotlib.patches import Patch

    return [Patch(facecolor=w.color, alpha=0.45, edgecolor=w.color, label=w.label) for w in windows]


def _legend(fig: Any, kinds: set[str], windows: Sequence[Window]) -> None:
    """One legend under the drawing: the kinds of cell in the left column, the windows in the
    right one (matplotlib fills a legend column by column, so the shorter list is padded)."""
    from matplotlib.patches import Patch

    regions, drawn = _region_handles(kinds), _window_handles(windows)
    rows = max(len(regions), len(drawn))
    blank = [Patch(visible=False, label=" ")]
    fig.legend(
        handles=regions + blank * (rows - len(regions)) + drawn + blank * (rows - len(drawn)),
        loc="outside lower center",
        ncol=2,
        fontsize=8,
        frameon=False,
        columnspacing=3.0,
    )


def _integer_ticks(ax: Any, axis: str, positions: int) -> None:
    """Ticks on whole positions only: every one on a short axis, a round step on a long one."""
    from matplotlib.ticker import MaxNLocator, MultipleLocator

    locator: Any = (
        MultipleLocator(1)
        if positions <= 16
        else MaxNLocator(integer=True, steps=[1, 2, 5, 10], min_n_ticks=3)
    )
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(locator)


def _draw_1d(report: LayerReport, a: AxisPlan, windows: Sequence[Window]) -> Any:
    """A strip of positions on top and one lane per window below it."""
    plt = _plt()
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    lo, hi = _extent(a)
    lanes = len(windows)
    height = 1.9 + 0.42 * (lanes + 1) + 0.26 * lanes
    fig, ax = plt.subplots(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    kinds = {_kind(a, p) for p in range(lo, hi + 1)}
    edge = "#999999" if hi - lo < GRID_LINES_UP_TO else "none"
    for lane in range(lanes + 1):
        # the strip (lane 0) in full colour, each window's lane in a faint copy of it
        alpha = 1.0 if lane == 0 else 0.4
        for kind in kinds:
            spans = [
                Rectangle((p - 0.5, lane - 0.5), 1, 1)
                for p in range(lo, hi + 1)
                if _kind(a, p) == kind
            ]
            ax.add_collection(
                PatchCollection(
                    spans,
                    facecolor=REGION_COLORS[kind],
                    edgecolor=edge if lane == 0 else "none",
                    linewidth=0.5,
                    alpha=alpha,
                    hatch="//" if kind == "overhang" else None,
                )
            )
        if lane:
            ax.add_patch(
                Rectangle((-0.5, lane - 0.5), a.size, 1, fill=False, edgecolor="#bbbbbb", lw=0.8)
            )
    ax.add_patch(Rectangle((-0.5, -0.5), a.size, 1, fill=False, edgecolor="black", lw=1.5))
    for lane, w in enumerate(windows, start=1):
        taps = a.taps(w.cell[0])
        squares = [Rectangle((p - 0.38, lane - 0.38), 0.76, 0.76) for p in taps]
        ax.add_collection(
            PatchCollection(squares, facecolor=w.color, alpha=0.45, edgecolor=w.color)
        )
        ax.add_patch(
            Rectangle(
                (min(taps) - 0.5, lane - 0.5),
                max(taps) - min(taps) + 1,
                1,
                fill=False,
                edgecolor=w.color,
                linewidth=2,
            )
        )
    ax.set_xlim(lo - 0.7, hi + 0.7)
    ax.set_ylim(lanes + 0.7, -0.7)
    ax.set_yticks(range(lanes + 1), ["input", *(f"out {w.cell[0]}" for w in windows)])
    _integer_ticks(ax, "x", hi - lo + 1)
    ax.set_xlabel(f"axis {report.axes[0].axis}: input position")
    ax.set_aspect("auto")
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title(_title(report, None), fontsize=10, loc="left")
    _legend(fig, kinds, windows)
    return fig


def _draw_2d(
    report: LayerReport,
    ah: AxisPlan,
    aw: AxisPlan,
    windows: Sequence[Window],
    depth: int | None,
) -> Any:
    """The plane of two axes: regions as one image, windows tap by tap."""
    plt = _plt()
    import numpy as np
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    (h0, h1), (w0, w1) = _extent(ah), _extent(aw)
    rows, cols = h1 - h0 + 1, w1 - w0 + 1
    order = ("input", "padding", "overhang")
    kind_rows = [_kind(ah, r) for r in range(h0, h1 + 1)]
    kind_cols = [_kind(aw, c) for c in range(w0, w1 + 1)]
    codes = np.zeros((rows, cols), dtype=np.int8)
    for i, kr in enumerate(kind_rows):
        for j, kc in enumerate(kind_cols):
            if "overhang" in (kr, kc):
                codes[i, j] = 2
            elif "padding" in (kr, kc):
                codes[i, j] = 1
    kinds = {order[int(c)] for c in np.unique(codes)}
    plane_w = min(6.4, 0.9 * cols)
    plane_h = min(max(plane_w * rows / cols, 1.2), 7.5)
    legend_h = 0.22 * (len(windows) + len(kinds)) / 2 + 0.5
    title_h = 0.75 if depth is None else 1.05
    fig, ax = plt.subplots(
        figsize=(WIDTH_IN, plane_h + legend_h + title_h + 0.7), dpi=DPI, layout="constrained"
    )
    cmap = ListedColormap([REGION_COLORS[k] for k in order])
    ax.imshow(
        codes,
        cmap=cmap,
        vmin=-0.5,
        vmax=2.5,
        extent=(w0 - 0.5, w1 + 0.5, h1 + 0.5, h0 - 0.5),
        interpolation="nearest",
        aspect="equal",
    )
    overhang_bands = []
    for i, kr in enumerate(kind_rows):
        if kr == "overhang":
            overhang_bands.append(Rectangle((w0 - 0.5, h0 + i - 0.5), cols, 1))
    for j, kc in enumerate(kind_cols):
        if kc == "overhang":
            overhang_bands.append(Rectangle((w0 + j - 0.5, h0 - 0.5), 1, rows))
    if overhang_bands:
        ax.add_collection(
            PatchCollection(
                overhang_bands, facecolor="none", edgecolor="#c98a4b", hatch="//", linewidth=0
            )
        )
    if rows <= GRID_LINES_UP_TO and cols <= GRID_LINES_UP_TO:
        ax.hlines(
            [r - 0.5 for r in range(h0, h1 + 2)], w0 - 0.5, w1 + 0.5, colors="#aaaaaa", lw=0.4
        )
        ax.vlines(
            [c - 0.5 for c in range(w0, w1 + 2)], h0 - 0.5, h1 + 0.5, colors="#aaaaaa", lw=0.4
        )
    ax.add_patch(
        Rectangle((-0.5, -0.5), aw.size, ah.size, fill=False, edgecolor="black", linewidth=1.5)
    )
    for w in windows:
        taps_r, taps_c = ah.taps(w.cell[0]), aw.taps(w.cell[1])
        if len(taps_r) * len(taps_c) <= TAPS_DRAWN_UP_TO:
            squares = [Rectangle((c - 0.36, r - 0.36), 0.72, 0.72) for r in taps_r for c in taps_c]
            ax.add_collection(
                PatchCollection(squares, facecolor=w.color, alpha=0.45, edgecolor="none")
            )
        box = Rectangle(
            (min(taps_c) - 0.5, min(taps_r) - 0.5),
            max(taps_c) - min(taps_c) + 1,
            max(taps_r) - min(taps_r) + 1,
            facecolor=w.color if len(taps_r) * len(taps_c) > TAPS_DRAWN_UP_TO else "none",
            alpha=1.0,
            edgecolor=w.color,
            linewidth=2,
        )
        ax.add_patch(box)
        at_top = min(taps_r) <= h0
        ax.annotate(
            ",".join(map(str, w.cell)),
            (min(taps_c) - 0.5, (max(taps_r) + 0.5) if at_top else (min(taps_r) - 0.5)),
            xytext=(2, -2 if at_top else 2),
            textcoords="offset points",
            ha="left",
            va="top" if at_top else "bottom",
            fontsize=7,
            fontweight="bold",
            color=w.color,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": w.color, "lw": 0.8},
            annotation_clip=False,
        )
    ax.set_xlim(w0 - 0.5, w1 + 0.5)
    ax.set_ylim(h1 + 0.5, h0 - 0.5)
    _integer_ticks(ax, "x", cols)
    _integer_ticks(ax, "y", rows)
    drawn = report.axes[-2:]
    ax.set_xlabel(f"axis {drawn[1].axis}: input position")
    ax.set_ylabel(f"axis {drawn[0].axis}: input position")
    ax.set_title(_title(report, depth), fontsize=10, loc="left", pad=16)
    _legend(fig, kinds, windows)
    return fig


def figure(
    report: LayerReport, cells: Sequence[tuple[int, ...]] | None = None, depth: int = 0
) -> Any:
    """The matplotlib Figure of a layer (see the module docstring); the caller closes it."""
    assert report.plan is not None
    axes = list(report.plan.axes)
    if len(axes) > 3:
        raise UsageError(f"{option('png')} draws 1-D, 2-D and 3-D layers")
    slice_at: int | None = None
    if len(axes) == 3:
        if not 0 <= depth < axes[0].out:
            raise UsageError(f"{option('depth')} {depth}: the first axis has {axes[0].out} windows")
        slice_at = depth
        axes = axes[1:]
    if any(a.out == 0 for a in axes):
        raise UsageError(f"the output {[a.out for a in axes]} has no window to draw")
    if cells:
        check_cells(cells, axes)
    chosen = [tuple(c) for c in (cells or default_cells(axes))]
    windows = _windows(report, axes, chosen, slice_at)
    if len(axes) == 1:
        return _draw_1d(report, axes[0], windows)
    return _draw_2d(report, axes[0], axes[1], windows, slice_at)


def render(
    report: LayerReport, cells: Sequence[tuple[int, ...]] | None = None, depth: int = 0
) -> bytes:
    """The PNG bytes of `figure`."""
    plt = _plt()
    fig = figure(report, cells, depth)
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def draw_adaptive(
    report: FamilyReport, path: str, cells: Sequence[tuple[int, ...]] | None = None, depth: int = 0
) -> None:
    """A PNG of an adaptive pooling layer: the input grid of the last one or two spatial axes
    and the window [start, end) of some output cells (corners and centre by default)."""
    from .families.adaptive import AdaptiveAxis, AdaptivePlan

    plan = report.plan
    if not isinstance(plan, AdaptivePlan):
        raise UsageError(
            f"{option('png')} draws windowed and adaptive pooling layers; {report.op} is a "
            f"{report.family} layer (its explanation is in the text and --json)"
        )
    axes = list(plan.axes)
    if len(axes) == 3:
        if not 0 <= depth < axes[0].out:
            raise UsageError(f"{option('depth')} {depth}: the first axis has {axes[0].out} windows")
        axes = axes[1:]
    if any(a.out == 0 or a.size == 0 for a in axes):
        raise UsageError(f"the output {[a.out for a in axes]} has no window to draw")
    drawn = [AxisPlan(a.size, 1, 1, 1, 0, 0, a.out) for a in axes]
    if cells:
        check_cells(cells, drawn)
    chosen = [tuple(c) for c in (cells or default_cells(drawn))]
    if len(axes) == 1:
        axes = [AdaptiveAxis(1, 1), axes[0]]
        chosen = [(0, *c) for c in chosen]
    plt = _plt()
    from matplotlib.patches import Rectangle

    ah, aw = axes
    fig, ax = plt.subplots(figsize=(WIDTH_IN, WIDTH_IN), dpi=DPI)
    for row in range(ah.size):
        for col in range(aw.size):
            ax.add_patch(
                Rectangle((col, row), 1, 1, facecolor="white", edgecolor="#999999", linewidth=0.5)
            )
    ax.add_patch(Rectangle((0, 0), aw.size, ah.size, fill=False, edgecolor="black", linewidth=1.5))
    for k, cell in enumerate(chosen):
        color = COLORS[k % len(COLORS)]
        i, j = cell[-2], cell[-1]
        r0, r1 = (int(v) for v in (ah.starts[i], ah.ends[i]))
        c0, c1 = (int(v) for v in (aw.starts[j], aw.ends[j]))
        inset = 0.08 * (k % 4)
        ax.add_patch(
            Rectangle(
                (c0 + inset, r0 + inset),
                c1 - c0 - 2 * inset,
                r1 - r0 - 2 * inset,
                facecolor=color,
                alpha=0.25,
                edgecolor=color,
                linewidth=2,
            )
        )
        label = ",".join(map(str, cell if len(plan.axes) > 1 else cell[1:]))
        ax.text(c0 + 0.1 + inset, r0 + 0.4 + inset, f"out {label}", color=color, fontsize=8)
    ax.set_xlim(-0.2, aw.size + 0.2)
    ax.set_ylim(ah.size + 0.2, -0.2)
    ax.set_aspect("equal")
    ax.set_xlabel(f"axis {len(plan.input_shape) - 1} position")
    ax.set_title(
        f"{report.layer} ({report.op}), {report.convention}: {dims_text(report.input_shape)} "
        f"\u2192 {dims_text(report.output_shape)}\nwindow i: [floor(i*In/Out), "
        "ceil((i+1)*In/Out))",
        fontsize=9,
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def draw(
    report: LayerReport | FamilyReport,
    path: str,
    cells: Sequence[tuple[int, ...]] | None = None,
    depth: int = 0,
) -> None:
    """Write the PNG of a layer to `path` (atomically; see `figure`); an adaptive pooling layer
    (a FamilyReport) is drawn by draw_adaptive."""
    if isinstance(report, FamilyReport):
        draw_adaptive(report, path, cells, depth)
        return
    atomic_write_bytes(path, render(report, cells, depth))
