"""FakeQuantize-1 (openvino) and the pooling layers the CPU plugin's low-precision
transformations (LPT) run on integer codes (irpool/lpt.py has the arithmetic).

`LPT_POOLS` says, per op version, how LPT treats a pooling layer whose input is a
FakeQuantize's output (measured with openvino 2026.4.1 from `get_runtime_model()`: node types,
precisions, originalLayersNames):

* AvgPool-1/14 (not rounding_type=ceil_torch, which stays in float32): a u8/i8 Pooling node
  with an f32 output, the dequantization after it, a following FakeQuantize fused into it;
* MaxPool-1/8 (every dequantization scale positive): u8/i8 in and out, dequantization after;
* ReduceMean-1, ReduceMax-1 (max: scales positive): a Reduce node on codes, dequantization or
  a following FakeQuantize fused into it.
"""

from __future__ import annotations

from typing import Literal

from .registry import REGISTRY, OpSpec

FAKE_QUANTIZE_1 = OpSpec(
    "openvino", "FakeQuantize", 1, kind="glue", role="quantize", source="fake-quantize-1.rst"
)
REGISTRY.add(FAKE_QUANTIZE_1)

LptKind = Literal["avg", "max", "reduce_mean", "reduce_max"]

LPT_POOLS: dict[tuple[str, int], LptKind] = {
    ("AvgPool", 1): "avg",
    ("AvgPool", 14): "avg",
    ("MaxPool", 1): "max",
    ("MaxPool", 8): "max",
    ("MaxPool", 14): "max",
    ("ReduceMean", 1): "reduce_mean",
    ("ReduceMax", 1): "reduce_max",
}
"""The pooling op versions whose LPT treatment was measured (others run in float32, as
irpool assumes and says)."""


def lpt_kind(spec: OpSpec, rounding: str | None) -> LptKind | None:
    """How LPT runs a layer of `spec` on codes (None: it does not)."""
    if spec.domain != "openvino":
        return None
    if rounding == "ceil_torch":
        return None
    return LPT_POOLS.get((spec.family, spec.since))
