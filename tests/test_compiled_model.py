"""irpool.compile_model: a model prepared once gives, call after call, what irpool.run gives
(bit for bit, every Result), on every family, on chains with glue, on dynamic shapes, with
and without the compiled path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from family_helpers import adaptive_net, random_values, reduce_net, same_bits, save

import irpool
from irpool.errors import InputError, UsageError
from irpool.frontends.ir_writer import NetBuilder


def _same_as_run(model: str, x: Any, **kw: Any) -> Any:
    f = irpool.compile_model(model, **kw)
    runs = [f(x) for _ in range(2)]
    convention = kw.get("convention")
    expected = irpool.run(model, x, convention, input_shapes=kw.get("input_shapes")).outputs
    for got in runs:
        assert set(got) == set(expected)
        for name, value in expected.items():
            assert same_bits(got[name], value), name
    return f


def _windowed_net(op: str, shape: list[int], element_type: str = "f32") -> NetBuilder:
    net = NetBuilder("windowed")
    x = net.parameter("x", shape, element_type)
    attrs = {"kernel": "3,3", "strides": "2,2", "pads_begin": "1,1", "pads_end": "1,1"}
    out_dims = [*shape[:2], (shape[2] + 1) // 2, (shape[3] + 1) // 2]
    if op == "AvgPool":
        attrs["exclude-pad"] = "true"
        outs = net.op("AvgPool", "opset1", "pool", attrs, [x], [(out_dims, element_type)])
    else:
        outs = net.op("MaxPool", "opset1", "pool", attrs, [x], [(out_dims, element_type)])
    net.result("values", outs[0])
    return net


@pytest.mark.parametrize("kind", ["mean", "max", "sum", "l1", "l2"])
@pytest.mark.parametrize(
    "shape,axes", [((2, 20, 5, 7), [2, 3]), ((1, 24, 6, 5), [1]), ((3, 17), [-1])]
)
def test_reductions(tmp_path: Path, kind: str, shape: tuple[int, ...], axes: list[int]) -> None:
    x = random_values(np.random.default_rng(1), shape, special=kind == "max")
    path = save(reduce_net(kind, shape, axes, True), tmp_path)
    _same_as_run(path, x, threads=1)


@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_adaptive(tmp_path: Path, reduce: str) -> None:
    x = random_values(np.random.default_rng(2), (1, 6, 13, 11))
    path = save(adaptive_net(reduce, x.shape, (6, 4)), tmp_path)
    f = _same_as_run(path, x)
    assert f.outputs == (["values"] if reduce == "mean" else ["values", "indices"])


@pytest.mark.parametrize("op", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("path_setting", ["numpy", "auto"])
def test_windowed(tmp_path: Path, op: str, path_setting: str) -> None:
    x = random_values(np.random.default_rng(3), (1, 8, 9, 10))
    path = save(_windowed_net(op, [1, 8, 9, 10]), tmp_path)
    f = _same_as_run(path, x, path=path_setting)
    if path_setting == "numpy":
        assert f.path == "numpy" and [la.path for la in f.layers] == ["numpy"]


def _half_values(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """float16 values of all magnitudes with NaN, +-inf, -0, subnormals and the largest
    finite values mixed in."""
    x = random_values(rng, shape).astype(np.float16)
    specials = np.array(
        [np.nan, np.inf, -np.inf, -0.0, 0.0, 6e-8, -6e-8, 3e-5, -1e-6, 65504.0, -65504.0],
        dtype=np.float16,
    )
    where = rng.random(shape) < 0.25
    x[where] = rng.choice(specials, int(where.sum()))
    return x


@pytest.mark.parametrize("op", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("path_setting", ["numpy", pytest.param("auto", marks=pytest.mark.slow)])
def test_f16_layer_runs_its_prepared_plan(tmp_path: Path, op: str, path_setting: str) -> None:
    """A one-layer f16 net (the plugin widens to float32, pools, rounds at the Result) runs
    the plan for f16 data, as compile_pool does: the same bits as irpool.run."""
    x = _half_values(np.random.default_rng(4), (1, 4, 9, 10))
    path = save(_windowed_net(op, [1, 4, 9, 10], "f16"), tmp_path)
    f = _same_as_run(path, x, path=path_setting)
    assert [la.path for la in f.layers] != ["interpreted"]
    if path_setting == "numpy":
        assert [la.path for la in f.layers] == ["numpy"]


@pytest.mark.parametrize(
    "op,path_setting",
    [
        ("AvgPool", "auto"),
        ("MaxPool", "numpy"),
        pytest.param("MaxPool", "auto", marks=pytest.mark.slow),
    ],
)
def test_bf16_layer_runs_its_prepared_plan(tmp_path: Path, op: str, path_setting: str) -> None:
    """A one-layer bf16 net runs the plan for bfloat16 data (the compiled kernel where numba
    is installed, as compile_pool does), on one thread: the same bits as irpool.run."""
    from irpool.model import bfloat16

    x = _half_values(np.random.default_rng(6), (1, 4, 9, 10)).astype(np.float32)
    x = x.astype(bfloat16())
    path = save(_windowed_net(op, [1, 4, 9, 10], "bf16"), tmp_path)
    f = irpool.compile_model(path, path=path_setting, threads=1)
    expected = irpool.run(path, x).outputs["values"].view(np.uint16)
    for _ in range(2):  # bit for bit, NaN payloads included
        assert np.array_equal(f(x)["values"].view(np.uint16), expected)
    kernel = "numpy" if path_setting == "numpy" else "compiled"
    assert [la.path for la in f.layers] == [kernel]


def test_f16_layer_read_by_another_layer_stays_interpreted(tmp_path: Path) -> None:
    """An f16 pool whose output a second pool reads (held in float32 between them, not
    rounded): the interpreter's steps, the same bits."""
    net = NetBuilder("two")
    x = net.parameter("x", [1, 3, 9, 9], "f16")
    attrs = {"kernel": "3,3", "strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0"}
    attrs["exclude-pad"] = "true"
    a = net.op("AvgPool", "opset1", "a", attrs, [x], [([1, 3, 7, 7], "f16")])
    b = net.op("AvgPool", "opset1", "b", attrs, [a[0]], [([1, 3, 5, 5], "f16")])
    net.result("values", b[0])
    path = save(net, tmp_path)
    f = _same_as_run(path, _half_values(np.random.default_rng(5), (1, 3, 9, 9)))
    assert [la.path for la in f.layers] == ["interpreted", "interpreted"]


