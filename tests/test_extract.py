"""`irpool extract`: bundles whose repro.py, run in a child process, shows what the full model
shows (exit 1 on a difference, 0 on an agreeing layer), and whose own model gives compare or
convert-report the same divergence id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import irpool

import irpool as api
from irpool.schemas import load as load_schema

pytestmark = pytest.mark.oracle


def _repro(folder: Path) -> subprocess.CompletedProcess[str]:
    """repro.py in a child process, from another working directory, without irpool's
    environment."""
    return subprocess.run(
        [sys.executable, str(folder / "repro.py")],
        capture_output=True,
        text=True,
        cwd="/",
        check=False,
    )


def _validate(doc: dict[str, object]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(load_schema("extract-1")).validate(doc)


def test_d1_layer_alone_quick(ov: ModuleType, tmp_path: Path) -> None:
    """The layer alone on its real input, neither shrunk nor run: D1 both in the full model
    and in the small one, and the bundle's files in place."""
    r = api.extract(
        "fixtures/divergences/d1_avgpool_ceil.xml",
        "pool",
        str(tmp_path / "b"),
        convention="torch",
        minimize=False,
        verify=False,
    )
    assert r.full_differs and r.reproduces and r.divergence_id == "D1" and r.standalone
    assert r.input_shapes == r.real_shapes == {"input": [1, 1, 6]}
    assert {"model.xml", "input.npz", "expected.npz", "repro.py", "REPORT.md"} <= set(r.files)
    assert "source.py" in r.files  # the op in PyTorch, and its conversion


