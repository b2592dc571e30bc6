"""`irpool compare` and `irpool check --openvino` on crafted and real models."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, irpool

from irpool.cases import by_key, ir_net
from irpool.compare import compare_arrays, to_json

pytestmark = pytest.mark.oracle


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
    # the plugin's own default on this machine (bf16 on a CPU with AVX512_BF16 or AMX)
    default = ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name()
    assert doc["inference_precision_hint"] == default
    # the three MaxPool-8 layers and, since the pooling families, the global ReduceMean
    assert [layer["layer"] for layer in doc["layers"]] == ["n2", "n17", "n32", "n64"]
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


@pytest.mark.parametrize("channels", [1, 3])
def test_integer_layers_compare_on_the_path_openvino_takes(
    ov: ModuleType, tmp_path: Path, channels: int
) -> None:
    """An i32 AvgPool of several channels runs in float32 inside openvino, one of one channel
    in int32 (docs/semantics.md); with sums beyond 2^31 and values beyond 2^24 the two paths
    differ, and compare must follow the one openvino took."""
    from openvino import opset1

    x = opset1.parameter([1, channels, 9, 9], ov.Type.i32, name="x")
    mean = opset1.avg_pool(x, [1, 1], [1, 1], [1, 1], [3, 3], True, "floor", "explicit")
    path = tmp_path / "i32.xml"
    ov.save_model(ov.Model([opset1.result(mean)], [x]), str(path))
    data = np.random.default_rng(0).integers(-(2**30), 2**30, (1, channels, 9, 9))
    np.save(tmp_path / "x.npy", data.astype(np.int32))
    out = irpool("compare", str(path), "-i", f"x={tmp_path / 'x.npy'}")
    assert out.returncode == 0, out.stdout + out.stderr


# -- openvino's crashes and failures on attribute shapes irpool accepts ----------------------


def _ir_file(tmp_path: Path, layer_type: str, opset: int, data: dict[str, str]) -> Path:
    from irpool.cases import IrLayer

    path = tmp_path / "model.xml"
    path.write_text(ir_net(IrLayer(layer_type, opset, data), (1, 1, 6, 6), "f32"))
    return path


POOL_2X2 = {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0"}


def test_avgpool16_with_empty_dilations_is_refused_before_openvino(
    ov: ModuleType, tmp_path: Path
) -> None:
    """openvino 2026.4.1 reads dilations="" as an empty list and then dies compiling (SIGSEGV or
    a hang, measured in child processes); compare must end in one line instead."""
    path = _ir_file(tmp_path, "AvgPool", 16, {**POOL_2X2, "exclude-pad": "true", "dilations": ""})
    from irpool.oracles import openvino_rt

    pools = [
        op
        for op in openvino_rt.read_path(str(path)).get_ordered_ops()
        if "Pool" in op.get_type_name()
    ]
    assert [op.get_attributes()["dilations"] for op in pools] == [[]]  # what openvino holds
    out = irpool("compare", str(path))
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == "" and out.stderr.count("\n") == 1
    assert f"{path}:" in out.stderr and 'layer "pool"' in out.stderr
    assert '"dilations" is missing or empty' in out.stderr
    assert 'expected dilations="1,1"' in out.stderr


def test_maxpool8_without_dilations(ov: ModuleType, tmp_path: Path) -> None:
    """openvino fails on the indices of a MaxPool-8 without dilations: with them used, compare
    says so in one line; with them unused, the values are compared and the indices skipped."""
    from irpool.frontends.ir_writer import NetBuilder
    from irpool.oracles import openvino_rt

    path = _ir_file(tmp_path, "MaxPool", 8, POOL_2X2)
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6)).astype(np.float32)
    compiled = openvino_rt.core().compile_model(openvino_rt.read_path(str(path)), "CPU")
    with pytest.raises(RuntimeError, match="One of the MaxPool params"):
        compiled([x])  # openvino itself, without irpool's guard
    np.save(tmp_path / "x.npy", x)
    out = irpool("compare", str(path), "-i", f"x={tmp_path / 'x.npy'}")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stdout + out.stderr
    assert "dilations" in out.stderr and "Check '" not in out.stderr
    assert 'expected dilations="1,1"' in out.stderr

    net = NetBuilder("unused_indices")
    p = net.parameter("x", (1, 1, 6, 6))
    refs = net.op(
        "MaxPool", "opset8", "pool", POOL_2X2, [p], [((1, 1, 3, 3), "f32"), ((1, 1, 3, 3), "i64")]
    )
    net.result("values", refs[0])
    unused = tmp_path / "unused.xml"
    unused.write_text(net.xml())
    out = irpool("compare", str(unused), "-i", f"x={tmp_path / 'x.npy'}", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    layer = json.loads(out.stdout)["layers"][0]
    assert [o["name"] for o in layer["outputs"]] == ["values"]
    assert any("indices not compared" in note for note in layer["notes"])
    expected = x.reshape(1, 1, 3, 2, 3, 2).max(axis=(3, 5))
    got = openvino_rt.infer(openvino_rt.compile_model(openvino_rt.read_path(str(unused))), [x])
    np.testing.assert_array_equal(got[0], expected)


def test_refusal_reason_skips_parameter_dumps(ov: ModuleType, tmp_path: Path) -> None:
    """openvino's message ends in `name=value` lines; the reason shown is the sentence."""
    from irpool.errors import OracleRefused
    from irpool.oracles import openvino_rt, refusals

    path = _ir_file(tmp_path, "MaxPool", 8, POOL_2X2)
    compiled = openvino_rt.core().compile_model(openvino_rt.read_path(str(path)), "CPU")
    with pytest.raises(OracleRefused) as caught, refusals("openvino", str(path)):
        compiled([np.zeros((1, 1, 6, 6), np.float32)])
    assert caught.value.message.endswith(
        "One of the MaxPool params does not match the 3D implementation."
    )


