"""PyTorch pooling calls (`torch.nn.functional.{avg,max}_pool{1,2,3}d`) as PoolParams, and back.

PyTorch pads symmetrically, defaults the stride to the kernel, counts the declared padding in
the divisor unless count_include_pad=False, and returns max indices per (N, C) plane.  The
names of its pooling operators (aten) are compared here, for the conversion audit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

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


POOL_OP = re.compile(r"(avg|max|lp)_pool|adaptive_(avg|max)_pool|fractional_max_pool")
"""PyTorch's pooling operators, in the names FX targets (`aten.avg_pool2d.default`) and
TorchScript node kinds (`aten::max_pool2d_with_indices`) give them."""

ARGUMENTS = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "count_include_pad")


def is_pooling(name: str) -> bool:
    """Whether an aten operator (or a Python function name) is one of torch's pooling ops."""
    return POOL_OP.search(name) is not None


def function_of(aten: str) -> str:
    """`aten.max_pool2d_with_indices.default` or `aten::max_pool2d` -> the function name."""
    name = aten.split("::", 1)[-1]
    if name.startswith("aten."):
        name = name.split(".")[1]
    return name


def family_of(function: str) -> tuple[str, str | None]:
    """(window, adaptive or global; mean, max or None) of a torch pooling function."""
    family = "adaptive" if function.startswith("adaptive_") else "window"
    if function in ("amax", "mean"):
        family = "global"
    reduce = (
        "max"
        if "max" in function
        else "mean"
        if function.startswith(("avg", "adaptive_avg", "mean", "lp"))
        else None
    )
    return family, reduce


def params_of_call(function: str, arguments: Mapping[str, Any]) -> PoolParams | None:
    """PoolParams of an aten avg/max pooling call from its named arguments (None for adaptive,
    lp and fractional pooling, which irpool does not compute)."""
    base = function.removesuffix("_with_indices")
    if base not in FUNCTIONS:
        return None
    kwargs = {k: arguments[k] for k in ARGUMENTS if arguments.get(k) is not None}
    return params(base, return_indices=function.endswith("_with_indices"), **kwargs)


def _tuple(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def call_for(p: PoolParams) -> tuple[str | None, str | None]:
    """(the torch.nn.functional call that means these parameters, None), or (None, why there
    is none): PyTorch pads symmetrically, has no SAME padding, no dilated average pooling, and
    refuses a pad larger than half the (dilated) window."""
    n = p.rank
    if p.auto_pad in ("same_upper", "same_lower"):
        return None, f"auto_pad={p.auto_pad}: PyTorch's pooling has no SAME padding"
    pads = (0,) * n if p.auto_pad == "valid" else tuple(b for b, _ in p.pads)
    if p.auto_pad != "valid" and any(b != e for b, e in p.pads):
        return None, f"pads {[list(pair) for pair in p.pads]}: PyTorch pads both ends alike"
    mean = p.reduce == "mean"
    if mean and any(d != 1 for d in p.dilations):
        return None, "PyTorch's average pooling has no dilation"
    for k, d, pad in zip(p.window, p.dilations, pads, strict=True):
        if 2 * pad > (k - 1) * d + 1:
            return None, f"pad {pad} over half the window {(k - 1) * d + 1}: PyTorch refuses it"
    args = [f"kernel_size={_tuple(p.window)}", f"stride={_tuple(p.strides)}"]
    args.append(f"padding={_tuple(pads)}")
    if not mean:
        args.append(f"dilation={_tuple(p.dilations)}")
    args.append(f"ceil_mode={p.rounding != 'floor'}")
    if mean:
        args.append(f"count_include_pad={p.count_pad}")
    elif p.indices:
        args.append("return_indices=True")
    return f"F.{'avg' if mean else 'max'}_pool{n}d(x, {', '.join(args)})", None
