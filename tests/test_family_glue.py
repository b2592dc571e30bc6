"""The glue openvino's converters decompose Lp pooling into (Abs, Sign, ReLU, Sqrt, Multiply,
Power, Split, Concat, Reshape, ConvertLike): each op on special values against openvino's CPU
plugin, and whole converted nets (ONNX LpPool / GlobalLpPool, torch LPPool1d/2d) run by
`irpool run` bit for bit against openvino."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import sweep
from family_helpers import irpool_run, openvino_run, same_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_helpers import one_node_model

from irpool.frontends.ir_writer import NetBuilder

SPECIAL = np.array(
    [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, -2.5, 3.0, 1e-3, -7.25, 0.5, 2.0, 1e30, -1e-30],
    np.float32,
)


def _unary(op: str, path: Path, exponent: float | None = None) -> str:
    net = NetBuilder("glue")
    x = net.parameter("x", [SPECIAL.size], "f32")
    ins = [x]
    if exponent is not None:
        ins.append(net.const("e", np.asarray(exponent, np.float32)))
    out = net.op(op, "opset1", "op", {}, ins, [([SPECIAL.size], "f32")])
    net.result("values", out[0])
    net.save(str(path), force=True)
    return str(path)


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["Abs", "Sign", "ReLU", "Sqrt"])
def test_unary_special_values(ov: ModuleType, tmp_path: Path, op: str) -> None:
    path = _unary(op, tmp_path / "m.xml")
    assert same_bits(irpool_run(path, SPECIAL)["values"], openvino_run(path, SPECIAL)["values"])


@pytest.mark.oracle
@pytest.mark.parametrize("exponent", [1.0, 2.0, 3.0, 4.0, 0.5, 1 / 3, 1.5, 2.2, -1.0, 0.0])
def test_power_special_values(ov: ModuleType, tmp_path: Path, exponent: float) -> None:
    path = _unary("Power", tmp_path / "m.xml", exponent)
    assert same_bits(irpool_run(path, SPECIAL)["values"], openvino_run(path, SPECIAL)["values"])


def _onnx_model(
    onnx: ModuleType, op: str, shape: tuple[int, ...], attrs: dict[str, Any], opset: int
) -> Any:
    from onnx import TensorProto, helper

    node = helper.make_node(op, ["x"], ["y"], **attrs)
    f32 = TensorProto.FLOAT
    return one_node_model(node, [("x", f32, list(shape))], [("y", f32, None)], opset)


def _converted(ov: ModuleType, onnx: ModuleType, model: Any, folder: Path) -> str:
    onnx_path = folder / "m.onnx"
    onnx.save(model, str(onnx_path))
    xml = folder / "m.xml"
    ov.save_model(ov.convert_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    return str(xml)


@st.composite
def lp_cases(draw: Any) -> tuple[tuple[int, ...], dict[str, Any], int]:
    rank = draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 3)) for _ in range(rank)]
    shape = (1, draw(st.integers(1, 3)), *[draw(st.integers(k + 1, k + 6)) for k in kernel])
    attrs: dict[str, Any] = {"kernel_shape": kernel, "p": draw(st.sampled_from([1, 2, 3]))}
    opset = draw(st.sampled_from([11, 18]))
    if draw(st.booleans()):
        attrs["strides"] = [draw(st.integers(1, 3)) for _ in range(rank)]
    if draw(st.booleans()):
        attrs["pads"] = [draw(st.integers(0, k - 1)) for k in kernel * 2]
    if opset == 18 and draw(st.booleans()):
        attrs["ceil_mode"] = 1
    return shape, attrs, opset


@pytest.mark.oracle
@settings(max_examples=sweep(quick=5, full=15), deadline=None)  # ~2 s of conversion each
@given(lp_cases(), st.integers(0, 2**32 - 1))
def test_converted_onnx_lp_pool_runs_as_openvino(
    ov: ModuleType, onnx: ModuleType, tmp_path_factory: Any, case: Any, seed: int
) -> None:
    shape, attrs, opset = case
    folder = tmp_path_factory.mktemp("lp")
    path = _converted(ov, onnx, _onnx_model(onnx, "LpPool", shape, attrs, opset), folder)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    got, want = irpool_run(path, x), openvino_run(path, x)
    for key, value in want.items():
        name = key if key in got else next(iter(got))
        assert same_bits(got[name], value), attrs


@pytest.mark.oracle
@pytest.mark.parametrize("p", [1, 2, 3])
def test_converted_global_lp_pool_runs_as_openvino(
    ov: ModuleType, onnx: ModuleType, tmp_path: Path, p: int
) -> None:
    """Split(axis 1, C parts) -> Power/Abs -> ReduceSum -> Sqrt/Power -> Reshape -> Concat."""
    path = _converted(
        ov, onnx, _onnx_model(onnx, "GlobalLpPool", (2, 3, 5, 7), {"p": p}, 13), tmp_path
    )
    x = np.random.default_rng(p).standard_normal((2, 3, 5, 7)).astype(np.float32)
    got, want = irpool_run(path, x), openvino_run(path, x)
    assert same_bits(next(iter(got.values())), next(iter(want.values())))


@pytest.mark.oracle
@pytest.mark.parametrize(
    "module,shape",
    [
        ("LPPool2d(2, 3, 2)", (1, 3, 9, 9)),
        ("LPPool2d(2, 3, 2, ceil_mode=True)", (1, 3, 8, 8)),
        ("LPPool1d(3, 2)", (1, 2, 10)),
    ],
)
def test_converted_torch_lp_pool_runs_as_openvino(
    ov: ModuleType, torch: ModuleType, tmp_path: Path, module: str, shape: tuple[int, ...]
) -> None:
    """Power -> AvgPool-14 -> Sign, Abs, ReLU, Multiply -> Multiply -> Power (torch's signed
    power: odd p gives NaN for a negative window sum, D21)."""
    mod = eval(f"torch.nn.{module}")
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    converted = ov.convert_model(mod, example_input=torch.from_numpy(x), input=[list(shape)])
    path = str(tmp_path / "m.xml")
    ov.save_model(converted, path, compress_to_fp16=False)
    got, want = irpool_run(path, x), openvino_run(path, x)
    assert same_bits(next(iter(got.values())), next(iter(want.values())))
    assert os.path.exists(path)
