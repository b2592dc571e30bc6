"""The compiled per-element glue of compile_model (kernel/glue_compiled.py, numba_glue.py)
against the numpy core (ops/glue.py, ops/elements.py), bit for bit with NaN payloads: every
float16 pattern, every 8-bit integer, int32 at the edges of float32's precision, float32
specials and random bit patterns; and chains of glue and pooling through compile_model
against irpool.run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from family_helpers import random_values, save
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irpool
from irpool.frontends.ir_writer import NetBuilder
from irpool.kernel.glue_compiled import _pattern, prepare_convert, prepare_elementwise
from irpool.model import Layer
from irpool.ops import elements
from irpool.ops import glue as core

pytest.importorskip("numba")

FEW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
F32 = np.dtype(np.float32)


def exact(a: Any, b: Any) -> bool:
    """Same dtype, shape and bytes (NaN payloads and zero signs included)."""
    a, b = np.asarray(a), np.asarray(b)
    return bool(
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    )


def float32_specials(rng: np.random.Generator, n: int) -> Any:
    """Random float32 bit patterns (NaNs with payloads, subnormals, infinities included) and
    the special values."""
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.0, -1.0, 4.0]
    payloads = np.asarray([0x7F800001, 0xFFC00123], np.uint32).view(np.float32)
    special = np.concatenate([np.asarray(specials, np.float32), payloads])
    x[: min(n, special.size)] = special[:n]
    return x


def _layer(type_: str) -> Layer:
    return Layer(0, type_, type_, "opset1", {}, (), (), None, None)


# -- the kernels alone -------------------------------------------------------------------------


@pytest.mark.parametrize("src", ["uint8", "int8", "int32", "float16"])
def test_convert_to_float32(src: str) -> None:
    rng = np.random.default_rng(1)
    if src == "float16":
        x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    elif src == "int32":
        edges = [0, 1, -1, 2**24, 2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**31 - 1, -(2**31)]
        x = np.concatenate([np.asarray(edges, np.int32), rng.integers(-(2**31), 2**31, 5000)])
        x = x.astype(np.int32)
    else:
        info = np.iinfo(src)
        x = np.arange(info.min, info.max + 1).astype(src)
    kernel = prepare_convert(x.dtype, F32, x.size, "auto")
    assert kernel is not None
    et = {"uint8": "u8", "int8": "i8", "int32": "i32", "float16": "f16"}[src]
    expected, held = elements.convert(x, et, "f32")
    assert held == "f32"
    assert exact(kernel([x])[0], expected)
    strided = x[::3]  # not contiguous: copied first
    assert exact(kernel([strided])[0], elements.convert(strided, et, "f32")[0])


def test_convert_serves_only_widening_to_float32() -> None:
    assert prepare_convert(np.dtype(np.float32), np.dtype(np.float16), 4, "auto") is None
    assert prepare_convert(np.dtype(np.int64), F32, 4, "auto") is None
    assert prepare_convert(np.dtype(np.uint8), F32, 4, "numpy") is None
    assert prepare_convert(np.dtype(np.uint8), F32, 0, "auto") is None


@pytest.mark.parametrize(
    "type_,reference", [("Relu", core.relu), ("Abs", core.abs_), ("Sqrt", core.sqrt)]
)
def test_unary(type_: str, reference: Any) -> None:
    x = float32_specials(np.random.default_rng(2), 20000).reshape(4, 5000)
    made = prepare_elementwise(type_, [x], [True], "auto")
    assert made is not None
    kernel, why = made
    assert why.startswith("compiled")
    assert exact(kernel([x])[0], reference(_layer(type_), [x])[0])
    strided = np.empty((4, 10000), np.float32)[:, ::2]  # not contiguous: copied first
    strided[...] = x[:, ::-1]
    assert exact(kernel([strided])[0], reference(_layer(type_), [strided])[0])


@pytest.mark.parametrize("exponent", [0.5, 1.0, 2.0, 3.0, 4.0])
@pytest.mark.parametrize("rank", [0, 1, 4])
def test_power_by_a_scalar(exponent: float, rank: int) -> None:
    """Power by the scalar exponents openvino computes without powf (kernel/libm.py
    power_rules): ops/glue.py's bits, NaN payloads included."""
    x = float32_specials(np.random.default_rng(9), 3000).reshape(2, 3, 20, 25)
    e = np.full((1,) * rank, exponent, np.float32)
    made = prepare_elementwise("Power", [x, e], [True, False], "auto")
    assert made is not None
    assert exact(made[0]([x, e])[0], core.power(_layer("Power"), [x, e])[0])


