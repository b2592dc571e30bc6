"""The named divergence cases (D1-D15 of docs/semantics.md) as data.

Each case is one small input and the same pooling written for each system that can express it:
an OpenVINO IR layer, an ONNX node, a PyTorch call.  `expected` holds what each system computes,
measured (openvino 2026.4 CPU, onnxruntime 1.31, torch 2.13) and checked by hand arithmetic in
the comments.  The test suite checks irpool's conventions against these values and, where the
runtimes are installed, the runtimes against them; `irpool fixtures --preset corners` and
docs/divergences.md are generated from the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .frontends.ir_writer import NetBuilder

NAN = math.nan
F32_LOWEST = -3.4028234663852886e38


@dataclass(frozen=True)
class IrLayer:
    """An OpenVINO pooling layer: type, opset and `<data>` attribute strings (and, for the
    pooling families, its constant inputs after the data: element type and values)."""

    type: str
    opset: int
    data: Mapping[str, str]
    consts: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class OnnxNode:
    op: str
    opset: int
    attrs: Mapping[str, Any]
    domain: str = ""


@dataclass(frozen=True)
class TorchCall:
    function: str
    kwargs: Mapping[str, Any]


@dataclass(frozen=True)
class Outcome:
    """What one system computes: values (nested lists), optional indices, or a refusal."""

    values: Any = None
    indices: Any = None
    refuses: str | None = None


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    input: Any
    dtype: str
    shape: tuple[int, ...]
    openvino: IrLayer | None = None
    onnx: OnnxNode | None = None
    torch: TorchCall | None = None
    expected: Mapping[str, Outcome] = field(default_factory=dict)
    note: str = ""


def _seq(n: int, start: int = 1) -> list[float]:
    return [float(v) for v in range(start, start + n)]


CASES: tuple[Case, ...] = (
    Case(
        "D1",
        "include-pad divisor over the ceil overhang",
        input=[[_seq(6)]],
        dtype="float32",
        shape=(1, 1, 6),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "2",
                "pads_begin": "1",
                "pads_end": "1",
                "kernel": "3",
                "exclude-pad": "false",
                "rounding_type": "ceil",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            11,
            {
                "kernel_shape": [3],
                "strides": [2],
                "pads": [1, 1],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
        ),
        torch=TorchCall(
            "avg_pool1d",
            {
                "kernel_size": 3,
                "stride": 2,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": True,
            },
        ),
        expected={
            # last window = {6, pad, overhang}: openvino 6/3, the others 6/2
            "openvino": Outcome([[[1, 3, 5, 2]]]),
            "onnxruntime": Outcome([[[1, 3, 5, 3]]]),
            "torch": Outcome([[[1, 3, 5, 3]]]),
        },
    ),
    Case(
        "D1-2d",
        "include-pad divisor over the ceil overhang, 2-D (pytorch#183528)",
        input=[[[_seq(4, 1), _seq(4, 5), _seq(4, 9), _seq(4, 13)]]],
        dtype="float32",
        shape=(1, 1, 4, 4),
        openvino=IrLayer(
            "AvgPool",
            14,
            {
                "strides": "2, 2",
                "pads_begin": "1, 1",
                "pads_end": "1, 1",
                "kernel": "3, 3",
                "exclude-pad": "false",
                "rounding_type": "ceil_torch",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            19,
            {
                "kernel_shape": [3, 3],
                "strides": [2, 2],
                "pads": [1, 1, 1, 1],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
        ),
        torch=TorchCall(
            "avg_pool2d",
            {
                "kernel_size": 3,
                "stride": 2,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": True,
            },
        ),
        expected={
            # window sums 14 30 12 / 57 99 36 / 27 45 16; openvino divides all by 9
            "openvino": Outcome([[[[14 / 9, 30 / 9, 12 / 9], [57 / 9, 11, 4], [3, 5, 16 / 9]]]]),
            "onnxruntime": Outcome([[[[14 / 9, 30 / 9, 2], [57 / 9, 11, 6], [4.5, 7.5, 4]]]]),
            "torch": Outcome([[[[14 / 9, 30 / 9, 2], [57 / 9, 11, 6], [4.5, 7.5, 4]]]]),
        },
    ),
    Case(
        "D1c",
        "openvino's include-pad switch is global: padding on H makes W's overhang count",
        input=[[[[1.0] * 5] * 3]],
        dtype="float32",
        shape=(1, 1, 3, 5),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "1, 2",
                "pads_begin": "1, 0",
                "pads_end": "1, 0",
                "kernel": "3, 2",
                "exclude-pad": "false",
                "rounding_type": "ceil",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            11,
            {
                "kernel_shape": [3, 2],
                "strides": [1, 2],
                "pads": [1, 0, 1, 0],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
        ),
        expected={
            # openvino divides every window by 6; onnxruntime by 3 x (taps within the pads)
            "openvino": Outcome([[[[4 / 6, 4 / 6, 2 / 6], [1, 1, 0.5], [4 / 6, 4 / 6, 2 / 6]]]]),
            "onnxruntime": Outcome([[[[2 / 3, 2 / 3, 2 / 3], [1, 1, 1], [2 / 3, 2 / 3, 2 / 3]]]]),
        },
    ),
    Case(
        "D1d",
        "dilated include-pad divisor over the ceil overhang",
        input=[[_seq(6)]],
        dtype="float32",
        shape=(1, 1, 6),
        openvino=IrLayer(
            "AvgPool",
            16,
            {
                "strides": "2",
                "pads_begin": "1",
                "pads_end": "1",
                "kernel": "2",
                "exclude-pad": "false",
                "rounding_type": "ceil_torch",
                "dilations": "2",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            19,
            {
                "kernel_shape": [2],
                "strides": [2],
                "pads": [1, 1],
                "dilations": [2],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
        ),
        expected={
            # last window taps {x5 = 6, position 7 beyond pads_end}: 6/2 vs 6/1
            "openvino": Outcome([[[1, 3, 5, 3]]]),
            "onnxruntime": Outcome([[[1, 3, 5, 6]]]),
        },
    ),
    Case(
        "D2",
        "last window starting in the right padding (average, padding excluded)",
        input=[[[1.0, 2.0]]],
        dtype="float32",
        shape=(1, 1, 2),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "3",
                "pads_begin": "1",
                "pads_end": "1",
                "kernel": "3",
                "exclude-pad": "true",
                "rounding_type": "ceil",
            },
        ),
        onnx=OnnxNode(
            "AveragePool", 11, {"kernel_shape": [3], "strides": [3], "pads": [1, 1], "ceil_mode": 1}
        ),
        torch=TorchCall(
            "avg_pool1d",
            {
                "kernel_size": 3,
                "stride": 3,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": False,
            },
        ),
        expected={
            # openvino keeps a window at positions 2..4 (pad + overhang): 0/0
            "openvino": Outcome([[[1.5, NAN]]]),
            "onnxruntime": Outcome([[[1.5]]]),
            "torch": Outcome([[[1.5]]]),
        },
    ),
    Case(
        "D2-include",
        "last window starting in the right padding (average, padding counted)",
        input=[[[1.0, 2.0]]],
        dtype="float32",
        shape=(1, 1, 2),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "3",
                "pads_begin": "1",
                "pads_end": "1",
                "kernel": "3",
                "exclude-pad": "false",
                "rounding_type": "ceil",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            11,
            {
                "kernel_shape": [3],
                "strides": [3],
                "pads": [1, 1],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
        ),
        torch=TorchCall(
            "avg_pool1d",
            {
                "kernel_size": 3,
                "stride": 3,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": True,
            },
        ),
        expected={
            "openvino": Outcome([[[1.0, 0.0]]]),
            "onnxruntime": Outcome([[[1.0]]]),
            "torch": Outcome([[[1.0]]]),
        },
    ),
    Case(
        "D2-max",
        "last window starting in the right padding (max)",
        input=[[[1.0, 2.0]]],
        dtype="float32",
        shape=(1, 1, 2),
        openvino=IrLayer(
            "MaxPool",
            8,
            {
                "strides": "3",
                "dilations": "1",
                "pads_begin": "1",
                "pads_end": "1",
                "kernel": "3",
                "rounding_type": "ceil",
                "index_element_type": "i64",
                "axis": "0",
            },
        ),
        onnx=OnnxNode(
            "MaxPool", 12, {"kernel_shape": [3], "strides": [3], "pads": [1, 1], "ceil_mode": 1}
        ),
        torch=TorchCall(
            "max_pool1d",
            {
                "kernel_size": 3,
                "stride": 3,
                "padding": 1,
                "ceil_mode": True,
                "return_indices": True,
            },
        ),
        expected={
            "openvino": Outcome([[[2.0, F32_LOWEST]]], [[[1, 0]]]),
            "onnxruntime": Outcome([[[2.0]]], [[[1]]]),
            "torch": Outcome([[[2.0]]], [[[1]]]),
        },
    ),
    Case(
        "D4",
        "SAME_UPPER with dilations: pads from the dilated or the undilated kernel",
        input=[[_seq(7)]],
        dtype="float32",
        shape=(1, 1, 7),
        openvino=IrLayer(
            "MaxPool",
            8,
            {
                "strides": "1",
                "dilations": "2",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "3",
                "rounding_type": "floor",
                "auto_pad": "same_upper",
                "index_element_type": "i64",
                "axis": "0",
            },
        ),
        onnx=OnnxNode(
            "MaxPool", 12, {"kernel_shape": [3], "dilations": [2], "auto_pad": "SAME_UPPER"}
        ),
        expected={
            # openvino pads 2/2 (k_eff 5): 7 outputs; onnxruntime pads 1/1 (k 3): 5 outputs
            "openvino": Outcome([[[3, 4, 5, 6, 7, 6, 7]]]),
            "onnxruntime": Outcome([[[4, 5, 6, 7, 6]]]),
        },
    ),
    Case(
        "D4-avg",
        "SAME_UPPER with dilations, average",
        input=[[_seq(7)]],
        dtype="float32",
        shape=(1, 1, 7),
        openvino=IrLayer(
            "AvgPool",
            16,
            {
                "strides": "1",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "3",
                "exclude-pad": "true",
                "rounding_type": "floor",
                "auto_pad": "same_upper",
                "dilations": "2",
            },
        ),
        onnx=OnnxNode(
            "AveragePool", 19, {"kernel_shape": [3], "dilations": [2], "auto_pad": "SAME_UPPER"}
        ),
        expected={
            "openvino": Outcome([[[2, 3, 3, 4, 5, 5, 6]]]),
            "onnxruntime": Outcome([[[3, 3, 4, 5, 5]]]),
        },
    ),
    Case(
        "D5",
        "SAME_UPPER with ceil and a kernel smaller than the stride",
        input=[[_seq(5)]],
        dtype="float32",
        shape=(1, 1, 5),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "3",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "1",
                "exclude-pad": "true",
                "rounding_type": "ceil",
                "auto_pad": "same_upper",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            19,
            {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_UPPER", "ceil_mode": 1},
        ),
        expected={
            # openvino keeps a third window at position 6, beyond the input: 0 / (5 - 6) = -0
            "openvino": Outcome([[[1, 4, -0.0]]]),
            "onnxruntime": Outcome([[[1, 4]]]),
        },
        note="onnxruntime's SAME pads are -1 here; AveragePool-7..18 and MaxPool refuse them "
        "('padding values must be non-negative')",
    ),
    Case(
        "D6",
        "MaxPool storage_order=1: column-major indices",
        input=[[[[0.0, 9, 2, 3], [8, 5, 6, 7]]]],
        dtype="float32",
        shape=(1, 1, 2, 4),
        onnx=OnnxNode(
            "MaxPool", 12, {"kernel_shape": [1, 2], "strides": [1, 2], "storage_order": 1}
        ),
        torch=TorchCall(
            "max_pool2d", {"kernel_size": (1, 2), "stride": (1, 2), "return_indices": True}
        ),
        expected={
            "onnxruntime": Outcome([[[[9, 3], [8, 7]]]], [[[[2, 6], [1, 7]]]]),
            "torch": Outcome([[[[9, 3], [8, 7]]]], [[[[1, 3], [4, 7]]]]),
        },
    ),
    Case(
        "D7",
        "index range: flat over the tensor (ONNX, openvino axis=0) or per plane (axis=2)",
        input=[
            [
                [[float(9 * p + 3 * r + c) for c in range(3)] for r in range(3)]
                for p in (2 * n, 2 * n + 1)
            ]
            for n in range(2)
        ],
        dtype="float32",
        shape=(2, 2, 3, 3),
        openvino=IrLayer(
            "MaxPool",
            8,
            {
                "strides": "2, 2",
                "dilations": "1, 1",
                "pads_begin": "1, 1",
                "pads_end": "0, 0",
                "kernel": "2, 2",
                "rounding_type": "floor",
                "index_element_type": "i64",
                "axis": "2",
            },
        ),
        onnx=OnnxNode(
            "MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 0]}
        ),
        expected={
            "openvino": Outcome(None, [[[[0, 2], [6, 8]]] * 2] * 2),
            "onnxruntime": Outcome(
                None,
                [
                    [[[9 * p + 0, 9 * p + 2], [9 * p + 6, 9 * p + 8]] for p in (2 * n, 2 * n + 1)]
                    for n in range(2)
                ],
            ),
        },
    ),
    Case(
        "D8",
        "NaN in MaxPool",
        input=[[[NAN, 1.0, 3.0, NAN]]],
        dtype="float32",
        shape=(1, 1, 4),
        openvino=IrLayer(
            "MaxPool",
            8,
            {
                "strides": "1",
                "dilations": "1",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "2",
                "rounding_type": "floor",
                "index_element_type": "i64",
                "axis": "0",
            },
        ),
        onnx=OnnxNode("MaxPool", 12, {"kernel_shape": [2], "strides": [1]}),
        torch=TorchCall("max_pool1d", {"kernel_size": 2, "stride": 1, "return_indices": True}),
        expected={
            "openvino": Outcome([[[1, 3, 3]]], [[[1, 2, 2]]]),
            "onnxruntime": Outcome([[[NAN, 3, 3]]], [[[0, 2, 2]]]),
            "torch": Outcome([[[NAN, 3, NAN]]], [[[0, 2, 3]]]),
        },
        note="onnxruntime's kernels without the Indices output treat NaN differently again",
    ),
    Case(
        "D9",
        "integer AvgPool: half to even (openvino) or truncation (PyTorch int64)",
        input=[[[0, 1, 1, 2, 2, 3, 3, 4, -1, -2, -2, -3]]],
        dtype="int64",
        shape=(1, 1, 12),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "2",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "2",
                "exclude-pad": "true",
            },
        ),
        onnx=OnnxNode("AveragePool", 11, {"kernel_shape": [2], "strides": [2]}),
        torch=TorchCall("avg_pool1d", {"kernel_size": 2, "stride": 2}),
        expected={
            # means 0.5 1.5 2.5 3.5 -1.5 -2.5
            "openvino": Outcome([[[0, 2, 2, 4, -2, -2]]]),
            "torch": Outcome([[[0, 1, 2, 3, -1, -2]]]),
            "onnxruntime": Outcome(refuses="no integer AveragePool kernel"),
        },
    ),
    Case(
        "D11",
        "pads >= kernel",
        input=[[[1.0, 2.0, 3.0]]],
        dtype="float32",
        shape=(1, 1, 3),
        openvino=IrLayer(
            "MaxPool",
            1,
            {
                "strides": "1",
                "pads_begin": "2",
                "pads_end": "0",
                "kernel": "2",
                "rounding_type": "floor",
            },
        ),
        onnx=OnnxNode("MaxPool", 12, {"kernel_shape": [2], "strides": [1], "pads": [2, 0]}),
        expected={
            # the first window lies wholly in the padding
            "openvino": Outcome([[[F32_LOWEST, 1, 2, 3]]]),
            "onnxruntime": Outcome(refuses="Pad should be smaller than kernel"),
        },
    ),
    Case(
        "D14",
        "VALID with ceil: three outputs, not the spec formula's two",
        input=[[_seq(5)]],
        dtype="float32",
        shape=(1, 1, 5),
        openvino=IrLayer(
            "AvgPool",
            1,
            {
                "strides": "2",
                "pads_begin": "0",
                "pads_end": "0",
                "kernel": "2",
                "exclude-pad": "true",
                "rounding_type": "ceil",
                "auto_pad": "valid",
            },
        ),
        onnx=OnnxNode(
            "AveragePool",
            11,
            {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID", "ceil_mode": 1},
        ),
        expected={
            "openvino": Outcome([[[1.5, 3.5, 5]]]),
            "onnxruntime": Outcome([[[1.5, 3.5, 5]]]),
        },
    ),
)


def ir_net(layer: IrLayer, shape: tuple[int, ...], element_type: str, name: str = "pool") -> str:
    """IR text of a one-layer net: Parameter "x" -> the layer -> Result "values" (and Result
    "indices" for MaxPool-8/14)."""
    return ir_builder(layer, shape, element_type, name).xml()


def ir_builder(
    layer: IrLayer, shape: tuple[int, ...], element_type: str, name: str = "pool"
) -> NetBuilder:
    """The builder of `ir_net`; the layer's output tensors are named like their Results."""
    from .frontends.ir_writer import NetBuilder

    net = NetBuilder(f"case_{name}")
    x = net.parameter("x", shape, element_type)
    dims = output_dims(layer, shape)
    outputs: list[tuple[Any, str]] = [(dims, element_type)]
    names = [("values",)]
    two = _outputs(layer) == 2
    if two:
        outputs.append((dims, layer.data.get("index_element_type", "i64")))
        names.append(("indices",))
    ins = [x]
    for k, (et, values) in enumerate(layer.consts, start=1):
        from .model import numpy_dtype

        ins.append(net.const(f"{name}_input{k}", np.asarray(values, dtype=numpy_dtype(et)), et))
    refs = net.op(layer.type, f"opset{layer.opset}", name, layer.data, ins, outputs, names)
    net.result("values", refs[0])
    if two:
        net.result("indices", refs[1])
    return net


