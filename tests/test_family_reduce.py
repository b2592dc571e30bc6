"""ReduceMean/Max/Sum/L1/L2 and ONNX GlobalAveragePool/GlobalMaxPool: irpool's kernel against
a brute-force reference of the measured orders of operations (bit for bit), against openvino's
CPU plugin, onnxruntime and PyTorch on random shapes and axes, and through check, run and
explain."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool
from family_helpers import (
    cli_explain_layer,
    cli_run_layer,
    et,
    irpool_run,
    openvino_run,
    ov_lanes,
    random_values,
    reduce_net,
    same_bits,
    save,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_family import ort_global, ov_reduce

from irpool.check import check_file
from irpool.frontends.ir_xml import load
from irpool.ops import bind
from irpool.run import run_layer

FEW = settings(max_examples=30, deadline=None)


@st.composite
def cases(draw: Any, max_rank: int = 6) -> tuple[np.ndarray, list[int], str, bool]:
    rank = draw(st.integers(1, max_rank))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    if draw(st.booleans()):
        shape[-1] = draw(st.integers(5, 40))  # long enough for the 8- and 16-lane paths
    axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    kind = draw(st.sampled_from(["sum", "mean", "max", "l1", "l2"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, shape, special=kind == "max" and draw(st.booleans()))
    return x, axes, kind, draw(st.booleans())


def _irpool(tmp: Path, x: np.ndarray, axes: list[int], kind: str, keep: bool, cv: str) -> Any:
    path = save(reduce_net(kind, x.shape, axes, keep, et(x.dtype)), tmp)
    graph = load(path)
    layer = next(la for la in graph.layers if la.name == "pool")
    _, outs = run_layer(bind(graph, layer), [x], None, cv)
    return outs[0]


@pytest.mark.parametrize("isa,lanes", [("avx512_bf16", 16), ("avx2", 8)])
@FEW
@given(case=cases())
def test_kernel_equals_reference(tmp_path_factory: Any, isa: str, lanes: int, case: Any) -> None:
    """Both instruction sets' orders (IRPOOL_OV_ISA) against the reference with their lanes."""
    x, axes, kind, keep = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRPOOL_OV_ISA", isa)
        got = _irpool(tmp_path_factory.mktemp("r"), x, axes, kind, keep, "openvino")
    assert same_bits(got, ov_reduce(x, axes, kind, keep, lanes))


@pytest.mark.oracle
@FEW
@given(cases())
def test_openvino_computes_the_same(ov: ModuleType, tmp_path_factory: Any, case: Any) -> None:
    x, axes, kind, keep = case
    path = save(reduce_net(kind, x.shape, axes, keep), tmp_path_factory.mktemp("r"))
    assert same_bits(irpool_run(path, x)["values"], openvino_run(path, x)["values"])


@pytest.mark.oracle
@settings(max_examples=15, deadline=None)
@given(cases(max_rank=5), st.sampled_from([np.uint8, np.int8, np.int32, np.int64]))
def test_integers_as_openvino(ov: ModuleType, tmp_path_factory: Any, case: Any, dtype: Any) -> None:
    """Integer reductions store the running value in the integer output (D27)."""
    x, axes, kind, keep = case
    info = np.iinfo(dtype)
    xi = np.clip(np.nan_to_num(x * 40, nan=0.0, neginf=info.min), info.min, info.max).astype(dtype)
    path = save(reduce_net(kind, xi.shape, axes, keep, et(dtype)), tmp_path_factory.mktemp("r"))
    assert same_bits(irpool_run(path, xi)["values"], openvino_run(path, xi)["values"])


@pytest.mark.oracle
@pytest.mark.parametrize(
    "shape,axes", [((1, 64, 14, 14), [2, 3]), ((2, 8, 3, 5, 40), [1, 2, 4]), ((3, 7000), [1])]
)
@pytest.mark.parametrize("kind", ["mean", "max", "l2"])
def test_larger_inputs_as_openvino(
    ov: ModuleType, tmp_path: Path, shape: Any, axes: Any, kind: str
) -> None:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    path = save(reduce_net(kind, shape, axes, False), tmp_path)
    assert same_bits(irpool_run(path, x)["values"], openvino_run(path, x)["values"])


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f64"])
def test_other_float_types_as_openvino(ov: ModuleType, tmp_path: Path, dtype: str) -> None:
    from irpool.model import numpy_dtype

    x = np.random.default_rng(2).standard_normal((2, 3, 5, 19)).astype(numpy_dtype(dtype))
    for kind in ("mean", "max"):
        path = save(reduce_net(kind, x.shape, [2, 3], True, dtype), tmp_path, kind)
        got, want = irpool_run(path, x)["values"], openvino_run(path, x)["values"]
        assert same_bits(
            got.view(np.uint16) if dtype == "bf16" else got,
            want.view(np.uint16) if dtype == "bf16" else want,
        )


