"""The divergences between runtimes, as one table, and the matrix of docs/divergences.md.

Every known divergence (D1 ... D44, and two switches without a number) is one `Divergence`
record: its id, what differs, the systems it separates, the measured story, and the conditions
under which it shows:

* `touched(plan, x, params)`: this layer (and input) exercises it (fixtures, explain); the
  record's `touched` judges a windowed plan, `family_touched` a family plan;
* `between(used, other, x)`: it is what separates two plans of one layer, as said in a compare
  diagnosis (None: not this one); `between` for windowed plans, `family_between` for family
  plans;
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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..families import Array, FamilyPlan
from ..geometry import PoolParams, PoolPlan
from ..model import Plan
from .predicates import Conversion as Conversion
from .predicates import (
    _d1_converted,
    _d2_between,
    _d2_touched,
    _d2c_converted,
    _d3_converted,
    _d4_converted,
    _d4_shape,
    _d4_touched,
    _d6_converted,
    _d8_between,
    _d8_converted,
    _d8_touched,
    _d9_between,
    _d9_touched,
    _d10b_converted,
    _d11_touched,
    _d14_touched,
    _d17_touched,
    _d18_between,
    _d18_touched,
    _d19_between,
    _d19_touched,
    _d20_between,
    _d20_converted,
    _d21_between,
    _d23_between,
    _d23_touched,
    _d24_between,
    _d25_touched,
    _d27_touched,
    _d30_touched,
    _d31_between,
    _d32_between,
    _d32_touched,
    _d33_between,
    _d33_touched,
    _d36_converted,
    _d37_converted,
    _d38_converted,
    _d39_between,
    _d43_between,
    _divisor_between,
    _empty_between,
    _last_start,
    _narrow_between,
    _narrow_family_between,
    _partial_lp,
    _same,
)
from .predicates import _overhang_kind as _overhang_kind


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
        "D45",
        "a QDQ average pool: OpenVINO's low-precision pooling vs onnxruntime's QLinearAveragePool",
        "OpenVINO's conversion vs onnxruntime",
        "DequantizeLinear -> AveragePool -> QuantizeLinear: onnxruntime fuses it into "
        "QLinearAveragePool (float mean of the dequantized values / y_scale + zp, half to "
        "even); OpenVINO's LPT pools the codes (f32(sum) * f32(1/n)) and fuses the "
        "requantization (x * isc + ish, one fma): 37 of 4,908 codes in 20 of 84 QDQ average "
        "pools differ by one step (openvino 2026.4.1, onnxruntime 1.32); irpool's reading of "
        "LPT reproduces every openvino code (ceil_mode aside, which openvino keeps in float32)",
    ),
    Divergence(
        "D45b",
        "a QDQ average pool with count_include_pad and a zero point: OpenVINO pads with code 0",
        "OpenVINO's conversion vs onnxruntime",
        "LPT pools the codes, and a padded tap counts code 0, which stands for -zp * scale "
        "instead of 0.0 (onnxruntime's QLinearAveragePool pads with the real 0): i8 codes with "
        "zero points -3/7, k3 p1: 192 of 486 codes differ, by up to 174 steps",
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


def touched(p: Plan, x: Array | None = None, params: PoolParams | None = None) -> list[str]:
    """The ids of the divergences a layer's plan (and its input, when given) exercises.  A
    windowed plan is judged with the params it was planned from (`params`), a family plan
    (adaptive, reduction, Lp, unpooling) by itself."""
    if isinstance(p, PoolPlan):
        if params is None:
            raise TypeError("a windowed plan's divergences are judged with its params")
        return [d.id for d in TABLE if d.touched is not None and d.touched(params, p, x)]
    assert isinstance(p, FamilyPlan)
    return [d.id for d in TABLE if d.family_touched is not None and d.family_touched(p, x)]


def between(used: Plan, other: Plan, x: Array) -> list[str]:
    """What separates two plans of one layer, one line per divergence (a compare diagnosis)."""
    if isinstance(used, PoolPlan):
        assert isinstance(other, PoolPlan)
        found = [d.between(used, other, x) for d in TABLE if d.between is not None]
    else:
        assert isinstance(used, FamilyPlan) and isinstance(other, FamilyPlan)
        found = [d.family_between(used, other, x) for d in TABLE if d.family_between is not None]
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