def _outputs(layer: IrLayer) -> int:
    """How many outputs the layer's op version has (its registry entry says)."""
    from .ops import openvino as ov_ops

    spec, _ = ov_ops.select(layer.type, f"opset{layer.opset}", layer.data)
    return spec.outputs


def output_dims(layer: IrLayer, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The output dims openvino infers for the layer (-1s if the layer is invalid)."""
    from .errors import IrpoolError
    from .geometry import plan
    from .ops import openvino as ov_ops

    try:
        spec, _ = ov_ops.select(layer.type, f"opset{layer.opset}", layer.data)
        if spec.path is not None:
            return _family_output(spec, layer, shape)
        return plan(ov_ops.params(spec, layer.data, len(shape)), shape, "openvino").output_shape
    except IrpoolError:
        return (-1,) * len(shape)


def _family_output(spec: Any, layer: IrLayer, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The output dims of a family layer (adaptive, reduction) under openvino's rules."""
    from .conventions import get
    from .model import Layer

    bare = Layer(
        None, layer.type, layer.type, f"opset{layer.opset}", dict(layer.data), (), (), None, None
    )
    values = {k: tuple(v) for k, (_, v) in enumerate(layer.consts, start=1)}
    params = spec.path.read(spec, bare, len(shape), values)
    out: tuple[int, ...] = spec.path.plan(params, shape, "float32", get("openvino")).output_shape
    return out


def by_key(key: str) -> Case:
    for case in CASES:
        if case.key == key:
            return case
    raise KeyError(key)
