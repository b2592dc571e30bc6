"""What a runtime refuses for a windowed pooling layer, as its own words: PyTorch's checks,
zero-size dims, openvino's CPU plugin's missing kernels (per instruction set), onnxruntime's
pads against the kernel and negative SAME pads, and what a convention cannot express."""

from __future__ import annotations

import math

from .conventions import Convention
from .errors import ShapeError, SpecError
from .window_rules import (
    AxisPlan,
    Pads,
    PoolParams,
    PoolPlan,
    axis_pads,
    dilated,
    out_size,
    shape_rule,
    torch_out_size,
)


def torch_refusal(
    params: PoolParams, shape: tuple[int, ...], convention: Convention, indices: bool
) -> str | None:
    """What PyTorch raises for this call (the first line of its message), in its order, or
    None.  `indices`: the call returns indices (1-D max pooling without them is max_pool1d,
    which has checks of its own); 1-D calls run as 2-D ones with a height of 1."""
    rank = len(shape) - 2
    k, d, s = params.window, params.dilations, params.strides
    max_pool = params.reduce == "max"
    pads = [max(axis_pads(params, i, n, convention)) for i, n in enumerate(shape[2:])]
    rule = shape_rule(params.rounding, convention)
    outs = [
        torch_out_size(n, dilated(k[i], d[i]), s[i], pads[i], pads[i], rule)
        for i, n in enumerate(shape[2:])
    ]
    zero = _torch_zero_dims(shape, max_pool, indices)
    if max_pool and rank == 1 and not indices:
        if zero is not None:
            return zero
        if pads[0] > k[0] // 2:
            return (
                "max_pool1d() padding should be at most half of kernel size, but got "
                f"padding={pads[0]} and kernel_size={k[0]}"
            )
        if outs[0] <= 0:
            return f"max_pool1d() Invalid computed output size: {outs[0]}"
        return None
    for i in range(rank):
        dil = d[i]  # 1 in every torch average pooling call (an IR AvgPool-16 may have more)
        if pads[i] > dilated(k[i], dil) // 2:
            return (
                "pad should be at most half of effective kernel size, but got "
                f"pad={pads[i]}, kernel_size={k[i]} and dilation={dil}"
            )
    if zero is not None:
        return zero
    if max_pool and any(pads[i] > k[i] // 2 for i in range(rank)):
        if rank == 3:
            return (
                "pad should be smaller than or equal to half of kernel size, but got "
                f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {pads[0]} padW: {pads[2]} "
                f"padH: {pads[1]}"
            )
        kh, ph = (k[0], pads[0]) if rank == 2 else (1, 0)
        return (
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pads[-1]}, padH = {ph}, kW = {k[-1]}, kH = {kh}"
        )
    if not max_pool and rank == 3 and any(n < k[i] for i, n in enumerate(shape[2:])):
        t, h, w = shape[2:]
        return (
            f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
            f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )
    if any(o < 1 for o in outs):
        lift = [1] if rank == 1 else []
        given = "x".join(str(v) for v in [shape[1], *lift, *shape[2:]])
        got = "x".join(str(v) for v in [shape[1], *lift, *outs])
        return (
            f"Given input size: ({given}). Calculated output size: ({got}). Output size is "
            "too small"
        )
    return None


def _torch_zero_dims(shape: tuple[int, ...], max_pool: bool, indices: bool) -> str | None:
    """PyTorch's words for a zero dimension other than N (N = 0 runs)."""
    if not any(n == 0 for n in shape[1:]):
        return None
    rank = len(shape) - 2
    listed = ", ".join(str(n) for n in shape)
    if rank == 3:
        where = "max_pool3d_with_indices_out_cpu_template()" if max_pool else "avg_pool3d()"
        return (
            f"{where}: Expected input's non-batch dimensions to have positive length, but "
            f"input has a shape of [{listed}] and non-batch dimension 0 has length zero!"
        )
    if rank == 1 and max_pool and not indices:
        return (
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
            f"size for input, but got:[{listed}]"
        )
    if rank == 1:
        listed = ", ".join(str(n) for n in (*shape[:2], 1, shape[2]))
    return (
        "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
        f"but got:[{listed}]"
    )


