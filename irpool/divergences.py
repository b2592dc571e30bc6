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


def _d17_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.empty_index == other.empty_index or not used.indices:
        return None
    if empty_windows(used) is None:
        return None
    return (
        "D39: the index of a max window with no tap in the input: "
        f"{_title(other.convention)} '{other.empty_index}', "
        f"{_title(used.convention)} '{used.empty_index}'"
    )


def _d21_between(used: PoolPlan, other: PoolPlan, x: Array) -> str | None:
    if used.reduce != "max" or used.dtype != "bfloat16" or used.max_start == other.max_start:
        return None
    return (
        "D43: where a bfloat16 max starts: "
        f"{_title(other.convention)} {other.max_start:.5g}, "
        f"{_title(used.convention)} {used.max_start:.5g}"
    )


OV = "OpenVINO"
ORT_TORCH = "onnxruntime, PyTorch"

TABLE: tuple[Divergence, ...] = (
    Divergence(
        "D1",
        "include-pad divisor over the ceil overhang",
        f"{OV} vs {ORT_TORCH}",
        "x=1..6, k3 s2 p1 ceil: OpenVINO `[1,3,5,2]`, onnxruntime/PyTorch `[1,3,5,3]`",
        touched=lambda params, p, x: _overhang_kind(params, p, x, "D1"),
        between=_divisor_between("D1"),
        converted=_d1_converted,
        explained=(
            "padding counted with a non-zero pad: openvino divides windows that reach into the "
            "ceil overhang by the full kernel volume (onnxruntime and PyTorch do not count the "
            "overhang)"
        ),
    ),
    Divergence(
        "D1c",
        "OpenVINO's include-pad switch is global",
        f"{OV} vs {ORT_TORCH}",
        "padding on H makes the W overhang count: 0.5 instead of 1.0",
        touched=lambda params, p, x: _overhang_kind(params, p, x, "D1c"),
        between=_divisor_between("D1c"),
        explained="as D1, on an axis without padding: openvino's include-pad switch is global",
    ),
    Divergence(
        "D1d",
        "dilated include-pad divisor over the ceil overhang",
        f"{OV} vs onnxruntime",
        "OpenVINO `[1,3,5,3]`, onnxruntime `[1,3,5,6]`",
        touched=lambda params, p, x: _overhang_kind(params, p, x, "D1d"),
        between=_divisor_between("D1d"),
        explained="as D1, with dilations",
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
        "(extra window)",
        converted=_d2c_converted,
    ),
    Divergence(
        "D3",
        "OpenVINO's PyTorch conversion of avg_pool2d(k3,s2,p1,ceil,count_include_pad)",
        "OpenVINO's conversion vs PyTorch",
        "off by up to 17/3 on a 6x6 ramp",
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
        "D39",
        "the index of a max window with no tap in the input",
        f"{OV} vs onnxruntime vs PyTorch",
        "n=2, k2 s2 p1 d3 ceil: OpenVINO 0 (the plane's first element), onnxruntime the plane's "
        "offset minus the spatial strides (-8 on a 1x7 plane), PyTorch 2 (the first tap after "
        "stepping over the padding by the dilation, past the input)",
        between=_d17_between,
    ),
    Divergence(
        "D40",
        "zero-sized inputs",
        f"onnxruntime, PyTorch vs {OV}",
        "N = 0 runs in onnxruntime and PyTorch (an empty output), OpenVINO refuses it; C = 0 and "
        "(with N > 0) a spatial 0 are refused everywhere",
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
        between=_d21_between,
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
    ),
)
"""Every known divergence, in the order docs/divergences.md lists them."""

BY_ID = {d.id: d for d in TABLE}


def touched(params: PoolParams, p: PoolPlan, x: Array | None = None) -> list[str]:
    """The ids of the divergences a layer (and its input, when given) exercises."""
    return [d.id for d in TABLE if d.touched is not None and d.touched(params, p, x)]


def between(used: PoolPlan, other: PoolPlan, x: Array) -> list[str]:
    """What separates two plans of one layer, one line per divergence (a compare diagnosis)."""
    found = [d.between(used, other, x) for d in TABLE if d.between is not None]
    said = [text for text in found if text]
    return said or ["the conventions differ in a switch this input does not exercise"]


def in_conversion(facts: Conversion) -> str:
    """The divergence that explains a node converted unfaithfully (the first that applies)."""
    order = ("D10b", "D4", "D2c", "D6", "D1")
    for key in order:
        rule = BY_ID[key].converted
        said = rule(facts) if rule is not None else None
        if said and (facts.kind == "qlinear") == (key == "D10b"):
            return said
    return "no known divergence explains the difference: a runtime or irpool bug"


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


def _format(values: np.ndarray) -> str:
    flat = values.astype(np.float64).ravel()

    def one(v: float) -> str:
        if math.isnan(v):
            return "NaN"
        if v == 0 and math.copysign(1, v) < 0:
            return "-0"
        if abs(v) > 1e30:
            return f"{v:.4g}"
        return f"{v:.4g}"

    return "[" + ", ".join(one(float(v)) for v in flat) + "]"


def _cell(result: list[np.ndarray] | str | None) -> str:
    if result is None:
        return "-"
    if isinstance(result, str):
        return result
    text = _format(result[0])
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
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    print(markdown(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
