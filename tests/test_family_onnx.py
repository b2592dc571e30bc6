"""ONNX LpPool/GlobalLpPool, MaxUnpool and com.microsoft QLinearGlobalAveragePool: irpool
against brute-force references, onnxruntime (bit for bit), onnx's reference evaluator, PyTorch
and openvino's conversions, on random attributes; and through run, compare, explain and
convert-report."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool
from family_helpers import random_values, same_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_family import ort_lp_pool, ort_max_unpool, ort_qlinear_global_average

from irpool.frontends.onnx_model import to_graph
from irpool.ops import bind
from irpool.run import run_layer

FEW = settings(max_examples=20, deadline=None)


def _model(
    op: str,
    inputs: list[tuple[str, np.ndarray]],
    attrs: dict[str, Any],
    opset: int,
    domain: str = "",
    inits: dict[str, np.ndarray] | None = None,
) -> Any:
    from onnx import helper, numpy_helper

    inits = inits or {}
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
        for n, a in inputs
        if n not in inits
    ]
    out_type = helper.np_dtype_to_tensor_dtype(inputs[0][1].dtype)
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], name="node", domain=domain, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        graph_inputs,
        [helper.make_tensor_value_info("y", out_type, None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    imports = [helper.make_opsetid("", opset if not domain else 13)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    return model


def _irpool(model: Any, ins: list[np.ndarray | None], convention: str | None = None) -> np.ndarray:
    graph = to_graph(model, "m.onnx")
    layer = next(la for la in graph.layers if la.name == "node")
    _, outs = run_layer(bind(graph, layer), ins, None, convention)
    return outs[0]


def _ort(model: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
    from irpool.oracles import onnxruntime_rt

    return onnxruntime_rt.run(model, feeds)[0]


@st.composite
def lp_cases(draw: Any) -> tuple[np.ndarray, dict[str, Any], int]:
    rank = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 3)) for _ in range(rank)]
    opset = draw(st.sampled_from([2, 11, 18]))
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    dilations = [draw(st.integers(1, 2)) for _ in range(rank)] if opset == 18 else [1] * rank
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    pads = [draw(st.integers(0, k - 1)) for k in kernel * 2]
    shape = (
        draw(st.integers(1, 2)),
        draw(st.integers(1, 3)),
        *[draw(st.integers(k, k + 5)) for k in k_eff],
    )
    attrs: dict[str, Any] = {
        "kernel_shape": kernel,
        "strides": strides,
        "pads": pads,
        "p": draw(st.integers(1, 4)),
    }
    if opset == 18:
        attrs["dilations"] = dilations
        attrs["ceil_mode"] = int(draw(st.booleans()))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, shape, special=draw(st.integers(0, 4)) == 0)
    return x, attrs, opset


@FEW
@given(lp_cases())
def test_lp_pool_equals_reference(onnx: ModuleType, case: Any) -> None:
    x, attrs, opset = case
    got = _irpool(_model("LpPool", [("x", x)], attrs, opset), [x])
    rank = x.ndim - 2
    want = ort_lp_pool(
        x,
        attrs["kernel_shape"],
        attrs["p"],
        attrs["strides"],
        attrs["pads"],
        attrs.get("dilations", [1] * rank),
        bool(attrs.get("ceil_mode", 0)),
    )
    assert same_bits(got, want)


@pytest.mark.oracle
@FEW
@given(lp_cases())
def test_lp_pool_equals_onnxruntime(ort: ModuleType, onnx: ModuleType, case: Any) -> None:
    x, attrs, opset = case
    model = _model("LpPool", [("x", x)], attrs, opset)
    assert same_bits(_irpool(model, [x]), _ort(model, {"x": x}))


@pytest.mark.oracle
@settings(max_examples=10, deadline=None)
@given(lp_cases())
def test_lp_pool_openvino_convention_is_its_conversion(
    ov: ModuleType, onnx: ModuleType, tmp_path_factory: Any, case: Any
) -> None:
    """The openvino convention computes what openvino's conversion of the node computes."""
    x, attrs, opset = case
    x = np.nan_to_num(x, nan=0.5)
    model = _model("LpPool", [("x", x)], attrs, opset)
    path = tmp_path_factory.mktemp("lp") / "m.onnx"
    onnx.save(model, str(path))
    from irpool.oracles import openvino_rt

    converted = openvino_rt.compile_model(ov.convert_model(str(path)))
    want = openvino_rt.infer(converted, [x])[0]
    assert same_bits(_irpool(model, [x], "openvino"), want)


