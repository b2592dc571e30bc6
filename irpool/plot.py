"""`irpool explain --png`: the input grid, its padding and ceil overhang, and the windows of some
output cells of one layer, drawn with matplotlib (the `plot` extra, Agg backend)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from .errors import OracleMissing, UsageError
from .explain import FamilyReport, LayerReport, divisor_at, divisor_table
from .files import atomic_write_bytes
from .geometry import AxisPlan

WIDTH_PX = 900
HEIGHT_PX = 900
DPI = 100
COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


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
                f"--cell {text} has {len(cell)} value(s); expected {len(axes)} ({names}), one "
                f"per drawn axis of the output {outs}"
            )
        if any(not 0 <= j < n for j, n in zip(cell, outs, strict=True)):
            raise UsageError(f"--cell {text} is outside the output {outs}")


def draw_adaptive(
    report: FamilyReport, path: str, cells: Sequence[tuple[int, ...]] | None = None, depth: int = 0
) -> None:
    """A PNG of an adaptive pooling layer: the input grid of the last one or two spatial axes
    and the window [start, end) of some output cells (corners and centre by default)."""
    from .families.adaptive import AdaptiveAxis, AdaptivePlan

    plan = report.plan
    if not isinstance(plan, AdaptivePlan):
        raise UsageError(
            f"--png draws windowed and adaptive pooling layers; {report.op} is a {report.family} "
            "layer (its explanation is in the text and --json)"
        )
    axes = list(plan.axes)
    if len(axes) == 3:
        if not 0 <= depth < axes[0].out:
            raise UsageError(f"--depth {depth}: the first axis has {axes[0].out} windows")
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
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        raise OracleMissing("--png needs matplotlib; pip install 'irpool[plot]'") from None
    ah, aw = axes
    fig, ax = plt.subplots(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
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
        f"{report.layer} ({report.op}), {report.convention}: {list(report.input_shape)} -> "
        f"{list(report.output_shape)}\nwindow i: [floor(i*In/Out), ceil((i+1)*In/Out))",
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
    """Write a PNG of the layer to `path` (1-D or 2-D; 3-D layers show the last two axes at
    window `depth` of the first axis)."""
    if isinstance(report, FamilyReport):
        draw_adaptive(report, path, cells, depth)
        return
    assert report.plan is not None
    axes = list(report.plan.axes)
    if len(axes) > 3:
        raise UsageError("--png draws 1-D, 2-D and 3-D layers")
    if len(axes) == 3:
        if not 0 <= depth < axes[0].out:
            raise UsageError(f"--depth {depth}: the first axis has {axes[0].out} windows")
        axes = axes[1:]
    if any(a.out == 0 for a in axes):
        raise UsageError(f"the output {[a.out for a in axes]} has no window to draw")
    if cells:
        check_cells(cells, axes)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch, Rectangle
    except ImportError:
        raise OracleMissing("--png needs matplotlib; pip install 'irpool[plot]'") from None
    if len(axes) == 1:
        chosen: list[tuple[int, ...]] = [(0, c[0]) for c in (cells or default_cells(axes))]
        axes = [AxisPlan(1, 1, 1, 1, 0, 0, 1), axes[0]]
    else:
        chosen = [tuple(c) for c in (cells or default_cells(axes))]
    ah, aw = axes
    divisors: dict[tuple[int, ...], float] = {}
    table = divisor_table(report.plan)
    for cell in chosen:
        at = (
            (depth, *cell) if len(report.axes) == 3 else cell if len(report.axes) == 2 else cell[1:]
        )
        shown = divisor_at(report.plan, table, at)
        if shown is not None:
            divisors[cell] = shown

    def extent(a: AxisPlan) -> tuple[int, int]:
        last = a.start(a.out - 1) + (a.window - 1) * a.dilation  # the last tap of the last window
        return -a.pad_begin, max(last, a.size + a.pad_end - 1)

    (h0, h1), (w0, w1) = extent(ah), extent(aw)
    fig, ax = plt.subplots(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    for row in range(h0, h1 + 1):
        for col in range(w0, w1 + 1):
            face: str = "#fdd0a2"
            hatch: str | None = "//"
            if 0 <= row < ah.size and 0 <= col < aw.size:
                face, hatch = "white", None
            elif row < ah.size + ah.pad_end and col < aw.size + aw.pad_end:
                face, hatch = "#c6dbef", None
            ax.add_patch(
                Rectangle(
                    (col, row),
                    1,
                    1,
                    facecolor=face,
                    edgecolor="#999999",
                    linewidth=0.5,
                    hatch=hatch,
                )
            )
    ax.add_patch(Rectangle((0, 0), aw.size, ah.size, fill=False, edgecolor="black", linewidth=1.5))
    for k, cell in enumerate(chosen):
        color = COLORS[k % len(COLORS)]
        rows, cols = ah.taps(cell[0]), aw.taps(cell[1])
        for row in rows:
            for col in cols:
                ax.add_patch(
                    Rectangle(
                        (col + 0.15, row + 0.15),
                        0.7,
                        0.7,
                        facecolor=color,
                        alpha=0.35,
                        edgecolor=color,
                    )
                )
        ax.add_patch(
            Rectangle(
                (min(cols), min(rows)),
                max(cols) - min(cols) + 1,
                max(rows) - min(rows) + 1,
                fill=False,
                edgecolor=color,
                linewidth=2,
            )
        )
        label = ",".join(map(str, cell if len(report.axes) > 1 else cell[1:]))
        shown = divisors.get(cell)
        text = f"out {label}" + (f" /{shown:g}" if shown is not None else "")
        ax.text(
            min(cols) + 0.05, min(rows) + 0.35, text, color=color, fontsize=8, fontweight="bold"
        )
    ax.set_xlim(w0 - 0.2, w1 + 1.2)
    ax.set_ylim(h1 + 1.2, h0 - 0.2)
    ax.set_aspect("equal")
    ax.set_xlabel(f"axis {report.axes[-1].axis} position")
    if len(report.axes) > 1:
        ax.set_ylabel(f"axis {report.axes[-2].axis} position")
    ax.set_title(
        f"{report.layer} ({report.op}), {report.convention}: "
        f"{list(report.input_shape)} -> {list(report.output_shape)}",
        fontsize=10,
    )
    ax.legend(
        handles=[
            Patch(facecolor="white", edgecolor="#999999", label="input"),
            Patch(facecolor="#c6dbef", label="declared padding"),
            Patch(facecolor="#fdd0a2", hatch="//", label="ceil overhang"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        ncol=3,
        fontsize=8,
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())