def _pool_then_reduce(net: NetBuilder, src: Any, reduce: str, name: str) -> tuple[Any, Any]:
    """A 2x2 stride-2 MaxPool of `src` ([1, 6, 8, 8]) and a `reduce` over its H and W."""
    pool = net.op(
        "MaxPool",
        "opset1",
        "pool",
        {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0"},
        [src],
        [([1, 6, 4, 4], "f32")],
    )
    axes = net.const("axes", np.asarray([2, 3], np.int64))
    out = net.op(
        reduce, "opset1", name, {"keep_dims": "true"}, [pool[0], axes], [([1, 6, 1, 1], "f32")]
    )
    return pool, out


def test_chain_with_glue(tmp_path: Path) -> None:
    """Parameter -> ReLU -> MaxPool -> ReduceMean (axes a Const) -> Multiply by a Const."""
    net = NetBuilder("chain")
    x = net.parameter("x", [1, 6, 8, 8])
    relu = net.op("Relu", "opset1", "relu", {}, [x], [([1, 6, 8, 8], "f32")])
    pool, mean = _pool_then_reduce(net, relu[0], "ReduceMean", "mean")
    scale = net.const("scale", np.full((1, 6, 1, 1), 0.5, np.float32))
    out = net.op("Multiply", "opset1", "mul", {}, [mean[0], scale], [([1, 6, 1, 1], "f32")])
    net.result("y", out[0])
    net.result("pooled", pool[0])
    path = save(net, tmp_path)
    x_in = random_values(np.random.default_rng(5), (1, 6, 8, 8))
    f = _same_as_run(path, {"x": x_in})
    assert sorted(f.outputs) == ["pooled", "y"]


def test_input_shapes_and_errors(tmp_path: Path) -> None:
    path = save(reduce_net("mean", (1, 8, 7, 7), [2, 3], True), tmp_path)
    x = random_values(np.random.default_rng(6), (2, 8, 5, 5))
    _same_as_run(path, x, input_shapes=[2, 8, 5, 5])
    f = irpool.compile_model(path)
    assert f.inputs == {"x": ((1, 8, 7, 7), "float32")}
    with pytest.raises(InputError, match="has shape"):
        f(x)
    with pytest.raises(InputError, match="dtype float64"):
        f(np.zeros((1, 8, 7, 7)))
    with pytest.raises(UsageError, match="no input for Parameter"):
        f({"nope": np.zeros((1, 8, 7, 7), np.float32)})


def test_without_numba_it_says_so(tmp_path: Path, monkeypatch: Any) -> None:
    from irpool.kernel import compiled

    monkeypatch.setattr(compiled, "installed", lambda: False)
    path = save(reduce_net("max", (1, 8, 7, 7), [2, 3], True), tmp_path)
    f = irpool.compile_model(path, path="auto")
    assert f.path == "numpy"
    assert "numba is not installed" in f.why
    with pytest.raises(UsageError, match="needs numba"):
        irpool.compile_model(path, path="compiled")


def test_a_fragment_file_is_refused(tmp_path: Path) -> None:
    frag = tmp_path / "f.xml"
    frag.write_text(
        '<layer id="0" name="p" type="MaxPool" version="opset1"><data kernel="2" strides="2"/>'
        '<input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim></port></input>'
        '<output><port id="1"><dim>1</dim><dim>1</dim><dim>2</dim></port></output></layer>'
    )
    with pytest.raises(UsageError, match="fragments"):
        irpool.compile_model(str(frag))


def test_a_role_it_does_not_prepare_runs_the_whole_graph(tmp_path: Path, monkeypatch: Any) -> None:
    """A layer role compiled_model does not know (a newer interpreter's) is not guessed at:
    the whole graph runs on run_graph per call, and `why` says so."""
    from irpool import compiled_model

    def unknown(*args: Any, **kwargs: Any) -> Any:
        raise compiled_model._Unknown("novel")

    monkeypatch.setattr(compiled_model.CompiledModel, "_layer_step", unknown)
    x = random_values(np.random.default_rng(8), (1, 4, 6, 6))
    path = save(reduce_net("sum", (1, 4, 6, 6), [2, 3], True), tmp_path)
    f = _same_as_run(path, x)
    assert "every layer interpreted" in f.why and f.layers == []


@pytest.mark.parametrize("name", ["u8-ap1", "zp-mp1", "zp-rmean", "pc-rmax+fq", "chain"])
def test_quantized_chains(name: str, tmp_path: Path) -> None:
    """FakeQuantize chains (LPT's codes): the interpreter's steps, the same bits as run."""
    ov = pytest.importorskip("openvino")
    from lpt_zoo import zoo

    shape, build = zoo(ov)[name]
    path = str(tmp_path / "m.xml")
    ov.save_model(build(), path, compress_to_fp16=False)
    x = np.random.default_rng(7).uniform(-1.5, 3.5, shape).astype(np.float32)
    _same_as_run(path, {"x": x})


def test_a_result_is_not_overwritten_by_the_next_call(tmp_path: Path) -> None:
    """The one-input fast path returns fresh arrays: a kept result survives later calls."""
    path = save(reduce_net("mean", (1, 20, 7, 7), [2, 3], True), tmp_path)
    f = irpool.compile_model(path, threads=1)
    rng = np.random.default_rng(11)
    x1, x2 = random_values(rng, (1, 20, 7, 7)), random_values(rng, (1, 20, 7, 7))
    first = f(x1)
    kept = {name: value.copy() for name, value in first.items()}
    second = f(x2)
    again = f({"x": x2})
    for name, value in irpool.run(path, x2).outputs.items():
        assert same_bits(second[name], value) and same_bits(again[name], value)
    for name, value in kept.items():
        assert same_bits(first[name], value)


def test_a_chain_of_kernels_runs_on_arrays(tmp_path: Path) -> None:
    """MaxPool -> ReduceMax with no glue between: every step has its array form, and both
    Results, call after call, are irpool.run's."""
    net = NetBuilder("kernels")
    x = net.parameter("x", [1, 6, 8, 8])
    pool, top = _pool_then_reduce(net, x, "ReduceMax", "top")
    net.result("y", top[0])
    net.result("pooled", pool[0])
    path = save(net, tmp_path)
    x_in = random_values(np.random.default_rng(12), (1, 6, 8, 8), special=True)
    f = _same_as_run(path, x_in, threads=1)
    program = f._last[1] if f._last else None
    assert program is not None and program.arrays is not None


@pytest.mark.parametrize("element_type", ["i8", "u8", "i32"])
@pytest.mark.parametrize("kind", ["mean", "max", "l2"])
def test_integer_reductions(tmp_path: Path, element_type: str, kind: str) -> None:
    """An integer reduction over H, W of a plain integer input: the compiled kernel (the
    plugin's integer stores), bit for bit irpool.run's."""
    dtype = {"i8": np.int8, "u8": np.uint8, "i32": np.int32}[element_type]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((1, 20, 7, 7)) * 200).clip(info.min, info.max).astype(dtype)
    path = save(reduce_net(kind, (1, 20, 7, 7), [2, 3], True, element_type), tmp_path)
    f = _same_as_run(path, x, threads=1)
    assert [la.path for la in f.layers] == ["compiled"], f.why


