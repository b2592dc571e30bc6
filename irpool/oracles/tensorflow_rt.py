"""TensorFlow as an oracle of the conversion audit: load a SavedModel directory, a .keras file
or a live Keras model, convert it with openvino's TensorFlow front end, find each pooling op's
layer in the converted model, and run TensorFlow's own op on the input openvino gave that layer.

Measured with tensorflow-cpu 2.21, keras 3.15 and openvino 2026.4.1:

* openvino converts a SavedModel directory by its path, but not a .keras file ("Cannot
  recognize input model"): that is loaded with keras and the object converted.
* TensorFlow's values come from the frozen concrete function (variables folded into
  constants, nested calls inlined; op names get a `(Stateful)PartitionedCall/` prefix); any
  tensor of it can be fetched by pruning the imported graph.  The loaded objects are kept
  alive while it runs ("a function referencing variables which have been deleted").
* The TensorFlow front end gives an op's name to the *last* node it makes for it (the
  Transpose back to NHWC, or the Reduce), and TransposeSinking removes Transposes between
  layers and their names with them.  So a layer is found by name when it has one, else as the
  next unclaimed layer whose family, window, strides and padding fit the op, else (flagged) the
  next of the same family.
* openvino's layers are channels-first; TensorFlow's ops follow their data_format.  The
  channel axis is moved by that attribute, never by comparing shapes (C == H == W happens).
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OracleMissing, Where
from ..ops import tensorflow as tf_ops
from ..source_ops import DeclaredInputs, IrLayer, Traced, TracedOp, TracedOutput
from . import openvino_rt, refusals, unreadable

Array = npt.NDArray[Any]


def load() -> Any:
    """The tensorflow module, or OracleMissing saying how to install it.  Its C++ start-up
    lines (absl's "All log messages before absl::InitializeLog()" and oneDNN's notice, which
    tensorflow 2.21 writes to stderr whatever TF_CPP_MIN_LOG_LEVEL says) are dropped."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stderr.flush()
        os.dup2(devnull, 2)
        import tensorflow
    except ImportError:
        raise OracleMissing(
            "tensorflow is not installed; pip install 'irpool[tensorflow]'"
        ) from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    return tensorflow


def version() -> str:
    return str(load().__version__)


@dataclass
class Program(DeclaredInputs):
    """A TensorFlow model to audit, the objects that must stay alive, and its inputs."""

    kind: str
    """'SavedModel' or 'Keras model'."""
    path: str
    convert: Any
    """What openvino converts: the SavedModel path, or the Keras model object."""
    keras: Any
    signature: Any
    keep: list[Any] = field(default_factory=list)