@pytest.mark.parametrize(
    "shape,other",
    [
        ((2, 6, 5, 7), ()),
        ((2, 6, 5, 7), (1,)),
        ((2, 6, 5, 7), (1, 6, 1, 1)),
        ((2, 6, 5, 7), (6, 1, 1)),
        ((2, 6, 5, 7), (1, 1, 5, 7)),
        ((2, 6, 5, 7), (7,)),
        ((2, 6, 5, 7), (2, 6, 5, 7)),
        ((2, 6, 5, 7), (2, 1, 1, 1)),
    ],
)
def test_multiply_by_a_constant(shape: tuple[int, ...], other: tuple[int, ...]) -> None:
    rng = np.random.default_rng(3)
    x = float32_specials(rng, int(np.prod(shape))).reshape(shape)
    b = float32_specials(rng, max(1, int(np.prod(other)))).reshape(other)
    b[np.isnan(b)] = 3.0  # a constant with a NaN is left to numpy (see below)
    made = prepare_elementwise("Multiply", [x, b], [True, False], "auto")
    assert made is not None
    kernel, _ = made
    expected = core.multiply(_layer("Multiply"), [x, b])[0]
    assert exact(kernel([x, b])[0], expected)
    again = float32_specials(rng, x.size).reshape(shape)  # a second call, new values
    assert exact(kernel([again, b])[0], core.multiply(_layer("Multiply"), [again, b])[0])


@pytest.mark.parametrize("type_", ["Add", "Subtract"])
@pytest.mark.parametrize(
    ("shape", "other"),
    [((2, 6, 5, 7), (1,)), ((2, 6, 5, 7), (1, 6, 1, 1)), ((2, 6, 5, 7), (1, 1, 5, 7))],
)
def test_add_and_subtract_a_constant(
    type_: str, shape: tuple[int, ...], other: tuple[int, ...]
) -> None:
    """The kernel against numpy's IEEE sum and difference (NaN payloads, signed zeros and
    infinities among the inputs and the constant)."""
    rng = np.random.default_rng(5)
    x = float32_specials(rng, int(np.prod(shape))).reshape(shape)
    b = float32_specials(rng, max(1, int(np.prod(other)))).reshape(other)
    b[np.isnan(b)] = -0.0
    made = prepare_elementwise(type_, [x, b], [True, False], "auto")
    assert made is not None
    kernel, _ = made
    with np.errstate(all="ignore"):
        expected = (np.add if type_ == "Add" else np.subtract)(x, b)
    assert exact(kernel([x, b])[0], expected)
    assert exact(kernel([x, b])[0], getattr(core, type_.lower())(_layer(type_), [x, b])[0])
    nan = np.full(other, np.nan, np.float32)
    assert prepare_elementwise(type_, [x, nan], [True, False], "auto") is None


@FEW
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.integers(0, 2**32 - 1),
)
def test_multiply_broadcasts_as_numpy(dims: list[int], keep: list[bool], seed: int) -> None:
    """Any constant shape that broadcasts to the input: the kernel where its varying axes
    form one run, else numpy; the same bits either way."""
    shape = tuple(dims)
    other = tuple(d if k else 1 for d, k in zip(shape, keep, strict=False))
    rng = np.random.default_rng(seed)
    x = float32_specials(rng, int(np.prod(shape))).reshape(shape)
    b = rng.standard_normal(other).astype(np.float32)
    made = prepare_elementwise("Multiply", [x, b], [True, False], "auto")
    varying = [k for k, o in enumerate(other) if o != 1]
    one_run = not varying or all(other[k] == shape[k] for k in range(varying[0], varying[-1] + 1))
    assert (made is not None) == one_run
    if made is not None:
        assert exact(made[0]([x, b])[0], core.multiply(_layer("Multiply"), [x, b])[0])


