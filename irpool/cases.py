"""The named divergence cases of docs/semantics.md (the windowed ones, D1 to D14) as data.

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


Ints = int | tuple[int, ...]
"""A value per spatial axis: an int for 1-D layers, else a tuple."""


def _ir_list(values: Ints) -> str:
    return ", ".join(str(v) for v in (values if isinstance(values, tuple) else (values,)))


def _ir(
    op: str,
    opset: int,
    kernel: Ints,
    strides: Ints,
    pads_begin: Ints,
    pads_end: Ints,
    *,
    exclude_pad: bool | None = None,
    rounding: str | None = "floor",
    auto_pad: str | None = None,
    dilations: Ints | None = None,
    axis: int | None = None,
) -> IrLayer:
    """An OpenVINO layer from its kernel, strides, pads_begin and pads_end (per axis) and the
    other attributes, as `<data>` strings in the order the rows were measured with (lists
    written "2, 2"); `rounding` None leaves rounding_type out, `axis` comes with
    index_element_type i64 (MaxPool-8/14)."""
    from .ops import REGISTRY

    # dilations stand after strides in a max pool's rows, last in an average pool's
    max_pool = REGISTRY.select("openvino", op, opset).reduce == "max"
    data = {"strides": _ir_list(strides)}
    if max_pool and dilations is not None:
        data["dilations"] = _ir_list(dilations)
    data.update(
        pads_begin=_ir_list(pads_begin), pads_end=_ir_list(pads_end), kernel=_ir_list(kernel)
    )
    if exclude_pad is not None:
        data["exclude-pad"] = "true" if exclude_pad else "false"
    if rounding is not None:
        data["rounding_type"] = rounding
    if auto_pad is not None:
        data["auto_pad"] = auto_pad
    if not max_pool and dilations is not None:
        data["dilations"] = _ir_list(dilations)
    if axis is not None:
        data.update(index_element_type="i64", axis=str(axis))
    return IrLayer(op, opset, data)


def _onnx(
    op: str,
    opset: int,
    kernel_shape: list[int],
    strides: list[int] | None = None,
    pads: list[int] | None = None,
    *,
    dilations: list[int] | None = None,
    auto_pad: str | None = None,
    ceil: bool = False,
    include_pad: bool = False,
    storage_order: int | None = None,
) -> OnnxNode:
    """An ONNX node of the default domain with the attributes given (`ceil` is ceil_mode=1,
    `include_pad` count_include_pad=1)."""
    attrs = {
        "kernel_shape": kernel_shape,
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
        "auto_pad": auto_pad,
        "ceil_mode": 1 if ceil else None,
        "count_include_pad": 1 if include_pad else None,
        "storage_order": storage_order,
    }
    return OnnxNode(op, opset, {k: v for k, v in attrs.items() if v is not None})


def _torch(function: str, kernel_size: Any, **kwargs: Any) -> TorchCall:
    """A call of torch.nn.functional.`function` with these keyword arguments."""
    return TorchCall(function, {"kernel_size": kernel_size, **kwargs})


def _agree(outcome: Outcome, *systems: str) -> dict[str, Outcome]:
    """The same measured outcome for several systems (keys of Case.expected)."""
    return dict.fromkeys(systems, outcome)


def _case(key: str, title: str, input: Any, dtype: str = "float32", **systems: Any) -> Case:
    """A row of CASES: its input as nested lists (the shape is theirs) and the layer as each
    system writes it (openvino, onnx, torch), with what each computes (expected)."""
    return Case(key, title, input, dtype, _nested_shape(input), **systems)


_SAME_UPPER_DILATED_OPS: dict[str, tuple[str, int, str, int, dict[str, Any]]] = {
    "max": ("MaxPool", 8, "MaxPool", 12, {"axis": 0}),
    "avg": ("AvgPool", 16, "AveragePool", 19, {"exclude_pad": True}),
}
"""D4's experiment as max and as average pooling: openvino's op, opset, ONNX's op, opset, and
the openvino layer's own attributes."""


