"""The divergence table's predicates: when a layer (and input) touches a divergence, what
separates two plans of one layer, and what a conversion's facts say (`Conversion`).  The table
(irpool.divergences) names them row by row."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import conventions as conv
from ..errors import IrpoolError
from ..families import FamilyPlan
from ..families.adaptive import AdaptivePlan
from ..families.lp import LpPlan
from ..families.reduce import ReducePlan
from ..families.unpool import UnpoolPlan
from ..geometry import PoolParams, PoolPlan, same_pads
from ..kernel import empty_windows, pool

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Conversion:
    """What convert-report knows of a node whose conversion computes something else."""

    kind: str
    """The node's entry kind: window or qlinear."""
    reduce: str | None
    attrs: Mapping[str, Any]
    shapes_differ: bool
    indices_differ: bool
    openvino_layer: str
    front_end: str = "onnx"
    """The framework the model came from: onnx, torch or tf (the conversion audit)."""
    op: str = ""
    """The source framework's operator (aten.avg_pool2d.default, MaxPoolWithArgmax, ...)."""
    nan_input: bool = False
    """The op's input held NaN or infinities."""
    overhang: tuple[str, ...] = ()
    """Which of D1, D1c, D1d the converted layer exercises (openvino's plan of it)."""
    family: str = "window"
    """window, adaptive or global (a mean or max over every spatial axis)."""


def _title(convention: str) -> str:
    return conv.get(convention).title


def _last_start(a: Any) -> int:
    return int((a.out - 1) * a.stride - a.pad_begin)


def _overhang_kind(params: PoolParams, p: PoolPlan, x: Array | None, key: str) -> bool:
    """Which of D1, D1c, D1d a layer exercises: an include-pad divisor over the full kernel
    where a last window reaches past pads_end, on a padded, an unpadded or a dilated axis."""
    for a in p.axes:
        if p.divisor == "full" and _last_start(a) + a.k_eff > a.size + a.pad_end:
            padded = a.pad_begin > 0 or a.pad_end > 0
            if ("D1d" if a.dilation > 1 else "D1" if padded else "D1c") == key:
                return True
    return False


def _divisor_between(key: str) -> Callable[[PoolPlan, PoolPlan, Array], str | None]:
    def between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
        if used.reduce != "mean" or used.divisor == other.divisor:
            return None
        dilated = any(a.dilation > 1 for a in used.axes)
        overhang_on_unpadded = any(
            a.pad_begin == 0 and a.pad_end == 0 and (a.out - 1) * a.stride + a.k_eff > a.size
            for a in used.axes
        )
        found = "D1d" if dilated else "D1c" if overhang_on_unpadded else "D1"
        if found != key:
            return None
        return (
            f"{key}: the include-pad divisor: {_title(other.convention)} uses "
            f"'{other.divisor}' ({other.divisor_reason}); "
            f"{_title(used.convention)} uses '{used.divisor}'"
        )

    return between


def _d1_converted(c: Conversion) -> str | None:
    if c.reduce == "mean" and c.attrs.get("count_include_pad") and c.attrs.get("ceil_mode"):
        return (
            f"D1: the node became {c.openvino_layer}; openvino divides windows reaching the ceil "
            "overhang by the whole kernel"
        )
    return None


def _d2_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    return any(p.shape_rule == "ceil" and _last_start(a) >= a.size for a in p.axes)


def _d2_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.output_shape == other.output_shape:
        return None
    if other.shape_rule == "ceil":
        return (
            "D2: the last window starts in the right padding; "
            f"{_title(other.convention)} keeps it ({other.shape_rule}), "
            f"{_title(used.convention)} does not ({used.shape_rule})"
        )
    return f"D2: the last window starts in the right padding; {_title(other.convention)} drops it"


def _d2c_converted(c: Conversion) -> str | None:
    if c.shapes_differ and c.attrs.get("ceil_mode"):
        return (
            f"D2c: the node became {c.openvino_layer}, whose rounding keeps a last window "
            "starting in the right padding; onnxruntime drops it"
        )
    return None


def _same(params: PoolParams) -> bool:
    return params.auto_pad in ("same_upper", "same_lower")


def _d4_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    if not _same(params):
        return False
    upper = params.auto_pad == "same_upper"
    return any(
        a.dilation > 1
        and same_pads(a.size, a.window, a.stride, 1, upper, clamp=False) != (a.pad_begin, a.pad_end)
        for a in p.axes
    )


