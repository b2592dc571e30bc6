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


def _find_layers(model: Any, ops: list[tuple[Any, dict[str, Any]]]) -> list[tuple[Any, str]]:
    """(the IR layer, how it was found) of each op; (None, why) when none is."""
    by_name = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    layers = [op for op in model.get_ordered_ops() if openvino_rt.is_pool_layer(op)]
    claimed: set[str] = set()
    found: list[tuple[Any, str]] = []
    for op, attrs in ops:
        family = _family(op.type)
        layer, how = None, ""
        node = by_name.get(_strip(op.name))
        if node is not None:
            above = (
                [node]
                if openvino_rt.is_pool_layer(node)
                else openvino_rt.pooling_upstream(node.output(0))
            )
            above = [
                la
                for la in above
                if la.get_friendly_name() not in claimed and _layer_family(la) == family
            ]
            if above:
                layer, how = above[0], "the op's name on the node openvino made last for it"
        if layer is None:
            layer = next(
                (
                    la
                    for la in layers
                    if la.get_friendly_name() not in claimed
                    and _layer_family(la) == family
                    and _fits(attrs, op.type, la)
                ),
                None,
            )
            how = "the next layer of the same kind whose window, strides and padding fit"
        if layer is None:
            layer = next(
                (
                    la
                    for la in layers
                    if la.get_friendly_name() not in claimed and _layer_family(la) == family
                ),
                None,
            )
            how = "the next layer of the same kind (by order only: no name and no attribute fit)"
        if layer is not None:
            claimed.add(layer.get_friendly_name())
        found.append((layer, how if layer is not None else "no layer"))
    return found


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
    found = _find_layers(model, ops)
    taps = [
        p
        for layer, _ in found
        if layer is not None
        for p in (layer.input_value(0), layer.output(0))
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
    for i, ((op, attrs), (layer, how)) in enumerate(zip(ops, found, strict=True)):
        own_in, own_out = fetched[2 * i], fetched[2 * i + 1]
        traced.append(_op(op, attrs, layer, how, own_in, own_out, by_key, tf))
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