@pytest.mark.parametrize("lanes", [16, 8])
def test_named_nan_cases(lanes: int) -> None:
    """D17: a NaN as the last element of a lane (the 16th element: lane 15 of 16, or the
    second of lane 7 of 8) is lost; D18: [1, NaN] keeps the NaN (last of its fold)."""
    x = np.array([1] * 15 + [np.nan], np.float32).reshape(1, 1, 1, 16)
    assert ov_reduce(x, [2, 3], "max", False, lanes)[0, 0] == np.finfo(np.float32).min
    y = np.array([1, np.nan], np.float32).reshape(1, 1, 1, 2)
    assert np.isnan(ov_reduce(y, [2, 3], "max", False, lanes)[0, 0])


@st.composite
def global_cases(draw: Any) -> tuple[np.ndarray, str]:
    rank = draw(st.integers(3, 5))
    shape = [draw(st.integers(1, 3)), draw(st.integers(1, 3))] + [
        draw(st.integers(1, 9)) for _ in range(rank - 2)
    ]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return random_values(rng, shape, special=draw(st.booleans())), draw(
        st.sampled_from(["mean", "max"])
    )


def _onnx_global(x: np.ndarray, kind: str) -> tuple[Any, Any]:
    from irpool.oracles import onnxruntime_rt

    op = "GlobalAveragePool" if kind == "mean" else "GlobalMaxPool"
    model = onnxruntime_rt.node_model(op, {}, [x], 13)
    return model, op


@pytest.mark.oracle
@FEW
@given(global_cases())
def test_onnx_global_pools(
    ort: ModuleType, onnx: ModuleType, tmp_path_factory: Any, case: Any
) -> None:
    """GlobalAveragePool/GlobalMaxPool: the MLAS lane order, bit for bit with onnxruntime and
    the reference; openvino's conversion (ReduceMean/ReduceMax) under the openvino convention."""
    from irpool.frontends.onnx_model import load as load_onnx
    from irpool.oracles import onnxruntime_rt

    x, kind = case
    model, _ = _onnx_global(x, kind)
    path = str(tmp_path_factory.mktemp("g") / "m.onnx")
    onnx.save(model, path)
    graph = load_onnx(path)
    layer = next(la for la in graph.layers if la.type.startswith("Global"))
    bound = bind(graph, layer)
    _, outs = run_layer(bound, [x])
    want = onnxruntime_rt.run(model, {"in0": x})[0]
    assert same_bits(outs[0], want)
    assert same_bits(outs[0], ort_global(x, kind))
    _, as_ov = run_layer(bound, [x], None, "openvino")
    assert same_bits(as_ov[0], ov_reduce(x, list(range(2, x.ndim)), kind, True, ov_lanes()))


def test_check_finds_an_off_by_one_dim(tmp_path: Path) -> None:
    good = save(reduce_net("mean", (2, 8, 7, 7), [2, 3], False), tmp_path, "good")
    assert check_file(good).ok
    bad = save(reduce_net("mean", (2, 8, 7, 7), [2, 3], False, declared=(2, 9)), tmp_path, "bad")
    report = check_file(bad)
    assert [(f.axis, f.declared, f.inferred) for f in report.findings] == [(1, "9", "8")]
    assert "not reduced" in (report.findings[0].formula or "")
    keep = save(reduce_net("max", (2, 8, 7, 7), [-1], True, declared=(2, 8, 7, 2)), tmp_path, "k")
    assert [(f.axis, f.declared) for f in check_file(keep).findings] == [(3, "2")]
    proc = irpool("check", bad)
    assert proc.returncode == 1


def test_axes_out_of_range_is_refused(tmp_path: Path) -> None:
    path = save(reduce_net("sum", (2, 3), [2], False, declared=(2,)), tmp_path)
    proc = irpool("check", path)
    assert proc.returncode == 2
    assert "Axis 2 out of the tensor rank range [-2, 1]" in proc.stderr


