"""A model's inputs as every command takes them: arrays from files (`-i`), shapes
(`--input-shape`) and random draws; and the shapes the pooling layers get from them.

* `-i [NAME=]FILE`: an .npy, an .npz (its members keep the names they were written with), a
  `.pb` TensorProto or an onnx backend-test folder (`test_data_set_N/`).  `NAME=` binds a
  single array to the model input NAME (or picks the member NAME of an .npz).
* `--input-shape [NAME=]SHAPE`: the shape of model input NAME (without NAME: the model's only
  input), written `1,3,32,32` or `[1,3,32,32]`.  It replaces the input's declared shape as
  openvino's `Model.reshape` does, and the shapes inside the model follow from it: irpool's
  own rules through pooling nets, openvino's shape inference through any IR, onnx's shape
  inference through any ONNX model.
* Inputs that are neither given nor of a static shape are refused, naming the input and how to
  give it; inputs not given are drawn uniformly in [low, high) from a seed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, IrpoolError, UsageError, Where, option
from .model import Dim, Graph, Layer, Shape, format_shape

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class InputSource:
    """Where one input array of a command came from: a file (`file`, and `key` for a member of
    an .npz or the name a .pb tensor carries) or a random draw (`seed`, `low`, `high`)."""

    name: str
    source: str  # file | array (given in memory) | random
    file: str | None = None
    key: str | None = None
    seed: int | None = None
    low: float | None = None
    high: float | None = None

    def label(self) -> str:
        """How messages name the array: FILE or FILE:KEY ('' for an array given in memory or
        drawn at random)."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.key}" if self.key else self.file


@dataclass
class Given:
    """The arrays of the -i options, by the name they were given (or carry; '' for none)."""

    arrays: dict[str, Array] = field(default_factory=dict)
    sources: dict[str, InputSource] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)

    def files(self) -> dict[str, str]:
        """The file each array came from, by key (as run.bind_inputs names them in errors)."""
        return {k: s.label() for k, s in self.sources.items()}


def _split(spec: str) -> tuple[str, str]:
    """NAME and FILE of `[NAME=]FILE` (a file whose own name holds '=' is taken whole)."""
    if os.path.exists(spec) or "=" not in spec:
        return "", spec
    name, path = spec.split("=", 1)
    return name, path


def load_given(specs: Sequence[str] | None, limit: int | None = None) -> Given:
    """The arrays of `-i [NAME=]FILE` options (see the module text)."""
    from .arrays import load_arrays

    given = Given()
    for spec in specs or []:
        name, path = _split(spec)
        loaded = load_arrays(path, limit)
        given.paths.append(path)
        if name and len(loaded) > 1:
            if name not in loaded:
                raise UsageError(
                    f"{name}={path}: the file holds {len(loaded)} arrays "
                    f"({', '.join(sorted(loaded))}); NAME= takes a file of one array or names "
                    "one of its members",
                    Where(file=path),
                )
            loaded = {name: loaded[name]}
        for key, array in loaded.items():
            bound = name or key
            if bound in given.arrays:
                raise UsageError(f"input {bound or '(unnamed)'} is given twice")
            given.arrays[bound] = array
            given.sources[bound] = InputSource(bound, "file", path, key or None)
    return given


def parse_shape(text: str, what: str = "--input-shape") -> tuple[int, ...]:
    """A static shape written `1,3,32,32` or `[1,3,32,32]` (spaces allowed)."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    try:
        dims = tuple(int(v) for v in body.split(",")) if body.strip() else ()
    except ValueError:
        raise UsageError(
            f"{what} {text!r}: expected integers separated by commas, such as 1,3,32,32"
        ) from None
    if any(d < 0 for d in dims):
        raise UsageError(f"{what} {text!r}: expected dims >= 0")
    return dims


def parse_shapes(specs: Sequence[str] | None, what: str = "--input-shape") -> dict[str, Any]:
    """`[NAME=]SHAPE` texts as {NAME: shape} ('' for a shape without NAME)."""
    out: dict[str, tuple[int, ...]] = {}
    for spec in specs or []:
        name, _, text = spec.rpartition("=")
        if name in out:
            raise UsageError(f"{what}: the shape of {name or 'the input'} is given twice")
        out[name] = parse_shape(text, what)
    return out


def parameter_names(layer: Layer) -> list[str]:
    from .run import parameter_names as names

    return names(layer)


def resolve(graph: Graph, shapes: Mapping[str, Sequence[int]]) -> dict[int, tuple[int, ...]]:
    """Shapes by model input (Parameter layer index); a shape without a name is the only
    input's; a name that is no model input is refused, naming the inputs."""
    from .run import parameters

    params = parameters(graph)
    out: dict[int, tuple[int, ...]] = {}
    for name, shape in shapes.items():
        if name == "":
            if len(params) != 1:
                raise UsageError(
                    f"the model has {len(params)} inputs ({', '.join(p.label for p in params)}); "
                    "name the one each shape is for, as NAME=SHAPE",
                    Where(file=graph.path),
                )
            layer = params[0]
        else:
            found = [p for p in params if name in parameter_names(p)]
            if not found:
                raise UsageError(
                    f"no model input {name!r} to give a shape to; model inputs: "
                    f"{', '.join(p.label for p in params) or 'none'}",
                    Where(file=graph.path),
                )
            layer = found[0]
        if layer.index in out:
            raise UsageError(f"the shape of input {layer.label!r} is given twice")
        out[layer.index] = tuple(int(d) for d in shape)
    return out


