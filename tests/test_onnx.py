"""The ONNX front end: conformance cases of the installed onnx package, onnxruntime sweeps for
QLinearAveragePool, the D12 reference bugs, and the commands on ONNX models."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import random
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, irpool
from onnx_helpers import Tensor, one_node_model

from irpool.frontends import onnx_model
from irpool.frontends.onnx_model import to_graph
from irpool.geometry import plan
from irpool.ops import onnx as onnx_ops
from irpool.oracles import onnx_reference, onnxruntime_rt
from irpool.quant import qlinear_average_pool
from irpool.run import run_graph

pytestmark = pytest.mark.oracle
# the onnx backend test runner's own tolerances (its expected data are rounded to 4 digits)
RTOL, ATOL = 1e-3, 1e-7


NODE_OPS = {"averagepool": "AveragePool", "maxpool": "MaxPool"}
"""onnx's node test modules of the two pools (onnx.backend.test.case.node.*) and their classes."""
BIG_NODE_CASES = ("export_averagepool_3d_default", "export_maxpool_3d_default")
"""The two cases whose expected outputs take onnx's python reference seconds each (a 32**3
input): slow. Every rule they cover (3-D, default attributes) has a smaller case here too."""


def _node_exports() -> list[Any]:
    """The export_* functions of onnx's AveragePool and MaxPool node tests, read from their
    source without importing them: importing one runs every export, which computes the expected
    outputs with onnx's python reference (about 12 s of CPU at every collection)."""
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "backend/test/case/node"
    params = []
    for module, op in NODE_OPS.items():
        source = folder / f"{module}.py"
        if not source.exists():
            continue
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ClassDef) and node.name == op:
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("export"):
                        marks = [pytest.mark.slow] if f.name in BIG_NODE_CASES else []
                        params.append(pytest.param(module, f.name, id=f.name, marks=marks))
    return params


NODE_EXPORTS = _node_exports()


@pytest.fixture(scope="session")
def node_classes(onnx: ModuleType) -> dict[str, Any]:
    """The AveragePool and MaxPool classes of onnx's node tests, imported without running their
    exports (onnx's metaclass runs each export when the class is defined): a test runs the one
    it needs."""
    from onnx.backend.test.case import base

    run_exports = base._Exporter.__init__
    base._Exporter.__init__ = lambda cls, name, bases, dct: type.__init__(cls, name, bases, dct)  # type: ignore[method-assign]
    try:
        modules = {m: importlib.import_module(f"onnx.backend.test.case.node.{m}") for m in NODE_OPS}
    finally:
        base._Exporter.__init__ = run_exports  # type: ignore[method-assign]
    return {m: getattr(modules[m], op) for m, op in NODE_OPS.items()}


def _node_cases(node_classes: dict[str, Any], module: str, export: str) -> list[Any]:
    """The test cases one export adds to onnx's list, run as onnx's metaclass runs it (numpy's
    random seed 0 first), the pools of one node only."""
    from onnx.backend.test.case import node as node_cases

    cases = node_cases._NodeTestCases
    before = len(cases)
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(node_classes[module], export)()
    return [
        c
        for c in cases[before:]
        if c.model is not None
        and len(c.model.graph.node) == 1
        and c.model.graph.node[0].op_type in ("AveragePool", "MaxPool")
    ]


def _pytorch_converted() -> list[Any]:
    try:
        import onnx
    except ImportError:
        return []
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-converted"
    found = sorted(p for p in folder.iterdir() if "Pool" in p.name and (p / "model.onnx").exists())
    # the 3-D cases are the long ones: they run with the slow sweeps
    slow = pytest.mark.slow
    return [pytest.param(p, marks=slow) if "3d" in p.name else p for p in found]


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _check_case(
    onnx: ModuleType, name: str, model: Any, inputs: list[np.ndarray], outputs: list[np.ndarray]
) -> str:
    graph = to_graph(model, name)
    feeds = {i.name: a for i, a in zip(model.graph.input, inputs, strict=False)}
    got = run_graph(graph, feeds).outputs
    results = [got[o.name] for o in model.graph.output]
    if all(
        g.shape == e.shape and np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        for g, e in zip(results, outputs, strict=True)
    ):
        return "reference"
    node = model.graph.node[0]
    reason = onnx_reference.known_wrong(node.op_type, _attrs(node), inputs[0].shape)
    assert reason is not None, f"{name}: irpool differs from onnx's expected output"
    ort = onnxruntime_rt.run(model, feeds)
    for g, e in zip(results, ort, strict=True):
        assert g.shape == e.shape and np.allclose(g, e, rtol=1e-5, atol=1e-6, equal_nan=True)
    return f"onnxruntime ({reason})"


