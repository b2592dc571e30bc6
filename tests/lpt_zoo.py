"""Quantized pooling graphs built with openvino's opset API (FakeQuantize around every pooling
layer LPT knows), shared by the LPT tests: name -> (input shape, builder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

C = 6


def _per_channel(lo: float, hi: float, rank: int = 4) -> tuple[Any, Any]:
    shape = (1, C) + (1,) * (rank - 2)
    top = np.linspace(hi, 2 * hi, C, dtype=np.float32).reshape(shape)
    return (np.full(shape, lo, np.float32) if lo >= 0 else top * np.float32(lo / hi)), top


RANGES: dict[str, Callable[[int], tuple[Any, Any]]] = {
    "u8": lambda r: (np.float32(0.0), np.float32(2.55)),
    "zp": lambda r: (np.float32(-0.5), np.float32(2.05)),
    "i8": lambda r: (np.float32(-1.28), np.float32(1.27)),
    "pc": lambda r: _per_channel(0.0, 1.5, r),
    "pci8": lambda r: _per_channel(-1.28 / 1.27, 1.0, r),
}


def zoo(ov: Any) -> dict[str, tuple[tuple[int, ...], Callable[[], Any]]]:
    """Every case: (input shape, a function that builds the openvino Model)."""
    o1 = ov.opset1
    o8 = ov.opset8
    o14 = ov.opset14
    o16 = ov.opset16

    def const(v: Any) -> Any:
        return o1.constant(np.asarray(v, dtype=np.float32))

    def fq(x: Any, lo: Any, hi: Any, levels: int = 256) -> Any:
        return o1.fake_quantize(x, const(lo), const(hi), const(lo), const(hi), levels)

    pools: dict[str, Callable[[Any, int], Any]] = {
        "ap1": lambda t, r: o1.avg_pool(
            t, [1] * (r - 2), [0] * (r - 2), [0] * (r - 2), [3] * (r - 2), True
        ),
        "ap1_pad": lambda t, r: o1.avg_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2), False
        ),
        "ap1_excl": lambda t, r: o1.avg_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2), True
        ),
        "ap1_ceil": lambda t, r: o1.avg_pool(
            t, [2] * (r - 2), [0] * (r - 2), [0] * (r - 2), [2] * (r - 2), True, "ceil"
        ),
        "ap14_ceil_pad": lambda t, r: o14.avg_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2), False, "ceil"
        ),
        "ap14_ceil_torch": lambda t, r: o14.avg_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2), False, "ceil_torch"
        ),
        "mp1": lambda t, r: o1.max_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2)
        ),
        "mp8": lambda t, r: o8.max_pool(
            t, [1] * (r - 2), [1] * (r - 2), [0] * (r - 2), [0] * (r - 2), [2] * (r - 2)
        ).output(0),
        "mp14": lambda t, r: o14.max_pool(
            t, [2] * (r - 2), [1] * (r - 2), [1] * (r - 2), [1] * (r - 2), [3] * (r - 2), "ceil"
        ).output(0),
        "ap16": lambda t, r: o16.avg_pool(
            t,
            [2] * (r - 2),
            [1] * (r - 2),
            [1] * (r - 2),
            [3] * (r - 2),
            True,
            "floor",
            dilations=[2] * (r - 2),
        ),
        "rmean": lambda t, r: o1.reduce_mean(t, o1.constant(np.arange(2, r)), True),
        "rmax": lambda t, r: o1.reduce_max(t, o1.constant(np.arange(2, r)), True),
    }
    post = (np.float32(0.0), np.float32(2.0))
    cases: dict[str, tuple[tuple[int, ...], Callable[[], Any]]] = {}

    def add(name: str, shape: tuple[int, ...], body: Callable[[Any], list[Any]]) -> None:
        def build() -> Any:
            x = o1.parameter(list(shape), np.float32, name="x")
            return ov.Model([o1.result(o) for o in body(x)], [x], name)

        cases[name] = (shape, build)

    for rn, ranges in RANGES.items():
        for pn, pool in pools.items():
            for tail in ("", "+fq"):
                lo, hi = ranges(4)

                def body(
                    x: Any, lo: Any = lo, hi: Any = hi, pool: Any = pool, tail: str = tail
                ) -> list[Any]:
                    y = pool(fq(x, lo, hi), 4)
                    return [fq(y, *post) if tail else y]

                add(f"{rn}-{pn}{tail}", (1, C, 11, 11), body)
    # 3-D, a chain, levels 255, and the quantized convolution NNCF writes in front
    lo3, hi3 = RANGES["zp"](5)
    add(
        "zp-ap1-3d+fq", (1, C, 7, 7, 7), lambda x: [fq(pools["ap1_pad"](fq(x, lo3, hi3), 5), *post)]
    )
    add("zp-mp1-3d", (1, C, 7, 7, 7), lambda x: [pools["mp1"](fq(x, lo3, hi3), 5)])
    add(
        "chain",
        (1, C, 15, 15),
        lambda x: [
            o1.reduce_mean(
                fq(pools["mp1"](fq(pools["ap1_pad"](fq(x, 0.0, 2.55), 4), -0.4, 1.9), 4), 0.0, 1.5),
                o1.constant(np.array([2, 3])),
                True,
            )
        ],
    )
    add(
        "max-then-avg",
        (1, C, 15, 15),
        lambda x: [fq(pools["ap1_pad"](pools["mp1"](fq(x, -0.5, 2.05), 4), 4), *post)],
    )
    add(
        "levels255", (1, C, 11, 11), lambda x: [fq(pools["ap1"](fq(x, -1.27, 1.27, 255), 4), *post)]
    )
    return cases


def conv_case(ov: Any) -> tuple[tuple[int, ...], Any]:
    """FQ -> Convolution (FQ'd weights) -> FQ -> AvgPool -> FQ: what NNCF writes."""
    o1 = ov.opset1
    rng = np.random.default_rng(3)
    x = o1.parameter([1, 3, 12, 12], np.float32, name="x")

    def const(v: Any) -> Any:
        return o1.constant(np.asarray(v, dtype=np.float32))

    def fq(t: Any, lo: Any, hi: Any) -> Any:
        return o1.fake_quantize(t, const(lo), const(hi), const(lo), const(hi), 256)

    w = const(rng.uniform(-1, 1, (C, 3, 3, 3)))
    wq = o1.fake_quantize(w, const(-1.0), const(1.0), const(-1.0), const(1.0), 255)
    conv = o1.convolution(fq(x, -1.0, 1.0), wq, [1, 1], [1, 1], [1, 1], [1, 1])
    pool = o1.avg_pool(fq(o1.relu(conv), 0.0, 4.0), [2, 2], [0, 0], [0, 0], [2, 2], True)
    return (1, 3, 12, 12), ov.Model([o1.result(fq(pool, 0.0, 3.0))], [x], "conv")
