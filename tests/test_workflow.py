"""The everyday workflow on models as people have them (issue 20): IRs converted from PyTorch
with their default dynamic shapes ([?,3,?,?]) run with --input-shape or -i alone; --layer finds
a layer by id, output tensor name or part of its name; input files keep their names, are
refused with both shapes when they do not fit, and may be ONNX TensorProto (.pb) files; the
Python API returns typed reports and speaks Python.

The IRs are made here with ov.convert_model on small torch modules and ov.save_model (the
default: every dim but the channels dynamic); torch is the independent truth of the values."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, irpool

import irpool as api
from irpool.errors import IrpoolError

MAXPOOL = "__module.features.2/aten::max_pool2d/MaxPool"
AVGPOOL = "__module.features.4/aten::avg_pool2d/AvgPool"
CONV = "__module.features.0/aten::_convolution/Convolution"


@pytest.fixture(scope="module")
def torch_irs(
    torch: ModuleType, ov: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """net.xml: Conv-ReLU-MaxPool-Conv-AvgPool(ceil); pools.xml: MaxPool(ceil)-AvgPool; both
    converted with their default dynamic shapes; the modules and an input."""
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Module()
    net.features = nn.Sequential(
        nn.Conv2d(3, 8, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3),
        nn.AvgPool2d(3, 2, 1, ceil_mode=True),
    )
    net.forward = lambda x: net.features(x)  # type: ignore[method-assign]
    pools = nn.Sequential(nn.MaxPool2d(3, 2, 1, ceil_mode=True), nn.AvgPool2d(2))
    folder = tmp_path_factory.mktemp("torch_irs")
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    out: dict[str, Any] = {"x": x, "folder": folder}
    for name, module in (("net", net), ("pools", pools)):
        module.eval()
        model = ov.convert_model(module, example_input=torch.from_numpy(x))
        assert any(not d.is_static for d in model.inputs[0].get_partial_shape())
        ov.save_model(model, str(folder / f"{name}.xml"), compress_to_fp16=False)
        out[name] = str(folder / f"{name}.xml")
        out[f"{name}_module"] = module
    np.save(folder / "x.npy", x)
    np.savez(folder / "x.npz", x=x)
    out["npy"], out["npz"] = str(folder / "x.npy"), str(folder / "x.npz")
    return out


def _torch(module: Any, torch: ModuleType, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        result: np.ndarray = module(torch.from_numpy(x)).numpy()
    return result


# -- dynamic shapes: compare, fixtures and run with --input-shape or -i alone ------------------


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["shape", "npy", "npz"])
def test_compare_a_dynamic_torch_ir(torch_irs: dict[str, Any], how: str) -> None:
    given = {
        "shape": ["--input-shape", "1,3,32,32"],
        "npy": ["-i", torch_irs["npy"]],
        "npz": ["-i", f"x={torch_irs['npz']}"],
    }[how]
    result = irpool("compare", torch_irs["net"], *given, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] and [la["layer"] for la in report["layers"]] == [MAXPOOL, AVGPOOL]
    # the shapes torch computes: 30 -> 15 after the MaxPool; 13 -> 7 after the ceil AvgPool
    assert [la["outputs"][0]["produced"] for la in report["layers"]] == [
        "[1,8,15,15]",
        "[1,8,7,7]",
    ]
    assert report["layers"][1]["outputs"][0]["inferred"] == "[1,8,7,7]"


@pytest.mark.oracle
def test_without_shapes_the_refusal_says_how_to_give_them(torch_irs: dict[str, Any]) -> None:
    for command in (["compare"], ["run", "-o", str(torch_irs["folder"] / "r.npz")]):
        result = irpool(command[0], torch_irs["net"], *command[1:])
        assert result.returncode == 2 and result.stderr.count("\n") == 1
        assert "[?,3,?,?]" in result.stderr and "--input-shape x=1,3,32,32" in result.stderr


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["shape", "npy"])
def test_fixtures_from_a_dynamic_torch_ir(
    torch_irs: dict[str, Any], tmp_path: Path, how: str
) -> None:
    given = ["--input-shape", "x=1,3,32,32"] if how == "shape" else ["-i", torch_irs["npy"]]
    out = tmp_path / "fx"
    result = irpool("fixtures", str(out), "--from", torch_irs["net"], *given, "--verify")
    assert result.returncode == 0, result.stderr
    assert "2 confirmed, 0 diverge" in result.stdout
    index = json.loads((out / "index.json").read_text())
    shapes = [c["input_shape"] for c in index["cases"]]
    assert shapes == [[1, 8, 30, 30], [1, 8, 13, 13]]
    if how == "npy":
        assert index["settings"]["inputs"] == ["x.npy"]
        meta = json.loads((out / index["cases"][0]["name"] / "meta.json").read_text())
        assert meta["input"]["source"] == "openvino"


@pytest.mark.oracle
def test_run_a_dynamic_torch_pooling_net(
    torch: ModuleType, torch_irs: dict[str, Any], tmp_path: Path
) -> None:
    x = torch_irs["x"]
    out = tmp_path / "o.npz"
    by_file = irpool("run", torch_irs["pools"], "-i", torch_irs["npy"], "-o", str(out))
    assert by_file.returncode == 0, by_file.stderr
    (values,) = np.load(out).values()
    assert np.array_equal(values, _torch(torch_irs["pools_module"], torch, x))
    by_shape = irpool(
        "run", torch_irs["pools"], "--input-shape", "2,3,20,18", "-o", str(out), "--force"
    )
    assert by_shape.returncode == 0, by_shape.stderr
    (inputs,) = np.load(tmp_path / "o.inputs.npz").values()
    (values,) = np.load(out).values()
    assert inputs.shape == (2, 3, 20, 18)
    assert np.array_equal(values, _torch(torch_irs["pools_module"], torch, inputs))


@pytest.mark.oracle
def test_run_one_layer_of_a_dynamic_torch_net(
    torch: ModuleType, torch_irs: dict[str, Any], tmp_path: Path
) -> None:
    x = torch_irs["x"]
    net = torch_irs["net_module"]
    with torch.no_grad():
        before = net.features[:2](torch.from_numpy(x))
        want = net.features[2](before).numpy()
    out = tmp_path / "l.npz"
    # -i the model's input: the layer's input is what openvino computes inside the model
    result = irpool(
        "run", torch_irs["net"], "--layer", "features.2", "-i", torch_irs["npy"], "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    got = np.load(out)["output0"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # --input-shape of the model's input: a random input of the shape the layer gets there
    avgpool = next(la for la in api.load(torch_irs["net"]).layers if la.name == AVGPOOL)
    shapes = _layer_shapes(
        "run",
        torch_irs["net"],
        "--layer",
        str(avgpool.id),
        "--input-shape",
        "x=1,3,40,36",
        "-o",
        str(out),
        "--force",
    )
    assert shapes == ([1, 8, 17, 15], [1, 8, 9, 8])


def _layer_shapes(*args: str) -> tuple[list[int], list[int]]:
    """`irpool ARGS --json` on one layer: that layer's input and output shape."""
    result = irpool(*args, "--json")
    assert result.returncode == 0, result.stderr
    (layer,) = json.loads(result.stdout)["layers"]
    return layer["input_shape"], layer["output_shape"]