@pytest.mark.parametrize(("module", "export"), NODE_EXPORTS)
def test_onnx_node_conformance(
    onnx: ModuleType, ort: ModuleType, node_classes: dict[str, Any], module: str, export: str
) -> None:
    cases = _node_cases(node_classes, module, export)
    assert cases, f"{export} added no single-node pool case"
    for case in cases:
        inputs, outputs = case.data_sets[0]
        _check_case(onnx, case.name, case.model, list(inputs), list(outputs))
        # onnxruntime agrees as well, to float32 rounding
        feeds = {i.name: a for i, a in zip(case.model.graph.input, inputs, strict=False)}
        got = run_graph(to_graph(case.model, case.name), feeds).outputs
        outs = onnxruntime_rt.run(case.model, feeds)
        for o, e in zip(case.model.graph.output, outs, strict=True):
            np.testing.assert_allclose(got[o.name], e, rtol=1e-5, atol=1e-6)


def test_node_cases_were_found(onnx: ModuleType) -> None:
    assert len(NODE_EXPORTS) >= 30


@pytest.mark.parametrize("folder", _pytorch_converted(), ids=lambda p: p.name)
def test_pytorch_converted_conformance(onnx: ModuleType, ort: ModuleType, folder: Path) -> None:
    from onnx import numpy_helper

    model = onnx.load(str(folder / "model.onnx"))
    data = folder / "test_data_set_0"
    inputs = [
        numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(data.glob("input_*.pb"))
    ]
    outputs = [
        numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(data.glob("output_*.pb"))
    ]
    _check_case(onnx, folder.name, model, inputs, outputs)


def test_d12a_reference_shifts_windows_irpool_follows_onnxruntime(
    onnx: ModuleType, ort: ModuleType
) -> None:
    from onnx import TensorProto, helper

    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    for cip, ref_values in ((0, [2.5, 4.5]), (1, [2.0, 4.5])):
        node = helper.make_node(
            "AveragePool",
            ["x"],
            ["y"],
            kernel_shape=[5],
            strides=[4],
            ceil_mode=1,
            count_include_pad=cip,
        )
        model = one_node_model(
            node, [("x", TensorProto.FLOAT, [1, 1, 6])], [("y", TensorProto.FLOAT, None)], 19
        )
        got = run_graph(to_graph(model, "d12a"), {"x": x}).outputs["y"]
        # windows [1..5] and [5, 6, pad...]: 15/5 and 11/2 (cip=0) or 11/2 (declared pads 0)
        np.testing.assert_array_equal(got.ravel(), [3.0, 5.5])
        np.testing.assert_array_equal(onnxruntime_rt.run(model, {"x": x})[0].ravel(), [3.0, 5.5])
        np.testing.assert_array_equal(onnx_reference.run(model, {"x": x})[0].ravel(), ref_values)
        assert onnx_reference.known_wrong("AveragePool", _attrs(node), x.shape)


