"""The Python API: the same operations as the command line, returning objects."""

from __future__ import annotations

import inspect
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack, overload

import numpy as np
import numpy.typing as npt

from .check import CheckReport, check_file, check_graph
from .compare import CompareOptions, CompareReport, compare_model
from .convert_report import ConvertReport
from .errors import UsageError
from .explain import FamilyReport, LayerReport, explain_graph
from .fixtures import Report as FixturesReport
from .frontends.ir_xml import load as load_ir
from .geometry import PoolParams, plan
from .inputs import Given, InputSource, draw, load_given, reshaped
from .kernel import pool as _pool
from .kernel import thread_count
from .kernel.prepared import PreparedPool
from .model import Graph
from .run_report import RunReport, execute

Array = npt.NDArray[Any]


def load(path: str) -> Graph:
    """Read an OpenVINO IR (`model.xml`, IR v10/v11), a file of `<layer>` fragments, or an
    ONNX model (by its `.onnx` suffix; needs the `onnx` extra)."""
    from .frontends import onnx_model

    return onnx_model.load(path) if onnx_model.is_onnx_path(path) else load_ir(path)


Model = Any
"""What the functions take as a model: a path (str or os.PathLike) of an IR (.xml), a file of
<layer> fragments or an ONNX model (.onnx); a `Graph` from `load`; an `onnx.ModelProto`; or
an `openvino.Model` (in-memory models are written to a temporary folder for the runtimes)."""
Inputs = Any
"""Input arrays: None (random ones from `seed` in [low, high)), one array (the model's only
input), a mapping {input name: array}, or the path of a file as `-i` takes it (.npy, .npz,
.pb, a test_data_set_N folder)."""


@contextmanager
def _graph_of(model: Model) -> Iterator[Graph]:
    """The Graph of any model the API takes (see Model); in-memory models are saved to a
    temporary folder that lives as long as the block."""
    if isinstance(model, Graph):
        yield model
        return
    if isinstance(model, (str, os.PathLike)):
        yield load(os.fspath(model))
        return
    kind = type(model).__module__.split(".")[0]
    with tempfile.TemporaryDirectory(prefix="irpool-model-") as folder:
        if kind == "onnx":
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as handle:
                handle.write(model.SerializeToString())
        elif kind == "openvino":
            from .oracles import openvino_rt

            path = os.path.join(folder, "model.xml")
            openvino_rt.load().save_model(model, path, compress_to_fp16=False)
        else:
            raise UsageError(
                f"model: expected a path, an irpool Graph, an onnx.ModelProto or an "
                f"openvino.Model, not {type(model).__name__}"
            )
        yield load(path)


@dataclass(frozen=True)
class _Draw:
    """How compare and the ONNX convert report find a full model's inputs: the model reshaped
    to `input_shapes` (a bare shape: the only input's), and the inputs not given drawn
    uniformly from `seed` in [low, high) (`cast`: as the command line's --cast)."""

    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None
    seed: int = 0
    low: float = -1.0
    high: float = 1.0
    cast: bool = False


class ConvertOptions(TypedDict, total=False):
    """convert_report's keywords beyond layers and tolerances: `input_shapes`, `seed`, `low`,
    `high` and `cast` (as compare's) for an ONNX model; `route` ('trace' or 'export') for a
    live PyTorch module (see irpool.audit_ir.convert_report)."""

    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None
    seed: int
    low: float
    high: float
    cast: bool
    route: str


@contextmanager
def _full_model(
    model: Model, inputs: Inputs, how: _Draw, command: str
) -> Iterator[tuple[Graph, dict[str, Any]]]:
    """The Graph of a full model (`command` refuses a file of layer fragments), reshaped, and
    its inputs: the given ones, or drawn (see _Draw)."""
    with _graph_of(model) as graph:
        if graph.fragment:
            raise UsageError(f"model: a file of layer fragments; {command}")
        graph = reshaped(graph, _shapes(how.input_shapes))
        arrays, _ = draw(graph, _given(inputs), how.seed, how.low, how.high, how.cast)
        yield graph, arrays