def test_what_multiply_leaves_to_numpy() -> None:
    x = np.ones((1, 4, 3, 3), np.float32)
    nan = np.full((1, 4, 1, 1), np.nan, np.float32)
    assert prepare_elementwise("Multiply", [x, nan], [True, False], "auto") is None
    assert prepare_elementwise("Multiply", [x, x], [True, True], "auto") is None
    assert prepare_elementwise("Multiply", [x, x[0, 0]], [False, True], "auto") is None
    wide = np.ones((1, 4, 3, 1), np.float64)
    assert prepare_elementwise("Multiply", [x, wide], [True, False], "auto") is None
    bigger = np.ones((2, 4, 3, 3), np.float32)
    assert prepare_elementwise("Multiply", [x, bigger], [True, False], "auto") is None
    other = np.full(1, 2.5, np.float32)  # powf: left to numpy
    assert prepare_elementwise("Power", [x, other], [True, False], "auto") is None
    two = np.full((1, 1, 1, 1, 1), 2.0, np.float32)  # a result of higher rank
    assert prepare_elementwise("Power", [x, two], [True, False], "auto") is None
    assert prepare_elementwise("Relu", [x], [True], "numpy") is None
    assert _pattern((2, 3, 4), (3, 1)) == (3, 4)
    assert _pattern((2, 3, 4), (2, 1, 4)) is None


# -- through compile_model ---------------------------------------------------------------------


def _chain(element_type: str, shape: list[int]) -> NetBuilder:
    """Parameter (element_type) -> Convert f32 -> AvgPool 3x3/2 -> Multiply by a per-channel
    Const -> ReLU -> Results (the ReLU and the pooled tensor)."""
    net = NetBuilder("glue")
    x = net.parameter("x", shape, element_type)
    f = net.op("Convert", "opset1", "to_f32", {"destination_type": "f32"}, [x], [(shape, "f32")])
    out = [shape[0], shape[1], (shape[2] + 1) // 2, (shape[3] + 1) // 2]
    attrs = {
        "kernel": "3,3",
        "strides": "2,2",
        "pads_begin": "1,1",
        "pads_end": "1,1",
        "exclude-pad": "true",
    }
    pool = net.op("AvgPool", "opset1", "pool", attrs, [f[0]], [(out, "f32")])
    scales = np.linspace(-1.5, 2.0, shape[1], dtype=np.float32)
    scale = net.const("scale", scales.reshape(1, -1, 1, 1))
    mul = net.op("Multiply", "opset1", "mul", {}, [pool[0], scale], [(out, "f32")])
    relu = net.op("Relu", "opset1", "relu", {}, [mul[0]], [(out, "f32")])
    net.result("y", relu[0])
    net.result("pooled", pool[0])
    return net


@pytest.mark.parametrize("element_type", ["u8", "i8", "i32", "f16", "f32"])
def test_a_chain_of_glue_runs_compiled(tmp_path: Path, element_type: str) -> None:
    shape = [1, 5, 9, 8]
    path = save(_chain(element_type, shape), tmp_path)
    rng = np.random.default_rng(4)
    dtype = {"u8": np.uint8, "i8": np.int8, "i32": np.int32, "f16": np.float16, "f32": np.float32}
    if element_type in ("u8", "i8", "i32"):
        info = np.iinfo(dtype[element_type])
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype[element_type])
    else:
        x = random_values(rng, shape, special=True).astype(dtype[element_type])
    f = irpool.compile_model(path, threads=1)
    expected = irpool.run(path, x).outputs
    for _ in range(2):
        got = f(x)
        assert set(got) == set(expected)
        for name, value in expected.items():
            assert exact(got[name], value), name
    program = f._last[1] if f._last else None
    assert program is not None and program.arrays is not None  # every step on plain arrays
    glue = {g.type: g.path for g in f.glue}
    assert glue.get("Multiply") == "compiled" and glue.get("Relu") == "compiled"
    if element_type != "f32":
        assert glue.get("Convert") == "compiled"
    numpy_f = irpool.compile_model(path, threads=1, path="numpy")
    assert {g.path for g in numpy_f.glue} == {"numpy"}
    for name, value in numpy_f(x).items():
        assert exact(value, expected[name]), name


