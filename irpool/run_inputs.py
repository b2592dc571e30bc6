"""A net's inputs as run takes them: its Parameters, each input checked against its declared
element type and shape (or cast), bound by name, or drawn at random."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .arrays import check_elements
from .errors import (
    InputError,
    IrParseError,
    IrpoolError,
    UsageError,
    Where,
    option,
)
from .frontends.ir_xml import read_const as read_const
from .kernel import round_to_integer
from .model import Graph, Layer, dims_text, element_type_of_numpy, format_shape, numpy_dtype
from .ops import REGISTRY, elements
from .ops.registry import read_element_type
from .shapes import parameter_shape

Array = npt.NDArray[Any]


def unsupported_layers(graph: Graph) -> list[Layer]:
    """The layers `run` cannot execute: types without a registry entry."""
    return [la for la in graph.layers if REGISTRY.spec(la) is None]


def _role(layer: Layer) -> str:
    role = REGISTRY.role(layer)
    assert role is not None
    return role


def parameters(graph: Graph) -> list[Layer]:
    return [la for la in graph.topological() if REGISTRY.role(la) == "parameter"]


def parameter_names(layer: Layer) -> list[str]:
    names = [layer.name] if layer.name else []
    for port in layer.outputs:
        names.extend(n for n in port.names if n not in names)
    return names


def _element_type(layer: Layer) -> str:
    """A Parameter's element type as openvino reads it (see registry.read_element_type), or
    its output port's where it has no element_type attribute."""
    raw = layer.data.get("element_type")
    if raw is not None:
        try:
            return read_element_type(raw, "element_type")
        except IrpoolError as e:
            raise e.at(layer.where()) from None
    if layer.outputs and layer.outputs[0].element_type:
        return layer.outputs[0].element_type
    raise IrParseError("Parameter has no element_type; expected one", layer.where())


def numeric_dtype(array: Array, source: str | None) -> None:
    """Refuse an input array that is not numbers: void (a bfloat16 .npy written by ml_dtypes
    reads back as |V2), structured, string, bytes, object, datetime or timedelta arrays."""
    if array.dtype.kind in "biuf" or array.dtype.name == "bfloat16":
        return
    what = {
        "V": "void or structured (a bfloat16 array saved by ml_dtypes reads back so; save its "
        "bits: array.view(numpy.uint16))",
        "U": "strings",
        "S": "bytes",
        "O": "Python objects",
        "M": "datetimes",
        "m": "time deltas",
        "c": "complex numbers",
    }.get(array.dtype.kind, "not numbers")
    raise InputError(
        f"{source or 'the input'}: not a numeric array: {array.dtype.str} ({what}); expected "
        "bool, integers, floats, or bfloat16 as uint16 bits"
    )


def check_input(
    layer: Layer, array: Array, cast: bool, v10: bool = False, source: str | None = None
) -> Array:
    """The input array for a Parameter, after dtype and shape checks (and --cast); `source`
    names the file the array came from in errors."""
    where = layer.where()
    named = f"{source}: " if source else ""
    et = _element_type(layer)
    want = numpy_dtype(et, where)
    numeric_dtype(array, source)
    if v10 and want == np.float16:
        # openvino runs an f16 IR v10 net in f32 from end to end: its f16 Parameters take f32
        # inputs (an f16 array is refused), unrounded (measured), and run_graph holds them as
        # f16 tensors in f32
        want = np.dtype(np.float32)
    if array.dtype != want:
        if want.name == "bfloat16" and array.dtype == np.uint16:
            array = array.view(want)  # bfloat16 given as its bit pattern (.npy cannot say)
        elif cast:
            with np.errstate(all="ignore"):  # numpy's conversion, silently (documented)
                array = np.asarray(array.astype(want))
        else:
            takes = (
                f"{et} ({want.name})"
                if want.name == numpy_dtype(et).name
                else (f"{et}, which an IR v10 model takes as {want.name}")
            )
            raise InputError(
                f'{named}input for Parameter "{layer.label}" has dtype {array.dtype}; the '
                f"Parameter is {takes}; pass {option('cast')} to convert it",
                where,
            )
    shape = parameter_shape(layer)
    if shape is not None and (
        array.ndim != len(shape)
        or not all(d.contains(n) for d, n in zip(shape, array.shape, strict=True))
    ):
        raise InputError(
            f'{named}input for Parameter "{layer.label}" has shape {dims_text(array.shape)}; the '
            f"Parameter declares {format_shape(shape)}",
            where,
        )
    return array


V10_OUTPUTS = {"i32": "i32", "u32": "i32", "i64": "i32", "u64": "i32"}
"""openvino retypes the outputs of an IR v10 model: these to i32, every other type to f32
(measured on Convert and pooling nets of all 13 types)."""


def v10_output(array: Array, held: str | None = None, declared: str | None = None) -> Array:
    """An output of an IR v10 model as openvino gives it: i32 for 32/64-bit integers, f32 for
    every other type, converted from the value the plugin holds (`held`, whose declared type
    is `declared`; default: the array's own type)."""
    own = element_type_of_numpy(array.dtype.name) or "f32"
    held = held or own
    declared = declared or own
    if held == "f32" and declared in elements.INTEGERS:
        array, held = elements.reorder_to_integer(array, declared), elements.held_type(declared)
    target = V10_OUTPUTS.get(declared, "f32")
    value, _ = elements.convert(array, held, target)
    return np.asarray(value)


