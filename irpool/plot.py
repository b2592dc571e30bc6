"""`irpool explain --png`: one pooling layer drawn with matplotlib (the `plot` extra, Agg).

The picture shows the input positions of the drawn axes, the declared padding around them and
the ceil overhang beyond it, and the windows of a few output cells (every window of a small
output, else corners and centre and one window where the conventions differ, or --cell), each
tap of a window as a square: filled where the divisor counts it, a dashed outline where not.

Conventions that compute the layer differently (another divisor for some window, or a window
only some of them have: plot_panels.py) get one panel each, side by side, the layer's own
first; a window they disagree on is marked ≠.  The title names the divergences the layer
exercises, says which windows the picture leaves out (and whether the panels differ there),
and which conventions refuse the layer.  The legend says, per window, how many of its taps lie
inside the input and, for a mean, what each panel divides it by.

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

import numpy as np

from . import divergences
from .errors import OracleMissing, UsageError, option
from .explain import SYSTEMS, FamilyReport, LayerReport
from .files import atomic_write_bytes
from .geometry import AxisPlan, PoolPlan
from .model import dims_text
from .plot_panels import (
    Panel,
    counted_taps,
    differing_windows,
    divided,
    has,
    left_out,
    panels_of,
)

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
    """One drawn output cell: its index on the drawn axes and in the whole output; `differs`:
    the panels disagree on it (a divisor, or whether the window exists)."""

    cell: tuple[int, ...]
    full: tuple[int, ...]
    color: str
    label: str
    differs: bool = False

    @property
    def tag(self) -> str:
        return ",".join(map(str, self.cell)) + (" \u2260" if self.differs else "")


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
    panels: Sequence[Panel],
    cells: Sequence[tuple[int, ...]],
    depth: int | None,
    differing: Sequence[tuple[int, ...]],
) -> list[Window]:
    """The chosen cells with their legend text: taps inside the input and the divisor in
    each panel."""
    taps = math.prod(a.window for a in panels[0].plan.axes)
    found = []
    for k, cell in enumerate(cells):
        full = (depth, *cell) if depth is not None else tuple(cell)
        owner = next((p.plan for p in panels if has(p.plan, full)), panels[0].plan)
        inside = math.prod(a.in_input(j) for a, j in zip(owner.axes, full, strict=True))
        differs = tuple(cell) in differing
        mark = " \u2260" if differs else ""
        text = f"out {','.join(map(str, cell))}{mark}: {inside} of {taps} taps in the input"
        if depth is not None:
            drawn = owner.axes[1:]
            here = math.prod(a.in_input(j) for a, j in zip(drawn, cell, strict=True))
            text += f" ({here} of {math.prod(a.window for a in drawn)} per drawn plane)"
        text += divided(panels, full)
        color = COLORS[k % len(COLORS)]
        found.append(Window(tuple(cell), full, color, text, differs))
    return found


def _chosen(axes: Sequence[int], differing: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Every window of a small output; else corners and centre, and when none of those is a
    window where the panels differ, the middle one of those windows."""
    if math.prod(axes) <= len(COLORS):
        return [tuple(int(i) for i in c) for c in np.ndindex(*axes)]
    drawn = [AxisPlan(1, 1, 1, 1, 0, 0, n) for n in axes]
    cells = default_cells(drawn)
    if differing and not set(cells) & set(differing):
        cells.append(differing[len(differing) // 2])
    return sorted(set(cells))


def _title(
    report: LayerReport, depth: int | None, panels: Sequence[Panel], notes: Sequence[str]
) -> str:
    """The head of the picture: the layer, the divergences it exercises, the slice of a 3-D
    layer, and what the picture leaves out."""
    assert report.plan is not None
    shapes = f"{dims_text(report.input_shape)} \u2192 {dims_text(report.output_shape)}"
    if len(panels) == 1:
        lines = [f"{report.layer} ({report.op}), {report.convention} convention: {shapes}"]
    else:
        lines = [f"{report.layer} ({report.op}): {shapes}; the conventions side by side"]
    for key in report.divergences if len(panels) == 1 else report.divergences_any:
        d = divergences.BY_ID[key]
        lines.append(f"divergence {key}: {d.title} ({d.separates})".replace("`", ""))
    if depth is not None:
        a = report.plan.axes[0]
        lines.append(
            f"slice drawn: window {depth} of {a.out} on axis {report.axes[0].axis} "
            f"(input positions {_tap_text(a, depth)}); axes {report.axes[1].axis} and "
            f"{report.axes[2].axis} below"
        )
    lines.extend(notes)
    return "\n".join(lines)


def _region_handles(kinds: set[str], hollow: bool) -> list[Any]:
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
    if hollow:
        handles.append(Patch(facecolor="#777777", alpha=0.45, label="tap counted in the divisor"))
        handles.append(
            Patch(
                facecolor="none",
                edgecolor="#555555",
                ls="--",
                label="tap not counted in the divisor",
            )
        )
    return handles


def _window_handles(windows: Sequence[Window]) -> list[Any]:
    from matplotlib.patches import Patch

    return [
        Patch(
            facecolor=w.color,
            alpha=0.45,
            edgecolor=w.color,
            label=w.label,
        )
        for w in windows
    ]


def _legend(fig: Any, kinds: set[str], windows: Sequence[Window], hollow: bool) -> None:
    """One legend under the drawing: the kinds of cell in the left column, the windows in the
    right one (matplotlib fills a legend column by column, so the shorter list is padded);
    \u2260 marks a window the panels draw or divide differently."""
    from matplotlib.patches import Patch

    regions, drawn = _region_handles(kinds, hollow), _window_handles(windows)
    if any(w.differs for w in windows):
        regions.append(Patch(visible=False, label="\u2260 the panels differ on this window"))
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


def _squares(
    ax: Any, centres: Sequence[tuple[float, float, bool]], color: str, half: float
) -> bool:
    """Taps as squares at (x, y): filled where counted, dashed outlines where not; whether
    any is hollow."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    for filled in (True, False):
        boxes = [
            Rectangle((x - half, y - half), 2 * half, 2 * half)
            for x, y, c in centres
            if c is filled
        ]
        if boxes and filled:
            ax.add_collection(PatchCollection(boxes, facecolor=color, alpha=0.45, edgecolor="none"))
        elif boxes:
            ax.add_collection(
                PatchCollection(boxes, facecolor="none", edgecolor=color, linestyle="--", lw=1.2)
            )
    return any(not c for _, _, c in centres)


def _strip(ax: Any, a: AxisPlan, lo: int, hi: int, lanes: int) -> set[str]:
    """The input strip (lane 0) in full colour and a faint copy of it per window's lane."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    kinds = {_kind(a, p) for p in range(lo, hi + 1)}
    edge = "#999999" if hi - lo < GRID_LINES_UP_TO else "none"
    for lane in range(lanes + 1):
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
                    alpha=1.0 if lane == 0 else 0.4,
                    hatch="//" if kind == "overhang" else None,
                )
            )
        if lane:
            ax.add_patch(
                Rectangle((-0.5, lane - 0.5), a.size, 1, fill=False, edgecolor="#bbbbbb", lw=0.8)
            )
    ax.add_patch(Rectangle((-0.5, -0.5), a.size, 1, fill=False, edgecolor="black", lw=1.5))
    return kinds