def test_interval_dims(tmp_path: Path) -> None:
    from irpool.shapes import infer

    path = save(reduce_net("mean", (1, 3, 4, 5), [-1], False), tmp_path)
    text = Path(path).read_text().replace('shape="1,3,4,5"', 'shape="1,?,1..10,5"')
    Path(path).write_text(text)
    pl = infer(load(path)).pooling[0]
    assert [str(d) for d in pl.output_shape or ()] == ["1", "?", "1..10"]


@pytest.mark.oracle
def test_instruction_set_stores_as_openvino(ov: ModuleType, tmp_path: Path) -> None:
    """What differs between AVX-512 and AVX2 beyond the lanes, against this machine's
    plugin: a u8 sum past 32768 through the vector store (AVX-512 saturates to 255, AVX2 packs
    to 0), bfloat16 means whose float32 value has dropped bits past the first (AVX-512 rounds
    to nearest even, AVX2's Convert sees only the first dropped bit), an empty bfloat16 max."""
    from irpool.model import numpy_dtype

    u8 = np.full((200, 20), 200, np.uint8)
    path = save(reduce_net("sum", u8.shape, [0], False, "u8"), tmp_path, "u8")
    assert same_bits(irpool_run(path, u8)["values"], openvino_run(path, u8)["values"])
    bf16 = numpy_dtype("bf16")
    pairs = np.random.default_rng(5).standard_normal((64, 3)).astype(bf16)
    path = save(reduce_net("mean", pairs.shape, [1], False, "bf16"), tmp_path, "bf16")
    got, want = irpool_run(path, pairs)["values"], openvino_run(path, pairs)["values"]
    assert same_bits(got.view(np.uint16), want.view(np.uint16))
    empty = np.zeros((2, 0, 3), bf16)
    path = save(reduce_net("max", empty.shape, [1], False, "bf16"), tmp_path, "empty")
    got, want = irpool_run(path, empty)["values"], openvino_run(path, empty)["values"]
    assert same_bits(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize(
    "isa,text", [("avx512_bf16", "16 lanes (AVX-512"), ("avx2", "8 lanes (AVX2)")]
)
def test_explain_names_the_lanes(tmp_path: Path, isa: str, text: str) -> None:
    import os

    from conftest import ROOT

    path = save(reduce_net("sum", (2, 3, 40), [-1], False), tmp_path)
    env = {**os.environ, "IRPOOL_OV_ISA": isa}
    proc = irpool("explain", path, "--layer", "pool", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    layer = json.loads(proc.stdout)["layers"][0]
    assert (layer["lanes"], layer["plugin_isa"]) == (16 if isa != "avx2" else 8, isa)
    proc = irpool("explain", path, "--layer", "pool", cwd=ROOT, env=env)
    assert text in proc.stdout


def test_run_layer_and_explain(tmp_path: Path) -> None:
    path = save(reduce_net("l2", (2, 5, 6, 19), [-1, 0], True), tmp_path)
    x = np.random.default_rng(3).standard_normal((2, 5, 6, 19)).astype(np.float32)
    saved = cli_run_layer(path, x, tmp_path)
    assert same_bits(saved["output0"], ov_reduce(x, [-1, 0], "l2", True, ov_lanes()))
    layer = cli_explain_layer(path)
    assert (layer["family"], layer["reduce"], layer["axes"], layer["keep_dims"]) == (
        "reduce",
        "l2",
        [0, 3],
        True,
    )
    assert layer["order"] == "ov_jit"


@pytest.mark.oracle
def test_torch_mean_and_amax_within_the_bound(torch: ModuleType, tmp_path: Path) -> None:
    """PyTorch's own summation order is not reproduced: its means agree within the bound."""
    from irpool.families.reduce import REDUCE_MEAN

    x = np.random.default_rng(4).standard_normal((2, 8, 14, 14)).astype(np.float32)
    got = _irpool(tmp_path, x, [2, 3], "mean", False, "torch")
    want = torch.from_numpy(x).mean((2, 3)).numpy()
    graph = load(save(reduce_net("mean", x.shape, [2, 3], False), tmp_path, "b"))
    bound = bind(graph, next(la for la in graph.layers if la.name == "pool"))
    plan = bound.plan(x.shape, "float32", "torch")
    allowed = REDUCE_MEAN.allowance(plan, [x], want)
    assert allowed is not None and np.all(np.abs(got - want) <= allowed)
    amax = _irpool(tmp_path, x, [2, 3], "max", False, "torch")
    assert same_bits(amax, torch.from_numpy(x).amax((2, 3)).numpy())
