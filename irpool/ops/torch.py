"""PyTorch pooling calls (`torch.nn.functional.{avg,max}_pool{1,2,3}d`) as PoolParams.

PyTorch pads symmetrically, defaults the stride to the kernel, counts the declared padding in
the divisor unless count_include_pad=False, and returns max indices per (N, C) plane.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SpecError
from ..geometry import PoolParams

FUNCTIONS = tuple(f"{kind}_pool{n}d" for kind in ("avg", "max") for n in (1, 2, 3))


def _per_axis(
    name: str, value: int | Sequence[int] | None, n: int, default: int
) -> tuple[int, ...]:
    if value is None:
        return (default,) * n
    if isinstance(value, int):
        return (value,) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise SpecError(f"{name} has {len(values)} values; expected 1 or {n}")
    return values


def params(
    function: str,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    return_indices: bool = False,
) -> PoolParams:
    """PoolParams for `torch.nn.functional.<function>(x, kernel_size, ...)`."""
    if function not in FUNCTIONS:
        raise SpecError(
            f"unknown torch pooling function {function!r}; known: {', '.join(FUNCTIONS)}"
        )
    n = int(function[-2])
    window = _per_axis("kernel_size", kernel_size, n, 1)
    strides = _per_axis("stride", stride, n, 1) if stride not in (None, [], ()) else window
    pads = _per_axis("padding", padding, n, 0)
    dilations = _per_axis("dilation", dilation, n, 1)
    mean = function.startswith("avg")
    if mean and any(d != 1 for d in dilations):
        raise SpecError(f"{function} has no dilation")
    return PoolParams(
        op=f"torch.{function}",
        reduce="mean" if mean else "max",
        window=window,
        strides=strides,
        dilations=dilations,
        pads=tuple((p, p) for p in pads),
        rounding="ceil" if ceil_mode else "floor",
        count_pad=bool(count_include_pad) and mean,
        indices=bool(return_indices) and not mean,
        index_axis=2,
    )