def test_qlinear_average_pool_matches_onnxruntime(ort: ModuleType, onnx: ModuleType) -> None:
    """Every attribute, auto_pad included, against onnxruntime's kernel.  (Inputs are at least
    the kernel: with channels_last=1 and an output of size 0 onnxruntime 1.32 dies of SIGFPE.)"""
    rng = random.Random(11)
    nrng = np.random.default_rng(11)
    compared = 0
    for _ in range(250):
        rank = rng.choice([1, 2, 2, 3])
        kernel = [rng.randint(1, 3) for _ in range(rank)]
        attrs: dict[str, Any] = {
            "kernel_shape": kernel,
            "strides": [rng.randint(1, 4) for _ in range(rank)],
        }
        auto = rng.choice(["NOTSET"] * 4 + ["SAME_UPPER", "SAME_LOWER", "VALID"])
        if auto != "NOTSET":
            # SAME pads from a kernel below the stride can be negative: this kernel computes
            attrs["auto_pad"] = auto
        elif rng.random() < 0.7:
            attrs["pads"] = [rng.randint(0, k - 1) for k in kernel] * 2
        for key in ("ceil_mode", "count_include_pad", "channels_last"):
            if rng.random() < 0.4:
                attrs[key] = 1
        dtype = rng.choice([np.uint8, np.int8])
        info = np.iinfo(dtype)
        shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(k, k + 5) for k in kernel]
        if attrs.get("channels_last"):
            shape = [shape[0], *shape[2:], shape[1]]
        x = nrng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        scales = [
            np.array(rng.choice([0.5, 0.1, 1.0, 0.037]), np.float32),
            np.array(rng.choice([0.5, 0.25, 1.0, 0.0731]), np.float32),
        ]
        zeros = [np.array(rng.randint(info.min, info.max), dtype) for _ in range(2)]
        args = [x, scales[0], zeros[0], scales[1], zeros[1]]
        expected = onnxruntime_rt.run_node(
            "QLinearAveragePool",
            attrs,
            args,
            1,
            domain="com.microsoft",
            initializers={1: args[1], 2: args[2], 3: args[3], 4: args[4]},
        )[0]
        spec = onnx_ops.select("QLinearAveragePool", "com.microsoft", 1)
        params = onnx_ops.params(spec, attrs, len(shape))
        nchw = (shape[0], shape[-1], *shape[1:-1]) if attrs.get("channels_last") else shape
        got = qlinear_average_pool(
            x,
            scales[0],
            zeros[0],
            scales[1],
            zeros[1],
            plan(params, tuple(nchw), "onnx"),
            channels_last=bool(attrs.get("channels_last")),
        )
        assert got.dtype == expected.dtype and got.shape == expected.shape, attrs
        np.testing.assert_array_equal(got, expected, err_msg=str(attrs))
        compared += 1
    assert compared == 250


def _model(
    onnx: ModuleType,
    path: Path,
    node: Any,
    inputs: list[Tensor],
    outputs: list[Tensor],
    opset: int,
    inits: list[Any] | None = None,
) -> str:
    """one_node_model saved at `path`."""
    onnx.save(one_node_model(node, inputs, outputs, opset, inits), str(path))
    return str(path)


def _x_to_y(
    onnx: ModuleType,
    path: Path,
    node: Any,
    et: int,
    x_shape: list[Any],
    opset: int,
    y_shape: list[Any] | None = None,
    inits: list[Any] | None = None,
) -> str:
    """_model of a node from an input `x` to an output `y`, both of element type `et` (`y_shape`
    None: undeclared)."""
    return _model(onnx, path, node, [("x", et, x_shape)], [("y", et, y_shape)], opset, inits)


def _maxpool_with_indices(onnx: ModuleType, path: Path, shape: list[int], **attrs: Any) -> str:
    """A MaxPool-12 "mp" of a float input `x` of `shape`, with its Indices output `i`
    (storage_order 1), saved at `path`."""
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", storage_order=1, **attrs)
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    return _model(onnx, path, node, [("x", f32, shape)], [("y", f32, None), ("i", i64, None)], 12)


D2_ATTRS: dict[str, Any] = {
    "kernel_shape": [3, 3],
    "strides": [3, 3],
    "pads": [1, 1, 1, 1],
    "ceil_mode": 1,
}
"""A 2-D pooling whose last window would start in the right padding on a 2x2 input (D2)."""
QLINEAR_ATTRS: dict[str, Any] = {
    "domain": "com.microsoft",
    "kernel_shape": [3],
    "strides": [2],
    "pads": [1, 1],
    "count_include_pad": 1,
}
"""The QLinearAveragePool of fixtures/divergences/d10b_qlinear.onnx (D10b), counting the pads."""


def test_check_reports_onnx_shape_inference_disagreement(onnx: ModuleType, tmp_path: Path) -> None:
    from onnx import TensorProto, helper, shape_inference

    node = helper.make_node("AveragePool", ["x"], ["y"], name="pool", **D2_ATTRS)
    for opset, declared_ok in ((19, False), (22, True)):
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model = shape_inference.infer_shapes(model)  # declares what onnx's inference says
        path = tmp_path / f"d2b_{opset}.onnx"
        onnx.save(model, str(path))
        out = irpool("check", str(path))
        assert (out.returncode == 0) == declared_ok, out.stdout
        if not declared_ok:
            # onnx 1.23 applies the drop rule only from opset 22 (D2b): it declares 2x2
            assert "declared 2, inferred 1" in out.stdout
            assert "shape inference gives [1, 1, 2, 2]" in out.stdout


