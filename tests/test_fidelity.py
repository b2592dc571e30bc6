"""The runtimes' edge rules, property by property (issue 19): random special values, element types,
chains and attribute spellings, each run by irpool and by the runtime itself.

The truth is always the runtime: openvino 2026.4.1's CPU plugin (INFERENCE_PRECISION_HINT=f32)
for IR nets, onnxruntime for ONNX models, torch for the `torch` convention.  A case matches when
every output has the runtime's dtype, shape and bits (NaN equal to NaN), or when both refuse.
Each class of docs/semantics.md has one test; the examples per test are few, so that the file
stays well under two minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool, sweep
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx_helpers import one_node_model

from irpool.errors import IrpoolError
from irpool.frontends.ir_writer import NetBuilder
from irpool.frontends.ir_xml import load
from irpool.model import bfloat16, numpy_dtype
from irpool.oracles import openvino_rt
from irpool.run import run_graph

pytestmark = pytest.mark.oracle

BF16 = bfloat16()
FLOATS = ["f64", "f32", "f16", "bf16"]
INTEGERS = ["i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8"]
TYPES = FLOATS + INTEGERS + ["boolean"]
SCALE = int(os.environ.get("IRPOOL_FIDELITY_SCALE", "1"))
"""More examples per test (IRPOOL_FIDELITY_SCALE=20 for a long campaign while developing)."""


def examples(full: int) -> int:
    """Examples of a property: `full` under IRPOOL_SLOW=1, a fifth of it by default."""
    return sweep(quick=max(10, full // 5), full=full) * SCALE


FAST = settings(
    max_examples=examples(40),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

SPECIAL = [
    float("nan"),
    float("inf"),
    -float("inf"),
    0.0,
    -0.0,
    1e-40,
    -9.18e-41,
    1.4e-45,
    5.9e-39,
    3e9,
    -3e9,
    2147483520.0,
    2147483648.0,
    -2147483904.0,
    255.7,
    256.0,
    300.0,
    -129.0,
    -2.5,
    2.5,
    0.5,
    65504.0,
    65520.0,
    70000.0,
    131072.0,
    1e20,
    1e300,
    -1e300,
    3.4028235e38,
    3.3961776e38,
    1.00390625,
    1.01171875,
]


def _values(draw: st.DrawFn, et: str, count: int) -> np.ndarray:
    """`count` values of type `et`: special values, type extremes and random bit patterns."""
    dtype = numpy_dtype(et)
    if et in FLOATS:
        picked = draw(st.lists(st.sampled_from(SPECIAL), min_size=count, max_size=count))
        with np.errstate(all="ignore"):
            array = np.array(picked, dtype=np.float64)
            array = array.astype(np.float32).astype(dtype) if et == "bf16" else array.astype(dtype)
        bits = draw(st.lists(st.integers(0, 2**64 - 1), min_size=count, max_size=count))
        mask = draw(st.lists(st.booleans(), min_size=count, max_size=count))
        width = dtype.itemsize * 8
        raw = np.array([b % (1 << width) for b in bits], dtype=np.uint64)
        random = raw.astype(f"u{dtype.itemsize}").view(dtype)
        return np.where(np.array(mask), random, array).astype(dtype)
    if et == "boolean":
        return np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)))
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, -1, 2**24 + 1, 2**31 - 1, -(2**31), 3_000_000_000]
    edges = [v for v in edges if info.min <= v <= info.max]
    picked = draw(
        st.lists(
            st.one_of(st.sampled_from(edges), st.integers(int(info.min), int(info.max))),
            min_size=count,
            max_size=count,
        )
    )
    return np.array(picked, dtype=np.int64 if et != "u64" else np.uint64).astype(dtype)


def openvino_outputs(xml: str, weights: bytes, inputs: dict[str, np.ndarray]) -> Any:
    """openvino's outputs in Result order, or the first line of its refusal."""
    try:
        compiled = openvino_rt.compile_model(openvino_rt.read_xml(xml, weights))
        return openvino_rt.infer(compiled, inputs)
    except Exception as e:  # openvino refuses the model
        return str(e).strip().splitlines()[0]