def check_zero_dims(shape: tuple[int | None, ...], convention: Convention) -> None:
    """Refuse zero-sized dims (None: not static) as the convention's runtime does: openvino
    refuses N = 0 and C = 0 (its shape inference); onnxruntime runs N = 0 (an empty output) and
    refuses C = 0 and, with N > 0, any spatial 0 ("Only N can be zero"; measured with
    onnxruntime 1.32 on every MaxPool and AveragePool version); PyTorch runs N = 0 and refuses
    every other zero (torch 2.13; its own words come from `torch_refusal`)."""
    if shape[1] == 0:
        raise ShapeError("Channel count is zero; expected C >= 1")
    if convention.torch_checks:
        zero = next((i for i, n in enumerate(shape[2:]) if n == 0), None)
        if zero is not None:
            raise ShapeError(f"PyTorch refuses a spatial size 0 (axis {zero}); only N can be zero")
        return
    if not convention.onnxruntime_sizes:
        if shape[0] == 0:
            raise ShapeError("Batch size is zero; expected N >= 1")
        return
    zero = next((i for i, n in enumerate(shape[2:]) if n == 0), None)
    if zero is not None and shape[0] != 0:
        raise ShapeError(
            f'onnxruntime refuses a spatial size 0 (axis {zero}): "Invalid input shape. Only '
            'N can be zero." (pool_attributes.h); expected every spatial size >= 1'
        )


def _refuse_inexpressible(params: PoolParams, axes: list[AxisPlan], cv: Convention) -> None:
    """Raise for a layer the convention's runtime has no op for (TensorFlow: ceil rounding that
    changes a size, an average that counts padding)."""
    if cv.floor_only and params.rounding != "floor":
        for i, a in enumerate(axes):
            floor = out_size(a.size, a.k_eff, a.stride, a.pad_begin, a.pad_end, "floor")
            if floor != a.out:
                raise SpecError(
                    f"{cv.title} has no ceil rounding: rounding_type={params.rounding} gives "
                    f"{a.out} outputs on spatial axis {i} where rounding down gives {floor}"
                )
    padded = any(a.pad_begin or a.pad_end for a in axes)
    if cv.mean_excludes_padding and params.reduce == "mean" and params.count_pad and padded:
        raise SpecError(
            f"{cv.title}'s average pooling never counts padding; this layer counts pads "
            f"{[(a.pad_begin, a.pad_end) for a in axes]} (exclude-pad=false)"
        )


def _reference_kernel(p: PoolPlan) -> bool:
    """Whether openvino's CPU plugin runs the layer on oneDNN's reference kernel rather than a
    jit one: a dilation > 1, or a window with no tap in the input (measured)."""
    return _reference_kernel_axes(p.axes)


def _reference_kernel_axes(axes: tuple[AxisPlan, ...]) -> bool:
    return any(a.dilation > 1 for a in axes) or any(a.has_empty() for a in axes)


def _avx2_integer_jit(shape: tuple[int, ...], axes: tuple[AxisPlan, ...], lanes: int) -> bool:
    """Whether oneDNN's integer pooling jit (jit_uni_i8i8_pooling) takes a layer on AVX2 or
    SSE4.1: no dilation, no window without a tap in the input (its pads, the ceil overhang
    included, below the kernel), and at least one vector of `lanes` elements (4 int32 for
    SSE4.1) in batch x channels x the smaller of each axis's input and output size ("safe
    load-and-store"; AVX-512 has no such condition).  Measured with openvino 2026.4.1 on an
    AVX2 CPU: [1, 1, 4] with a kernel of 2 and stride 1 (3 outputs) is refused, [1, 1, 5]
    runs."""
    if any(a.dilation > 1 for a in axes) or any(a.has_empty() for a in axes):
        return False
    count = shape[0] * shape[1] * math.prod(min(a.size, a.out) for a in axes)
    return count >= lanes


