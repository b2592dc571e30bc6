"""The hypothesis strategies of `irpool fuzz`: what a campaign draws (imported only by a
campaign: hypothesis is the `fuzz` extra).

Every choice is drawn so that hypothesis shrinks toward the plainest case: float32 before the
other element types, explicit pads before auto_pad, floor before ceil, small shapes and windows,
no planted odd values.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .spec import DTYPES, SPECIALS, Spec

OPS = ("window", "global")
MAX_ELEMENTS = 400


@st.composite
def window_specs(draw: st.DrawFn) -> Spec:
    rank = draw(st.integers(1, 3))
    reduce = draw(st.sampled_from(["max", "mean"]))

    def per_axis(lo: int, hi: int) -> tuple[int, ...]:
        return tuple(draw(st.integers(lo, hi)) for _ in range(rank))

    window = per_axis(1, 4)
    strides = per_axis(1, 3)
    # pads below the kernel (onnxruntime and PyTorch refuse the others: D11, D42)
    pads_begin = tuple(p % k for p, k in zip(per_axis(0, 2), window, strict=True))
    pads_end = tuple(p % k for p, k in zip(per_axis(0, 2), window, strict=True))
    dilated = draw(st.booleans())
    dilations = per_axis(1, 3) if dilated else (1,) * rank
    auto_pad = draw(
        st.one_of(
            st.just("explicit"), st.sampled_from(["explicit", "same_upper", "same_lower", "valid"])
        )
    )
    ceil = draw(st.booleans())
    ov_ceil = draw(st.sampled_from(["ceil", "ceil_torch"]))
    count_pad = draw(st.booleans()) if reduce == "mean" else False
    versions = [8, 14, 1] if reduce == "max" else [16, 14, 1]
    if any(d > 1 for d in dilations):
        versions = [v for v in versions if v in (8, 14, 16)]
    if ceil and ov_ceil == "ceil_torch":
        versions = [v for v in versions if v >= 14]
    ov_version = draw(st.sampled_from(versions))
    dtype = _dtype(draw)
    opsets = [22, 12, 11, 10] if reduce == "max" else [22, 19, 11, 10, 7]
    if reduce == "mean" and any(d > 1 for d in dilations):
        opsets = [o for o in opsets if o >= 19]
    if ceil or any(d > 1 for d in dilations):
        opsets = [o for o in opsets if o >= 10]
    if dtype in ("int8", "uint8"):
        opsets = [o for o in opsets if o >= 12] or [22]
    onnx_opset = draw(st.sampled_from(opsets))
    shape = _shape(draw, rank)
    return Spec(
        kind="window",
        reduce=reduce,
        dtype=dtype,
        shape=shape,
        window=window,
        strides=strides,
        pads_begin=pads_begin,
        pads_end=pads_end,
        dilations=dilations,
        ceil=ceil,
        ov_ceil=ov_ceil,
        count_pad=count_pad,
        auto_pad=auto_pad,
        ov_version=ov_version,
        onnx_opset=onnx_opset,
        **_fill(draw),
    )


def _dtype(draw: st.DrawFn) -> str:
    """float32 about half the time (most divergences show there), else any element type."""
    return draw(st.one_of(st.just("float32"), st.sampled_from(DTYPES)))


def _shape(draw: st.DrawFn, rank: int) -> tuple[int, ...]:
    n = draw(st.integers(1, 2))
    c = draw(st.integers(1, 3))
    spatial = []
    for _ in range(rank):
        # 1..9 mostly (shrinking toward 1), now and then 10, 15, 20, and one draw in 25 a 0
        v = draw(st.integers(0, 24))
        spatial.append(1 + v % 9 if v <= 20 else 0 if v == 24 else 10 + (v - 21) * 5)
    shape = (n, c, *spatial)
    total = 1
    for d in shape:
        total *= d
    if total > MAX_ELEMENTS:
        return (1, 1, *(min(d, 6) for d in spatial))
    return shape


def _fill(draw: st.DrawFn) -> dict[str, Any]:
    return dict(
        fill=draw(st.sampled_from(["uniform", "ints", "ramp", "constant"])),
        fill_seed=draw(st.integers(0, 2**16)),
        specials=tuple(
            draw(
                st.lists(
                    st.tuples(st.integers(0, MAX_ELEMENTS), st.sampled_from(SPECIALS)),
                    max_size=4,
                )
            )
        ),
    )


@st.composite
def global_specs(draw: st.DrawFn) -> Spec:
    rank = draw(st.integers(1, 3))
    reduce = draw(st.sampled_from(["max", "mean", "sum"]))
    dtype = _dtype(draw)
    return Spec(
        kind="global",
        reduce=reduce,
        dtype=dtype,
        shape=_shape(draw, rank),
        onnx_opset=draw(st.sampled_from([22, 12])),
        **_fill(draw),
    )


def specs(ops: tuple[str, ...] = OPS) -> st.SearchStrategy[Spec]:
    """One case of the op kinds asked for (`window`, `global`)."""
    kinds = (("window", window_specs()), ("global", global_specs()))
    chosen = [s for name, s in kinds if name in ops]
    if len(chosen) == 2:  # windows twice as often: they have more attributes to cover
        return st.one_of(chosen[0], chosen[0], chosen[1])
    return st.one_of(*chosen)