def irpool_outputs(
    tmp_path: Path, xml: str, weights: bytes, inputs: dict[str, np.ndarray], **kw: Any
) -> Any:
    """irpool's outputs in Result order, or its refusal."""
    path = tmp_path / "net.xml"
    path.write_text(xml)
    (tmp_path / "net.bin").write_bytes(weights)
    try:
        result = run_graph(load(str(path)), inputs, **kw)
    except IrpoolError as e:
        return e.message
    return list(result.outputs.values())


def assert_same_as_openvino(tmp_path: Path, case: tuple[str, bytes, dict[str, Any]]) -> None:
    """irpool and openvino agree on the net (IR text, weights, inputs) of `case`."""
    xml, weights, inputs = case
    why = agree(
        irpool_outputs(tmp_path, xml, weights, inputs), openvino_outputs(xml, weights, inputs)
    )
    assert why is None, why + "\n" + xml


def same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    """dtype, shape and bits equal; NaN equals NaN whatever its payload."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if expected.dtype.kind in "biu":
        return bool(np.array_equal(got, expected))
    g = np.ascontiguousarray(got)
    e = np.ascontiguousarray(expected)
    bits = f"u{e.dtype.itemsize}"
    nan = np.isnan(g.astype(np.float64)) & np.isnan(e.astype(np.float64))
    return bool(np.all((g.view(bits) == e.view(bits)) | nan))


def agree(ours: Any, theirs: Any) -> str | None:
    """None when irpool and the runtime agree (both refuse, or the same bits), else why not."""
    if isinstance(theirs, str) or isinstance(ours, str):
        if isinstance(theirs, str) and isinstance(ours, str):
            return None
        return f"irpool: {ours if isinstance(ours, str) else 'ran'}; runtime: {theirs}"
    for k, (g, e) in enumerate(zip(ours, theirs, strict=True)):
        if not same_bits(g, e):
            return f"output {k}: irpool {g.dtype} {g.ravel()[:8]} vs {e.dtype} {e.ravel()[:8]}"
    return None


POOLS = {
    "max1": (
        "MaxPool",
        "opset1",
        {"strides": "1", "pads_begin": "0", "pads_end": "0", "kernel": "1"},
    ),
    "max2": (
        "MaxPool",
        "opset1",
        {"strides": "2", "pads_begin": "0", "pads_end": "0", "kernel": "2"},
    ),
    "avg1": (
        "AvgPool",
        "opset1",
        {"kernel": "1", "strides": "1", "pads_begin": "0", "pads_end": "0", "exclude-pad": "true"},
    ),
    "avg2": (
        "AvgPool",
        "opset1",
        {"kernel": "2", "strides": "2", "pads_begin": "0", "pads_end": "0", "exclude-pad": "true"},
    ),
}


def _out_len(n: int, step: str) -> int:
    return n // 2 if step.endswith("2") else n


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, bytes, dict[str, np.ndarray]]:
    """Parameter or Const of any type, then 1-4 Converts and pooling layers, Results on the
    last tensor (and sometimes on one in between); IR v10 or v11."""
    src = draw(st.sampled_from(TYPES))
    constant = draw(st.booleans())
    v10 = draw(st.sampled_from([False, False, False, True]))
    channels = draw(st.sampled_from([1, 3]))
    steps = draw(
        st.lists(
            st.one_of(st.sampled_from(TYPES), st.sampled_from(sorted(POOLS))),
            min_size=1,
            max_size=4,
        )
    )
    n = 8
    net = NetBuilder("chain", 10 if v10 else 11)
    values = _values(draw, src, channels * n).reshape(1, channels, n)
    inputs: dict[str, np.ndarray] = {}
    if constant:
        cur = net.const("k", values, src)
    else:
        cur = net.parameter("x", (1, channels, n), src)
        inputs["x"] = values
    et = src
    extra = draw(st.integers(0, len(steps) - 1))
    for i, step in enumerate(steps):
        if step in POOLS:
            family, version, data = POOLS[step]
            n = _out_len(n, step)
            (cur,) = net.op(family, version, f"p{i}", data, [cur], [((1, channels, n), et)])
        else:
            et = step
            (cur,) = net.op(
                "Convert",
                "opset1",
                f"c{i}",
                {"destination_type": et},
                [cur],
                [((1, channels, n), et)],
            )
        if i == extra and i != len(steps) - 1:
            net.result(f"r{i}", cur)
    net.result("out", cur)
    return net.xml(), net.bin(), inputs


@settings(FAST, max_examples=examples(200))
@given(case=chains())
def test_convert_and_held_precision_chains(ov: ModuleType, tmp_path: Path, case: Any) -> None:
    """Classes 1-3 and 7: Convert between all 13 types (float -> integer, to bf16, f64 -> f32),
    f16 held in f32, constants folded, IR v10 retyping, against openvino."""
    assert_same_as_openvino(tmp_path, case)


REGRESSIONS = [
    ("f16", ["max1", "i32"], [np.inf, -np.inf, 65504, 1, np.nan, 2, 3, 4]),
    ("f16", ["i32"], [np.inf, -np.inf, 65504, 1, np.nan, 2, 3, 4]),
    ("bf16", ["f16", "avg2"], [131072, -130560, 70000, 70000, 65519, 1, 2, 3]),
    ("f64", ["avg1", "i32"], [np.inf, 1e300, -1e300, 3e9, np.nan, 2.5, -7.5, 1.0]),
    ("f64", ["i8"], [np.inf, 1e300, -1e300, 300, np.nan, 2.5, -7.5, 1.0]),
    ("f64", ["f64"], [np.inf, 1e300, 1e-320, -0.0, np.nan, 2.5, -7.5, 1.0]),
    ("i64", ["i64"], [-(2**63), 2**40 + 7, -(2**33) - 1, 5, 0, 1, 2, 3]),
    ("f32", ["avg2", "i32"], [np.nan, 1, np.inf, 5, -np.inf, 7, 3e9, 1]),
    ("f32", ["f16", "f32"], [131072, -130560, 70000, 1e-8, 65519, 1, 2, 3]),
    ("i32", ["f16", "max2", "i32"], [2**31 - 1, -(2**31), 70000, 65519, 100000, 3, 2**24 + 1, 5]),
    ("f32", ["bf16"], [1e-40, -9.18e-41, 3e9, np.inf, np.nan, 1.00390625, 1.01171875, 0]),
    ("u32", ["bf16"], [3_000_000_000, 7, 0, 2**31, 1, 2, 3, 4]),
]
"""Chains from issue 19 and from bugs the property test found: each must stay right."""


@pytest.mark.parametrize(("src", "steps", "values"), REGRESSIONS)
def test_chain_regressions(
    ov: ModuleType, tmp_path: Path, src: str, steps: list[str], values: list[float]
) -> None:
    net = NetBuilder("chain")
    with np.errstate(all="ignore"):
        x = np.array(values, dtype=np.float64 if src in FLOATS else np.int64)
        if src == "bf16":
            x = x.astype(np.float32)
        x = x.astype(numpy_dtype(src)).reshape(1, 1, 8)
    cur = net.parameter("x", x.shape, src)
    n, et = 8, src
    for i, step in enumerate(steps):
        if step in POOLS:
            family, version, data = POOLS[step]
            n = _out_len(n, step)
            (cur,) = net.op(family, version, f"p{i}", data, [cur], [((1, 1, n), et)])
        else:
            et = step
            data = {"destination_type": et}
            (cur,) = net.op("Convert", "opset1", f"c{i}", data, [cur], [((1, 1, n), et)])
    net.result("out", cur)
    xml = net.xml()
    ours = irpool_outputs(tmp_path, xml, b"", {"x": x})
    why = agree(ours, openvino_outputs(xml, b"", {"x": x}))
    assert why is None, why


@st.composite
def integer_layers(draw: st.DrawFn) -> tuple[str, bytes, dict[str, np.ndarray]]:
    """An integer pooling layer of 1 or 3 channels (maybe constant, maybe dilated or with an
    empty window), maybe followed by a Convert or another pooling layer."""
    et = draw(st.sampled_from(["i32", "i64", "u8", "i8", "i16", "u32"]))
    channels = draw(st.sampled_from([1, 3]))
    family = draw(st.sampled_from(["AvgPool", "MaxPool"]))
    version = draw(
        st.sampled_from(["opset1", "opset14", "opset16" if family == "AvgPool" else "opset8"])
    )
    dilated = version in ("opset16", "opset8") and draw(st.booleans())
    empty = draw(st.booleans())
    data = {
        "kernel": "2",
        "strides": "2" if not dilated else "1",
        "pads_begin": "0",
        "pads_end": "1" if empty else "0",
        "rounding_type": "ceil" if empty else "floor",
    }
    if family == "AvgPool":
        data["exclude-pad"] = "true"
    if version in ("opset16", "opset8"):
        data["dilations"] = "2" if dilated else "1"
    n = 7
    values = _values(draw, et, channels * n).reshape(1, channels, n)
    net = NetBuilder("ints")
    constant = draw(st.booleans())
    inputs: dict[str, np.ndarray] = {}
    cur = net.const("k", values, et) if constant else net.parameter("x", values.shape, et)
    if not constant:
        inputs["x"] = values
    outs: list[tuple[Any, str]] = [((1, channels, -1), et)]
    if family == "MaxPool" and version != "opset1":
        data.update(index_element_type="i64", axis="0")
        outs.append(((1, channels, -1), "i64"))
    refs = net.op(family, version, "pool", data, [cur], outs)
    tail = draw(st.sampled_from(["none", "f32", "i8", "i32", "max"]))
    cur = refs[0]
    if tail == "max":
        (cur,) = net.op(
            "MaxPool", "opset1", "max", POOLS["max1"][2], [cur], [((1, channels, -1), et)]
        )
    elif tail != "none":
        (cur,) = net.op(
            "Convert",
            "opset1",
            "conv",
            {"destination_type": tail},
            [cur],
            [((1, channels, -1), tail)],
        )
    net.result("out", cur)
    return net.xml(), net.bin(), inputs


@settings(FAST, max_examples=examples(150))
@given(case=integer_layers())
def test_integer_pooling(ov: ModuleType, tmp_path: Path, case: Any) -> None:
    """Class 4: integer layers in float32 or in integers, the f32 -> i32 saturation, folded
    constants, the u8 blocked-layout NaN and the layers the plugin has no kernel for."""
    assert_same_as_openvino(tmp_path, case)


@st.composite
def bf16_max_layers(draw: st.DrawFn) -> tuple[str, bytes, dict[str, np.ndarray]]:
    version = draw(st.sampled_from(["opset1", "opset8", "opset14"]))
    rank = draw(st.integers(1, 2))
    channels = draw(st.sampled_from([1, 2, 3]))
    sizes = [draw(st.integers(3, 7)) for _ in range(rank)]
    kernel = [draw(st.integers(1, 3)) for _ in range(rank)]
    dil = [draw(st.integers(1, 2)) if version != "opset1" else 1 for _ in range(rank)]
    pb = [draw(st.integers(0, k - 1)) for k in kernel]
    pe = [draw(st.integers(0, k)) for k in kernel]
    rounding = draw(
        st.sampled_from(["floor", "ceil"] + (["ceil_torch"] if version == "opset14" else []))
    )
    data = {
        "strides": ",".join(str(draw(st.integers(1, 2))) for _ in range(rank)),
        "pads_begin": ",".join(map(str, pb)),
        "pads_end": ",".join(map(str, pe)),
        "kernel": ",".join(map(str, kernel)),
        "rounding_type": rounding,
    }
    outs: list[tuple[Any, str]] = [((-1,) * (rank + 2), "bf16")]
    if version != "opset1":
        data.update(dilations=",".join(map(str, dil)), index_element_type="i32", axis="0")
        outs.append(((-1,) * (rank + 2), "i32"))
    assert BF16 is not None
    shape = (1, channels, *sizes)
    x = (
        np.array(
            draw(
                st.lists(
                    st.sampled_from([-np.inf, np.nan, -3e38, 1.0, -1.0, 0.0, 1e-40]),
                    min_size=int(np.prod(shape)),
                    max_size=int(np.prod(shape)),
                )
            ),
            dtype=np.float32,
        )
        .reshape(shape)
        .astype(BF16)
    )
    net = NetBuilder("bf16")
    constant = draw(st.booleans())
    cur = net.const("k", x, "bf16") if constant else net.parameter("x", shape, "bf16")
    refs = net.op("MaxPool", version, "pool", data, [cur], outs)
    net.result("out", refs[0])
    return net.xml(), net.bin(), {} if constant else {"x": x}


@settings(FAST, max_examples=examples(100))
@given(case=bf16_max_layers())
def test_bf16_max_start(ov: ModuleType, tmp_path: Path, case: Any) -> None:
    """Class 5: where a bfloat16 max starts (reference kernel, jit kernel, folded), subnormals
    flushed, NaN never winning."""
    assert_same_as_openvino(tmp_path, case)


@st.composite
def plane_means(draw: st.DrawFn) -> tuple[str, bytes, dict[str, np.ndarray]]:
    """A global AvgPool-1 (the kernel is the whole plane) over f32, f16 or bf16 planes of
    uniform values, of values of a wide range, or of ones with three cells 2**24."""
    et = draw(st.sampled_from(["f32", "f16", "bf16"]))
    planes = draw(st.sampled_from([(1, 1), (1, 1), (2, 1), (1, 3)]))
    sizes = draw(
        st.sampled_from([(9,), (64,), (1000,), (4096,), (7, 9), (32, 32), (64, 64), (4, 5, 6)])
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["uniform", "wide", "pow2"]))
    shape = (*planes, *sizes)
    if kind == "uniform":
        x = rng.random(shape)
    elif kind == "wide":
        x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 6, shape)
    else:
        x = np.ones(shape)
        x.reshape(-1)[rng.integers(0, x.size, 3)] = 2.0**24
    with np.errstate(over="ignore"):
        x = x.astype(np.float32).astype(numpy_dtype(et))
    net = NetBuilder("gap")
    p = net.parameter("x", shape, et)
    ones = ",".join("1" for _ in sizes)
    data = {
        "kernel": ",".join(map(str, sizes)),
        "strides": ones,
        "pads_begin": ",".join("0" for _ in sizes),
        "pads_end": ",".join("0" for _ in sizes),
        "exclude-pad": "true",
    }
    (y,) = net.op("AvgPool", "opset1", "gap", data, [p], [((*planes, *(1 for _ in sizes)), et)])
    net.result("out", y)
    return net.xml(), b"", {"x": x}


@FAST
@given(case=plane_means())
def test_global_mean_order(ov: ModuleType, tmp_path: Path, case: Any) -> None:
    """Class 6: a mean over a whole plane is openvino's sequential float32 sum, bit for bit."""
    assert_same_as_openvino(tmp_path, case)