def test_a_maxpool_8_whose_indices_nothing_reads(tmp_path: Path) -> None:
    """MaxPool-8 with its indices output unread: compile_model computes the values alone,
    bit for bit irpool.run's (NaN, zeros of both signs, infinities)."""
    net = NetBuilder("mp8")
    x = net.parameter("x", [1, 6, 9, 9])
    attrs = {
        "kernel": "3,3",
        "strides": "2,2",
        "dilations": "1,1",
        "pads_begin": "1,1",
        "pads_end": "1,1",
        "index_element_type": "i64",
    }
    out = [1, 6, 5, 5]
    outs = net.op("MaxPool", "opset8", "pool", attrs, [x], [(out, "f32"), (out, "i64")])
    net.result("values", outs[0])
    path = save(net, tmp_path)
    x_in = random_values(np.random.default_rng(14), (1, 6, 9, 9), special=True)
    f = _same_as_run(path, x_in, threads=1)
    assert f.outputs == ["values"] and [la.path for la in f.layers] == ["compiled"]


def _openvino_outputs(ov: Any, path: str, x: np.ndarray) -> dict[str, np.ndarray]:
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}
    compiled = core.compile_model(core.read_model(path), "CPU", config)
    request = compiled.create_infer_request()
    request.infer({0: x})
    return {
        next(iter(out.get_names())): np.array(request.get_tensor(out).data)
        for out in compiled.outputs
    }