# -- FakeQuantize --------------------------------------------------------------------------------


def _fq_params(rng: np.random.Generator, shape: tuple[int, ...], per_channel: bool) -> Any:
    from irpool import lpt

    c = shape[1] if per_channel else 1
    lo = -rng.uniform(0.1, 3.0, c).astype(np.float32)
    hi = rng.uniform(0.1, 3.0, c).astype(np.float32)
    ranges = [lo, hi, lo * np.float32(0.5), hi * np.float32(1.5)]
    ranges = [r.reshape(1, c, 1, 1) for r in ranges]
    return lpt.fq_params(int(rng.choice([255, 256, 16])), ranges, len(shape))


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("fused,fma_out", [(False, None), (True, None), (False, True)])
def test_fake_quantize_as_the_plugin(per_channel: bool, fused: bool, fma_out: Any) -> None:
    from irpool import lpt
    from irpool.kernel.glue_compiled import _fq_constants, fake_quantize

    rng = np.random.default_rng(5)
    shape = (2, 6, 7, 9)
    for _ in range(3):
        p = _fq_params(rng, shape, per_channel)
        x = float32_specials(rng, int(np.prod(shape))).reshape(shape)
        x[0, 0, 0, : p.il.size] = p.il.reshape(-1)  # the bounds themselves
        x[0, 1, 0, :] = rng.uniform(-4, 4, shape[3]).astype(np.float32) * 1e-3
        codes_like = np.rint(rng.uniform(-10, 300, shape)).astype(np.float32)  # ties at .5
        codes_like[0, 0, 1, :4] = [0.5, 1.5, -0.5, 254.5]
        assert _fq_constants(shape, p) != ()  # the kernel serves them
        for data in (x, codes_like):
            got = fake_quantize(data, p, fused, fma_out)
            assert exact(got, lpt.cpu_fake_quantize(data, p, fused, fma_out))


def test_fake_quantize_leaves_zero_bounds_and_nan_to_numpy() -> None:
    from irpool import lpt
    from irpool.kernel.glue_compiled import _fq_constants, fake_quantize

    shape = (1, 3, 4, 4)
    x = float32_specials(np.random.default_rng(6), 48).reshape(shape)
    zero = lpt.fq_params(256, [np.float32(0), np.float32(2)] * 2, 4)
    nan = lpt.fq_params(256, [np.float32(-1), np.float32(np.nan)] * 2, 4)
    fine = lpt.fq_params(256, [np.float32(-1), np.float32(2)] * 2, 4)
    assert _fq_constants(shape, zero) == () and _fq_constants(shape, nan) == ()
    assert _fq_constants(shape, fine) != ()
    for p in (zero, nan, fine):
        assert exact(fake_quantize(x, p), lpt.cpu_fake_quantize(x, p))


