"""Conventions: the runtime-specific choices of OpenVINO, ONNX (onnxruntime), PyTorch and
TensorFlow.

An op's attributes say what a layer means; a convention says how one runtime resolves what the
attributes leave open.  Every field cites the measurement in docs/semantics.md (the D numbers are
the divergences of docs/divergences.md).  IR layers default to `openvino`, ONNX nodes to `onnx`.  A
convention may also refuse what its runtime has no op for (`floor_only`,
`mean_excludes_padding`: TensorFlow).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from . import cpu
from .errors import UsageError
from .target import Target

DivisorRule = Literal["full_if_any_pad", "declared"]
NanMax = Literal[
    "ignore",
    "first",
    "propagate",
    "mlas_generic",
    "mlas_global",
    "mlas_2d",
    "mlas_3d",
    "eigen_3d",
]
EmptyMean = Literal["openvino", "nan", "zero"]
EmptyMax = Literal["lowest", "-inf"]
IntMean = Literal["half_even", "trunc"]
EmptyIndex = Literal["plane_start", "minus_one", "first_tap"]


@dataclass(frozen=True, kw_only=True)
class Convention:
    """One runtime's choices.  A field's default is the choice two of the three runtimes
    share, so that each convention below names where it departs from the others."""

    name: str
    title: str
    ceil_keeps_window_in_pad: bool = False
    """`ceil` keeps a last window that starts in the right padding (OpenVINO `ceil`, D2);
    onnxruntime and PyTorch drop it for every opset."""
    count_pad_divisor: DivisorRule = "declared"
    """With padding counted: OpenVINO divides every window by the kernel volume as soon as any
    pad is non-zero, ceil overhang included (D1, D1c, D1d); onnxruntime and PyTorch count the
    declared pads but not the ceil overhang."""
    empty_mean: EmptyMean = "zero"
    """A mean window with no tap in the input (only the ceil overhang can make one): OpenVINO's
    CPU plugin divides the zero sum by the product of the clamped window extents,
    min(start + k_eff, n) - max(start, 0), which is 0 (NaN) or negative (-0.0); onnxruntime and
    PyTorch give 0; the onnx reference gives NaN."""
    empty_max: EmptyMax = "lowest"
    """A max window with no tap in the input: OpenVINO gives the lowest finite value of its
    f32 compute type (f16 outputs show -inf); PyTorch starts from -inf."""
    nan_max: NanMax
    """NaN in a max window (D8): OpenVINO never selects it; onnxruntime's reference loop keeps
    it only when it is the first in-input tap; PyTorch propagates it and points at the last NaN.
    onnxruntime's MLAS kernels have their own rules (`onnxruntime_kernels`)."""
    int_mean: IntMean = "half_even"
    """Integer mean (D9): OpenVINO CPU rounds half to even; PyTorch int64 truncates."""
    same_pads_dilated: bool = True
    """SAME_* pads from the dilated kernel (OpenVINO, the ONNX spec) or from the undilated one
    (onnxruntime, D4)."""
    onnxruntime_sizes: bool = False
    """onnxruntime's output-size arithmetic (pool_attributes.h): the floor division truncates
    toward zero, so a window larger than the padded input can still give one output; SAME pads
    come from the undilated kernel and are not clamped at 0 (they can be negative)."""
    narrow_64bit: bool = False
    """OpenVINO's CPU plugin runs f64 pooling in f32 (inputs saturate to +-FLT_MAX) and i64
    pooling in i32 (inputs wrap to 32 bits); measured, see docs/semantics.md."""
    empty_index: EmptyIndex = "plane_start"
    """The index of a max window with no tap in the input (only dilations make one there):
    OpenVINO points at the first element of the window's plane; onnxruntime's loop leaves every
    spatial coordinate at -1, so its flat index is the plane's offset minus the sum of the
    spatial strides (measured: -8 for the first plane of a 1x7 input); PyTorch points at the
    window's first tap after stepping over the negative positions by the dilation, even where
    that lies past the input (measured with torch 2.13)."""
    integers_in_float32: bool = False
    """OpenVINO's CPU plugin pools an integer tensor of more than one channel, or with a
    dilation, in float32: the input converted (i64 wrapped to 32 bits first), pooled as float32
    is, the result rounded half to even and saturated; a MaxPool-8/14 whose indices output is
    used, and a one-channel undilated layer, keep integers (measured on every op version, i8 to
    i64, 1 or 3 channels, dilation 1 or 2, rank 1-3; docs/semantics.md)."""
    torch_checks: bool = False
    """PyTorch's acceptance and output sizes (torch 2.13, measured): padding at most half of the
    effective kernel, max pooling's padding at most half of the undilated kernel, avg_pool3d's
    input at least the kernel, then floor((n + 2p - k_eff + (ceil ? s - 1 : 0)) / s) + 1 with
    floor division and ceil's last-window drop, refused below 1; windows larger than the padded
    input are computed (docs/semantics.md "PyTorch's checks")."""
    cpu_plugin_kernels: bool = False
    """openvino's CPU plugin choice of kernel decides numbers and refusals (measured with
    openvino 2026.4.1, docs/semantics.md): bfloat16 results are rounded to nearest even with
    subnormals flushed to zero; a bfloat16 MaxPool on oneDNN's reference kernel (a dilation
    > 1, or a window with no tap in the input) starts from bfloat16's lowest value; it has no
    kernel for a bfloat16 MaxPool-8/14 whose indices are used, nor for a one-channel i32
    AvgPool that needs the reference kernel (an empty window, or a dilation > 1)."""
    onnxruntime_kernels: bool = False
    """onnxruntime's choice of CPU kernel decides numbers and refusals (measured with
    onnxruntime 1.32, docs/semantics.md): a node its front end marks for MLAS
    (`PoolParams.onnxruntime_mlas`) gets the NaN rules of the MLAS max kernel that runs it, the
    divisor prod(k) with count_include_pad, and refuses negative SAME pads; every node with a
    written pad >= its kernel is refused ("Pad should be smaller than kernel", D11)."""
    floor_only: bool = False
    """The runtime's pools round the output size down and have no ceil mode (TensorFlow): a layer
    whose ceil rounding gives another output size than floor is refused."""
    mean_excludes_padding: bool = False
    """The runtime's averages never count padding (TensorFlow's AvgPool): a mean that counts a
    non-zero pad is refused."""
    eigen_cuboid: bool = False
    """TensorFlow without oneDNN (cpu.tf_uses_onednn() false: a CPU without AVX512_VNNI,
    AVX512_BF16, AVX_VNNI and AMX, or TF_ENABLE_ONEDNN_OPTS=0) runs MaxPool3D/AvgPool3D on
    Eigen's CuboidMaxPooling/CuboidAvgPooling (measured with tensorflow-cpu 2.21 on an AVX2
    EPYC): SAME pads are not clamped at 0, the first being trunc(((ceil(n/s) - 1)*s + k - n)/2),
    so a stride larger than the kernel by 2 or more can shift every window (n=6, k=1, s=3 reads
    taps 1 and 4, not 0 and 3; means too); a max follows the `eigen_3d` NaN rule."""
    onnx_front_end: bool = False
    """An ONNX node runs as the runtime's ONNX front end rewrites it (openvino: LpPool becomes
    an AvgPool of |x|^p with the padding counted and ceil as ceil_torch; MaxUnpool and the
    com.microsoft ops have no conversion rule), not as an ONNX kernel of its own."""
    framework: str | None = None
    """The source framework whose own ops are the reference for this convention (torch, tf:
    convert-report and extract run the framework's op itself); None where irpool's rules are
    the reference (openvino, onnx)."""
    diagnosed: bool = True
    """Whether compare's diagnosis tries this convention on a layer that disagrees (TensorFlow's
    numbers are OpenVINO's wherever it can express a layer, so naming it adds nothing)."""
    target: Target | None = None
    """The machine modelled (irpool/target.py): the instruction set of openvino's CPU plugin
    (read where `cpu_plugin_kernels`) and whether TensorFlow runs oneDNN (`eigen_cuboid`).
    `get` fills it with the target chosen at the edge; the planners read it from here only."""


