"""FakeQuantize and the CPU plugin's low-precision pooling (irpool/lpt.py, lpt_run.py):
`irpool run` on quantized graphs built with openvino's opset API equals openvino's own output
bit for bit; the FakeQuantize formulas against a brute-force transcription of the spec."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import irpool
from lpt_zoo import conv_case, zoo

from irpool import api, lpt
from irpool.errors import IrpoolError

FAST = (
    "u8-ap1",
    "zp-ap1_pad+fq",
    "i8-ap1_excl",
    "pc-ap1_ceil+fq",
    "pci8-ap14_ceil_pad",
    "zp-ap14_ceil_torch",
    "zp-ap14_ceil_torch+fq",
    "zp-mp1",
    "i8-mp8+fq",
    "zp-rmean",
    "pc-rmax+fq",
    "zp-ap1-3d+fq",
    "chain",
    "levels255",
    "max-then-avg",
    "zp-mp14+fq",
    "u8-ap16",
)


def _spec_fq(x: float, il: float, ih: float, ol: float, oh: float, levels: int) -> float:
    """FakeQuantize-1 as the specification writes it, one element, in float64."""
    if x <= min(il, ih):
        return ol
    if x > max(il, ih):
        return oh
    q = (x - il) / (ih - il) * (levels - 1)
    r = math.floor(q + 0.5) if q - math.floor(q) != 0.5 else 2 * round(q / 2)
    return r / (levels - 1) * (oh - ol) + ol


@pytest.mark.parametrize("levels", [2, 16, 255, 256])
def test_fake_quantize_readings_follow_the_spec(levels: int) -> None:
    rng = np.random.default_rng(levels)
    x = rng.uniform(-2, 3, (1, 3, 40)).astype(np.float32)
    il, ih, ol, oh = np.float32(-0.7), np.float32(2.1), np.float32(-1.0), np.float32(1.5)
    p = lpt.fq_params(levels, [il, ih, ol, oh], 3)
    want = np.array(
        [_spec_fq(float(v), float(il), float(ih), float(ol), float(oh), levels) for v in x.ravel()]
    )
    step = float(oh - ol) / (levels - 1)
    for got in (lpt.reference_fake_quantize(x, p), lpt.cpu_fake_quantize(x, p)):
        # float32 rounding only: never more than one quantization step, and rarely that
        diff = np.abs(got.ravel().astype(np.float64) - want)
        assert (diff < 1e-5 + step * 1.001).all()
        assert (diff > 1e-5).mean() < 0.02


def test_decomposition_picks_lpt_precisions() -> None:
    def dec(lo: float, hi: float, levels: int = 256) -> lpt.Decomposition:
        d = lpt.decompose(lpt.fq_params(levels, [lo, hi, lo, hi], 4))
        assert d is not None
        return d

    u8 = dec(0.0, 2.55)
    assert (u8.precision, u8.lo, u8.hi, u8.shift) == ("u8", 0.0, 255.0, None)
    assert u8.scale.item() == np.float32(np.float32(2.55) / np.float32(255))
    i8 = dec(-1.28, 1.27)
    assert (i8.precision, i8.lo, i8.hi) == ("i8", -128.0, 127.0)
    zp = dec(-0.5, 2.05)
    assert zp.precision == "u8" and zp.shift is not None and zp.shift.item() == 50.0
    narrow = dec(-1.27, 1.27, 255)
    assert (narrow.precision, narrow.lo, narrow.hi, narrow.shift) == ("i8", -127.0, 127.0, None)
    assert lpt.decompose(lpt.fq_params(16, [0.0, 1.0, 0.0, 1.0], 4)) is None


def _save(ov: Any, model: Any, path: Path) -> str:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return str(path)


def _openvino(ov: Any, path: str, x: np.ndarray) -> np.ndarray:
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.asarray(compiled({0: x})[compiled.outputs[0]])


def _check_case(ov: Any, name: str, tmp_path: Path) -> None:
    shape, build = zoo(ov)[name]
    path = _save(ov, build(), tmp_path / "m.xml")
    x = np.random.default_rng(7).uniform(-1.5, 3.5, shape).astype(np.float32)
    want = _openvino(ov, path, x)
    got = next(iter(api.run(path, {"x": x}).outputs.values()))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want), f"{int((got != want).sum())} of {want.size} cells differ"


@pytest.mark.oracle
@pytest.mark.parametrize("name", FAST)
def test_run_equals_openvino_on_quantized_pooling(ov: Any, name: str, tmp_path: Path) -> None:
    _check_case(ov, name, tmp_path)


@pytest.mark.oracle
@pytest.mark.slow
def test_run_equals_openvino_on_the_whole_zoo(ov: Any, tmp_path: Path) -> None:
    for name in zoo(ov):
        _check_case(ov, name, tmp_path)


@pytest.mark.oracle
def test_run_says_it_does_not_execute_a_quantized_convolution(ov: Any, tmp_path: Path) -> None:
    _, model = conv_case(ov)
    path = _save(ov, model, tmp_path / "conv.xml")
    with pytest.raises(IrpoolError, match="Convolution"):
        api.run(path)
    done = irpool("run", path, "-o", str(tmp_path / "out.npz"))
    assert done.returncode == 2
    assert "Convolution" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.oracle
def test_lpt_decision_matches_the_runtime_model(ov: Any) -> None:
    """What irpool assumes LPT does (ops/quantize.LPT_POOLS) against the plugin's executed
    graph: a transformed pool runs on u8/i8 (a pool's own node has a u8 input), a ceil_torch
    AvgPool-14 stays in float32."""
    core = ov.Core()
    cases = zoo(ov)
    for name, lowp in [
        ("u8-ap1", True),
        ("i8-mp8", True),
        ("zp-rmean", True),
        ("u8-ap14_ceil_torch", False),
    ]:
        _, build = cases[name]
        compiled = core.compile_model(build(), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        kinds = {}
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            kinds[info["layerType"].value] = info["outputPrecisions"].value
        quantizer = [
            op.get_rt_info()["outputPrecisions"].value
            for op in compiled.get_runtime_model().get_ordered_ops()
            if op.get_rt_info()["layerType"].value == "Subgraph"
        ]
        assert (quantizer[0] in ("u8", "i8")) == lowp, (name, kinds)


def _compare_case(ov: Any, name: str, tmp_path: Path) -> None:
    cases = dict(zoo(ov))
    cases["conv"] = (conv_case(ov)[0], lambda: conv_case(ov)[1])
    shape, build = cases[name]
    path = _save(ov, build(), tmp_path / "m.xml")
    x = np.random.default_rng(7).uniform(-1.5, 3.5, shape).astype(np.float32)
    report = api.compare(path, {"x": x})
    assert report.layers and not report.missing
    failed = [
        (la.layer, la.error, [o.mismatches for o in la.outputs])
        for la in report.layers
        if not la.passed
    ]
    assert report.passed, failed


@pytest.mark.oracle
@pytest.mark.parametrize(
    "name", ["zp-ap1_pad+fq", "i8-mp8", "zp-rmean+fq", "chain", "max-then-avg", "conv"]
)
def test_compare_agrees_on_quantized_pooling(ov: Any, name: str, tmp_path: Path) -> None:
    """No false alarm: the layers LPT runs on codes compare equal, and the probe leaves the
    fusion alone (the fused FakeQuantize's output is read instead of the pool's)."""
    _compare_case(ov, name, tmp_path)


@pytest.mark.oracle
@pytest.mark.slow
def test_compare_agrees_on_the_whole_zoo(ov: Any, tmp_path: Path) -> None:
    for name in [*zoo(ov), "conv"]:
        _compare_case(ov, name, tmp_path)


@pytest.mark.oracle
@pytest.mark.slow
@pytest.mark.parametrize("net", ["resnet", "densenet", "inception", "squeezenet", "mobilenet"])
def test_compare_agrees_on_nncf_quantized_nets(ov: Any, net: str, tmp_path: Path) -> None:
    """NNCF's post-training quantization of small torchvision-shaped nets (random weights,
    random calibration data): every pooling-family layer compared and agreeing, under the
    plugin's default precision on this machine and under f32."""
    from conftest import need
    from small_nets import quantized

    torch = need("torch", "torch")
    nncf = need("nncf", "nncf")
    path = _save(ov, quantized(ov, torch, nncf, net), tmp_path / f"{net}.xml")
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    for precision in (None, "f32"):
        report = api.compare(path, x, precision=precision)
        assert report.layers and not report.missing and not report.skipped
        assert report.passed, [la.layer for la in report.layers if not la.passed]
        assert report.probe is not None
        if report.probe.moved:
            # the report names the layers whose probe moved the outputs
            assert report.probe.layers