def _given(inputs: Inputs, limit: int | None = None) -> Given | None:
    """The arrays of `inputs` (see Inputs) as the command line's -i gives them."""
    if inputs is None:
        return None
    if isinstance(inputs, (str, os.PathLike)):
        return load_given([os.fspath(inputs)], limit)
    if isinstance(inputs, np.ndarray):
        inputs = {"": inputs}
    if not isinstance(inputs, Mapping):
        raise UsageError(
            f"inputs: expected an array, a mapping of input names to arrays, or a file path, "
            f"not {type(inputs).__name__}"
        )
    given = Given()
    for name, array in inputs.items():
        given.arrays[str(name)] = np.asarray(array)
        given.sources[str(name)] = InputSource(str(name), "array")
    return given


def _shapes(input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None) -> dict[str, Any]:
    """{name: shape}; a bare shape is the only input's."""
    if input_shapes is None:
        return {}
    if isinstance(input_shapes, Mapping):
        return {str(k): tuple(int(d) for d in v) for k, v in input_shapes.items()}
    return {"": tuple(int(d) for d in input_shapes)}


def check(model: Model, openvino: bool = False) -> CheckReport:
    """Infer every pooling layer's output shape and compare each declared `<dim>` with it
    (with `openvino`, also every layer's shapes as openvino infers them).

    `report.ok` is True when everything agrees; `report.findings` lists the disagreements;
    `report.to_json()` is the file's entry of `irpool check --json`."""
    if isinstance(model, (str, os.PathLike)):
        report = check_file(os.fspath(model))
    else:
        with _graph_of(model) as graph:
            report = check_graph(graph)
    if openvino:
        from .check import add_openvino_findings

        add_openvino_findings(report)
    return report


def run(
    model: Model,
    inputs: Inputs = None,
    convention: str | None = None,
    layer: str | None = None,
    cast: bool = False,
    *,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    max_elements: int | None = None,
) -> RunReport:
    """Execute a pooling net, or with `layer` one pooling layer of any model (by name, id,
    output tensor name or a unique part of its name; `inputs` is then the layer's input).

    Returns a RunReport: `.outputs` by Result name (with `layer`: 'output0', and 'output1' for
    the indices; the report is also a mapping of its outputs), `.tensors` (every intermediate
    as 'layer:port'), `.plans`, `.inputs`, and `.to_json()` (schema irpool.run/1)."""
    with _graph_of(model) as graph:
        return execute(
            graph,
            _given(inputs, max_elements),
            _shapes(input_shapes),
            layer,
            convention,
            cast,
            seed,
            low,
            high,
            max_elements,
        )


@dataclass
class ExplainReport(Sequence[LayerReport | FamilyReport]):
    """The explained layers (also this object's items); `to_json()` is `irpool explain
    --json` (schema irpool.explain/1)."""

    layers: list[LayerReport | FamilyReport] = field(default_factory=list)

    @overload
    def __getitem__(self, index: int) -> LayerReport | FamilyReport: ...
    @overload
    def __getitem__(self, index: slice) -> list[LayerReport | FamilyReport]: ...
    def __getitem__(
        self, index: int | slice
    ) -> LayerReport | FamilyReport | list[LayerReport | FamilyReport]:
        return self.layers[index]

    def __len__(self) -> int:
        return len(self.layers)

    def to_json(self) -> dict[str, Any]:
        from . import __version__
        from .explain import SCHEMA, to_json

        return {"schema": SCHEMA, "irpool": __version__, "layers": [to_json(r) for r in self]}


def explain(
    model: Model,
    layer: str | None = None,
    convention: str | None = None,
    *,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None,
    max_elements: int | None = None,
) -> ExplainReport:
    """Per-axis pads, formulas, border windows and divisors of the pooling layers (or of one:
    `layer`).  `input_shapes` gives the model's inputs their shapes (a bare shape: the only
    input's; for a file of fragments, the layer's input shape)."""
    shapes = _shapes(input_shapes)
    with _graph_of(model) as graph:
        shape = None
        if graph.fragment:
            if set(shapes) - {""}:
                raise UsageError("input_shapes: a file of layer fragments has no model inputs")
            shape = shapes.get("")
        else:
            graph = reshaped(graph, shapes)
        return ExplainReport(explain_graph(graph, layer, convention, shape, max_elements))


