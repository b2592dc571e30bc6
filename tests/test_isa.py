"""The rules of openvino's CPU plugin that depend on the CPU's instruction set (irpool.cpu):
bfloat16 rounding and holding, and which one-channel integer layers run in integers, in float32
or not at all.  The oracle tests compare irpool, which follows irpool.cpu.plugin_isa(), with
the openvino installed here, which follows the CPU: on an AVX-512 and an AVX2 machine alike
they must agree.  The kernel tests compare with the brute-force reference under both rules.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import reference
from test_fidelity import agree, irpool_outputs, openvino_outputs

from irpool.cpu import plugin_isa
from irpool.frontends.ir_writer import NetBuilder
from irpool.geometry import PoolParams, plan
from irpool.kernel import pool
from irpool.model import bfloat16

BF16 = bfloat16()
pytestmark = pytest.mark.skipif(BF16 is None, reason="bfloat16 needs ml_dtypes")

TIES = [
    0x3F808000,  # 1 + half an ulp of bfloat16: even kept half
    0x3F818000,  # odd kept half, a tie
    0x3F80C000,  # even kept half, above the tie (nearest even: up; ov::bfloat16: truncated)
    0x3F804000,
    0x3F80FFFF,
    0x3F817FFF,
    0x007FFFFF,  # subnormals: flushed to zero by AVX512_BF16, kept on AVX2
    0x80400000,
    0x00010000,
    0x7F7FFFFF,
    0x7F7F8000,
    0x4F32D05E,  # 3e9
    0x4470C000,  # 963
    0xFF800000,
    0x7FC00001,
]


def _f32(bits: list[int]) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


def _chain(steps: list[tuple[str, Any]], shape: tuple[int, ...], et: str) -> tuple[str, bytes]:
    """A net: Parameter x of type `et`, then each step (Convert to a type, or AvgPool/MaxPool
    of a 1-D kernel and stride), then a Result."""
    net = NetBuilder("isa")
    cur = net.parameter("x", shape, et)
    for i, (kind, arg) in enumerate(steps):
        if kind == "Relu":
            cur = net.op("ReLU", "opset1", f"r{i}", {}, [cur], [((-1,) * len(shape), arg)])[0]
        elif kind == "convert":
            cur = net.op(
                "Convert",
                "opset1",
                f"c{i}",
                {"destination_type": arg},
                [cur],
                [((-1,) * len(shape), arg)],
            )[0]
        else:
            k, s, out_et = arg
            data = {"strides": str(s), "pads_begin": "0", "pads_end": "0", "kernel": str(k)}
            if kind == "AvgPool":
                data["exclude-pad"] = "true"
            cur = net.op(kind, "opset1", f"p{i}", data, [cur], [((-1,) * len(shape), out_et)])[0]
    net.result("out", cur)
    return net.xml(), net.bin()


def _agree(tmp_path: Path, xml: str, weights: bytes, x: np.ndarray) -> None:
    why = agree(
        irpool_outputs(tmp_path, xml, weights, {"x": x}), openvino_outputs(xml, weights, {"x": x})
    )
    assert why is None, f"{plugin_isa().name}: {why}"


@pytest.mark.oracle
def test_float32_to_bfloat16_rounds_as_the_plugin_does(ov: ModuleType, tmp_path: Path) -> None:
    """Convert f32 -> bf16 -> Result, and the same values through a bfloat16 MaxPool of 1."""
    x = _f32(TIES).reshape(1, 1, -1)
    for steps in (
        [("convert", "bf16")],
        [("convert", "bf16"), ("MaxPool", (1, 1, "bf16"))],
        [("convert", "bf16"), ("AvgPool", (1, 1, "bf16"))],
    ):
        xml, weights = _chain(steps, x.shape, "f32")
        _agree(tmp_path, xml, weights, x)


@pytest.mark.oracle
def test_bfloat16_means_round_as_the_plugin_does(ov: ModuleType, tmp_path: Path) -> None:
    """bfloat16 AvgPool of 2 and 3 over random bfloat16 values (subnormals among them): the
    float32 means rounded by the plugin's rule (nearest even on AVX512_BF16, ov::bfloat16's on
    AVX2: several hundred of these differ between the two rules)."""
    rng = np.random.default_rng(0)
    n = 2000
    scale = rng.choice(np.array([1e-39, 1e-3, 1.0, 1e5], dtype=np.float32), n)
    x = (rng.standard_normal(n).astype(np.float32) * scale).astype(BF16).reshape(1, 1, n)
    for k in (2, 3):
        xml, weights = _chain([("AvgPool", (k, 1, "bf16"))], x.shape, "bf16")
        assert isinstance(openvino_outputs(xml, weights, {"x": x}), list)  # it computes
        _agree(tmp_path, xml, weights, x)


@pytest.mark.oracle
def test_bfloat16_made_in_the_net(ov: ModuleType, tmp_path: Path) -> None:
    """A bfloat16 tensor made by a Convert, pooled and converted on (AVX2 holds it in float32:
    the mean of the unrounded values; AVX-512 rounds at the Convert)."""
    x = _f32([0x3F80C000, 0x3F80C000, 0x3F818000, 0x3F800000, 0x40007FFF, 0x40007FFF])
    x = x.reshape(1, 1, -1)
    for steps in (
        [("convert", "bf16"), ("AvgPool", (2, 2, "bf16")), ("convert", "f32")],
        [("convert", "bf16"), ("AvgPool", (2, 2, "bf16"))],
        [("convert", "bf16"), ("convert", "f32")],
        [("convert", "bf16"), ("AvgPool", (1, 1, "bf16")), ("AvgPool", (2, 2, "bf16"))],
        [("convert", "bf16"), ("Relu", "bf16"), ("convert", "f32")],
    ):
        xml, weights = _chain(steps, x.shape, "f32")
        _agree(tmp_path, xml, weights, x)
    ints = np.array([[[-(2**63), 257, 259, 2**31 - 1, 3 * 2**24 + 3, -5]]], dtype=np.int64)
    xml, weights = _chain([("convert", "bf16"), ("convert", "f64")], ints.shape, "i64")
    _agree(tmp_path, xml, weights, ints)


@pytest.mark.oracle
@pytest.mark.parametrize("reduce", ["AvgPool", "MaxPool"])
def test_one_channel_integer_layers_at_the_jit_boundary(
    ov: ModuleType, tmp_path: Path, reduce: str
) -> None:
    """One-channel i32 layers with 2 to 6 outputs, kernel 2, stride 1 and 2, batch 1 and 2:
    on AVX2 oneDNN's integer jit needs 4 elements in batch x the smaller of input and output
    size (fewer: the mean is refused, the max computed in float32, so 2^24 + 1 becomes 2^24)."""
    for batch in (1, 2):
        for n in (3, 4, 5, 6, 8):
            for stride in (1, 2):
                x = np.full((batch, 1, n), 2**24 + 1, dtype=np.int32)
                x[..., ::2] = 2**30 + 2
                xml, weights = _chain([(reduce, (2, stride, "i32"))], x.shape, "i32")
                _agree(tmp_path, xml, weights, x)


@pytest.mark.parametrize("isa", ["avx512_bf16", "avx2"])
def test_bfloat16_kernel_against_the_reference(isa: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy core's bfloat16 means and maxima under each ISA's rule equal the brute-force
    reference's (which transcribes the rounding independently)."""
    monkeypatch.setenv("IRPOOL_OV_ISA", isa)
    rng = np.random.default_rng(3)
    for reduce, dil, pads in (
        ("mean", 1, (1, 0)),
        ("max", 1, (0, 0)),
        ("max", 2, (2, 2)),
        ("mean", 2, (0, 1)),
    ):
        params = PoolParams("t", reduce, (3, 2), (1, 2), (dil, 1), (pads, pads), count_pad=True)  # type: ignore[arg-type]
        shape = (2, 3, 7, 6)
        p = plan(params, shape, "openvino", dtype="bfloat16")
        assert p.plugin_isa == isa
        assert p.bf16_round == ("half_up_if_odd" if isa == "avx2" else "nearest_even")
        scale = rng.choice(np.array([1e-39, 1e-3, 1.0, 3e38], dtype=np.float32), shape)
        with np.errstate(over="ignore"):  # infinities where 3e38 overflows
            x = (rng.standard_normal(shape).astype(np.float32) * scale).astype(BF16)
        got, _ = pool(x, p, path="numpy")
        want, _ = reference.pool(x, p)
        bits = np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16)
        nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
        assert np.array_equal(bits[0][~nan], bits[1][~nan]), (isa, reduce, dil)


