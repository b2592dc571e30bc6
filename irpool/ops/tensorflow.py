"""TensorFlow pooling ops (`AvgPool`, `MaxPool`, their 3-D and V2 forms, `MaxPoolWithArgmax`)
as PoolParams, and the TensorFlow call that means an IR layer's attributes.

TensorFlow's ops take a window and strides over every axis of a channels-last (NHWC, NDHWC) or
channels-first tensor, SAME or VALID padding (MaxPool also EXPLICIT pads), round sizes down, and
average over the taps inside the input only.  The names of its pooling ops are compared here,
for the conversion audit.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..geometry import AutoPad, PoolParams

POOL_TYPES = ("AvgPool", "AvgPool3D", "MaxPool", "MaxPoolV2", "MaxPool3D", "MaxPoolWithArgmax")
REDUCE_TYPES = ("Mean", "Max")
"""Global pools (Keras GlobalAveragePooling*/GlobalMaxPooling*, tf.reduce_mean/max)."""

_PADDING: dict[str, AutoPad] = {"SAME": "same_upper", "VALID": "valid", "EXPLICIT": "explicit"}


def is_pooling(op_type: str) -> bool:
    return op_type in POOL_TYPES or op_type in REDUCE_TYPES


def is_argmax(op_type: str) -> bool:
    """MaxPoolWithArgmax (tf.nn.max_pool_with_argmax)."""
    return op_type == "MaxPoolWithArgmax"


def family_of(op_type: str) -> tuple[str, str | None]:
    """(window or global; mean or max) of a TensorFlow pooling op."""
    family = "global" if op_type in REDUCE_TYPES else "window"
    return family, "mean" if op_type in ("AvgPool", "AvgPool3D", "Mean") else "max"


def channels_last(data_format: str) -> bool:
    """NHWC and NDHWC (TensorFlow's default) put channels last; NCHW and NCDHW first."""
    return not data_format.upper().startswith("NC")


def spatial(values: Sequence[int], data_format: str) -> tuple[int, ...]:
    """The spatial part of a per-axis list (ksize, strides) in the op's layout."""
    items = tuple(int(v) for v in values)
    return items[1:-1] if channels_last(data_format) else items[2:]


def pools_channels(values: Sequence[int], data_format: str) -> bool:
    """Whether a window or stride list reaches across the batch or channel axis (ksize
    [1, 1, 1, 2] pools pairs of channels)."""
    items = [int(v) for v in values]
    other = (items[0], items[-1]) if channels_last(data_format) else (items[0], items[1])
    return any(v != 1 for v in other)


def params(
    op_type: str,
    ksize: Sequence[int],
    strides: Sequence[int],
    padding: str,
    data_format: str = "NHWC",
    explicit_paddings: Sequence[int] = (),
) -> PoolParams | None:
    """PoolParams of a TensorFlow pooling op (None for global pools and for windows that reach
    across channels, which are no spatial pooling)."""
    if op_type not in POOL_TYPES or pools_channels(ksize, data_format):
        return None
    window = spatial(ksize, data_format)
    auto_pad = _PADDING.get(padding.upper(), "explicit")
    pads: tuple[tuple[int, int], ...] = ((0, 0),) * len(window)
    if auto_pad == "explicit" and explicit_paddings:
        flat = [int(v) for v in explicit_paddings]
        pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]
        pads = tuple(pairs[1:-1] if channels_last(data_format) else pairs[2:])
    return PoolParams(
        op=f"tf.{op_type}",
        reduce="mean" if op_type.startswith("Avg") else "max",
        window=window,
        strides=spatial(strides, data_format),
        dilations=(1,) * len(window),
        pads=pads,
        auto_pad=auto_pad,
    )


def call_for(p: PoolParams) -> tuple[str | None, str | None]:
    """(the tf.nn call that means these parameters, None), or (None, why there is none):
    TensorFlow pools round down, never count padding in an average, take explicit pads for max
    pooling only and no dilation with SAME."""
    if p.rounding != "floor":
        return None, f"rounding_type={p.rounding}: TensorFlow's pooling rounds sizes down"
    mean = p.reduce == "mean"
    padded = any(b or e for b, e in p.pads)
    if p.auto_pad == "same_lower":
        return None, "auto_pad=same_lower: TensorFlow's SAME puts the odd pad at the end"
    if p.auto_pad == "same_upper":
        padding = '"SAME"'
        if any(d != 1 for d in p.dilations):
            return None, "TensorFlow refuses dilated pooling with SAME padding"
    elif p.auto_pad == "valid" or not padded:
        padding = '"VALID"'
    elif mean:
        return None, "TensorFlow's average pooling takes SAME or VALID padding, not explicit pads"
    else:
        padding = str([[0, 0], *[[b, e] for b, e in p.pads], [0, 0]])
    if mean and p.count_pad and padding != '"VALID"':
        return None, "exclude-pad=false: TensorFlow's averages never count the padding"
    name = f"tf.nn.{'avg' if mean else 'max'}_pool{p.rank}d"
    args = [f"ksize={list(p.window)}", f"strides={list(p.strides)}", f"padding={padding}"]
    if any(d != 1 for d in p.dilations):
        name = "tf.nn.pool"
        args = [
            f"window_shape={list(p.window)}",
            f'pooling_type="{"AVG" if mean else "MAX"}"',
            f"strides={list(p.strides)}",
            f"padding={padding}",
            f"dilations={list(p.dilations)}",
        ]
    return f"{name}(x, {', '.join(args)})  # channels last", None
