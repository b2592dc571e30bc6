"""The arithmetic glue NNCF and openvino's converters write around pools (Subtract, Add,
Divide, Maximum, Minimum, Clamp, Negative, and Multiply on integers): each op on a grid of
special values in every element type against openvino's CPU plugin, a NNCF-like
dequantization chain (u8/i8 -> Convert -> Subtract -> Multiply -> pool) run by `irpool run` bit
for bit against openvino, and the one-line refusals of shapes that do not broadcast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from family_helpers import irpool_run, openvino_run, same_bits

from irpool.frontends.ir_writer import NetBuilder

FLOATS = np.array(
    [np.nan, -0.0, 0.0, np.inf, -np.inf, -2.5, 3.0, 1e-3, 1e30, -1e-30, 5e-39, 3e38, 7.0],
    np.float32,
)


def _net(
    path: Path,
    op: str,
    et: str,
    n: int,
    inputs: int,
    data: dict[str, str] | None = None,
) -> str:
    net = NetBuilder("glue")
    ins = [net.parameter(f"x{i}", [n], et) for i in range(inputs)]
    out = net.op(op, "opset1", "op", data or {}, ins, [([n], et)])
    net.result("values", out[0])
    net.save(str(path), force=True)
    return str(path)


def _pairs(values: np.ndarray) -> dict[str, np.ndarray]:
    return {"x0": np.repeat(values, values.size), "x1": np.tile(values, values.size)}


def _agree(path: str, feeds: dict[str, np.ndarray]) -> None:
    got = irpool_run(path, feeds)["values"]  # type: ignore[arg-type]
    want = openvino_run(path, feeds)["values"]
    bad = ~np.isclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True)
    where = [tuple(f[i] for f in feeds.values()) for i in np.flatnonzero(bad)[:4]]
    assert same_bits(got, want), (where, got[bad][:4], want[bad][:4])


BINARY = ["Subtract", "Add", "Multiply", "Divide", "Maximum", "Minimum"]
WIDE = [pytest.param(et, marks=pytest.mark.slow) for et in ("i32", "i64")]
"""i32 and i64 grids: ~0.1 s each, run with IRPOOL_SLOW=1 (the 8-bit ones by default)."""


HALVES = np.array(
    [np.nan, -0.0, 0.0, np.inf, -np.inf, -2.5, 3.0, 1e-3, 65504, -1e-5, 6e-8, 7.0, 0.1], np.float16
)


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["f32", "f16"])
@pytest.mark.parametrize("op", BINARY)
def test_float_binary_special_values(ov: ModuleType, tmp_path: Path, op: str, et: str) -> None:
    """f16 tensors are held in float32 inside the net and rounded at the Result."""
    values = FLOATS if et == "f32" else HALVES
    _agree(_net(tmp_path / "m.xml", op, et, values.size**2, 2), _pairs(values))


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["u8", "i8", *WIDE])
@pytest.mark.parametrize("op", [*BINARY, "Divide-pythondiv"])
def test_integer_binary_edges(ov: ModuleType, tmp_path: Path, op: str, et: str) -> None:
    dtype = np.dtype({"u8": "uint8", "i8": "int8", "i32": "int32", "i64": "int64"}[et])
    info = np.iinfo(dtype)
    edges = [info.min, info.min + 1, -128, -7, -1, 0, 1, 2, 3, 7, 100, 127, 128, 200]
    values = np.array(
        sorted({v for v in [*edges, info.max - 1, info.max] if info.min <= v <= info.max}),
        dtype,
    )
    feeds = _pairs(values)
    data = {"auto_broadcast": "numpy"}
    if op.startswith("Divide"):
        keep = feeds["x1"] != 0  # division by zero is not measured
        feeds = {k: v[keep] for k, v in feeds.items()}
        data["m_pythondiv"] = "true" if op.endswith("pythondiv") else "false"
    n = feeds["x0"].size
    _agree(_net(tmp_path / "m.xml", op.split("-")[0], et, n, 2, data), feeds)


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["f32", "f16", "i8", "i32", "i64"])
def test_negative(ov: ModuleType, tmp_path: Path, et: str) -> None:
    if et in ("f32", "f16"):
        values = FLOATS if et == "f32" else HALVES
    else:
        dtype = np.dtype({"i8": "int8", "i32": "int32", "i64": "int64"}[et])
        info = np.iinfo(dtype)
        values = np.array([info.min, info.min + 1, -7, 0, 5, info.max], dtype)
    _agree(_net(tmp_path / "m.xml", "Negative", et, values.size, 1), {"x0": values})


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["f32", "f16", "u8", "i8", *WIDE])
@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-1.0, 1.0), (2.5, 100.7), (-2.5, 3.5)])
def test_clamp(ov: ModuleType, tmp_path: Path, et: str, bounds: tuple[float, float]) -> None:
    if et in ("f32", "f16"):
        values = FLOATS if et == "f32" else HALVES
    else:
        dtype = np.dtype({"u8": "uint8", "i8": "int8", "i32": "int32", "i64": "int64"}[et])
        info = np.iinfo(dtype)
        raw = [info.min, -7, -3, -2, -1, 0, 1, 2, 3, 4, 7, 100, 101, 200, info.max]
        values = np.array([v for v in raw if info.min <= v <= info.max], dtype)
    data = {"min": repr(bounds[0]), "max": repr(bounds[1])}
    _agree(_net(tmp_path / "m.xml", "Clamp", et, values.size, 1, data), {"x0": values})


def _dequantized_pool(
    path: Path, et: str, pool: str, zero_point: np.ndarray, scale: np.ndarray
) -> str:
    """NNCF's pattern: integer codes -> Convert f32 -> Subtract(zero point) ->
    Multiply(scale) -> pool -> Result."""
    net = NetBuilder("deq")
    x = net.parameter("x", [1, 3, 7, 7], et)
    f = net.op(
        "Convert", "opset1", "cvt", {"destination_type": "f32"}, [x], [([1, 3, 7, 7], "f32")]
    )
    zp = net.const("zp", zero_point)
    sub = net.op(
        "Subtract",
        "opset1",
        "sub",
        {"auto_broadcast": "numpy"},
        [f[0], zp],
        [([1, 3, 7, 7], "f32")],
    )
    sc = net.const("scale", scale)
    mul = net.op(
        "Multiply",
        "opset1",
        "mul",
        {"auto_broadcast": "numpy"},
        [sub[0], sc],
        [([1, 3, 7, 7], "f32")],
    )
    attrs = {
        "strides": "2,2",
        "pads_begin": "1,1",
        "pads_end": "1,1",
        "kernel": "3,3",
        "rounding_type": "ceil",
        "auto_pad": "explicit",
    }
    if pool == "AvgPool":
        attrs["exclude-pad"] = "true"
    out = net.op(pool, "opset1", "pool", attrs, [mul[0]], [([1, 3, 4, 4], "f32")])
    net.result("values", out[0])
    net.save(str(path), force=True)
    return str(path)


@pytest.mark.oracle
@pytest.mark.parametrize("et", ["u8", "i8"])
@pytest.mark.parametrize("pool", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_dequantization_chain_runs_as_openvino(
    ov: ModuleType, tmp_path: Path, et: str, pool: str, per_channel: bool
) -> None:
    rng = np.random.default_rng(7)
    shape = (1, 3, 1, 1) if per_channel else (1, 1, 1, 1)
    low, high = (0, 256) if et == "u8" else (-128, 128)
    zero_point = rng.integers(low, high, shape).astype(np.float32)
    scale = (rng.uniform(0.001, 0.2, shape)).astype(np.float32)
    path = _dequantized_pool(tmp_path / "m.xml", et, pool, zero_point, scale)
    codes = rng.integers(low, high, (1, 3, 7, 7)).astype("uint8" if et == "u8" else "int8")
    got = irpool_run(path, codes)["values"]
    want = openvino_run(path, codes)["values"]
    assert same_bits(got, want)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irpool", *args], capture_output=True, text=True, timeout=120
    )


POOL_2X2 = {
    "strides": "2,2",
    "pads_begin": "0,0",
    "pads_end": "0,0",
    "kernel": "2,2",
    "rounding_type": "floor",
    "auto_pad": "explicit",
}
"""A 2x2 stride-2 pool's attributes (no padding, floor)."""


