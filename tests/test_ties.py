"""explain's .5 ties of a quantized pooling chain (irpool/ties.py), against openvino's runtime
output with LPT on and off (measured codes) and a brute-force tie finder in exact arithmetic."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import irpool

from irpool import ties
from irpool.cli_options import load_model
from irpool.run import run_graph

F32 = np.float32

# name -> (input shape, pool, (il, ih) before, (il, ih) after, input range); the FakeQuantize
# layers have equal input and output ranges, 256 levels
CASES: dict[str, tuple[tuple[int, ...], str, tuple[float, float], tuple[float, float], Any]] = {
    "u8-avg-k2s2-ratio1.5": ((1, 4, 16, 16), "avg2", (0.0, 2.55), (0.0, 3.825), (-0.2, 2.8)),
    "u8-avg-k2s2-same": ((1, 4, 16, 16), "avg2", (0.0, 2.55), (0.0, 2.55), (-0.2, 2.8)),
    "i8-avg-k2s2-ratio1.5": ((1, 4, 16, 16), "avg2", (-1.28, 1.27), (-1.92, 1.905), (-1.5, 1.5)),
    "zp-avg-k2s2-ratio1.5": ((1, 4, 16, 16), "avg2", (-0.5, 2.05), (-0.75, 3.075), (-0.7, 2.3)),
    "u8-avg-k3p1-incl": ((1, 4, 10, 10), "avg3p", (0.0, 2.55), (0.0, 1.7), (-0.2, 2.8)),
    "u8-max-k2s2-ratio2": ((1, 4, 16, 16), "max2", (0.0, 2.55), (0.0, 5.1), (-0.2, 2.8)),
    "zp-mean-ratio2": ((8, 8, 2, 2), "mean", (-0.5, 2.05), (-1.0, 4.1), (-0.7, 2.3)),
}


def _model(ov: Any, name: str) -> Any:
    shape, pool, (a, b), (c, d), _ = CASES[name]
    o1 = ov.opset1

    def const(v: float) -> Any:
        return o1.constant(np.asarray(v, dtype=np.float32))

    def fq(t: Any, lo: float, hi: float) -> Any:
        return o1.fake_quantize(t, const(lo), const(hi), const(lo), const(hi), 256)

    pools: dict[str, Callable[[Any], Any]] = {
        "avg2": lambda t: o1.avg_pool(t, [2, 2], [0, 0], [0, 0], [2, 2], True),
        "avg3p": lambda t: o1.avg_pool(t, [1, 1], [1, 1], [1, 1], [3, 3], False),
        "max2": lambda t: o1.max_pool(t, [2, 2], [0, 0], [0, 0], [2, 2]),
        "mean": lambda t: o1.reduce_mean(t, o1.constant(np.array([2, 3])), True),
    }
    x = o1.parameter(list(shape), np.float32, name="x")
    y = fq(pools[pool](fq(x, a, b)), c, d)
    return ov.Model([o1.result(y)], [x], name)


def _lo(lo: float, hi: float) -> int:
    """The first code of LPT's decomposition: i8 for a range symmetric about zero."""
    return -128 if lo < 0 and abs(lo / hi + 256 / 254) < 0.01 else 0


def _measured_codes(ov: Any, path: str, x: np.ndarray, name: str, lpt: bool) -> np.ndarray:
    """openvino's output at f32 (LPT on or off), as the codes of the FakeQuantize after."""
    core = ov.Core()
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32"}
    if not lpt:
        config["LP_TRANSFORMS_MODE"] = False
    compiled = core.compile_model(core.read_model(path), "CPU", config)
    out = np.asarray(compiled({0: x})[compiled.outputs[0]], dtype=np.float64)
    lo, hi = (float(F32(v)) for v in CASES[name][3])
    step = (hi - lo) / 255
    return np.rint((out - lo) / step).astype(np.int64) + _lo(lo, hi)


def _exact(v: float) -> Fraction:
    return Fraction(float(F32(v)))


