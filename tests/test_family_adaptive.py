"""AdaptiveAvgPool-8 / AdaptiveMaxPool-8: irpool's kernel against a brute-force reference of
each convention's rule (bit for bit), against openvino's CPU plugin and PyTorch on random
shapes and output sizes, and through check, run, explain and compare."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool
from family_helpers import (
    adaptive_net,
    cli_explain_layer,
    cli_run_layer,
    irpool_run,
    openvino_run,
    ov_lanes,
    random_values,
    same_bits,
    save,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_family import adaptive as reference
from reference_family import ov_reduce

from irpool.check import check_file
from irpool.frontends.ir_xml import load
from irpool.ops import bind
from irpool.run import run_layer

FEW = settings(max_examples=25, deadline=None)


@st.composite
def cases(draw: Any) -> tuple[np.ndarray, tuple[int, ...], str]:
    rank = draw(st.integers(1, 3))
    spatial = [draw(st.integers(1, 9)) for _ in range(rank)]
    sizes = tuple(draw(st.integers(1, 11)) for _ in range(rank))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, shape, special=draw(st.booleans()))
    return x, sizes, draw(st.sampled_from(["mean", "max"]))


def _irpool(tmp: Path, x: np.ndarray, sizes: tuple[int, ...], reduce: str, cv: str) -> list[Any]:
    path = save(adaptive_net(reduce, x.shape, sizes), tmp)
    graph = load(path)
    layer = next(la for la in graph.layers if la.name == "pool")
    _, outs = run_layer(bind(graph, layer), [x], None, cv)
    return outs


@FEW
@given(cases())
def test_kernel_equals_reference(tmp_path_factory: Any, case: Any) -> None:
    x, sizes, reduce = case
    tmp = tmp_path_factory.mktemp("a")
    for cv in ("openvino", "torch"):
        got = _irpool(tmp, x, sizes, reduce, cv)
        want = reference(x, sizes, reduce, cv)
        if cv == "openvino" and reduce == "mean" and all(s == 1 for s in sizes):
            # openvino runs an adaptive average to 1x1 as a ReduceMean (AdaptivePoolToReduce)
            want = [ov_reduce(x, list(range(2, x.ndim)), "mean", True, ov_lanes())]
        assert same_bits(got[0], want[0].astype(np.float32)), cv
        if reduce == "max":
            assert np.array_equal(got[1].astype(np.int64), want[1]), cv


@pytest.mark.oracle
@FEW
@given(cases())
def test_openvino_computes_the_same(ov: ModuleType, tmp_path_factory: Any, case: Any) -> None:
    x, sizes, reduce = case
    path = save(adaptive_net(reduce, x.shape, sizes), tmp_path_factory.mktemp("a"))
    want = openvino_run(path, x)
    got = irpool_run(path, x)
    assert same_bits(got["values"], want["values"])
    if reduce == "max":
        assert np.array_equal(got["indices"], want["indices"])


@pytest.mark.oracle
@FEW
@given(cases())
def test_torch_computes_the_same(torch: ModuleType, tmp_path_factory: Any, case: Any) -> None:
    x, sizes, reduce = case
    t = torch.from_numpy(x)
    fn = {1: "1d", 2: "2d", 3: "3d"}[len(sizes)]
    got = _irpool(tmp_path_factory.mktemp("a"), x, sizes, reduce, "torch")
    torch.set_num_threads(1)
    if reduce == "mean":
        want = getattr(torch.nn.functional, f"adaptive_avg_pool{fn}")(t, sizes).numpy()
        if all(s == 1 for s in sizes):
            # torch computes x.mean(spatial) then, in its own summation order (a stated bound)
            np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
        else:
            assert same_bits(got[0], want)
    else:
        values, idx = getattr(torch.nn.functional, f"adaptive_max_pool{fn}")(
            t, sizes, return_indices=True
        )
        assert same_bits(got[0], values.numpy())
        assert np.array_equal(got[1], idx.numpy())


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.float64])
def test_other_types_equal_openvino(ov: ModuleType, tmp_path: Path, dtype: Any) -> None:
    """f16 at f32 precision, integers (half to even) and f64 (in float32) as openvino."""
    from family_helpers import et

    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 7, 5)) * 50).astype(dtype)
    for reduce in ("mean", "max"):
        path = save(adaptive_net(reduce, x.shape, (3, 4), et(dtype)), tmp_path, reduce)
        want = openvino_run(path, x)
        got = irpool_run(path, x)
        for key in want:
            assert same_bits(got[key], want[key]), (reduce, key)


def test_bins_are_the_measured_rule() -> None:
    from irpool.families.adaptive import bins

    assert [b.tolist() for b in bins(7, 3, "exact")] == [[0, 2, 4], [3, 5, 7]]
    assert [b.tolist() for b in bins(3, 5, "exact")] == [[0, 0, 1, 1, 2], [1, 2, 2, 3, 3]]
    # float32 ends differ from the exact ceiling once (i + 1) * In passes 2^24
    _, ends = bins(16777217, 3, "float32_ceil")
    assert ends[0] != -(-16777217 // 3) or ends[1] != -(-2 * 16777217 // 3)


def test_check_finds_an_off_by_one_dim(tmp_path: Path) -> None:
    good = save(adaptive_net("max", (1, 3, 8, 9), (3, 4)), tmp_path, "good")
    assert check_file(good).ok
    bad = save(adaptive_net("max", (1, 3, 8, 9), (3, 4), declared=(1, 3, 3, 5)), tmp_path, "bad")
    report = check_file(bad)
    assert not report.ok
    dims = [f for f in report.findings if f.kind == "output-dim"]
    assert {(f.port, f.axis, f.declared, f.inferred) for f in dims} >= {(2, 3, "5", "4")}
    assert "input 1 value" in (dims[0].formula or "")
    proc = irpool("check", bad)
    assert proc.returncode == 1, proc.stderr
    assert "declared 5, inferred 4" in proc.stdout


def test_check_on_interval_dims(tmp_path: Path) -> None:
    """openvino ignores the input's spatial dims: N and C keep their intervals."""
    net = adaptive_net("mean", (1, 3, 8, 9), (3, 4))
    path = save(net, tmp_path)
    text = Path(path).read_text().replace('shape="1,3,8,9"', 'shape="1..4,?,?,10"')
    text = text.replace("<dim>8</dim>", "<dim>-1</dim>", 1)
    Path(path).write_text(text)
    graph = load(path)
    from irpool.shapes import infer

    pl = infer(graph).pooling[0]
    assert [str(d) for d in pl.output_shape or ()] == ["1..4", "?", "3", "4"]
    # explain without --input-shape: the rules and the output dims, not the windows
    layer = cli_explain_layer(path)
    assert layer["dynamic_input"] is True and layer["output_shape"] == [-1, -1, 3, 4]
    assert layer["sizes"] == [3, 4]