def test_run_and_compare_onnx(onnx: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    path = _maxpool_with_indices(
        onnx,
        tmp_path / "mp.onnx",
        [2, 3, 9, 10],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        ceil_mode=1,
    )
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 10)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = irpool("run", path, "-i", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz"))
    assert out.returncode == 0, out.stderr
    from irpool.arrays import load_arrays

    got = load_arrays(str(tmp_path / "o.npz"))
    expected = onnxruntime_rt.run(onnx.load(path), {"x": x})
    np.testing.assert_array_equal(got["y"], expected[0])
    np.testing.assert_array_equal(got["i"], expected[1])
    compared = irpool("compare", path, "-i", f"x={tmp_path / 'x.npy'}")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "onnxruntime" in compared.stdout


@pytest.mark.parametrize("case", ["D2c", "D6", "D10b"])
def test_convert_report_names_the_divergence(
    onnx: ModuleType, ov: ModuleType, tmp_path: Path, case: str
) -> None:
    from onnx import TensorProto, helper, numpy_helper

    f32 = TensorProto.FLOAT
    if case == "D2c":
        node = helper.make_node("MaxPool", ["x"], ["y"], name="mp", **D2_ATTRS)
        path = _x_to_y(onnx, tmp_path / "m.onnx", node, f32, [1, 1, 2, 2], 12)
        extra: list[str] = []
    elif case == "D6":
        path = _maxpool_with_indices(
            onnx, tmp_path / "m.onnx", [1, 1, 2, 4], kernel_shape=[1, 2], strides=[1, 2]
        )
        extra = []
    else:
        u8 = TensorProto.UINT8
        inits = [
            numpy_helper.from_array(np.array(0.5, np.float32), "xs"),
            numpy_helper.from_array(np.array(128, np.uint8), "xz"),
            numpy_helper.from_array(np.array(0.5, np.float32), "ys"),
            numpy_helper.from_array(np.array(10, np.uint8), "yz"),
        ]
        node = helper.make_node(
            "QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], name="qap", **QLINEAR_ATTRS
        )
        path = _x_to_y(onnx, tmp_path / "m.onnx", node, u8, [1, 1, 9], 12, inits=inits)
        extra = ["--range", "0,255"]
    out = irpool("convert-report", path, *extra)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{case}:" in out.stdout


def _ort_outputs(model_path: str, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in session.run(None, feeds)]


def test_qlinear_layer_alone_matches_onnxruntime(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """`run --layer` on a QLinearAveragePool node uses its constant scales and zero points."""
    model = str(ROOT / "fixtures" / "divergences" / "d10b_qlinear.onnx")
    graph = onnx_model.load(model)
    (param,) = [la for la in graph.layers if la.type == "Parameter"]
    x = np.random.default_rng(3).integers(0, 256, size=(1, 1, 9), dtype=np.uint8)
    np.save(tmp_path / "x.npy", x)
    layer = next(la for la in graph.layers if la.type == "QLinearAveragePool")
    out = irpool(
        "run",
        model,
        "--layer",
        layer.label,
        "-i",
        str(tmp_path / "x.npy"),
        "-o",
        str(tmp_path / "o.npz"),
    )
    assert out.returncode == 0, out.stderr
    expected = _ort_outputs(model, {param.label: x})[0]
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["output0"], expected)


def test_omitted_output_and_dynamic_batch(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    from onnx import TensorProto, helper

    # a MaxPool whose optional Indices output is omitted ("")
    node = helper.make_node("MaxPool", ["x"], ["y", ""], kernel_shape=[2], strides=[2])
    path = _x_to_y(
        onnx, tmp_path / "omitted.onnx", node, TensorProto.FLOAT, [1, 1, 4], 12, [1, 1, 2]
    )
    out = irpool("compare", path)
    assert out.returncode == 0, out.stdout + out.stderr
    # QLinearAveragePool on a dynamic batch: the plan follows the real input
    scale = helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])
    zero = helper.make_tensor("z", TensorProto.UINT8, [], [3])
    node = helper.make_node(
        "QLinearAveragePool", ["xq", "s", "z", "s", "z"], ["yq"], **QLINEAR_ATTRS
    )
    path = _model(
        onnx,
        tmp_path / "qdyn.onnx",
        node,
        [("xq", TensorProto.UINT8, ["n", 1, 9])],
        [("yq", TensorProto.UINT8, ["n", 1, 5])],
        12,
        [scale, zero],
    )
    x = np.random.default_rng(0).integers(0, 256, size=(2, 1, 9), dtype=np.uint8)
    np.save(tmp_path / "xq.npy", x)
    out = irpool("compare", path, "-i", f"xq={tmp_path / 'xq.npy'}")
    assert out.returncode == 0, out.stdout + out.stderr


