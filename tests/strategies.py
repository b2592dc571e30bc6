"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from irpool.geometry import PoolParams


@st.composite
def pool_params(
    draw: st.DrawFn,
    window: int,
    stride: int,
    pad: int,
    size: int,
    channels: int = 1,
    openvino_checks: bool = False,
) -> tuple[PoolParams, tuple[int, ...]]:
    """A pooling layer of rank 1 to 3 (windows up to `window`, strides up to `stride`,
    dilations up to 3, pads up to `pad`, any auto_pad and rounding; `openvino_checks` drawn
    too when asked) and an input shape (1, `channels`, sizes up to `size`)."""
    rank = draw(st.integers(1, 3))
    ints = lambda lo, hi: tuple(draw(st.integers(lo, hi)) for _ in range(rank))  # noqa: E731
    fields: dict[str, Any] = dict(
        op="test",
        reduce=draw(st.sampled_from(["max", "mean"])),
        window=ints(1, window),
        strides=ints(1, stride),
        dilations=ints(1, 3),
        pads=tuple(zip(ints(0, pad), ints(0, pad), strict=True)),
        auto_pad=draw(st.sampled_from(["explicit", "same_upper", "same_lower", "valid"])),
        rounding=draw(st.sampled_from(["floor", "ceil", "ceil_torch"])),
        count_pad=draw(st.booleans()),
    )
    if openvino_checks:
        fields["openvino_checks"] = draw(st.booleans())
    return PoolParams(**fields), (1, channels, *ints(1, size))