def compare(
    model: Model,
    inputs: Inputs = None,
    *,
    layers: Sequence[str] | None = None,
    convention: str | None = None,
    atol: float = 0.0,
    rtol: float = 0.0,
    precision: str | None = None,
    exact: bool = False,
    fail_fast: bool = False,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    cast: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> CompareReport:
    """Run the whole model in openvino (an ONNX model in onnxruntime) and compare each pooling
    layer (or each of `layers`) with irpool on the input the runtime gave it.

    Returns a CompareReport: `.passed`, `.layers` (per layer its outputs' metrics and the
    diagnosis), `.to_json()` (schema irpool.compare/1)."""
    _tolerances(atol, rtol)
    how = _Draw(input_shapes, seed, low, high, cast)
    with _full_model(model, inputs, how, "compare needs a full net") as full:
        graph, arrays = full
        options = CompareOptions(convention, atol, rtol, precision, exact, fail_fast)
        return compare_model(graph, arrays, list(layers) if layers else None, options, progress)


def _tolerances(atol: float, rtol: float) -> None:
    for name, value in (("atol", atol), ("rtol", rtol)):
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"{name}={value!r}: expected a finite number >= 0")


def _onnx_report(
    model: Model,
    inputs: Inputs,
    layers: Sequence[str] | None,
    tolerances: tuple[float, float],
    exact: bool,
    how: _Draw,
) -> ConvertReport:
    from .convert_report import convert_report as onnx_report

    atol, rtol = tolerances
    _tolerances(atol, rtol)
    with _full_model(model, inputs, how, "the ONNX report needs a full net") as (graph, arrays):
        return onnx_report(graph, arrays, atol, rtol, list(layers) if layers else None, exact)


def _is_onnx(model: Model) -> bool:
    if isinstance(model, Graph):
        return model.format == "onnx"
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model).lower().endswith(".onnx")
    return type(model).__module__.split(".")[0] == "onnx"


def convert_report(
    model: Model,
    inputs: Inputs = None,
    *,
    layers: Sequence[str] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    exact: bool = False,
    **options: Unpack[ConvertOptions],
) -> Any:
    """What openvino's conversion made of each pooling op of `model`.

    An ONNX model (a .onnx path, an onnx.ModelProto, or a Graph of one) gets the ONNX report
    (`ConvertReport`: `.same`, `.nodes`, `.to_json()`, schema irpool.convert-report/2); any
    other model (PyTorch, TensorFlow, an IR) goes to irpool's audit of source models when this
    irpool has it (`irpool.audit_ir.convert_report`, with `route` its own option); see
    ConvertOptions for the other keywords.

    Tolerances: 0 for ONNX by default (float means get their summation-order allowance unless
    `exact`); 1e-6 and 1e-5 for the other models (`irpool.audit.AUDIT_TOLERANCE`), whose
    frameworks may sum float means in another order; `exact` makes both 0."""
    given: dict[str, Any] = dict(options)
    how = _Draw(**{k: given.pop(k) for k in _DRAW_KEYWORDS if k in given})
    if _is_onnx(model):
        if given:
            raise UsageError(f"{', '.join(sorted(given))}: not options of the ONNX report")
        tolerances = (0.0 if atol is None else atol, 0.0 if rtol is None else rtol)
        return _onnx_report(model, inputs, layers, tolerances, exact, how)
    from .audit import AUDIT_TOLERANCE
    from .audit_ir import convert_report as audit

    if layers is not None:
        raise UsageError("layers: the audit of a PyTorch, TensorFlow or IR model reports every op")
    a = AUDIT_TOLERANCE[0] if atol is None else atol
    r = AUDIT_TOLERANCE[1] if rtol is None else rtol
    result: Any = audit(model, inputs, atol=0.0 if exact else a, rtol=0.0 if exact else r, **given)
    return result


_DRAW_KEYWORDS = ("input_shapes", "seed", "low", "high", "cast")
"""ConvertOptions' keywords that are _Draw's fields (the audit of other models has its own)."""


