"""`--html` on compare and convert-report: one self-contained page, loaded in headless Chromium
(the system package; CI installs it) and measured there (tests/headless.py): the verdict, one
table row per layer, a heatmap of the differing cells whose count is the report's own, the
worst cell's two values, the attributes side by side, and nothing loaded from elsewhere.

The reports are made here, from models whose differences are known independently: D1 (openvino
divides the ceil overhang window by the whole kernel, PyTorch by the declared one: the last
output cell differs, docs/divergences.md) and D2 (onnxruntime drops a last window that starts
in the right padding: openvino's output has one row and column more)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import headless
import numpy as np
import pytest
from conftest import ROOT, irpool

import irpool as api
from irpool.audit import to_json
from irpool.html import render_html

D1 = str(ROOT / "fixtures/divergences/d1_avgpool_ceil.xml")
D2 = str(ROOT / "fixtures/divergences/d2_maxpool_ceil.onnx")
ZOO = str(ROOT / "fixtures/ir/pool_zoo.xml")


def page(tmp_path: Path, document: dict[str, Any], name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(render_html(document), encoding="utf-8")
    return path


def common(found: dict[str, Any], verdict: str, rows: int) -> None:
    assert found["external"] == []
    assert found["width"] <= found["viewport"], "the page scrolls sideways"
    (banner,) = found["verdict"]
    assert verdict in banner["text"]
    assert banner["box"]["visible"] and banner["box"]["y"] < 200
    assert len(found["rows"]) == rows and all(r["box"]["visible"] for r in found["rows"])


def test_page_is_self_contained_and_escapes_names() -> None:
    document = {
        "schema": "irpool.compare/1",
        "file": "m.xml",
        "oracle": "openvino 2026.4.1 CPU, INFERENCE_PRECISION_HINT=f32",
        "convention": "openvino",
        "passed": True,
        "layers": [{"layer": "<script>alert(1)</script>", "op": "MaxPool-1", "passed": True}],
    }
    text = render_html(document)
    assert "<script" not in text.lower() and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert not re.search(r"""(src|href)=["'](https?:|//)""", text) and "url(" not in text
    with pytest.raises(ValueError, match="compare or convert-report"):
        render_html({"schema": "irpool.check/1"})


@pytest.mark.oracle
def test_compare_page_of_d1(ov: Any, chromium: str, tmp_path: Path) -> None:
    report = api.compare(D1, convention="torch")
    assert not report.passed
    found = headless.probe(page(tmp_path, report.to_json(), "d1.html"))
    assert found["title"] == "irpool compare: d1_avgpool_ceil.xml \u2014 1 of 1 differ"
    common(found, "first diverging layer: \u201cpool\u201d; named divergences: D1", 1)
    (heatmap,) = found["heatmaps"]
    # D1: only the last window (the one over the ceil overhang) differs
    assert heatmap["diff"] == 1 and heatmap["worst"] == 1 and heatmap["box"]["visible"]
    dom = headless.dump_dom(tmp_path / "d1.html")
    assert "OpenVINO CPU plugin divides every window by the full kernel volume" in dom
    assert "<script" not in dom
    values = report.layers[0].outputs[0]
    assert repr(values.worst_irpool) in dom and repr(values.worst_openvino) in dom
    # the torch plan beside openvino's, in words
    assert "ceil, dropping a last window that starts in the right padding" in dom
    assert "each window by its taps up to the declared padding" in dom


@pytest.mark.oracle
def test_compare_page_counts_the_differing_cells(ov: Any, chromium: str, tmp_path: Path) -> None:
    report = api.compare(ZOO, convention="torch")
    document = report.to_json()
    found = headless.probe(page(tmp_path, document))
    bad = [layer for layer in document["layers"] if not layer["passed"]]
    common(found, f"{len(bad)} of 6 pooling layer(s) differ from openvino", 6)
    assert len(found["heatmaps"]) == sum(
        1 for layer in bad for o in layer["outputs"] if "mismatch_map" in o
    )
    maps = [o["mismatch_map"] for layer in bad for o in layer["outputs"] if "mismatch_map" in o]
    assert [h["diff"] for h in found["heatmaps"]] == [m["differing_cells"] for m in maps]
    # the map is the comparison's own count: its cells add up to the values that differ
    for layer in bad:
        for o in layer["outputs"]:
            if "mismatch_map" in o:
                assert sum(c[-1] for c in o["mismatch_map"]["cells"]) == o["mismatches"]


@pytest.mark.oracle
def test_all_agree_page(ov: Any, chromium: str, tmp_path: Path) -> None:
    report = api.compare(str(ROOT / "fixtures/real/squeezenet.xml"))
    found = headless.probe(page(tmp_path, report.to_json()))
    common(found, "All 4 pooling layer(s) agree with openvino", 4)  # 3 MaxPool, a ReduceMean
    assert found["heatmaps"] == [] and found["articles"] == []
    assert found["verdict"][0]["color"] == "rgb(30, 126, 52)"