_NAMES = ("openvino", "onnx", "torch", "tf")
_COLUMNS: dict[str, tuple[Any, Any, Any, Any]] = {
    # switch: (openvino, onnx, torch, tf)
    "title": ("OpenVINO CPU plugin", "onnxruntime", "PyTorch", "TensorFlow"),
    "ceil_keeps_window_in_pad": (True, False, False, False),
    "count_pad_divisor": ("full_if_any_pad", "declared", "declared", "declared"),
    "empty_mean": ("openvino", "zero", "zero", "zero"),
    "empty_max": ("lowest", "lowest", "-inf", "lowest"),
    "nan_max": ("ignore", "first", "propagate", "ignore"),
    "int_mean": ("half_even", "half_even", "trunc", "half_even"),
    "same_pads_dilated": (True, False, True, True),
    "onnxruntime_sizes": (False, True, False, False),
    "narrow_64bit": (True, False, False, False),
    "empty_index": ("plane_start", "minus_one", "first_tap", "plane_start"),
    "integers_in_float32": (True, False, False, False),
    "torch_checks": (False, False, True, False),
    "cpu_plugin_kernels": (True, False, False, False),
    "onnxruntime_kernels": (False, True, False, False),
    "floor_only": (False, False, False, True),
    "mean_excludes_padding": (False, False, False, True),
    "eigen_cuboid": (False, False, False, True),
    "onnx_front_end": (True, False, False, False),
    "framework": (None, None, "torch", "tf"),
    "diagnosed": (True, True, True, False),
}
"""Every switch (Convention's fields, documented there) side by side: what OpenVINO's CPU
plugin, onnxruntime, PyTorch and TensorFlow do, one column each (measured, docs/semantics.md)."""