def fixtures(
    outdir: str | os.PathLike[str],
    *,
    preset: str | None = None,
    grid: str | None = None,
    model: str | None = None,
    layers: Sequence[str] | None = None,
    seed: int = 0,
    inputs: Sequence[str] | None = None,
    input_shapes: Sequence[str] | None = None,
    force: bool = False,
    resume: bool = False,
    verify: bool = False,
    data_set: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> FixturesReport:
    """Write golden test cases into `outdir` (docs/fixtures.md): a `preset` (smoke, corners,
    full), a `grid` TOML file, or the pooling layers of a `model` (an IR path; `layers`,
    `inputs` and `input_shapes` as the command line's --layer, -i and --input-shape).

    Returns the fixtures Report: `.written`, `.statuses` (with `verify`), `.index` (the
    manifest as written), `.to_json()` (schema irpool.fixtures-summary/1)."""
    from .conventions import target
    from .fixtures import generate, plan_cases

    if verify:
        from .oracles import openvino_rt

        openvino_rt.load()
    cases, skipped, settings = plan_cases(
        preset,
        grid,
        os.fspath(model) if model is not None else None,
        layers,
        seed,
        inputs=inputs,
        input_shapes=input_shapes,
        data_set=data_set,
    )
    folder = os.fspath(outdir)
    machine = target()  # the one modelled here (conventions.use_target, IRPOOL_OV_ISA, the CPU)
    return generate(folder, cases, settings, skipped, force, resume, verify, progress, machine)


def pool(
    x: Array,
    kernel: int | Sequence[int],
    strides: int | Sequence[int] | None = None,
    pads: int | Sequence[int] | Sequence[tuple[int, int]] = 0,
    dilations: int | Sequence[int] = 1,
    reduce: Literal["max", "mean"] = "max",
    rounding: Literal["floor", "ceil", "ceil_torch"] = "floor",
    auto_pad: Literal["explicit", "same_upper", "same_lower", "valid"] = "explicit",
    count_pad: bool = False,
    indices: bool = False,
    index_axis: int = 0,
    convention: str = "openvino",
) -> Array | tuple[Array, Array]:
    """Pool x (N, C, *spatial) directly.

    Sizes are one int for every axis or one per spatial axis; `pads` may also be (before,
    after) pairs.  `strides` default to 1.  Returns the values, or (values, indices) when
    `indices` is set for max pooling.

    >>> import numpy as np, irpool
    >>> x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    >>> irpool.pool(x, 3, 2, 1, reduce="mean", rounding="ceil", count_pad=True).ravel()
    array([1., 3., 5., 2.], dtype=float32)
    >>> irpool.pool(x, 3, 2, 1, reduce="mean", rounding="ceil", count_pad=True,
    ...             convention="torch").ravel()
    array([1., 3., 5., 3.], dtype=float32)
    """
    params = _params(x.ndim - 2, locals(), "irpool.pool")
    values, idx = _pool(x, plan(params, tuple(x.shape), convention, dtype=x.dtype))
    if indices and idx is not None:
        return values, idx
    return values


def _params(n: int, arguments: Mapping[str, Any], op: str) -> PoolParams:
    """The PoolParams of pool()'s arguments (by name) for n spatial axes."""

    def each(value: int | Sequence[int]) -> tuple[int, ...]:
        if isinstance(value, int):
            return (value,) * n
        return tuple(int(v) for v in value)

    pads = arguments["pads"]
    pairs: tuple[tuple[int, int], ...]
    if isinstance(pads, int):
        pairs = ((pads, pads),) * n
    else:
        items: list[Any] = list(pads)
        pairs = tuple(
            (int(p), int(p)) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in items
        )
    strides = arguments["strides"]
    return PoolParams(
        **{name: arguments[name] for name in _AS_GIVEN},
        op=op,
        window=each(arguments["kernel"]),
        strides=each(strides if strides is not None else 1),
        dilations=each(arguments["dilations"]),
        pads=pairs,
    )


_AS_GIVEN = ("reduce", "rounding", "auto_pad", "count_pad", "indices", "index_axis")
"""pool()'s arguments that are PoolParams fields as they are."""
_POOL_SIGNATURE = inspect.signature(pool)


def compile_pool(
    input_shape: Sequence[int],
    dtype: Any,
    *args: Any,
    threads: int | None = None,
    path: str | None = None,
    **keywords: Any,
) -> PreparedPool:
    """pool() prepared once for inputs of one shape and dtype: after `input_shape` and `dtype`
    it takes pool()'s arguments after x (kernel, strides, pads, ..., convention: the same
    names, order and defaults) and returns a callable `f(x)` giving what `pool(x, ...)` gives
    with them (values, or (values, indices)), with the plan, the kernel path and its buffers
    built before the first call.

    `threads`: threads per call (default IRPOOL_THREADS, else the CPU count, at most 8).
    `path`: "auto" (the compiled path where numba is installed and it serves the plan),
    "numpy" or "compiled" (default: IRPOOL_KERNEL, else auto); the bits are the same.
    `f.path` is "compiled" or "numpy", `f.why` says why, `f.plan` is the plan.

    >>> import numpy as np, irpool
    >>> f = irpool.compile_pool((1, 1, 6), np.float32, 3, 2, 1, reduce="mean", rounding="ceil",
    ...                         count_pad=True)
    >>> f(np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)).ravel()
    array([1., 3., 5., 2.], dtype=float32)
    """
    shape = tuple(int(v) for v in input_shape)
    try:
        bound = _POOL_SIGNATURE.bind(None, *args, **keywords)
    except TypeError as e:
        raise TypeError(f"compile_pool() takes pool()'s arguments after x: {e}") from None
    bound.apply_defaults()
    given = bound.arguments
    params = _params(len(shape) - 2, given, "irpool.compile_pool")
    name = str(np.dtype(dtype).name)
    prepared = plan(params, shape, given["convention"], dtype=name)
    return PreparedPool(prepared, thread_count(threads), path)


def compile_model(
    model: Model,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None,
    convention: str | None = None,
    threads: int | None = None,
    path: str | None = None,
) -> Any:
    """A model prepared once, as openvino's compile_model prepares one: the graph read, its
    inputs given `input_shapes` (a bare shape: the only input's), every layer bound, its plan
    made, its kernel loaded (numba's, compiled or read from its disk cache) and its buffers
    allocated, constants computed; returns a `CompiledModel`.

    `f(inputs)` takes one array (a one-input model) or a mapping {input name: array} and
    returns the outputs by Result name, bit for bit what `irpool.run(model, inputs,
    convention).outputs` gives.  A model whose inputs have dynamic shapes is prepared for each
    new shape on its first call.  `threads` and `path` as compile_pool's; without numba every
    layer runs on the numpy core (`f.path`, `f.why`, and per pooling layer `f.layers`, say so).

    >>> import numpy as np, irpool
    >>> f = irpool.compile_model("tests/data/reduce_mean.xml")         # doctest: +SKIP
    >>> f(np.ones((1, 8, 7, 7), np.float32))["out"].shape              # doctest: +SKIP
    (1, 8, 1, 1)
    """
    from .compiled_model import compile_model as _compile_model

    with _graph_of(model) as graph:
        if not isinstance(model, (str, os.PathLike, Graph)) and graph.weights_path:
            # an in-memory model lives in a temporary folder: keep its weights
            from dataclasses import replace

            with open(graph.weights_path, "rb") as handle:
                graph = replace(graph, weights=handle.read(), _by_id={})
        return _compile_model(graph, _shapes(input_shapes), convention, threads, path)


def _compile_pool_signature() -> inspect.Signature:
    """compile_pool's signature as help() and editors show it: pool()'s parameters after x."""
    own = inspect.signature(compile_pool).parameters
    head = [own["input_shape"], own["dtype"]]
    tail = [own["threads"].replace(kind=inspect.Parameter.KEYWORD_ONLY), own["path"]]
    middle = list(_POOL_SIGNATURE.parameters.values())[1:]
    return inspect.signature(compile_pool).replace(parameters=[*head, *middle, *tail])


compile_pool.__signature__ = _compile_pool_signature()  # type: ignore[attr-defined]