@pytest.mark.oracle
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_torch_convention(torch: ModuleType, onnx: ModuleType, p: int) -> None:
    """PyTorch's lp_pool2d: signed power, ceil windows scaled (within 2 ulp of its float32)."""
    x = np.random.default_rng(p).standard_normal((1, 2, 7, 8)).astype(np.float32)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 2], "p": p, "ceil_mode": 1}
    got = _irpool(_model("LpPool", [("x", x)], attrs, 18), [x], "torch")
    want = torch.nn.functional.lp_pool2d(
        torch.from_numpy(x), p, [3, 2], [2, 2], ceil_mode=True
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0, equal_nan=True)


@pytest.mark.oracle
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_global_lp_pool(ort: ModuleType, onnx: ModuleType, p: int) -> None:
    x = random_values(np.random.default_rng(p), (2, 3, 5, 7))
    model = _model("GlobalLpPool", [("x", x)], {"p": p}, 13)
    assert same_bits(_irpool(model, [x]), _ort(model, {"x": x}))


@pytest.mark.oracle
def test_lp_pool_1_against_the_reference_evaluator(onnx: ModuleType) -> None:
    """onnxruntime has no LpPool-1 kernel: the reference evaluator (within 2 ulp, D22)."""
    from irpool.oracles import onnx_reference

    x = np.random.default_rng(5).standard_normal((1, 2, 6, 7)).astype(np.float32)
    model = _model("LpPool", [("x", x)], {"kernel_shape": [3, 2], "p": 2.0}, 1)
    got = _irpool(model, [x])
    want = onnx_reference.run(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=3e-7)


