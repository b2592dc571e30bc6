"""`run` on quantized nets: FakeQuantize layers, and the pooling layers openvino's CPU plugin
runs on integer codes after its low-precision transformations (irpool/lpt.py, ops/quantize.py).

A tensor that left a FakeQuantize carries a `Quant` beside its float32 value: LPT's
decomposition and the codes.  A pooling layer LPT transforms pools the codes; its output
carries the pooled codes with the dequantization still to apply (`moved`), which a following
FakeQuantize absorbs into its input range (as LPT fuses it) and every other reader sees
applied, (codes - shift) * scale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import lpt
from .errors import SpecError
from .model import Layer

Array = npt.NDArray[Any]
F32 = np.float32


@dataclass(frozen=True)
class Quant:
    """What LPT made of a tensor that a FakeQuantize quantized."""

    d: lpt.Decomposition
    codes: Array
    """float32: the integer codes (or, after an AvgPool/ReduceMean, their means)."""
    moved: bool = False
    """The dequantization was moved after a pooling layer: `codes` are that layer's output."""
    post_op: bool = False
    """A following FakeQuantize becomes a post-op of that layer's node (fma arithmetic)."""
    source: str = ""
    """The FakeQuantize layer's label."""

    @property
    def integral(self) -> bool:
        """The codes are integers (a FakeQuantize's, or a MaxPool's of them): a next pooling
        layer LPT transforms pools them in turn (the dequantization moves after it too)."""
        return not self.moved or not self.post_op


def levels_of(layer: Layer) -> int:
    raw = layer.data.get("levels")
    try:
        return int(str(raw).strip())
    except (TypeError, ValueError):
        raise SpecError(
            f'FakeQuantize levels {raw!r} is not an integer; expected levels="256"',
            layer.where(),
        ) from None


def fake_quantize(
    layer: Layer,
    x: Array,
    quant: Quant | None,
    ranges: list[Array],
    plugin: bool,
    quantize: Any = lpt.cpu_fake_quantize,
) -> tuple[Array, Quant | None, str | None]:
    """A FakeQuantize layer: its float32 output, what LPT makes of it (None: nothing), and a
    note where irpool's reading is not measured.  `quantize`: lpt.cpu_fake_quantize, or a
    function that gives its bits (compile_model's compiled kernel)."""
    levels = levels_of(layer)
    if x.dtype != np.float32:
        x = np.asarray(x, dtype=F32)
    p = lpt.fq_params(levels, ranges, x.ndim)
    if not plugin:
        return lpt.reference_fake_quantize(x, p), None, None
    note = None
    if quant is not None and quant.moved:
        # LPT fused the dequantization before it into its input range
        fused = lpt.fused_ranges(p, quant.d)
        value = quantize(quant.codes, fused, quant.post_op, fma_out=True)
        src, p_in = quant.codes, fused
        post = quant.post_op
    else:
        value = quantize(x, p)
        src, p_in, post = x, p, False
    d = lpt.decompose(p)
    if d is None:
        note = (
            f'layer "{layer.label}" (FakeQuantize-1): levels={levels}: irpool models LPT only for '
            "255 and 256 levels; a pooling layer after it is computed in float32"
        )
        return value, None, note
    to_codes = lpt.FakeQuantizeParams(
        levels, p_in.il, p_in.ih, np.asarray(F32(d.lo)), np.asarray(F32(d.hi))
    )
    codes = quantize(src, to_codes, post)
    return value, Quant(d, codes, source=layer.label), note


def pooled(kind: str, quant: Quant, pooled_codes: Array) -> tuple[Array, Quant]:
    """A transformed pooling layer's output: the dequantized value every reader but a
    FakeQuantize sees, and the pooled codes with the dequantization pending."""
    post_op = kind != "max"
    d = quant.d.for_rank(pooled_codes.ndim)
    return d.dequantize(pooled_codes), Quant(
        d, pooled_codes, moved=True, post_op=post_op, source=quant.source
    )


def average_codes(codes: Array, plan: Any, means: Array) -> Array:
    """An AvgPool of codes: the window sums (exact: recovered from the float32 means of the
    integer codes) times the float32 reciprocal of each window's count."""
    from .kernel.windows import divisor

    div = np.asarray(divisor(plan.via or plan), dtype=np.float64)
    with np.errstate(all="ignore"):
        sums = np.rint(np.asarray(means, dtype=np.float64) * div)
        sums = np.where(np.isfinite(sums), sums, 0.0)
        return lpt.mean_of_codes(sums.astype(F32), div)


def reduce_codes(kind: str, codes: Array, axes: tuple[int, ...], keep: bool, count: int) -> Array:
    """ReduceMean (sum / count in float32) or ReduceMax of codes."""
    if kind == "reduce_max":
        return np.asarray(np.max(codes, axis=axes, keepdims=keep), dtype=F32)
    sums = np.asarray(np.sum(codes, axis=axes, keepdims=keep, dtype=np.float64))
    return lpt.reduce_mean_of_codes(sums, count)