@pytest.mark.oracle
def test_u8_mean_of_an_empty_window_read_by_a_convert(ov: ModuleType, tmp_path: Path) -> None:
    """A u8 AvgPool-16 of 3 channels with an empty window (kernel 2, dilation 4, pads 2/2 on
    3 elements: the middle window's taps -1 and 3), read by a Result and a Convert to f32:
    255 for the Convert on AVX-512 (f32 means reordered to u8 in a blocked layout), 0 on AVX2
    (pooled in u8)."""
    net = NetBuilder("u8")
    x_ref = net.parameter("x", (1, 3, 3), "u8")
    data = {
        "strides": "1",
        "pads_begin": "2",
        "pads_end": "2",
        "kernel": "2",
        "dilations": "4",
        "exclude-pad": "true",
        "rounding_type": "floor",
    }
    mean = net.op("AvgPool", "opset16", "pool", data, [x_ref], [((1, 3, 3), "u8")])[0]
    net.result("mean", mean)
    wide = net.op(
        "Convert", "opset1", "c", {"destination_type": "f32"}, [mean], [((1, 3, 3), "f32")]
    )[0]
    net.result("wide", wide)
    x = np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3)
    _agree(tmp_path, net.xml(), net.bin(), x)


def test_every_bfloat16_pattern_through_a_mean_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """All 65,536 bfloat16 patterns through a 1x1 AvgPool under AVX2's rule: (0 + x) / 1 in
    float32 (a NaN quieted), then ov::bfloat16's rounding written out here: add 0x8000 where
    bit 16 is set, modulo 2**32, keep the high half."""
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx2")
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(BF16).reshape(1, 1, 256, 256)
    one = PoolParams("avg", "mean", (1, 1), (1, 1), (1, 1), ((0, 0), (0, 0)))
    p = plan(one, x.shape, "openvino", dtype="bfloat16")
    got = pool(x, p)[0].view(np.uint16)
    with np.errstate(invalid="ignore"):
        wide = (np.float32(0) + x.astype(np.float32)) / np.float32(1)
    u = wide.view(np.uint32).astype(np.uint64)
    want = ((u + ((u >> 16) & 1) * 0x8000) % 2**32 >> 16).astype(np.uint16)
    np.testing.assert_array_equal(got, want)