def bind_inputs(
    graph: Graph,
    inputs: Mapping[str, Array] | Array,
    cast: bool = False,
    sources: Mapping[str, str] | None = None,
) -> dict[int, Array]:
    """Inputs by Parameter (layer index): a bare array for a single Parameter, else by the
    Parameter's layer name or any tensor name of its output; `sources` names the file each
    input came from (by the same keys) for errors."""
    params = parameters(graph)
    v10 = graph.ir_version == 10
    if isinstance(inputs, np.ndarray):
        inputs = {"": inputs}
    files = dict(sources or {})
    bound: dict[int, Array] = {}
    given = dict(inputs)
    if set(given) == {""}:
        if len(params) != 1:
            names = ", ".join(p.label for p in params)
            raise UsageError(
                f"the model has {len(params)} Parameters ({names}); name each input as NAME=FILE",
                Where(file=graph.path),
            )
        bound[params[0].index] = check_input(params[0], given[""], cast, v10, files.get(""))
        return bound
    for layer in params:
        match = next((n for n in parameter_names(layer) if n in given), None)
        if match is None:
            known = ", ".join(sorted(k for k in given if k))
            raise UsageError(
                f'no input for Parameter "{layer.label}" (names: '
                f"{', '.join(parameter_names(layer))}); inputs given: {known or 'none'}",
                layer.where(),
            )
        source = files.get(match)
        bound[layer.index] = check_input(layer, given.pop(match), cast, v10, source)
        for alias in parameter_names(layer):
            given.pop(alias, None)
    if given:
        raise UsageError(
            f"inputs that match no Parameter: {', '.join(sorted(given))}", Where(file=graph.path)
        )
    return bound


def random_inputs(
    graph: Graph, seed: int = 0, low: float = -1.0, high: float = 1.0, limit: int | None = None
) -> dict[str, Array]:
    """Random inputs for every Parameter (uniform in [low, high); integers rounded)."""
    rng = np.random.default_rng(seed)
    out: dict[str, Array] = {}
    for layer in parameters(graph):
        shape = parameter_shape(layer)
        if shape is None or not all(d.is_static for d in shape):
            raise UsageError(
                f'Parameter "{layer.label}" has a dynamic shape {format_shape(shape)}; give its '
                "input with -i",
                layer.where(),
            )
        dims = tuple(d.lo for d in shape)
        check_elements(dims, f'input of "{layer.label}"', limit, layer.where())
        dtype = numpy_dtype(_element_type(layer), layer.where())
        out[layer.label] = _uniform(rng, low, high, dims, dtype)
    return out


def _uniform(
    rng: np.random.Generator, low: float, high: float, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> Array:
    """Uniform values in [low, high) of a dtype: integers rounded, both clipped to its range."""
    values = rng.uniform(low, high, size=shape)
    if dtype.kind == "b":
        return np.asarray(values >= (low + high) / 2)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(np.round(values), info.min, info.max)
    else:  # float16, float32, float64, bfloat16 (whose range is float32's, less a little)
        big = float(np.finfo(dtype).max) if dtype.kind == "f" else 3.3895313892515355e38
        values = np.clip(values, -big, big)
    return np.asarray(values.astype(dtype))


def random_array(
    shape: tuple[int, ...], element_type: str, seed: int = 0, low: float = -1.0, high: float = 1.0
) -> Array:
    """One random input of an IR element type, as `random_inputs` draws them."""
    return _uniform(np.random.default_rng(seed), low, high, shape, numpy_dtype(element_type))


def declared(array: Array, held: np.dtype[Any] | None, v10: bool = False) -> Array:
    """A tensor in its declared element type `held` (None: not held in float32): an integer
    tensor rounded as openvino converts, an f16 one rounded to f16 (not in IR v10 nets)."""
    if held is None or (v10 and held.kind == "f"):
        return array
    if held.kind in "iu":
        return round_to_integer(array, held)  # as kernel.pool rounds a float32 layer
    with np.errstate(over="ignore"):  # beyond f16's range is +-inf, as openvino converts
        return np.asarray(array.astype(np.float16))


def check_runnable(graph: Graph) -> None:
    """Refuse a file of layer fragments, or a net with layers irpool does not execute."""
    if graph.fragment:
        raise UsageError(
            f"{graph.path} holds layer fragments, not a net; run one with {option('layer')}NAME "
            "or #N"
        )
    bad = unsupported_layers(graph)
    if bad:
        kinds = sorted({la.type for la in bad})
        first = bad[0]
        raise UsageError(
            f"the net has layers irpool does not execute ({', '.join(kinds)}; first: "
            f'"{first.label}"); run one pooling layer ({option("layer")}NAME), or cross-check the '
            "whole model with `irpool compare`",
            Where(file=graph.path, line=first.line),
        )
