"""The compiled path (irpool/kernel/compiled.py, numba) against the numpy core, the brute-force
reference and openvino itself.

Values must be the same bits (the sign of a zero and a NaN's payload included); indices the
same numbers.  The shapes are small and the kernels are shared across tests, so numba compiles
each kernel once per dtype family (float32, half types; int32 and int64 indices).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import reference
from conftest import ROOT
from conftest import irpool as irpool_cli
from hypothesis import assume, given
from hypothesis import strategies as st

import irpool
from irpool.errors import InputError, IrpoolError, UsageError
from irpool.geometry import PoolParams, PoolPlan, plan
from irpool.kernel import compiled, pool
from irpool.model import bfloat16

pytest.importorskip("numba", reason="the compiled path needs numba: pip install 'irpool[fast]'")

sys.path.insert(0, str(ROOT / "bench"))
import workloads

BF16 = bfloat16()
DTYPES = ["float32", "float16"] + (["bfloat16"] if BF16 is not None else [])


def _dtype(name: str) -> Any:
    return BF16 if name == "bfloat16" else np.dtype(name)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """The same dtype, shape and bits (zero signs included); NaN equal to NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan), what
    bad = (_bits(got) != _bits(want)) & ~nan
    if bad.any():
        at = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{what}: at {at} {got[at]!r} vs {want[at]!r}; {int(bad.sum())} differ"
        )


def values_for(rng: np.random.Generator, shape: tuple[int, ...], name: str, kind: str) -> Any:
    """Random data of a kind: 'normal' values, 'ties' (small integers and zeros of both signs,
    so maxima tie), or 'special' (NaN, infinities, signed zeros, float16 extremes)."""
    if kind == "ties":
        x = rng.choice(np.array([0.0, -0.0, -1.0, 1.0, -2.0], np.float32), size=shape)
    else:
        x = rng.standard_normal(shape).astype(np.float32) * rng.choice([1.0, 1e-3, 1e4])
    if kind == "special":
        flat = x.reshape(-1)
        for v in (np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, -65504.0, 6e-8, 3e38):
            flat[rng.integers(0, flat.size, rng.integers(0, max(1, flat.size // 6) + 1))] = v
    with np.errstate(over="ignore"):
        return x.astype(_dtype(name))


@st.composite
def cases(draw: st.DrawFn) -> tuple[PoolPlan, np.ndarray]:
    """A plan the compiled path serves and an input for it."""
    rank = draw(st.integers(1, 3))
    sizes = tuple(draw(st.integers(1, 11 if rank < 3 else 6)) for _ in range(rank))
    reduce = draw(st.sampled_from(["max", "mean"]))
    indices = reduce == "max" and draw(st.booleans())
    params = PoolParams(
        op="t",
        reduce=reduce,
        window=tuple(draw(st.integers(1, 4)) for _ in range(rank)),
        strides=tuple(draw(st.integers(1, 3)) for _ in range(rank)),
        dilations=tuple(draw(st.sampled_from([1, 1, 1, 2, 3])) for _ in range(rank)),
        pads=tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in range(rank)),
        auto_pad=draw(st.sampled_from(["explicit"] * 3 + ["same_upper", "same_lower", "valid"])),
        rounding=draw(st.sampled_from(["floor", "ceil", "ceil_torch"])),
        count_pad=draw(st.booleans()),
        indices=indices,
        index_axis=draw(st.sampled_from([0, 0, 1, 2])) if indices else 0,
        column_major=indices and draw(st.booleans()),
        index_dtype=draw(st.sampled_from(["int64", "int32"])),
        divisor_override=draw(st.sampled_from([None, None, "full"])),
    )
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 4)), *sizes)
    name = draw(st.sampled_from(DTYPES))
    convention = draw(st.sampled_from(["openvino", "openvino", "onnx", "torch"]))
    try:
        p = plan(params, shape, convention, dtype=name)
    except IrpoolError:
        assume(False)
        raise
    assume(compiled.serves(p))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return p, values_for(rng, shape, name, draw(st.sampled_from(["normal", "ties", "special"])))


