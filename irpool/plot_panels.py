"""The conventions `explain --png` draws side by side: which conventions compute a layer's
windows alike (one panel each group), the windows where the panels differ (another divisor,
or a window only some have), and the words the picture uses for them.  numpy only; plot.py
draws."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .explain import SYSTEMS, LayerReport, divisor_at, divisor_table
from .geometry import AxisPlan, PoolPlan

WINDOWS_COMPARED_UP_TO = 1 << 20
"""Conventions are compared window by window on outputs up to this many spatial cells (past
it, by their divisor rule)."""


@dataclass(frozen=True)
class Panel:
    """One picture of the layer: the plan of one convention, or of several conventions that
    have the same windows with the same divisors."""

    names: tuple[str, ...]
    plan: PoolPlan

    @property
    def title(self) -> str:
        names = [SYSTEMS.get(n, n) for n in self.names]
        who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        plural = "s" if len(self.names) > 1 else ""
        return f"{who} ({', '.join(self.names)} convention{plural})"

    @property
    def who(self) -> str:
        return ", ".join(SYSTEMS.get(n, n) for n in self.names)


def _divisor_grid(q: PoolPlan) -> npt.NDArray[Any] | None:
    """The divisor of every window of a plan, shaped like its spatial output (None: max)."""
    table = divisor_table(q)
    shape = tuple(a.out for a in q.axes)
    if table is None:
        return None
    if isinstance(table, float):
        return np.full(shape, table)
    grid = np.asarray(table[0])
    for vector in table[1:]:
        grid = np.multiply.outer(grid, vector)
    return np.asarray(grid, dtype=np.float64).reshape(shape)


def _signature(q: PoolPlan) -> tuple[Any, ...]:
    """What a panel shows of a plan: its windows, and the divisor of each."""
    pads = tuple((a.pad_begin, a.pad_end) for a in q.axes)
    if q.reduce != "mean":
        return (q.output_shape, pads)
    if math.prod(a.out for a in q.axes) > WINDOWS_COMPARED_UP_TO:
        return (q.output_shape, pads, q.divisor)
    grid = _divisor_grid(q)
    return (q.output_shape, pads, None if grid is None else grid.tobytes())


def panels_of(report: LayerReport) -> tuple[list[Panel], list[str]]:
    """The panels to draw, the report's own convention first, then each other convention
    that computes the layer differently (conventions that agree share a panel); and the
    conventions that refuse the layer."""
    assert report.plan is not None
    plans: dict[str, PoolPlan | str] = {report.convention: report.plan, **report.plans}
    plans[report.convention] = report.plan
    groups: dict[tuple[Any, ...], tuple[list[str], PoolPlan]] = {}
    for name, q in plans.items():
        if isinstance(q, PoolPlan):
            groups.setdefault(_signature(q), ([], q))[0].append(name)
    refused = [name for name, q in plans.items() if isinstance(q, str)]
    return [Panel(tuple(names), q) for names, q in groups.values()], refused


def differing_windows(panels: Sequence[Panel], depth: int | None) -> list[tuple[int, ...]]:
    """The windows of the drawn plane where the panels differ: a window only some of them
    have, or one they divide differently (C order)."""
    if len(panels) < 2:
        return []
    shapes = [tuple(a.out for a in p.plan.axes) for p in panels]
    union = tuple(max(n) for n in zip(*shapes, strict=True))
    if math.prod(union) > WINDOWS_COMPARED_UP_TO:
        return []
    grids = []
    for panel, shape in zip(panels, shapes, strict=True):
        grid = np.full(union, np.inf)  # inf: no such window in this panel
        grid[tuple(slice(0, n) for n in shape)] = _divisor_grid(panel.plan)
        if panel.plan.reduce != "mean":
            grid[tuple(slice(0, n) for n in shape)] = 0.0
        grids.append(grid if depth is None else grid[depth])
    differs = np.zeros(grids[0].shape, dtype=bool)
    for grid in grids[1:]:
        differs |= grid != grids[0]
    return [tuple(int(i) for i in idx) for idx in np.argwhere(differs)]


def has(q: PoolPlan, full: tuple[int, ...]) -> bool:
    return all(j < a.out for a, j in zip(q.axes, full, strict=True))


def divided(panels: Sequence[Panel], full: tuple[int, ...]) -> str:
    """', divided by 3', or per panel ', divided by 3 (OpenVINO) / 2 (PyTorch)', or which
    panels have the window when not all do."""
    shown = []
    for panel in panels:
        if not has(panel.plan, full):
            shown.append((f"no such window in {panel.who}", panel))
            continue
        d = divisor_at(panel.plan, divisor_table(panel.plan), full)
        shown.append((f"{d:g}" if d is not None else "", panel))
    values = {text for text, _ in shown}
    if len(values) == 1:
        (text,) = values
        return f", divided by {text}" if text else ""
    if all(not t or t.startswith("no such") for t in values):
        return "; " + "; ".join(t for t, _ in shown if t)
    parts = [t if t.startswith("no such") else f"{t} ({p.who})" for t, p in shown]
    return ", divided by " + " / ".join(parts)


def cells_text(cells: Sequence[tuple[int, ...]], limit: int = 4) -> str:
    shown = [",".join(map(str, c)) for c in cells[:limit]]
    return " ".join(f"({s})" for s in shown) + (" ..." if len(cells) > limit else "")


def left_out(
    outs: Sequence[int],
    chosen: Sequence[tuple[int, ...]],
    differing: Sequence[tuple[int, ...]],
    panels: int,
) -> str:
    """Which windows the picture leaves out, and whether the panels differ there."""
    total = math.prod(outs)
    if total <= len(set(chosen)):
        return "every window drawn"
    missing = [c for c in differing if c not in chosen]
    if len(outs) == 1:
        left = [j for j in range(outs[0]) if (j,) not in chosen]
        shown = ", ".join(map(str, left[:8])) + (" ..." if len(left) > 8 else "")
        text = f"window{'s' if len(left) > 1 else ''} left out: {shown}"
    else:
        text = f"{total - len(set(chosen))} of {total} windows left out"
    if panels < 2:
        return text
    if not missing:
        return text + (" (the panels agree there)")
    verb = "differs" if len(missing) == 1 else "differ"
    return text + f", {len(missing)} of them {verb} between the panels: {cells_text(missing)}"


def counted_taps(q: PoolPlan, a: AxisPlan, positions: Sequence[int]) -> list[bool]:
    """Per tap position: whether the plan's divisor counts it (every tap of a max window)."""
    if q.reduce != "mean" or q.divisor == "full":
        return [True] * len(positions)
    lo, hi = (0, a.size) if q.divisor == "in_input" else (-a.pad_begin, a.size + a.pad_end)
    return [lo <= p < hi for p in positions]
