"""`irpool check` on ONNX models: sizes as onnxruntime computes them (or its refusal), and the
notes about onnx's own shape inference, checked against onnx and onnxruntime themselves."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import irpool

from irpool.check import check_file
from irpool.errors import IrpoolError


def _model(
    onnx: ModuleType,
    op: str,
    opset: int,
    shape: list[int],
    attrs: dict[str, Any],
    declared: list[int] | None = None,
    indices: bool = False,
) -> Any:
    from onnx import TensorProto, helper

    outs = ["y", "i"] if indices else ["y"]
    node = helper.make_node(op, ["x"], outs, name="pool", **attrs)
    results = [helper.make_tensor_value_info("y", TensorProto.FLOAT, declared)]
    if indices:
        results.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], results
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def _onnxruntime(ort: ModuleType, model: Any, shape: list[int]) -> list[int] | None:
    """onnxruntime's output shape, or None when it refuses to run the node."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), options)
        return list(session.run(None, {"x": np.ones(shape, np.float32)})[0].shape)
    except Exception:
        return None


def _shape_inference(onnx: ModuleType, model: Any) -> list[int]:
    inferred = onnx.shape_inference.infer_shapes(model)
    return [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]


def _checked_size(path: Path) -> list[int] | None:
    """The output shape `check` gives the model's one node, or None where it refuses it as
    onnxruntime would."""
    try:
        shape = check_file(str(path)).layers[0].pooling.output_shape
    except IrpoolError as e:
        assert "onnxruntime refuses" in e.message
        return None
    return [d.lo for d in shape] if shape is not None else None