def _d4_converted(c: Conversion) -> str | None:
    auto_pad = str(c.attrs.get("auto_pad", "NOTSET"))
    dilations = [int(d) for d in c.attrs.get("dilations") or ()]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and any(d > 1 for d in dilations):
        return (
            f"D4: auto_pad={auto_pad} with dilations {dilations}: the node became "
            f"{c.openvino_layer}, whose SAME pads come from the dilated kernel; onnxruntime "
            "takes them from the undilated kernel"
        )
    return None


def _d4_shape(params: PoolParams) -> str | None:
    dilated = any(d > 1 and k > 1 for k, d in zip(params.window, params.dilations, strict=True))
    return "D4" if _same(params) and dilated else None


def _d8_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    floating = x.dtype.kind == "f" or x.dtype.name == "bfloat16"
    if (
        used.reduce == "max"
        and used.nan_max != other.nan_max
        and floating
        and bool(np.isnan(x.astype(np.float32)).any())
    ):
        return f"D8: NaN in a max window ({other.nan_max} vs {used.nan_max})"
    return None


def _d8_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    if x is None or p.reduce != "max":
        return False
    floating = x.dtype.kind == "f" or x.dtype.name == "bfloat16"
    return floating and bool(np.isnan(x.astype(np.float32)).any())


def _d9_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    """Integer means of which some window's exact value ends in .5."""
    if x is None or p.reduce != "mean" or x.dtype.kind not in "iu":
        return False
    from ..geometry import for_dtype

    with np.errstate(invalid="ignore", divide="ignore"):
        means, _ = pool(x.astype(np.float32), for_dtype(p, "float32"))
        frac = np.abs(means.astype(np.float64) % 1.0)
    return bool(np.any(frac == 0.5))


def _d9_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.reduce == "mean" and x.dtype.kind in "iu" and used.int_mean != other.int_mean:
        return f"D9: integer mean rounding ({other.int_mean} vs {used.int_mean})"
    return None


def _d3_converted(c: Conversion) -> str | None:
    """PyTorch's avg_pool with ceil_mode, count_include_pad and padding, whose last window
    overhangs: the PyTorch front end writes AvgPool-14 exclude-pad=false rounding ceil_torch."""
    padding = c.attrs.get("padding", 0)
    pads = list(padding) if isinstance(padding, (list, tuple)) else [padding]
    counted = c.attrs.get("count_include_pad", True)
    if c.front_end != "torch" or c.reduce != "mean" or not c.attrs.get("ceil_mode"):
        return None
    if not counted or not any(int(p) for p in pads if isinstance(p, int)):
        return None
    kinds = " and ".join(c.overhang) or "D1"
    where = (
        "on an axis without padding, as openvino's include-pad switch is global"
        if kinds == "D1c"
        else "on a padded axis"
    )
    return (
        f"D3 ({kinds}): openvino's PyTorch front end made {c.op} (ceil_mode=True, "
        f"count_include_pad=True, padding={padding}) {c.openvino_layer}; openvino divides a "
        f"window that reaches the ceil overhang by the whole kernel ({where}), PyTorch by its "
        "taps up to the declared padding"
    )


def _d8_converted(c: Conversion) -> str | None:
    if c.front_end == "onnx" or c.reduce != "max" or not c.nan_input or c.family == "global":
        return None
    who = "PyTorch propagates it" if c.front_end == "torch" else "the framework keeps it"
    return (
        f"D8: NaN in a max window: {who}; openvino's CPU plugin ({c.openvino_layer}) never "
        "selects it"
    )


def _tf_pools_channels(c: Conversion) -> bool:
    from ..ops import tensorflow as tf_ops

    ksize = c.attrs.get("ksize")
    if not isinstance(ksize, (list, tuple)) or len(ksize) < 3:
        return False
    return tf_ops.pools_channels(ksize, str(c.attrs.get("data_format", "NHWC")))


def _d36_converted(c: Conversion) -> str | None:
    from ..ops import tensorflow as tf_ops

    if c.front_end != "tf" or not tf_ops.is_argmax(c.op):
        return None
    return (
        "D36: openvino's TensorFlow front end converts MaxPoolWithArgmax with strides equal to "
        f"the window, not the op's strides: {c.openvino_layer} gives another output size"
    )


def _d37_converted(c: Conversion) -> str | None:
    if c.front_end != "tf" or not _tf_pools_channels(c):
        return None
    return (
        f"D37: the op pools across channels (ksize={list(c.attrs.get('ksize', []))}); "
        f"openvino's TensorFlow front end makes it {c.openvino_layer}, a spatial pool that "
        "passes every channel through"
    )


def _d38_converted(c: Conversion) -> str | None:
    if c.reduce != "max" or not c.nan_input or c.family != "global":
        return None
    who = {"tf": "TensorFlow", "torch": "PyTorch"}.get(c.front_end, c.front_end)
    return (
        f"D38: a global max (ReduceMax) over NaN or only -inf: {who} gives NaN or -inf; "
        "openvino's running maximum skips NaN and starts from the lowest finite float"
    )