def reshaped(graph: Graph, shapes: Mapping[str, Sequence[int]]) -> Graph:
    """The graph with the shapes of its inputs replaced, as openvino's Model.reshape replaces a
    Parameter's shape (any static shape; what the layers after it make of it is theirs)."""
    if not shapes:
        return graph
    by_index = resolve(graph, shapes)
    layers = []
    for layer in graph.layers:
        shape = by_index.get(layer.index)
        if shape is not None:
            data = dict(layer.data)
            data["shape"] = ",".join(map(str, shape))
            outputs = tuple(replace(p, dims=shape) for p in layer.outputs)
            layer = replace(layer, data=data, outputs=outputs)
        layers.append(layer)
    return replace(graph, layers=tuple(layers), _by_id={})


def draw(
    graph: Graph,
    given: Given | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    cast: bool = False,
    limit: int | None = None,
) -> tuple[dict[str, Array], list[InputSource]]:
    """An array for every model input, by the Parameter's name: the given ones checked against
    the input (element type, shape: run.check_input; every input must then be given), or all
    drawn at random, which needs static shapes (the declared ones, or those given)."""
    from .arrays import check_elements
    from .model import numpy_dtype
    from .run import _element_type, _uniform, bind_inputs, parameters
    from .shapes import parameter_shape

    params = parameters(graph)
    arrays = dict(given.arrays) if given else {}
    sources = dict(given.sources) if given else {}
    out: dict[str, Array] = {}
    records: list[InputSource] = []
    if arrays:
        # given arrays: one for every model input (a missing or unknown one is refused)
        files = {k: s.label() for k, s in sources.items()}
        bound = bind_inputs(graph, arrays, cast, files)
        for p in params:
            name = p.name or p.label
            key = next((n for n in parameter_names(p) if n in arrays), "")
            out[name] = bound[p.index]
            records.append(replace(sources[key], name=name))
        return out, records
    rng = np.random.default_rng(seed)
    for p in params:
        name = p.name or p.label
        if name in out:
            continue
        shape = parameter_shape(p)
        if shape is None or not all(d.is_static for d in shape):
            hint = f"{p.label}=1,3,32,32" if shape is None else _example(p.label, shape)
            raise UsageError(
                f'model input "{p.label}" has the dynamic shape {format_shape(shape)}; give its '
                f"shape ({option('input_shape')} {hint}) or an array ({option('input')})",
                p.where(),
            )
        dims = tuple(d.lo for d in shape)
        check_elements(dims, f'input "{p.label}"', limit, p.where())
        dtype = numpy_dtype(_element_type(p), p.where())
        out[name] = _uniform(rng, low, high, dims, dtype)
        records.append(InputSource(name, "random", seed=seed, low=low, high=high))
    return out, records


def _example(label: str, shape: Shape) -> str:
    """A --input-shape example for a dynamic shape: its static dims kept, 1 for a dynamic batch
    and 32 for the other dynamic dims (or the dim's lower bound when it is larger)."""
    dims = []
    for axis, d in enumerate(shape):
        if d.is_static:
            dims.append(d.lo)
        else:
            guess = 1 if axis == 0 else 32
            if d.hi is not None:
                guess = min(max(guess, d.lo), d.hi)
            dims.append(max(guess, d.lo))
    return f"{label}={','.join(map(str, dims))}"


# -- the shapes inside the model -----------------------------------------------------------------