@pytest.mark.oracle
def test_explain_a_layer_of_a_dynamic_torch_net(torch_irs: dict[str, Any]) -> None:
    shapes = _layer_shapes(
        "explain", torch_irs["net"], "--layer", "avg_pool", "--input-shape", "x=1,3,32,32"
    )
    assert shapes == ([1, 8, 13, 13], [1, 8, 7, 7])


# -- finding a layer ----------------------------------------------------------------------------


@pytest.mark.oracle
def test_layer_by_id_tensor_name_and_part_of_the_name(torch_irs: dict[str, Any]) -> None:
    graph = api.load(torch_irs["net"])
    maxpool = next(la for la in graph.layers if la.name == MAXPOOL)
    tensor = maxpool.outputs[0].names[0]
    for query in (MAXPOOL, str(maxpool.id), f"id={maxpool.id}", tensor, "features.2", "max_pool"):
        result = irpool("compare", torch_irs["net"], "--input-shape", "1,3,32,32", "--layer", query)
        assert result.returncode == 0, (query, result.stderr)
        assert f'layer "{MAXPOOL}"' in result.stdout and AVGPOOL not in result.stdout
    ambiguous = irpool("explain", torch_irs["net"], "--layer", "Pool")
    assert ambiguous.returncode == 2 and ambiguous.stderr.count("\n") == 1
    assert f'"{MAXPOOL}", "{AVGPOOL}"' in ambiguous.stderr
    missed = irpool("explain", torch_irs["net"], "--layer", "max_pol2d")
    assert missed.returncode == 2 and f'closest: "{MAXPOOL}"' in missed.stderr
    not_pooling = irpool(
        "run", torch_irs["net"], "--layer", CONV, "-o", str(torch_irs["folder"] / "n.npz")
    )
    assert not_pooling.returncode == 2 and "Convolution" in not_pooling.stderr


