"""ONNX pooling ops as rows of data: AveragePool 1/7/10/11/19/22, MaxPool 1/8/10/11/12/22, and
com.microsoft QLinearAveragePool-1.

Sources: the ONNX operator Changelog (what each version added), onnxruntime's pooling kernels
and measurements with onnxruntime 1.31 (docs/semantics.md).  Attribute values arrive typed
(ints, int, string), as onnx stores them.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import SpecError
from ..families.lp import GLOBAL_LP, LP
from ..families.qglobal import QGLOBAL
from ..families.reduce import GLOBAL_AVERAGE, GLOBAL_MAX
from ..families.unpool import UNPOOL
from ..model import Layer
from .onnx_attrs import opset_of, read
from .onnx_attrs import pads_from_onnx as pads_from_onnx
from .onnx_attrs import params as params
from .onnx_attrs import spec_output_size as spec_output_size
from .registry import REGISTRY, Attr, OpSpec, Registry, Selected

AUTO_PAD = Attr.enum("auto_pad", "NOTSET SAME_UPPER SAME_LOWER VALID")
KERNEL = Attr("kernel_shape", "kernel", "ints")
PADS = Attr("pads", "pads", "ints", default=None, minimum=0)
STRIDES = Attr("strides", "strides", "ints", default=None, minimum=1)
COUNT_PAD = Attr("count_include_pad", "count_include_pad", "int", default=0)
CEIL = Attr("ceil_mode", "ceil_mode", "int", default=0)
DILATIONS = Attr("dilations", "dilations", "ints", default=None, minimum=1)
STORAGE = Attr("storage_order", "storage_order", "int", default=0)
CHANNELS_LAST = Attr("channels_last", "channels_last", "int", default=0)

FLOATS = ("f16", "f32", "f64")

AVERAGE_POOL_1 = OpSpec(
    "ai.onnx",
    "AveragePool",
    1,
    (AUTO_PAD, KERNEL, PADS, STRIDES),
    reduce="mean",
    roundings=("floor",),
    dtypes=FLOATS,
    source="Changelog AveragePool-1",
    read=lambda spec, layer, rank: read(spec, layer, rank),
)
AVERAGE_POOL_7 = AVERAGE_POOL_1.revised(
    7, "Changelog AveragePool-7 (+count_include_pad)", COUNT_PAD
)
AVERAGE_POOL_10 = AVERAGE_POOL_7.revised(
    10, "Changelog AveragePool-10 (+ceil_mode)", CEIL, roundings=("floor", "ceil")
)
AVERAGE_POOL_11 = AVERAGE_POOL_10.revised(11, "Changelog AveragePool-11 (docs)")
AVERAGE_POOL_19 = AVERAGE_POOL_11.revised(19, "Changelog AveragePool-19 (+dilations)", DILATIONS)
AVERAGE_POOL_22 = AVERAGE_POOL_19.revised(
    22, "Changelog AveragePool-22 (+bfloat16, right-pad rule)", dtypes=(*FLOATS, "bf16")
)

MAX_POOL_1 = replace(AVERAGE_POOL_1, family="MaxPool", reduce="max", source="Changelog MaxPool-1")
MAX_POOL_8 = MAX_POOL_1.revised(
    8, "Changelog MaxPool-8 (+storage_order, Indices)", STORAGE, outputs=2
)
MAX_POOL_10 = MAX_POOL_8.revised(
    10, "Changelog MaxPool-10", CEIL, DILATIONS, roundings=("floor", "ceil")
)
MAX_POOL_11 = MAX_POOL_10.revised(11, "Changelog MaxPool-11 (docs)")
MAX_POOL_12 = MAX_POOL_11.revised(
    12, "Changelog MaxPool-12 (+int8, uint8)", dtypes=(*FLOATS, "i8", "u8")
)
MAX_POOL_22 = MAX_POOL_12.revised(
    22, "Changelog MaxPool-22 (+bfloat16, right-pad rule)", dtypes=(*FLOATS, "i8", "u8", "bf16")
)

QLINEAR_AVERAGE_POOL_1 = OpSpec(
    "com.microsoft",
    "QLinearAveragePool",
    1,
    (AUTO_PAD, KERNEL, PADS, STRIDES, COUNT_PAD, CEIL, CHANNELS_LAST),
    reduce="mean",
    roundings=("floor", "ceil"),
    dtypes=("u8", "i8"),
    divisor_override="full",
    source="onnxruntime contrib op; qlinear_pool.cc (count_include_pad divides by the kernel)",
    kind="qlinear",
    read=lambda spec, layer, rank: read(spec, layer, rank),
)

GLOBAL_AVERAGE_POOL_1 = OpSpec(
    "ai.onnx",
    "GlobalAveragePool",
    1,
    dtypes=FLOATS,
    source="Changelog GlobalAveragePool-1; onnxruntime's MLAS global kernel (measured)",
    kind="family",
    path=GLOBAL_AVERAGE,
)
GLOBAL_AVERAGE_POOL_22 = replace(
    GLOBAL_AVERAGE_POOL_1, since=22, dtypes=(*FLOATS, "bf16"), source="Changelog (+bfloat16)"
)
GLOBAL_MAX_POOL_1 = replace(
    GLOBAL_AVERAGE_POOL_1,
    family="GlobalMaxPool",
    path=GLOBAL_MAX,
    source="Changelog GlobalMaxPool-1",
)
GLOBAL_MAX_POOL_22 = replace(
    GLOBAL_MAX_POOL_1, since=22, dtypes=(*FLOATS, "bf16"), source="Changelog (+bfloat16)"
)

P_FLOAT = Attr("p", "p", "str", default=2.0, note="a float in version 1")
P_INT = Attr("p", "p", "int", default=2)
KERNEL_OPTIONAL = replace(KERNEL, default=None)

LP_POOL_1 = OpSpec(
    "ai.onnx",
    "LpPool",
    1,
    (AUTO_PAD, KERNEL_OPTIONAL, PADS, STRIDES, P_FLOAT),
    dtypes=FLOATS,
    source="Changelog LpPool-1 (p float); onnxruntime has no kernel",
    kind="family",
    path=LP,
)
LP_POOL_2 = replace(
    LP_POOL_1, since=2, attrs=(AUTO_PAD, KERNEL, PADS, STRIDES, P_INT), source="Changelog LpPool-2"
)
LP_POOL_11 = replace(LP_POOL_2, since=11, source="Changelog LpPool-11 (docs)")
LP_POOL_18 = replace(
    LP_POOL_11,
    since=18,
    attrs=(*LP_POOL_11.attrs, CEIL, DILATIONS),
    source="Changelog LpPool-18 (+ceil_mode, dilations)",
)
LP_POOL_22 = replace(LP_POOL_18, since=22, dtypes=(*FLOATS, "bf16"), source="Changelog (+bfloat16)")
GLOBAL_LP_POOL_1 = OpSpec(
    "ai.onnx",
    "GlobalLpPool",
    1,
    (P_FLOAT,),
    dtypes=FLOATS,
    source="Changelog GlobalLpPool-1 (p float); onnxruntime has no kernel",
    kind="family",
    path=GLOBAL_LP,
)
GLOBAL_LP_POOL_2 = replace(
    GLOBAL_LP_POOL_1, since=2, attrs=(P_INT,), source="Changelog GlobalLpPool-2"
)
GLOBAL_LP_POOL_22 = replace(
    GLOBAL_LP_POOL_2, since=22, dtypes=(*FLOATS, "bf16"), source="Changelog (+bfloat16)"
)

MAX_UNPOOL_9 = OpSpec(
    "ai.onnx",
    "MaxUnpool",
    9,
    (KERNEL, PADS, STRIDES),
    dtypes=FLOATS,
    source="Changelog MaxUnpool-9; onnxruntime's Unpool.cc (measured)",
    kind="family",
    path=UNPOOL,
)
MAX_UNPOOL_11 = replace(MAX_UNPOOL_9, since=11, source="Changelog MaxUnpool-11 (docs)")
MAX_UNPOOL_22 = replace(
    MAX_UNPOOL_11, since=22, dtypes=(*FLOATS, "bf16"), source="Changelog (+bfloat16)"
)
QLINEAR_GLOBAL_AVERAGE_POOL_1 = OpSpec(
    "com.microsoft",
    "QLinearGlobalAveragePool",
    1,
    (CHANNELS_LAST,),
    dtypes=("u8", "i8"),
    source="onnxruntime contrib op; MLAS qlgavgpool.cpp (measured)",
    kind="family",
    path=QGLOBAL,
)

ONNX_OPS = (
    AVERAGE_POOL_1,
    AVERAGE_POOL_7,
    AVERAGE_POOL_10,
    AVERAGE_POOL_11,
    AVERAGE_POOL_19,
    AVERAGE_POOL_22,
    MAX_POOL_1,
    MAX_POOL_8,
    MAX_POOL_10,
    MAX_POOL_11,
    MAX_POOL_12,
    MAX_POOL_22,
    QLINEAR_AVERAGE_POOL_1,
    GLOBAL_AVERAGE_POOL_1,
    GLOBAL_AVERAGE_POOL_22,
    GLOBAL_MAX_POOL_1,
    GLOBAL_MAX_POOL_22,
    LP_POOL_1,
    LP_POOL_2,
    LP_POOL_11,
    LP_POOL_18,
    LP_POOL_22,
    GLOBAL_LP_POOL_1,
    GLOBAL_LP_POOL_2,
    GLOBAL_LP_POOL_22,
    MAX_UNPOOL_9,
    MAX_UNPOOL_11,
    MAX_UNPOOL_22,
    QLINEAR_GLOBAL_AVERAGE_POOL_1,
)


def select(op_type: str, domain: str, opset: int) -> OpSpec:
    """The row of an ONNX node: its op type in its domain at the model's opset for that domain."""
    dom = "ai.onnx" if domain in ("", "ai.onnx") else domain
    if not REGISTRY.has_family(dom, op_type):
        known = ", ".join(REGISTRY.families("ai.onnx") + REGISTRY.families("com.microsoft"))
        raise SpecError(f"{op_type!r} in domain {dom!r} is not a pooling op irpool knows; {known}")
    return REGISTRY.select(dom, op_type, opset)