FQ_CHAINS = [
    "u8-ap1+fq",
    "i8-ap14_ceil_pad+fq",
    "zp-ap1_pad+fq",
    "pc-ap1_excl+fq",
    "pci8-ap1_ceil+fq",
    "zp-mp1+fq",
    "pci8-mp8",
    "zp-rmean+fq",
    "pc-rmax+fq",
    "u8-rmean+fq",
    "u8-rmax",
    "chain",
    "max-then-avg",
    "levels255",
    "readers",
    "mean-head",
    "max-head",
]


@pytest.mark.parametrize("name", FQ_CHAINS)
def test_fq_chains_prepared_equal_run_and_openvino(name: str, tmp_path: Path) -> None:
    """FakeQuantize chains prepared once (LPT's reading, the plan on codes, the fused ranges):
    the same bits as irpool.run and as openvino's CPU plugin, call after call; the pooling
    layer runs on LPT's codes, not on the interpreter's steps.  "readers": the FakeQuantize's
    value and the AvgPool's dequantized output are Results too (the steps that skip what
    nothing reads must still compute them; the FakeQuantize's Result reads LPT's
    dequantization, (codes - shift) * scale, since its range has a zero point)."""
    ov = pytest.importorskip("openvino")
    from lpt_zoo import zoo

    if name == "readers":
        o1 = ov.opset1
        shape: tuple[int, ...] = (1, 6, 11, 11)

        def c(v: float) -> Any:
            return o1.constant(np.float32(v))

        def build() -> Any:
            x = o1.parameter(list(shape), np.float32, name="x")
            q = o1.fake_quantize(x, c(-0.5), c(2.05), c(-0.5), c(2.05), 256)
            pool = o1.avg_pool(q, [2, 2], [1, 1], [1, 1], [3, 3], False)
            out = o1.fake_quantize(pool, c(0.0), c(2.0), c(0.0), c(2.0), 256)
            return ov.Model([o1.result(t) for t in (q, pool, out)], [x], name)

    elif name.endswith("-head"):
        # a quantized network's head: u8 codes from 0 (as after a ReLU), a reduction over
        # H, W, 256 outputs
        o1 = ov.opset1
        shape = (1, 256, 7, 7)
        reduce = o1.reduce_mean if name == "mean-head" else o1.reduce_max

        def build() -> Any:
            x = o1.parameter(list(shape), np.float32, name="x")
            lo, hi = o1.constant(np.float32(0.0)), o1.constant(np.float32(2.55))
            q = o1.fake_quantize(x, lo, hi, lo, hi, 256)
            out = reduce(q, o1.constant(np.array([2, 3])), True)
            return ov.Model([o1.result(out)], [x], name)

    else:
        shape, build = zoo(ov)[name]
    path = str(tmp_path / "m.xml")
    ov.save_model(build(), path, compress_to_fp16=False)
    models = [irpool.compile_model(path, threads=1, path=kp) for kp in ("auto", "numpy")]
    for f in models:
        assert f.layers and all(la.path != "interpreted" for la in f.layers), f.why
        assert not f.why.startswith("the prepared steps differed"), f.why
    for seed in (3, 4):
        x = np.random.default_rng(seed).uniform(-1.5, 3.5, shape).astype(np.float32)
        # zeros of both signs (a clamp bound of u8 ranges is 0) and a range's bound
        x.reshape(-1)[::7] = np.float32(-0.0)
        x.reshape(-1)[3::11] = np.float32(0.0)
        x.reshape(-1)[5::13] = np.float32(2.55)
        if name == "readers":
            x.reshape(-1)[6::17] = np.float32(2.05)
        got = [f(x) for f in models for _ in range(2)]
        expected = irpool.run(path, x).outputs
        truth = _openvino_outputs(ov, path, x)
        assert len(truth) == len(expected)
        for value in got:
            assert set(value) == set(expected)
            for key, want in expected.items():
                assert same_bits(value[key], want), key
        for key, want in expected.items():
            names = [n for n in truth if n in key or key in n] or list(truth)
            assert same_bits(want, truth[names[0]].reshape(want.shape)), key
