"""`irpool compare` and `irpool check --openvino` on crafted and real models."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from irpool.cases import by_key, ir_net
from irpool.compare import compare_arrays, to_json

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.oracle


def irpool(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irpool", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )


@pytest.mark.parametrize("key", ["D1", "D1c", "D2", "D2-include", "D2-max"])
def test_divergence_models(ov: ModuleType, tmp_path: Path, key: str) -> None:
    case = by_key(key)
    assert case.openvino is not None
    path = tmp_path / f"{key}.xml"
    path.write_text(ir_net(case.openvino, case.shape, "f32"))
    default = irpool("compare", str(path))
    assert default.returncode == 0, default.stdout + default.stderr
    torch_like = irpool("compare", str(path), "--convention", "torch")
    assert torch_like.returncode == 1, torch_like.stdout
    expected = key.split("-")[0] if key != "D1c" else "D1c"
    assert f"{expected}:" in torch_like.stdout
    assert "the openvino convention reproduces openvino's numbers" in torch_like.stdout


def test_squeezenet_passes_and_json(ov: ModuleType) -> None:
    out = irpool("compare", "fixtures/real/squeezenet.xml", "--json", "--seed", "3")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "irpool.compare/1" and doc["passed"] is True
    assert doc["inference_precision_hint"] == "f32"
    assert [layer["layer"] for layer in doc["layers"]] == ["n2", "n17", "n32"]
    assert all(o["mismatches"] == 0 for layer in doc["layers"] for o in layer["outputs"])


def test_json_encodes_nan_and_inf_as_strings() -> None:
    got = np.array([np.nan, 1.0, np.inf], np.float32)
    expected = np.array([0.0, 1.0, 2.0], np.float32)
    c = compare_arrays("values", got, expected, 0.0, 0.0, exact=False)
    assert c.nan_mismatches == 1 and c.inf_mismatches == 1 and c.mismatches == 2
    from irpool.compare import CompareReport, LayerComparison

    layer = LayerComparison("p", 1, "AvgPool-1", 3, "openvino", [c], passed=False)
    report = CompareReport("m.xml", "f32", "x", "openvino", 0, 0, [layer], [])
    text = json.dumps(to_json(report))
    assert "NaN" not in text.replace('"nan"', "") and "Infinity" not in text
    back = json.loads(text)["layers"][0]["outputs"][0]
    assert isinstance(back["worst_irpool"], str) and math.isnan(float(back["worst_irpool"]))


def test_check_openvino_finds_a_corrupted_dim_on_a_convolution(
    ov: ModuleType, tmp_path: Path
) -> None:
    text = (ROOT / "fixtures" / "real" / "squeezenet.xml").read_text()
    start = text.index('name="n3/WithoutBiases" type="Convolution"')
    out_at = text.index("<output>", start)
    dim_at = text.index("<dim>55</dim>", out_at)
    corrupted = text[:dim_at] + "<dim>54</dim>" + text[dim_at + len("<dim>55</dim>") :]
    path = tmp_path / "sq.xml"
    path.write_text(corrupted)
    shutil.copy(ROOT / "fixtures" / "real" / "squeezenet.bin", tmp_path / "sq.bin")
    out = irpool("check", "--openvino", str(path))
    assert out.returncode == 1
    assert any(
        "n3/WithoutBiases" in line and "openvino infers" in line for line in out.stdout.splitlines()
    )


def test_compare_without_openvino_exits_3(tmp_path: Path) -> None:
    fake = tmp_path / "openvino"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    import os

    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    out = irpool("compare", "fixtures/real/squeezenet.xml", env=env)
    assert out.returncode == 3 and "pip install" in out.stderr
    assert out.stderr.count("\n") == 1


def test_mismatch_rules_by_hand() -> None:
    """NaN, infinities, signed zeros and tolerances, case by case."""
    from irpool.arrays import mismatches

    nan, inf = float("nan"), float("inf")
    got = np.array([1.0, nan, inf, -inf, 0.0, 1.05, 2.0, nan], np.float32)
    want = np.array([1.0, nan, inf, inf, -0.0, 1.0, 2.1, 3.0], np.float32)
    assert mismatches(got, want).tolist() == [0, 0, 0, 1, 0, 1, 1, 1]
    assert mismatches(got, want, atol=0.06).tolist() == [0, 0, 0, 1, 0, 0, 1, 1]
    assert mismatches(got, want, rtol=0.05).tolist() == [0, 0, 0, 1, 0, 0, 0, 1]
    assert mismatches(got, want, atol=1, exact=True).tolist() == [0, 0, 0, 1, 0, 1, 1, 1]
    assert mismatches(got, want, nan_equal=False).tolist() == [0, 1, 0, 1, 0, 1, 1, 1]
    assert mismatches(got, want, signed_zero=True).tolist() == [0, 0, 0, 1, 1, 1, 1, 1]


def test_f16_chains_compare_with_the_values_openvino_holds(ov: ModuleType, tmp_path: Path) -> None:
    """openvino (f32 precision) feeds the second f16 average the first one's float32 values; a
    probe of the f16 tensor would show them rounded and fake a mismatch of a few ulps."""
    from openvino import opset1

    x = opset1.parameter([1, 2, 9, 9], ov.Type.f16, name="x")
    first = opset1.avg_pool(x, [1, 1], [1, 1], [1, 1], [3, 3], False, "floor", "explicit")
    second = opset1.avg_pool(first, [2, 2], [0, 0], [0, 0], [2, 2], True, "ceil", "explicit")
    first.set_friendly_name("a1")
    second.set_friendly_name("a2")
    path = tmp_path / "f16chain.xml"
    ov.save_model(ov.Model([opset1.result(second)], [x]), str(path))
    out = irpool("compare", str(path), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    layers = json.loads(out.stdout)["layers"]
    assert [la["layer"] for la in layers] == ["a1", "a2"]
    assert all(o["dtype"] == "float16" for la in layers for o in la["outputs"])
