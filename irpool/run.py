"""Execute pooling graphs (Parameter -> Const/Convert/pooling layers -> Result) and single layers.

Every pooling layer goes through the same path as `check`: its op row gives PoolParams, the
geometry gives a PoolPlan for the actual input shape, the kernel computes.  Layers of other
types are refused before anything runs (`irpool compare` handles whole models with openvino).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from .arrays import check_elements
from .errors import (
    InputError,
    IrParseError,
    IrpoolError,
    ShapeError,
    UsageError,
    Where,
    option,
)
from .families import FamilyPlan, int_values
from .frontends.safe_io import read_range
from .geometry import PoolPlan
from .kernel import integers_as_float32, pool, round_to_integer
from .model import Graph, Layer, dims_text, element_type_of_numpy, format_shape, numpy_dtype
from .ops import REGISTRY, Bound, bind
from .ops.binding import constant_input
from .ops.glue import convert
from .shapes import parameter_shape, require_port_dims

Array = npt.NDArray[Any]


@dataclass
class RunResult:
    """Outputs by Result name, every tensor by `layer:port`, the plan of each pooling layer."""

    outputs: dict[str, Array] = field(default_factory=dict)
    tensors: dict[str, Array] = field(default_factory=dict)
    plans: dict[str, PoolPlan] = field(default_factory=dict)
    family_plans: dict[str, FamilyPlan] = field(default_factory=dict)
    """The plan of each layer of another pooling family (adaptive, reductions, ...)."""
    order: list[str] = field(default_factory=list)
    """Every pooling layer's label, in the order the layers ran."""

    def all_plans(self) -> dict[str, PoolPlan | FamilyPlan]:
        """The plan of every pooling layer (windowed or of another family), in run order."""
        found: dict[str, PoolPlan | FamilyPlan] = {}
        for label in self.order:
            found[label] = self.plans.get(label) or self.family_plans[label]
        return found

    bound: dict[str, Bound] = field(default_factory=dict)
    """Each pooling layer as `bind` made it (by label)."""
    inputs: dict[str, Array] = field(default_factory=dict)


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
    et = layer.data.get("element_type")
    if et:
        return et.strip()
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
    if v10 and want == np.float16 and array.dtype == np.float32:
        # openvino runs an f16 IR v10 net in f32 from end to end: its f16 Parameters take f32
        # inputs, unrounded (measured), and run_graph holds them as f16 tensors in f32
        want = array.dtype
    if array.dtype != want:
        if want.name == "bfloat16" and array.dtype == np.uint16:
            array = array.view(want)  # bfloat16 given as its bit pattern (.npy cannot say)
        elif cast:
            with np.errstate(all="ignore"):  # numpy's conversion, silently (documented)
                array = np.asarray(array.astype(want))
        else:
            raise InputError(
                f'{named}input for Parameter "{layer.label}" has dtype {array.dtype}; the '
                f"Parameter is {et} ({want.name}); pass {option('cast')} to convert it",
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


def v10_output(array: Array) -> Array:
    """openvino retypes the outputs of IR v10 models: integers to i32, floats to f32."""
    if array.dtype.kind in "iu":
        return np.asarray(array.astype(np.int32))
    if array.dtype != np.float32 and array.dtype.kind in "fV":
        return np.asarray(array.astype(np.float32))
    return array


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


def read_const(graph: Graph, layer: Layer) -> Array:
    """A Const's value from the .bin beside the .xml (offset, size and type checked)."""
    from .frontends.ir_xml import const_layout

    et, shape, offset, size = const_layout(graph, layer)
    dtype = numpy_dtype(et, layer.where())
    if graph.weights is not None:
        data = graph.weights[offset : offset + size]
    else:
        assert graph.weights_path is not None
        try:
            data = read_range(graph.weights_path, offset, size, "weights")
        except IrpoolError as e:
            raise e.at(layer.where()) from None
    count = math.prod(shape)
    values: Array = np.frombuffer(data[: count * dtype.itemsize], dtype=dtype)
    return np.asarray(values.reshape(shape).copy())


def check_dtype(bound: Bound, x: Array) -> None:
    """The op version's entry says which element types it takes (ONNX AveragePool: floats)."""
    spec = bound.spec
    if not spec.dtypes:
        return
    et = element_type_of_numpy(x.dtype.name)
    if et not in spec.dtypes:
        raise InputError(
            f"{spec.label} takes {', '.join(spec.dtypes)} inputs, not {x.dtype.name}",
            bound.layer.where(),
        )


def run_pooling(
    bound: Bound,
    x: Array,
    limit: int | None = None,
    convention: str | None = None,
    indices_used: bool | None = None,
) -> tuple[PoolPlan, list[Array]]:
    """Run one bound pooling layer on x: its plan and outputs (values, and indices for
    MaxPool-8/14); under another convention than the bound one if given."""
    layer = bound.layer
    require_port_dims(layer)
    check_dtype(bound, x)
    p = bound.plan(tuple(x.shape), x.dtype, convention, indices_used)
    check_elements(p.output_shape, f'output of "{layer.label}"', limit, layer.where())
    try:
        values, indices = pool(x, p)
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return p, [values] + ([indices] if indices is not None else [])


def run_family(
    bound: Bound,
    ins: list[Array | None],
    limit: int | None = None,
    convention: str | None = None,
    indices_used: bool | None = None,
) -> tuple[FamilyPlan, list[Array]]:
    """Run one bound layer of a pooling family on its inputs (in order; None where an optional
    one is missing): its plan and outputs.  The integer values of its value inputs (an
    adaptive pool's size, ...) come from `ins` where given, else from the file's constants."""
    from .kernel.family import execute

    layer = bound.layer
    family = bound.family
    assert family is not None
    require_port_dims(layer)
    x = ins[0] if ins else None
    if x is None:
        raise UsageError(f"{layer.type} has no data input", layer.where())
    for k in family.data_inputs[1:]:
        if k >= len(ins) or ins[k] is None:
            name = (
                layer.inputs[k].names[0]
                if k < len(layer.inputs) and layer.inputs[k].names
                else f"input {k}"
            )
            raise UsageError(
                f"{bound.spec.label} needs its input {k} ({name}), which is computed, not a "
                "constant: give it as -i NAME=FILE, or run the whole model",
                layer.where(),
            )
    check_dtype(bound, x)
    given = {}
    for k in family.value_inputs:
        value = int_values(ins[k]) if k < len(ins) else None
        if value is not None:
            given[k] = value
    p = bound.family_plan(tuple(x.shape), x.dtype, convention, given, indices_used)
    check_elements(p.output_shape, f'output of "{layer.label}"', limit, layer.where())
    try:
        outs = execute(p, ins)
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return p, outs


def family_held(
    bound: Bound,
    ins: list[Array | None],
    held: np.dtype[Any] | None,
    limit: int | None = None,
    convention: str | None = None,
) -> tuple[FamilyPlan, list[Array], np.dtype[Any] | None]:
    """A family layer as its runtime carries tensors between layers (see pool_held): an f16
    tensor held in float32 is pooled in float32 and its output stays held; an integer tensor
    held in float32 is rounded to its declared type first."""
    x = ins[0]
    holds: np.dtype[Any] | None = None
    if x is not None and held is not None:
        if held.kind in "iu":
            x = declared(x, held)
        else:
            x, holds = x.astype(np.float32), held
    p, outs = run_family(bound, [x, *ins[1:]], limit, convention)
    return p, outs, holds


def pool_held(
    bound: Bound,
    x: Array,
    held: np.dtype[Any] | None,
    limit: int | None = None,
    hold_integers: bool = False,
    convention: str | None = None,
    indices_used: bool | None = None,
) -> tuple[PoolPlan, list[Array], np.dtype[Any] | None]:
    """Run a pooling layer as its runtime carries tensors between layers: (plan, outputs, the
    declared type of output 0 when it stays held in float32, else None).

    `held`: x holds, in float32, a tensor the model declares of that type: f16 kept in float32
    (openvino at f32 inference precision; onnxruntime between two pooling nodes), or integers
    openvino keeps in float32.  An integer tensor held so stays held for a layer that runs in
    float32 and is rounded for one that keeps integers (measured on chains); `hold_integers`
    lets an i32/i64 input start being held where the layer runs in float32 (openvino)."""
    shape = tuple(x.shape)
    if held is not None and held.kind in "iu":
        if not bound.plan(shape, held, convention, indices_used).integers_in_float32:
            x, held = declared(x, held), None
    elif held is not None:
        x = x.astype(np.float32) if x.dtype != np.float32 else x
    elif (
        hold_integers
        and x.dtype in (np.int32, np.int64)
        and bound.plan(shape, x.dtype, convention, indices_used).integers_in_float32
    ):
        held, x = x.dtype, integers_as_float32(x)
    p, outs = run_pooling(bound, x, limit, convention, indices_used)
    return p, outs, held


def run_graph(
    graph: Graph,
    inputs: Mapping[str, Array] | Array,
    convention: str | None = None,
    cast: bool = False,
    limit: int | None = None,
) -> RunResult:
    """Execute a net of Parameter, Const, Convert, pooling and Result layers (each pooling
    layer bound once)."""
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
    if convention is not None:
        conv.get(convention)
    bound_inputs = bind_inputs(graph, inputs, cast)
    index_of = {la.id: la.index for la in graph.layers}
    values: dict[tuple[int, int], Array] = {}
    # openvino's CPU plugin at f32 inference precision runs an f16 graph in f32: an f16 tensor
    # between layers keeps its f32 value, a Convert to f16 rounds nothing, and only the outputs
    # are rounded to f16 (measured on chains; bf16 is rounded at every layer).  onnxruntime's
    # CPU pooling kernels are float32 ones, and the casts it puts around them cancel between
    # two pooling nodes: the same holds there (measured).  `held` marks the tensors kept in
    # float32 that the model declares f16.
    # The same plugin runs most i32/i64 layers in float32 (Convention.integers_in_float32),
    # and a chain of them stays in float32 until the outputs (measured: all 10 mismatching
    # chains of 500 random nets, rounding only at the Results).  `held` maps each tensor
    # kept in float32 to the element type the model declares for it (see pool_held).
    onnx_model = graph.format == "onnx"
    hold_f16 = convention in (None, "onnx" if onnx_model else "openvino")
    hold_int = not onnx_model and convention in (None, "openvino")
    held: dict[tuple[int, int], np.dtype[Any]] = {}
    f16 = np.dtype(np.float16)
    v10 = graph.ir_version == 10  # outputs f32 and never rounded to f16 (see v10_output)
    result = RunResult()
    for layer in graph.topological():
        role = _role(layer)
        optional: list[Array | None] = []
        first_key: tuple[int, int] | None = None
        for port in layer.inputs:
            assert layer.id is not None
            edge = graph.producer(layer.id, port.id)
            if edge is not None:
                key = (index_of[edge.from_layer], edge.from_port)
                first_key = key if first_key is None else first_key
                value = values[key]
                rounds = key in held and (onnx_model or held[key].kind in "iu")
                if rounds and role in ("convert", "reshape"):
                    value = declared(value, held[key])  # the cast back stays
                optional.append(value)
            elif port.names and port.names[0] in graph.initializers:
                optional.append(np.asarray(graph.initializers[port.names[0]]))
            else:
                optional.append(None)  # an omitted optional ONNX input
        ins = [a for a in optional if a is not None]
        if role not in ("parameter", "const") and not ins:
            raise IrParseError(f"{layer.type} has no connected input", layer.where())
        holds: np.dtype[Any] | None = None  # output 0's declared type, if held in float32
        hold_all = False  # every output is held so (glue), not only output 0
        incoming = held.get(first_key) if first_key else None
        if role == "parameter":
            outs = [bound_inputs[layer.index]]
            result.inputs[layer.label] = bound_inputs[layer.index]
            if hold_f16 and numpy_dtype(_element_type(layer), layer.where()) == f16:
                holds = f16
        elif role == "const":
            outs = [read_const(graph, layer)]
            holds = f16 if hold_f16 and outs[0].dtype == f16 else None
        elif role == "convert":
            target = layer.data.get("destination_type", "").strip()
            if not target:
                raise IrParseError("Convert has no destination_type", layer.where())
            dtype = numpy_dtype(target, layer.where())
            if hold_f16 and dtype == f16 and ins[0].dtype.kind == "f":
                outs, holds = [ins[0]], f16
            else:
                outs = [convert(ins[0], target)]
        elif role == "identity":
            outs, holds = [ins[0]], incoming
        elif role == "reshape":
            spec = REGISTRY.spec(layer)
            assert spec is not None and spec.execute is not None
            outs = _glue(spec.execute, layer, optional)
            if incoming is not None and incoming.kind == "f" and not onnx_model:
                holds, hold_all = incoming, True
        elif role == "elementwise":
            # computed in the type it is held in: an f16 tensor held in float32 stays so
            # (openvino runs an f16 graph in float32 at f32 precision), an integer one is
            # rounded to its declared type first
            spec = REGISTRY.spec(layer)
            assert spec is not None and spec.execute is not None
            keys = _input_keys(graph, layer, index_of)
            ready = [
                declared(v, held[k]) if v is not None and k in held and held[k].kind in "iu" else v
                for v, k in zip(optional, keys, strict=True)
            ]
            outs = _glue(spec.execute, layer, ready)
            if any(k in held and held[k].kind == "f" for k in keys if k is not None):
                holds, hold_all = f16, True
        elif role == "result":
            name = layer.name or layer.label
            out = declared(ins[0], incoming, v10)
            result.outputs[name] = v10_output(out) if v10 else out
            continue
        else:
            bound = bind(graph, layer, convention)
            result.bound[layer.label] = bound
            result.order.append(layer.label)
            if bound.family is not None:
                fp, outs, holds = family_held(bound, optional, incoming, limit, convention)
                result.family_plans[layer.label] = fp
            elif bound.spec.kind == "qlinear":
                p, q = run_qlinear(bound, optional, convention)
                outs = [q]
                result.plans[layer.label] = p
            else:
                p, outs, holds = pool_held(bound, ins[0], incoming, limit, hold_int)
                result.plans[layer.label] = p
        for number, (port, array) in enumerate(zip(layer.outputs, outs, strict=False)):
            key = (layer.index, port.id)
            values[key] = array
            if holds is not None and (number == 0 or hold_all):
                held[key] = holds
            result.tensors[f"{layer.label}:{port.id}"] = declared(array, held.get(key), v10)
    return result


def _input_keys(
    graph: Graph, layer: Layer, index_of: Mapping[int | None, int]
) -> list[tuple[int, int] | None]:
    """The (layer index, port) that feeds each input of a layer (None: no edge)."""
    keys: list[tuple[int, int] | None] = []
    for port in layer.inputs:
        assert layer.id is not None
        edge = graph.producer(layer.id, port.id)
        keys.append(None if edge is None else (index_of[edge.from_layer], edge.from_port))
    return keys


def _glue(execute: Any, layer: Layer, ins: list[Array | None]) -> list[Array]:
    """A glue layer's outputs; its errors name the layer."""
    try:
        outs: list[Array] = execute(layer, [a for a in ins if a is not None])
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return outs


def declared(array: Array, held: np.dtype[Any] | None, v10: bool = False) -> Array:
    """A tensor in its declared element type `held` (None: not held in float32): an integer
    tensor rounded as openvino converts, an f16 one rounded to f16 (not in IR v10 nets)."""
    if held is None or (v10 and held.kind == "f"):
        return array
    if held.kind in "iu":
        return round_to_integer(array, held)  # as kernel.pool rounds a float32 layer
    with np.errstate(over="ignore"):  # beyond f16's range is +-inf, as openvino converts
        return np.asarray(array.astype(np.float16))


def run_qlinear(
    bound: Bound, ins: list[Array | None], convention: str | None = None
) -> tuple[PoolPlan, Array]:
    """com.microsoft QLinearAveragePool (X, x_scale, x_zero_point, y_scale, y_zero_point): the
    plan of its float pooling and its output."""
    from .quant import qlinear_average_pool

    layer = bound.layer
    padded = list(ins) + [None] * (5 - len(ins))
    x, x_scale, x_zp, y_scale, y_zp = padded[:5]
    if x is None or x_scale is None or y_scale is None:
        raise UsageError("QLinearAveragePool needs X, x_scale and y_scale", layer.where())
    try:
        used = bound.plan(tuple(x.shape), "float32", convention)
        out = qlinear_average_pool(x, x_scale, x_zp, y_scale, y_zp, used, bound.channels_last)
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return used, out


def _constant_inputs(graph: Graph, layer: Layer, x: Array) -> list[Array | None]:
    """x, then the layer's other inputs where they are constants (ONNX initializers); a
    computed one cannot be had without running the model."""
    ins: list[Array | None] = [x]
    for k, port in enumerate(layer.inputs[1:], start=1):
        name = port.names[0] if port.names else ""
        value = constant_input(graph, layer, k)
        if name and value is None:
            raise UsageError(
                f'input "{name}" of {layer.type} is computed, not a constant; one layer needs its '
                "constant inputs: run the whole model, or compare it",
                layer.where(),
            )
        ins.append(value)
    return ins


def find_layer(graph: Graph, name: str) -> Layer:
    """A layer by name, id, output tensor name or a unique part of its name (irpool.lookup)."""
    from .lookup import find

    return find(graph, name, [la for la in graph.layers if REGISTRY.is_pooling(la)])


def layer_inputs(bound: Bound, x: Array, extra: Mapping[str, Array]) -> list[Array | None]:
    """The inputs of a family layer run alone: x, then each other input from `extra` (by its
    tensor name, its producer's name, or `inputN`), else the file's constant."""
    layer = bound.layer
    ins: list[Array | None] = [x]
    for k, port in enumerate(layer.inputs[1:], start=1):
        names = [*port.names, f"input{k}"]
        given = next((extra[n] for n in names if n in extra), None)
        if given is None and k < len(bound.constants):
            given = bound.constants[k]
        ins.append(given)
    return ins


def run_layer(
    graph: Graph,
    name: str,
    x: Array,
    convention: str | None = None,
    cast: bool = False,
    limit: int | None = None,
    extra: Mapping[str, Array] | None = None,
) -> tuple[PoolPlan | FamilyPlan, dict[str, Array]]:
    """Run one pooling layer of any IR on x: {'output0': values, 'output1': indices}; a layer
    with other computed inputs (MaxUnpool's indices) takes them from `extra` by name."""
    layer = find_layer(graph, name)
    if not REGISTRY.is_pooling(layer):
        known = ", ".join(REGISTRY.families("openvino") + REGISTRY.families("ai.onnx"))
        raise UsageError(
            f"the layer is a {layer.type}; one layer runs only if it pools ({known}, ...)",
            layer.where(),
        )
    if layer.inputs and layer.inputs[0].element_type:
        want = numpy_dtype(layer.inputs[0].element_type)
        if x.dtype != want:
            if want.name == "bfloat16" and x.dtype == np.uint16:
                x = x.view(want)
            elif cast:
                x = x.astype(want)
            else:
                raise InputError(
                    f"input has dtype {x.dtype}; the layer's input port is "
                    f"{layer.inputs[0].element_type} ({want.name}); pass {option('cast')} to "
                    "convert it",
                    layer.where(),
                )
    bound = bind(graph, layer, convention)
    if bound.family is not None:
        ins = layer_inputs(bound, x, extra or {})
        fp, outs = run_family(bound, ins, limit, convention)
        return fp, {f"output{i}": a for i, a in enumerate(outs)}
    if bound.spec.kind == "qlinear":
        p, q = run_qlinear(bound, _constant_inputs(graph, layer, x), convention)
        return p, {"output0": q}
    p, outs = run_pooling(bound, x, limit)
    return p, {f"output{i}": a for i, a in enumerate(outs)}


def layer_input_shape(graph: Graph, layer: Layer) -> tuple[int, ...]:
    """The static input shape of a pooling layer as the IR states it (for random inputs)."""
    from .shapes import infer

    if graph.fragment:
        dims = layer.inputs[0].dims if layer.inputs else None
        if dims is None or any(d < 0 for d in dims):
            raise UsageError("the layer has no static input dims; give -i", layer.where())
        return tuple(dims)
    inference = infer(graph)
    for pl in inference.pooling:
        if pl.layer.index == layer.index:
            shape = pl.input_shape
            if shape is None or not all(d.is_static for d in shape):
                raise UsageError(
                    f"the layer has a dynamic input {format_shape(shape)}; give -i", layer.where()
                )
            return tuple(d.lo for d in shape)
    raise ShapeError("the layer is not a pooling layer", layer.where())