def _plugin_refusal(name: str, p: PoolPlan) -> str | None:
    """Where openvino's CPU plugin has no kernel for the layer on data of dtype `name`
    (measured with openvino 2026.4.1; Convention.cpu_plugin_kernels)."""
    empty_axis = any(a.size == 0 for a in p.axes) and math.prod(p.output_shape) > 0
    if empty_axis and not (p.reduce == "max" and p.indices and p.indices_used):
        # found by `irpool fuzz`: MaxPool-1/8 (indices unused) and AvgPool-1 over (1, 1, 0)
        # with pads_end 1 give a different value on every run; MaxPool-8 with its indices used
        # gives the lowest float (D40)
        return (
            f"openvino's CPU plugin computes no value for a {p.op} over a zero-length axis whose "
            "pads give it an output: the output is uninitialised memory (D40); expected every "
            "spatial size >= 1"
            + (", or the indices output used" if p.reduce == "max" and p.indices else "")
        )
    if p.plugin_isa == "avx2":
        return _avx2_refusal(name, p)
    if name == "bfloat16" and p.reduce == "max" and p.indices and p.indices_used:
        return (
            f"openvino's CPU plugin cannot compile a bfloat16 {p.op} whose indices output is "
            'used ("Cannot fallback on ngraph reference implementation"); expected the '
            "indices unused, or float32 data"
        )
    if name in ("int32", "int64") and p.reduce == "mean" and p.input_shape[1] == 1:
        dilated = any(a.dilation > 1 for a in p.axes)
        if _reference_kernel(p):
            why = "a dilation > 1" if dilated else "a window with no tap in the input"
            return (
                f"openvino's CPU plugin has no kernel for a one-channel i32 {p.op} with {why} "
                '("Supported primitive descriptors list is empty for node"); expected '
                "float data, more than one channel, or windows that all reach the input"
            )
    return None


def _avx2_refusal(name: str, p: PoolPlan) -> str | None:
    """`_plugin_refusal` on an AVX2 CPU (measured with openvino 2026.4.1): a bfloat16
    MaxPool-8/14 whose indices are used runs (openvino's reference op, in float32); a
    one-channel i32 AvgPool runs only on oneDNN's integer jit (`_avx2_integer_jit`), which
    takes no dilation, no window without a tap in the input, and needs at least 4 elements in
    batch x channels x the smaller of each axis's input and output size."""
    one_channel_mean = p.reduce == "mean" and p.input_shape[1] == 1
    if name not in ("int32", "int64") or not one_channel_mean:
        return None
    if _avx2_integer_jit(p.input_shape, p.axes, 4):
        return None
    if any(a.dilation > 1 for a in p.axes):
        why = "a dilation > 1"
    elif any(a.has_empty() for a in p.axes):
        why = "a window with no tap in the input"
    else:
        why = (
            "fewer than 4 elements in batch x channels x the smaller of each axis's input and "
            "output size (oneDNN's integer jit on AVX2/SSE4.1)"
        )
    return (
        f"openvino's CPU plugin (AVX2) has no kernel for a one-channel i32 {p.op} with {why} "
        '("Supported primitive descriptors list is empty for node"); expected float data or '
        "more than one channel"
    )


def _negative_pads_refusal(params: PoolParams, sizes: tuple[int, ...], pads: Pads) -> str | None:
    """onnxruntime's MLAS kernels refuse the negative pads its SAME_* arithmetic gives when the
    (undilated) kernel is smaller than the stride: 'padding values must be non-negative'."""
    for i, (pb, pe) in enumerate(pads):
        if pb < 0 or pe < 0:
            runs = "AveragePool-7..18" if params.reduce == "mean" else "MaxPool without Indices"
            return (
                "onnxruntime refuses: negative pads from SAME_* with kernel < stride "
                f"(auto_pad={params.auto_pad.upper()}, kernel_shape={list(params.window)}, "
                f"strides={list(params.strides)}: input size {sizes[i]} on axis {i} gives pads "
                f"({pb}, {pe})); its MLAS kernels ({runs} on float data) take no negative "
                "pads, where AveragePool-19+ computes (docs/semantics.md D5)"
            )
    return None