def test_run_layer_explain_and_json(tmp_path: Path) -> None:
    path = save(adaptive_net("max", (2, 3, 10, 7), (4, 9)), tmp_path)
    x = np.random.default_rng(1).standard_normal((2, 3, 10, 7)).astype(np.float32)
    saved = cli_run_layer(path, x, tmp_path)
    want = reference(x, (4, 9), "max", "openvino")
    assert same_bits(saved["output0"], want[0])
    assert saved["output1"].dtype == np.int32
    assert np.array_equal(saved["output1"], want[1])
    layer = cli_explain_layer(path)
    assert layer["family"] == "adaptive"
    assert layer["axes"][0]["windows"][:2] == [[0, 3], [2, 5]]
    assert layer["axes"][1]["windows"][:3] == [[0, 1], [0, 2], [1, 3]]


@pytest.mark.oracle
def test_compare_on_i64_indices(ov: ModuleType, tmp_path: Path) -> None:
    """openvino refuses i64 indices; compare runs its i32 form and a Convert, and says so."""
    from irpool.compare import compare_model

    path = save(adaptive_net("max", (1, 2, 9, 9), (4, 2), index="i64"), tmp_path)
    x = np.random.default_rng(2).standard_normal((1, 2, 9, 9)).astype(np.float32)
    report = compare_model(load(path), {"x": x})
    assert report.passed
    assert "i32" in report.layers[0].notes[0]
    # openvino refuses the model as it stands, so no unprobed run exists: the report says so
    assert report.probe is None
    assert report.probe_unchecked is not None and "does not compile" in report.probe_unchecked