ITEM = st.one_of(
    st.from_regex(r"\A[ \t]?0?[1-9](\.[0-9]|e0|_0|x|\.5| 3)?\Z"),
    st.sampled_from(["+2", "- 2", "--2", " ", "", "a", "2,", "\u0662", "9223372036854775808"]),
)
"""One item of a kernel attribute, as a user might spell it (values >= 1: the reader, not the
op's validation, decides)."""


@settings(FAST, max_examples=examples(200))
@given(
    kernel=st.lists(ITEM, min_size=2, max_size=2),
    trailing=st.booleans(),
    exclude=st.sampled_from(["true", "1", "0", "", "yes", "FALSE", "False ", " true", "00", "off"]),
    auto_pad=st.sampled_from(
        [
            "explicit",
            "EXPLICIT",
            "notset",
            "NOTSET",
            "explicit ",
            " valid",
            "Same_Upper",
            "same-upper",
        ]
    ),
    rounding=st.sampled_from(["floor", "CEIL", "ceil ", "round", "Floor"]),
    element=st.sampled_from(["f32", "F32", "FP32", "f32 ", "float32"]),
)
def test_attribute_spellings(
    ov: ModuleType,
    tmp_path: Path,
    kernel: list[str],
    trailing: bool,
    exclude: str,
    auto_pad: str,
    rounding: str,
    element: str,
) -> None:
    """Class 8: irpool accepts exactly the attribute strings openvino's reader accepts and reads
    the same values (read_model with a dynamic input shape, so only the reader decides)."""
    text = ",".join(kernel) + ("," if trailing else "")
    data = {
        "kernel": text,
        "strides": "1,1",
        "pads_begin": "0,0",
        "pads_end": "0,0",
        "exclude-pad": exclude,
        "auto_pad": auto_pad,
        "rounding_type": rounding,
    }
    net = NetBuilder("spell")
    p = net.parameter("x", "?,?,?,?", "f32")
    (y,) = net.op("AvgPool", "opset1", "pool", data, [p], [((-1, -1, -1, -1), "f32")])
    net.result("out", y)
    xml = net.xml().replace('element_type="f32"', f'element_type="{element}"', 1)
    try:
        model = openvino_rt.read_xml(xml)
        op = next(o for o in model.get_ordered_ops() if o.get_type_name() == "AvgPool")
        attrs = op.get_attributes()
        theirs: Any = (
            tuple(int(v) for v in attrs["kernel"]),
            bool(attrs["exclude-pad"]),
            str(attrs["auto_pad"]).lower(),
            str(attrs["rounding_type"]).lower(),
        )
    except Exception:  # the reader refuses the file
        theirs = None
    path = tmp_path / "spell.xml"
    path.write_text(xml)
    from irpool.ops import bind
    from irpool.run import _element_type

    try:
        graph = load(str(path))
        _element_type(graph.layers[0])
        params = bind(graph, graph.layers[1]).params
        ours: Any = (
            params.window,
            not params.count_pad,
            params.auto_pad,
            params.rounding,
        )
    except IrpoolError:
        ours = None
    if theirs is None or ours is None:
        assert theirs is None and ours is None, (xml, ours, theirs)
        return
    assert ours[:2] == theirs[:2] and ours[3] == theirs[3], (ours, theirs)
    assert ours[2] == theirs[2].replace("notset", "explicit"), (ours, theirs)