@pytest.mark.slow
@given(case=cases(), threads=st.sampled_from([1, 2]))
def test_compiled_is_the_numpy_core_and_the_reference(
    case: tuple[PoolPlan, np.ndarray], threads: int
) -> None:
    p, x = case
    want, want_idx = pool(x, p, threads=1, path="numpy")
    got, got_idx = compiled.Prepared(p, threads)(x)
    assert_same_bits(got, want, f"{p} {x.dtype}")
    if want_idx is None:
        assert got_idx is None
    else:
        assert got_idx is not None and got_idx.dtype == want_idx.dtype
        np.testing.assert_array_equal(got_idx, want_idx, err_msg=str(p))
    with np.errstate(invalid="ignore", over="ignore"):
        expected, expected_idx = reference.pool(x, p)
    same = _bits(got) == _bits(expected.astype(got.dtype))
    same |= np.isnan(got.astype(np.float32)) & np.isnan(expected.astype(np.float32))
    assert same.all(), f"{p}: reference differs at {tuple(np.argwhere(~same)[0])}"
    if expected_idx is not None:
        np.testing.assert_array_equal(got_idx, expected_idx)


def test_the_default_path_is_compiled_and_numpy_can_be_forced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = workloads.BY_NAME["resnet_max"].scaled().plan()
    assert compiled.choose(p) == (True, "compiled (numba), bit-identical to the numpy core")
    monkeypatch.setenv("IRPOOL_KERNEL", "numpy")
    assert compiled.choose(p) == (False, "numpy core (IRPOOL_KERNEL=numpy)")
    assert compiled.run(np.zeros(p.input_shape, np.float32), p) is None
    monkeypatch.setenv("IRPOOL_KERNEL", "fast")
    with pytest.raises(UsageError, match="IRPOOL_KERNEL='fast': expected auto, numpy or compiled"):
        compiled.choose(p)
    monkeypatch.setenv("IRPOOL_KERNEL", "compiled")
    monkeypatch.setattr(compiled, "_INSTALLED", [False])
    with pytest.raises(UsageError, match=r"needs numba: pip install 'irpool\[fast\]'"):
        compiled.choose(p)
    monkeypatch.delenv("IRPOOL_KERNEL")
    assert compiled.choose(p)[1] == (
        "numpy core (numba is not installed: pip install 'irpool[fast]')"
    )


def test_what_it_does_not_serve_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    base = PoolParams("t", "max", (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)))
    cases = {
        "float64": "float64 data: it computes float32, float16 and bfloat16",
        "int8": "int8 data: it computes float32, float16 and bfloat16",
    }
    for dtype, reason in cases.items():
        assert compiled.why_not(plan(base, (1, 1, 4, 4), "openvino", dtype=dtype)) == reason
    assert compiled.why_not(plan(base, (1, 1, 4, 4), "torch")) == (
        "NaN rule propagate: it has openvino's (ignore) only"
    )
    four = PoolParams("t", "max", (1,) * 4, (1,) * 4, (1,) * 4, ((0, 0),) * 4)
    assert compiled.why_not(plan(four, (1, 1, 2, 2, 2, 2), "openvino")) == (
        "4 spatial axes: it computes 1 to 3"
    )
    long_row = PoolParams("t", "max", (2,), (2,), (1,), ((0, 0),))
    assert compiled.why_not(plan(long_row, (1, 1, 2 << 20), "openvino")) == (
        "a row is longer than its buffers (6 MiB)"
    )
    # integer layers that openvino pools in float32 run their float32 plan compiled
    ints = plan(base, (1, 2, 4, 4), "openvino", dtype="int32")
    assert ints.via is not None and compiled.serves(ints.via)
    # bfloat16 as openvino rounds it without AVX-512 (PoolPlan.bf16_round): the numpy core
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx2")
    for reduce in ("max", "mean"):
        bf16 = plan(dataclasses.replace(base, reduce=reduce), (1, 1, 4, 4), dtype="bfloat16")
        assert compiled.why_not(bf16) == (
            "bfloat16 rounding half_up_if_odd: it rounds to nearest even only"
        )
        assert compiled.why_not(plan(base, (1, 1, 4, 4), dtype="float32")) is None
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx512_bf16")
    assert compiled.serves(plan(base, (1, 1, 4, 4), dtype="bfloat16"))