@pytest.mark.oracle
def test_convert_report_page_of_d2(
    ov: Any, onnx: Any, ort: Any, chromium: str, tmp_path: Path
) -> None:
    x = np.random.default_rng(0).standard_normal((1, 1, 2, 2)).astype(np.float32)
    report = api.convert_report(D2, x)
    assert not report.same
    found = headless.probe(page(tmp_path, report.to_json()))
    common(found, "1 of 1 pooling node(s)", 1)
    assert "D2c" in found["rows"][0]["text"]
    (heatmap,) = found["heatmaps"]
    # openvino [1,1,2,2] against ONNX [1,1,1,1]: three cells only openvino has
    assert heatmap["diff"] == 3


@pytest.mark.oracle
def test_cli_writes_the_page_and_screenshot_shows_it(
    ov: Any, chromium: str, tmp_path: Path
) -> None:
    from PIL import Image

    target = tmp_path / "d1.html"
    result = irpool("compare", D1, "--convention", "torch", "--html", str(target))
    assert result.returncode == 1 and f"wrote {target}" in result.stdout
    again = irpool("compare", D1, "--html", str(target))
    assert again.returncode == 2 and "--force" in again.stderr  # never replaced silently
    shot = headless.screenshot(target, tmp_path / "page.png", 1280, 1400)
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    colours = {tuple(int(v) for v in p) for p in np.unique(pixels, axis=0)}
    assert (165, 15, 21) in colours  # the heatmap's darkest red: every plane differs there
    assert (253, 236, 234) in colours  # the red verdict's background


@pytest.mark.oracle
def test_convert_report_page_of_a_pytorch_program(
    ov: Any, torch: Any, chromium: str, tmp_path: Path
) -> None:
    """An audit (irpool.convert-report/3): avg_pool2d(3, 2, padding=1, ceil_mode=True) on 6x6
    gives 4x4 outputs; openvino divides the windows that reach the ceil overhang (the last row
    and the last column: 7 cells) by the whole kernel, PyTorch by its taps (D3)."""
    report = api.convert_report(str(ROOT / "fixtures/convert/conv_avgpool.pt2"))
    assert report.same is False
    found = headless.probe(page(tmp_path, to_json(report)))
    common(found, "1 of 1 pooling op(s) compute something else than PyTorch", 1)
    assert "D3" in found["rows"][0]["text"]
    (heatmap,) = found["heatmaps"]
    assert heatmap["diff"] == 7


def every_cell(text: str) -> list[list[tuple[str, list[float]]]]:
    """The tables of every value on a page: per table, per cell its class and its numbers
    (one per side shown)."""
    tables = re.findall(r'<table class="cells">(.*?)</table>', text, re.S)
    found = []
    for table in tables:
        cells = re.findall(r'<td class="([\w-]+)">(.*?)</td>', table)
        found.append(
            [
                (k, [float(v) for v in re.findall(r"<span[^>]*>([^<]*)</span>", inner)])
                for k, inner in cells
            ]
        )
    return found


@pytest.mark.oracle
def test_every_value_of_a_small_diverging_layer(ov: Any, tmp_path: Path) -> None:
    """D1 on x = 1..6 (AvgPool k3 s2 p1 ceil, padding counted): by hand, PyTorch divides the
    window over the ceil overhang (taps 5, 6(pad), 7(overhang)) by 2, openvino by 3; the page
    lists all four cells of both sides and shades that one alone."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    text = render_html(api.compare(D1, {"x": x}, convention="torch").to_json())
    padded = np.concatenate([[0.0], x.ravel(), [0.0, 0.0]])
    sums = [padded[2 * j : 2 * j + 3].sum() for j in range(4)]
    torch_values = [sums[0] / 3, sums[1] / 3, sums[2] / 3, sums[3] / 2]
    openvino_values = [s / 3 for s in sums]
    (table,) = every_cell(text)
    assert [k for k, _ in table] == ["same", "same", "same", "differs"]
    shown = np.array([v for _, v in table])
    np.testing.assert_allclose(shown[:, 0], torch_values, rtol=1e-5)  # irpool (torch) on top
    np.testing.assert_allclose(shown[:, 1], openvino_values, rtol=1e-5)
    assert "D1, include-pad divisor over the ceil overhang" in text
    assert "(3,)" not in text.split("<details>")[0]  # no Python tuples outside the raw JSON


@pytest.mark.oracle
def test_every_value_of_each_side_when_the_shapes_differ(
    ov: Any, onnx: Any, ort: Any, tmp_path: Path
) -> None:
    """D2c: MaxPool k3 s3 pads 1 ceil on 2x2: openvino keeps windows starting in the padding
    (2x2 output; the three empty ones give the lowest float32), ONNX one window: max(x)."""
    x = np.random.default_rng(0).standard_normal((1, 1, 2, 2)).astype(np.float32)
    text = render_html(api.convert_report(D2, x).to_json())
    openvino_side, onnx_side = every_cell(text)
    lowest = float(np.finfo(np.float32).min)
    assert [k for k, _ in openvino_side] == ["same", "only-a", "only-a", "only-a"]
    np.testing.assert_allclose(
        [v[0] for _, v in openvino_side], [x.max(), lowest, lowest, lowest], rtol=1e-5
    )
    assert onnx_side == [("same", [pytest.approx(float(x.max()), rel=1e-5)])]