def _panel_1d(
    ax: Any, panel: Panel, windows: Sequence[Window], span: tuple[int, int]
) -> tuple[set[str], bool]:
    """One panel of a 1-D layer: the strip, and each window's taps in its lane."""
    from matplotlib.patches import Rectangle

    a = panel.plan.axes[-1]
    lo, hi = span
    kinds = _strip(ax, a, lo, hi, len(windows))
    hollow = False
    for lane, w in enumerate(windows, start=1):
        if w.cell[0] >= a.out:
            ax.text(lo, lane, f"  no window {w.cell[0]} here", va="center", fontsize=8)
            continue
        taps = a.taps(w.cell[0])
        kept = counted_taps(panel.plan, a, taps)
        centres = [(float(p), float(lane), c) for p, c in zip(taps, kept, strict=True)]
        hollow |= _squares(ax, centres, w.color, 0.38)
        width = max(taps) - min(taps) + 1
        lw = 3.5 if w.differs else 2
        ax.add_patch(
            Rectangle((min(taps) - 0.5, lane - 0.5), width, 1, fill=False, ec=w.color, lw=lw)
        )
    ax.set_xlim(lo - 0.7, hi + 0.7)
    ax.set_ylim(len(windows) + 0.7, -0.7)
    ax.set_yticks(range(len(windows) + 1), ["input", *(f"out {w.tag}" for w in windows)])
    ax.set_aspect("auto")
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return kinds, hollow


