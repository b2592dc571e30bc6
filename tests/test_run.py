"""`irpool run`: graph execution against openvino, single layers, inputs, outputs, errors."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT, irpool, sweep

from irpool.arrays import load_arrays, save_npz
from irpool.fixtures import layer_data
from irpool.frontends.ir_writer import NetBuilder
from irpool.frontends.ir_xml import load
from irpool.oracles import openvino_rt
from irpool.run import RunResult, random_inputs, run_graph

NETS = ["pool_zoo.xml", "pool_zoo_v10.xml", "ranks.xml", "integer_types.xml"]


def openvino_outputs(path: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    model = openvino_rt.read_path(path)
    compiled = openvino_rt.compile_model(model)
    feeds = [inputs[p.get_friendly_name()] for p in model.get_parameters()]
    arrays = openvino_rt.infer(compiled, feeds)
    return {r.get_friendly_name(): a for r, a in zip(model.get_results(), arrays, strict=True)}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NETS)
def test_nets_match_openvino(ov: ModuleType, name: str) -> None:
    path = str(ROOT / "fixtures" / "ir" / name)
    graph = load(path)
    inputs = random_inputs(graph, seed=3, low=-4, high=4)
    got = run_graph(graph, inputs)
    expected = openvino_outputs(path, inputs)
    assert set(got.outputs) == set(expected)
    for key, value in expected.items():
        assert got.outputs[key].dtype == value.dtype, key
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=f"{name}: {key}")


MP8 = layer_data("MaxPool", 8, (2, 2), (2, 2), (0, 0), (0, 0), index_element_type="i32")
AVG1 = layer_data("AvgPool", 1, (3, 3), (1, 1), (1, 1), (1, 1), exclude_pad=False)
AVG14 = layer_data("AvgPool", 14, (2, 2), (2, 2), (0, 0), (0, 0), rounding_type="ceil_torch")


def _const_net(tmp_path: Path) -> str:
    """Const(f16) -> Convert(f32) -> MaxPool-8 (both outputs) and Parameter -> AvgPool chain."""
    net = NetBuilder("consts")
    c = net.const("table", np.arange(32, dtype=np.float16).reshape(1, 2, 4, 4) - 7)
    conv = net.op(
        "Convert", "opset1", "decompress", {"destination_type": "f32"}, [c], [((1, 2, 4, 4), "f32")]
    )[0]
    mp = net.op(
        "MaxPool", "opset8", "mp", MP8, [conv], [((1, 2, 2, 2), "f32"), ((1, 2, 2, 2), "i32")]
    )
    x = net.parameter("x", (1, 2, 6, 6), "f32")
    a1 = net.op("AvgPool", "opset1", "a1", AVG1, [x], [((1, 2, 6, 6), "f32")])[0]
    a2 = net.op("AvgPool", "opset14", "a2", AVG14, [a1], [((1, 2, 3, 3), "f32")])[0]
    net.result("max_values", mp[0])
    net.result("max_indices", mp[1])
    net.result("chain", a2)
    path = tmp_path / "consts.xml"
    path.write_text(net.xml())
    (tmp_path / "consts.bin").write_bytes(net.bin())
    return str(path)


@pytest.mark.oracle
def test_const_convert_chain_matches_openvino(ov: ModuleType, tmp_path: Path) -> None:
    path = _const_net(tmp_path)
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    got = run_graph(load(path), {"x": x})
    expected = openvino_outputs(path, {"x": x})
    for key, value in expected.items():
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)


@pytest.mark.oracle
def test_integer_tensor_held_in_float32_through_a_dropped_convert(
    ov: ModuleType, tmp_path: Path
) -> None:
    """An i32 AvgPool of three channels runs in float32; its 2147483647 is 2147483648.0 there.
    A Result reads it as 2147483520 (the largest float32 below 2^31), but a Convert to i64,
    which the plugin holds as i32 too, is dropped: the next AvgPool averages 2147483648.0 with
    INT32_MIN and gives 0, not -64.  openvino is the truth."""
    net = NetBuilder()
    one = layer_data("AvgPool", 1, (1,), (1,), (0,), (0,), exclude_pad=True)
    two = layer_data("AvgPool", 1, (2,), (2,), (0,), (0,), exclude_pad=True)
    x = net.parameter("x", (1, 3, 8), "i32")
    p0 = net.op("AvgPool", "opset1", "p0", one, [x], [((1, 3, 8), "i32")])[0]
    net.result("r0", p0)
    c1 = net.op("Convert", "opset1", "c1", {"destination_type": "i64"}, [p0], [((1, 3, 8), "i64")])
    p2 = net.op("AvgPool", "opset1", "p2", two, c1, [((1, 3, 4), "i64")])[0]
    net.result("out", p2)
    path = tmp_path / "chain.xml"
    path.write_text(net.xml())
    (tmp_path / "chain.bin").write_bytes(net.bin())
    data = np.full((1, 3, 8), np.iinfo(np.int32).min, np.int32)
    data[0, 2, 7] = np.iinfo(np.int32).max
    got = run_graph(load(str(path)), {"x": data})
    expected = openvino_outputs(str(path), {"x": data})
    assert expected["out"][0, 2, 3] == 0  # the case this test is about
    for key, value in expected.items():
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)


def test_const_values_are_read_from_the_bin(tmp_path: Path) -> None:
    path = _const_net(tmp_path)
    got = run_graph(load(path), {"x": np.zeros((1, 2, 6, 6), np.float32)})
    table = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) - 7
    # 2x2 windows of a ramp: the bottom-right element of each window is its maximum
    np.testing.assert_array_equal(got.outputs["max_values"], table[:, :, 1::2, 1::2])
    np.testing.assert_array_equal(
        got.outputs["max_indices"].ravel(), [5, 7, 13, 15, 21, 23, 29, 31]
    )


def test_cli_random_inputs_are_saved_and_reproducible(tmp_path: Path) -> None:
    model = str(ROOT / "fixtures" / "ir" / "pool_zoo.xml")
    out = irpool("run", model, "-o", str(tmp_path / "a.npz"), "--seed", "7", "--save-all")
    assert out.returncode == 0, out.stderr
    saved = load_arrays(str(tmp_path / "a.inputs.npz"))
    assert list(saved) == ["x"]
    again = irpool(
        "run", model, "-i", str(tmp_path / "a.inputs.npz"), "-o", str(tmp_path / "b.npz")
    )
    assert again.returncode == 0, again.stderr
    first, second = load_arrays(str(tmp_path / "a.npz")), load_arrays(str(tmp_path / "b.npz"))
    for key, value in second.items():
        np.testing.assert_array_equal(first[key], value)
    assert "mp1:1" in first and "ap1_ceil:1" in first  # --save-all: layername:port


def test_cli_inputs_by_name_and_errors(tmp_path: Path) -> None:
    model = str(ROOT / "fixtures" / "ir" / "ranks.xml")
    x1 = np.zeros((2, 4, 50), np.float32)
    x3 = np.zeros((1, 2, 9, 10, 11), np.float16)
    np.save(tmp_path / "x1.npy", x1)
    np.save(tmp_path / "x3.npy", x3)

    def run(x1d: str, out: str, *more: str) -> subprocess.CompletedProcess[str]:
        x3d = f"x3d={tmp_path / 'x3.npy'}"
        return irpool("run", model, "-i", f"x1d={tmp_path / x1d}", "-i", x3d, "-o", out, *more)

    ok = run("x1.npy", str(tmp_path / "o.npz"))
    assert ok.returncode == 0, ok.stderr
    np.save(tmp_path / "bad.npy", x1.astype(np.float64))
    bad = run("bad.npy", str(tmp_path / "p.npz"))
    assert bad.returncode == 2 and "float64" in bad.stderr and "--cast" in bad.stderr
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "p.npz").exists()
    cast = run("bad.npy", str(tmp_path / "p.npz"), "--cast")
    assert cast.returncode == 0, cast.stderr
    np.save(tmp_path / "shape.npy", np.zeros((2, 4, 49), np.float32))
    shape = run("shape.npy", str(tmp_path / "q.npz"))
    assert shape.returncode == 2 and "[2,4,49]" in shape.stderr
    missing = irpool(
        "run", model, "-i", f"x1d={tmp_path / 'x1.npy'}", "-o", str(tmp_path / "r.npz")
    )
    assert missing.returncode == 2 and "x3d" in missing.stderr


def test_cli_output_rules(tmp_path: Path) -> None:
    model = str(ROOT / "fixtures" / "ir" / "pool_zoo.xml")
    target = tmp_path / "out.npz"
    target.write_bytes(b"mine")
    exists = irpool("run", model, "-o", str(target))
    assert exists.returncode == 2 and "exists" in exists.stderr
    assert target.read_bytes() == b"mine"
    forced = irpool("run", model, "-o", str(target), "--force")
    assert forced.returncode == 0 and target.read_bytes() != b"mine"
    assert irpool("run", model, "-o", str(tmp_path)).returncode == 2
    assert irpool("run", model, "-o", str(tmp_path / "no" / "o.npz")).returncode == 2
    assert irpool("run", model, "-o", model, "--force").returncode == 2
    assert not list(tmp_path.glob(".irpool-*"))


def test_cli_unsupported_layers_point_to_compare() -> None:
    out = irpool("run", "fixtures/real/squeezenet.xml", "-o", "/tmp/never.npz")
    assert out.returncode == 2 and "irpool compare" in out.stderr
    assert "Convolution" in out.stderr and out.stderr.count("\n") == 1


def test_cli_single_layer_of_a_real_model(tmp_path: Path) -> None:
    out = irpool(
        "run", "fixtures/real/squeezenet.xml", "--layer", "n17", "-o", str(tmp_path / "n17.npz")
    )
    assert out.returncode == 0, out.stderr
    arrays = load_arrays(str(tmp_path / "n17.npz"))
    assert arrays["output0"].shape == (1, 128, 27, 27)
    assert arrays["output1"].dtype == np.int64


def test_bfloat16_round_trip(tmp_path: Path) -> None:
    from irpool.model import bfloat16

    bf16 = bfloat16()
    if bf16 is None:
        pytest.skip("ml_dtypes is not installed")
    x = np.array([[1.5, -2.25, 3.0]], dtype=bf16)
    save_npz(str(tmp_path / "b.npz"), {"x": x})
    back = load_arrays(str(tmp_path / "b.npz"))["x"]
    assert back.dtype == bf16 and np.array_equal(back.view(np.uint16), x.view(np.uint16))


def _random_pool(ov: ModuleType, rng: np.random.Generator, src: object, rank: int) -> list:
    """One random pooling node of any openvino version on `src`; its outputs to keep."""
    from openvino import opset1, opset8, opset14, opset16

    k = [int(v) for v in rng.integers(1, 5, rank)]
    s = [int(v) for v in rng.integers(1, 4, rank)]
    pb = [int(rng.integers(0, kk)) for kk in k]
    pe = [int(rng.integers(0, kk)) for kk in k]
    auto = str(
        rng.choice(["explicit", "explicit", "explicit", "same_upper", "same_lower", "valid"])
    )
    if rng.random() < 0.5:
        version = int(rng.choice([1, 14, 16]))
        rounding = str(rng.choice(["floor", "ceil"] + (["ceil_torch"] if version > 1 else [])))
        exclude = bool(rng.random() < 0.5)
        if version == 1:
            return [opset1.avg_pool(src, s, pb, pe, k, exclude, rounding, auto).output(0)]
        if version == 14:
            return [opset14.avg_pool(src, s, pb, pe, k, exclude, rounding, auto).output(0)]
        d = [int(v) for v in rng.integers(1, 3, rank)]
        node = opset16.avg_pool(src, s, pb, pe, k, exclude, rounding, auto, dilations=d)
        return [node.output(0)]
    version = int(rng.choice([1, 8, 14]))
    rounding = str(rng.choice(["floor", "ceil"] + (["ceil_torch"] if version == 14 else [])))
    if version == 1:
        return [opset1.max_pool(src, s, pb, pe, k, rounding, auto).output(0)]
    d = [int(v) for v in rng.integers(1, 3, rank)]
    module = opset8 if version == 8 else opset14
    axis = int(rng.choice([0, 2]))
    node = module.max_pool(
        src, s, d, pb, pe, k, rounding, auto, str(rng.choice(["i32", "i64"])), axis
    )
    return [node.output(0)] + ([node.output(1)] if rng.random() < 0.6 else [])


@pytest.mark.oracle
def test_nets_written_by_openvino_match_it(ov: ModuleType, tmp_path: Path) -> None:
    """Random chains and branches of pooling layers, built and saved by openvino itself, then
    run by `irpool.run` from the .xml: every output bit-identical to openvino's CPU plugin.

    Chains of f16 layers pin down that openvino keeps f16 tensors in f32 between layers. One
    openvino quirk is left out (docs/semantics.md): in a u8 chain with more than one channel,
    a window with no input (0/0) that feeds another layer comes out 255 instead of the 0 a
    Result gets."""
    from openvino import opset1

    import irpool

    rng = np.random.default_rng(20261122)
    types = {
        "f32": np.float32,
        "f16": np.float16,
        "i8": np.int8,
        "u8": np.uint8,
        "i32": np.int32,
        "i64": np.int64,
    }
    compared = 0
    nets = sweep(quick=80, full=400)
    for case in range(nets):
        rank = int(rng.choice([1, 2, 2, 3]))
        et = str(rng.choice(["f32", "f32", "f16", "f16", "i8", "u8", "i32", "i64"]))
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
        shape += [int(v) for v in rng.integers(1, 9, rank)]
        param = opset1.parameter(shape, getattr(ov.Type, et), name="x")
        topology = str(rng.choice(["single", "chain", "branch"]))
        try:
            first = _random_pool(ov, rng, param, rank)
            if topology == "single":
                outputs = first
            elif topology == "chain":
                outputs = _random_pool(ov, rng, first[0], rank) + first[1:]
            else:
                outputs = first + _random_pool(ov, rng, param, rank)
        except RuntimeError:  # openvino's shape inference refuses the geometry
            continue
        path = tmp_path / f"net{case}.xml"
        ov.save_model(ov.Model([opset1.result(o) for o in outputs], [param]), str(path))
        dtype = types[et]
        if dtype in (np.float32, np.float16):
            x = (rng.standard_normal(shape) * 3).astype(dtype)
        elif dtype in (np.int32, np.int64):  # beyond float32's 24 bits and int32 sums
            x = rng.integers(-(2**30), 2**30, shape).astype(dtype)
        else:
            x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, shape).astype(dtype)
        try:
            expected = openvino_outputs(str(path), {"x": x})
        except RuntimeError:  # the CPU plugin cannot compile it (bf16/f16 indices, ...)
            continue
        got = irpool.run(str(path), x)
        assert isinstance(got, RunResult)
        for name, want in expected.items():
            have = got.outputs[name]
            assert have.dtype == want.dtype and have.shape == want.shape, (case, name)
            wide = have.astype(np.float64), want.astype(np.float64)
            same = (wide[0] == wide[1]) | (np.isnan(wide[0]) & np.isnan(wide[1]))
            if et == "u8" and topology == "chain" and shape[1] > 1 and not same.all():
                assert set(want[~same].tolist()) == {255} and set(have[~same].tolist()) == {0}
                continue
            assert same.all(), (case, name, topology, et, shape, have, want)
        compared += 1
    assert compared >= nets * 5 // 8, compared


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["i32", "i64", "i8"])
def test_integer_layers_of_many_channels_run_in_float32(
    ov: ModuleType, tmp_path: Path, et: str
) -> None:
    """openvino's CPU plugin pools an integer tensor of one channel in integers, and one of
    several channels in float32 (docs/semantics.md): 2^24 + 1 survives a max in the first
    case and becomes 2^24 in the second; the mean of 2^30 and 2^30 + 2 wraps around in the
    int32 sum (-2^30) in the first and is 2^30 in float32 in the second.  Rows of 8: on an
    AVX2 CPU the plugin's one-channel integer AvgPool needs at least 4 outputs (oneDNN's
    integer jit; refused below, see geometry._avx2_integer_jit)."""
    from openvino import opset1

    import irpool

    dtype = {"i32": np.int32, "i64": np.int64, "i8": np.int8}[et]
    for channels in (1, 3):
        param = opset1.parameter([1, channels, 8], getattr(ov.Type, et), name="x")
        biggest = opset1.max_pool(param, [1], [0], [0], [1], "floor", "explicit")
        mean = opset1.avg_pool(param, [2], [0], [0], [2], True, "floor", "explicit")
        path = tmp_path / f"{et}{channels}.xml"
        model = ov.Model([opset1.result(biggest), opset1.result(mean)], [param])
        ov.save_model(model, str(path))
        wide = channels > 1
        tail = [1, 2, 3, 5]  # means 1.5 -> 2 (half to even) and 4
        if et == "i8":  # 8-bit values are exact in float32: both paths agree
            row = [127, -128, 3, 4, *tail]
            max_row, mean_row = row, [0, 4, 2, 4]  # -0.5 and 3.5, half to even
        else:
            row = [2**24 + 1, 7, 2**30, 2**30 + 2, *tail]
            max_row = [2**24, 7, 2**30, 2**30, *tail] if wide else row
            mean_row = [8388612, 2**30 if wide else -(2**30), 2, 4]
        x = np.tile(np.array(row, dtype=dtype), (1, channels, 1))
        want = openvino_outputs(str(path), {"x": x})
        got = irpool.run(str(path), x)
        assert isinstance(got, RunResult)
        names = list(want)
        for name in names:
            np.testing.assert_array_equal(got.outputs[name], want[name], err_msg=f"{et} {name}")
        assert got.outputs[names[0]][0, 0].tolist() == max_row  # hand arithmetic
        assert got.outputs[names[1]][0, 0].tolist() == mean_row


@pytest.mark.oracle
def test_empty_dilated_windows_divide_as_openvino(ov: ModuleType, tmp_path: Path) -> None:
    """A window of a dilated AvgPool-16 axis with no tap in the input (the ceil overhang):
    openvino divides its zero sum by the clamped extent over the dilation, truncated, so it
    gives NaN, -0.0 or +0.0; irpool must give the same bits, for every such window."""
    from openvino import opset1, opset16

    import irpool

    empty = 0
    for n, k, d, s, pe in itertools.product(range(1, 6), (1, 2, 3), (2, 3), (1, 2, 3, 4), (0, 2)):
        param = opset1.parameter([1, 2, n], ov.Type.f32, name="x")
        try:
            node = opset16.avg_pool(param, [s], [0], [pe], [k], True, "ceil", dilations=[d])
        except RuntimeError:
            continue
        path = tmp_path / "dil.xml"
        ov.save_model(ov.Model([opset1.result(node)], [param]), str(path))
        x = np.arange(1, 2 * n + 1, dtype=np.float32).reshape(1, 2, n)
        (want,) = openvino_outputs(str(path), {"x": x}).values()
        got = irpool.run(str(path), x)
        assert isinstance(got, RunResult)
        (have,) = got.outputs.values()
        assert np.array_equal(
            have.view(np.uint32) & 0x807FFFFF, want.view(np.uint32) & 0x807FFFFF
        ) and (np.array_equal(np.isnan(have), np.isnan(want))), (n, k, d, s, pe, have, want)
        empty += int(np.isnan(want).sum() + ((want == 0) & np.signbit(want)).sum())
    assert empty >= 20, empty  # the sweep really reaches empty windows


@pytest.mark.oracle
def test_a_convert_to_f16_inside_the_net_rounds_nothing(ov: ModuleType, tmp_path: Path) -> None:
    """openvino at f32 precision drops a Convert to f16 between layers: the average below is
    taken from the unrounded f32 inputs (measured), and only the f16 output is rounded."""
    from openvino import opset1

    import irpool

    param = opset1.parameter([1, 1, 1, 12], ov.Type.f32, name="x")
    half = opset1.convert(param, "f16")
    pooled = opset1.avg_pool(half, [1, 1], [0, 0], [0, 0], [1, 2], False, "floor", "explicit")
    path = tmp_path / "convert.xml"
    ov.save_model(ov.Model([opset1.result(pooled)], [param]), str(path))
    x = np.random.default_rng(1).standard_normal((1, 1, 1, 12)).astype(np.float32)
    want = openvino_outputs(str(path), {"x": x})
    got = irpool.run(str(path), x)
    assert isinstance(got, RunResult)
    (name,) = want
    np.testing.assert_array_equal(got.outputs[name], want[name])
    flat = x.ravel()
    unrounded = ((flat[:-1] + flat[1:]) * np.float32(0.5)).astype(np.float16)
    np.testing.assert_array_equal(got.outputs[name].ravel(), unrounded)  # hand arithmetic


@pytest.mark.oracle
def test_f16_ir_v10_nets_run_in_f32_throughout(ov: ModuleType, tmp_path: Path) -> None:
    """openvino reads an f16 IR v10 net as an f32 one: f32 inputs are not rounded to f16, and
    neither is anything after them (measured); v11 rounds the outputs."""
    from openvino import opset1

    import irpool

    x = opset1.parameter([1, 2, 9, 9], ov.Type.f16, name="x")
    first = opset1.avg_pool(x, [1, 1], [1, 1], [1, 1], [3, 3], False, "floor", "explicit")
    second = opset1.avg_pool(first, [2, 2], [0, 0], [0, 0], [2, 2], True, "ceil", "explicit")
    v11 = tmp_path / "v11.xml"
    ov.save_model(ov.Model([opset1.result(second)], [x]), str(v11))
    v10 = tmp_path / "v10.xml"
    v10.write_text(v11.read_text().replace('version="11"', 'version="10"', 1))
    (tmp_path / "v10.bin").write_bytes((tmp_path / "v11.bin").read_bytes())
    data = np.random.default_rng(4).standard_normal((1, 2, 9, 9)).astype(np.float32)
    for path, given in ((v10, data), (v11, data.astype(np.float16))):
        want = openvino_outputs(str(path), {"x": given})
        got = irpool.run(str(path), given)
        assert isinstance(got, RunResult)
        for name, value in want.items():
            assert got.outputs[name].dtype == value.dtype, path.name
            np.testing.assert_array_equal(got.outputs[name], value, err_msg=path.name)
