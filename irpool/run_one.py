"""One pooling layer of any model run on its own (`run --layer`): the layer found by name, its
input and constant inputs bound, run under a convention."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import (
    InputError,
    ShapeError,
    UsageError,
    option,
)
from .families import FamilyPlan
from .frontends.ir_xml import read_const as read_const
from .geometry import PoolPlan
from .model import Graph, Layer, format_shape, numpy_dtype
from .ops import REGISTRY, Bound, bind
from .ops.binding import constant_input
from .run import run_layer as run_bound
from .run import run_pooling, run_qlinear
from .run_inputs import (
    numeric_dtype,
)

Array = npt.NDArray[Any]


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
                numeric_dtype(x, None)
                with np.errstate(all="ignore"):
                    x = np.asarray(x.astype(want))
            else:
                raise InputError(
                    f"input has dtype {x.dtype}; the layer's input port is "
                    f"{layer.inputs[0].element_type} ({want.name}); pass {option('cast')} to "
                    "convert it",
                    layer.where(),
                )
    bound = bind(graph, layer, convention)
    if not bound.family.windows:
        ins = layer_inputs(bound, x, extra or {})
        fp, outs = run_bound(bound, ins, limit, convention)
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
