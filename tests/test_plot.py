"""plot.py: the pictures of `explain --png` for 1-D, 2-D and 3-D layers, measured on the
figure matplotlib lays out (nothing drawn over anything else, whole-number ticks, a title that
says which slice of a 3-D layer is drawn)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")
import irpool
from irpool import plot

ROOT = Path(__file__).resolve().parent.parent


def layer(model: str, name: str | None = None) -> Any:
    (report,) = irpool.explain(str(ROOT / model), layer=name)
    return report


@pytest.fixture
def figures() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    import matplotlib.pyplot as plt

    for fig in made:
        plt.close(fig)


def laid_out(fig: Any) -> tuple[Any, Any, Any]:
    """The renderer, the drawing's box and the legend's box of a drawn figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    (legend,) = fig.legends
    return renderer, ax.get_window_extent(renderer), legend.get_window_extent(renderer)


def tick_values(ax: Any, axis: str) -> list[float]:
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    return [float(t) for t in ticks if lo <= t <= hi]


def test_1d_is_a_strip_with_lanes_and_the_legend_below(figures: list[Any]) -> None:
    fig = plot.figure(layer("fixtures/divergences/d1_avgpool_ceil.xml"))
    figures.append(fig)
    _, drawing, legend = laid_out(fig)
    width, height = fig.get_size_inches()
    assert height < width / 2  # no empty square around a thin strip
    assert legend.y1 <= drawing.y0  # the legend is under the drawing, not over it
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["input", "out 0", "out 2", "out 3"]
    ticks = tick_values(ax, "x")
    assert ticks and all(t == int(t) for t in ticks)
    labels = [t.get_text() for t in legend_texts(fig)]
    assert "ceil overhang (beyond pads_end)" in labels
    assert "out 3: 1 of 3 taps in the input, divided by 3" in labels


def legend_texts(fig: Any) -> list[Any]:
    (legend,) = fig.legends
    return [t for t in legend.get_texts() if t.get_text().strip()]


def test_long_1d_axis_has_round_integer_ticks(figures: list[Any]) -> None:
    fig = plot.figure(layer("fixtures/ir/ranks.xml", "avg1d"))
    figures.append(fig)
    (ax,) = fig.axes
    fig.canvas.draw()
    ticks = tick_values(ax, "x")
    assert len(ticks) >= 4 and all(t == int(t) for t in ticks)
    assert "ceil overhang (beyond pads_end)" not in [t.get_text() for t in legend_texts(fig)]


def test_2d_plane(figures: list[Any]) -> None:
    report = layer("fixtures/ir/pool_zoo.xml", "ap1_ceil")
    fig = plot.figure(report)
    figures.append(fig)
    renderer, drawing, legend = laid_out(fig)
    assert legend.y1 <= drawing.y0
    (ax,) = fig.axes
    for axis in ("x", "y"):
        ticks = tick_values(ax, axis)
        assert len(ticks) >= 4 and all(t == int(t) for t in ticks)
    assert ax.get_title(loc="left").startswith("ap1_ceil (AvgPool-1), openvino convention")
    title = ax._left_title.get_window_extent(renderer)  # matplotlib keeps loc="left" there
    for tag in ax.texts:  # the window tags: inside the figure, clear of the title
        box = tag.get_window_extent(renderer)
        assert not box.overlaps(title), tag.get_text()
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1


def test_3d_title_names_the_slice(figures: list[Any]) -> None:
    fig = plot.figure(layer("fixtures/ir/ranks.xml", "max3d"), depth=4)
    figures.append(fig)
    (ax,) = fig.axes
    title = ax.get_title(loc="left")
    assert "slice drawn: window 4 of 5 on axis 2 (input positions 7, 8, 9(pad))" in title
    assert "axes 3 and 4" in title
    assert ax.get_xlabel() == "axis 4: input position"
    assert ax.get_ylabel() == "axis 3: input position"
    labels = [t.get_text() for t in legend_texts(fig)]
    assert "out 0,0: 6 of 18 taps in the input (3 of 6 per drawn plane)" in labels


def test_large_plane_is_quick_and_one_image(figures: list[Any]) -> None:
    import time

    report = layer("fixtures/real/squeezenet.xml", "n2")
    t0 = time.perf_counter()
    fig = plot.figure(report)
    figures.append(fig)
    fig.canvas.draw()
    assert time.perf_counter() - t0 < 5
    (ax,) = fig.axes
    assert len(ax.images) == 1
    assert len(ax.patches) < 50  # no patch per input cell


def test_draw_writes_a_png(tmp_path: Path) -> None:
    target = tmp_path / "w.png"
    plot.draw(layer("fixtures/ir/ranks.xml", "avg1d"), str(target))
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == 900 and height < 450


def test_cells_are_checked() -> None:
    from irpool.errors import UsageError

    report = layer("fixtures/ir/ranks.xml", "avg1d")
    with pytest.raises(UsageError, match="expected 1"):
        plot.figure(report, [(0, 1)])
    with pytest.raises(UsageError, match="outside the output"):
        plot.figure(report, [(17,)])
    with pytest.raises(UsageError, match="depth 5"):
        plot.figure(layer("fixtures/ir/ranks.xml", "max3d"), depth=5)
