"""The op registry and the binder: one bind per layer, one plan per layer and input, and the
worked example of docs/architecture.md (a new op version as one registry entry)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irpool
from irpool import cli, geometry
from irpool.frontends.ir_writer import NetBuilder
from irpool.geometry import PoolParams
from irpool.model import Layer
from irpool.ops import REGISTRY
from irpool.ops import binding as binder
from irpool.ops import openvino as ov_ops
from irpool.ops.registry import OpSpec

SAME_SIZE = {"kernel": "3, 3", "strides": "1, 1", "pads_begin": "1, 1", "pads_end": "1, 1"}
"""A 3x3 window, stride 1, pads 1: the output has the input's size."""


def _chain(path: Path, layers: int) -> str:
    """A net of `layers` pooling layers in a row (AvgPool-1 and MaxPool-8 by turns, each
    keeping the 1x3x8x8 shape), written with irpool's IR writer."""
    net = NetBuilder("chain")
    x = net.parameter("x", (1, 3, 8, 8))
    for i in range(layers):
        if i % 2:
            data = {**SAME_SIZE, "dilations": "1, 1", "rounding_type": "floor"}
            outs: list[tuple[list[int], str]] = [([1, 3, 8, 8], "f32"), ([1, 3, 8, 8], "i64")]
            x = net.op("MaxPool", "opset8", f"pool{i}", data, [x], outs)[0]
        else:
            data = {**SAME_SIZE, "exclude-pad": "true", "rounding_type": "floor"}
            x = net.op("AvgPool", "opset1", f"pool{i}", data, [x], [([1, 3, 8, 8], "f32")])[0]
    net.result("out", x)
    path.write_text(net.xml())
    return str(path)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of bind() calls and of plans derived (geometry.plan) while the test runs."""
    calls = {"plans": 0}
    derive = geometry.plan

    def counting(*args: Any, **kwargs: Any) -> geometry.PoolPlan:
        calls["plans"] += 1
        return derive(*args, **kwargs)

    monkeypatch.setattr(geometry, "plan", counting)
    calls["start"] = binder.BIND_CALLS
    return calls


def test_running_a_20_layer_net_binds_and_plans_each_layer_once(
    tmp_path: Path, counted: dict[str, int]
) -> None:
    path = _chain(tmp_path / "chain.xml", 20)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    result = irpool.run(path, {"x": x})
    assert not isinstance(result, dict) and result.outputs["out"].shape == (1, 3, 8, 8)
    assert binder.BIND_CALLS - counted["start"] == 20
    assert counted["plans"] == 20


def test_checking_and_explaining_bind_each_layer_once(
    tmp_path: Path, counted: dict[str, int]
) -> None:
    path = _chain(tmp_path / "chain.xml", 20)
    assert irpool.check(path).ok
    assert binder.BIND_CALLS - counted["start"] == 20
    reports = irpool.explain(path)
    assert len(reports) == 20
    assert binder.BIND_CALLS - counted["start"] == 40  # explain is a second invocation


# -- the worked example of docs/architecture.md -------------------------------------------------


def read_box_pool(spec: OpSpec, layer: Layer, rank: int | None) -> PoolParams:
    """BoxPool-1: the attributes of MaxPool-1, averaged with the padding counted."""
    return replace(ov_ops.params(spec, layer.data, rank), count_pad=True)


BOX_POOL_1 = OpSpec(
    "openvino",
    "BoxPool",
    1,
    ov_ops.MAX_ATTRS,
    reduce="mean",
    dtypes=ov_ops.FLOAT_TYPES,
    source="docs/architecture.md, the worked example",
    read=read_box_pool,
)


@pytest.fixture
def box_pool() -> Iterator[OpSpec]:
    REGISTRY.add(BOX_POOL_1)
    try:
        yield BOX_POOL_1
    finally:
        REGISTRY.remove(BOX_POOL_1)


def _box_net(path: Path, declared: int = 4) -> str:
    net = NetBuilder("box")
    x = net.parameter("x", (1, 2, 7, 7))
    data = {
        "kernel": "3, 3",
        "strides": "2, 2",
        "pads_begin": "1, 1",
        "pads_end": "1, 1",
        "rounding_type": "floor",
        "auto_pad": "explicit",
    }
    y = net.op("BoxPool", "opset1", "box", data, [x], [([1, 2, declared, declared], "f32")])[0]
    net.result("out", y)
    path.write_text(net.xml())
    return str(path)


def _boxes(x: np.ndarray) -> np.ndarray:
    """The reference: 3x3 windows of stride 2 over the zero-padded input, summed one by one
    in row-major order and divided by 9."""
    padded = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, 2, 4, 4), np.float32)
    for i in range(4):
        for j in range(4):
            acc = np.zeros((1, 2), np.float32)
            for di in range(3):
                for dj in range(3):
                    acc = acc + padded[:, :, 2 * i + di, 2 * j + dj]
            out[:, :, i, j] = acc / np.float32(9)
    return out


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(args)
    return code, capsys.readouterr().out


def test_a_new_op_version_is_one_registry_entry(
    tmp_path: Path, box_pool: OpSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    """check, run and explain handle BoxPool-1 with no change outside its entry."""
    path = _box_net(tmp_path / "box.xml")
    code, text = _cli(["check", path], capsys)
    assert code == 0 and "(BoxPool-1) [1,2,7,7] -> [1,2,4,4]" in text
    wrong = _box_net(tmp_path / "wrong.xml", declared=5)
    code, text = _cli(["check", wrong], capsys)
    assert code == 1 and "declared 5, inferred 4" in text

    x = np.random.default_rng(1).standard_normal((1, 2, 7, 7)).astype(np.float32)
    result = irpool.run(path, {"x": x})
    assert not isinstance(result, dict)
    np.testing.assert_array_equal(result.outputs["out"], _boxes(x))

    (report,) = irpool.explain(path)
    assert report.op == "BoxPool-1" and report.divisor_rule == "full"
    code, text = _cli(["explain", path], capsys)
    assert code == 0 and "every window is divided by the full kernel volume" in text


def test_without_its_entry_the_layer_is_another_type(tmp_path: Path) -> None:
    """The entry is all irpool knows of BoxPool: without it, check takes the layer as an
    unverified type and run refuses it."""
    path = _box_net(tmp_path / "box.xml")
    report = irpool.check(path)
    assert [la.type for la in report.inference.unverified] == ["BoxPool"]
    with pytest.raises(irpool.IrpoolError, match="layers irpool does not execute"):
        irpool.run(path, {"x": np.zeros((1, 2, 7, 7), np.float32)})


def test_registry_lookup_names_the_layer_for_unknown_versions(tmp_path: Path) -> None:
    net = NetBuilder("v")
    x = net.parameter("x", (1, 1, 4, 4))
    data = {"kernel": "2, 2", "strides": "2, 2"}
    y = net.op("MaxPool", "opset99", "mp", data, [x], [([1, 1, 2, 2], "f32")])[0]
    net.result("out", y)
    (tmp_path / "v.xml").write_text(net.xml())
    with pytest.raises(irpool.IrpoolError, match=r'layer "mp".*MaxPool has no version "opset99"'):
        irpool.check(str(tmp_path / "v.xml"))