@FAST
@given(
    op=st.sampled_from([("MaxPool", 12), ("MaxPool", 8), ("AveragePool", 11), ("AveragePool", 19)]),
    shape=st.sampled_from(
        [(0, 2, 5, 5), (0, 1, 3, 4), (1, 0, 4, 4), (1, 2, 0, 4), (2, 1, 4, 0), (0, 0, 4, 4)]
    ),
    pads=st.sampled_from([[0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0]]),
)
def test_onnx_zero_dims(
    ort: ModuleType,
    onnx: ModuleType,
    tmp_path: Path,
    op: tuple[str, int],
    shape: tuple[int, ...],
    pads: list[int],
) -> None:
    """Class 9: onnxruntime runs N = 0 and refuses the other zero dims; irpool does the same."""
    from onnx import TensorProto, helper

    name, opset = op
    node = helper.make_node(name, ["X"], ["Y"], kernel_shape=[2, 2], pads=pads)
    f32 = TensorProto.FLOAT
    model = one_node_model(node, [("X", f32, list(shape))], [("Y", f32, None)], opset)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    x = np.zeros(shape, np.float32)
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        theirs: Any = session.run(None, {"X": x})
    except Exception as e:  # onnxruntime refuses
        theirs = str(e)
    from irpool.api import load as load_any

    try:
        ours: Any = list(run_graph(load_any(str(path)), {"X": x}).outputs.values())
    except IrpoolError as e:
        ours = e.message
    assert agree(ours, theirs) is None, (ours, theirs)