@st.composite
def unpool_cases(draw: Any) -> tuple[np.ndarray, list[int], list[int]]:
    rank = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 3)) for _ in range(rank)]
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    shape = (
        draw(st.integers(1, 2)),
        draw(st.integers(1, 3)),
        *[draw(st.integers(k, 7)) for k in kernel],
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.standard_normal(shape).astype(np.float32), kernel, strides


def _pool_unpool(
    x: np.ndarray, kernel: list[int], strides: list[int], with_shape: bool, opset: int = 11
) -> Any:
    from onnx import TensorProto, helper, numpy_helper

    pool = helper.make_node(
        "MaxPool", ["x"], ["v", "i"], name="mp", kernel_shape=kernel, strides=strides
    )
    ins = ["v", "i"] + (["s"] if with_shape else [])
    unpool = helper.make_node(
        "MaxUnpool", ins, ["y"], name="node", kernel_shape=kernel, strides=strides
    )
    inits = [numpy_helper.from_array(np.array(x.shape, np.int64), "s")] if with_shape else []
    graph = helper.make_graph(
        [pool, unpool],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


@pytest.mark.oracle
@FEW
@given(unpool_cases(), st.booleans())
def test_max_unpool_equals_onnxruntime(
    ort: ModuleType, onnx: ModuleType, case: Any, with_shape: bool
) -> None:
    """Whole MaxPool -> MaxUnpool models, run by irpool and onnxruntime; onnxruntime's
    refusals (D24) are irpool's too."""
    from irpool.errors import IrpoolError
    from irpool.oracles import onnxruntime_rt
    from irpool.run import run_graph

    x, kernel, strides = case
    model = _pool_unpool(x, kernel, strides, with_shape)
    try:
        want: np.ndarray | None = onnxruntime_rt.run(model, {"x": x})[0]
        refused = None
    except Exception as e:
        want, refused = None, str(e)
    try:
        got: np.ndarray | None = run_graph(to_graph(model, "m.onnx"), x).outputs["y"]
    except IrpoolError as e:
        got = None
        assert refused is not None, e.message
        key = "Index value out of bounds" if "out of bounds" in refused else "not positive"
        assert key in e.message
    if want is not None:
        assert got is not None, refused
        assert same_bits(got, want)
        graph = to_graph(model, "m.onnx")
        layer = next(la for la in graph.layers if la.name == "node")
        from irpool.run import run_graph as run_all

        tensors = run_all(graph, x).tensors
        values = next(
            v for k, v in tensors.items() if k.startswith("mp:") and v.dtype == np.float32
        )
        indices = next(v for k, v in tensors.items() if k.startswith("mp:") and v.dtype == np.int64)
        assert same_bits(got, ort_max_unpool(values, indices, want.shape))
        del layer


@pytest.mark.oracle
def test_max_unpool_torch_convention(torch: ModuleType, onnx: ModuleType) -> None:
    """Per-plane indices (PyTorch) against torch.nn.functional.max_unpool2d."""
    x = torch.randn(2, 3, 6, 8, generator=torch.Generator().manual_seed(0))
    values, idx = torch.nn.functional.max_pool2d(x, 2, 2, return_indices=True)
    want = torch.nn.functional.max_unpool2d(values, idx, 2, 2).numpy()
    v, i = values.numpy(), idx.numpy()
    model = _model(
        "MaxUnpool", [("v", v), ("i", i)], {"kernel_shape": [2, 2], "strides": [2, 2]}, 11
    )
    assert same_bits(_irpool(model, [v, i], "torch"), want)


def test_max_unpool_d24_odd_size_is_refused_or_misplaced(onnx: ModuleType) -> None:
    """D24: flat indices of a 5x5 plane unpooled into the 4x4 default plane."""
    from irpool.errors import IrpoolError

    # the maxima of arange(50).reshape(1, 2, 5, 5) under MaxPool k2 s2, flat over the tensor
    v = np.array([6, 8, 16, 18, 31, 33, 41, 43], np.float32).reshape(1, 2, 2, 2)
    i = v.astype(np.int64)
    model = _model(
        "MaxUnpool", [("v", v), ("i", i)], {"kernel_shape": [2, 2], "strides": [2, 2]}, 11
    )
    with pytest.raises(IrpoolError, match=r"Got: 33\. Valid range is \[0, 32\)"):
        _irpool(model, [v, i])


@pytest.mark.oracle
@FEW
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([np.uint8, np.int8]))
def test_qlinear_global_average_pool(
    ort: ModuleType, onnx: ModuleType, seed: int, last: bool, dtype: Any
) -> None:
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    shape = (
        int(rng.integers(1, 3)),
        int(rng.integers(1, 5)),
        int(rng.integers(1, 7)),
        int(rng.integers(1, 7)),
    )
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    inits = {
        "xs": np.array(rng.uniform(0.01, 0.2), np.float32),
        "xz": np.array(rng.integers(info.min, info.max + 1), dtype),
        "ys": np.array(rng.uniform(0.01, 0.2), np.float32),
        "yz": np.array(rng.integers(info.min, info.max + 1), dtype),
    }
    model = _model(
        "QLinearGlobalAveragePool",
        [("x", x), *inits.items()],
        {"channels_last": int(last)},
        1,
        "com.microsoft",
        inits,
    )
    got = _irpool(model, [x, *inits.values()])
    assert same_bits(got, _ort(model, {"x": x}))
    want = ort_qlinear_global_average(
        x, float(inits["xs"]), int(inits["xz"]), float(inits["ys"]), int(inits["yz"]), last
    )
    assert same_bits(got, want)


@pytest.mark.oracle
def test_cli_on_the_onnx_family(ort: ModuleType, onnx: ModuleType, tmp_path: Path) -> None:
    """run, compare (skipped count in the summary, layers in the JSON), explain --json and
    convert-report (openvino refuses MaxUnpool) on small models."""
    x = np.random.default_rng(9).standard_normal((1, 2, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    models = {
        "lp": _model(
            "LpPool",
            [("x", x)],
            {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "p": 2},
            18,
        ),
        "glp": _model("GlobalLpPool", [("x", x)], {"p": 3}, 13),
        "gap": _model("GlobalAveragePool", [("x", x)], {}, 13),
        "unpool": _pool_unpool(x, [2, 2], [2, 2], False),
    }
    for name, model in models.items():
        path = str(tmp_path / f"{name}.onnx")
        onnx.save(model, path)
        out = irpool(
            "run", path, "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / f"{name}.npz")
        )
        assert out.returncode == 0, out.stderr
        out = irpool("compare", path, "-i", str(tmp_path / "x.npy"), "--json")
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert "node" in [layer["layer"] for layer in doc["layers"]]
        assert doc["skipped"] == []
        out = irpool("explain", path, "--layer", "node", "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["layers"][0]["family"] in ("lp", "reduce", "unpool")
    out = irpool("convert-report", str(tmp_path / "unpool.onnx"), "-i", str(tmp_path / "x.npy"))
    assert out.returncode == 1, out.stderr
    assert "openvino refuses to convert it" in out.stdout
    assert "1 skipped" in out.stdout
