"""`irpool convert-report MODEL.xml` and compare's source line: which framework an IR came from
(the marks of fixtures/convert/marks/, written by openvino's own front ends on every conversion
route), and each layer against what that framework computes for its attributes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from irpool.api import load
from irpool.audit_ir import detect
from irpool.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONVERT = ROOT / "fixtures" / "convert"
MARKS = CONVERT / "marks"


@pytest.mark.parametrize(
    "name,framework",
    [
        ("torch_export_file", "torch"),
        ("torch_export_object", "torch"),
        ("torch_export_ovc", "torch"),
        ("torch_script_file", "torch"),
        ("torch_trace", "torch"),
        ("onnx_convert", "onnx"),
        ("onnx_read", "onnx"),
        ("tf_saved_model", "tf"),
        ("tf_keras", "tf"),
    ],
)
def test_the_front_end_is_detected(name: str, framework: str) -> None:
    guess = detect(load(str(MARKS / f"{name}.xml")))
    assert guess.framework == framework, guess.evidence
    assert guess.evidence and guess.assumed is None


def test_irpool_written_irs_have_no_mark() -> None:
    for path in ("fixtures/ir/pool_zoo.xml", "fixtures/divergences/d1_avgpool_ceil.xml"):
        guess = detect(load(str(ROOT / path)))
        assert guess.framework is None and guess.assumed == "torch"
        assert "no mark of a front end" in guess.evidence


def test_a_renamed_net_still_tells_by_its_layer_names(tmp_path: Path) -> None:
    text = (MARKS / "torch_script_file.xml").read_text()
    text = text.replace('<net name="Model9"', '<net name="renamed"')
    text = text.replace("<conversion_parameters>", "<other>").replace(
        "</conversion_parameters>", "</other>"
    )
    (tmp_path / "m.xml").write_text(text)
    shutil.copy(MARKS / "torch_script_file.bin", tmp_path / "m.bin")
    guess = detect(load(str(tmp_path / "m.xml")))
    assert guess.framework == "torch" and "aten::" in " ".join(guess.evidence)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.oracle
def test_convert_report_on_the_ir_against_torch_itself(
    ov: ModuleType, torch: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """The IR of the docs net: detected as PyTorch, its AvgPool-14 differs from F.avg_pool2d in
    21 cells, the numbers of torch's own avg_pool2d on openvino's input of the layer."""
    xml, x = str(CONVERT / "conv_avgpool.xml"), str(CONVERT / "x.npy")
    code, out, _ = run(capsys, "convert-report", xml, "-i", x, "--json")
    report = json.loads(out)
    assert code == 1 and report["source"]["framework"] == "torch"
    (op,) = report["ops"]
    assert op["same"] is False and op["divergence_id"] == "D1"
    assert op["call"].startswith("F.avg_pool2d(x, kernel_size=(3, 3), stride=(2, 2)")
    assert op["outputs"][0]["differing"] == 21
    # torch's value at the worst cell, on openvino's input of the layer (the conv's output)
    core = ov.Core()
    model = core.read_model(xml)
    pool = next(o for o in model.get_ordered_ops() if o.get_type_name() == "AvgPool")
    model.add_outputs([pool.input_value(0)])
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    values = compiled({0: np.load(x)})
    conv = next(np.asarray(v) for k, v in values.items() if tuple(v.shape) == (1, 3, 6, 6))
    want = torch.nn.functional.avg_pool2d(torch.from_numpy(conv), 3, 2, 1, ceil_mode=True).numpy()
    at = tuple(op["outputs"][0]["worst_index"])
    assert op["outputs"][0]["worst_source"] == pytest.approx(float(want[at]), rel=1e-6)


@pytest.mark.oracle
def test_other_sources_and_undetected_irs(
    ov: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    xml = str(CONVERT / "conv_avgpool.xml")
    code, out, _ = run(capsys, "convert-report", xml, "--source", "onnx")
    assert code == 1 and "source: ONNX (--source)" in out  # ceil_torch under onnxruntime: D1
    code, out, _ = run(capsys, "convert-report", xml, "--source", "tf")
    assert code == 0 and "skip" in out and "TensorFlow's pooling rounds sizes down" in out
    code, out, _ = run(capsys, "convert-report", "fixtures/divergences/d1_avgpool_ceil.xml")
    assert code == 1 and "source: NOT DETECTED (no mark of a front end); assumed PyTorch" in out
    code, _, err = run(
        capsys, "convert-report", xml, "-i", "fixtures/convert/x.npy", "--input-shape", "1,3,6,6"
    )
    assert code == 2 and "not both" in err


@pytest.mark.oracle
def test_compare_adds_the_source_line_and_keeps_its_exit_code(
    ov: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    xml, x = "fixtures/convert/conv_avgpool.xml", "fixtures/convert/x.npy"
    code, out, _ = run(capsys, "compare", xml, "-i", x)
    assert code == 0  # openvino computes the IR as written
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("converted from PyTorch"))
    assert "1 pooling layer(s) compute otherwise than PyTorch would" in lines[at]
    assert "21/48 values differ" in lines[at + 1] and "(D1)" in lines[at + 1]
    assert f"details: irpool convert-report {xml} -i {x} --layer" in lines[at + 1]
    code, out, _ = run(capsys, "compare", xml, "-i", x, "--json")
    data = json.loads(out)
    assert code == 0 and data["passed"] and data["source"]["framework"] == "torch"
    assert len(data["source"]["differing"]) == 1
    # an IR without marks: compare prints what it printed before
    code, out, _ = run(capsys, "compare", "fixtures/ir/pool_zoo.xml")
    assert code == 0 and "converted from" not in out