def test_layer_lookup_rules_on_a_fixture() -> None:
    from irpool.lookup import find

    graph = api.load(str(ROOT / "fixtures/ir/pool_zoo.xml"))
    pooling = [la for la in graph.layers if la.type in ("AvgPool", "MaxPool")]
    by = {la.name: la for la in pooling}
    assert find(graph, "mp8_indices", pooling) is by["mp8_indices"]
    assert find(graph, str(by["ap1_ceil"].id), pooling) is by["ap1_ceil"]
    assert find(graph, "ceil", pooling) is by["ap1_ceil"]  # the only name with "ceil"
    assert find(graph, "CEIL", pooling) is by["ap1_ceil"]  # case is ignored as a last resort
    with pytest.raises(IrpoolError, match='"torch" is part of the name of 2 pooling layers'):
        find(graph, "torch", pooling)


# -- input files -------------------------------------------------------------------------------


def test_npz_members_keep_their_names(tmp_path: Path) -> None:
    model = str(ROOT / "fixtures/ir/ranks.xml")
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal((2, 4, 50)).astype(np.float32)
    x3 = rng.standard_normal((1, 2, 9, 10, 11)).astype(np.float16)  # x3d is an f16 input
    np.savez(tmp_path / "both.npz", x1d=x1, x3d=x3)
    np.savez(tmp_path / "one.npz", whatever=x1)
    both = irpool("run", model, "-i", str(tmp_path / "both.npz"), "-o", str(tmp_path / "a.npz"))
    assert both.returncode == 0, both.stderr
    named = irpool(
        "run",
        model,
        "-i",
        f"x1d={tmp_path / 'one.npz'}",
        "-i",
        f"x3d={tmp_path / 'both.npz'}",
        "-o",
        str(tmp_path / "b.npz"),
    )  # x1d: the only member, whatever its name; x3d: the member of that name
    assert named.returncode == 0, named.stderr
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert all(np.array_equal(a[k], b[k]) for k in a.files)


def test_a_wrong_input_shape_names_both_shapes_and_the_file(tmp_path: Path) -> None:
    model = str(ROOT / "fixtures/ir/pool_zoo.xml")
    np.save(tmp_path / "small.npy", np.zeros((1, 3, 8, 8), np.float32))
    whole = irpool("run", model, "-i", str(tmp_path / "small.npy"), "-o", str(tmp_path / "o.npz"))
    assert whole.returncode == 2 and whole.stderr.count("\n") == 1
    assert "small.npy" in whole.stderr and "[1,3,8,8]" in whole.stderr
    assert "[1,3,32,32]" in whole.stderr
    np.save(tmp_path / "rank.npy", np.zeros((3, 16, 16), np.float32))
    layer = irpool(
        "run",
        model,
        "--layer",
        "mp8",
        "-i",
        str(tmp_path / "rank.npy"),
        "-o",
        str(tmp_path / "p.npz"),
    )
    assert layer.returncode == 2 and layer.stderr.count("\n") == 1
    assert (
        "rank.npy" in layer.stderr and "[3,16,16]" in layer.stderr and "[1,3,16,16]" in layer.stderr
    )