def test_a_quantized_chain_through_compile_model(tmp_path: Path) -> None:
    """Parameter -> FakeQuantize (256 levels, per channel) -> AvgPool 2x2/2 -> FakeQuantize
    -> Result: the compiled FakeQuantize gives irpool.run's bits."""
    shape = [1, 4, 8, 8]
    net = NetBuilder("fq")
    x = net.parameter("x", shape)
    lo = net.const("lo", np.asarray([-2.0, -1.0, -0.5, -3.0], np.float32).reshape(1, 4, 1, 1))
    hi = net.const("hi", np.asarray([2.0, 1.5, 0.25, 1.0], np.float32).reshape(1, 4, 1, 1))
    fq = net.op(
        "FakeQuantize", "opset1", "fq", {"levels": "256"}, [x, lo, hi, lo, hi], [(shape, "f32")]
    )
    out = [1, 4, 4, 4]
    attrs = {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0"}
    attrs["exclude-pad"] = "true"
    pool = net.op("AvgPool", "opset1", "pool", attrs, [fq[0]], [(out, "f32")])
    lo2, hi2 = net.const("lo2", np.float32(-1.5)), net.const("hi2", np.float32(1.25))
    fq2 = net.op(
        "FakeQuantize",
        "opset1",
        "fq2",
        {"levels": "256"},
        [pool[0], lo2, hi2, lo2, hi2],
        [(out, "f32")],
    )
    net.result("y", fq2[0])
    path = save(net, tmp_path)
    x_in = float32_specials(np.random.default_rng(7), 256).reshape(shape)
    expected = irpool.run(path, x_in).outputs
    f = irpool.compile_model(path, threads=1)
    for _ in range(2):
        got = f(x_in)
        assert exact(got["y"], expected["y"])


def test_a_constant_first_keeps_the_program_on_arrays(tmp_path: Path) -> None:
    """Multiply(Const, x) before a MaxPool: numpy's product on plain arrays (the kernel takes
    the computed tensor first only), the same bits as irpool.run."""
    shape = [1, 3, 6, 6]
    net = NetBuilder("first")
    x = net.parameter("x", shape)
    c = net.const("c", np.asarray([0.5, -2.0, 3.0], np.float32).reshape(1, 3, 1, 1))
    mul = net.op("Multiply", "opset1", "mul", {}, [c, x], [(shape, "f32")])
    attrs = {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0"}
    pool = net.op("MaxPool", "opset1", "pool", attrs, [mul[0]], [([1, 3, 3, 3], "f32")])
    net.result("y", pool[0])
    path = save(net, tmp_path)
    x_in = float32_specials(np.random.default_rng(8), 108).reshape(shape)
    f = irpool.compile_model(path, threads=1)
    for _ in range(2):
        assert exact(f(x_in)["y"], irpool.run(path, x_in).outputs["y"])
    program = f._last[1] if f._last else None
    assert program is not None and program.arrays is not None
    assert [(g.type, g.path) for g in f.glue] == [("Multiply", "numpy")]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(1, 9), min_size=2, max_size=5),
    st.integers(0, 4),
    st.sampled_from([2, 3, 16, 255, 256]),
    st.booleans(),
    st.sampled_from([None, False, True]),
    st.integers(0, 2**32 - 1),
)
def test_fake_quantize_sweep(
    dims: list[int], axis: int, levels: int, fused: bool, fma_out: Any, seed: int
) -> None:
    """Random shapes, constants per tensor or along one axis (inverted ranges, tiny and huge
    ones), random float32 bit patterns: lpt.cpu_fake_quantize's bits wherever the kernel
    serves."""
    from irpool import lpt
    from irpool.kernel.glue_compiled import fake_quantize

    rng = np.random.default_rng(seed)
    shape = tuple(dims)
    along = axis % len(shape)
    cshape = tuple(d if k == along else 1 for k, d in enumerate(shape))
    scale = np.float32(10.0 ** rng.integers(-6, 6))
    ranges = [(rng.standard_normal(cshape) * scale).astype(np.float32) for _ in range(4)]
    p = lpt.fq_params(levels, ranges, len(shape))
    x = float32_specials(rng, int(np.prod(shape))).reshape(shape)
    near = rng.random(shape) < 0.7  # most values near the ranges
    x[near] = (rng.standard_normal(int(near.sum())) * scale * 2).astype(np.float32)
    assert exact(fake_quantize(x, p, fused, fma_out), lpt.cpu_fake_quantize(x, p, fused, fma_out))