def _union(panels: Sequence[Panel], k: int) -> tuple[int, int]:
    """The positions drawn on drawn axis k (from the end): every panel's padding and taps."""
    spans = [_extent(p.plan.axes[len(p.plan.axes) - k]) for p in panels]
    return min(s[0] for s in spans), max(s[1] for s in spans)


def _draw_1d(
    report: LayerReport, panels: Sequence[Panel], windows: Sequence[Window], title: str
) -> Any:
    """A strip of positions on top and one lane per window below it, one panel per
    convention, stacked."""
    plt = _plt()
    lo, hi = _union(panels, 1)
    lanes = len(windows)
    one = 0.42 * (lanes + 1) + 0.26 * lanes + (0.35 if len(panels) > 1 else 0)
    height = 1.5 + 0.18 * title.count("\n") + one * len(panels)
    fig, axs = plt.subplots(
        len(panels),
        1,
        figsize=(WIDTH_IN if len(panels) == 1 else 10.0, height),
        dpi=DPI,
        layout="constrained",
        sharex=True,
        squeeze=False,
    )
    kinds: set[str] = set()
    hollow = False
    for ax, panel in zip(axs[:, 0], panels, strict=True):
        found, some = _panel_1d(ax, panel, windows, (lo, hi))
        kinds |= found
        hollow |= some
        if len(panels) > 1:
            ax.set_title(panel.title, fontsize=9, loc="left")
    _integer_ticks(axs[-1, 0], "x", hi - lo + 1)
    axs[-1, 0].set_xlabel(f"axis {report.axes[0].axis}: input position")
    _head(fig, axs[0, 0], title, len(panels))
    _legend(fig, kinds, windows, hollow)
    return fig


def _head(fig: Any, ax: Any, title: str, panels: int) -> None:
    """The title over one panel, or over the whole figure when there are several."""
    if panels == 1:
        ax.set_title(title, fontsize=10, loc="left", pad=16)
    else:
        fig.suptitle(title, fontsize=10, x=0.01, ha="left")


def _regions_2d(ax: Any, ah: AxisPlan, aw: AxisPlan, box: tuple[int, int, int, int]) -> set[str]:
    """The plane: input, padding and overhang as one image, cell borders on small planes,
    the input outlined."""
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    h0, h1, w0, w1 = box
    order = ("input", "padding", "overhang")
    kind_rows = [order.index(_kind(ah, r)) for r in range(h0, h1 + 1)]
    kind_cols = [order.index(_kind(aw, c)) for c in range(w0, w1 + 1)]
    codes = np.maximum.outer(np.asarray(kind_rows), np.asarray(kind_cols))
    cmap = ListedColormap([REGION_COLORS[k] for k in order])
    extent = (w0 - 0.5, w1 + 0.5, h1 + 0.5, h0 - 0.5)
    ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=2.5, extent=extent, interpolation="nearest")
    rows, cols = h1 - h0 + 1, w1 - w0 + 1
    bands = [
        Rectangle((w0 - 0.5, h0 + i - 0.5), cols, 1) for i, k in enumerate(kind_rows) if k == 2
    ]
    bands += [
        Rectangle((w0 + j - 0.5, h0 - 0.5), 1, rows) for j, k in enumerate(kind_cols) if k == 2
    ]
    if bands:
        ax.add_collection(
            PatchCollection(bands, facecolor="none", edgecolor="#c98a4b", hatch="//", linewidth=0)
        )
    if rows <= GRID_LINES_UP_TO and cols <= GRID_LINES_UP_TO:
        ax.hlines(
            [r - 0.5 for r in range(h0, h1 + 2)], w0 - 0.5, w1 + 0.5, colors="#aaaaaa", lw=0.4
        )
        ax.vlines(
            [c - 0.5 for c in range(w0, w1 + 2)], h0 - 0.5, h1 + 0.5, colors="#aaaaaa", lw=0.4
        )
    ax.add_patch(Rectangle((-0.5, -0.5), aw.size, ah.size, fill=False, edgecolor="black", lw=1.5))
    return {order[int(c)] for c in np.unique(codes)}


