"""FakeQuantize-1's output shape as openvino's shape inference gives it (fake_quantize.cpp,
openvino 2026.4.1, measured): the output is the data's shape; each of the four ranges must
merge into the data's shape under `auto_broadcast` (numpy: bidirectional broadcasting,
accumulated over the ranges in order, so a range [2,1,1,1] on data [1,3,4,4] is accepted;
none: the same shape), else openvino refuses the layer ("Argument shapes are inconsistent").
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Dim, Shape, format_shape


@dataclass(frozen=True)
class QuantizeShape:
    """A FakeQuantize's inferred output shape, or why openvino refuses its ranges."""

    output: Shape | None
    refusal: str | None = None
    bad_range: Shape | None = None
    """The shape of the first range openvino refuses."""


def _merge(a: Dim, b: Dim) -> Dim | None:
    """Two dims merged as broadcast_merge_into does (None: they cannot broadcast)."""
    if b.is_static and b.lo == 1:
        return a
    if a.is_static and a.lo == 1:
        return b
    lo = max(a.lo, b.lo)
    hi = b.hi if a.hi is None else a.hi if b.hi is None else min(a.hi, b.hi)
    if hi is not None and lo > hi:
        return None
    return Dim(lo, hi)


def broadcast_merge(data: Shape, other: Shape) -> Shape | None:
    """numpy broadcasting of two shapes, dims as intervals (None: they do not broadcast)."""
    rank = max(len(data), len(other))
    a = (Dim.of(1),) * (rank - len(data)) + tuple(data)
    b = (Dim.of(1),) * (rank - len(other)) + tuple(other)
    merged = []
    for x, y in zip(a, b, strict=True):
        m = _merge(x, y)
        if m is None:
            return None
        merged.append(m)
    return tuple(merged)


def fake_quantize_shape(
    data: Shape | None, ranges: list[Shape | None], auto_broadcast: str
) -> QuantizeShape:
    """The output of a FakeQuantize on `data` with the shapes of its four ranges."""
    if data is None:
        return QuantizeShape(None)
    mode = auto_broadcast.strip().lower()
    acc: Shape | None = data
    names = ("input_low", "input_high", "output_low", "output_high")
    for name, r in zip(names, ranges, strict=False):
        if r is None or acc is None:
            continue
        if mode == "none":
            ok = len(r) == len(acc) and all(
                _merge(x, y) is not None and not (x.is_static and y.is_static and x.lo != y.lo)
                for x, y in zip(acc, r, strict=True)
            )
            merged = acc if ok else None
        elif mode == "numpy":
            merged = broadcast_merge(acc, r)
        else:  # pdpp and others: not modelled, the data's shape stands
            continue
        if merged is None:
            how = "have the shape of" if mode == "none" else "broadcast (numpy rules) with"
            return QuantizeShape(
                data,
                f"{name} {format_shape(r)} does not {how} the data {format_shape(data)}"
                f" (auto_broadcast={mode}): openvino refuses the layer",
                r,
            )
        acc = merged
    return QuantizeShape(data)