def _pooled_and_saved(net: NetBuilder, x: object, path: Path) -> str:
    """A 2x2 stride-2 AvgPool-1 of `x` (to [1,2,2,2]) as the net's Result, saved at `path`."""
    attrs = {**POOL_2X2, "exclude-pad": "true"}
    out = net.op("AvgPool", "opset1", "pool", attrs, [x], [([1, 2, 2, 2], "f32")])
    net.result("values", out[0])
    net.save(str(path), force=True)
    return str(path)


def _mismatched(path: Path, broadcast: str) -> str:
    net = NetBuilder("bad")
    x = net.parameter("x", [1, 2, 4, 4], "f32")
    c = net.const("c", np.ones((1, 3, 1, 1), np.float32))
    sub = net.op(
        "Subtract", "opset1", "sub", {"auto_broadcast": broadcast}, [x, c], [([1, 2, 4, 4], "f32")]
    )
    return _pooled_and_saved(net, sub[0], path)


@pytest.mark.parametrize("broadcast", ["numpy", "none"])
def test_shapes_that_do_not_broadcast_are_refused_in_one_line(
    tmp_path: Path, broadcast: str
) -> None:
    path = _mismatched(tmp_path / "m.xml", broadcast)
    done = _cli("run", path, "-o", str(tmp_path / "o.npz"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Subtract" in done.stderr


def _affine(path: Path, ops: tuple[str, ...], const_first: bool, extra_reader: bool) -> str:
    """f32 x -> each op of `ops` with a Const (first where `const_first`, except a
    Subtract's) -> MaxPool -> Result (and, with `extra_reader`, the first op's output as a
    second Result)."""
    rng = np.random.default_rng(11)
    net = NetBuilder("affine")
    shape = [1, 3, 6, 6]
    y = net.parameter("x", shape, "f32")
    first = None
    for k, op in enumerate(ops):
        c = (rng.standard_normal((1, 3, 1, 1)) * 7).astype(np.float32)
        if op == "Multiply":
            c = rng.uniform(0.01, 0.3, (1, 3, 1, 1)).astype(np.float32)
        const = net.const(f"c{k}", c)
        ins = [const, y] if const_first and op != "Subtract" else [y, const]
        y = net.op(op, "opset1", f"op{k}", {"auto_broadcast": "numpy"}, ins, [(shape, "f32")])[0]
        first = first or y
    attrs = dict(POOL_2X2)
    out = net.op("MaxPool", "opset1", "pool", attrs, [y], [([1, 3, 3, 3], "f32")])
    net.result("values", out[0])
    if extra_reader and first is not None:
        net.result("inner", first)
    net.save(str(path), force=True)
    return str(path)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "ops",
    [
        ("Subtract", "Multiply"),
        ("Add", "Multiply"),
        ("Multiply", "Add"),
        ("Subtract", "Multiply", "Add"),
        ("Add", "Multiply", "Add"),
    ],
)
@pytest.mark.parametrize(
    ("const_first", "extra_reader"), [(False, False), (True, False), (False, True)]
)
def test_affine_chains_fold_as_openvino(
    ov: ModuleType, tmp_path: Path, ops: tuple[str, ...], const_first: bool, extra_reader: bool
) -> None:
    """The plugin folds (x -+ c) * s, x * s + c and (x -+ c) * s + b into one fused
    multiply-add when the inner ops have no other reader; irpool matches it either way."""
    path = _affine(tmp_path / "m.xml", ops, const_first, extra_reader)
    x = (np.random.default_rng(5).standard_normal((1, 3, 6, 6)) * 50).astype(np.float32)
    got = irpool_run(path, x)
    want = openvino_run(path, x)
    for name in want:
        assert same_bits(got[name], want[name]), name


def _broadcast_net(path: Path, declared: list[int]) -> str:
    """x [1,2,1,4] - y [1,1,4,1] (numpy broadcasting: [1,2,4,4]) -> AvgPool 2x2."""
    net = NetBuilder("bcast")
    x = net.parameter("x", [1, 2, 1, 4], "f32")
    y = net.parameter("y", [1, 1, 4, 1], "f32")
    sub = net.op(
        "Subtract", "opset1", "sub", {"auto_broadcast": "numpy"}, [x, y], [(declared, "f32")]
    )
    return _pooled_and_saved(net, sub[0], path)


def test_check_infers_broadcast_shapes(tmp_path: Path) -> None:
    from irpool import api

    good = api.check(_broadcast_net(tmp_path / "good.xml", [1, 2, 4, 4]))
    assert good.findings == []
    assert "Subtract" not in {la.type for la in good.inference.unverified}
    # dims the file declares otherwise stand, as for any other layer type; the pool after
    # them is then checked against them (here it finds [1,2,2,3] instead of [1,2,2,2])
    bad = api.check(_broadcast_net(tmp_path / "bad.xml", [1, 2, 4, 6]))
    assert "Subtract" in {la.type for la in bad.inference.unverified}
    assert {(f.kind, f.op) for f in bad.findings} == {("output-dim", "AvgPool")}


@pytest.mark.parametrize("broadcast", ["numpy", "none"])
def test_check_reports_inputs_that_do_not_broadcast(tmp_path: Path, broadcast: str) -> None:
    from irpool import api

    report = api.check(_mismatched(tmp_path / "m.xml", broadcast))
    bad = [f for f in report.findings if f.kind == "broadcast"]
    assert [f.op for f in bad] == ["Subtract"]
    assert "inputs [1,2,4,4] and [1,3,1,1] do not" in bad[0].message


@pytest.mark.oracle
def test_broadcast_of_two_computed_inputs_runs_as_openvino(ov: ModuleType, tmp_path: Path) -> None:
    path = _broadcast_net(tmp_path / "m.xml", [1, 2, 4, 4])
    rng = np.random.default_rng(2)
    feeds = {
        "x": rng.standard_normal((1, 2, 1, 4)).astype(np.float32),
        "y": rng.standard_normal((1, 1, 4, 1)).astype(np.float32),
    }
    got = irpool_run(path, feeds)["values"]  # type: ignore[arg-type]
    assert same_bits(got, openvino_run(path, feeds)["values"])


@pytest.mark.oracle
def test_compare_and_explain_take_a_dequantization_chain(ov: ModuleType, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    zero_point = rng.integers(0, 256, (1, 3, 1, 1)).astype(np.float32)
    scale = rng.uniform(0.001, 0.2, (1, 3, 1, 1)).astype(np.float32)
    path = _dequantized_pool(tmp_path / "m.xml", "u8", "AvgPool", zero_point, scale)
    done = _cli("compare", path)
    assert done.returncode == 0, done.stderr
    assert "0 differ" in done.stdout
    done = _cli("explain", path, "--cell", "1,1")
    assert done.returncode == 0, done.stderr
    assert 'layer "pool" (AvgPool-1)' in done.stdout


@pytest.mark.oracle
@pytest.mark.parametrize("pool", ["AvgPool", "MaxPool"])
def test_compile_model_takes_a_dequantization_chain(
    ov: ModuleType, tmp_path: Path, pool: str
) -> None:
    import irpool

    rng = np.random.default_rng(4)
    zero_point = rng.integers(0, 256, (1, 3, 1, 1)).astype(np.float32)
    scale = rng.uniform(0.001, 0.2, (1, 3, 1, 1)).astype(np.float32)
    path = _dequantized_pool(tmp_path / "m.xml", "u8", pool, zero_point, scale)
    model = irpool.compile_model(path)
    for seed in (0, 1):
        codes = np.random.default_rng(seed).integers(0, 256, (1, 3, 7, 7)).astype(np.uint8)
        got = np.asarray(model(codes)["values"])
        assert same_bits(got, openvino_run(path, codes)["values"])


@pytest.mark.oracle
def test_a_constant_dequantization_is_folded_without_fma(ov: ModuleType, tmp_path: Path) -> None:
    """Const u8 -> Convert -> Subtract -> Multiply is folded when the plugin compiles the
    net, by the reference arithmetic ((w - zp) * s, two roundings), not by a fused node."""
    rng = np.random.default_rng(1)
    shape = [1, 3, 6, 6]
    net = NetBuilder("k")
    x = net.parameter("x", shape, "f32")
    w = net.const("w", rng.integers(0, 256, shape).astype(np.uint8))
    f = net.op("Convert", "opset1", "cvt", {"destination_type": "f32"}, [w], [(shape, "f32")])
    zp = net.const("zp", rng.integers(0, 256, (1, 3, 1, 1)).astype(np.float32))
    numpy = {"auto_broadcast": "numpy"}
    sub = net.op("Subtract", "opset1", "sub", numpy, [f[0], zp], [(shape, "f32")])
    sc = net.const("sc", rng.uniform(0.001, 0.2, (1, 3, 1, 1)).astype(np.float32))
    mul = net.op("Multiply", "opset1", "mul", numpy, [sub[0], sc], [(shape, "f32")])
    add = net.op("Add", "opset1", "add", numpy, [x, mul[0]], [(shape, "f32")])
    attrs = {
        "strides": "1,1",
        "pads_begin": "0,0",
        "pads_end": "0,0",
        "kernel": "1,1",
        "rounding_type": "floor",
        "auto_pad": "explicit",
    }
    out = net.op("MaxPool", "opset1", "pool", attrs, [add[0]], [(shape, "f32")])
    net.result("values", out[0])
    path = str(tmp_path / "m.xml")
    net.save(path, force=True)
    zeros = np.zeros(shape, np.float32)
    assert same_bits(irpool_run(path, zeros)["values"], openvino_run(path, zeros)["values"])