@FAST
@given(
    dtype=st.sampled_from([np.uint8, np.int8]),
    y_scale=st.sampled_from(
        [0.0, float("nan"), float("inf"), 1e-12, 1e-9, 2e-10, 1e-7, -0.5, 0.25]
    ),
    x_scale=st.sampled_from([1.0, 1e12, 0.1]),
    channels_last=st.integers(0, 1),
    seed=st.integers(0, 1000),
)
def test_qlinear_requantisation(
    ort: ModuleType,
    onnx: ModuleType,
    tmp_path: Path,
    dtype: Any,
    y_scale: float,
    x_scale: float,
    channels_last: int,
    seed: int,
) -> None:
    """Class 9: QLinearAveragePool's truncating int32 conversion (NaN, inf and huge ratios give
    the type's minimum), against onnxruntime."""
    from onnx import TensorProto, helper

    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    x = np.random.default_rng(seed).integers(0, 120, (1, 2, 4, 4)).astype(dtype)
    if channels_last:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    inits = [
        helper.make_tensor("xs", TensorProto.FLOAT, [], [x_scale]),
        helper.make_tensor("xz", elem, [], [3]),
        helper.make_tensor("ys", TensorProto.FLOAT, [], [y_scale]),
        helper.make_tensor("yz", elem, [], [7]),
    ]
    node = helper.make_node(
        "QLinearAveragePool",
        ["X", "xs", "xz", "ys", "yz"],
        ["Y"],
        domain="com.microsoft",
        kernel_shape=[2, 2],
        strides=[2, 2],
        channels_last=channels_last,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", elem, list(x.shape))],
        [helper.make_tensor_value_info("Y", elem, None)],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 12), helper.make_opsetid("com.microsoft", 1)],
    )
    path = tmp_path / "q.onnx"
    path.write_bytes(model.SerializeToString())
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"X": x})
    from irpool.api import load as load_any

    ours = list(run_graph(load_any(str(path)), {"X": x}).outputs.values())
    assert agree(ours, theirs) is None, (ours, theirs)


