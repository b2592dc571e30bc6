"""OpenVINO pooling ops as rows of data: AvgPool-1/14/16, MaxPool-1/8/14.

Sources: the op specs (docs.openvino.ai, seeds in the project's history) and measurements with
openvino 2026.4.1 (docs/semantics.md): the reader's defaults (exclude-pad true, pads 0, empty
dilations = 1), case-insensitive enums, and opset names mapping to op versions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ..errors import SpecError
from ..families.adaptive import ADAPTIVE
from ..families.reduce import REDUCE_L1, REDUCE_L2, REDUCE_MAX, REDUCE_MEAN, REDUCE_SUM
from ..geometry import AutoPad, PoolParams, Rounding
from ..model import Layer
from .registry import (
    REGISTRY,
    Attr,
    OpSpec,
    Registry,
    Role,
    Selected,
    odd_spelling,
    read_ir_attrs,
)

LATEST_OPSET = 16
"""Newest opset of openvino 2026.4 that holds the pooling ops (its opset17 has none)."""

STRIDES = Attr("strides", "strides", "ints")
PADS_BEGIN = Attr("pads_begin", "pads_begin", "ints", default=())
PADS_END = Attr("pads_end", "pads_end", "ints", default=())
KERNEL = Attr("kernel", "kernel", "ints")
EXCLUDE_PAD = Attr(
    "exclude-pad",
    "exclude_pad",
    "bool",
    default=True,
    note="the spec calls it required; openvino's reader defaults it to true",
)
ROUNDING = Attr.enum("rounding_type", "floor ceil ceil_torch")
AUTO_PAD = Attr.enum(
    "auto_pad",
    "explicit same_upper same_lower valid",
    note='openvino 2026.4 refuses "notset" (not a member of its PadType)',
)
DILATIONS = Attr("dilations", "dilations", "ints", default=())
INDEX_TYPE = Attr.enum("index_element_type", "i64 i32")
AXIS = Attr("axis", "axis", "int", default=0)

AVG_ATTRS = (STRIDES, PADS_BEGIN, PADS_END, KERNEL, EXCLUDE_PAD, ROUNDING, AUTO_PAD)
MAX_ATTRS = (STRIDES, PADS_BEGIN, PADS_END, KERNEL, ROUNDING, AUTO_PAD)

FLOAT_TYPES = ("f64", "f32", "f16", "bf16")
INT_TYPES = ("i8", "u8", "i32", "i64", "i16", "u16", "u32", "u64", "boolean")
"""openvino 2026.4.1 runs pooling on every numeric type; the CPU plugin holds i16, u16, u32,
u64 and i64 in i32 and boolean in u8 (measured, IR v10 and v11)."""

AVG_POOL_1 = OpSpec(
    "openvino",
    "AvgPool",
    1,
    AVG_ATTRS,
    reduce="mean",
    dtypes=FLOAT_TYPES + INT_TYPES,
    source="avg-pool-1.rst",
    read=lambda spec, layer, rank: read(spec, layer, rank),
)
AVG_POOL_14 = AVG_POOL_1.revised(14, "avg-pool-14.rst", roundings=("floor", "ceil", "ceil_torch"))
AVG_POOL_16 = AVG_POOL_14.revised(16, "avg_pool.hpp (v16)", DILATIONS)
MAX_POOL_1 = replace(
    AVG_POOL_1, family="MaxPool", attrs=MAX_ATTRS, reduce="max", source="max-pool-1.rst"
)
MAX_POOL_8 = MAX_POOL_1.revised(8, "max-pool-8.rst", DILATIONS, INDEX_TYPE, AXIS, outputs=2)
MAX_POOL_14 = MAX_POOL_8.revised(14, "max-pool-14.rst", roundings=("floor", "ceil", "ceil_torch"))

ADAPTIVE_AVG_POOL_8 = OpSpec(
    "openvino",
    "AdaptiveAvgPool",
    8,
    dtypes=FLOAT_TYPES + INT_TYPES,
    source="adaptive-avg-pool-8.rst; measured (irpool/families/adaptive.py)",
    kind="family",
    path=ADAPTIVE,
)
ADAPTIVE_MAX_POOL_8 = replace(
    ADAPTIVE_AVG_POOL_8,
    family="AdaptiveMaxPool",
    attrs=(INDEX_TYPE,),
    outputs=2,
    source="adaptive-max-pool-8.rst; measured (irpool/families/adaptive.py)",
)

KEEP_DIMS = Attr("keep_dims", "keep_dims", "bool", default=False)
REDUCE_MEAN_1 = OpSpec(
    "openvino",
    "ReduceMean",
    1,
    (KEEP_DIMS,),
    dtypes=FLOAT_TYPES + tuple(t for t in INT_TYPES if t != "boolean"),
    dtype_refusal=(
        "openvino refuses it when it reads the model: 'Element type of data input must be "
        "numeric. Got: boolean'"
    ),
    source="reduce-mean-1.rst; measured (irpool/families/reduce.py)",
    kind="family",
    path=REDUCE_MEAN,
)
REDUCE_MAX_1 = replace(
    REDUCE_MEAN_1, family="ReduceMax", path=REDUCE_MAX, source="reduce-max-1.rst"
)
REDUCE_SUM_1 = replace(
    REDUCE_MEAN_1, family="ReduceSum", path=REDUCE_SUM, source="reduce-sum-1.rst"
)
REDUCE_L1_4 = replace(
    REDUCE_MEAN_1, family="ReduceL1", since=4, path=REDUCE_L1, source="reduce-l1-4.rst"
)
REDUCE_L2_4 = replace(
    REDUCE_MEAN_1, family="ReduceL2", since=4, path=REDUCE_L2, source="reduce-l2-4.rst"
)

OPENVINO_OPS = (
    AVG_POOL_1,
    AVG_POOL_14,
    AVG_POOL_16,
    MAX_POOL_1,
    MAX_POOL_8,
    MAX_POOL_14,
    ADAPTIVE_AVG_POOL_8,
    ADAPTIVE_MAX_POOL_8,
    REDUCE_MEAN_1,
    REDUCE_MAX_1,
    REDUCE_SUM_1,
    REDUCE_L1_4,
    REDUCE_L2_4,
)

_OPSET = re.compile(r"^opset([0-9]+)$")


def known_opsets(family: str) -> str:
    rows = REGISTRY.versions("openvino", family)
    spans = []
    for i, row in enumerate(rows):
        end = rows[i + 1].since - 1 if i + 1 < len(rows) else LATEST_OPSET
        spans.append(
            f"{row.label} for opset{row.since}-{end}"
            if end > row.since
            else f"{row.label} for opset{row.since}"
        )
    return f"opset1 .. opset{LATEST_OPSET} ({'; '.join(spans)})"


def select(op_type: str, version: str | None, data: Mapping[str, str]) -> tuple[OpSpec, str | None]:
    """The op row a layer means, as openvino picks it: the newest version in the named opset.

    Without a version (a fragment pasted from the docs), the oldest version that has every
    attribute written and allows the rounding_type written; the note says so.
    """
    family = REGISTRY.family_name("openvino", op_type)
    if version is None and REGISTRY.versions("openvino", family)[0].path is not None:
        row = REGISTRY.versions("openvino", family)[-1]
        return row, f"no version attribute: read as opset{row.since} ({row.label})"
    if version is None:
        rounding = data.get("rounding_type", "floor").strip().lower()
        for row in REGISTRY.versions("openvino", family):
            if set(data) <= row.wire_names() and rounding in row.roundings:
                return row, (
                    f"no version attribute: read as opset{row.since} ({row.label}), the first "
                    "version that has every attribute written"
                )
        row = REGISTRY.versions("openvino", family)[-1]
        return row, f"no version attribute: read as opset{row.since} ({row.label})"
    m = _OPSET.match(version.strip())
    if not m or not 1 <= int(m.group(1)) <= LATEST_OPSET:
        raise SpecError(f'{family} has no version "{version}"; known: {known_opsets(family)}')
    return REGISTRY.select("openvino", family, int(m.group(1))), None


def _notes(spec: OpSpec, data: Mapping[str, str]) -> list[str]:
    """What a report notes about an IR layer's `<data>` as written: odd spellings, attributes
    its version does not have, a missing dilations or exclude-pad."""
    notes: list[str] = [
        note
        for attr in spec.attrs
        if attr.wire in data and (note := odd_spelling(attr, data[attr.wire])) is not None
    ]
    unknown = sorted(set(data) - spec.wire_names())
    if unknown:
        notes.append(
            f"attribute(s) {', '.join(unknown)} not part of {spec.label}; openvino ignores them"
        )
    if "dilations" in spec.wire_names() and not data.get("dilations", "").strip():
        # measured with openvino 2026.4.1: the shape rules read no dilations as all 1, but the
        # CPU plugin does not
        crash = (
            "crashes the CPU plugin while compiling (segmentation fault, or a hang)"
            if spec.reduce == "mean"
            else "fails in the CPU plugin when its indices output is used"
        )
        notes.append(
            f'warning: "dilations" is missing or empty; openvino 2026.4 {crash}; '
            f'write dilations="{", ".join("1" for _ in data.get("kernel", "1").split(","))}"'
        )
    if "exclude-pad" in spec.wire_names() and "exclude-pad" not in data:
        notes.append('"exclude-pad" is missing; openvino reads it as true')
    return notes


def params(spec: OpSpec, data: Mapping[str, str], rank: int | None = None) -> PoolParams:
    """PoolParams of an IR layer from its `<data>` strings; `rank` is the input rank if known."""
    values = read_ir_attrs(spec, data)
    notes = _notes(spec, data)
    rounding = str(values["rounding_type"])
    if rounding not in spec.roundings:
        raise SpecError(
            f'rounding_type "{rounding}" needs {spec.family} opset14 or later; '
            f"{spec.label} accepts {', '.join(spec.roundings)}"
        )
    auto_pad = str(values["auto_pad"])
    if auto_pad != "explicit" and any(
        v for key in ("pads_begin", "pads_end") for v in _ints(values[key])
    ):
        notes.append(f"pads_begin/pads_end are ignored with auto_pad={auto_pad}")
    kernel = _ints(values["kernel"])
    spatial = len(kernel)
    if rank is not None and not 3 <= rank <= 5:
        raise SpecError(f"Expected a 3D, 4D or 5D tensor for the input; got rank {rank}")
    if rank is not None and spatial != rank - 2:
        raise SpecError(
            f'"kernel" has {spatial} values; expected {rank - 2}, one per spatial axis of the '
            f"rank-{rank} input"
        )
    strides = _ints(values["strides"])
    begin = _ints(values["pads_begin"]) or (0,) * spatial
    end = _ints(values["pads_end"]) or (0,) * spatial
    for wire, given in (("strides", strides), ("pads_begin", begin), ("pads_end", end)):
        if len(given) != spatial:
            raise SpecError(
                f'"{wire}" has {len(given)} values; expected {spatial}, one per spatial axis '
                f"(as many as kernel)"
            )
    dilations = _ints(values.get("dilations", ())) or (1,) * spatial
    if len(dilations) != spatial:
        raise SpecError(
            f'"dilations" has {len(dilations)} values; expected {spatial}, one per spatial axis'
        )
    pads = tuple(zip(begin, end, strict=True))
    index_axis = 0
    if spec.outputs == 2:
        axis = int(str(values["axis"]))
        if rank is not None:
            if not -rank <= axis < rank:
                raise SpecError(f"Axis {axis} out of the tensor rank range [{-rank}, {rank - 1}]")
            index_axis = axis + rank if axis < 0 else axis
        else:
            index_axis = axis
    count_pad = spec.reduce == "mean" and not bool(values.get("exclude_pad", True))
    index_type = str(values.get("index_element_type", "i64"))
    return PoolParams(
        op=spec.label,
        reduce=spec.reduce or "mean",
        window=kernel,
        strides=strides,
        dilations=dilations,
        pads=pads,
        auto_pad=_auto_pad(auto_pad),
        rounding=_rounding(rounding),
        count_pad=count_pad,
        indices=spec.outputs == 2,
        index_axis=index_axis,
        index_dtype="int32" if index_type == "i32" else "int64",
        openvino_checks=True,
        dilations_written=bool(_ints(values.get("dilations", ())))
        or "dilations" not in spec.wire_names(),
        notes=tuple(notes),
    )


def read(spec: OpSpec, layer: Layer, rank: int | None) -> PoolParams:
    """PoolParams of an IR layer for an input of `rank` dims (None: not known)."""
    return params(spec, layer.data, rank)


def _ints(value: object) -> tuple[int, ...]:
    assert isinstance(value, tuple)
    return tuple(int(v) for v in value)


def _auto_pad(value: str) -> AutoPad:
    if value == "same_upper":
        return "same_upper"
    if value == "same_lower":
        return "same_lower"
    if value == "valid":
        return "valid"
    return "explicit"


def _rounding(value: str) -> Rounding:
    if value == "ceil":
        return "ceil"
    if value == "ceil_torch":
        return "ceil_torch"
    return "floor"


def resolve(registry: Registry, layer: Layer) -> Selected | None:
    """The entry of an IR layer: by its type (case-insensitive, as openvino reads it) and
    opset; None for a type no entry has."""
    if not registry.has_family("openvino", layer.type):
        return None
    if not registry.versions("openvino", layer.type)[0].pooling:
        return Selected(registry.versions("openvino", layer.type)[-1])
    spec, note = select(layer.type, layer.version, layer.data)
    return Selected(spec, note)


REGISTRY.add(*OPENVINO_OPS)
REGISTRY.resolver("ir", resolve)

_REGION = "region pooling: the windows are boxes read from a second input (ROIs), not a grid"
UNHANDLED = {
    "ROIPooling": _REGION,
    "PSROIPooling": f"{_REGION} (position-sensitive)",
    "DeformablePSROIPooling": f"{_REGION} (deformable)",
    "ROIAlign": f"{_REGION} (bilinear sampling)",
    "ROIAlignRotated": f"{_REGION} (rotated boxes, bilinear sampling)",
    "ReduceMin": "a reduction outside irpool's pooling family (Mean, Max, Sum, L1, L2)",
    "ReduceProd": "a reduction outside irpool's pooling family (Mean, Max, Sum, L1, L2)",
    "ReduceLogicalAnd": "a boolean reduction, not pooling",
    "ReduceLogicalOr": "a boolean reduction, not pooling",
}
for _name, _why in UNHANDLED.items():
    REGISTRY.unhandled("openvino", _name, _why)

POOLING_LIKE: dict[str, tuple[str, str]] = {
    "AdaptiveAvgPool": ("adaptive", "mean"),
    "AdaptiveMaxPool": ("adaptive", "max"),
    "ReduceMean": ("reduce", "mean"),
    "ReduceMax": ("reduce", "max"),
}
"""Layers the front ends make of pooling ops that are no windowed AvgPool/MaxPool: PyTorch's
adaptive pools (AdaptiveAvgPool-8, AdaptiveMaxPool-8; ReduceMean for an output size of 1) and
global pools (Keras GlobalAveragePooling/GlobalMaxPooling, ONNX GlobalAveragePool).  The
conversion audit of an IR compares them with the source framework itself."""


def pooling_like(op_type: str) -> tuple[str, str] | None:
    """('adaptive' or 'reduce', 'mean' or 'max') for such a layer type, else None."""
    return POOLING_LIKE.get(op_type)


RUNTIME_TYPES = {"Constant": "Const"}
"""The type names openvino's runtime gives nodes whose IR layer type is another name."""


def runtime_role(type_name: str) -> Role | None:
    """How `run` treats the layer an openvino runtime node of this type is (a Constant node is
    a Const layer); None for a type without an entry."""
    rows = REGISTRY.versions("openvino", RUNTIME_TYPES.get(type_name, type_name))
    return rows[0].role if rows else None