D2B = {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1}
D5 = {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_UPPER", "ceil_mode": 1}


@pytest.mark.parametrize(
    ("label", "op", "opset", "shape", "attrs"),
    [
        ("D2b", "AveragePool", 19, [1, 1, 2, 2], D2B),
        ("D2b", "MaxPool", 12, [1, 1, 2, 2], D2B),
        ("D2b", "AveragePool", 22, [1, 1, 2, 2], D2B),
        ("D5", "AveragePool", 19, [1, 1, 5], D5),
        ("D5", "AveragePool", 22, [1, 1, 5], D5),
        ("D5", "MaxPool", 12, [1, 1, 5], {**D5, "dilations": [2]}),
    ],
)
@pytest.mark.parametrize("declare", ["none", "runtime", "shape_inference"])
def test_shape_inference_note_is_what_onnx_says(
    onnx: ModuleType,
    ort: ModuleType,
    tmp_path: Path,
    label: str,
    op: str,
    opset: int,
    shape: list[int],
    attrs: dict[str, Any],
    declare: str,
) -> None:
    """The note quotes onnx's shape inference of the node (not the declared output), appears
    only when onnx and onnxruntime disagree, and names the divergence that explains it."""
    undeclared = _model(onnx, op, opset, shape, attrs)
    said = _shape_inference(onnx, undeclared)
    runtime = _onnxruntime(ort, undeclared, shape)
    assert runtime is not None
    declared = {"none": None, "runtime": runtime, "shape_inference": said}[declare]
    path = tmp_path / "m.onnx"
    onnx.save(_model(onnx, op, opset, shape, attrs, declared), str(path))
    report = check_file(str(path))
    (layer,) = report.layers
    assert [d.lo for d in layer.pooling.output_shape or ()] == runtime
    assert report.ok == (declared != said or said == runtime)
    notes = [n for n in layer.pooling.notes if "shape inference gives" in n]
    if said == runtime:
        assert not notes
        return
    (note,) = notes
    assert f"shape inference gives {said}; onnxruntime computes {runtime} ({label}" in note
    out = irpool("check", "-v", str(path))
    assert re.search(rf"\b{label}\b", out.stdout), out.stdout


def test_the_d5_cases_disagree_and_the_d2b_opset_22_case_agrees(
    onnx: ModuleType, ort: ModuleType
) -> None:
    """The measurements the test above rests on (docs/semantics.md D2b, D5)."""
    cases = [
        ("AveragePool", 19, [1, 1, 2, 2], D2B, [1, 1, 2, 2], [1, 1, 1, 1]),
        ("AveragePool", 22, [1, 1, 2, 2], D2B, [1, 1, 1, 1], [1, 1, 1, 1]),
        ("AveragePool", 19, [1, 1, 5], D5, [1, 1, 3], [1, 1, 2]),
    ]
    for op, opset, shape, attrs, said, runtime in cases:
        model = _model(onnx, op, opset, shape, attrs)
        assert _shape_inference(onnx, model) == said
        assert _onnxruntime(ort, model, shape) == runtime


def test_sizes_and_refusals_are_onnxruntimes(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    """SAME_* with a kernel shorter than the stride gives negative pads in onnxruntime, which
    only some of its kernels take: `check` gives onnxruntime's size where it computes one, and
    refuses (exit 2 in the CLI) exactly where it refuses, never claiming a size for it."""
    path = tmp_path / "m.onnx"
    seen = {"refused": 0, "computed with negative pads": 0}
    for op, opset in (("AveragePool", 11), ("AveragePool", 19), ("MaxPool", 8), ("MaxPool", 12)):
        for n in (4, 5, 6, 7):
            for k, s in ((1, 3), (2, 3), (1, 2), (2, 2), (3, 2)):
                for dilation, indices in ((1, False), (2, False), (1, True)):
                    if dilation > 1 and (op, opset) in (("AveragePool", 11), ("MaxPool", 8)):
                        continue
                    if indices and op != "MaxPool":
                        continue
                    attrs: dict[str, Any] = {"kernel_shape": [k], "strides": [s]}
                    attrs["auto_pad"] = "SAME_LOWER"
                    if dilation > 1:
                        attrs["dilations"] = [dilation]
                    model = _model(onnx, op, opset, [1, 1, n], attrs, indices=indices)
                    onnx.save(model, str(path))
                    want = _onnxruntime(ort, model, [1, 1, n])
                    got = _checked_size(path)
                    assert got == want, (op, opset, n, k, s, dilation, indices)
                    total = (-(-n // s) - 1) * s + k - n
                    if want is None:
                        seen["refused"] += 1
                    elif total < 0:
                        seen["computed with negative pads"] += 1
    assert all(seen.values()), seen


@pytest.mark.parametrize(
    "op, opset, extra",
    [
        ("AveragePool", 11, {"ceil_mode": 1, "count_include_pad": 1}),
        ("AveragePool", 11, {"count_include_pad": 1}),
        ("AveragePool", 11, {"ceil_mode": 1}),
        ("MaxPool", 12, {"storage_order": 1}),
        ("MaxPool", 12, {"ceil_mode": 1}),
    ],
)
def test_refusals_follow_the_kernel_onnxruntime_picks(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path, op: str, opset: int, extra: dict[str, int]
) -> None:
    """Which onnxruntime kernel runs a node decides whether negative SAME pads are refused
    (ceil_mode with count_include_pad, or storage_order=1, leave the MLAS path): `check`
    refuses exactly the nodes onnxruntime refuses."""
    path = tmp_path / "m.onnx"
    for n in (5, 7):
        for k, s in ((1, 3), (2, 3), (1, 2)):
            attrs: dict[str, Any] = {"kernel_shape": [k], "strides": [s], **extra}
            attrs["auto_pad"] = "SAME_UPPER"
            model = _model(onnx, op, opset, [1, 1, n], attrs)
            onnx.save(model, str(path))
            want = _onnxruntime(ort, model, [1, 1, n])
            got = _checked_size(path)
            assert got == want, (op, opset, extra, n, k, s)


def test_refused_node_is_one_line_exit_2(onnx: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    model = _model(onnx, "MaxPool", 12, [1, 1, 5], D5, declared=[1, 1, 3])
    assert _onnxruntime(ort, model, [1, 1, 5]) is None
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    out = irpool("check", "-v", str(path))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stdout + out.stderr
    assert "onnxruntime refuses" in out.stderr and "D5" in out.stderr
    assert "onnxruntime computes" not in out.stdout + out.stderr