def _same_upper_dilated(key: str, title: str, reduce: str, measured: tuple[Any, Any]) -> Case:
    """A row of D4's experiment: seven inputs pooled (`reduce`: max or avg) by a kernel of 3
    dilated by 2 under SAME_UPPER; `measured` is what (openvino, onnxruntime) compute."""
    ov_op, ov_opset, onnx_op, onnx_opset, ir = _SAME_UPPER_DILATED_OPS[reduce]
    return _case(
        key,
        title,
        [[_seq(7)]],
        openvino=_ir(ov_op, ov_opset, 3, 1, 0, 0, auto_pad="same_upper", dilations=2, **ir),
        onnx=_onnx(onnx_op, onnx_opset, [3], dilations=[2], auto_pad="SAME_UPPER"),
        expected={"openvino": Outcome(measured[0]), "onnxruntime": Outcome(measured[1])},
    )


def _nested_shape(values: Any) -> tuple[int, ...]:
    shape: list[int] = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0]
    return tuple(shape)


CASES: tuple[Case, ...] = (
    _case(
        "D1",
        "include-pad divisor over the ceil overhang",
        [[_seq(6)]],
        openvino=_ir("AvgPool", 1, 3, 2, 1, 1, exclude_pad=False, rounding="ceil"),
        onnx=_onnx("AveragePool", 11, [3], [2], [1, 1], ceil=True, include_pad=True),
        torch=_torch("avg_pool1d", 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True),
        expected={
            # last window = {6, pad, overhang}: openvino 6/3, the others 6/2
            "openvino": Outcome([[[1, 3, 5, 2]]]),
            **_agree(Outcome([[[1, 3, 5, 3]]]), "onnxruntime", "torch"),
        },
    ),
    _case(
        "D1-2d",
        "include-pad divisor over the ceil overhang, 2-D (pytorch#183528)",
        [[[_seq(4, 1), _seq(4, 5), _seq(4, 9), _seq(4, 13)]]],
        openvino=_ir(
            "AvgPool", 14, (3, 3), (2, 2), (1, 1), (1, 1), exclude_pad=False, rounding="ceil_torch"
        ),
        onnx=_onnx("AveragePool", 19, [3, 3], [2, 2], [1, 1, 1, 1], ceil=True, include_pad=True),
        torch=_torch("avg_pool2d", 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True),
        expected={
            # window sums 14 30 12 / 57 99 36 / 27 45 16; openvino divides all by 9
            "openvino": Outcome([[[[14 / 9, 30 / 9, 12 / 9], [57 / 9, 11, 4], [3, 5, 16 / 9]]]]),
            **_agree(
                Outcome([[[[14 / 9, 30 / 9, 2], [57 / 9, 11, 6], [4.5, 7.5, 4]]]]),
                "onnxruntime",
                "torch",
            ),
        },
    ),
    _case(
        "D1c",
        "openvino's include-pad switch is global: padding on H makes W's overhang count",
        [[[[1.0] * 5] * 3]],
        openvino=_ir(
            "AvgPool", 1, (3, 2), (1, 2), (1, 0), (1, 0), exclude_pad=False, rounding="ceil"
        ),
        onnx=_onnx("AveragePool", 11, [3, 2], [1, 2], [1, 0, 1, 0], ceil=True, include_pad=True),
        expected={
            # openvino divides every window by 6; onnxruntime by 3 x (taps within the pads)
            "openvino": Outcome([[[[4 / 6, 4 / 6, 2 / 6], [1, 1, 0.5], [4 / 6, 4 / 6, 2 / 6]]]]),
            "onnxruntime": Outcome([[[[2 / 3, 2 / 3, 2 / 3], [1, 1, 1], [2 / 3, 2 / 3, 2 / 3]]]]),
        },
    ),
    _case(
        "D1d",
        "dilated include-pad divisor over the ceil overhang",
        [[_seq(6)]],
        openvino=_ir(
            "AvgPool", 16, 2, 2, 1, 1, exclude_pad=False, rounding="ceil_torch", dilations=2
        ),
        onnx=_onnx("AveragePool", 19, [2], [2], [1, 1], dilations=[2], ceil=True, include_pad=True),
        expected={
            # last window taps {x5 = 6, position 7 beyond pads_end}: 6/2 vs 6/1
            "openvino": Outcome([[[1, 3, 5, 3]]]),
            "onnxruntime": Outcome([[[1, 3, 5, 6]]]),
        },
    ),
    _case(
        "D2",
        "last window starting in the right padding (average, padding excluded)",
        [[[1.0, 2.0]]],
        openvino=_ir("AvgPool", 1, 3, 3, 1, 1, exclude_pad=True, rounding="ceil"),
        onnx=_onnx("AveragePool", 11, [3], [3], [1, 1], ceil=True),
        torch=_torch("avg_pool1d", 3, stride=3, padding=1, ceil_mode=True, count_include_pad=False),
        expected={
            # openvino keeps a window at positions 2..4 (pad + overhang): 0/0
            "openvino": Outcome([[[1.5, NAN]]]),
            **_agree(Outcome([[[1.5]]]), "onnxruntime", "torch"),
        },
    ),
    _case(
        "D2-include",
        "last window starting in the right padding (average, padding counted)",
        [[[1.0, 2.0]]],
        openvino=_ir("AvgPool", 1, 3, 3, 1, 1, exclude_pad=False, rounding="ceil"),
        onnx=_onnx("AveragePool", 11, [3], [3], [1, 1], ceil=True, include_pad=True),
        torch=_torch("avg_pool1d", 3, stride=3, padding=1, ceil_mode=True, count_include_pad=True),
        expected={
            "openvino": Outcome([[[1.0, 0.0]]]),
            **_agree(Outcome([[[1.0]]]), "onnxruntime", "torch"),
        },
    ),
    _case(
        "D2-max",
        "last window starting in the right padding (max)",
        [[[1.0, 2.0]]],
        openvino=_ir("MaxPool", 8, 3, 3, 1, 1, rounding="ceil", dilations=1, axis=0),
        onnx=_onnx("MaxPool", 12, [3], [3], [1, 1], ceil=True),
        torch=_torch("max_pool1d", 3, stride=3, padding=1, ceil_mode=True, return_indices=True),
        expected={
            "openvino": Outcome([[[2.0, F32_LOWEST]]], [[[1, 0]]]),
            **_agree(Outcome([[[2.0]]], [[[1]]]), "onnxruntime", "torch"),
        },
    ),
    # openvino pads 2/2 (k_eff 5): 7 outputs; onnxruntime pads 1/1 (k 3): 5 outputs
    _same_upper_dilated(
        "D4",
        "SAME_UPPER with dilations: pads from the dilated or the undilated kernel",
        "max",
        ([[[3, 4, 5, 6, 7, 6, 7]]], [[[4, 5, 6, 7, 6]]]),
    ),
    _same_upper_dilated(
        "D4-avg",
        "SAME_UPPER with dilations, average",
        "avg",
        ([[[2, 3, 3, 4, 5, 5, 6]]], [[[3, 3, 4, 5, 5]]]),
    ),
    _case(
        "D5",
        "SAME_UPPER with ceil and a kernel smaller than the stride",
        [[_seq(5)]],
        openvino=_ir(
            "AvgPool", 1, 1, 3, 0, 0, exclude_pad=True, rounding="ceil", auto_pad="same_upper"
        ),
        onnx=_onnx("AveragePool", 19, [1], [3], auto_pad="SAME_UPPER", ceil=True),
        expected={
            # openvino keeps a third window at position 6, beyond the input: 0 / (5 - 6) = -0
            "openvino": Outcome([[[1, 4, -0.0]]]),
            "onnxruntime": Outcome([[[1, 4]]]),
        },
        note="onnxruntime's SAME pads are -1 here; AveragePool-7..18 and MaxPool refuse them "
        "('padding values must be non-negative')",
    ),
    _case(
        "D6",
        "MaxPool storage_order=1: column-major indices",
        [[[[0.0, 9, 2, 3], [8, 5, 6, 7]]]],
        onnx=_onnx("MaxPool", 12, [1, 2], [1, 2], storage_order=1),
        torch=_torch("max_pool2d", (1, 2), stride=(1, 2), return_indices=True),
        expected={
            "onnxruntime": Outcome([[[[9, 3], [8, 7]]]], [[[[2, 6], [1, 7]]]]),
            "torch": Outcome([[[[9, 3], [8, 7]]]], [[[[1, 3], [4, 7]]]]),
        },
    ),
    _case(
        "D7",
        "index range: flat over the tensor (ONNX, openvino axis=0) or per plane (axis=2)",
        [
            [
                [[float(9 * p + 3 * r + c) for c in range(3)] for r in range(3)]
                for p in (2 * n, 2 * n + 1)
            ]
            for n in range(2)
        ],
        openvino=_ir("MaxPool", 8, (2, 2), (2, 2), (1, 1), (0, 0), dilations=(1, 1), axis=2),
        onnx=_onnx("MaxPool", 12, [2, 2], [2, 2], [1, 1, 0, 0]),
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
    _case(
        "D8",
        "NaN in MaxPool",
        [[[NAN, 1.0, 3.0, NAN]]],
        openvino=_ir("MaxPool", 8, 2, 1, 0, 0, dilations=1, axis=0),
        onnx=_onnx("MaxPool", 12, [2], [1]),
        torch=_torch("max_pool1d", 2, stride=1, return_indices=True),
        expected={
            "openvino": Outcome([[[1, 3, 3]]], [[[1, 2, 2]]]),
            "onnxruntime": Outcome([[[NAN, 3, 3]]], [[[0, 2, 2]]]),
            "torch": Outcome([[[NAN, 3, NAN]]], [[[0, 2, 3]]]),
        },
        note="onnxruntime's kernels without the Indices output treat NaN differently again",
    ),
    _case(
        "D9",
        "integer AvgPool: half to even (openvino) or truncation (PyTorch int64)",
        [[[0, 1, 1, 2, 2, 3, 3, 4, -1, -2, -2, -3]]],
        dtype="int64",
        openvino=_ir("AvgPool", 1, 2, 2, 0, 0, exclude_pad=True, rounding=None),
        onnx=_onnx("AveragePool", 11, [2], [2]),
        torch=_torch("avg_pool1d", 2, stride=2),
        expected={
            # means 0.5 1.5 2.5 3.5 -1.5 -2.5
            "openvino": Outcome([[[0, 2, 2, 4, -2, -2]]]),
            "torch": Outcome([[[0, 1, 2, 3, -1, -2]]]),
            "onnxruntime": Outcome(refuses="no integer AveragePool kernel"),
        },
    ),
    _case(
        "D11",
        "pads >= kernel",
        [[[1.0, 2.0, 3.0]]],
        openvino=_ir("MaxPool", 1, 2, 1, 2, 0),
        onnx=_onnx("MaxPool", 12, [2], [1], [2, 0]),
        expected={
            # the first window lies wholly in the padding
            "openvino": Outcome([[[F32_LOWEST, 1, 2, 3]]]),
            "onnxruntime": Outcome(refuses="Pad should be smaller than kernel"),
        },
    ),
    _case(
        "D14",
        "VALID with ceil: three outputs, not the spec formula's two",
        [[_seq(5)]],
        openvino=_ir("AvgPool", 1, 2, 2, 0, 0, exclude_pad=True, rounding="ceil", auto_pad="valid"),
        onnx=_onnx("AveragePool", 11, [2], [2], auto_pad="VALID", ceil=True),
        expected={
            **_agree(Outcome([[[1.5, 3.5, 5]]]), "openvino", "onnxruntime"),
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
