"""The divergences between runtimes, as one table, and the matrix of docs/divergences.md.

Every known divergence (D1 ... D44, and two switches without a number) is one `Divergence`
record: its id, what differs, the systems it separates, the measured story, and the conditions
under which it shows:

* `touched(params, plan, x)`: this layer (and input) exercises it (fixtures, explain);
* `between(used, other, x)`: it is what separates two plans of one layer, as said in a compare
  diagnosis (None: not this one);
* `converted(facts)`: it explains why openvino's conversion of an ONNX node computes something
  else (convert-report);
* `shape(params)`: it explains why onnx's shape inference or operator text gives an ONNX node
  another size than onnxruntime (check).

compare, convert-report, check, explain, fixtures and docs/divergences.md all read `TABLE`.

    python -m irpool.divergences > docs/divergences.md

The matrix below the table: every cell is what irpool computes for the case under that
system's convention (the OpenVINO column runs the IR layer, the onnxruntime column the ONNX
node, the PyTorch column the torch call).  The test suite regenerates the file and compares,
and checks each cell against the measured numbers in irpool.cases and, where installed,
against the runtimes themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from .cases import CASES, Case, ir_net
from .errors import IrpoolError
from .families import FamilyPlan
from .families.adaptive import AdaptivePlan
from .families.lp import LpPlan
from .families.reduce import ReducePlan
from .families.unpool import UnpoolPlan
from .frontends.ir_xml import parse_text
from .geometry import PoolParams, PoolPlan, plan, same_pads
from .kernel import empty_windows, pool
from .model import element_type_of_numpy
from .ops import onnx as onnx_ops
from .ops import torch as torch_ops
from .shapes import infer

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


@dataclass(frozen=True)
class Divergence:
    """One known divergence between runtimes (or between a runtime and a document)."""

    id: str
    title: str
    separates: str
    measured: str
    touched: Callable[[PoolParams, PoolPlan, Array | None], bool] | None = None
    between: Callable[[PoolPlan, PoolPlan, Array], str | None] | None = None
    converted: Callable[[Conversion], str | None] | None = None
    shape: Callable[[PoolParams], str | None] | None = None
    explained: str = ""
    """What a fixture that exercises it shows (the fixtures' index.json lists these)."""
    family_touched: Callable[[FamilyPlan, Array | None], bool] | None = None
    """The family layer (adaptive, reduction, Lp, unpooling) and input exercise it."""
    family_between: Callable[[FamilyPlan, FamilyPlan, Array], str | None] | None = None
    """It separates two plans of one family layer (a compare diagnosis)."""


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
    from .geometry import for_dtype

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
    from .ops import tensorflow as tf_ops

    ksize = c.attrs.get("ksize")
    if not isinstance(ksize, (list, tuple)) or len(ksize) < 3:
        return False
    return tf_ops.pools_channels(ksize, str(c.attrs.get("data_format", "NHWC")))


def _d36_converted(c: Conversion) -> str | None:
    from .ops import tensorflow as tf_ops

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


# -- the pooling families (D17 ...): predicates on family plans -------------------------------


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
    from .kernel.family import execute

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


OV = "OpenVINO"
ORT_TORCH = "onnxruntime, PyTorch"


def _overhang_divisor(
    key: str, title: str, separates: str, measured: str, explained: str, **more: Any
) -> Divergence:
    """D1, D1c or D1d: touched and told apart by _overhang_kind and _divisor_between."""
    return Divergence(
        key,
        title,
        separates,
        measured,
        touched=lambda params, p, x: _overhang_kind(params, p, x, key),
        between=_divisor_between(key),
        explained=explained,
        **more,
    )


TABLE: tuple[Divergence, ...] = (
    _overhang_divisor(
        "D1",
        "include-pad divisor over the ceil overhang",
        f"{OV} vs {ORT_TORCH}",
        "x=1..6, k3 s2 p1 ceil: OpenVINO `[1,3,5,2]`, onnxruntime/PyTorch `[1,3,5,3]`",
        "padding counted with a non-zero pad: openvino divides windows that reach into the "
        "ceil overhang by the full kernel volume (onnxruntime and PyTorch do not count the "
        "overhang)",
        converted=_d1_converted,
    ),
    _overhang_divisor(
        "D1c",
        "OpenVINO's include-pad switch is global",
        f"{OV} vs {ORT_TORCH}",
        "padding on H makes the W overhang count: 0.5 instead of 1.0",
        "as D1, on an axis without padding: openvino's include-pad switch is global",
    ),
    _overhang_divisor(
        "D1d",
        "dilated include-pad divisor over the ceil overhang",
        f"{OV} vs onnxruntime",
        "OpenVINO `[1,3,5,3]`, onnxruntime `[1,3,5,6]`",
        "as D1, with dilations",
    ),
    Divergence(
        "D2",
        "last window starting in the right padding",
        f"{OV} `ceil` vs {ORT_TORCH} and OpenVINO `ceil_torch`",
        "OpenVINO `ceil` keeps it: NaN (excluded), 0 (included), -3.4e38 (max)",
        touched=_d2_touched,
        between=_d2_between,
        explained=(
            "a last window that starts in the right padding is kept by rounding_type=ceil "
            "(onnxruntime and PyTorch drop it)"
        ),
    ),
    Divergence(
        "D2b",
        "onnx shape inference vs runtimes",
        "onnx shape inference and operator text vs onnxruntime",
        "onnx 1.23 applies the drop rule only to opset 22",
        shape=lambda params: (
            None
            if _same(params) or params.auto_pad == "valid"
            else "D2b: ceil mode with a last window starting in the right padding"
        ),
    ),
    Divergence(
        "D2c",
        "OpenVINO's ONNX front end and ceil_mode",
        "OpenVINO's conversion vs onnxruntime",
        "AveragePool ceil → AvgPool-16 ceil_torch (matches), MaxPool ceil → MaxPool-8 ceil "
        "(extra window): PyTorch's MaxPool2d(2, 2, 1, ceil_mode=True) on 5x5 through "
        "torch.onnx gives 4x4 in openvino, 3x3 in PyTorch (its direct conversion is right)",
        converted=_d2c_converted,
    ),
    Divergence(
        "D3",
        "OpenVINO's PyTorch conversion of avg_pool2d(k3,s2,p1,ceil,count_include_pad)",
        "OpenVINO's conversion vs PyTorch",
        "off by up to 17/3 on a 6x6 ramp; `convert-report` of a .pt2: AvgPool2d(3,2,1,ceil) on "
        "1x3x6x6 21 of 48 cells, AvgPool3d(3,2,1,ceil) on 1x2x4x6x6 60 of 96, "
        "AvgPool1d(3,2,1,ceil) on 1..6 1 of 4 (every other PyTorch pool converts faithfully)",
        converted=_d3_converted,
        explained=(
            "openvino's PyTorch front end writes avg_pool2d(ceil_mode=True, "
            "count_include_pad=True) as this AvgPool-14 ceil_torch layer, whose divisor differs "
            "from PyTorch's (D1 in practice)"
        ),
    ),
    Divergence(
        "D4",
        "SAME_UPPER with dilations",
        f"{OV}, the ONNX spec vs onnxruntime",
        "OpenVINO 7 outputs, onnxruntime 5 (pads from the undilated kernel)",
        touched=_d4_touched,
        between=lambda used, other, x: (
            "D4: SAME pads from the dilated or the undilated kernel"
            if used.pads != other.pads
            else None
        ),
        converted=_d4_converted,
        shape=_d4_shape,
        explained=(
            "same_upper/same_lower with dilations: pads from the dilated kernel (onnxruntime uses "
            "the undilated one)"
        ),
    ),
    Divergence(
        "D5",
        "SAME_UPPER + ceil with k < s",
        f"{OV} vs onnxruntime",
        "OpenVINO `[1,4,-0]`, onnxruntime AveragePool-19+ `[1,4]`; AveragePool-7..18 and "
        "MaxPool without Indices or dilations refuse the negative pads on float data, and so "
        "does irpool",
        touched=lambda params, p, x: _same(params) and _d2_touched(params, p, x),
        shape=lambda params: (
            "D5: SAME_* pads, negative in onnxruntime, and the output formula"
            if _same(params)
            else None
        ),
        explained="same_upper/same_lower with rounding_type=ceil keeps a window beyond the input",
    ),
    Divergence(
        "D6",
        "storage_order=1",
        "onnxruntime vs OpenVINO's conversion, PyTorch",
        "onnxruntime `[2,6,1,7]`; OpenVINO's front end transposes the index tensor instead",
        converted=_d6_converted,
    ),
    Divergence(
        "D7",
        "index range",
        "ONNX, OpenVINO axis=0 vs PyTorch, OpenVINO axis=2",
        "flat over the tensor vs per plane",
        touched=lambda params, p, x: p.indices and p.input_shape[0] * p.input_shape[1] > 1,
        explained=(
            "MaxPool indices: flat over the tensor (axis 0) or per (N, C) plane (axis 2) differ"
        ),
    ),
    Divergence(
        "D8",
        "NaN in MaxPool",
        f"{OV} vs onnxruntime vs PyTorch",
        "see docs/semantics.md; in onnxruntime it depends on the kernel (reference loop or "
        "one of four MLAS kernels)",
        touched=_d8_touched,
        between=_d8_between,
        converted=_d8_converted,
        explained="NaN in a max window: openvino never selects it",
    ),
    Divergence(
        "D9",
        "integer means",
        f"{OV} vs PyTorch",
        "half to even vs truncation; onnxruntime has no integer AveragePool",
        touched=_d9_touched,
        between=_d9_between,
        explained="integer mean exactly halfway: openvino rounds half to even (PyTorch truncates)",
    ),
    Divergence(
        "D10",
        "QLinearAveragePool",
        "onnxruntime's QLinearAveragePool vs its float AveragePool",
        "divides by ∏k with count_include_pad, also in the overhang",
    ),
    Divergence(
        "D10b",
        "OpenVINO's ONNX front end for QLinearAveragePool",
        "OpenVINO's conversion vs onnxruntime",
        "truncation, u8 wrap, channels_last ignored",
        converted=_d10b_converted,
    ),
    Divergence(
        "D11",
        "pads ≥ kernel",
        f"{OV} vs onnxruntime, PyTorch",
        "onnxruntime (and irpool's `onnx` convention) and PyTorch refuse; OpenVINO MaxPool "
        "gives -3.4e38 for an all-padding window",
        touched=_d11_touched,
        explained="a pad at least as large as the dilated window: a window wholly in the padding",
    ),
    Divergence(
        "D12",
        "onnx reference evaluator bugs",
        "onnx's ReferenceEvaluator vs onnxruntime",
        "shifted windows for large ceil pads, pads order, SAME_LOWER size, VALID+ceil",
    ),
    Divergence(
        "D13",
        "OpenVINO AvgPool-1 spec errors",
        "the OpenVINO specification vs OpenVINO",
        "examples 1 and 2 are 16x16, not 32x32; the formula's precedence",
        explained="an example of the AvgPool-1 specification whose declared output shape is wrong",
    ),
    Divergence(
        "D14",
        "VALID + ceil",
        "the ONNX and OpenVINO spec formulas vs every runtime",
        "3 outputs everywhere at runtime; the spec formulas give 2",
        touched=_d14_touched,
        shape=lambda params: "D14: VALID with ceil_mode" if params.auto_pad == "valid" else None,
        explained="auto_pad=valid with ceil: more outputs than the specification's formula says",
    ),
    Divergence(
        "D15",
        "MaxPool ceil vs ceil_torch with dilation",
        f"{OV} MaxPool-8 `ceil` vs PyTorch, OpenVINO `ceil_torch`",
        "9x11, k(3,2) s(2,3) p1 d2: (4,5) vs (4,4) = PyTorch",
        touched=lambda params, p, x: (
            p.reduce == "max"
            and any(a.dilation > 1 for a in p.axes if _last_start(a) >= a.size)
            and _d2_touched(params, p, x)
        ),
        explained="MaxPool with dilations and rounding_type=ceil: one more output than PyTorch",
    ),
    Divergence(
        "D16",
        "onnxruntime AveragePool-7..18, count_include_pad, window larger than the padded input",
        "onnxruntime AveragePool-7..18 vs 19+",
        "the MLAS path divides by ∏k (n=3, k=4, s=3, ones: 0.75), opset 19+ by the taps up to "
        "the declared pads (1.0); irpool's `onnx` convention follows each version",
    ),
    Divergence(
        "D17",
        "openvino ReduceMax loses a NaN that ends a lane (the 16th element)",
        f"{OV} vs onnxruntime, PyTorch, onnx reference",
        "x = `[1]*15 + [NaN]` over (2, 3): OpenVINO ReduceMax -3.4028235e38 (the NaN ends lane "
        "15 of 16 with AVX-512, lane 7 of 8 with AVX2, the lane tree gives NaN, MAXPS(NaN, "
        "lowest) gives lowest); onnxruntime "
        "GlobalMaxPool NaN, ReduceMax-18 1.0; onnx reference and PyTorch NaN; 17 elements with "
        "the NaN last: OpenVINO NaN",
        family_touched=_d17_touched,
        explained="NaN in openvino's ReduceMax: kept only as the last element of its fold",
    ),
    Divergence(
        "D18",
        "NaN position rules of a global max",
        f"{OV} ReduceMax vs onnxruntime GlobalMaxPool vs PyTorch",
        "`[1, NaN]`: OpenVINO ReduceMax NaN, onnxruntime GlobalMaxPool 1.0, PyTorch NaN, "
        "OpenVINO AdaptiveMaxPool 1.0 (index 0), torch adaptive max NaN (index 1); "
        "`[NaN, 1]`: OpenVINO ReduceMax 1.0, GlobalMaxPool 1.0, AdaptiveMaxPool NaN, PyTorch NaN",
        family_touched=_d18_touched,
        family_between=_d18_between,
        explained="NaN in a global or adaptive max: each runtime keeps it in other positions",
    ),
    Divergence(
        "D19",
        "an all -inf or empty max",
        f"{OV}, onnxruntime GlobalMaxPool vs PyTorch, onnxruntime ReduceMax",
        "`[-inf, -inf]`: OpenVINO ReduceMax and onnxruntime GlobalMaxPool -3.4028235e38, "
        "PyTorch -inf; an empty reduced axis: OpenVINO -3.4e38 (f16 -inf, i32 INT32_MIN), "
        "onnxruntime ReduceMax -inf, PyTorch refuses",
        family_touched=_d19_touched,
        family_between=_d19_between,
    ),
    Divergence(
        "D20",
        "LpPool's partial ceil window",
        "onnxruntime vs OpenVINO's conversion, onnx reference, PyTorch",
        "x = `[1,-2,3,-4,5,-6]`, k3 s2 ceil p2: onnxruntime `[3.7416575, 7.071068, 7.81025]` "
        "(sqrt 61, taps inside only); OpenVINO (AvgPool-16 ceil_torch exclude-pad=false, x3), "
        "onnx reference and PyTorch 9.565563 (sqrt(61 * 3 / 2)) last",
        family_touched=lambda p, x: _partial_lp(p),
        family_between=_d20_between,
        converted=_d20_converted,
        explained="an Lp window reaching past the input without pads: scaled by kernel / taps "
        "everywhere but onnxruntime",
    ),
    Divergence(
        "D21",
        "PyTorch's lp_pool uses x^p, not |x|^p",
        "PyTorch (and OpenVINO's conversion of it) vs onnxruntime, ONNX",
        "same x, k3 s2: p=1 PyTorch `[2, 4]`, onnxruntime `[6, 12]`; p=3 PyTorch "
        "`[2.7144177, 4.4479604]`, onnxruntime `[3.3019273, 6.0000005]`; a negative odd-p "
        "window sum gives NaN",
        family_between=_d21_between,
    ),
    Divergence(
        "D22",
        "1-ulp LpPool rounding in onnx's reference evaluator",
        "onnx reference vs onnxruntime, PyTorch, OpenVINO",
        "window `[1,-2,3]`, p=2: onnxruntime 3.7416575 (sqrt 14 correctly rounded), reference "
        "3.7416573 (float32 average x 3 first); compare allows 2 ulp there",
    ),
    Divergence(
        "D23",
        "a mean over an empty axis",
        f"{OV}, onnxruntime vs PyTorch, onnx reference",
        "(1,2,0,3) over (2,3): OpenVINO 0.0, onnxruntime ReduceMean 0.0, PyTorch and the "
        "reference NaN; onnxruntime GlobalAveragePool refuses ('Only N can be zero')",
        family_touched=_d23_touched,
        family_between=_d23_between,
    ),
    Divergence(
        "D24",
        "MaxUnpool after an odd pooled size",
        "onnxruntime, onnx reference vs PyTorch",
        "(1,2,5,4), MaxPool k2 s2 indices `[0,2,8,10,20,22,28,30]`, MaxUnpool to the default "
        "4x4: onnxruntime puts plane 1 in rows 1 and 3 (flat indices of the 5x4 plane); "
        "PyTorch (per-plane indices) restores them; other values: 'Index value out of bounds. "
        "Got: 33. Valid range is [0, 32).'",
        family_between=_d24_between,
    ),
    Divergence(
        "D25",
        "MaxUnpool's output_shape",
        "onnxruntime vs onnx reference vs PyTorch",
        "1x2x5x5 unpooled with output_shape [1,2,5,5]: onnxruntime and PyTorch restore every "
        "value; the reference fails ('index 33 is out of bounds'); onnxruntime accepts any "
        "shape of as many elements ([1,2,4,7])",
        family_touched=_d25_touched,
        explained="MaxUnpool with an output_shape other than the default",
    ),
    Divergence(
        "D26",
        "OpenVINO's conversion of MaxUnpool2d (torch.export) wraps invalid indices",
        "OpenVINO's conversion vs PyTorch",
        "(1,2,7,7), MaxPool2d(2,2) + MaxUnpool2d(2,2): PyTorch refuses ('Found an invalid max "
        "index: 37'), OpenVINO writes out.flat[(idx + c*36) mod 72]; traced modules do not "
        "convert at all",
    ),
    Divergence(
        "D27",
        "OpenVINO's integer reductions",
        f"{OV} vs onnxruntime, PyTorch",
        "u8 `[200]*20` mean: OpenVINO 12 (the sum saturates at 255 in the u8 output buffer); "
        "i8 `[100,100,-100,-100]` (1,2,2,1) over (1,2): -73; i32 means truncate (ReduceMean) "
        "where AdaptiveAvgPool rounds half to even; u8 sums >= 32768 written by the scalar "
        "store become 0",
        family_touched=_d27_touched,
        explained="integer reductions in openvino: the running value is stored in the output type",
    ),
    Divergence(
        "D28",
        "onnxruntime's ReduceMean/ReduceSum depend on buffer alignment",
        "onnxruntime vs itself",
        "the same 20 values 4 bytes past a 16-byte boundary: -0.40856114; aligned: "
        "-0.40856117 (Eigen starts its packets at the first aligned element)",
    ),
    Divergence(
        "D29",
        "OpenVINO's AdaptivePool with a zero-size spatial input",
        f"{OV} vs PyTorch",
        "(1,2,0,5) to [2,3]: OpenVINO returns uninitialised memory; PyTorch refuses; irpool "
        "refuses, naming both",
    ),
    Divergence(
        "D30",
        "a reduction with no axes",
        "OpenVINO shape inference vs its CPU plugin",
        "ReduceSum-1 axes [] keep_dims=false: shape inference gives the input shape, the CPU "
        "plugin refuses to compile; keep_dims=true: identity",
        family_touched=_d30_touched,
    ),
    Divergence(
        "D31",
        "summation orders of global average pooling",
        f"{OV} vs onnxruntime vs PyTorch",
        "OpenVINO: 16-lane (AVX-512) or 8-lane (AVX2) chunks and a tree; onnxruntime "
        "GlobalAveragePool: 4 lanes; "
        "ReduceMean: Eigen packets; PyTorch: a cascade; 1x3x7x9: OpenVINO vs onnxruntime "
        "2.98e-8; all within (n + 1) * eps * mean|x|",
        family_between=_d31_between,
    ),
    Divergence(
        "D32",
        "adaptive average divisions",
        f"{OV} vs PyTorch",
        "OpenVINO sum / (kh*kw), PyTorch sum / kh / kw (channels_last: vector channels once); "
        "AdaptiveAvgPool2d((3,3)) on 1x3x7x9: 1 ulp in some cells",
        family_touched=_d32_touched,
        family_between=_d32_between,
        explained="an adaptive average over 2 or 3 axes: one division (openvino) or one per "
        "axis (PyTorch)",
    ),
    Divergence(
        "D33",
        "AdaptiveMaxPool's index type and NaN",
        f"{OV} vs PyTorch",
        "OpenVINO's CPU plugin computes i32 indices only (i64 does not compile); PyTorch int64; "
        "with NaN see D18 (OpenVINO keeps a NaN first tap, PyTorch the last NaN)",
        family_touched=_d33_touched,
        family_between=_d33_between,
    ),
    Divergence(
        "D34",
        "GlobalLpPool's conversion needs a static channel count",
        "OpenVINO's conversion vs onnxruntime",
        "the ONNX front end splits by C; with C dynamic: 'Conversion is failed for: "
        "GlobalLpPool-13'; onnxruntime runs it",
    ),
    Divergence(
        "D35",
        "onnx's reference LpPool drops NaN inputs",
        "onnx reference vs onnxruntime, PyTorch, OpenVINO",
        "`[1, NaN, 3]`, k3 p2: reference 3.8729835 (sqrt((1 + 9) / 2 * 3)), the others NaN",
    ),
    Divergence(
        "D36",
        "OpenVINO's TensorFlow conversion of max_pool_with_argmax",
        "OpenVINO's conversion vs TensorFlow",
        "k2 s1 VALID on 1x6x7x1: TensorFlow 5x6, the converted MaxPool-8 (strides 2) 3x3",
        converted=_d36_converted,
    ),
    Divergence(
        "D37",
        "OpenVINO's TensorFlow conversion of max pooling across channels",
        "OpenVINO's conversion vs TensorFlow",
        "max_pool2d(ksize [1,1,1,2], strides [1,1,1,2]) on 1x6x6x4: TensorFlow 1x6x6x2, "
        "openvino a 1x1 MaxPool passing 1x4x6x6 through",
        converted=_d37_converted,
    ),
    Divergence(
        "D38",
        "global max (ReduceMax) with NaN or only -inf",
        f"{OV} vs TensorFlow, PyTorch",
        "[NaN, 2, 0.5]: TensorFlow NaN, OpenVINO 2; all -inf: TensorFlow -inf, OpenVINO "
        "-3.4028235e38",
        converted=_d38_converted,
    ),
    Divergence(
        "D39",
        "the index of a max window with no tap in the input",
        f"{OV} vs onnxruntime vs PyTorch",
        "n=2, k2 s2 p1 d3 ceil: OpenVINO 0 (the plane's first element), onnxruntime the plane's "
        "offset minus the spatial strides (-8 on a 1x7 plane), PyTorch 2 (the first tap after "
        "stepping over the padding by the dilation, past the input)",
        between=_d39_between,
    ),
    Divergence(
        "D40",
        "zero-sized inputs",
        f"onnxruntime, PyTorch vs {OV}",
        "N = 0 runs in onnxruntime and PyTorch (an empty output), OpenVINO refuses it; C = 0 and "
        "(with N > 0) a spatial 0 are refused everywhere, except by OpenVINO's CPU plugin where "
        "pads give the empty axis an output: uninitialised memory (MaxPool-1/8, AvgPool-1 over "
        "(1,1,0), pads_end 1; MaxPool-8 with its indices used: -3.4e38); irpool refuses it",
    ),
    Divergence(
        "D41",
        "a window larger than the padded input",
        f"{OV} vs {ORT_TORCH}",
        "n=1, k2 s2 ceil: PyTorch (floor division) and onnxruntime (truncation) give one "
        "window; OpenVINO refuses (kernel after dilation larger than the padded data)",
    ),
    Divergence(
        "D42",
        "padding more than half the window",
        f"PyTorch vs {OV}, onnxruntime",
        "PyTorch refuses pad > ((k-1)d+1)/2, and for max pooling pad > k/2 (k2 p2 d3); OpenVINO "
        "computes; onnxruntime refuses only pad >= k (D11)",
    ),
    Divergence(
        "D43",
        "where a bfloat16 max starts",
        f"{OV} reference kernel vs {OV} jit kernel, folding, PyTorch",
        "windows of -inf: -3.3895e38 (0xFF7F) on oneDNN's reference kernel (a dilation, an "
        "empty window), -inf (0xFF80) on the jit kernel, when folded, and in PyTorch",
        between=_d43_between,
    ),
    Divergence(
        "D44",
        "float to integer conversion of NaN, infinity and out-of-range values",
        f"{OV} CPU Convert vs {OV} constant folding vs onnxruntime QLinearAveragePool",
        "f32 NaN/inf/3e9 -> i32: -2147483648 (CPU plugin and folding); f64 +inf -> i32: "
        "2147483647 (CPU plugin, saturates), -2147483648 (folding); f64 300 -> i8: 127 (CPU "
        "plugin), 44 (folding); QLinearAveragePool y_scale 0 or NaN: the type's minimum",
    ),
    Divergence(
        "empty-windows",
        "the value of a window with no tap in the input",
        f"{OV} vs {ORT_TORCH}",
        "NaN or -0.0 (OpenVINO means), 0 (onnxruntime, PyTorch); lowest() or -inf for max",
        between=_empty_between,
    ),
    Divergence(
        "64-bit",
        "float64 and int64 data",
        f"{OV} vs {ORT_TORCH}",
        "OpenVINO's CPU plugin computes float64 in float32 and int64 in int32",
        between=_narrow_between,
        family_between=_narrow_family_between,
    ),
)
"""Every known divergence, in the order docs/divergences.md lists them."""

BY_ID = {d.id: d for d in TABLE}


def touched(params: PoolParams, p: PoolPlan, x: Array | None = None) -> list[str]:
    """The ids of the divergences a layer (and its input, when given) exercises."""
    return [d.id for d in TABLE if d.touched is not None and d.touched(params, p, x)]


def touched_family(p: FamilyPlan, x: Array | None = None) -> list[str]:
    """The ids of the divergences a family layer (and its input, when given) exercises."""
    return [d.id for d in TABLE if d.family_touched is not None and d.family_touched(p, x)]


def between_family(used: FamilyPlan, other: FamilyPlan, x: Array) -> list[str]:
    """What separates two plans of one family layer, one line per divergence."""
    found = [d.family_between(used, other, x) for d in TABLE if d.family_between is not None]
    said = [text for text in found if text]
    return said or ["the conventions differ in a switch this input does not exercise"]


def between(used: PoolPlan, other: PoolPlan, x: Array) -> list[str]:
    """What separates two plans of one layer, one line per divergence (a compare diagnosis)."""
    found = [d.between(used, other, x) for d in TABLE if d.between is not None]
    said = [text for text in found if text]
    return said or ["the conventions differ in a switch this input does not exercise"]


def in_conversion(facts: Conversion) -> str:
    """The divergence that explains a node converted unfaithfully (the first that applies)."""
    order = ("D10b", "D4", "D2c", "D6", "D1", "D20")
    for key in order:
        rule = BY_ID[key].converted
        said = rule(facts) if rule is not None else None
        if said and (facts.kind == "qlinear") == (key == "D10b"):
            return said
    return "no known divergence explains the difference: a runtime or irpool bug"


SOURCE_ORDER = ("D36", "D37", "D3", "D38", "D8")
"""The divergences a conversion audit of a PyTorch or TensorFlow model may name, first first."""


def in_source_conversion(facts: Conversion) -> str:
    """The divergence that explains a PyTorch or TensorFlow op converted unfaithfully (the
    conversion audit), or that none does."""
    for key in SOURCE_ORDER:
        rule = BY_ID[key].converted
        said = rule(facts) if rule is not None else None
        if said:
            return said
    if facts.shapes_differ:
        return (
            "no known divergence explains the difference (the output shapes differ): a "
            "conversion, runtime or irpool bug; please report it"
        )
    return "no known divergence explains the difference: a conversion, runtime or irpool bug"


def in_shape(params: PoolParams) -> str:
    """Which divergence explains an ONNX node's size that onnx's shape inference or operator
    text gives differently from onnxruntime."""
    d4 = _d4_shape(params)
    for key in ("D5", "D14", "D2b"):
        rule = BY_ID[key].shape
        said = rule(params) if rule is not None else None
        if said:
            if d4 and key == "D5":
                return f"D4, {said}; onnxruntime pads for the undilated kernel"
            return said
    return "D2b: ceil mode with a last window starting in the right padding"


def table_markdown() -> list[str]:
    """The table of docs/divergences.md (what each id means)."""
    lines = [
        "## Known divergences",
        "",
        "| id | what differs | between | measured |",
        "|---|---|---|---|",
    ]
    for d in TABLE:
        lines.append(f"| {d.id} | {d.title} | {d.separates} | {d.measured} |")
    return lines


SYSTEMS = (("openvino", "OpenVINO"), ("onnxruntime", "onnxruntime"), ("torch", "PyTorch"))


def _input(case: Case) -> np.ndarray:
    return np.array(case.input, dtype=case.dtype).reshape(case.shape)


def compute(case: Case, system: str) -> list[np.ndarray] | str | None:
    """What irpool computes for `case` as `system` would, or a refusal, or None if the system
    cannot express the case."""
    x = _input(case)
    try:
        if system == "openvino" and case.openvino is not None:
            layer = infer(
                parse_text(
                    ir_net(case.openvino, x.shape, element_type_of_numpy(case.dtype) or "f32"),
                    "case",
                )
            )
            p = layer.pooling[0].bound.plan(x.shape, x.dtype)
        elif system == "onnxruntime" and case.onnx is not None:
            expected = case.expected.get("onnxruntime")
            if expected is not None and expected.refuses:
                return f"refuses ({expected.refuses})"
            spec = onnx_ops.select(case.onnx.op, case.onnx.domain, case.onnx.opset)
            p = plan(onnx_ops.params(spec, case.onnx.attrs, x.ndim), x.shape, "onnx", dtype=x.dtype)
        elif system == "torch" and case.torch is not None:
            params = torch_ops.params(case.torch.function, **case.torch.kwargs)
            p = plan(params, x.shape, "torch", dtype=x.dtype)
        else:
            return None
    except IrpoolError as e:
        return f"refuses ({e.message})"
    values, indices = pool(x, p)
    return [values] + ([indices] if indices is not None else [])


def _format(values: np.ndarray, digits: int = 4) -> str:
    flat = values.astype(np.float64).ravel()

    def one(v: float) -> str:
        if math.isnan(v):
            return "NaN"
        if v == 0 and math.copysign(1, v) < 0:
            return "-0"
        if abs(v) > 1e30:  # a type's lowest value: four digits say which
            return f"{v:.4g}"
        return f"{v:.{digits}g}"

    return "[" + ", ".join(one(float(v)) for v in flat) + "]"


def _cell(result: list[np.ndarray] | str | None, digits: int = 4) -> str:
    if result is None:
        return "-"
    if isinstance(result, str):
        return result
    text = _format(result[0], digits)
    if len(result) > 1:
        text += f" idx {_format(result[1])}"
    return text


# -- onnxruntime: the kernel decides (D5, D8, D16) ---------------------------------------------


@dataclass(frozen=True)
class KernelRow:
    """One ONNX node whose numbers depend on the onnxruntime kernel that runs it."""

    key: str
    op: str
    attrs: dict[str, object]
    shape: tuple[int, ...]
    input: tuple[float, ...]


NAN = math.nan
NAN_ROWS = (
    KernelRow("D8-1d", "MaxPool", {"kernel_shape": [2]}, (1, 1, 4), (5, NAN, 1, 2)),
    KernelRow(
        "D8-2d",
        "MaxPool",
        {"kernel_shape": [1, 4], "pads": [0, 1, 0, 0]},
        (1, 1, 1, 4),
        (5, NAN, 1, 2),
    ),
    KernelRow(
        "D8-2d-last",
        "MaxPool",
        {"kernel_shape": [1, 2], "strides": [1, 2]},
        (1, 1, 1, 4),
        (5, NAN, 1, 2),
    ),
    KernelRow(
        "D8-2d-restart",
        "MaxPool",
        {"kernel_shape": [1, 3]},
        (1, 1, 1, 7),
        (NAN, 1, 2, 3, 4, NAN, 6),
    ),
    KernelRow("D8-global", "MaxPool", {"kernel_shape": [1, 4]}, (1, 1, 1, 4), (5, NAN, 1, 2)),
    KernelRow(
        "D8-inf",
        "MaxPool",
        {"kernel_shape": [1, 2], "pads": [0, 0, 0, 1]},
        (1, 1, 1, 3),
        (-math.inf, -math.inf, -math.inf),
    ),
)
"""MaxPool-12 on float32: the same taps through each kernel (docs/semantics.md, max pooling)."""

VERSION_ROWS = (
    KernelRow(
        "D16",
        "AveragePool",
        {"kernel_shape": [4], "strides": [3], "count_include_pad": 1},
        (1, 1, 3),
        (1, 1, 1),
    ),
    KernelRow(
        "D16-ceil",
        "AveragePool",
        {"kernel_shape": [4], "strides": [3], "count_include_pad": 1, "ceil_mode": 1},
        (1, 1, 3),
        (1, 1, 1),
    ),
    KernelRow(
        "D5",
        "AveragePool",
        {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_UPPER"},
        (1, 1, 5),
        (1, 2, 3, 4, 5),
    ),
    KernelRow(
        "D5-ceil-cip",
        "AveragePool",
        {
            "kernel_shape": [1],
            "strides": [3],
            "auto_pad": "SAME_UPPER",
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
        (1, 1, 5),
        (1, 2, 3, 4, 5),
    ),
)
"""float32 AveragePool-11 (MLAS unless ceil_mode and count_include_pad) against AveragePool-19."""


def kernel_row(row: KernelRow, opset: int, indices: bool = False) -> list[np.ndarray] | str:
    """What irpool computes for an ONNX node under the onnx convention, or its refusal."""
    x = np.array(row.input, dtype=np.float32).reshape(row.shape)
    spec = onnx_ops.select(row.op, "", opset)
    try:
        params = onnx_ops.params(spec, row.attrs, x.ndim, indices=indices)
        p = plan(params, x.shape, "onnx", dtype=x.dtype)
        values, idx = pool(x, p)
    except IrpoolError as e:
        return "refuses (" + e.message.split(" (")[0].removeprefix("onnxruntime refuses: ") + ")"
    return [values] + ([idx] if idx is not None else [])


def _attrs_text(attrs: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in attrs.items()).replace(" ", "")


def kernel_tables() -> list[str]:
    lines = [
        "",
        "## onnxruntime: the kernel decides",
        "",
        "The same float32 taps through each of onnxruntime's MaxPool-12 paths: without the",
        "Indices output an MLAS kernel, chosen by the geometry, runs; with them, the reference",
        "loop.  Computed by irpool's `onnx` convention; the test suite checks every cell against",
        "onnxruntime 1.32.",
        "",
        "| case | input | attributes | MLAS kernel | without Indices | with Indices |",
        "|---|---|---|---|---|---|",
    ]
    for row in NAN_ROWS:
        spec = onnx_ops.select(row.op, "", 12)
        shape = row.shape
        p = plan(onnx_ops.params(spec, row.attrs, len(shape), indices=False), shape, "onnx")
        cells = [_cell(kernel_row(row, 12)), _cell(kernel_row(row, 12, indices=True))]
        data = _format(np.array(row.input))
        lines.append(
            f"| {row.key} | {data} | {_attrs_text(row.attrs)} | {p.nan_max} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        "AveragePool on float32 by version: 7..18 run MLAS unless ceil_mode and",
        "count_include_pad are both set; 19 and later run onnxruntime's own loop.",
        "",
        "| case | input | attributes | AveragePool-11 | AveragePool-19 |",
        "|---|---|---|---|---|",
    ]
    for row in VERSION_ROWS:
        cells = [_cell(kernel_row(row, 11)), _cell(kernel_row(row, 19))]
        data = _format(np.array(row.input))
        lines.append(
            f"| {row.key} | {data} | {_attrs_text(row.attrs)} | " + " | ".join(cells) + " |"
        )
    return lines


# -- the pooling families: the same input in each system (D17 ...) ---------------------------


@dataclass(frozen=True)
class FamilyRow:
    """One family divergence shown on a small input: per system (openvino, onnxruntime,
    torch), the family layer it runs (family, params) and, for MaxUnpool, its indices."""

    key: str
    title: str
    shape: tuple[int, ...]
    input: tuple[float, ...]
    systems: Mapping[str, tuple[Any, Any]]
    dtype: str = "float32"
    indices: Mapping[str, tuple[int, ...]] | None = None
    """MaxUnpool: the indices each system's MaxPool gives (flat over the tensor, per plane)."""


def _family_rows() -> tuple[FamilyRow, ...]:
    from .families.adaptive import ADAPTIVE, AdaptiveParams
    from .families.lp import LP, LpParams
    from .families.reduce import GLOBAL_MAX, REDUCE_MAX, REDUCE_MEAN, ReduceParams
    from .families.unpool import UNPOOL, UnpoolParams

    def rmax(keep: bool = False) -> tuple[Any, Any]:
        return REDUCE_MAX, ReduceParams(op="ReduceMax-1", kind="max", axes=(2, 3), keep=keep)

    gmax = (
        GLOBAL_MAX,
        ReduceParams(op="GlobalMaxPool-1", kind="max", axes=(2, 3), keep=True, global_op=True),
    )
    amax = (
        ADAPTIVE,
        AdaptiveParams(
            op="AdaptiveMaxPool-8", reduce="max", sizes=(1, 1), indices=True, index_dtype="int32"
        ),
    )
    mean = (REDUCE_MEAN, ReduceParams(op="ReduceMean-1", kind="mean", axes=(2, 3), keep=False))

    def everywhere(entry: tuple[Any, Any]) -> dict[str, tuple[Any, Any]]:
        return dict.fromkeys(FAMILY_SYSTEMS, entry)

    def lp(ceil: bool, p: int) -> tuple[Any, Any]:
        window = onnx_ops.params(
            onnx_ops.select("AveragePool", "", 19),
            {"kernel_shape": [3], "strides": [2], "ceil_mode": int(ceil)},
            3,
        )
        return LP, LpParams(op="LpPool-18", p=float(p), window=window)

    unpool = (
        UNPOOL,
        UnpoolParams(
            op="MaxUnpool-11",
            kernel=(2, 2),
            strides=(2, 2),
            pads=((0, 0), (0, 0)),
            output_shape=None,
        ),
    )
    aavg = (ADAPTIVE, AdaptiveParams(op="AdaptiveAvgPool-8", reduce="mean", sizes=(1, 2)))
    maxima = {"openvino": rmax(), "onnxruntime": gmax, "torch": rmax()}
    alternating = (1, -2, 3, -4, 5, -6)
    signed_lp = everywhere(lp(False, 1))
    nan = math.nan
    inf = math.inf
    return (
        FamilyRow(
            "D17", "NaN as the 16th element of a max", (1, 1, 1, 16), (1,) * 15 + (nan,), maxima
        ),
        FamilyRow("D18", "global max of [1, NaN]", (1, 1, 1, 2), (1, nan), maxima),
        FamilyRow("D18-first", "global max of [NaN, 1]", (1, 1, 1, 2), (nan, 1), maxima),
        FamilyRow(
            "D18-adaptive",
            "adaptive max to 1x1 of [1, NaN]",
            (1, 1, 1, 2),
            (1, nan),
            {"openvino": amax, "torch": amax},
        ),
        FamilyRow("D19", "global max of [-inf, -inf]", (1, 1, 1, 2), (-inf, -inf), maxima),
        FamilyRow(
            "D20",
            "LpPool k3 s2 ceil p2 (a partial last window)",
            (1, 1, 6),
            alternating,
            everywhere(lp(True, 2)),
        ),
        FamilyRow("D21", "LpPool k3 s2 p1 (signed power)", (1, 1, 6), alternating, signed_lp),
        FamilyRow("D23", "mean over an empty axis", (1, 2, 0, 3), (), everywhere(mean)),
        FamilyRow(
            "D24",
            "MaxUnpool k2 s2 of a 5x4 pooling (plane 1 of two)",
            (1, 2, 2, 2),
            (10, 11, 12, 13, 20, 21, 22, 23),
            {"onnxruntime": unpool, "torch": unpool},
            indices={"onnxruntime": (0, 2, 8, 10, 20, 22, 28, 30), "torch": (0, 2, 8, 10) * 2},
        ),
        FamilyRow(
            "D27", "u8 mean of 20 x 200", (1, 1, 4, 5), (200,) * 20, everywhere(mean), dtype="uint8"
        ),
        FamilyRow(
            "D32",
            "adaptive average 3x6 -> 1x2 (window sums 5 and 9)",
            (1, 1, 3, 6),
            (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -1, 1, 1, 1),
            {"openvino": aavg, "torch": aavg},
        ),
    )


FAMILY_SYSTEMS = {"openvino": "openvino", "onnxruntime": "onnx", "torch": "torch"}


def family_cell(row: FamilyRow, system: str) -> list[np.ndarray] | str | None:
    """What irpool computes for a family row as `system` would (its convention), a refusal,
    or None when the system has no such op."""
    from .kernel.family import execute

    if system not in row.systems:
        return None
    family, params = row.systems[system]
    x = np.array(row.input, dtype=row.dtype).reshape(row.shape)
    try:
        p = family.plan(params, x.shape, row.dtype, conv.get(FAMILY_SYSTEMS[system]))
        ins: list[np.ndarray | None] = [x]
        if row.indices is not None:
            ins.append(np.array(row.indices[system], dtype=np.int64).reshape(row.shape))
        return execute(p, ins)
    except IrpoolError as e:
        return f"refuses ({e.message.split(';')[0]})"


def family_table() -> list[str]:
    lines = [
        "",
        "## The pooling families",
        "",
        "Adaptive pooling, reductions (global pooling), Lp pooling and max unpooling: the same",
        "small input through each system, computed by irpool's conventions (OpenVINO: the IR op",
        "or what its converters write; onnxruntime: the ONNX op; PyTorch: the torch function).",
        "The test suite checks every cell against openvino 2026.4, onnxruntime 1.32 and torch",
        "2.13 (tests/test_family_divergences.py).",
        "",
        "| case | what differs | input | OpenVINO | onnxruntime | PyTorch |",
        "|---|---|---|---|---|---|",
    ]
    for row in FAMILY_ROWS:
        cells = [_cell(family_cell(row, system), 9) for system, _ in SYSTEMS]
        data = _format(np.array(row.input, dtype=np.float64)) if row.input else "(empty)"
        lines.append(f"| {row.key} | {row.title} | {data} | " + " | ".join(cells) + " |")
    return lines


FAMILY_ROWS = _family_rows()


def markdown() -> str:
    lines = [
        "# Divergences",
        "",
        "Generated by `python -m irpool.divergences` from irpool's divergence table (the one",
        "`compare`, `convert-report`, `check`, `explain` and `fixtures` read) and its",
        "conventions; the test suite regenerates it and checks every cell of the matrix against",
        "openvino 2026.4 (CPU), onnxruntime 1.31 and torch 2.13 (tests/test_divergences.py).",
        "The story behind each row: [semantics.md](semantics.md).",
        "",
        *table_markdown(),
        "",
        "## The matrix",
        "",
        "Inputs and layers: `irpool/cases.py`. Values are flattened; `-` means the system",
        "cannot express the case.",
        "",
        "| case | what differs | OpenVINO | onnxruntime | PyTorch |",
        "|---|---|---|---|---|",
    ]
    for case in CASES:
        cells = [_cell(compute(case, system)) for system, _ in SYSTEMS]
        lines.append(f"| {case.key} | {case.title} | " + " | ".join(cells) + " |")
    lines += kernel_tables()
    lines += family_table()
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    print(markdown(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
