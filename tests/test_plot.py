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
    """The renderer, the lowest drawing's box and the legend's box of a drawn figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[-1]
    (legend,) = fig.legends
    return renderer, ax.get_window_extent(renderer), legend.get_window_extent(renderer)


def tick_values(ax: Any, axis: str) -> list[float]:
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    return [float(t) for t in ticks if lo <= t <= hi]


def test_1d_is_a_strip_with_lanes_and_the_legend_below(figures: list[Any]) -> None:
    fig = plot.figure(layer("fixtures/ir/ranks.xml", "avg1d"))
    figures.append(fig)
    _, drawing, legend = laid_out(fig)
    width, height = fig.get_size_inches()
    assert height < width / 2  # no empty square around a thin strip
    assert legend.y1 <= drawing.y0  # the legend is under the drawing, not over it
    (ax,) = fig.axes  # every convention computes it alike: one panel
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "input" and all(t.startswith("out ") for t in labels[1:])
    assert "draw the same windows and divisors" in ax.get_title(loc="left")


def test_1d_divergence_is_drawn_side_by_side(figures: list[Any]) -> None:
    """D1: AvgPool k3 s2 p1 ceil on 6: window 3 has taps 5, 6 (pad), 7 (overhang); openvino
    divides by all 3 taps, onnxruntime and PyTorch by the 2 up to the declared padding."""
    fig = plot.figure(layer("fixtures/divergences/d1_avgpool_ceil.xml"))
    figures.append(fig)
    _, drawing, legend = laid_out(fig)
    assert legend.y1 <= drawing.y0
    top, bottom = fig.axes
    assert top.get_title(loc="left") == "OpenVINO (openvino convention)"
    assert bottom.get_title(loc="left") == ("onnxruntime and PyTorch (onnx, torch conventions)")
    head = fig._suptitle.get_text()
    assert "divergence D1: include-pad divisor over the ceil overhang" in head
    assert "every window drawn" in head and "TensorFlow" in head  # tf refuses ceil
    for ax in (top, bottom):  # 4 windows, all drawn; the one over the overhang marked
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == ["input", "out 0", "out 1", "out 2", "out 3 \u2260"]
    shown = [t.get_text() for t in legend_texts(fig)]
    taps = [3 * 2 - 1 + t for t in range(3)]  # window 3 by hand
    declared = sum(1 for p in taps if -1 <= p < 6 + 1)
    assert (
        f"out 3 \u2260: 1 of 3 taps in the input, divided by 3 (OpenVINO) / {declared} "
        "(onnxruntime, PyTorch)"
    ) in shown
    assert "tap not counted in the divisor" in shown


def test_a_window_only_one_convention_has(figures: list[Any]) -> None:
    """D2: MaxPool k3 s3 pads 1 ceil on 2x2: ceil((2 + 2 - 3) / 3) + 1 = 2 windows per axis
    for openvino; the last starts at 3 - 1 = 2, in the right padding, so onnxruntime drops
    it: one window.  The ONNX node's own panel comes first."""
    pytest.importorskip("onnx")
    fig = plot.figure(layer("fixtures/divergences/d2_maxpool_ceil.onnx"))
    figures.append(fig)
    onnx_panel, openvino_panel = fig.axes
    assert onnx_panel.get_title(loc="left").startswith("onnxruntime, PyTorch and TensorFlow")
    assert openvino_panel.get_title(loc="left") == "OpenVINO (openvino convention)"
    assert [t.get_text() for t in onnx_panel.texts] == ["0,0"]
    assert sorted(t.get_text() for t in openvino_panel.texts) == [
        "0,0",
        "0,1 \u2260",
        "1,0 \u2260",
        "1,1 \u2260",
    ]
    assert "divergence D2:" in fig._suptitle.get_text()


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
    """ap1_ceil: AvgPool k3 s2 p1 ceil on 32x32, 17 windows per axis; window 16 has taps 31,
    32 (pad), 33 (overhang), so the conventions divide the 17 + 17 - 1 = 33 windows of the
    last row and column differently; 5 windows are drawn (corners and centre), 3 of them
    among those 33."""
    report = layer("fixtures/ir/pool_zoo.xml", "ap1_ceil")
    fig = plot.figure(report)
    figures.append(fig)
    renderer, drawing, legend = laid_out(fig)
    assert legend.y1 <= drawing.y0
    assert len(fig.axes) == 2
    for ax in fig.axes:
        for axis in ("x", "y"):
            ticks = tick_values(ax, axis)
            assert len(ticks) >= 4 and all(t == int(t) for t in ticks)
    head = fig._suptitle.get_text()
    assert head.startswith("ap1_ceil (AvgPool-1): [1,3,32,32]")
    assert "284 of 289 windows left out, 30 of them differ between the panels" in head
    titles = [fig._suptitle.get_window_extent(renderer)]
    titles += [ax._left_title.get_window_extent(renderer) for ax in fig.axes]
    for ax in fig.axes:
        for tag in ax.texts:  # the window tags: inside the figure, clear of the titles
            box = tag.get_window_extent(renderer)
            assert not any(box.overlaps(t) for t in titles), tag.get_text()
            assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1


def test_a_layer_every_convention_computes_alike_has_one_panel(figures: list[Any]) -> None:
    fig = plot.figure(layer("fixtures/ir/pool_zoo.xml", "mp1"))
    figures.append(fig)
    (ax,) = fig.axes
    title = ax.get_title(loc="left")
    assert title.startswith("mp1 (MaxPool-1), openvino convention")
    assert "251 of 256 windows left out" in title  # 16 x 16 windows, 5 drawn


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