def _dims_of(bounds: Sequence[tuple[int, int | None]]) -> Shape:
    return tuple(Dim(lo, hi) for lo, hi in bounds)


def pooling_inputs(graph: Graph) -> dict[int, Shape]:
    """The input shape of every pooling layer as the model's runtime infers it for the graph's
    input shapes (openvino for an IR, onnx's shape inference for ONNX): exact where irpool's
    own propagation takes the layers of other types as declared.  Empty when the runtime is
    not installed or cannot say (the caller then has irpool's own shapes)."""
    if graph.fragment:
        return {}
    from .ops import REGISTRY
    from .run import parameters
    from .shapes import parameter_shape

    pooling = [la for la in graph.layers if REGISTRY.is_pooling(la)]
    shapes = {}
    for p in parameters(graph):
        shape = parameter_shape(p)
        if shape is not None and all(d.is_static for d in shape):
            shapes[p.name or p.label] = [d.lo for d in shape]
    try:
        if graph.format == "onnx":
            from .frontends.onnx_model import read_model
            from .oracles.onnx_shapes import model_shapes

            inferred = model_shapes(read_model(graph.path), shapes)
            out = {}
            for la in pooling:
                name = la.inputs[0].names[0] if la.inputs and la.inputs[0].names else ""
                if name in inferred:
                    out[la.index] = tuple(
                        Dim.dynamic() if d < 0 else Dim.of(d) for d in inferred[name]
                    )
            return out
        from .oracles import openvino_rt

        found = openvino_rt.pooling_input_shapes(graph.path, shapes)
    except IrpoolError:
        return {}
    return {la.index: _dims_of(found[la.name]) for la in pooling if la.name in found}


def layer_input_shape(graph: Graph, layer: Layer) -> tuple[int, ...]:
    """The static input shape of one pooling layer for the graph's input shapes: irpool's own
    propagation, else the model's runtime's (pooling_inputs); a usage error saying how to give
    it when neither is static."""
    from .shapes import infer

    if graph.fragment:
        dims = layer.inputs[0].dims if layer.inputs else None
        if dims is None or any(d < 0 for d in dims):
            raise UsageError(
                "the layer has no static input dims; give its input shape or an input array",
                layer.where(),
            )
        return tuple(dims)
    shape = _pooling_shape(infer(graph), layer)
    if shape is None or not all(d.is_static for d in shape):
        shape = pooling_inputs(graph).get(layer.index, shape)
    if shape is None or not all(d.is_static for d in shape):
        from .run import parameters
        from .shapes import parameter_shape

        hints = []
        for p in parameters(graph):
            declared = parameter_shape(p)
            hints.append(_example(p.label, declared) if declared else f"{p.label}=SHAPE")
        raise UsageError(
            f"the layer's input {format_shape(shape)} is not static for the model's input "
            f"shapes; give them ({option('input_shape')} {' '.join(hints) or 'NAME=SHAPE'}) "
            f"or the model's input arrays ({option('input')})",
            layer.where(),
        )
    return tuple(d.lo for d in shape)


def _pooling_shape(inference: Any, layer: Layer) -> Shape | None:
    for pl in inference.pooling:
        if pl.layer.index == layer.index:
            shape: Shape | None = pl.input_shape
            return shape
    raise InputError("the layer is not a pooling layer", layer.where())


def runtime_layer_input(graph: Graph, layer: Layer, inputs: Mapping[str, Array]) -> Array:
    """The input a pooling layer gets inside the whole model on the model's `inputs`, as the
    model's runtime computes it (openvino for an IR, onnxruntime for ONNX): the real input of
    a layer behind layers of any type."""
    if graph.format == "onnx":
        from .frontends.onnx_model import read_model
        from .oracles import onnxruntime_rt, refusals

        name = layer.inputs[0].names[0] if layer.inputs and layer.inputs[0].names else ""
        if name in graph.initializers:
            return np.asarray(graph.initializers[name])
        with refusals("onnxruntime", graph.path):
            return onnxruntime_rt.probe_tensors(read_model(graph.path), [name], inputs)[name]
    from .oracles import openvino_rt, refusals

    with refusals("openvino", graph.path):
        found, missing = openvino_rt.probe_layers(
            graph.path, [layer.name or layer.label], inputs, openvino_rt.INPUTS_AS_TYPED
        )
    if missing:
        raise UsageError(
            "openvino's graph of the model has no such layer (openvino drops layers that reach "
            "no Result); give the layer's input array instead",
            layer.where(),
        )
    return next(iter(found.values()))[0][0]