@pytest.mark.oracle
def test_compare_states_precision_and_probe_effect(ov: Any, tmp_path: Path) -> None:
    """The report says at which precision openvino ran and why (the plugin's own default
    unless asked), and whether the probe changed the model's final outputs."""
    shape, build = zoo(ov)["chain"]
    path = _save(ov, build(), tmp_path / "m.xml")
    x = np.random.default_rng(7).uniform(-1.5, 3.5, shape).astype(np.float32)
    default = str(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name())
    doc = api.compare(path, {"x": x}).to_json()
    assert doc["inference_precision_hint"] == default
    assert doc["inference_precision_reason"].startswith("the CPU plugin's default")
    assert doc["probe"] == {"final_values": 6, "final_values_moved": 0, "max_abs": 0.0}
    asked = api.compare(path, {"x": x}, precision="f32").to_json()
    assert asked["inference_precision_reason"] == "asked for"


READER_RANGES = {"u8": (0.0, 2.55), "zp": (-0.5, 2.05), "i8": (-1.28, 1.27), "u8zp": (0.3, 2.85)}
READER_NETS = ("avg", "avg+pool-result", "max")


@pytest.mark.oracle
@pytest.mark.parametrize("net", READER_NETS)
@pytest.mark.parametrize("ranges", list(READER_RANGES))
def test_every_reader_of_a_decomposed_fake_quantize(
    ov: Any, net: str, ranges: str, tmp_path: Path
) -> None:
    """A FakeQuantize read by a pooling layer LPT transforms and by a Result: openvino's every
    output, bit for bit, on inputs with zeros of both signs and the range's bounds.  The Result
    reads LPT's dequantization, not the FakeQuantize's value; a second FakeQuantize after a
    pooling layer whose output is also a Result is not fused into it."""
    o = ov.opset13
    lo, hi = READER_RANGES[ranges]
    shape = (1, 6, 11, 11)

    def c(v: float) -> Any:
        return o.constant(np.float32(v))

    x = o.parameter(list(shape), np.float32, name="x")
    q = o.fake_quantize(x, c(lo), c(hi), c(lo), c(hi), 256, name="fq")
    if net == "max":
        pool = o.max_pool(q, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3])
        pool_out = pool.output(0)
    else:
        pool = o.avg_pool(q, [2, 2], [1, 1], [1, 1], [3, 3], False)
        pool_out = pool.output(0)
    last = o.fake_quantize(pool_out, c(0.0), c(2.0), c(0.0), c(2.0), 256, name="fq_post")
    results = [o.result(last, name="r_last"), o.result(q, name="r_fq")]
    if net == "avg+pool-result":
        results.append(o.result(pool_out, name="r_pool"))
    path = _save(ov, ov.Model(results, [x], net), tmp_path / "m.xml")
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for seed in (3, 4):
        data = np.random.default_rng(seed).uniform(-1.5, 3.5, shape).astype(np.float32)
        flat = data.reshape(-1)
        flat[::7], flat[3::11] = np.float32(-0.0), np.float32(0.0)
        flat[5::13], flat[6::17] = np.float32(lo), np.float32(hi)
        truth = {o.get_any_name(): np.asarray(v) for o, v in compiled({0: data}).items()}
        got = api.run(path, {"x": data}).outputs
        assert len(got) == len(truth)
        for key, want in got.items():
            name = next(n for n in truth if n in key or key in n)
            ref = truth[name]
            bad = int((want.view(np.int32) != ref.view(np.int32)).sum())
            assert bad == 0, f"{key}: {bad} of {ref.size} cells differ from openvino"