def _brute_force(x: np.ndarray, name: str) -> dict[tuple[int, ...], Fraction]:
    """Every output cell's value before the second FakeQuantize rounds it, in exact
    arithmetic: the specification's steps of the input (round half to even), dequantized,
    pooled by looping over each window, re-quantized."""
    shape, pool, (a, b), (c, d), _ = CASES[name]
    il, ih, ol, oh = _exact(a), _exact(b), _exact(a), _exact(b)
    jl, jh = _exact(c), _exact(d)
    deq = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        v = Fraction(float(x[idx]))
        if v <= il:
            s = 0
        elif v > ih:
            s = 255
        else:
            s = round((v - il) / (ih - il) * 255)  # Fraction rounds half to even
        deq[idx] = s * (oh - ol) / 255 + ol
    n, ch, h, w = shape
    out: dict[tuple[int, ...], Fraction] = {}
    for i in range(n):
        for k in range(ch):
            if pool == "mean":
                taps = [deq[i, k, y, z] for y in range(h) for z in range(w)]
                out[(i, k, 0, 0)] = sum(taps, Fraction(0)) / len(taps)
                continue
            kernel, stride, pad = {"avg2": (2, 2, 0), "avg3p": (3, 1, 1), "max2": (2, 2, 0)}[pool]
            for oy in range((h + 2 * pad - kernel) // stride + 1):
                for oz in range((w + 2 * pad - kernel) // stride + 1):
                    taps = []
                    for y in range(oy * stride - pad, oy * stride - pad + kernel):
                        for z in range(oz * stride - pad, oz * stride - pad + kernel):
                            inside = 0 <= y < h and 0 <= z < w
                            taps.append(deq[i, k, y, z] if inside else Fraction(0))
                    m = max(taps) if pool == "max2" else sum(taps, Fraction(0)) / len(taps)
                    out[(i, k, oy, oz)] = m
    return {idx: (m - jl) / (jh - jl) * 255 for idx, m in out.items()}


def _is_tie(t: Fraction) -> bool:
    off = abs(t - (math.floor(t) + Fraction(1, 2)))
    return off <= 8 * float(np.spacing(F32(abs(float(t)))))


def _setup(ov: Any, name: str, tmp_path: Path) -> tuple[str, np.ndarray, Any, Any, Any]:
    path = str(tmp_path / "chain.xml")
    ov.save_model(_model(ov, name), path, compress_to_fp16=False)
    shape, *_, span = CASES[name]
    x = np.random.default_rng(11).uniform(*span, shape).astype(np.float32)
    graph = load_model(path)
    tensors = run_graph(graph, {"x": x}, "openvino").tensors
    pool = next(la for la in graph.layers if la.type in ("AvgPool", "MaxPool", "ReduceMean"))
    return path, x, graph, tensors, pool


@pytest.mark.oracle
@pytest.mark.parametrize("name", CASES)
def test_ties_follow_openvino_and_exact_arithmetic(ov: Any, name: str, tmp_path: Path) -> None:
    path, x, graph, tensors, pool = _setup(ov, name, tmp_path)
    on = _measured_codes(ov, path, x, name, lpt=True)
    off = _measured_codes(ov, path, x, name, lpt=False)
    codes = ties.chain_codes(graph, pool, tensors)
    # the openvino readings are openvino's codes, LPT on and off, on every cell
    assert np.array_equal(codes["openvino"], on), int((codes["openvino"] != on).sum())
    assert np.array_equal(codes["lpt_off"], off), int((codes["lpt_off"] != off).sum())
    report = ties.chain_ties(graph, pool, tensors)
    assert report is not None and report.cells == on.size
    listed = {c.index: c for c in report.differing}
    # listed: exactly the cells where openvino's measured codes (LPT on) differ from the
    # reference reading's or from openvino's with LPT off
    ref = codes["reference"]
    want = {tuple(int(i) for i in idx) for idx in np.argwhere((on != ref) | (on != off))}
    assert set(listed) == want and report.differing_count == len(want)
    exact = _brute_force(x, name)
    lo = _lo(*(float(F32(v)) for v in CASES[name][3]))
    for idx, t in exact.items():
        if abs(t - (math.floor(t) + Fraction(1, 2))) > Fraction(1, 1000):
            # away from a tie the reference reading rounds the exact value
            assert ref[idx] == min(max(round(t), 0), 255) + lo, (idx, float(t))
    for idx, cell in listed.items():
        assert cell.exact == exact[idx]
        assert cell.tie == _is_tie(exact[idx])
        assert {k: r.code for k, r in cell.readings.items()} == {
            "openvino": on[idx],
            "reference": ref[idx],
            "lpt_off": off[idx],
        }
        for r in cell.readings.values():
            assert (r.code - lo > r.value) == ("up" in r.rounds)
    # measured: LPT's codes leave the specification's only at .5 ties
    assert all(_is_tie(exact[idx]) for idx in listed if on[idx] != ref[idx])
    assert report.ties == sum(_is_tie(exact[idx]) for idx in listed)
    ov_dir = report.directions["openvino"]
    assert ov_dir["up"] + ov_dir["down"] == report.ties
    assert ov_dir["up"] == sum(
        1 for idx in listed if _is_tie(exact[idx]) and on[idx] - lo > exact[idx]
    )


@pytest.mark.oracle
def test_ties_are_found_where_the_scales_make_them(ov: Any, tmp_path: Path) -> None:
    """The cases above are not vacuous: an output scale 1.5 times the input's puts a k2s2
    average on .5 ties in about 1 cell in 16, and openvino rounds them otherwise than the
    specification in float."""
    _, _, graph, tensors, pool = _setup(ov, "u8-avg-k2s2-ratio1.5", tmp_path)
    report = ties.chain_ties(graph, pool, tensors)
    assert report is not None and report.ties >= 10
    assert report.counts["openvino/reference"] >= 5


@pytest.mark.oracle
def test_explain_lists_the_ties(ov: Any, tmp_path: Path) -> None:
    path, x, graph, tensors, pool = _setup(ov, "zp-avg-k2s2-ratio1.5", tmp_path)
    np.save(tmp_path / "x.npy", x)
    want = ties.chain_ties(graph, pool, tensors)
    assert want is not None and want.differing_count > 0
    done = irpool("explain", path, "-i", str(tmp_path / "x.npy"), "--json")
    assert done.returncode == 0, done.stderr
    (layer,) = json.loads(done.stdout)["layers"]
    q = layer["quantized"]
    assert q["differing_cells"] == want.differing_count and q["exact_ties"] == want.ties
    assert [c["index"] for c in q["listed"]] == [list(c.index) for c in want.differing]
    first = q["listed"][0]
    assert {first["openvino"]["code"], first["reference"]["code"]} == {
        want.differing[0].readings["openvino"].code,
        want.differing[0].readings["reference"].code,
    }
    text = irpool("explain", path, "-i", str(tmp_path / "x.npy"))
    assert text.returncode == 0, text.stderr
    assert f"{want.differing_count} of {want.cells} cells get different codes" in text.stdout
    assert f"cell {want.differing[0].index}: exact" in text.stdout
    assert "rounds half to even" in text.stdout or "rounds up" in text.stdout


@pytest.mark.oracle
def test_explain_says_why_a_layer_has_no_ties(ov: Any, tmp_path: Path) -> None:
    o1 = ov.opset1
    lo, hi = (o1.constant(np.float32(v)) for v in (0.0, 2.55))
    x = o1.parameter([1, 2, 6, 6], np.float32, name="x")
    pool = o1.avg_pool(
        o1.fake_quantize(x, lo, hi, lo, hi, 256), [2, 2], [0, 0], [0, 0], [2, 2], True
    )
    path = str(tmp_path / "open.xml")
    ov.save_model(ov.Model([o1.result(pool)], [x], "open"), path, compress_to_fp16=False)
    done = irpool("explain", path)
    assert done.returncode == 0, done.stderr
    assert "quantized chain: no FakeQuantize reads its output" in done.stdout
    plain = irpool("explain", "fixtures/ir/ranks.xml", "--layer", "max3d")
    assert plain.returncode == 0 and "quantized chain" not in plain.stdout


@pytest.mark.oracle
def test_ties_behind_a_quantized_convolution(ov: Any, tmp_path: Path) -> None:
    """A net irpool does not run (FQ -> Convolution -> ReLU -> FQ -> AvgPool -> FQ, as NNCF
    writes it): the first FakeQuantize's output comes from openvino, and the openvino reading
    is openvino's own unprobed output on every cell."""
    o1 = ov.opset1

    def const(v: Any) -> Any:
        return o1.constant(np.asarray(v, dtype=np.float32))

    def fq(t: Any, lo: float, hi: float, levels: int = 256) -> Any:
        return o1.fake_quantize(t, const(lo), const(hi), const(lo), const(hi), levels)

    x = o1.parameter([1, 3, 18, 18], np.float32, name="x")
    w = fq(const(np.random.default_rng(5).uniform(-1, 1, (6, 3, 3, 3))), -1.0, 1.0, 255)
    conv = o1.relu(o1.convolution(fq(x, -1.0, 1.0), w, [1, 1], [1, 1], [1, 1], [1, 1]))
    pool = o1.avg_pool(fq(conv, 0.0, 2.55), [2, 2], [0, 0], [0, 0], [2, 2], True)
    path = str(tmp_path / "conv.xml")
    model = ov.Model([o1.result(fq(pool, 0.0, 3.825))], [x], "conv")
    ov.save_model(model, path, compress_to_fp16=False)
    data = np.random.default_rng(6).uniform(-1, 1, (1, 3, 18, 18)).astype(np.float32)
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    out = np.asarray(compiled({0: data})[compiled.outputs[0]], dtype=np.float64)
    measured = np.rint(out / (float(F32(3.825)) / 255)).astype(np.int64)
    graph = load_model(path)
    layer = next(la for la in graph.layers if la.type == "AvgPool")
    found = ties.explain_ties(graph, [layer.label], None, 0, -1.0, 1.0)
    report = found[layer.label]
    assert isinstance(report, ties.ChainTies), report
    assert "from openvino" in report.inputs
    tensors = ties._from_openvino(graph, [layer], {"x": data})
    codes = ties.chain_codes(graph, layer, tensors)
    assert np.array_equal(codes["openvino"], measured), int((codes["openvino"] != measured).sum())
    on_data = ties.chain_ties(graph, layer, tensors)
    assert on_data is not None and on_data.counts["openvino/reference"] > 0  # ties are there


@pytest.mark.oracle
def test_ties_through_a_maxpool_of_codes(ov: Any, tmp_path: Path) -> None:
    """FQ (zero point) -> MaxPool -> AvgPool (padding counted) -> FQ: LPT pools the codes
    through both; the readings equal openvino's codes with LPT on and off on every cell, and the
    border cells where LPT's padded code 0 stands for -zp*scale differ far from any tie."""
    from lpt_zoo import zoo

    shape, build = zoo(ov)["max-then-avg"]
    path = str(tmp_path / "mta.xml")
    ov.save_model(build(), path, compress_to_fp16=False)
    x = np.random.default_rng(8).uniform(-0.7, 2.3, shape).astype(np.float32)
    step = float(F32(2.0)) / 255
    measured = {}
    for key, config in (
        ("openvino", {"INFERENCE_PRECISION_HINT": "f32"}),
        ("lpt_off", {"INFERENCE_PRECISION_HINT": "f32", "LP_TRANSFORMS_MODE": False}),
    ):
        compiled = ov.Core().compile_model(path, "CPU", config)
        out = np.asarray(compiled({0: x})[compiled.outputs[0]], dtype=np.float64)
        measured[key] = np.rint(out / step).astype(np.int64)
    graph = load_model(path)
    tensors = run_graph(graph, {"x": x}, "openvino").tensors
    layer = next(la for la in graph.layers if la.type == "AvgPool")
    codes = ties.chain_codes(graph, layer, tensors)
    for key, want in measured.items():
        assert np.array_equal(codes[key], want), (key, int((codes[key] != want).sum()))
    report = ties.chain_ties(graph, layer, tensors)
    assert report is not None
    assert report.through == [la.label for la in graph.layers if la.type == "MaxPool"]
    far = [c for c in report.differing if c.off_tie is not None and abs(c.off_tie) > ties.FAR]
    assert report.far == len(far) > 0
    # far from a tie, the readings differ by more than one step: a different value, not rounding
    assert any(abs(c.readings["openvino"].code - c.readings["reference"].code) > 1 for c in far)