def _window_2d(ax: Any, q: PoolPlan, w: Window) -> bool:
    """One window on the plane: its taps (hollow where the divisor does not count them), its
    outline and its tag; whether a tap is hollow."""
    from matplotlib.patches import Rectangle

    ah, aw = q.axes[-2:]
    taps_r, taps_c = ah.taps(w.cell[0]), aw.taps(w.cell[1])
    many = len(taps_r) * len(taps_c) > TAPS_DRAWN_UP_TO
    hollow = False
    if not many:
        rows, cols = counted_taps(q, ah, taps_r), counted_taps(q, aw, taps_c)
        centres = [
            (float(c), float(r), cr and cc)
            for r, cr in zip(taps_r, rows, strict=True)
            for c, cc in zip(taps_c, cols, strict=True)
        ]
        hollow = _squares(ax, centres, w.color, 0.36)
    x0, y0 = min(taps_c) - 0.5, min(taps_r) - 0.5
    ax.add_patch(
        Rectangle(
            (x0, y0),
            max(taps_c) - min(taps_c) + 1,
            max(taps_r) - min(taps_r) + 1,
            facecolor=w.color if many else "none",
            edgecolor=w.color,
            linewidth=3.5 if w.differs else 2,
        )
    )
    ax.annotate(  # inside the window's top-left corner: no two windows share it
        w.tag,
        (x0, y0),
        xytext=(2, -2),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=7,
        fontweight="bold",
        color=w.color,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": w.color, "lw": 0.8},
        annotation_clip=False,
    )
    return hollow


def _draw_2d(
    report: LayerReport, panels: Sequence[Panel], windows: Sequence[Window], title: str
) -> Any:
    """The plane of the last two axes, one panel per convention side by side: regions as one
    image, windows tap by tap."""
    plt = _plt()
    (h0, h1), (w0, w1) = _union(panels, 2), _union(panels, 1)
    rows, cols = h1 - h0 + 1, w1 - w0 + 1
    n = len(panels)
    width = WIDTH_IN if n == 1 else min(5.2 * n, 15.0)
    plane_w = min(6.4 if n == 1 else (width - 0.8) / n - 0.6, 0.9 * cols)
    plane_h = min(max(plane_w * rows / cols, 1.2), 7.5)
    legend_h = 0.22 * (len(windows) + 5) / 2 + 0.5
    title_h = 0.5 + 0.2 * title.count("\n") + (0.3 if n > 1 else 0)
    fig, axs = plt.subplots(
        1,
        n,
        figsize=(width, plane_h + legend_h + title_h + 0.7),
        dpi=DPI,
        layout="constrained",
        squeeze=False,
    )
    kinds: set[str] = set()
    hollow = False
    drawn = report.axes[-2:]
    for ax, panel in zip(axs[0], panels, strict=True):
        ah, aw = panel.plan.axes[-2:]
        kinds |= _regions_2d(ax, ah, aw, (h0, h1, w0, w1))
        for w in windows:
            if w.cell[0] < ah.out and w.cell[1] < aw.out:
                hollow |= _window_2d(ax, panel.plan, w)
        ax.set_xlim(w0 - 0.5, w1 + 0.5)
        ax.set_ylim(h1 + 0.5, h0 - 0.5)
        _integer_ticks(ax, "x", cols)
        _integer_ticks(ax, "y", rows)
        ax.set_xlabel(f"axis {drawn[1].axis}: input position")
        ax.set_ylabel(f"axis {drawn[0].axis}: input position")
        if n > 1:
            ax.set_title(panel.title, fontsize=9, loc="left", pad=14)
    _head(fig, axs[0, 0], title, n)
    _legend(fig, kinds, windows, hollow)
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
    panels, refused = panels_of(report)
    differing = differing_windows(panels, slice_at)
    outs = [max(p.plan.axes[k - len(axes)].out for p in panels) for k in range(len(axes))]
    chosen = [tuple(c) for c in cells] if cells else _chosen(outs, differing)
    windows = _windows(report, panels, chosen, slice_at, differing)
    notes = [left_out(outs, chosen, differing, len(panels))]
    if len(panels) == 1 and len(panels[0].names) > 1:
        alike = ", ".join(n for n in panels[0].names if n != report.convention)
        notes.append(f"the {alike} convention(s) draw the same windows and divisors")
    if refused:
        who = " and ".join(SYSTEMS.get(n, n) for n in refused)
        notes.append(f"not drawn: {who} (refuses the layer; the text says why)")
    title = _title(report, slice_at, panels, notes)
    if len(axes) == 1:
        return _draw_1d(report, panels, windows, title)
    return _draw_2d(report, panels, windows, title)


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
