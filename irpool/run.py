"""Execute pooling graphs (Parameter -> Const/Convert/pooling layers -> Result) and single layers.

Every pooling layer goes through the same path as `check`: its op row gives PoolParams, the
geometry gives a PoolPlan for the actual input shape, the kernel computes.  Layers of other
types are refused before anything runs (`irpool compare` handles whole models with openvino).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from .arrays import check_elements
from .errors import (
    InputError,
    IrParseError,
    IrpoolError,
    SpecError,
    UsageError,
)
from .families import FamilyPlan, int_values
from .frontends.ir_xml import read_const as read_const
from .geometry import PoolPlan
from .kernel import integers_as_float32
from .kernel.family import execute
from .model import Graph, Layer, element_type_of_numpy, numpy_dtype
from .ops import REGISTRY, Bound, bind, elements
from .ops.folding import fold_max_pool
from .ops.glue import fused_affine
from .run_inputs import V10_OUTPUTS as V10_OUTPUTS
from .run_inputs import _element_type as _element_type
from .run_inputs import _role as _role
from .run_inputs import _uniform as _uniform
from .run_inputs import bind_inputs as bind_inputs
from .run_inputs import check_input as check_input
from .run_inputs import check_runnable
from .run_inputs import declared as declared
from .run_inputs import numeric_dtype as numeric_dtype
from .run_inputs import parameter_names as parameter_names
from .run_inputs import parameters as parameters
from .run_inputs import random_array as random_array
from .run_inputs import random_inputs as random_inputs
from .run_inputs import unsupported_layers as unsupported_layers
from .run_inputs import v10_output as v10_output
from .run_values import INTERNAL
from .run_values import Value as Value
from .run_values import convert_layer as _convert
from .run_values import declared_value as _declared_value
from .run_values import elementwise_layer as _elementwise
from .run_values import half_held as _half_held
from .run_values import read_integers as _read_integers
from .run_values import reshape_layer as _reshape

Array = npt.NDArray[Any]


@dataclass
class RunResult:
    """Outputs by Result name, every tensor by `layer:port`, the plan of each pooling layer."""

    outputs: dict[str, Array] = field(default_factory=dict)
    tensors: dict[str, Array] = field(default_factory=dict)
    plans: dict[str, PoolPlan | FamilyPlan] = field(default_factory=dict)
    """The plan of every pooling layer (a windowed PoolPlan or another family's FamilyPlan), by
    label, in the order the layers ran."""

    @property
    def order(self) -> list[str]:
        """Every pooling layer's label, in the order the layers ran."""
        return list(self.plans)

    @property
    def family_plans(self) -> dict[str, FamilyPlan]:
        """The plans of the layers of the families other than windowed pooling (adaptive,
        reductions, ...): the public API's name for them (docs/api.md)."""
        return {k: p for k, p in self.plans.items() if isinstance(p, FamilyPlan)}

    def all_plans(self) -> dict[str, PoolPlan | FamilyPlan]:
        """The plan of every pooling layer (windowed or of another family), in run order."""
        return dict(self.plans)

    bound: dict[str, Bound] = field(default_factory=dict)
    """Each pooling layer as `bind` made it (by label)."""
    inputs: dict[str, Array] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """Where irpool computed by a rule the runtime was not measured for (the report says so)."""


def check_dtype(bound: Bound, x: Array, element_type: str | None = None) -> None:
    """The op version's entry says which element types it takes (ONNX AveragePool: floats);
    `element_type` is the declared one where the array holds another (openvino's internal
    types)."""
    spec = bound.spec
    if not spec.dtypes:
        return
    et = element_type or element_type_of_numpy(x.dtype.name)
    if et not in spec.dtypes:
        words = f" ({spec.dtype_refusal})" if spec.dtype_refusal else ""
        raise InputError(
            f"{spec.label} takes {', '.join(spec.dtypes)} inputs, not {et or x.dtype.name}" + words,
            bound.layer.where(),
        )


def run_pooling(
    bound: Bound,
    x: Array,
    limit: int | None = None,
    convention: str | None = None,
    indices_used: bool | None = None,
    refuse: bool = True,
) -> tuple[PoolPlan, list[Array]]:
    """Run one bound windowed pooling layer on x (`run_layer`): its PoolPlan and outputs
    (values, and indices for MaxPool-8/14)."""
    p, outs = run_layer(bound, [x], limit, convention, indices_used, refuse)
    assert isinstance(p, PoolPlan)
    return p, outs


def run_layer(
    bound: Bound,
    ins: list[Array | None],
    limit: int | None = None,
    convention: str | None = None,
    indices_used: bool | None = None,
    refuse: bool = True,
) -> tuple[PoolPlan | FamilyPlan, list[Array]]:
    """Run one bound pooling layer of any family on its inputs (in order; None where an
    optional one is missing): its plan and outputs, the kernel looked up in the kernel table;
    under another convention than the bound one if given.  Under openvino's convention an array
    of a type the CPU plugin holds in another (i16, u16, u32, u64, boolean) is pooled in that
    type and converted back, as the plugin does.  The integer values of a family's value inputs
    (an adaptive pool's size, ...) come from `ins` where given, else from the file's constants.
    `refuse`: raise where the runtime has no kernel for a windowed layer
    (PoolPlan.runtime_refusal); off, irpool's semantics are computed all the same (fixtures
    record them for such layers)."""
    layer = bound.layer
    x = ins[0] if ins else None
    if x is None:
        raise UsageError(f"{layer.type} has no data input", layer.where())
    _check_data_inputs(bound, ins)
    et = _held_elsewhere(bound, x, convention)
    if et is not None:
        inner, held = elements.widen(x, et)
        p, outs = run_layer(bound, [inner, *ins[1:]], limit, convention, indices_used, refuse)
        return p, [elements.deliver(outs[0], held, et), *outs[1:]]
    p = _plan(bound, ins, x, convention, indices_used)
    refusal = getattr(p, "runtime_refusal", None)
    if refuse and refusal is not None:
        raise SpecError(refusal, layer.where())
    check_elements(p.output_shape, f'output of "{layer.label}"', limit, layer.where())
    try:
        outs = execute(p, ins)
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    return p, outs


def _plan(
    bound: Bound,
    ins: list[Array | None],
    x: Array,
    convention: str | None,
    indices_used: bool | None,
) -> PoolPlan | FamilyPlan:
    """The layer's plan for its data x (a family's value inputs read from `ins`)."""
    given = {}
    for k in bound.family.value_inputs:
        value = int_values(ins[k]) if k < len(ins) else None
        if value is not None:
            given[k] = value
    plan: PoolPlan | FamilyPlan = bound.plan(
        tuple(x.shape), x.dtype, convention, indices_used, given
    )
    return plan


def _check_data_inputs(bound: Bound, ins: list[Array | None]) -> None:
    """Every tensor input the kernel takes is there (a family's computed inputs)."""
    layer = bound.layer
    family = bound.family
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


def _held_elsewhere(bound: Bound, x: Array, convention: str | None) -> str | None:
    """x's element type (checked against the layer's) where the CPU plugin holds it in another
    one (openvino's convention: i16, u16, u32, u64 in i32 and boolean in u8): the layer then
    runs on that type and its output is converted back; else None (f64 and i64 data the plan
    narrows itself: narrow_64bit)."""
    check_dtype(bound, x)
    cv = bound.convention if convention is None else conv.get(convention)
    et = element_type_of_numpy(x.dtype.name)
    if cv.cpu_plugin_kernels and et not in (None, "f64", "i64", *elements.HELD.values()):
        return et
    return None


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


def _pool_plugin(
    bound: Bound, src: Value, limit: int | None, refuse: bool = True
) -> tuple[PoolPlan, list[Value]]:
    """A pooling layer as openvino's CPU plugin runs it on a tensor it holds: folded when its
    input is a constant and it is a MaxPool; else in the internal type (f16 and f64 in f32, the
    types held as i32 in i32), integers of more than one channel in float32 (and kept so for
    the next pooling layer)."""
    layer = bound.layer
    check_dtype(bound, src.array, src.declared)
    shape = tuple(src.array.shape)
    if src.constant is not None and bound.spec.reduce == "max" and src.declared != "boolean":
        return _fold_max(bound, src, limit)  # (a boolean one runs in u8, measured)
    x, held = src.array, src.held
    if src.jit_read is not None:
        x = src.jit_read
    if src.constant is not None and src.declared == "f64" and bound.spec.reduce == "mean":
        # an f64 constant reaches an AvgPool as a float32 constant the plugin stores
        # (flush_f32); a MaxPool and a Result get its float32 values as they are (measured)
        x = elements.flush_f32(x)
    if held not in INTERNAL or held == "f16":  # a Parameter's own type; f16 pools in f32
        x, held = elements.widen(x, held)
    elif held == "bf16" and elements.bf16_held_in_f32():  # and bf16 on AVX2
        x, held = np.asarray(x.astype(np.float32)), "f32"
    if src.declared in elements.INTEGRAL:
        inner = bound.plan(shape, numpy_dtype(elements.held_type(src.declared)))
        if refuse and inner.runtime_refusal is not None:
            raise SpecError(inner.runtime_refusal, layer.where())
        if held == "f32" and not inner.integers_in_float32:
            x, held = _read_integers(src)
        elif held == "i32" and inner.integers_in_float32:
            x, held = integers_as_float32(x), "f32"
    p, outs = run_pooling(bound, x, limit, refuse=refuse)
    values = Value(outs[0], held, src.declared)
    if held == "u8" and bound.spec.reduce == "mean" and shape[1] > 1 and p.plugin_isa != "avx2":
        values = Value(outs[0], held, src.declared, jit_read=_u8_blocked_nan(outs[0], p))
    return p, [values, *(_declared_value(a) for a in outs[1:])]


def _u8_blocked_nan(values: Array, plan: PoolPlan) -> Array | None:
    """A u8 AvgPool of more than one channel computes its means in f32 and reorders them to u8
    in a blocked layout: an empty window's NaN mean becomes 0 for a Result or a reference
    Convert, but 255 for the jit layers that read the blocked tensor (Converts to floats and
    i8, pooling layers); measured, openvino 2026.4.1 on AVX-512.  On AVX2 the plugin pools u8
    in u8 (acb layout) and every reader gets 0 (measured: [1, 3, 5] u8, kernel 2, stride 3, pads
    0/1, ceil: [2, 4, 0] per channel, 0.0 through a Convert to f32).  None when no window is
    empty."""
    from .kernel import divisor

    div = np.asarray(divisor(plan.via or plan))
    if plan.divisor == "full" or not (div == 0).any():
        return None
    return np.asarray(np.where(div == 0, np.uint8(255), values))


def _fold_max(bound: Bound, src: Value, limit: int | None) -> tuple[PoolPlan, list[Value]]:
    """A MaxPool of a constant, folded (ops/folding.py); its indices (MaxPool-8/14) as the
    kernel finds them on the constant."""
    assert src.constant is not None
    constant = src.constant
    et = src.declared
    if not bound.params.dilations_written and et not in ("f64", "i16", "u16"):
        # (the core folds these types only after the plugin's retyping, which does not fail)
        raise SpecError(
            f"openvino cannot fold this {bound.spec.label} of a constant: its dilations are "
            'missing or empty ("One of the MaxPool params does not match the 3D '
            'implementation"); expected dilations written, one per spatial axis',
            bound.layer.where(),
        )
    plan_dtype = numpy_dtype(elements.held_type(et) if et not in ("f16", "f64") else et)
    p = bound.plan(tuple(constant.shape), plan_dtype)
    check_elements(p.output_shape, f'output of "{bound.layer.label}"', limit, bound.layer.where())
    folded = fold_max_pool(constant, p, src.folded_type)
    if et == "f16":
        # evaluated in float32 and kept so (a Convert to f32 after it gives -FLT_MAX for a
        # window of NaN, not an f16 -inf; measured)
        folded = np.asarray(folded, dtype=np.float32)
        outs = [Value(folded, "f32", et, folded, constant_type="f32", late=True)]
    else:
        # an f64 (or f16) MaxPool is folded only once the plugin has retyped the model to f32
        # (measured: a Convert to f16 or f64 after it rounds or clamps nothing, one to i64
        # truncates to i32); integer ones are folded before, in their own type
        stored, held = elements.store_folded(folded, et, et)
        if src.late or et == "f64":
            outs = [Value(stored, held, et, stored, constant_type=held, late=True)]
        else:
            outs = [Value(stored, held, et, folded)]
    if p.indices:
        x, _ = elements.widen(constant, et) if et not in ("f32", "bf16") else (constant, et)
        _, found = run_pooling(bound, np.asarray(x))
        outs.append(_declared_value(found[1]))
    return p, outs


def run_graph(
    graph: Graph,
    inputs: Mapping[str, Array] | Array,
    convention: str | None = None,
    cast: bool = False,
    limit: int | None = None,
    sources: Mapping[str, str] | None = None,
    refuse: bool = True,
) -> RunResult:
    """Execute a net of Parameter, Const, Convert, pooling and Result layers (each pooling
    layer bound once).  `sources` names the file of each input (by the keys of `inputs`);
    `refuse` off computes layers the runtime has no kernel for (see run_pooling)."""
    check_runnable(graph)
    if convention is not None:
        conv.get(convention)
    bound_inputs = bind_inputs(graph, inputs, cast, sources)
    index_of = {la.id: la.index for la in graph.layers}
    values: dict[tuple[int, int], Value] = {}
    # How tensors travel between layers (docs/semantics.md "Element types and Convert"):
    # * an IR under openvino's convention: as the CPU plugin at f32 inference precision holds
    #   them (ops/elements.py): internal types, f16 tensors in f32 (only Results round to
    #   f16), integers of layers it runs in float32 kept in float32 until a layer that keeps
    #   integers, Converts by the plugin's rules, constants folded at compile time;
    # * an ONNX model under onnx's convention: onnxruntime's CPU pooling kernels are float32
    #   ones and the casts it puts around them cancel between two pooling nodes, so an f16
    #   tensor between pooling nodes keeps its f32 value (measured);
    # * otherwise every tensor is of its declared type.
    onnx_model = graph.format == "onnx"
    flow = _Flow(
        convention,
        limit,
        refuse,
        onnx_model,
        plugin=not onnx_model and convention in (None, "openvino"),
        hold_f16=onnx_model and convention in (None, "onnx"),
    )
    v10 = graph.ir_version == 10
    result = RunResult()
    for layer in graph.topological():
        role = _role(layer)
        optional = _layer_inputs(graph, layer, values, index_of)
        ins = [v for v in optional if v is not None]
        if role not in ("parameter", "const") and not ins:
            raise IrParseError(f"{layer.type} has no connected input", layer.where())
        if role == "result":
            name = layer.name or layer.label
            result.outputs[name] = ins[0].output(v10)
            continue
        if role == "parameter":
            outs = [_parameter_value(layer, bound_inputs[layer.index], onnx_model)]
            result.inputs[layer.label] = bound_inputs[layer.index]
        else:
            outs = _execute(graph, layer, role, optional, ins, flow, result)
        for port, value in zip(layer.outputs, outs, strict=False):
            values[(layer.index, port.id)] = value
            result.tensors[f"{layer.label}:{port.id}"] = value.output(v10)
    return result


@dataclass(frozen=True)
class _Flow:
    """How run_graph executes the net: the convention and the kernels' options, and how
    tensors travel between layers (see run_graph)."""

    convention: str | None
    limit: int | None
    refuse: bool
    onnx_model: bool
    plugin: bool
    """Tensors held as openvino's CPU plugin holds them (an IR under openvino's convention)."""
    hold_f16: bool
    """f16 tensors between pooling nodes keep their f32 value (an ONNX model under onnx's)."""


def _layer_inputs(
    graph: Graph,
    layer: Layer,
    values: Mapping[tuple[int, int], Value],
    index_of: Mapping[int | None, int],
) -> list[Value | None]:
    """A layer's inputs, port by port: the value its producer computed, an ONNX initializer,
    or None for an omitted optional ONNX input."""
    from .model import port_inputs

    return port_inputs(graph, layer, index_of, values.__getitem__, _declared_value)


def _parameter_value(layer: Layer, array: Array, onnx_model: bool) -> Value:
    """A model input as it enters the net, with the element type the model declares."""
    et = _element_type(layer) if not onnx_model else element_type_of_numpy(array.dtype.name)
    own = element_type_of_numpy(array.dtype.name) or "f32"
    return Value(array, own, et or own)


def _execute(
    graph: Graph,
    layer: Layer,
    role: str,
    optional: list[Value | None],
    ins: list[Value],
    flow: _Flow,
    result: RunResult,
) -> list[Value]:
    """The outputs of one layer other than a Parameter or Result: constants, the glue, and
    the pooling layers (whose plans and bindings go into `result`)."""
    plugin = flow.plugin
    if role == "const":
        raw = read_const(graph, layer)
        if plugin:
            et = element_type_of_numpy(raw.dtype.name) or "f32"
            stored, held = elements.store_constant(raw, et)
            return [Value(stored, held, et, raw)]
        return [_declared_value(raw)]
    if role == "convert":
        return [_convert(layer, ins[0], plugin)]
    if role == "identity":
        return [ins[0]]
    if role == "reshape":
        spec = REGISTRY.spec(layer)
        assert spec is not None and spec.execute is not None
        return _reshape(layer, spec.execute, ins, plugin, result.notes)
    if role == "elementwise":
        spec = REGISTRY.spec(layer)
        assert spec is not None and spec.execute is not None
        fused = fused_affine(graph, layer, result.tensors) if plugin else None
        if fused is not None:  # x*s + b in one rounding, as the plugin fuses it (ops/glue.py)
            return [Value(fused, "f32", "f32")]
        return _elementwise(layer, spec.execute, ins)
    if role == "quantize":
        return [_fake_quantize(layer, ins, plugin, result.notes, graph=graph)]
    bound = bind(graph, layer, flow.convention)
    result.bound[layer.label] = bound
    plan: PoolPlan | FamilyPlan
    if not bound.family.windows:
        plan, outs = _family(bound, optional, flow.limit, flow.convention)
    else:
        plan, outs = _pool(
            bound, optional, flow.convention, flow.limit, flow.refuse, plugin, flow.hold_f16
        )
    result.plans[layer.label] = plan
    return outs


def _pool_plain(
    bound: Bound, src: Value, limit: int | None, hold_f16: bool
) -> tuple[PoolPlan, list[Value]]:
    """A pooling layer on the tensor's declared type; with `hold_f16` (onnxruntime) an f16
    input is pooled in float32 and the result kept so for the next pooling node."""
    x = src.array
    if hold_f16 and src.declared == "f16":
        x = x.astype(np.float32) if x.dtype != np.float32 else x
        p, outs = run_pooling(bound, x, limit)
        return p, [Value(outs[0], "f32", "f16"), *(_declared_value(a) for a in outs[1:])]
    p, outs = run_pooling(bound, src.output(), limit)
    return p, [_declared_value(a) for a in outs]


def _pool(
    bound: Bound,
    optional: list[Value | None],
    convention: str | None,
    limit: int | None,
    refuse: bool,
    plugin: bool,
    hold_f16: bool,
) -> tuple[PoolPlan, list[Value]]:
    """A windowed pooling layer (QLinearAveragePool on its declared inputs)."""
    if bound.spec.kind == "qlinear":
        arrays = [v.output() if v is not None else None for v in optional]
        p, q = run_qlinear(bound, arrays, convention)
        return p, [_declared_value(q)]
    src = optional[0]
    assert src is not None
    if plugin and src.quant is not None:
        done = _pool_codes(bound, src, limit)
        if done is not None:
            return done
        src = _dequantized(src)
    if plugin:
        return _pool_plugin(bound, src, limit, refuse)
    return _pool_plain(bound, src, limit, hold_f16)


def _family(
    bound: Bound, optional: list[Value | None], limit: int | None, convention: str | None
) -> tuple[FamilyPlan, list[Value]]:
    """A layer of another pooling family, as the runtime carries tensors: an f16 tensor held
    in float32 is pooled in float32 and its first output stays held so; every other input is
    read in its declared type (an integer tensor held in float32 rounded first)."""
    src = optional[0]
    if src is not None and src.quant is not None and convention in (None, "openvino"):
        done = _family_codes(bound, optional, limit)
        if done is not None:
            return done
        src = _dequantized(src)
        optional = [src, *optional[1:]]
    rest = [v.output() if v is not None else None for v in optional[1:]]
    if src is not None and _half_held(src):
        p, outs = run_layer(
            bound, [np.asarray(src.array, dtype=np.float32), *rest], limit, convention
        )
        assert isinstance(p, FamilyPlan)
        first = outs[0]
        kept = (
            Value(first, "f32", src.declared)
            if first.dtype == np.float32
            else _declared_value(first)
        )
        return p, [kept, *(_declared_value(a) for a in outs[1:])]
    x = src.output() if src is not None else None
    p, outs = run_layer(bound, [x, *rest], limit, convention)
    assert isinstance(p, FamilyPlan)
    return p, [_declared_value(a) for a in outs]


def _fake_quantize(
    layer: Layer,
    ins: list[Value],
    plugin: bool,
    notes: list[str],
    quantize: Any = None,
    graph: Graph | None = None,
) -> Value:
    """A FakeQuantize layer (lpt_run): its value, and the codes LPT makes of it (`quantize`:
    see lpt_run.fake_quantize).  With the `graph`: where LPT pools its codes (codes_pooled),
    the value every other reader sees is the dequantization of the codes."""
    from .lpt_run import fake_quantize

    if len(ins) != 5:
        raise IrParseError(f"FakeQuantize takes 5 inputs, not {len(ins)}", layer.where())
    x = ins[0]
    ranges = [v.constant if v.constant is not None else v.output() for v in ins[1:]]
    in_quant = x.quant
    if in_quant is not None and in_quant.post_op and graph is not None and _shared(graph, layer):
        # the pooling layer's output has another reader: the plugin cannot fuse this
        # FakeQuantize into the Pooling node; it runs as a Subgraph (products rounded)
        in_quant = replace(in_quant, post_op=False)
    try:
        value, quant, note = fake_quantize(
            layer, x.output(), in_quant, ranges, plugin, *([quantize] if quantize else [])
        )
    except IrpoolError as e:
        raise e.at(layer.where()) from None
    if note and note not in notes:
        notes.append(note)
    if quant is not None and graph is not None and codes_pooled(graph, layer, quant.d):
        value = quant.d.dequantize(quant.codes)
    return Value(value, "f32", "f32", quant=quant)


def _shared(graph: Graph, layer: Layer) -> bool:
    """The tensor `layer` reads on its first input has readers other than `layer`."""
    assert layer.id is not None
    edge = graph.producer(layer.id, layer.inputs[0].id) if layer.inputs else None
    if edge is None:
        return False
    readers = [
        e for e in graph.edges if e.from_layer == edge.from_layer and e.from_port == edge.from_port
    ]
    return len(readers) > 1


def codes_pooled(graph: Graph, layer: Layer, d: Any) -> bool:
    """A reader of the FakeQuantize `layer` is a pooling layer LPT runs on its codes (with
    decomposition `d`): LPT then split the FakeQuantize, and every other reader of it (a
    Result, an elementwise layer) reads the dequantization (codes - shift) * scale, not the
    FakeQuantize's own value (measured: 0 of 726 cells; the FakeQuantize's value differs in
    159 of 726 where there is a zero point)."""
    from .ops.quantize import lpt_kind

    by_id = {la.id: la for la in graph.layers}
    for e in graph.edges:
        if e.from_layer != layer.id:
            continue
        reader = by_id[e.to_layer]
        if not reader.inputs or reader.inputs[0].id != e.to_port:
            continue
        spec = REGISTRY.spec(reader)
        if spec is None or not spec.pooling:
            continue
        rounding = reader.data.get("rounding_type")
        kind = lpt_kind(spec, str(rounding).lower() if rounding is not None else None)
        if kind is None or (kind in ("max", "reduce_max") and not d.positive):
            continue
        return True
    return False


def _dequantized(src: Value) -> Value:
    """A FakeQuantize's output as a layer LPT does not transform reads it: LPT decomposed the
    FakeQuantize all the same, so the layer reads (codes - shift) * scale (measured: an
    AvgPool-14 with rounding_type=ceil_torch after an FQ)."""
    quant = src.quant
    if quant is None or quant.moved:
        return src
    return Value(quant.d.dequantize_subgraph(quant.codes), "f32", "f32")


def _lpt_kind(bound: Bound) -> str | None:
    from .ops.quantize import lpt_kind

    rounding = bound.layer.data.get("rounding_type") if bound.family.windows else None
    return lpt_kind(bound.spec, str(rounding).lower() if rounding is not None else None)


def _on_codes(
    bound: Bound, src: Value | None, limit: int | None
) -> tuple[Any, Value, list[Array]] | None:
    """A layer LPT runs on the codes of the FakeQuantize before it: its plan, its dequantized
    value and its other outputs (None: LPT does not; a max only where every scale is
    positive)."""
    from .lpt_run import pooled

    kind = _lpt_kind(bound)
    quant = src.quant if src is not None else None
    if kind is None or quant is None or not quant.integral:
        return None
    if kind in ("max", "reduce_max") and not quant.d.positive:
        return None
    p, pooled_codes, rest = pool_codes(bound, kind, quant.codes, limit)
    value, q = pooled(kind, quant, pooled_codes)
    return p, Value(value, "f32", "f32", quant=q), rest


def _pool_codes(bound: Bound, src: Value, limit: int | None) -> tuple[PoolPlan, list[Value]] | None:
    """A windowed pooling layer LPT runs on the codes of the FakeQuantize before it (None: it
    does not)."""
    done = _on_codes(bound, src, limit)
    if done is None:
        return None
    p, value, rest = done
    return p, [value, *(_declared_value(a) for a in rest)]


def _family_codes(
    bound: Bound, optional: list[Value | None], limit: int | None
) -> tuple[FamilyPlan, list[Value]] | None:
    """A ReduceMean/ReduceMax LPT runs on codes (None: it does not)."""
    done = _on_codes(bound, optional[0], limit)
    return None if done is None else (done[0], [done[1]])


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


def pool_codes(
    bound: Any, kind: str, codes: Array, limit: int | None = None
) -> tuple[Any, Array, list[Array]]:
    """A pooling layer LPT transforms, on float32 codes: (its plan, the pooled codes before
    dequantization, its other outputs: a MaxPool-8's indices)."""
    from .lpt_run import average_codes, reduce_codes

    codes = np.asarray(codes, dtype=np.float32)
    if kind in ("reduce_mean", "reduce_max"):
        fp, _ = run_layer(bound, [codes, *([None] * (len(bound.layer.inputs) - 1))], limit)
        axes = tuple(getattr(fp, "axes", ()))
        keep = bool(getattr(fp, "keep", True))
        count = int(getattr(fp, "count", 1))
        return fp, reduce_codes(kind, codes, axes, keep, count), []
    p, outs = run_pooling(bound, codes, limit)
    pooled_codes = average_codes(codes, p, outs[0]) if kind == "avg" else outs[0]
    return p, pooled_codes, list(outs[1:])
