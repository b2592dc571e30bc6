"""`irpool run` as one call: the inputs chosen (files, shapes, random draws), the run (a whole
pooling net, or one layer), and the report the command prints (text, or JSON of schema
irpool.run/1) and the Python API returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, UsageError, option
from .geometry import PoolPlan
from .inputs import (
    Given,
    InputSource,
    draw,
    layer_input_shape,
    reshaped,
    runtime_layer_input,
)
from .model import Graph, Layer, dims_text, format_shape
from .run import RunResult, random_array, run_graph
from .run_one import find_layer, run_layer

Array = npt.NDArray[Any]
SCHEMA = "irpool.run/1"


@dataclass
class RunReport(RunResult, Mapping[str, Array]):
    """What a run did: its outputs (`outputs`, also this object's items: `report["output0"]`),
    every intermediate tensor (`tensors`), the plan of each pooling layer (`plans`), the inputs
    used and where each came from (`inputs`, `sources`)."""

    model: str = ""
    format: str = "ir"
    layer: str | None = None
    convention: str | None = None
    sources: list[InputSource] = field(default_factory=list)
    layers: dict[str, Layer] = field(default_factory=dict, repr=False)
    output_file: str | None = None
    random_inputs_file: str | None = None
    saved_tensors: bool = False

    def __getitem__(self, key: str) -> Array:
        return self.outputs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.outputs)

    def __len__(self) -> int:
        return len(self.outputs)

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        by_name = {s.name: s for s in self.sources}
        inputs = []
        for name, array in self.inputs.items():
            s = by_name.get(name, InputSource(name, "random"))
            inputs.append(
                {
                    **_array_json(name, array),
                    "source": s.source,
                    "file": s.file,
                    "key": s.key,
                    "seed": s.seed,
                    "range": None if s.low is None or s.high is None else [s.low, s.high],
                }
            )
        saved = [{**_array_json(n, a), "intermediate": False} for n, a in self.outputs.items()]
        if self.saved_tensors:
            saved += [{**_array_json(n, a), "intermediate": True} for n, a in self.tensors.items()]
        layers = []
        for label, plan in self.all_plans().items():
            la = self.layers.get(label)
            layers.append(
                {
                    "layer": label,
                    "layer_id": None if la is None else la.id,
                    "line": None if la is None else la.line,
                    "op": plan.op,
                    "convention": plan.convention,
                    "input_shape": list(plan.input_shape),
                    "output_shape": list(plan.output_shape),
                    "plan": plan_to_json(plan) if isinstance(plan, PoolPlan) else _family(plan),
                }
            )
        return {
            "schema": SCHEMA,
            "irpool": __version__,
            "model": self.model,
            "format": self.format,
            "layer": self.layer,
            "convention": self.convention,
            "inputs": inputs,
            "random_inputs_file": self.random_inputs_file,
            "output_file": self.output_file,
            "outputs": saved,
            "layers": layers,
            "notes": list(self.notes),
        }


def _array_json(name: str, array: Array) -> dict[str, Any]:
    return {"name": name, "dtype": array.dtype.name, "shape": [int(d) for d in array.shape]}


def _family(plan: Any) -> dict[str, Any]:
    """A plan of another family than windowed pooling (irpool.families): its family, and its
    fields that JSON can hold."""
    import dataclasses

    out: dict[str, Any] = {"family": plan.family}
    for f in dataclasses.fields(plan):
        value = getattr(plan, f.name)
        if isinstance(value, tuple):
            value = list(value)
        if (
            value is None
            or isinstance(value, (bool, int, float, str))
            or (
                isinstance(value, list)
                and all(isinstance(v, (bool, int, float, str)) for v in value)
            )
        ):
            out[f.name] = value
    return out


def plan_to_json(plan: PoolPlan) -> dict[str, Any]:
    """The switches and geometry of a plan that decide a layer's numbers: per spatial axis
    kernel, strides, dilations, and pads after auto_pad; what an empty window gives and how
    many there are; the NaN rule of a max, the integer rounding of a mean, the indices."""
    from .kernel import empty_windows

    empty = empty_windows(plan)
    return {
        "reduce": plan.reduce,
        "shape_rule": plan.shape_rule,
        "divisor": plan.divisor,
        "divisor_reason": plan.divisor_reason,
        "kernel": [a.window for a in plan.axes],
        "strides": [a.stride for a in plan.axes],
        "dilations": [a.dilation for a in plan.axes],
        "pads": [[a.pad_begin, a.pad_end] for a in plan.axes],
        "empty": plan.empty,
        "empty_windows": 0 if empty is None else int(np.count_nonzero(empty)),
        "nan_max": plan.nan_max if plan.reduce == "max" else None,
        "indices": plan.indices,
        "index_axis": plan.index_axis if plan.indices else None,
        "index_dtype": plan.index_dtype if plan.indices else None,
        "int_mean": plan.int_mean if plan.reduce == "mean" else None,
        "narrow_64bit": plan.narrow_64bit,
        "column_major": plan.column_major if plan.indices else None,
        "integers_in_float32": plan.integers_in_float32,
    }


def check_layer_input(graph: Graph, layer: Layer, x: Array, source: str | None = None) -> None:
    """Refuse an input array whose shape cannot be the layer's input: another rank, or a dim
    outside what the model says of it (both shapes named, and the file)."""
    from .shapes import infer

    if graph.fragment:
        dims = layer.inputs[0].dims if layer.inputs else None
        if dims is None:
            return
        expected = tuple(None if d < 0 else d for d in dims)
        text = "[" + ",".join("?" if d is None else str(d) for d in expected) + "]"
        fits = len(expected) == x.ndim and all(
            d is None or d == n for d, n in zip(expected, x.shape, strict=True)
        )
    else:
        pl = next((p for p in infer(graph).pooling if p.layer.index == layer.index), None)
        shape = None if pl is None else pl.input_shape
        if shape is None:
            return
        text = format_shape(shape)
        fits = len(shape) == x.ndim and all(
            d.contains(n) for d, n in zip(shape, x.shape, strict=True)
        )
    if not fits:
        named = f"{source}: " if source else ""
        got = dims_text(x.shape)
        raise InputError(
            f"{named}the input array has shape {got}; the layer's input is {text} (give the "
            f"layer's input, or the model's input shape with {option('input_shape')})",
            layer.where(),
        )


def _model_inputs_given(graph: Graph, layer: Layer, arrays: Mapping[str, Array]) -> bool:
    """Whether the arrays given with one layer to run are the model's inputs rather than the
    layer's: named after model inputs, or of a shape the layer's input cannot have but a model
    input can (never for a layer fed by a model input directly, or a file of fragments)."""
    from .run import parameter_names, parameters
    from .shapes import parameter_shape

    if graph.fragment:
        return False
    params = parameters(graph)
    names = {n for p in params for n in parameter_names(p)}
    if "" not in arrays and set(arrays) <= names:
        return not _fed_by_parameter(graph, layer)
    if set(arrays) != {""} or len(params) != 1:
        return False
    x = arrays[""]
    try:
        check_layer_input(graph, layer, x)
        return False
    except InputError:
        shape = parameter_shape(params[0])
        return shape is not None and len(shape) == x.ndim


def _fed_by_parameter(graph: Graph, layer: Layer) -> bool:
    from .ops import REGISTRY

    if layer.id is None or not layer.inputs:
        return False
    edge = graph.producer(layer.id, layer.inputs[0].id)
    return edge is not None and REGISTRY.role(graph.layer(edge.from_layer)) == "parameter"


def execute(
    graph: Graph,
    given: Given | None = None,
    shapes: Mapping[str, Any] | None = None,
    layer: str | None = None,
    convention: str | None = None,
    cast: bool = False,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    limit: int | None = None,
) -> RunReport:
    """Run a pooling net, or the pooling layer `layer` of any model, on the given arrays and
    random ones for the rest (see irpool.inputs)."""
    shapes = dict(shapes or {})
    report = RunReport(
        model=graph.path,
        format="onnx" if graph.format == "onnx" else "fragments" if graph.fragment else "ir",
        layer=layer,
        convention=convention,
    )
    if layer is None:
        graph = reshaped(graph, shapes)
        arrays, report.sources = draw(graph, given, seed, low, high, cast, limit)
        fusions: list[str] = []
        if convention in (None, "onnx"):
            # a QDQ model runs as onnxruntime's QDQ transformer rewrites it (irpool/qdq.py)
            from .qdq import onnxruntime_graph

            graph, fused = onnxruntime_graph(graph)
            fusions = [f.describe() for f in fused]
        result = run_graph(graph, arrays, convention, cast, limit)
        report.outputs, report.tensors = result.outputs, result.tensors
        report.plans, report.bound, report.inputs = result.plans, result.bound, dict(arrays)
        report.notes = fusions + result.notes
        report.layers = {la.label: la for la in graph.layers}
        return report
    chosen = find_layer(graph, layer)
    extra: dict[str, Array] = {}
    bare = shapes.pop("", None) if graph.fragment else None
    if shapes and graph.fragment:
        raise UsageError("a file of layer fragments has no model inputs to give shapes to")
    graph = reshaped(graph, shapes)
    arrays = dict(given.arrays) if given else {}
    if arrays and _model_inputs_given(graph, chosen, arrays):
        # arrays for the model's inputs: the layer's input is what the runtime computes
        model_arrays, report.sources = draw(graph, given, seed, low, high, cast, limit)
        x = runtime_layer_input(graph, chosen, model_arrays)
    elif arrays:
        key, x, extra = _layer_input(chosen, arrays)
        assert given is not None
        source = given.sources[key]
        check_layer_input(graph, chosen, x, source.label())
        report.sources = [InputSource("input", source.source, source.file, source.key)]
        report.sources += [
            InputSource(k, given.sources[k].source, given.sources[k].file, given.sources[k].key)
            for k in extra
        ]
    else:
        shape = bare if bare is not None else layer_input_shape(graph, chosen)
        from .arrays import check_elements

        check_elements(shape, f'input of "{chosen.label}"', limit, chosen.where())
        et = (chosen.inputs[0].element_type if chosen.inputs else None) or "f32"
        x = random_array(shape, et, seed, low, high)
        report.sources = [InputSource("input", "random", seed=seed, low=low, high=high)]
    plan, outputs = run_layer(graph, chosen.label, x, convention, cast, limit, extra)
    report.inputs = {"input": x, **extra}
    report.outputs = outputs
    report.plans = {chosen.label: plan}
    report.layers = {chosen.label: chosen}
    return report


def _layer_input(layer: Layer, arrays: Mapping[str, Array]) -> tuple[str, Array, dict[str, Array]]:
    """The data input of a layer run alone (its key and array), and the arrays given for its
    other inputs (MaxUnpool's indices) by tensor name or inputN: one array is the data input."""
    if len(arrays) == 1:
        only = next(iter(arrays))
        return only, arrays[only], {}
    first = layer.inputs[0].names if layer.inputs else ()
    key = next((k for k in arrays if k in (*first, "input0", "")), None)
    if key is None:
        names = ", ".join(p.names[0] for p in layer.inputs if p.names) or "input0, input1, ..."
        raise UsageError(
            f"one layer takes one input array, or one per input named by its tensor ({names})"
        )
    return key, arrays[key], {k: v for k, v in arrays.items() if k != key}


def format_report(report: RunReport) -> str:
    """The lines `irpool run` prints."""
    lines = []
    for label, plan in report.all_plans().items():
        lines.append(
            f"{label}: {plan.op} [{plan.convention}] {_shape(plan.input_shape)} -> "
            f"{_shape(plan.output_shape)}"
        )
        refused = getattr(plan, "refused_by", None)
        if refused:
            lines.append(f"  note: {refused}; irpool computes the layer all the same")
    saved = dict(report.outputs)
    if report.saved_tensors:
        saved.update(report.tensors)
    lines += [f"  {name}: {a.dtype.name} {_shape(a.shape)}" for name, a in saved.items()]
    lines += [f"note: {note}" for note in report.notes]
    seeds = {s.seed for s in report.sources if s.source == "random" and s.seed is not None}
    lines.append(
        f"wrote {report.output_file}"
        + (
            f" and the random inputs to {report.random_inputs_file} (seed {min(seeds)})"
            if report.random_inputs_file and seeds
            else ""
        )
    )
    return "\n".join(lines)


def _shape(shape: Any) -> str:
    return dims_text(shape)