def _d10b_converted(c: Conversion) -> str | None:
    if c.kind != "qlinear":
        return None
    if c.shapes_differ and c.attrs.get("channels_last"):
        return "D10b: openvino's front end ignores channels_last"
    return (
        "D10b: openvino's decomposition of QLinearAveragePool truncates instead of "
        "rounding and wraps the integer subtraction of the zero point"
    )


def _d6_converted(c: Conversion) -> str | None:
    if c.indices_differ and c.attrs.get("storage_order"):
        return (
            "D6: for storage_order=1 openvino transposes the row-major index tensor instead "
            "of computing column-major indices"
        )
    return None


def _d11_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    return params.auto_pad == "explicit" and any(
        max(a.pad_begin, a.pad_end) >= a.k_eff for a in p.axes
    )


def _d14_touched(params: PoolParams, p: PoolPlan, x: Array | None) -> bool:
    return params.auto_pad == "valid" and any(
        p.shape_rule != "floor" and a.out != -(-(a.size - a.k_eff + 1) // a.stride) for a in p.axes
    )


def _empty_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.empty != other.empty and empty_windows(used) is not None:
        return f"empty windows: {other.empty} vs {used.empty}"
    return None


def _narrow_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.narrow_64bit != other.narrow_64bit and x.dtype.itemsize == 8:
        return "openvino's CPU plugin runs float64 as float32 and int64 as int32"
    return None


def _narrow_family_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if used.compute != other.compute and x.dtype.itemsize == 8:
        return (
            "openvino's CPU plugin runs float64 as float32 and int64 as int32 "
            f"({_title(other.convention)} computes in {other.compute}, "
            f"{_title(used.convention)} in {used.compute})"
        )
    return None


def _has(x: Array | None, test: Callable[[Array], Array]) -> bool:
    if x is None or x.size == 0:
        return False
    floating = x.dtype.kind == "f" or x.dtype.name == "bfloat16"
    return floating and bool(test(x.astype(np.float32)).any())


def _nan(x: Array | None) -> bool:
    return _has(x, np.isnan)


def _reduce_max(p: FamilyPlan) -> bool:
    return isinstance(p, ReducePlan) and p.kind == "max"


def _d17_touched(p: FamilyPlan, x: Array | None) -> bool:
    return _reduce_max(p) and isinstance(p, ReducePlan) and p.order == "ov_jit" and _nan(x)


def _nan_rules(p: FamilyPlan) -> str | None:
    if isinstance(p, ReducePlan) and p.kind == "max":
        return p.nan_max
    if isinstance(p, AdaptivePlan) and p.reduce == "max":
        return p.max_rule
    return None


def _d18_touched(p: FamilyPlan, x: Array | None) -> bool:
    return _nan_rules(p) is not None and _nan(x)


def _loses_nan(p: ReducePlan, x: Array) -> bool:
    """openvino's lane rule drops a NaN of x from some output (D17), rather than keeping it
    where another runtime's position rule drops it (D18)."""
    from ..kernel.family import execute

    try:
        with np.errstate(invalid="ignore", over="ignore"):
            out = execute(p, [x])[0].astype(np.float32)
            held = np.isnan(x.astype(np.float32)).any(axis=p.axes, keepdims=True)
    except (IrpoolError, ValueError):
        return True
    return bool((np.broadcast_to(held.reshape(-1), out.size) & ~np.isnan(out.reshape(-1))).any())


def _d18_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    a, b = _nan_rules(used), _nan_rules(other)
    if a is None or a == b or not _nan(x):
        return None
    lane = next((p for p, r in ((used, a), (other, b)) if r == "maxps"), None)
    first = "D17" if isinstance(lane, ReducePlan) and _loses_nan(lane, x) else "D18"
    return (
        f"{first}: NaN in a global max ({_title(other.convention)}: {b}; "
        f"{_title(used.convention)}: {a})"
    )


def _d19_touched(p: FamilyPlan, x: Array | None) -> bool:
    if not _reduce_max(p):
        return False
    assert isinstance(p, ReducePlan)
    return p.count == 0 or _has(x, lambda v: np.isneginf(v))


def _d19_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, ReducePlan) and isinstance(other, ReducePlan)):
        return None
    if used.kind != "max" or used.empty == other.empty or not _d19_touched(used, x):
        return None
    return "D19: an all -inf (or empty) max: the lowest float (openvino, MLAS) or -inf"