OPENVINO, ONNX, TORCH, TF = (
    Convention(name=name, **{switch: values[i] for switch, values in _COLUMNS.items()})
    for i, name in enumerate(_NAMES)
)
"""The tf column: TensorFlow's pooling ops (tf.nn.avg_pool/max_pool, Keras pooling layers; measured
with tensorflow-cpu 2.21): SAME puts the odd pad at the end (openvino's same_upper), VALID has
no pads, sizes round down, averages exclude the padding, and a max skips NaN and gives the
lowest finite float32 for a window of only NaN and -inf, exactly as openvino's CPU plugin does
(`[NaN, 1, 3, NaN, 2, NaN, NaN, -inf, -inf]`, k2 s1 and k3 SAME, give identical rows). A global
max (tf.reduce_max) propagates NaN and keeps -inf instead (D38). That is TensorFlow with its
oneDNN kernels, the default on a CPU with AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; without
them (an AVX2 or plain AVX-512 CPU, or TF_ENABLE_ONEDNN_OPTS=0) 3-D pools run Eigen's cuboid
kernels, whose SAME pads and NaN rule differ (`eigen_cuboid`; 1-D and 2-D pools give the numbers
above either way, measured). Its other switches are the defaults: the pad is never part of a
ceil window, a counted pad divides by the declared taps, an empty mean is 0 and an empty max the
lowest finite value, integer means round half to even, SAME pads come from the dilated kernel,
and 64-bit data is computed as it is."""

CONVENTIONS: dict[str, Convention] = {c.name: c for c in (OPENVINO, ONNX, TORCH, TF)}


def get(name: str | Convention) -> Convention:
    """The convention called `name` (openvino, onnx, torch, tf), on the target modelled (a
    Convention without a target is given it)."""
    if isinstance(name, Convention):
        return name if name.target is not None else _on(name, target())
    try:
        base = CONVENTIONS[name.lower()]
    except KeyError:
        raise UsageError(
            f"unknown convention {name!r}; expected one of {', '.join(CONVENTIONS)}"
        ) from None
    return _on(base, target())


@functools.cache
def _on(base: Convention, machine: Target) -> Convention:
    return replace(base, target=machine)


_CHOSEN: list[Target] = []


def target() -> Target:
    """The target modelled: the one the edge chose (`use_target`), else this machine's
    (IRPOOL_OV_ISA, else this CPU; irpool/cpu.py)."""
    return _CHOSEN[-1] if _CHOSEN else cpu.this_machine()


@contextlib.contextmanager
def use_target(machine: Target) -> Iterator[Target]:
    """Model `machine` in what runs inside the block (the command line does this once, with
    the target --ov-isa or the environment names)."""
    _CHOSEN.append(machine)
    try:
        yield machine
    finally:
        _CHOSEN.pop()