def test_element_types_an_op_version_refuses(onnx: ModuleType, tmp_path: Path) -> None:
    """AveragePool takes floats only (onnx.checker refuses int32); irpool says so."""
    from onnx import TensorProto, helper

    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2])
    path = _x_to_y(onnx, tmp_path / "int.onnx", node, TensorProto.INT32, [1, 1, 4], 19, [1, 1, 3])
    out = irpool("run", path, "-o", str(tmp_path / "o.npz"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "AveragePool-19 takes f16, f32, f64" in out.stderr and path in out.stderr


def test_api_reads_onnx(onnx: ModuleType) -> None:
    import irpool as api

    model = str(ROOT / "fixtures" / "divergences" / "d2_maxpool_ceil.onnx")
    assert api.load(model).format == "onnx"
    report = api.check(model)
    # the file declares the operator text's 2x2; onnxruntime computes 1x1 (D2b)
    assert not report.ok and {f.declared for f in report.findings} == {"2"}


def test_explain_reads_onnx(onnx: ModuleType) -> None:
    out = irpool("explain", str(ROOT / "fixtures" / "divergences" / "d2_maxpool_ceil.onnx"))
    assert out.returncode == 0, out.stderr
    assert "convention onnx" in out.stdout and "[1,1,2,2] -> [1,1,1,1]" in out.stdout


def _f16_chain(onnx: ModuleType, path: Path, squeeze: bool) -> None:
    """AveragePool -> AveragePool -> MaxPool(1x1) -> [Unsqueeze -> Squeeze] -> AveragePool, f16."""
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["a"], ["b"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxPool", ["b"], ["c"], kernel_shape=[1, 1]),
    ]
    last = "c"
    if squeeze:
        nodes += [
            helper.make_node("Unsqueeze", ["c", "axis"], ["u"]),
            helper.make_node("Squeeze", ["u", "axis"], ["s"]),
        ]
        last = "s"
    nodes.append(
        helper.make_node("AveragePool", [last], ["y"], kernel_shape=[1, 2], strides=[1, 2])
    )
    for i, node in enumerate(nodes):
        node.name = f"n{i}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 3, 6, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)],
        initializer=[helper.make_tensor("axis", TensorProto.INT64, [1], [0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    onnx.save(model, str(path))


@pytest.mark.parametrize("squeeze", [False, True])
def test_f16_chains_as_onnxruntime_runs_them(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path, squeeze: bool
) -> None:
    """onnxruntime pools f16 in float32 and cancels the casts between two pooling nodes, so a
    chain is rounded to f16 only at the end, or where another node (Squeeze) needs f16: run
    matches it bit for bit, and compare rebuilds the float32 values between the nodes."""
    import irpool as api

    path = tmp_path / "chain.onnx"
    _f16_chain(onnx, path, squeeze)
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 24)).astype(np.float16)
    want = onnxruntime_rt.session(str(path)).run(None, {"x": x})[0]
    got = api.run(str(path), {"x": x})
    assert not isinstance(got, dict)
    np.testing.assert_array_equal(got.outputs["y"], want)
    np.save(tmp_path / "x.npy", x)
    out = irpool("compare", str(path), "-i", str(tmp_path / "x.npy"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 pooling node(s) compared, 0 differ" in out.stdout


QLINEAR_LOADS = [
    # inputs listed, initializer dtypes/shapes, what onnxruntime says when it refuses
    (["x", "s", "z", "s", "z"], {}, None),
    (["x", "s", "z", "s"], {}, None),  # a trailing y_zero_point left out
    (["x", "s", "", "s", "z"], {}, "TypeInferenceError"),
    (["x", "s", "", "s"], {}, "TypeInferenceError"),
    (["x", "s", "z", "s", ""], {}, "TypeInferenceError"),
    (["x", "s", "zi", "s", "z"], {"zi": (np.int8, [])}, "bound to different types"),
    (["x", "sd", "z", "s", "z"], {"sd": (np.float64, [])}, "invalid"),
    (["x", "s1", "z", "s", "z"], {"s1": (np.float32, [1])}, "must be a scalar"),
    (["x", "s", "z1", "s", "z"], {"z1": (np.uint8, [1, 1])}, "must be a scalar"),
]


@pytest.mark.parametrize("inputs,extra,refusal", QLINEAR_LOADS)
def test_qlinear_inputs_refused_where_onnxruntime_refuses_to_load(
    onnx: ModuleType,
    ort: ModuleType,
    tmp_path: Path,
    inputs: list[str],
    extra: dict[str, Any],
    refusal: str | None,
) -> None:
    """onnxruntime's type inference for QLinearAveragePool refuses an input listed as "" (the
    contrib schema calls the zero points optional), zero points of another type than X, scales
    other than float32 and non-scalar scales or zero points; irpool refuses the same models when
    it reads them (one line, exit 2) and runs the others as onnxruntime does."""
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
        helper.make_tensor("z", TensorProto.UINT8, [], [3]),
    ]
    for name, (dtype, shape) in extra.items():
        inits.append(numpy_helper.from_array(np.ones(shape, dtype), name))
    node = helper.make_node(
        "QLinearAveragePool", inputs, ["y"], name="qpool", domain="com.microsoft", kernel_shape=[2]
    )
    path = _x_to_y(onnx, tmp_path / "q.onnx", node, TensorProto.UINT8, [1, 1, 6], 13, inits=inits)
    x = np.arange(10, 70, 10, dtype=np.uint8).reshape(1, 1, 6)
    np.save(tmp_path / "x.npy", x)
    out = irpool("run", path, "-i", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz"))
    if refusal is None:
        assert out.returncode == 0, out.stderr
        got = np.load(tmp_path / "o.npz")["y"]
        np.testing.assert_array_equal(got, _ort_outputs(path, {"x": x})[0])
        return
    with pytest.raises(Exception, match=refusal):
        _ort_outputs(path, {"x": x})
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert 'node "qpool" (QLinearAveragePool' in out.stderr and "onnxruntime" in out.stderr


def _single_node(
    onnx: ModuleType, path: Path, op: str, opset: int, shape: list[int], dtype: Any, **attrs: Any
) -> str:
    from onnx import helper

    et = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node(op, ["x"], ["y"], name="pool", **attrs)
    return _x_to_y(onnx, path, node, et, shape, opset)


KERNEL_1_STRIDE_3 = {"kernel_shape": [1], "strides": [3]}
"""A kernel smaller than the stride: with SAME_* on 5 inputs, pads (0, -1) (D5)."""


@pytest.mark.parametrize(
    "op,opset,dtype,attrs,refusal",
    [
        # SAME_UPPER, kernel 1 < stride 3 on 5: pads (0, -1) (D5)
        ("AveragePool", 11, np.float32, {"auto_pad": "SAME_UPPER", **KERNEL_1_STRIDE_3}, "D5"),
        ("AveragePool", 19, np.float32, {"auto_pad": "SAME_UPPER", **KERNEL_1_STRIDE_3}, None),
        ("MaxPool", 12, np.float16, {"auto_pad": "SAME_LOWER", **KERNEL_1_STRIDE_3}, "D5"),
        ("MaxPool", 12, np.float64, {"auto_pad": "SAME_LOWER", **KERNEL_1_STRIDE_3}, None),
        ("MaxPool", 12, np.float32, {"kernel_shape": [2], "pads": [2, 0]}, "D11"),
        (
            "AveragePool",
            19,
            np.float32,
            {"kernel_shape": [2], "pads": [0, 2], "auto_pad": "VALID"},
            "D11",
        ),
    ],
)
def test_run_refuses_exactly_where_onnxruntime_refuses(
    onnx: ModuleType,
    ort: ModuleType,
    tmp_path: Path,
    op: str,
    opset: int,
    dtype: Any,
    attrs: dict[str, Any],
    refusal: str | None,
) -> None:
    """One line naming the node, what onnxruntime says and the divergence, exit 2; where
    onnxruntime computes, the same numbers."""
    path = _single_node(onnx, tmp_path / "m.onnx", op, opset, [1, 1, 5], dtype, **attrs)
    x = np.arange(1, 6).astype(dtype).reshape(1, 1, 5)
    np.save(tmp_path / "x.npy", x)
    out = irpool("run", path, "-i", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "o.npz"))
    if refusal is None:
        assert out.returncode == 0, out.stderr
        expected = _ort_outputs(path, {"x": x})[0]
        np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"], expected)
        return
    with pytest.raises(Exception, match=r"non-negative|smaller than kernel"):
        _ort_outputs(path, {"x": x})
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert 'node "pool"' in out.stderr and "onnxruntime refuses" in out.stderr
    assert refusal in out.stderr
    if refusal == "D5":
        assert "negative pads from SAME_* with kernel < stride" in out.stderr
        assert "kernel_shape=[1], strides=[3]" in out.stderr