@pytest.mark.oracle
def test_pb_tensors_and_onnx_backend_data_sets(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """onnx ships backend test cases (model.onnx + test_data_set_0/input_0.pb, output_0.pb):
    irpool runs them from the .pb input and gives the .pb output."""
    from onnx import numpy_helper

    case = Path(onnx.__file__).parent / "backend/test/data/pytorch-operator/test_operator_maxpool"
    data = case / "test_data_set_0"
    expected = numpy_helper.to_array(onnx.load_tensor(str(data / "output_0.pb")))
    for given in (str(data), str(data / "input_0.pb")):
        out = tmp_path / f"{len(given)}.npz"
        result = irpool("run", str(case / "model.onnx"), "-i", given, "-o", str(out))
        assert result.returncode == 0, result.stderr
        (values,) = np.load(out).values()
        assert np.array_equal(values, expected)
    compared = irpool("compare", str(case / "model.onnx"), "-i", str(data))
    assert compared.returncode == 0, compared.stderr
    (tmp_path / "junk.pb").write_bytes(b"\x01\x02not a tensor")
    bad = irpool(
        "run",
        str(case / "model.onnx"),
        "-i",
        str(tmp_path / "junk.pb"),
        "-o",
        str(tmp_path / "j.npz"),
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "junk.pb" in bad.stderr


@pytest.mark.oracle
def test_fixtures_write_the_onnx_backend_layout(onnx: ModuleType, tmp_path: Path) -> None:
    from onnx import numpy_helper

    from irpool.arrays import load_arrays

    out = tmp_path / "s"
    result = irpool("fixtures", str(out), "--data-set")
    assert result.returncode == 0, result.stderr
    cases = json.loads((out / "index.json").read_text())["cases"]
    for case in cases:
        folder = out / case["name"]
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["files"]["data_set"] == "test_data_set_0"
        data = folder / "test_data_set_0"
        x = load_arrays(str(folder / "input.npy"))[""]
        given = onnx.load_tensor(str(data / "input_0.pb"))
        assert given.name == "x"
        if meta["dtype"] != "bfloat16":
            assert np.array_equal(numpy_helper.to_array(given), x)
        expected = load_arrays(str(folder / "expected.npz"))
        names = sorted(p.name for p in data.iterdir())
        assert names == ["input_0.pb"] + [f"output_{k}.pb" for k in range(len(expected))]
        values = numpy_helper.to_array(onnx.load_tensor(str(data / "output_0.pb")))
        assert values.shape == expected["values"].shape
        if meta["dtype"] != "bfloat16":
            assert np.array_equal(values, expected["values"])


# -- the Python API ------------------------------------------------------------------------------


def test_api_reports_are_typed_and_carry_the_json() -> None:
    zoo = str(ROOT / "fixtures/ir/pool_zoo.xml")
    run = api.run(zoo)
    assert isinstance(run, api.RunReport) and set(run) == set(run.outputs)
    assert run.to_json()["schema"] == "irpool.run/1" and len(run.to_json()["layers"]) == 6
    one = api.run(zoo, np.ones((1, 3, 16, 16), np.float32), layer="mp8_indices")
    assert set(one) == {"output0", "output1"}  # still the mapping of its outputs
    explained = api.explain(zoo, layer="ceil")
    (layer,) = explained
    assert layer.layer == "ap1_ceil" and explained.to_json()["schema"] == "irpool.explain/1"
    assert api.check(Path(zoo)).ok


def test_api_errors_speak_python(tmp_path: Path) -> None:
    zoo = str(ROOT / "fixtures/ir/pool_zoo.xml")
    with pytest.raises(IrpoolError) as caught:
        api.run(zoo, np.ones((1, 3, 32, 32), np.float64))
    assert "cast=True" in str(caught.value) and "--" not in str(caught.value)
    np.save(tmp_path / "x.npy", np.ones((1, 3, 32, 32), np.float64))
    cli = irpool("run", zoo, "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "o.npz"))
    assert cli.returncode == 2 and "--cast" in cli.stderr and "cast=True" not in cli.stderr
    with pytest.raises(IrpoolError, match="atol=-1: expected a finite number >= 0"):
        api.compare(zoo, atol=-1)
    with pytest.raises(IrpoolError, match=r"^model: expected a path"):
        api.check(42)


@pytest.mark.oracle
def test_api_takes_in_memory_models(
    ov: ModuleType, onnx: ModuleType, ort: ModuleType, torch_irs: dict[str, Any]
) -> None:
    model = ov.Core().read_model(torch_irs["pools"])
    report = api.compare(model, torch_irs["x"])
    assert isinstance(report, api.CompareReport) and report.passed and len(report.layers) == 2
    proto = onnx.load(str(ROOT / "fixtures/divergences/d2_maxpool_ceil.onnx"))
    converted = api.convert_report(proto)
    assert isinstance(converted, api.ConvertReport) and not converted.same
    assert converted.to_json()["nodes"][0]["divergence_id"] == "D2c"
    path_report = api.compare(Path(torch_irs["net"]), input_shapes={"x": (1, 3, 32, 32)})
    assert path_report.passed


# -- versions, errors, progress --------------------------------------------------------------------


def test_another_openvino_release_gets_one_warning_line() -> None:
    import subprocess
    import sys

    def stderr_of(release: str) -> str:
        code = f"from irpool.oracles import openvino_rt as o; o.warn_release({release!r})"
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        assert done.stdout == ""
        return done.stderr

    assert stderr_of("2026.4.1") == ""
    err = stderr_of("2025.4.0")
    assert err.count("\n") == 1 and "openvino 2025.4.0" in err and "2026.4" in err


def test_check_openvino_on_fragments_is_one_line() -> None:
    result = irpool("check", "--openvino", "fixtures/spec/avgpool-1-examples.xml")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("irpool: fixtures/spec/avgpool-1-examples.xml: --openvino")


@pytest.mark.oracle
def test_progress_bar_beside_json(ov: ModuleType) -> None:
    result = irpool("compare", "fixtures/real/squeezenet.xml", "--json", "--progress", "on")
    assert result.returncode == 0 and json.loads(result.stdout)["passed"]
    assert "4/4" in result.stderr and "100%" in result.stderr


@pytest.mark.oracle
def test_onnx_explain_uses_onnx_shape_inference(onnx: ModuleType, tmp_path: Path) -> None:
    """A pooling node behind a Conv whose output shape the file does not declare: onnx's shape
    inference gives it (16 - 3 + 1 = 14), for the declared input shape and for a given one."""
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
            helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[2, 2]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "conv_pool.onnx"
    onnx.save(model, str(path))
    result = irpool("explain", str(path), "--input-shape", "x=2,3,16,16", "--json")
    assert result.returncode == 0, result.stderr
    (layer,) = json.loads(result.stdout)["layers"]
    assert layer["input_shape"] == [2, 4, 14, 14] and layer["output_shape"] == [2, 4, 13, 13]
    out = tmp_path / "o.npz"
    ran = irpool("run", str(path), "--layer", "y", "--input-shape", "x=1,3,10,12", "-o", str(out))
    assert ran.returncode == 0, ran.stderr
    assert np.load(out)["output0"].shape == (1, 4, 7, 9)  # conv 8 x 10, kernel 2, stride 1
    assert os.path.exists(tmp_path / "o.inputs.npz")