@pytest.mark.parametrize("name", [w.name for w in workloads.WORKLOADS])
def test_every_bench_workload_is_served(name: str) -> None:
    assert compiled.why_not(workloads.BY_NAME[name].plan()) is None


def test_threads_and_blocks_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work split over threads, and planes too large for one chunk (blocks of rows and of
    depth), give what one thread over whole planes gives."""
    monkeypatch.setattr(compiled, "PARALLEL_BYTES", 0)
    rng = np.random.default_rng(5)
    for shape, reduce, k, s, pd in (
        ((2, 7, 33, 30), "mean", 3, 2, 1),
        ((2, 7, 33, 30), "max", 3, 2, 1),
        ((1, 3, 21, 22), "mean", 7, 1, 3),
        ((1, 2, 300, 301), "mean", 3, 2, 1),
        ((1, 1, 40, 90, 97), "mean", 3, 2, 1),
        ((1, 2, 257, 255), "mean", 5, 1, 2),
    ):
        r = len(shape) - 2
        params = PoolParams("t", reduce, (k,) * r, (s,) * r, (1,) * r, ((pd, pd),) * r)  # type: ignore[arg-type]
        p = plan(params, shape, "openvino")
        x = rng.standard_normal(shape).astype(np.float32)
        want = pool(x, p, threads=1, path="numpy")[0]
        for threads in (1, 2, 3):
            assert_same_bits(compiled.Prepared(p, threads)(x)[0], want, f"{shape} {threads}")


@pytest.mark.parametrize("name", DTYPES)
def test_wide_windows(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """5x5 and 7x7 stride-1 averages and maxima (wider than the random plans draw); bfloat16
    as openvino rounds it on AVX-512 (the compiled path leaves AVX2's rounding to the numpy
    core)."""
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx512_bf16")
    rng = np.random.default_rng(7)
    for k in (5, 7):
        for shape, pad, count_pad, rounding in (
            ((1, 3, 9, 11), (k // 2, k // 2), False, "floor"),
            ((2, 2, 20, 7), (1, 1), True, "ceil"),
            ((1, 17, 13, 30), (0, 3), False, "ceil"),
        ):
            for reduce in ("mean", "max"):
                params = PoolParams(
                    "t", reduce, (k, k), (1, 1), (1, 1), (pad, pad), rounding, count_pad=count_pad
                )  # type: ignore[arg-type]
                try:
                    p = plan(params, shape, "openvino", dtype=name)
                except IrpoolError:
                    continue
                x = values_for(rng, shape, name, "special")
                want = pool(x, p, threads=1, path="numpy")[0]
                assert_same_bits(compiled.Prepared(p)(x)[0], want, f"{k} {shape} {reduce}")


# -- against openvino ------------------------------------------------------------------------


def openvino_pool(ov: ModuleType, w: workloads.Workload, x: np.ndarray) -> list[np.ndarray]:
    """openvino's outputs for a workload: AvgPool-1 or MaxPool-8 (values, and indices where
    the workload reads them), one thread."""
    from openvino import opset1, opset8

    from irpool.oracles import openvino_rt

    types = {"float32": ov.Type.f32, "float16": ov.Type.f16, "bfloat16": ov.Type.bf16}
    param = opset1.parameter(list(x.shape), types[x.dtype.name])
    n = len(w.kernel)
    stride, pads, rounding = [w.stride] * n, [w.pad] * n, "ceil" if w.ceil else "floor"
    if w.reduce == "max":
        node = opset8.max_pool(
            param, stride, [w.dilation] * n, pads, pads, list(w.kernel), rounding
        )
        outputs = [node.output(0), node.output(1)] if w.indices else [node.output(0)]
    else:
        node = opset1.avg_pool(param, stride, pads, pads, list(w.kernel), w.exclude_pad, rounding)
        outputs = [node.output(0)]
    model = ov.Model([opset1.result(o) for o in outputs], [param])
    return openvino_rt.infer(openvino_rt.compile_model(model, threads=1), [x])


@pytest.mark.oracle
@pytest.mark.parametrize("name", [w.name for w in workloads.WORKLOADS])
def test_bench_workloads_match_openvino_on_both_paths(ov: ModuleType, name: str) -> None:
    """Each bench workload's geometry (on 3 channels) bit for bit against openvino, on normal
    data and on data full of ties between +0.0 and -0.0."""
    w = workloads.BY_NAME[name].scaled()
    rng = np.random.default_rng(11)
    for kind in ("normal", "ties"):
        x = values_for(rng, w.shape, w.dtype, kind)
        expected = openvino_pool(ov, w, x)
        p = w.plan()
        for path in ("numpy", "compiled"):
            values, indices = pool(x, p, threads=1, path=path)
            assert_same_bits(values, expected[0], f"{name} {kind} {path}")
            if w.indices:
                np.testing.assert_array_equal(indices, expected[1])


@pytest.mark.oracle
@pytest.mark.parametrize("name", DTYPES)
def test_zero_maxima_keep_openvinos_sign(ov: ModuleType, name: str) -> None:
    """openvino keeps the first maximal tap in row-major order (strictly greater from
    lowest): a window of +0.0/-0.0 ties keeps the first one's sign.  Both paths do."""
    rng = np.random.default_rng(13)
    geometries = [
        workloads.Workload("z2d", "max", (1, 4, 15, 16), (3, 3), 2, 1),
        workloads.Workload("z2d_ceil", "max", (1, 4, 14, 13), (3, 2), 2, 0, ceil=True),
        workloads.Workload("z3d", "max", (1, 2, 7, 9, 8), (3, 3, 3), 2, 1),
        workloads.Workload("z1d", "max", (2, 3, 31), (4,), 3, 1),
        workloads.Workload("zdil", "max", (1, 3, 12, 12), (3, 3), 1, 2, dilation=2),
        workloads.Workload("zidx", "max", (1, 3, 12, 14), (2, 2), 2, 0, indices=True),
        workloads.Workload("zglobal", "max", (1, 5, 4, 4), (4, 4), 1, 0),
    ]
    for w in geometries:
        w = dataclasses.replace(w, dtype=name)
        if w.indices and name == "bfloat16":
            continue  # openvino's CPU plugin has no bfloat16 MaxPool-8 with indices read
        x = rng.choice(np.array([0.0, -0.0, -1.0, np.nan], np.float32), size=w.shape)
        x = x.astype(_dtype(name))
        expected = openvino_pool(ov, w, x)
        zero = expected[0].astype(np.float32) == 0
        assert zero.mean() > 0.3
        for path in ("numpy", "compiled"):
            values, _ = pool(x, w.plan(), threads=1, path=path)
            assert_same_bits(values, expected[0], f"{w.name} {name} {path}")