@settings(FAST, max_examples=examples(300))
@given(
    rank=st.integers(1, 3),
    kind=st.sampled_from(["max", "avg"]),
    indices=st.booleans(),
    ceil=st.booleans(),
    data=st.data(),
)
def test_torch_convention(
    torch: ModuleType, rank: int, kind: str, indices: bool, ceil: bool, data: st.DataObject
) -> None:
    """Class 10: torch's refusals (its order and words), its output sizes (windows larger than
    the padded input computed) and its index of an empty max window, against torch."""
    import torch.nn.functional as F

    from irpool.geometry import plan
    from irpool.kernel import pool
    from irpool.ops import torch as torch_ops

    sizes = tuple(data.draw(st.integers(0 if rank == 1 else 1, 5)) for _ in range(rank))
    k = tuple(data.draw(st.integers(1, 4)) for _ in range(rank))
    s = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    p = tuple(data.draw(st.integers(0, 2)) for _ in range(rank))
    d = tuple(data.draw(st.integers(1, 3)) for _ in range(rank)) if kind == "max" else (1,) * rank
    batch = data.draw(st.sampled_from([1, 1, 0]))
    shape = (batch, 2, *sizes)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if x.size:
        x.reshape(-1)[:: max(1, x.size // 3)] = np.nan
    function = f"{kind}_pool{rank}d"
    returns = indices and kind == "max"
    t = torch.from_numpy(x)
    try:
        if kind == "max":
            r = getattr(F, function)(t, k, s, p, d, ceil_mode=ceil, return_indices=returns)
            theirs: Any = [r[0].numpy(), r[1].numpy()] if returns else [r.numpy()]
        else:
            r = getattr(F, function)(t, k, s, p, ceil_mode=ceil, count_include_pad=True)
            theirs = [r.numpy()]
    except Exception as e:  # torch refuses
        theirs = next(ln for ln in str(e).splitlines() if ln.strip())
    kwargs: dict[str, Any] = {"stride": s, "padding": p, "ceil_mode": ceil}
    if kind == "max":
        kwargs.update(dilation=d, return_indices=returns)
    try:
        params = torch_ops.params(function, k, **kwargs)
        values, idx = pool(x, plan(params, shape, "torch", returns, dtype=x.dtype))
        ours: Any = [values] + ([idx] if returns and idx is not None else [])
    except IrpoolError as e:
        ours = e.message
    if isinstance(theirs, str):
        assert isinstance(ours, str) and theirs in ours, (ours, theirs)
        return
    assert agree(ours, theirs) is None, (ours, theirs)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return irpool(*args, env=dict(os.environ, PYTHONWARNINGS="default"), timeout=120)


def _pool_net(tmp_path: Path, et: str = "f32") -> Path:
    net = NetBuilder("cast")
    p = net.parameter("x", (1, 1, 4, 4), et)
    data = {
        "kernel": "2,2",
        "strides": "2,2",
        "pads_begin": "0,0",
        "pads_end": "0,0",
        "exclude-pad": "true",
    }
    (y,) = net.op("AvgPool", "opset1", "pool", data, [p], [((1, 1, 2, 2), et)])
    net.result("out", y)
    path = tmp_path / "net.xml"
    path.write_text(net.xml())
    return path


def test_cast_numeric_only(ov: ModuleType, tmp_path: Path) -> None:
    """Class 11: --cast converts numbers as numpy does (openvino's answer on the converted array,
    no warning on stderr) and refuses every other kind of array with one line naming it."""
    model = _pool_net(tmp_path)
    numeric = np.full((1, 1, 4, 4), 1e300)  # beyond float32: numpy gives inf, silently
    np.save(tmp_path / "f64.npy", numeric)
    o = _cli(
        "run", str(model), "-i", str(tmp_path / "f64.npy"), "-o", str(tmp_path / "o.npz"), "--cast"
    )
    assert o.returncode == 0 and o.stderr == "", o.stderr
    got = np.load(tmp_path / "o.npz")["out"]
    with np.errstate(over="ignore"):
        as_f32 = numeric.astype(np.float32)
    (expected,) = openvino_outputs(model.read_text(), b"", {"x": as_f32})
    assert same_bits(got, expected)
    bad = {
        "void": np.zeros((1, 1, 4, 4), np.uint16).view("V2"),
        "str": np.array(["1"] * 16).reshape(1, 1, 4, 4),
        "bytes": np.array([b"1"] * 16).reshape(1, 1, 4, 4),
        "datetime": np.zeros((1, 1, 4, 4), "datetime64[s]"),
        "timedelta": np.zeros((1, 1, 4, 4), "timedelta64[ms]"),
        "struct": np.zeros((1, 1, 4, 4), [("a", "f4"), ("b", "i4")]),
    }
    for name, array in bad.items():
        np.save(tmp_path / f"{name}.npy", array, allow_pickle=False)
        o = _cli(
            "run",
            str(model),
            "-i",
            str(tmp_path / f"{name}.npy"),
            "-o",
            str(tmp_path / "o.npz"),
            "--cast",
            "--force",
        )
        lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
        assert o.returncode == 2 and len(lines) == 1, (name, o.stderr)
        assert f"{name}.npy" in lines[0] and "not a numeric array" in lines[0], lines[0]


def test_compare_bf16_maxpool_with_unused_indices(ov: ModuleType, tmp_path: Path) -> None:
    """Class 12: openvino runs a bfloat16 MaxPool-8/14 whose indices are unused; compare probes
    its values only and says the indices were not compared."""
    assert BF16 is not None
    from irpool.compare import compare_model

    for version, dilation in (("opset8", "2,2"), ("opset14", "1,1")):
        net = NetBuilder("bf16")
        p = net.parameter("x", (1, 3, 6, 6), "bf16")
        data = {
            "strides": "1,1",
            "dilations": dilation,
            "pads_begin": "0,0",
            "pads_end": "0,0",
            "kernel": "2,2",
            "index_element_type": "i64",
            "axis": "0",
        }
        refs = net.op(
            "MaxPool", version, "pool", data, [p], [((-1,) * 4, "bf16"), ((-1,) * 4, "i64")]
        )
        net.result("out", refs[0])
        path = tmp_path / f"{version}.xml"
        path.write_text(net.xml())
        x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32).astype(BF16)
        report = compare_model(load(str(path)), {"x": x})
        (layer,) = report.layers
        assert layer.passed and [o.name for o in layer.outputs] == ["values"]
        assert any("indices not compared" in n for n in layer.notes)


def test_error_places_and_encodings(ov: ModuleType, tmp_path: Path) -> None:
    """Class 13: a wrong .npy is named; an unknown declared encoding is read as UTF-8, as
    openvino reads it (both run); a dim-less input port is a finding."""
    model = _pool_net(tmp_path)
    base = model.read_text()
    x = np.random.default_rng(2).standard_normal((1, 1, 4, 4)).astype(np.float32)
    np.save(tmp_path / "wrong.npy", x.astype(np.float64))
    o = _cli("run", str(model), "-i", str(tmp_path / "wrong.npy"), "-o", str(tmp_path / "o.npz"))
    assert o.returncode == 2 and "wrong.npy" in o.stderr and len(o.stderr.splitlines()) == 1
    for encoding in ("foo", "UTF-16", "x-unknown-enc"):
        text = base.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
        assert f'encoding="{encoding}"' in text
        theirs = openvino_outputs(text, b"", {"x": x})
        assert not isinstance(theirs, str), theirs
        ours = irpool_outputs(tmp_path, text, b"", {"x": x})
        assert agree(ours, theirs) is None
    dimless = re.sub(
        r'(<layer id="1".*?<input>\s*<port id="0"[^>]*>)(.*?)(</port>)',
        r"\1\3",
        base,
        flags=re.S,
    )
    assert dimless != base
    ours = irpool_outputs(tmp_path, dimless, b"", {"x": x})
    assert agree(ours, openvino_outputs(dimless, b"", {"x": x})) is None
    path = tmp_path / "dimless.xml"
    path.write_text(dimless)
    o = _cli("check", str(path))
    assert o.returncode == 1 and "declares a scalar" in o.stdout
