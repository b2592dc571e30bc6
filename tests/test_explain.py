"""`irpool explain`: numbers checked by hand for the D1 and D2 cases of docs/semantics.md, the
picture, and the JSON twin."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from irpool.explain import explain_graph
from irpool.frontends.ir_xml import parse_text

ROOT = Path(__file__).resolve().parent.parent

D1 = """<layer id="1" name="d1" type="AvgPool" version="opset1">
  <data kernel="3" strides="2" pads_begin="1" pads_end="1" exclude-pad="false" rounding_type="ceil"/>
  <input><port id="0"><dim>1</dim><dim>1</dim><dim>6</dim></port></input>
  <output><port id="1"><dim>1</dim><dim>1</dim><dim>4</dim></port></output>
</layer>"""

D2 = """<layer id="1" name="d2" type="AvgPool" version="opset1">
  <data kernel="3" strides="3" pads_begin="1" pads_end="1" exclude-pad="true" rounding_type="ceil"/>
  <input><port id="0"><dim>1</dim><dim>1</dim><dim>2</dim></port></input>
  <output><port id="1"><dim>1</dim><dim>1</dim><dim>2</dim></port></output>
</layer>"""


def test_d1_divisors_of_the_overhang_window() -> None:
    (report,) = explain_graph(parse_text(D1, "d1.xml"))
    (axis,) = report.axes
    # ceil((6 + 1 + 1 - 3) / 2) + 1 = 4 windows starting at -1, 1, 3, 5
    assert axis.formula == "ceil((6 + 1 + 1 - 3) / 2) + 1 = 4"
    assert axis.padded_windows == [0, 3] and axis.overhang_windows == [3]
    last = next(b for b in report.borders if b.index == (3,))
    # window 3 = {x5, pad, overhang}: openvino counts the whole kernel, the others the two
    # positions within the declared pads
    assert last.taps_in_input == 1
    assert last.divisors == {"openvino": 3.0, "onnx": 2.0, "torch": 2.0}
    assert (
        last.note
        == "OpenVINO divides this window by 3; onnxruntime and PyTorch divide this window by 2"
    )
    first = next(b for b in report.borders if b.index == (0,))
    assert first.divisors == {"openvino": 3.0, "onnx": 3.0, "torch": 3.0} and first.note is None


def test_d2_extra_window_only_in_openvino() -> None:
    (report,) = explain_graph(parse_text(D2, "d2.xml"))
    (axis,) = report.axes
    # openvino keeps a window starting at 3 - 1 = 2 = n: positions 2 (pad), 3, 4 (overhang)
    assert report.output_shape == (1, 1, 2)
    assert (
        axis.empty_windows == [1]
        and axis.last_window == "window 1: taps at 2(pad), 3(overhang), 4(overhang)"
    )
    assert "NaN" in report.empty_result
    assert "onnx: output [1,1,1]" in report.conventions["onnx"] or report.conventions[
        "onnx"
    ].startswith("output [1,1,1]")
    extra = next(b for b in report.borders if b.index == (1,))
    assert extra.divisors["onnx"] is None and extra.divisors["torch"] is None
    assert "onnxruntime and PyTorch have no such window" in (extra.note or "")


def test_d2_under_torch_convention_drops_the_window() -> None:
    (report,) = explain_graph(parse_text(D2, "d2.xml"), convention="torch")
    assert report.output_shape == (1, 1, 1)
    assert "minus 1" in report.axes[0].formula


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(
    "model,layer",
    [
        ("fixtures/ir/pool_zoo.xml", "ap1_ceil"),
        ("fixtures/ir/ranks.xml", "avg1d"),
        ("fixtures/ir/ranks.xml", "max3d"),
    ],
)
def test_png_is_written(tmp_path: Path, model: str, layer: str) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "w.png"
    result = subprocess.run(
        [sys.executable, "-m", "irpool", "explain", model, "--layer", layer, "--png", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert _png_size(out) == (900, 900)


def test_cli_json_and_unknown_layer() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "irpool",
            "explain",
            "fixtures/ir/pool_zoo.xml",
            "--layer",
            "mp8_indices",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    doc = json.loads(result.stdout)
    assert doc["schema"] == "irpool.explain/1"
    (layer,) = doc["layers"]
    assert layer["op"] == "MaxPool-8" and layer["output_shape"] == [1, 3, 9, 9]
    bad = subprocess.run(
        [sys.executable, "-m", "irpool", "explain", "fixtures/ir/pool_zoo.xml", "--layer", "nope"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "mp8_indices" in bad.stderr
