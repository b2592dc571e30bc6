"""Element types openvino's CPU plugin holds in another type (i16, u16, u32, u64 in i32;
boolean in u8) through the pooling families, as the plugin computes them: the data converted
to the held type (u32 and u64 values wrapped to i32), reduced or pooled there, converted back.
openvino's own output is the truth; a boolean reduction is refused as openvino refuses it."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from test_fidelity import agree, irpool_outputs, openvino_outputs

from irpool.frontends.ir_writer import NetBuilder

SHAPE = (1, 2, 3, 5)
NUMPY = {"u32": np.uint32, "u64": np.uint64, "i16": np.int16, "u16": np.uint16}
OPS = ("ReduceSum", "ReduceMax", "ReduceMean", "ReduceL1", "ReduceL2")


def _net(op: str, et: str) -> tuple[str, bytes]:
    net = NetBuilder("dtypes")
    x = net.parameter("x", SHAPE, et)
    if op.startswith("Reduce"):
        axes = net.const("axes", np.array([2, 3], np.int64))
        version = "opset4" if op in ("ReduceL1", "ReduceL2") else "opset1"
        y = net.op(op, version, "r", {"keep_dims": "true"}, [x, axes], [((1, 2, 1, 1), et)])[0]
    else:
        size = net.const("size", np.array([2, 3], np.int64))
        outs = [((1, 2, 2, 3), et)]
        data = {}
        if op == "AdaptiveMaxPool":
            outs.append(((1, 2, 2, 3), "i32"))
            data = {"index_element_type": "i32"}
        y = net.op(op, "opset8", "a", data, [x, size], outs)[0]
    net.result("out", y)
    return net.xml(), net.bin()


def _inputs(et: str, seed: int) -> list[np.ndarray]:
    """Values over the whole range of the type (u32/u64 beyond i32's: wrapped) and small ones."""
    rng = np.random.default_rng(seed)
    t = NUMPY[et]
    if et == "u64":
        wide = rng.integers(0, 2**64 - 1, size=SHAPE, dtype=np.uint64)
    else:
        info = np.iinfo(t)
        wide = rng.integers(int(info.min), int(info.max), size=SHAPE, endpoint=True).astype(t)
    wide.flat[0] = np.iinfo(t).max
    return [wide, rng.integers(0, 50, size=SHAPE).astype(t)]


def _check(tmp_path: Path, op: str, et: str, seed: int = 0) -> None:
    xml, weights = _net(op, et)
    for x in _inputs(et, seed):
        theirs = openvino_outputs(xml, weights, {"x": x})
        assert not isinstance(theirs, str), f"openvino refused {op} on {et}: {theirs}"
        why = agree(irpool_outputs(tmp_path, xml, weights, {"x": x}), theirs)
        assert why is None, f"{op} {et} {x.ravel()[:3]}: {why}"


@pytest.mark.oracle
@pytest.mark.parametrize(
    "op,et",
    [("ReduceSum", "u32"), ("ReduceMax", "u64"), ("ReduceL2", "u16"), ("AdaptiveMaxPool", "i16")],
)
def test_held_types_as_the_plugin_computes_them(
    ov: ModuleType, tmp_path: Path, op: str, et: str
) -> None:
    _check(tmp_path, op, et)


@pytest.mark.oracle
@pytest.mark.slow
@pytest.mark.parametrize(
    "op,et",
    list(itertools.product((*OPS, "AdaptiveAvgPool", "AdaptiveMaxPool"), sorted(NUMPY))),
)
def test_every_family_op_on_every_held_type(
    ov: ModuleType, tmp_path: Path, op: str, et: str
) -> None:
    _check(tmp_path, op, et, seed=1)


@pytest.mark.parametrize("op", OPS)
def test_a_boolean_reduction_is_refused_with_openvinos_words(tmp_path: Path, op: str) -> None:
    xml, weights = _net(op, "boolean")
    x = np.array([True, False] * 15).reshape(SHAPE)
    got = irpool_outputs(tmp_path, xml, weights, {"x": x})
    assert isinstance(got, str) and "Element type of data input must be numeric" in got, got


@pytest.mark.oracle
def test_openvino_refuses_a_boolean_reduction(ov: ModuleType) -> None:
    xml, weights = _net("ReduceSum", "boolean")
    x = np.array([True, False] * 15).reshape(SHAPE)
    assert isinstance(openvino_outputs(xml, weights, {"x": x}), str)
