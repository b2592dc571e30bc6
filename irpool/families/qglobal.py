"""com.microsoft QLinearGlobalAveragePool-1 (onnxruntime's contrib op): the mean of each
(N, C) plane of uint8/int8 data, requantised.

Measured with onnxruntime 1.32 (x86 MLAS, docs/semantics.md "QLinearGlobalAveragePool"):
acc = sum(x) - x_zero_point * S in exact int32 (S: the plane's size); scale = x_scale /
(y_scale * float(S)) in float32 (two roundings); v = float(acc) * scale in float32, clamped to
[qmin - y_zero_point, qmax - y_zero_point] in float, rounded half to even, + y_zero_point.
channels_last=1: X is (N, *spatial, C) and Y (N, 1.., C), the same arithmetic.  All five
inputs are required; refused at run time ("QLinearGlobalAveragePool parameter out of
computation range!") when S >= 2^24, scale < 2^-32 or scale >= 256.  openvino has no
conversion rule for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..conventions import Convention
from ..errors import SpecError
from ..model import Dim, Shape
from . import Explained, Family, FamilyParams, FamilyPlan, Values, plan_head

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec

INPUTS = ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point")


@dataclass(frozen=True, kw_only=True)
class QGlobalParams(FamilyParams):
    channels_last: bool


@dataclass(frozen=True, kw_only=True)
class QGlobalPlan(FamilyPlan):
    channels_last: bool
    size: int
    """S: elements of each plane."""


class QGlobal(Family):
    name = "qglobal"
    title = "quantised global average pooling"
    data_inputs = (0, 1, 2, 3, 4)
    conventions = ("onnx",)

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> QGlobalParams:
        from ..ops import onnx_attrs as onnx_ops

        known = onnx_ops.read_attrs(spec, layer.attrs)
        names = [p.names[0] if p.names else "" for p in layer.inputs]
        if len(names) != 5:
            raise SpecError(
                "onnxruntime refuses: 'Node with schema(com.microsoft::QLinearGlobalAveragePool:"
                f"1) has input size {len(names)} not in range [min=5, max=5]'; expected "
                f"{', '.join(INPUTS)}"
            )
        for k, name in enumerate(names[1:], start=1):
            if not name:
                raise SpecError(
                    f"QLinearGlobalAveragePool input {k} ({INPUTS[k]}) is empty; onnxruntime "
                    "refuses it ('input ... is marked single but has an empty string')"
                )
        if rank is not None and rank < 3:
            raise SpecError(f"{spec.label} takes (N, C, *spatial); got rank {rank}")
        return QGlobalParams(op=spec.label, channels_last=bool(known.get("channels_last", 0)))

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        assert isinstance(params, QGlobalParams)
        one = Dim.of(1)
        if params.channels_last:
            out = (shape[0], *(one for _ in shape[1:-1]), shape[-1])
        else:
            out = (shape[0], shape[1], *(one for _ in shape[2:]))
        return out, tuple("global: the whole plane, 1" for _ in shape[2:])

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> QGlobalPlan:
        assert isinstance(params, QGlobalParams)
        if not convention.onnxruntime_kernels:
            who = (
                "openvino has no conversion rule for it"
                if convention.onnx_front_end
                else ("PyTorch has no such op")
            )
            raise SpecError(
                f"{params.op} is onnxruntime's contrib op: {who}; only the onnx convention applies"
            )
        if dtype not in ("uint8", "int8"):
            raise SpecError(f"{params.op} takes uint8 or int8 data, not {dtype}")
        if len(shape) < 3:
            raise SpecError(f"{params.op} takes (N, C, *spatial); got rank {len(shape)}")
        spatial = shape[1:-1] if params.channels_last else shape[2:]
        if params.channels_last:
            out = (shape[0], *(1 for _ in spatial), shape[-1])
        else:
            out = (shape[0], shape[1], *(1 for _ in spatial))
        return QGlobalPlan(
            **plan_head(params, "onnx", shape, out, dtype, "int32"),
            channels_last=params.channels_last,
            size=math.prod(spatial),
        )

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, QGlobalPlan)
        lines = [
            f"each {'(N, C) plane' if not plan.channels_last else 'channel (channels_last=1)'} "
            f"of S = {plan.size} elements: acc = sum(x) - x_zero_point * S (exact int32)",
            "scale = x_scale / (y_scale * S) in float32; y = round_half_even(clamp(acc * scale, "
            "qmin - y_zero_point, qmax - y_zero_point)) + y_zero_point",
            "refused at run time when S >= 2^24, scale < 2^-32 or scale >= 256",
        ]
        data = {
            "family": "qglobal",
            "reduce": "mean",
            "channels_last": plan.channels_last,
            "plane_size": plan.size,
        }
        return Explained(lines, data)


QGLOBAL = QGlobal()