@pytest.mark.slow
def test_d1_torch_convention_bundle(ov: ModuleType, tmp_path: Path) -> None:
    """PyTorch's ceil_mode average pool (D1): the bundle's repro exits 1 and prints the
    difference; compare on the bundle's own model names D1; the input is a handful of cells."""
    out = tmp_path / "d1"
    done = irpool(
        "extract",
        "fixtures/divergences/d1_avgpool_ceil.xml",
        "--layer",
        "pool",
        "--convention",
        "torch",
        "-o",
        str(out),
        "--json",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    _validate(doc)
    assert doc["divergence_id"] == "D1" and doc["reproduces"] and doc["consistent"]
    assert doc["repro_exit"] == 1
    assert doc["cells"] <= 8
    assert json.loads((out / "bundle.json").read_text()) == doc
    repro = _repro(out)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "values differ" in repro.stdout and "expected" in repro.stdout
    again = irpool(
        "compare", str(out / "model.xml"), "-i", str(out / "input.npz"), "--convention", "torch"
    )
    assert again.returncode == 1 and "D1:" in again.stdout, again.stdout
    report = (out / "REPORT.md").read_text()
    assert "D1" in report and "INFERENCE_PRECISION_HINT=f32" in report
    assert 'exclude-pad="false"' in report and "## Minimal input" in report
    assert doc["bytes"] < 32_000


@pytest.mark.slow
def test_d2c_onnx_conversion_bundle(ov: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    """ONNX MaxPool with ceil_mode through openvino's front end (D2c): the one-node model keeps
    the finding; convert-report on it names D2c."""
    out = tmp_path / "d2c"
    r = api.extract("fixtures/divergences/d2_maxpool_ceil.onnx", "pool", str(out))
    assert r.reproduces and r.divergence_id == "D2c" and r.repro_exit == 1
    assert r.cells <= 8
    repro = _repro(out)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "shape" in repro.stdout
    again = irpool("convert-report", str(out / "model.onnx"), "-i", str(out / "input.npz"))
    assert again.returncode == 1 and "D2c" in again.stdout, again.stdout


@pytest.mark.slow
def test_agreeing_layer_exits_0(ov: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "mp1"
    r = api.extract("fixtures/ir/pool_zoo.xml", "mp1", str(out))
    assert not r.reproduces and not r.full_differs and r.repro_exit == 0
    _validate(r.to_json())
    repro = _repro(out)
    assert repro.returncode == 0, repro.stdout + repro.stderr
    # an agreeing layer keeps real values (not shrunk to zeros)
    with np.load(out / "input.npz") as data:
        assert np.count_nonzero(data["input"]) > 0


def test_existing_folder_refused(tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    done = irpool(
        "extract", "fixtures/divergences/d1_avgpool_ceil.xml", "--layer", "pool", "-o", str(out)
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "exists" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    missing = irpool(
        "extract",
        "fixtures/divergences/d1_avgpool_ceil.xml",
        "--layer",
        "pool",
        "-o",
        str(tmp_path / "no" / "such"),
    )
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    unknown = irpool(
        "extract",
        "fixtures/divergences/d1_avgpool_ceil.xml",
        "--layer",
        "nope",
        "-o",
        str(tmp_path / "x"),
    )
    assert unknown.returncode == 2 and not (tmp_path / "x").exists()
    source = irpool(
        "extract", "fixtures/convert/conv_avgpool.pt2", "--layer", "pool", "-o", str(tmp_path / "y")
    )
    assert source.returncode == 2 and "ov.save_model" in source.stderr
    assert len(source.stderr.strip().splitlines()) == 1 and not (tmp_path / "y").exists()


@pytest.mark.slow
def test_compare_extract_every_differing_layer(ov: ModuleType, tmp_path: Path) -> None:
    """compare --extract: one bundle per differing layer, in the report's order, each one
    reproducing with the divergence compare named."""
    out = tmp_path / "all"
    done = irpool(
        "compare",
        "fixtures/ir/pool_zoo.xml",
        "--convention",
        "torch",
        "--extract",
        str(out),
        "--json",
    )
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(load_schema("compare-1")).validate(doc)
    differing = [la["layer"] for la in doc["layers"] if not la["passed"]]
    assert [r["layer"] for r in doc["extracted"]] == differing
    for record in doc["extracted"]:
        bundle = Path(record["bundle"])
        assert bundle.parent == out and record["repro_exit"] == 1
        assert _repro(bundle).returncode == 1
    named = [
        la["diagnosis"]["divergences"][0].split(":")[0] for la in doc["layers"] if not la["passed"]
    ]
    assert [r["divergence_id"] for r in doc["extracted"]] == named


def _same_upper_dynamic(ov: ModuleType, path: Path) -> None:
    """A MaxPool-8 with auto_pad=same_upper on dynamic spatial dims, as openvino's TensorFlow
    front end writes a SAME max pool (SEMANTICS (g): the CPU plugin puts all the padding at
    the end once the indices output is asked for)."""
    from openvino import opset1, opset8

    x = opset1.parameter(ov.PartialShape([1, 3, -1, -1]), ov.Type.f32, name="x")
    pool = opset8.max_pool(x, [2, 2], [1, 1], [0, 0], [0, 0], [3, 3], "floor", "same_upper")
    pool.set_friendly_name("pool")
    model = ov.Model([opset1.result(pool.output(0))], [x], "TensorFlow_Frontend_IR")
    ov.save_model(model, str(path), compress_to_fp16=False)


@pytest.mark.slow
def test_dynamic_dims_kept_where_the_layer_alone_agrees(ov: ModuleType, tmp_path: Path) -> None:
    """The layer alone, with the real input's static shape, computes what it should; the
    bundle keeps the full model's dynamic dims, and its repro shows the difference."""
    model = tmp_path / "same.xml"
    _same_upper_dynamic(ov, model)
    x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 7, 9)).astype(np.float32)
    compared = api.compare(str(model), {"x": x})
    assert not compared.passed
    r = api.extract(str(model), "pool", str(tmp_path / "b"), {"x": x}, convention="openvino")
    assert r.full_differs and r.reproduces and r.repro_exit == 1 and r.consistent
    assert r.dynamic and not r.standalone
    assert "dynamic dims" in " ".join(r.kept)
    assert "?" in (tmp_path / "b" / "model.xml").read_text()
    assert _repro(tmp_path / "b").returncode == 1


@pytest.mark.slow
def test_quantized_pool_held_to_torch(ov: ModuleType, tmp_path: Path) -> None:
    """A FakeQuantize before an include-pad ceil AvgPool (openvino runs it on u8 codes): compare
    agrees with openvino's own rules, and the bundle of it exits 0; held to PyTorch's rules the
    bundle shows D1 on a couple of cells."""
    from openvino import opset1

    x = opset1.parameter([1, 3, 6, 6], ov.Type.f32, name="x")
    lo, hi = opset1.constant(np.float32(0.0)), opset1.constant(np.float32(2.55))
    fq = opset1.fake_quantize(x, lo, hi, lo, hi, 256)
    pool = opset1.avg_pool(fq, [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil")
    pool.set_friendly_name("qpool")
    path = tmp_path / "q.xml"
    ov.save_model(ov.Model([opset1.result(pool)], [x], "quant"), str(path), False)
    data = {"x": np.random.default_rng(3).uniform(-0.5, 3.0, (1, 3, 6, 6)).astype(np.float32)}
    agree = api.extract(str(path), "qpool", str(tmp_path / "ov"), data)
    assert not agree.reproduces and agree.repro_exit == 0 and agree.consistent
    torch_like = api.extract(str(path), "qpool", str(tmp_path / "pt"), data, convention="torch")
    assert torch_like.reproduces and torch_like.divergence_id == "D1"
    assert torch_like.repro_exit == 1 and torch_like.cells <= 8
    assert _repro(tmp_path / "pt").returncode == 1