def resolve(registry: Registry, layer: Layer) -> Selected | None:
    """The entry of an ONNX node: its op type in its domain at the model's opset for that
    domain; None for an op no entry has."""
    dom = "ai.onnx" if layer.domain in ("", "ai.onnx") else layer.domain
    if not registry.has_family(dom, layer.type) or registry.family_name(dom, layer.type) != (
        layer.type
    ):
        return None
    return Selected(registry.select(dom, layer.type, opset_of(layer)))


REGISTRY.add(*ONNX_OPS)
REGISTRY.resolver("onnx", resolve)

_ONNX_REDUCE = (
    "an ONNX reduction: irpool covers the reductions of OpenVINO IRs (what openvino's "
    "conversion of it computes: convert the model and check the IR) and ONNX global pooling"
)
UNHANDLED = {
    ("ai.onnx", "MaxRoiPool"): "region pooling: the windows are boxes read from a second input",
    ("ai.onnx", "RoiAlign"): "region pooling with bilinear sampling (boxes from a second input)",
    **{
        ("ai.onnx", name): _ONNX_REDUCE
        for name in (
            "ReduceMean",
            "ReduceMax",
            "ReduceMin",
            "ReduceSum",
            "ReduceL1",
            "ReduceL2",
            "ReduceProd",
            "ReduceLogSum",
            "ReduceLogSumExp",
            "ReduceSumSquare",
        )
    },
    ("com.microsoft", "NhwcMaxPool"): "onnxruntime's NHWC MaxPool contrib op (not covered)",
    ("com.microsoft", "MaxpoolWithMask"): "onnxruntime's masked MaxPool contrib op (not covered)",
}
for (_domain, _name), _why in UNHANDLED.items():
    REGISTRY.unhandled(_domain, _name, _why)