def _partial_lp(p: FamilyPlan) -> bool:
    """An Lp window that reaches past the input with no pads (the ceil overhang)."""
    if not isinstance(p, LpPlan):
        return False
    w = p.window
    if any(a.pad_begin or a.pad_end for a in w.axes):
        return False
    return any((a.out - 1) * a.stride + a.k_eff > a.size for a in w.axes)


def _d20_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, LpPlan) and isinstance(other, LpPlan)):
        return None
    scaled = {"openvino", "torch"}
    if _partial_lp(used) and (used.rule in scaled) != (other.rule in scaled):
        return (
            "D20: a partial ceil window of LpPool: onnxruntime sums its taps inside the input, "
            "openvino's decomposition and PyTorch scale it by kernel / taps"
        )
    return None


def _d20_converted(c: Conversion) -> str | None:
    pads = [int(v) for v in c.attrs.get("pads") or ()]
    if c.kind == "family" and "p" in c.attrs and c.attrs.get("ceil_mode") and not any(pads):
        return (
            f"D20: the node became {c.openvino_layer} exclude-pad=false; with no pads openvino "
            "divides a partial ceil window by its taps and multiplies by the kernel size, "
            "onnxruntime sums the taps"
        )
    return None


def _d21_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, LpPlan) and isinstance(other, LpPlan)):
        return None
    if (used.rule == "torch") != (other.rule == "torch") and _has(x, lambda v: v < 0):
        return "D21: PyTorch's lp_pool raises x to p with its sign (no abs)"
    return None


def _d23_touched(p: FamilyPlan, x: Array | None) -> bool:
    return isinstance(p, ReducePlan) and p.kind == "mean" and p.count == 0


def _d23_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, ReducePlan) and isinstance(other, ReducePlan)):
        return None
    if used.kind != "mean" or used.count != 0 or used.empty == other.empty:
        return None
    return (
        f"D23: a mean over an empty axis ({_title(other.convention)}: {other.empty}; "
        f"{_title(used.convention)}: {used.empty})"
    )


def _d25_touched(p: FamilyPlan, x: Array | None) -> bool:
    return isinstance(p, UnpoolPlan) and p.output_shape != p.default_shape


def _d24_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, UnpoolPlan) and isinstance(other, UnpoolPlan)):
        return None
    if used.layout != other.layout:
        return (
            "D24: MaxUnpool indices flat over the tensor (onnxruntime) or within each "
            "(N, C) plane (PyTorch)"
        )
    return None


def _d27_touched(p: FamilyPlan, x: Array | None) -> bool:
    return isinstance(p, ReducePlan) and p.integer_store and p.order == "ov_jit"


def _d30_touched(p: FamilyPlan, x: Array | None) -> bool:
    return isinstance(p, ReducePlan) and not p.axes and conv.get(p.convention).cpu_plugin_kernels


def _d31_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, ReducePlan) and isinstance(other, ReducePlan)):
        return None
    if used.kind != "max" and used.order != other.order:
        return f"D31: summation order ({other.order} vs {used.order})"
    return None


def _d32_touched(p: FamilyPlan, x: Array | None) -> bool:
    if not (isinstance(p, AdaptivePlan) and p.reduce == "mean"):
        return False
    return sum(1 for a in p.axes if a.longest > 1) > 1


def _d32_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, AdaptivePlan) and isinstance(other, AdaptivePlan)):
        return None
    if used.reduce == "mean" and used.division != other.division:
        return (
            f"D32: adaptive average division ({other.division} vs {used.division}: one "
            "division by the window volume, or one per axis)"
        )
    return None


def _d33_touched(p: FamilyPlan, x: Array | None) -> bool:
    return isinstance(p, AdaptivePlan) and p.indices


def _d33_between(used: FamilyPlan, other: FamilyPlan, x: Array) -> str | None:
    if not (isinstance(used, AdaptivePlan) and isinstance(other, AdaptivePlan)):
        return None
    if used.indices and used.index_dtype != other.index_dtype:
        return f"D33: index type {other.index_dtype} vs {used.index_dtype}"
    return None


def _d39_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.empty_index == other.empty_index or not used.indices:
        return None
    if empty_windows(used) is None:
        return None
    return (
        "D39: the index of a max window with no tap in the input: "
        f"{_title(other.convention)} '{other.empty_index}', "
        f"{_title(used.convention)} '{used.empty_index}'"
    )


def _d43_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.reduce != "max" or used.dtype != "bfloat16" or used.max_start == other.max_start:
        return None
    return (
        "D43: where a bfloat16 max starts: "
        f"{_title(other.convention)} {other.max_start:.5g}, "
        f"{_title(used.convention)} {used.max_start:.5g}"
    )
