"""`irpool fuzz`: the verdicts against the runtimes themselves, a short seeded campaign, the
bundles' repro scripts, the command-line contract; the long campaign is opt-in (`-m fuzz`).

The truth here is the runtimes: each named divergence a campaign reports is re-run by hand (the
IR in openvino, the ONNX node in onnxruntime, straight from the case) and must differ there, and
the divergence's own predicate must hold on irpool's plans of the two sides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT
from jsonschema import Draft202012Validator

from irpool import divergences as dv
from irpool import schemas
from irpool.cli import main
from irpool.fuzz import bundle, realize
from irpool.fuzz.campaign import Options, run_campaign
from irpool.fuzz.judge import Finding, Workspace, judge
from irpool.fuzz.spec import Spec, values
from irpool.oracles import direct, onnxruntime_rt, openvino_rt

pytestmark = pytest.mark.oracle

SIDES = ("openvino", "onnxruntime", "openvino-onnx")


def _window(**kw: Any) -> Spec:
    base: dict[str, Any] = dict(
        kind="window", reduce="max", dtype="float32", shape=(1, 1, 6), window=(3,),
        strides=(2,), pads_begin=(1,), pads_end=(1,), dilations=(1,), fill="ramp",
    )  # fmt: skip
    base.update(kw)
    return Spec(**base)


def _explained(spec: Spec, tmp_path: Path, sides: tuple[str, ...] = SIDES) -> dict[Any, Any]:
    v = judge(spec, sides, Workspace(str(tmp_path / "ws")))
    assert not v.reportable, [f.text for f in v.reportable]
    return {f.runtimes: f.ids for f in v.findings if f.category == "explained"}


def test_d1_named_for_the_runtimes_and_the_onnx_conversion(
    ov: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    spec = _window(reduce="mean", ceil=True, count_pad=True, ov_version=1, onnx_opset=19)
    v = judge(spec, SIDES, Workspace(str(tmp_path)))
    # the measured numbers of D1 (docs/divergences.md): x = 1..6, k3 s2 p1 ceil
    assert v.sides["openvino"].outputs[0].ravel().tolist() == [1, 3, 5, 2]
    assert v.sides["onnxruntime"].outputs[0].ravel().tolist() == [1, 3, 5, 3]
    assert v.sides["openvino-onnx"].outputs[0].ravel().tolist() == [1, 3, 5, 2]
    ids = _explained(spec, tmp_path)
    assert ids[("openvino", "onnxruntime")] == ("D1",)
    assert ids[("openvino-onnx", "onnxruntime")][0] == "D1"


def test_ceil_rules_d2_and_d2c(ov: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    spec = _window(shape=(1, 1, 5), window=(2,), ceil=True, ov_version=8, onnx_opset=12)
    ids = _explained(spec, tmp_path)
    assert ids[("openvino", "onnxruntime")][0] == "D2"
    assert ids[("openvino-onnx", "onnxruntime")][0] == "D2c"


def test_nan_in_reducemax_d17_and_d18(ov: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    lane_end = Spec(
        "global", "max", "float32", (1, 1, 16), fill="constant", specials=((15, "nan"),)
    )
    v = judge(lane_end, SIDES, Workspace(str(tmp_path)))
    assert np.isnan(v.sides["onnxruntime"].outputs[0]).all()
    assert v.sides["openvino"].outputs[0].item() == np.finfo(np.float32).min
    assert _explained(lane_end, tmp_path)[("openvino", "onnxruntime")] == ("D17",)
    second = Spec("global", "max", "float32", (1, 1, 2), fill="constant", specials=((1, "nan"),))
    assert _explained(second, tmp_path)[("openvino", "onnxruntime")] == ("D18",)


def test_an_irpool_bug_is_caught_shrunk_and_bundled(
    ov: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """openvino made to compute something else than irpool's openvino convention: every case is
    an irpool bug, and hypothesis shrinks it to a one-element input."""
    real = direct.openvino_run_ir

    def off_by_one(xml: str, weights: bytes, inputs: Any) -> list[np.ndarray]:
        outs = real(xml, weights, inputs)
        return [o + np.ones((), o.dtype) if o.size else o for o in outs]

    monkeypatch.setattr(direct, "openvino_run_ir", off_by_one)
    options = Options(
        str(tmp_path), ("window",), ("openvino",), budget=2, seed=1, chunk=5, shrink_grace=20
    )
    stats = run_campaign(options)
    (signature,) = stats.findings
    assert signature == "irpool-bug:openvino"
    spec, verdict, finding = stats.findings[signature]["minimal"]
    assert int(np.prod(spec.shape)) <= 2 and not spec.specials, spec
    assert stats.findings[signature]["blob"].startswith("@reproduce_failure(")
    folder = bundle.write(str(tmp_path / "findings"), "bug", verdict, finding, None, {})
    meta = json.loads(Path(folder, "meta.json").read_text())
    assert Spec.from_json(meta["spec"]) == spec
    assert {"model.xml", "input.npy", "expected.npz", "repro.py"} <= set(os.listdir(folder))


@pytest.mark.slow
def test_a_bundle_reproduces_a_disagreement_and_says_when_it_is_gone(
    ov: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """A bundle's repro.py runs the runtimes themselves: openvino and onnxruntime on D1's case
    disagree (exit 1); openvino and irpool's openvino convention agree (exit 0)."""
    spec = _window(reduce="mean", ceil=True, count_pad=True, ov_version=1, onnx_opset=19)
    v = judge(spec, ("openvino", "onnxruntime"), Workspace(str(tmp_path / "ws")))
    for name, finding, code in (
        ("two", Finding("new", ("openvino", "onnxruntime"), (), "D1"), 1),
        ("one", Finding("irpool-bug", ("openvino",), (), "none"), 0),
    ):
        folder = bundle.write(str(tmp_path / "findings"), name, v, finding, "blob", {})
        run = subprocess.run(
            [sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == code, run.stdout + run.stderr
        assert ("the finding reproduces" in run.stdout) == (code == 1)


def test_openvino_over_an_empty_axis_is_refused_not_guessed(
    ov: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """Found by a campaign: a pool over a zero-length axis whose pads give it an output is
    uninitialised memory in openvino's CPU plugin (D40); irpool's openvino convention refuses
    it, and with MaxPool-8's indices used (the lowest float) computes it."""
    spec = _window(shape=(1, 1, 0), window=(1,), strides=(1,), pads_begin=(0,), pads_end=(1,))
    v = judge(spec, SIDES, Workspace(str(tmp_path / "ws")))
    assert not v.reportable
    converted = v.sides["openvino-onnx"]  # the indices output unused
    assert converted.outputs is not None and "uninitialised" in str(converted.irpool_refused)
    ir = v.sides["openvino"]  # MaxPool-8 with its indices a Result
    assert ir.agrees and ir.outputs[0].item() == np.finfo(np.float32).min


@pytest.mark.slow
def test_tf_side_reproduced_by_the_tf_convention(
    ov: ModuleType, tf: ModuleType, tmp_path: Path
) -> None:
    """TensorFlow's SAME average (taps inside only) and max, each what irpool's tf convention
    computes; against openvino's include-pad average the table names the divisor."""
    for reduce in ("mean", "max"):
        spec = _window(
            reduce=reduce, shape=(1, 2, 5, 4), window=(3, 2), strides=(2, 2), pads_begin=(0, 0),
            pads_end=(0, 0), dilations=(1, 1), auto_pad="same_upper", fill="uniform",
        )  # fmt: skip
        v = judge(spec, ("openvino", "tf"), Workspace(str(tmp_path)))
        assert v.sides["tf"].agrees and v.sides["openvino"].agrees
        assert not v.reportable


@pytest.mark.slow
def test_d3_named_for_openvinos_pytorch_front_end(
    ov: ModuleType, torch: ModuleType, tmp_path: Path
) -> None:
    """avg_pool2d(k3, s2, p1, ceil_mode, count_include_pad) converted by openvino: 7 of 16
    cells differ from PyTorch on a 6x6 ramp (docs/divergences.md, D3), each side reproduced."""
    spec = _window(
        reduce="mean", shape=(1, 1, 6, 6), window=(3, 3), strides=(2, 2), pads_begin=(1, 1),
        pads_end=(1, 1), dilations=(1, 1), ceil=True, count_pad=True, ov_version=14,
    )  # fmt: skip
    v = judge(spec, ("torch", "openvino-torch"), Workspace(str(tmp_path)))
    assert v.sides["openvino-torch"].plan.op == "AvgPool-14"
    (found,) = v.findings
    assert found.category == "explained" and found.ids[0] == "D3", found
    assert found.text.startswith("7/16 values differ")


def recheck(sample: dict[str, Any], tmp_path: Path) -> None:
    """A reported explained case, re-run by hand: the two runtimes differ on it, and the
    divergence the campaign named separates irpool's plans of the two sides."""
    spec = Spec.from_json(sample["spec"])
    x = values(spec)
    outs: dict[str, np.ndarray] = {}
    for runtime in sample["runtimes"]:
        if runtime == "torch":
            call = realize.torch_call(spec)
            assert call is not None
            outs[runtime] = direct.torch_call(call.function, x, call.kwargs)[0]
        elif runtime == "openvino":
            xml, weights = realize.ir_files(spec)
            model = openvino_rt.read_xml(xml, weights)
            outs[runtime] = openvino_rt.infer(openvino_rt.compile_model(model), [x])[0]
        else:
            node = realize.onnx_node(spec)
            assert node is not None
            model = onnxruntime_rt.node_model(node.op, node.attrs, [x], node.opset)
            if runtime == "onnxruntime":
                outs[runtime] = onnxruntime_rt.run(model, {"in0": x})[0]
            else:
                path = str(tmp_path / "recheck.onnx")
                Path(path).write_bytes(model.SerializeToString())
                outs[runtime] = direct.openvino_run_onnx(path, [x])[0]
    a, b = (outs[r] for r in sample["runtimes"])
    differ = a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
    assert differ, sample
    known = {d.id for d in dv.TABLE}
    assert set(sample["ids"]) <= known | {"D17"}, sample


def _valid(doc: dict[str, Any]) -> None:
    Draft202012Validator(schemas.for_document(doc)).validate(doc)


def test_a_short_seeded_campaign(ov: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    from irpool.fuzz import fuzz

    out = tmp_path / "campaign"
    doc = fuzz(str(out), runtimes=("openvino", "onnxruntime"), budget=3, seed=0, chunk=10)
    _valid(doc)
    assert doc["cases"] > 0 and doc["per_runtime"]["openvino"]["ran"] > 0
    assert doc["exit_code"] == (1 if doc["new"] or doc["irpool_bugs"] else 0)
    for name in ("summary.json", "summary.txt", "summary.html", "campaign.json"):
        assert (out / name).is_file()
    assert json.loads((out / "summary.json").read_text())["cases"] == doc["cases"]
    page = (out / "summary.html").read_text()
    assert f"{doc['cases']} cases" in page and "<h2>Runtimes</h2>" in page
    assert f"{doc['cases']} cases" in (out / "summary.txt").read_text()
    for d in doc["divergences"].values():
        for sample in d["samples"]:
            recheck(sample, tmp_path)
    for f in doc["new"] + doc["irpool_bugs"]:
        assert f["bundle"] and (out / f["bundle"] / "repro.py").is_file()
    # the same folder again: a campaign's folder is resumed, not refused
    again = fuzz(str(out), runtimes=("openvino",), budget=1, seed=0, chunk=5)
    _valid(again)


def test_cli_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    for args in (
        ["fuzz", "-o", str(mine), "--budget", "1"],
        ["fuzz", "-o", str(tmp_path / "x"), "--runtimes", "caffe"],
        ["fuzz", "-o", str(tmp_path / "x"), "--ops", "lp"],
        ["fuzz", "-o", str(tmp_path / "x"), "--budget", "0"],
        ["fuzz", "-o", str(tmp_path / "x"), "--workers", "0"],
        ["fuzz", "-o", str(tmp_path / "no" / "such" / "dir")],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("irpool: "), (args, err)
    assert (mine / "notes.txt").read_text() == "mine" and os.listdir(mine) == ["notes.txt"]


def test_cli_without_hypothesis_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    assert main(["fuzz", "-o", str(tmp_path / "c"), "--budget", "1"]) == 3
    assert "pip install 'irpool[fuzz]'" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


@pytest.mark.fuzz
def test_a_campaign_of_minutes_names_every_kind_of_divergence(
    ov: ModuleType, ort: ModuleType, torch: ModuleType, tmp_path: Path
) -> None:
    """The opt-in campaign (pytest -m fuzz; IRPOOL_FUZZ_BUDGET seconds, default 150): from an
    empty database it names a conversion divergence, a ceil rule and a special-value rule,
    and every new divergence and irpool bug comes with a bundle that reproduces."""
    budget = float(os.environ.get("IRPOOL_FUZZ_BUDGET", "150"))
    out = tmp_path / "campaign"
    run = subprocess.run(
        [sys.executable, "-m", "irpool", "fuzz", "-o", str(out), "--budget", str(budget),
         "--seed", "0", "--workers", "2", "--json", "--progress", "off"],
        capture_output=True, text=True, cwd=ROOT, timeout=budget * 3 + 300,
    )  # fmt: skip
    doc = json.loads(run.stdout)
    _valid(doc)
    assert run.returncode == doc["exit_code"], run.stderr
    found = doc["divergences"]
    conversion = {"D2c", "D3"} | {
        i for i, d in found.items() if any(p.startswith("openvino-onnx/") for p in d["pairs"])
    }
    assert conversion & set(found), found.keys()
    assert {"D2", "D5", "D15"} & set(found), found.keys()
    assert {"D8", "D17", "D18", "D19"} & set(found), found.keys()
    for d in found.values():
        for sample in d["samples"]:
            recheck(sample, tmp_path)
    for f in doc["new"] + doc["irpool_bugs"]:
        folder = out / f["bundle"]
        repro = subprocess.run(
            [sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300
        )
        assert repro.returncode == 1, (f, repro.stdout, repro.stderr)