# -- the prepared form ------------------------------------------------------------------------


KEYWORDS: list[dict[str, Any]] = [
    dict(kernel=3, strides=2, pads=1, reduce="max"),
    dict(kernel=3, strides=2, pads=1, reduce="mean"),
    dict(kernel=(2, 3), strides=(2, 1), pads=((0, 1), (1, 1)), reduce="mean", count_pad=True),
    dict(kernel=3, strides=1, dilations=2, pads=2, reduce="max", indices=True),
    dict(kernel=2, strides=2, reduce="max", indices=True, convention="onnx", index_axis=2),
    dict(kernel=3, strides=2, pads=1, reduce="max", convention="torch", rounding="ceil"),
    dict(kernel=4, strides=1, reduce="mean", auto_pad="same_lower", convention="onnx"),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "uint8"])
@pytest.mark.parametrize("case", range(len(KEYWORDS)))
def test_compile_pool_gives_what_pool_gives(case: int, dtype: str) -> None:
    kw = KEYWORDS[case]
    x = (np.random.default_rng(case).standard_normal((2, 5, 17, 18)) * 20).astype(dtype)
    f = irpool.compile_pool(x.shape, x.dtype, **kw, threads=1)
    want = irpool.pool(x, **kw)
    for _ in range(2):  # buffers reused from the first call
        got = f(x)
        if isinstance(want, tuple):
            assert isinstance(got, tuple)
            assert_same_bits(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
        else:
            assert isinstance(got, np.ndarray)
            assert_same_bits(got, want)
    assert f.path in ("compiled", "numpy")
    assert f.plan.input_shape == x.shape and f.plan.dtype == dtype
    served = compiled.serves(f.plan.via or f.plan)
    assert (f.path == "compiled") == served, f.why


def test_compile_pool_refuses_other_inputs_and_is_thread_safe() -> None:
    f = irpool.compile_pool((2, 8, 30, 30), np.float32, 3, 2, 1, reduce="mean")
    with pytest.raises(InputError, match=r"input shape \[2,8,30,31\] does not match"):
        f(np.zeros((2, 8, 30, 31), np.float32))
    with pytest.raises(InputError, match="input has dtype float16; the plan was made for float32"):
        f(np.zeros((2, 8, 30, 30), np.float16))
    inputs = [
        np.random.default_rng(i).standard_normal((2, 8, 30, 30), np.float32) for i in range(4)
    ]
    want = [irpool.pool(x, 3, 2, 1, reduce="mean") for x in inputs]
    failures: list[int] = []

    def worker(i: int) -> None:
        for _ in range(30):
            got = f(inputs[i])
            if not np.array_equal(_bits(got), _bits(want[i])):  # type: ignore[arg-type]
                failures.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_compile_pool_honours_irpool_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRPOOL_KERNEL", "numpy")
    f = irpool.compile_pool((1, 2, 8, 8), np.float32, 2, 2)
    assert (f.path, f.why) == ("numpy", "numpy core (IRPOOL_KERNEL=numpy)")
    monkeypatch.delenv("IRPOOL_KERNEL")
    assert irpool.compile_pool((1, 2, 8, 8), np.float32, 2, 2).path == "compiled"
    g = irpool.compile_pool((1, 2, 8, 8), np.float64, 2, 2)
    assert g.path == "numpy" and "float64 data" in g.why


# -- loading: no numba at import, kernels from the disk cache --------------------------------

CHILD = """
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import irpool
imported = "numba" in sys.modules
f = irpool.compile_pool((1, 8, 20, 20), np.float32, 3, 2, 1)
f(np.ones((1, 8, 20, 20), np.float32))
first = time.perf_counter() - t0
from irpool.kernel import numba_kernels
stats = numba_kernels.max_run.stats
print(json.dumps({"numba_at_import": imported, "path": f.path, "misses": len(stats.cache_misses),
                  "hits": sum(stats.cache_hits.values()), "first": first}))
"""


def test_kernels_load_from_the_disk_cache_and_not_at_import() -> None:
    """`import irpool` does not import numba; a fresh process finds the kernels compiled by an
    earlier one on disk (numba's cache) instead of compiling them again."""
    runs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, timeout=600
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    second = runs[1]
    assert not second["numba_at_import"] and second["path"] == "compiled"
    assert second["misses"] == 0 and second["hits"] >= 1, runs


def test_explain_names_the_kernel_path(monkeypatch: pytest.MonkeyPatch) -> None:
    zoo = str(ROOT / "fixtures" / "ir" / "pool_zoo.xml")
    by_name = {r.layer: r for r in irpool.explain(zoo, convention="torch")}
    assert by_name["ap1_ceil"].kernel == "compiled"
    mp1 = by_name["mp1"]
    assert mp1.kernel == "numpy"
    assert mp1.kernel_why == (
        "numpy core (the compiled path does not serve this plan: NaN rule propagate: it has "
        "openvino's (ignore) only)"
    )
    out = irpool_cli("explain", zoo, "--layer", "ap1_ceil", "--json")
    assert json.loads(out.stdout)["layers"][0]["kernel"] == {
        "path": "compiled",
        "why": "compiled (numba), bit-identical to the numpy core",
    }
    monkeypatch.setenv("IRPOOL_KERNEL", "numpy")
    text = irpool_cli("explain", zoo, "--layer", "ap1_ceil").stdout
    assert "  kernel: numpy core (IRPOOL_KERNEL=numpy)" in text.splitlines()


AUTO_CHILD = """
import json, sys, time
import numpy as np
import irpool
from irpool.kernel import compiled
x = np.random.default_rng(0).standard_normal((1, 16, 64, 64)).astype(np.float32)
first = irpool.pool(x, 3, 2, 1)
after_first = "numba" in sys.modules
compiled.WARM_AFTER = 3 * x.size
seen = []
deadline = time.time() + 300
while time.time() < deadline:
    got = irpool.pool(x, 3, 2, 1)
    assert np.array_equal(got.view(np.uint32), first.view(np.uint32))
    seen.append(bool(compiled._WARM))
    if seen[-1] and len(seen) > 3:
        break
    time.sleep(0.01)
print(json.dumps({"numba_after_first": after_first, "calls": len(seen),
                  "numpy_calls": seen.count(False), "warm": bool(compiled._WARM)}))
"""


def test_auto_mode_starts_on_numpy_and_loads_the_kernels_in_the_background() -> None:
    """In auto mode a process's first pool calls run on the numpy core, without importing
    numba; past WARM_AFTER elements the kernels load in a background thread and the compiled
    path takes over, with the same bits."""
    done = subprocess.run(
        [sys.executable, "-c", AUTO_CHILD], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout.strip().splitlines()[-1])
    assert not r["numba_after_first"]
    assert r["warm"] and r["numpy_calls"] >= 2, r


def test_a_reused_plan_id_among_old_cache_entries() -> None:
    """The per-thread cache keys plans by id() first; a new plan can get the id of a freed
    one whose entry is the oldest.  That entry must be replaced, not dropped under the new
    plan's feet (a fixtures --resume run hit a KeyError here)."""
    params = PoolParams("t", "mean", (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)))
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    p = plan(params, x.shape, "openvino", dtype=x.dtype)
    stale = dataclasses.replace(p, op="stale")
    cache = compiled._LOCAL.__dict__.setdefault("cache", compiled.OrderedDict())
    cache.clear()
    cache[(id(p), 1, "numpy-free")] = (stale, None)  # unrelated, oldest
    cache[(id(p), 1, "auto")] = (stale, None)  # the stale id entry, next oldest
    for k in range(2 * compiled.CACHED - 1):
        cache[("filler", k)] = (stale, None)
    values = compiled.run(x, p, 1, "auto")
    want = x.reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    if values is not None:  # the compiled kernel was already loaded: its result
        np.testing.assert_array_equal(values[0], want)
    assert cache[(id(p), 1, "auto")][0] is p
    np.testing.assert_array_equal(pool(x, p, threads=1)[0], want)
