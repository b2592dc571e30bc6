"""ONNX attribute readers: a node's typed attributes by irpool name, and the PoolParams of a
windowed pooling node.  They know nothing of the families (which call them to read their own
nodes), so the rows in `onnx` can name the families without a cycle."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import SpecError
from ..geometry import AutoPad, PoolParams
from ..model import Layer
from .registry import REQUIRED, OpSpec


def _ints(spec: OpSpec, wire: str, value: object) -> tuple[int, ...]:
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return tuple(int(v) for v in value)
    raise SpecError(f'{spec.label}: attribute "{wire}" must be a list of integers; got {value!r}')


def read_attrs(spec: OpSpec, attrs: Mapping[str, object]) -> dict[str, object]:
    """Typed values by irpool name with defaults; unknown attributes are an error (ONNX is
    strict about them)."""
    known = {a.wire: a for a in spec.attrs}
    unknown = sorted(set(attrs) - set(known))
    if unknown:
        raise SpecError(
            f"{spec.label} has no attribute(s) {', '.join(unknown)}; known: {', '.join(known)}"
        )
    values: dict[str, object] = {}
    for attr in spec.attrs:
        if attr.wire not in attrs:
            if attr.default is REQUIRED:
                raise SpecError(f'attribute "{attr.wire}" is missing; {spec.label} requires it')
            values[attr.name] = attr.default
            continue
        raw = attrs[attr.wire]
        if attr.kind == "ints":
            values[attr.name] = _ints(spec, attr.wire, raw)
        elif attr.kind == "int":
            if not isinstance(raw, int):
                raise SpecError(f'{spec.label}: attribute "{attr.wire}" must be an integer')
            values[attr.name] = int(raw)
        else:
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            if attr.choices and text not in attr.choices:
                raise SpecError(
                    f'{spec.label}: {attr.wire}="{text}"; expected one of {", ".join(attr.choices)}'
                )
            values[attr.name] = text
    return values


_AUTO: dict[str, AutoPad] = {
    "NOTSET": "explicit",
    "SAME_UPPER": "same_upper",
    "SAME_LOWER": "same_lower",
    "VALID": "valid",
}


def params(
    spec: OpSpec, attrs: Mapping[str, object], rank: int | None = None, indices: bool | None = None
) -> PoolParams:
    """PoolParams of an ONNX node; `indices` says whether its Indices output is used."""
    values = read_attrs(spec, attrs)
    kernel = _ints(spec, "kernel_shape", values["kernel"])
    n = len(kernel)
    if rank is not None and n != rank - 2:
        raise SpecError(
            f'"kernel_shape" has {n} values; expected {rank - 2}, one per spatial axis of the '
            f"rank-{rank} input"
        )
    strides = values.get("strides") or (1,) * n
    dilations = values.get("dilations") or (1,) * n
    flat_pads = values.get("pads") or (0,) * (2 * n)
    assert isinstance(strides, tuple) and isinstance(dilations, tuple)
    assert isinstance(flat_pads, tuple)
    if len(flat_pads) != 2 * n:
        raise SpecError(
            f'"pads" has {len(flat_pads)} values; expected {2 * n} '
            "([x1_begin, x2_begin, ..., x1_end, x2_end, ...])"
        )
    pads = pads_from_onnx(flat_pads)
    auto = _AUTO[str(values["auto_pad"])]
    notes: list[str] = []
    if auto == "explicit" and any(
        p >= k for pair, k in zip(pads, kernel, strict=True) for p in pair
    ):
        notes.append(
            "pads >= kernel: onnxruntime refuses this ('Pad should be smaller than kernel')"
        )
    if auto != "explicit" and any(flat_pads):
        notes.append(f"pads are ignored with auto_pad={values['auto_pad']}")
    ceil = bool(values.get("ceil_mode", 0))
    count_pad = bool(values.get("count_include_pad", 0))
    column_major = bool(values.get("storage_order", 0))
    with_indices = spec.outputs == 2 if indices is None else indices
    return PoolParams(
        op=spec.label,
        reduce=spec.reduce or "mean",
        window=kernel,
        strides=tuple(int(s) for s in strides),
        dilations=tuple(int(d) for d in dilations),
        pads=pads,
        auto_pad=auto,
        rounding="ceil" if ceil else "floor",
        count_pad=count_pad,
        indices=with_indices,
        index_axis=0,
        column_major=column_major,
        index_dtype="int64",
        divisor_override=spec.divisor_override,
        onnxruntime_mlas=runs_mlas(spec, ceil, count_pad, with_indices, column_major, dilations),
        notes=tuple(notes),
    )


def read(spec: OpSpec, layer: Layer, rank: int | None) -> PoolParams:
    """PoolParams of an ONNX node for an input of `rank` dims (None: not known); the Indices
    output counts when the node lists it."""
    return params(spec, layer.attrs, rank, indices=len(layer.outputs) > 1)


def runs_mlas(
    spec: OpSpec,
    ceil: bool,
    count_pad: bool,
    indices: bool,
    column_major: bool,
    dilations: tuple[int, ...],
) -> bool:
    """Whether onnxruntime 1.32 computes a node of this row with its MLAS kernels when the data
    are float32 (float16 is run in float32): AveragePool-7..18, except with ceil_mode and
    count_include_pad both set, which go to the opset-19 loop (onnxruntime PR #29629); MaxPool
    of every version without the Indices output, dilations > 1 or storage_order=1.  Measured
    (docs/semantics.md): the NaN rules, the count_include_pad divisor and the refusal of negative
    SAME pads all follow this split."""
    if spec.family == "AveragePool":
        return 7 <= spec.since < 19 and not (ceil and count_pad)
    if spec.family == "MaxPool":
        return not indices and not column_major and all(d == 1 for d in dilations)
    return False


def pads_from_onnx(flat: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """ONNX pads [b_1 .. b_n, e_1 .. e_n] -> ((b_1, e_1), ..., (b_n, e_n))."""
    n = len(flat) // 2
    return tuple((flat[i], flat[n + i]) for i in range(n))


def spec_output_size(spec: OpSpec, params: PoolParams, axis: int, n: int) -> int:
    """The output size the ONNX operator text of `spec`'s version gives (not what runtimes
    compute): VALID `ceil((n - k_eff + 1) / s)` and SAME `ceil(n / s)` whatever ceil_mode says,
    and the rule dropping a window that starts in the right padding only from version 22."""
    k_eff = (params.window[axis] - 1) * params.dilations[axis] + 1
    s = params.strides[axis]
    if params.auto_pad == "valid":
        return -(-(n - k_eff + 1) // s)
    if params.auto_pad in ("same_upper", "same_lower"):
        return -(-n // s)
    pb, pe = params.pads[axis]
    span = n + pb + pe - k_eff
    if params.rounding == "floor":
        return span // s + 1
    out = -(-span // s) + 1
    if spec.since >= 22 and (out - 1) * s >= n + pb:
        out -= 1
    return out


def opset_of(layer: Layer) -> int:
    """The opset of an ONNX node's domain, as the reader wrote it (`opsetN`)."""
    return int((layer.version or "opset1").removeprefix("opset"))