def _shape(dims: Any, given: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A static shape from a TensorSpec's dims: an unknown batch dim is 1, any other unknown
    dim needs --input-shape."""
    if given is not None:
        return given
    if dims is None:
        return None
    values = [None if d is None else int(d) for d in dims]
    if values and values[0] is None:
        values[0] = 1
    if any(v is None for v in values):
        return None
    return tuple(int(v) for v in values if v is not None)


def _np(dtype: Any) -> np.dtype[Any]:
    return np.dtype(getattr(dtype, "as_numpy_dtype", np.float32))


def open_model(model: Any, path: str, shapes: Mapping[str, tuple[int, ...]]) -> Program:
    """A SavedModel directory or a .keras file (a path), or a live Keras model.  Loading may
    run the model's code: audit only models you trust."""
    tf = load()
    if isinstance(model, str) and os.path.isdir(model):
        with unreadable("tensorflow", path):
            loaded = tf.saved_model.load(model)
        signature = loaded.signatures.get("serving_default")
        if signature is None:
            raise InputError(
                "the SavedModel has no serving_default signature; expected one",
                Where(file=path),
            )
        specs = signature.structured_input_signature[1]
        names = sorted(specs)
        one = len(names) == 1
        return Program(
            "SavedModel",
            path,
            model,
            None,
            signature,
            [loaded],
            input_names=names,
            input_shapes=[
                _shape(specs[n].shape, shapes.get(n, shapes.get("") if one else None))
                for n in names
            ],
            input_dtypes=[_np(specs[n].dtype) for n in names],
        )
    if isinstance(model, str):
        try:
            import keras
        except ImportError:
            raise OracleMissing(
                "keras is not installed; pip install 'irpool[tensorflow]'"
            ) from None

        with unreadable("keras", path):
            model = keras.models.load_model(model, compile=False)
    names = [
        str(getattr(t, "name", f"input_{i}")).split(":")[0] for i, t in enumerate(model.inputs)
    ]
    one = len(names) == 1
    return Program(
        "Keras model",
        path,
        model,
        model,
        None,
        [model],
        input_names=names,
        input_shapes=[
            _shape(t.shape, shapes.get(n, shapes.get("") if one else None))
            for n, t in zip(names, model.inputs, strict=True)
        ],
        input_dtypes=[_np(getattr(t, "dtype", "float32")) for t in model.inputs],
    )


def _frozen(program: Program, arrays: list[Array]) -> Any:
    """The model's concrete function for these input shapes, variables folded into constants."""
    tf = load()
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    if program.signature is not None:
        function = program.signature
    else:
        model = program.keras
        specs = [tf.TensorSpec(x.shape, tf.as_dtype(x.dtype)) for x in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # keras: "the structure of `inputs` doesn't match"
            if len(specs) == 1:
                function = tf.function(lambda x: model(x)).get_concrete_function(specs[0])
            else:
                function = tf.function(lambda *xs: model(list(xs))).get_concrete_function(*specs)
        program.keep.append(function)
    return convert_variables_to_constants_v2(function)


def _fetch(frozen: Any, arrays: list[Array], names: list[str]) -> list[Array]:
    """The values of tensors `names` of the frozen graph for the model inputs."""
    tf = load()
    graph_def = frozen.graph.as_graph_def()
    feeds = [t.name for t in frozen.inputs]

    def body() -> None:
        tf.compat.v1.import_graph_def(graph_def, name="")

    wrapped = tf.compat.v1.wrap_function(body, [])
    g = wrapped.graph
    pruned = wrapped.prune(
        feeds=[g.get_tensor_by_name(n) for n in feeds],
        fetches=[g.get_tensor_by_name(n) for n in names],
    )
    return [np.asarray(v.numpy()) for v in pruned(*[tf.constant(x) for x in arrays])]


def _attrs(op: Any) -> dict[str, Any]:
    """A TF op's attributes (type parameters left out)."""
    found: dict[str, Any] = {}
    order = ("ksize", "strides", "padding", "explicit_paddings", "data_format")
    for name in sorted(op.node_def.attr, key=lambda n: (order.index(n) if n in order else 9, n)):
        if name in ("T", "Targmax", "Tidx") or name.startswith("_"):
            continue
        value = op.get_attr(name)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, (list, tuple)):
            value = list(value)
        found[name] = value
    tf = load()
    if len(op.inputs) == 3:  # MaxPoolV2: the window and strides are inputs
        found["ksize"] = [int(v) for v in tf.get_static_value(op.inputs[1])]
        found["strides"] = [int(v) for v in tf.get_static_value(op.inputs[2])]
    if op.type in tf_ops.REDUCE_TYPES:
        axes = tf.get_static_value(op.inputs[1])
        found["axis"] = [] if axes is None else [int(v) for v in np.ravel(axes)]
    return found


def _is_global_pool(op: Any, attrs: Mapping[str, Any]) -> bool:
    """A Mean or Max over every spatial axis of a rank >= 3 tensor (channels last or first)."""
    rank = op.inputs[0].shape.rank
    if rank is None or rank < 3:
        return False
    axes = sorted(a % rank for a in attrs.get("axis", []))
    return axes in (list(range(1, rank - 1)), list(range(2, rank)))


def pooling_ops(frozen: Any) -> list[tuple[Any, dict[str, Any]]]:
    found = []
    for op in frozen.graph.get_operations():
        if not tf_ops.is_pooling(op.type):
            continue
        attrs = _attrs(op)
        if op.type in tf_ops.REDUCE_TYPES and not _is_global_pool(op, attrs):
            continue
        found.append((op, attrs))
    return found


def _strip(name: str) -> str:
    return re.sub(r"^(StatefulPartitionedCall|PartitionedCall)(_\d+)?/", "", name)


def _family(op_type: str) -> str:
    family, reduce = tf_ops.family_of(op_type)
    return f"reduce_{reduce}" if family == "global" else str(reduce)


def _layer_family(layer: Any) -> str:
    like = openvino_rt.pooling_like_kind(layer)
    if like is not None:
        return f"{like[0]}_{like[1]}"
    return "mean" if "Avg" in layer.get_type_name() else "max"


def _fits(attrs: Mapping[str, Any], op_type: str, layer: Any) -> bool:
    """Whether a layer's window, strides and padding are the op's.  (A pool whose attributes
    two layers share may be paired with either; each is then still compared on its own
    input.)"""
    if op_type in tf_ops.REDUCE_TYPES:
        return True
    data_format = str(attrs.get("data_format", "NHWC"))
    written = layer.get_attributes()
    k = tuple(int(v) for v in written.get("kernel", ()))
    s = tuple(int(v) for v in written.get("strides", ()))
    want_k = tf_ops.spatial(attrs.get("ksize", ()), data_format)
    want_s = tf_ops.spatial(attrs.get("strides", ()), data_format)
    if (k, s) != (want_k, want_s):
        return False
    padding = str(attrs.get("padding", "VALID")).upper()
    auto_pad = str(written.get("auto_pad", "explicit")).lower()
    pads = any(int(v) for v in (*written.get("pads_begin", ()), *written.get("pads_end", ())))
    if padding == "SAME":
        return auto_pad == "same_upper" or auto_pad == "explicit"
    if padding == "VALID":
        return auto_pad == "valid" or not pads
    return True


def _value_numbers(graph: Any) -> dict[str, int]:
    """A number for each op of a TF graph, equal for ops that compute the same thing: the same
    type and attributes on the same (equally numbered) inputs, Identity seen through, Consts
    by value.  openvino keeps one node for such ops (its shared-op elimination), so pools with
    one number may become one layer."""
    ops = {op.name: op for op in graph.get_operations()}
    numbers: dict[str, int] = {}
    interned: dict[Any, int] = {}

    def key_of(op: Any) -> Any:
        if op.type == "Identity" and op.inputs:
            t = op.inputs[0]
            return ("=", numbers[t.op.name], t.value_index)
        if op.type == "Const":
            return ("Const", op.node_def.attr["value"].SerializeToString())
        if op.type in ("Placeholder", "VarHandleOp") or op.op_def.is_stateful:
            return ("unique", op.name)
        attrs = tuple(
            sorted(
                (k, v.SerializeToString())
                for k, v in op.node_def.attr.items()
                if not k.startswith("_")
            )
        )
        inputs = tuple((numbers[t.op.name], t.value_index) for t in op.inputs)
        return (op.type, attrs, inputs)

    for name in ops:
        stack = [ops[name]]
        while stack:
            op = stack[-1]
            if op.name in numbers:
                stack.pop()
                continue
            waiting = [t.op for t in op.inputs if t.op.name not in numbers]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            key = key_of(op)
            if key[0] == "=":
                # Identity: the number of its input (an output index other than 0 keeps apart)
                key = ("out", key[1], key[2]) if key[2] else key[1]
            numbers[op.name] = (
                key if isinstance(key, int) else interned.setdefault(key, len(interned))
            )
    return numbers


def _upstream_pools(op: Any, pools: set[str]) -> frozenset[str]:
    """The names of the pooling ops nearest above a TF op's data input."""
    found: set[str] = set()
    seen: set[str] = set()
    frontier = [op.inputs[0].op]
    while frontier:
        node = frontier.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        if node.name in pools:
            found.add(node.name)
            continue
        frontier.extend(t.op for t in node.inputs)
    return frozenset(found)


def _dims(shape: Any) -> tuple[int, ...] | None:
    """A static shape of an openvino partial shape (None when a dim is dynamic)."""
    if not shape.is_static:
        return None
    return tuple(int(d.get_length()) for d in shape)


def _channels_first(shape: tuple[int, ...], last: bool) -> tuple[int, ...]:
    if last and len(shape) >= 3:
        return (shape[0], shape[-1], *shape[1:-1])
    return shape


def _rank(layer: Any, feeders: set[str], shape_fit: Any) -> tuple[int, int]:
    """How well a candidate layer fits an op (lower is better): whether its nearest pooling
    layers above are those paired with the op's nearest pooling ops above, then its shapes."""
    above = {u.get_friendly_name() for u in openvino_rt.pooling_upstream(layer.input_value(0))}
    return (0 if above == feeders else 1, 2 - int(shape_fit(layer)))


def _shape_fit(
    layer: Any,
    op: Any,
    attrs: Mapping[str, Any],
    shapes: tuple[tuple[int, ...], tuple[int, ...]] | None,
) -> int:
    """2: the layer's input and output shapes are the op's (channels moved as the op's
    data_format says; a global pool: its input shape); 1: they hold as many elements (the
    same data laid out otherwise); 0: another shape, never paired."""
    if shapes is None:
        return 2
    own_in, own_out = shapes
    got_in = _dims(layer.get_input_partial_shape(0))
    got_out = _dims(layer.get_output_partial_shape(0))
    if got_in is None or got_out is None:
        return 1
    last = tf_ops.channels_last(str(attrs.get("data_format", "NHWC")))
    if op.type in tf_ops.REDUCE_TYPES:
        if got_in in (own_in, _channels_first(own_in, True)):
            return 2
        return 1 if np.prod(got_in) == np.prod(own_in) else 0
    if (got_in, got_out) == (_channels_first(own_in, last), _channels_first(own_out, last)):
        return 2
    same_size = np.prod(got_in) == np.prod(own_in) and np.prod(got_out) == np.prod(own_out)
    return 1 if same_size else 0


def _input_fit(
    layer: Any, attrs: Mapping[str, Any], shapes: tuple[tuple[int, ...], ...] | None
) -> bool:
    """Whether a layer's input holds as many elements as the op's (the layer an op's name
    leads to is its own: only its input must agree; a different output shape is then the
    conversion's doing, and reported)."""
    got_in = _dims(layer.get_input_partial_shape(0))
    if shapes is None or got_in is None:
        return True
    return bool(np.prod(got_in) == np.prod(shapes[0]))


def _same_computation(a: Any, b: Any) -> bool:
    """Two IR layers of one type and attributes on one tensor (openvino did not merge them)."""
    if a.get_type_name() != b.get_type_name() or a.get_input_size() != b.get_input_size():
        return False
    for i in range(a.get_input_size()):
        x, y = a.input_value(i), b.input_value(i)
        if (x.get_node().get_friendly_name(), x.get_index()) != (
            y.get_node().get_friendly_name(),
            y.get_index(),
        ):
            return False
    return bool(openvino_rt.attributes(a) == openvino_rt.attributes(b))


@dataclass
class Pairing:
    """The IR layer a TF pooling op became, how it was found, and the other ops of the source
    that became the same layer (openvino merged identical computations on one tensor)."""

    layer: Any
    how: str
    merged_with: list[str] = field(default_factory=list)


def _find_layers(
    model: Any,
    ops: list[tuple[Any, dict[str, Any]]],
    shapes: list[tuple[tuple[int, ...], tuple[int, ...]]] | None = None,
) -> list[Pairing]:
    """The IR layer of each op (None, and why, when none is), by the graph: an op's name on
    the node openvino made last for it, else the unclaimed layer of the same kind whose
    window, strides, padding and shapes fit and whose nearest pooling layers above are those
    of the ops nearest above the op.  Ops that compute the same thing on the same tensor
    (equal value numbers) are one computation: openvino keeps one layer for them, which each
    of them is paired with (merged), unless the IR still holds a twin layer for each.  A layer
    of another shape than the op's is never paired."""
    finder = _LayerFinder(model, ops)
    for i, (op, attrs) in enumerate(ops):
        finder.pair(i, op, attrs, shapes[i] if shapes is not None else None)
    return finder.found


class _LayerFinder:
    """The state of _find_layers as it pairs the ops in order."""

    def __init__(self, model: Any, ops: list[tuple[Any, dict[str, Any]]]) -> None:
        self.ops = ops
        self.by_name = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
        self.layers = [op for op in model.get_ordered_ops() if openvino_rt.is_pool_layer(op)]
        self.numbers = _value_numbers(ops[0][0].graph) if ops else {}
        self.names = {op.name for op, _ in ops}
        self.claimed: dict[str, int] = {}
        """layer name -> the index of the first op paired with it."""
        self.first_of: dict[int, int] = {}
        """value number -> the index of the first op of that computation that was paired."""
        self.found: list[Pairing] = []

    def _free(self, family: str) -> list[Any]:
        """The unclaimed layers of a family, in graph order."""
        return [
            la
            for la in self.layers
            if la.get_friendly_name() not in self.claimed and _layer_family(la) == family
        ]

    def pair(
        self,
        i: int,
        op: Any,
        attrs: dict[str, Any],
        own: tuple[tuple[int, ...], tuple[int, ...]] | None,
    ) -> None:
        family = _family(op.type)
        number = self.numbers.get(op.name)
        if number is not None and number in self.first_of:
            self.found.append(self._repeated(i, op, number))
            return
        layer, how = self._by_name(op, family, attrs, own)
        if layer is None:
            layer, how = self._by_fit(i, op, attrs, family, own)
        if layer is None:
            layer = next((la for la in self._free(family) if _input_fit(la, attrs, own)), None)
            how = (
                "the next layer of the same kind on an input of the op's size (by order only: "
                "no name and no attribute fit)"
            )
        if layer is None:
            self.found.append(Pairing(None, "no layer of the op's kind and input size"))
            return
        self.claimed[layer.get_friendly_name()] = i
        if number is not None:
            self.first_of[number] = i
        self.found.append(Pairing(layer, how))

    def _repeated(self, i: int, op: Any, number: int) -> Pairing:
        """An op computing what an earlier one does: a twin layer of its own if the IR holds
        one, else the earlier op's layer (merged)."""
        earlier = self.found[self.first_of[number]]
        twin = next(
            (
                la
                for la in self.layers
                if la.get_friendly_name() not in self.claimed
                and _same_computation(la, earlier.layer)
            ),
            None,
        )
        if twin is not None:
            self.claimed[twin.get_friendly_name()] = i
            return Pairing(twin, earlier.how + " (a twin of an identical op's layer)")
        group = [j for j in range(i) if self.numbers.get(self.ops[j][0].name) == number]
        mates = [_strip(self.ops[j][0].name) for j in group]
        for j in group:
            self.found[j].merged_with.append(_strip(op.name))
        return Pairing(
            earlier.layer,
            "the layer of an identical computation on the same tensor (openvino keeps "
            "one layer for both)",
            mates,
        )

    def _by_name(self, op: Any, family: str, attrs: dict[str, Any], own: Any) -> tuple[Any, str]:
        """The layer the op's name leads to (the node openvino made last for it)."""
        node = self.by_name.get(_strip(op.name))
        if node is None:
            return None, ""
        above = (
            [node]
            if openvino_rt.is_pool_layer(node)
            else openvino_rt.pooling_upstream(node.output(0))
        )
        above = [
            la
            for la in above
            if la.get_friendly_name() not in self.claimed
            and _layer_family(la) == family
            and _input_fit(la, attrs, own)
        ]
        if above:
            return above[0], "the op's name on the node openvino made last for it"
        return None, ""

    def _by_fit(
        self, i: int, op: Any, attrs: dict[str, Any], family: str, own: Any
    ) -> tuple[Any, str]:
        """The free layer whose attributes and shapes fit, those fed by the layers of the ops
        above first."""
        shape_fit = partial(_shape_fit, op=op, attrs=attrs, shapes=own)
        feeders = {
            self.found[j].layer.get_friendly_name()
            for j, (other, _) in enumerate(self.ops[:i])
            if other.name in _upstream_pools(op, self.names) and self.found[j].layer is not None
        }
        fit = [la for la in self._free(family) if _fits(attrs, op.type, la) and shape_fit(la)]
        if not fit:
            return None, ""
        rank = partial(_rank, feeders=feeders, shape_fit=shape_fit)
        layer = min(fit, key=rank)  # min keeps the first of equals: graph order
        how = (
            "the layer of the same kind whose window, strides, padding and shapes fit "
            "and whose nearest pooling layers above are those of the op"
            if rank(layer)[0] == 0
            else "the next layer of the same kind whose window, strides, padding and shapes fit"
        )
        return layer, how


def _layout(x: Array, shape: tuple[int, ...], last: bool) -> Array | None:
    """openvino's channels-first value in the op's layout, if that gives the op's shape."""
    moved = np.moveaxis(x, 1, -1) if last and x.ndim >= 3 else x
    return np.ascontiguousarray(moved) if moved.shape == shape else None


def _replay(op: Any, attrs: Mapping[str, Any], x: Array) -> Array:
    """TensorFlow's own op (tf.raw_ops of the same type, with the op's attributes) on x, in the
    op's layout."""
    tf = load()
    kwargs: dict[str, Any] = {
        "ksize": attrs["ksize"],
        "strides": attrs["strides"],
        "padding": attrs["padding"],
    }
    for name in ("data_format", "explicit_paddings", "include_batch_in_index"):
        if name in attrs and (name != "explicit_paddings" or attrs["padding"] == "EXPLICIT"):
            kwargs[name] = attrs[name]
    kwargs[op.op_def.input_arg[0].name] = tf.constant(x)
    out = getattr(tf.raw_ops, op.type)(**kwargs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    return np.asarray(first.numpy())


def trace(program: Program, arrays: list[Array]) -> Traced:
    """Convert the model with openvino and pair each pooling op with its layer, with
    TensorFlow's and openvino's values on the same input."""
    tf = load()
    openvino_rt.load()
    with refusals("tensorflow", program.path):
        frozen = _frozen(program, arrays)
    ops = pooling_ops(frozen)
    names = [t.name for op, _ in ops for t in (op.inputs[0], op.outputs[0])]
    with refusals("tensorflow", program.path):
        fetched = _fetch(frozen, arrays, names) if names else []
    with refusals("openvino", program.path):
        model = openvino_rt.convert_object(program.convert, [list(x.shape) for x in arrays])
    shapes = [
        (tuple(fetched[2 * i].shape), tuple(fetched[2 * i + 1].shape)) for i in range(len(ops))
    ]
    found = _find_layers(model, ops, shapes)
    taps = [
        p
        for pairing in found
        if pairing.layer is not None
        for p in (pairing.layer.input_value(0), pairing.layer.output(0))
    ]
    unique = list({(p.get_node().get_friendly_name(), p.get_index()): p for p in taps}.values())
    finals: list[Array] = []
    with refusals("openvino", program.path):
        values = openvino_rt.probe(
            model, unique, openvino_rt.parameter_inputs(model, arrays), finals=finals
        )
    by_key = {
        (p.get_node().get_friendly_name(), p.get_index()): v
        for p, v in zip(unique, values, strict=True)
    }
    traced = []
    for i, ((op, attrs), pairing) in enumerate(zip(ops, found, strict=True)):
        own_in, own_out = fetched[2 * i], fetched[2 * i + 1]
        one = _op(op, attrs, pairing.layer, pairing.how, own_in, own_out, by_key, tf)
        one.merged_with = list(pairing.merged_with)
        traced.append(one)
    inputs = {n: tuple(x.shape) for n, x in zip(program.input_names, arrays, strict=False)}
    notes = deployed_notes(program, arrays, finals)
    return Traced("tf", program.kind, version(), inputs, traced, notes)


def deployed_notes(program: Program, arrays: list[Array], finals: list[Array]) -> list[str]:
    """Whether what convert-report ran (the conversion with the inputs' static shapes, every
    compared tensor made an output) computes the model's final outputs as the model deployed
    does (converted with its own input shapes, run as it is): a note when it does not, naming
    the cause (the static shapes, or the probe) and how far the outputs moved."""
    from ..compare_report import probe_effect

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            deployed = openvino_rt.convert_object(program.convert)
        plain: list[Array] = []
        openvino_rt.probe(
            deployed, [], openvino_rt.parameter_inputs(deployed, arrays), finals=plain
        )
    except Exception:  # a model openvino converts only with static shapes: nothing to compare
        return []
    effect = probe_effect(plain, finals)
    if not effect.moved:
        return []
    static: list[Array] = []
    model = openvino_rt.convert_object(program.convert, [list(x.shape) for x in arrays])
    openvino_rt.probe(model, [], openvino_rt.parameter_inputs(model, arrays), finals=static)
    shapes = ", ".join(str(p.get_partial_shape()) for p in deployed.get_parameters())
    cause = (
        "the static input shapes"
        if probe_effect(plain, static).moved
        else "the outputs added on the compared layers (the probe)"
    )
    return [
        f"not the deployed model: converted with its own input shapes ({shapes}) and run as it "
        f"is, openvino computes other final outputs than in the run compared here "
        f"({effect.moved} of {effect.compared} values, max abs {effect.max_abs:.6g}); "
        f"{cause} changed what runs, so the results below describe that run, not the deployed "
        "model's"
    ]


def _op(
    op: Any,
    attrs: dict[str, Any],
    layer: Any,
    how: str,
    own_in: Array,
    own_out: Array,
    values: Mapping[tuple[str, int], Array],
    tf: Any,
) -> TracedOp:
    name = _strip(op.name)
    scope = name.rsplit("/", 1)[0] if "/" in name else ""
    result = TracedOp(
        name=name,
        op=op.type,
        function=op.type,
        module=scope,
        attributes=attrs,
        mapping=how,
        input_shape=tuple(own_in.shape),
    )
    result.family, result.reduce = tf_ops.family_of(op.type)
    if op.type in tf_ops.POOL_TYPES:
        result.params = tf_ops.params(
            op.type,
            attrs.get("ksize", ()),
            attrs.get("strides", ()),
            str(attrs.get("padding", "VALID")),
            str(attrs.get("data_format", "NHWC")),
            attrs.get("explicit_paddings", ()),
        )
    if tf_ops.is_argmax(op.type):
        result.notes.append(
            "indices not compared (TensorFlow flattens them channels-last, openvino per plane)"
        )
    if layer is None:
        return result
    result.layers = [
        IrLayer(
            layer.get_friendly_name(), openvino_rt.op_label(layer), openvino_rt.attributes(layer)
        )
    ]
    source = layer.input_value(0)
    ov_in = values[(source.get_node().get_friendly_name(), source.get_index())]
    got = values[(layer.get_friendly_name(), 0)]
    result.nan_input = not bool(np.isfinite(ov_in).all()) if ov_in.dtype.kind == "f" else False
    if op.type in tf_ops.REDUCE_TYPES:
        axes = openvino_rt.const_input(layer, 1)
        keep = str(layer.get_attributes().get("keep_dims", False)).lower() == "true"
        reduce = tf.reduce_mean if result.reduce == "mean" else tf.reduce_max
        reduced = np.asarray(reduce(tf.constant(ov_in), axis=axes, keepdims=keep).numpy())
        own = own_out if own_out.shape == got.shape else None
        result.outputs.append(TracedOutput(op.outputs[0].name, "values", reduced, own, got))
        return result
    last = tf_ops.channels_last(str(attrs.get("data_format", "NHWC")))
    x = _layout(ov_in, tuple(own_in.shape), last)
    again = _replay(op, attrs, x) if x is not None else None
    shape = tuple(again.shape) if again is not None else tuple(own_out.shape)
    mine: Array | None = _layout(got, shape, last)
    if x is None:
        result.notes.append(
            "openvino's input of the layer does not have the op's input shape: TensorFlow's own "
            "value of the op is compared (end to end)"
        )
    if mine is None:
        mine = np.moveaxis(got, 1, -1) if last and got.ndim >= 3 else got
    result.outputs.append(TracedOutput(op.outputs[0].name, "values", again, own_out, mine))
    return result


def reduce(kind: str, x: Array, axes: list[int], keep: bool) -> tuple[str, list[Array]]:
    """(the TensorFlow call, its output) of a global mean or max over `axes` of x."""
    tf = load()
    function = tf.reduce_mean if kind == "mean" else tf.reduce_max
    name = f"tf.reduce_{'mean' if kind == 'mean' else 'max'}"
    out = function(tf.constant(x), axis=axes, keepdims=keep)
    return f"{name}(x, axis={axes}, keepdims={keep})", [np.asarray(out.numpy())]