# -- statistics on non-finite values ---------------------------------------------------------


def test_statistics_of_non_finite_outputs_raise_no_warnings() -> None:
    nan, inf = float("nan"), float("inf")
    got = np.array([inf, -inf, nan, inf, 1.0, 2.0], np.float32)
    expected = np.array([inf, inf, nan, nan, 1.0, 2.5], np.float32)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = compare_arrays("values", got, expected, 0.0, 0.0, exact=False)
    assert c.mismatches == 3 and c.nan_mismatches == 1 and c.inf_mismatches == 1
    assert c.max_abs == 0.5 and c.max_ulp == 0.5 / float(np.spacing(np.float32(2.5)))


def test_compare_of_infinities_prints_no_warnings(ov: ModuleType, tmp_path: Path) -> None:
    """inf and -inf in one window make NaN in openvino and irpool alike (measured)."""
    path = _ir_file(tmp_path, "AvgPool", 1, {**POOL_2X2, "exclude-pad": "true"})
    x = np.ones((1, 1, 6, 6), np.float32)
    x[0, 0, 0, 0], x[0, 0, 0, 1], x[0, 0, 2, 2] = np.inf, -np.inf, np.inf
    np.save(tmp_path / "x.npy", x)
    out = irpool("compare", str(path), "-i", f"x={tmp_path / 'x.npy'}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr == ""


def test_mismatch_cells_name_each_spatial_position_once() -> None:
    from irpool.compare import mismatch_cells

    want = np.zeros((2, 3, 4), np.float32)
    got = want.copy()
    got[:, :, 3] = 1  # every image and channel differs at the same cell
    got[1, 2, 0] = 1
    assert mismatch_cells(got, want) == [(0,), (3,)]


# -- summation order against onnxruntime -----------------------------------------------------


def test_rounding_bound_covers_any_summation_order() -> None:
    """Brute force: float32 sums of the same windows in three orders (forward, backward, by
    growing magnitude) stay within the bound of one another."""
    from irpool.compare import rounding_bound
    from irpool.geometry import PoolParams, plan

    rng = np.random.default_rng(5)
    for k, scale in ((9, 1.0), (25, 1e3), (49, 1e-3), (8, 1e30)):
        x = (rng.standard_normal((1, 4, 40 * k)) * scale).astype(np.float32)
        params = PoolParams("AveragePool", "mean", (k,), (k,), (1,), ((0, 0),))
        p = plan(params, x.shape, "onnx")
        windows = x.reshape(-1, k)
        orders = [
            windows,
            windows[:, ::-1],
            np.take_along_axis(windows, np.argsort(abs(windows)), 1),
        ]
        means = []
        for w in orders:
            total = np.zeros(len(w), np.float32)
            for t in range(k):  # one float32 rounding per addition, in this order
                total = (total + w[:, t]).astype(np.float32)
            means.append((total / np.float32(k)).astype(np.float32).reshape(1, 4, -1))
        bound = rounding_bound(p, x, means[0])
        assert bound is not None
        for a in means:
            for b in means:
                assert np.all(np.abs(a.astype(np.float64) - b) <= bound)


def _average_pool_model(
    onnx: ModuleType, path: Path, attrs: dict[str, Any], shape: list[int], dtype: int, opset: int
) -> None:
    from onnx import helper

    node = helper.make_node("AveragePool", ["X"], ["Y"], name="ap", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", dtype, shape)],
        [helper.make_tensor_value_info("Y", dtype, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.save(model, str(path))


def test_onnx_average_pool_within_summation_rounding_of_onnxruntime(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """Random AveragePool nodes against onnxruntime: all pass by default; bit for bit, every
    difference is diagnosed as summation-order rounding (no other cause is possible here)."""
    from onnx import TensorProto

    from irpool.compare import CompareOptions, compare_model
    from irpool.frontends.onnx_model import load as load_onnx

    rng = np.random.default_rng(11)
    for i in range(24):
        rank = int(rng.integers(1, 4))
        kernel = [int(rng.integers(2, 7 if rank < 3 else 4)) for _ in range(rank)]
        attrs = {
            "kernel_shape": kernel,
            "strides": [int(rng.integers(1, 3)) for _ in range(rank)],
            "pads": [int(rng.integers(0, k)) for k in kernel] * 2,
            "count_include_pad": int(rng.integers(0, 2)),
        }
        size = [int(rng.integers(2 * k, 24 if rank < 3 else 10)) for k in kernel]
        shape = [1, int(rng.integers(1, 5)), *size]
        half = i % 4 == 3
        dtype = TensorProto.FLOAT16 if half else TensorProto.FLOAT
        path = tmp_path / f"ap{i}.onnx"
        _average_pool_model(onnx, path, attrs, shape, dtype, 11)
        x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 4)).astype(
            np.float16 if half else np.float32
        )
        graph = load_onnx(str(path))
        report = compare_model(graph, {"X": x})
        assert report.passed, (
            attrs,
            shape,
            [o.__dict__ for la in report.layers for o in la.outputs],
        )
        strict = compare_model(graph, {"X": x}, options=CompareOptions(exact=True))
        for layer in strict.layers:
            if not layer.passed:
                assert layer.diagnosis is not None
                assert layer.diagnosis.text.startswith("summation-order rounding"), (
                    layer.diagnosis.text
                )
