"""The Python API: the same operations as the command line, returning objects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .check import CheckReport, check_file, check_graph
from .explain import FamilyReport, LayerReport, explain_graph
from .frontends.ir_xml import load as load_ir
from .geometry import PoolParams, plan
from .kernel import pool as _pool
from .kernel import thread_count
from .kernel.prepared import PreparedPool
from .model import Graph
from .run import RunResult, run_graph, run_layer

Array = npt.NDArray[Any]


def load(path: str) -> Graph:
    """Read an OpenVINO IR (`model.xml`, IR v10/v11), a file of `<layer>` fragments, or an
    ONNX model (by its `.onnx` suffix; needs the `onnx` extra)."""
    from .frontends import onnx_model

    return onnx_model.load(path) if onnx_model.is_onnx_path(path) else load_ir(path)


def _graph(model: str | Graph) -> Graph:
    return model if isinstance(model, Graph) else load(model)


def check(model: str | Graph) -> CheckReport:
    """Infer every pooling layer's output shape and compare each declared `<dim>` with it.

    `report.ok` is True when everything agrees; `report.findings` lists the disagreements."""
    if isinstance(model, str):
        return check_file(model)
    return check_graph(model)


def run(
    model: str | Graph,
    inputs: Mapping[str, Array] | Array,
    convention: str | None = None,
    layer: str | None = None,
    cast: bool = False,
) -> RunResult | dict[str, Array]:
    """Execute a pooling net (outputs keyed by Result name, in `RunResult.outputs`), or with
    `layer` one pooling layer of any IR on `inputs` (a single array): {'output0', 'output1'}."""
    graph = _graph(model)
    if layer is not None:
        x = inputs if isinstance(inputs, np.ndarray) else next(iter(inputs.values()))
        _, outputs = run_layer(graph, layer, x, convention, cast)
        return outputs
    return run_graph(graph, inputs, convention, cast)


def explain(
    model: str | Graph, layer: str | None = None, convention: str | None = None
) -> list[LayerReport | FamilyReport]:
    """Per-axis pads, formulas, border windows and divisors of the pooling layers."""
    return explain_graph(_graph(model), layer, convention)


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
    params = _params(
        x.ndim - 2,
        kernel,
        strides,
        pads,
        dilations,
        reduce,
        rounding,
        auto_pad,
        count_pad,
        indices,
        index_axis,
        "irpool.pool",
    )
    values, idx = _pool(x, plan(params, tuple(x.shape), convention, dtype=x.dtype))
    if indices and idx is not None:
        return values, idx
    return values


def _params(
    n: int,
    kernel: int | Sequence[int],
    strides: int | Sequence[int] | None,
    pads: int | Sequence[int] | Sequence[tuple[int, int]],
    dilations: int | Sequence[int],
    reduce: Literal["max", "mean"],
    rounding: Literal["floor", "ceil", "ceil_torch"],
    auto_pad: Literal["explicit", "same_upper", "same_lower", "valid"],
    count_pad: bool,
    indices: bool,
    index_axis: int,
    op: str,
) -> PoolParams:
    """The PoolParams of pool()'s keywords for n spatial axes."""

    def each(value: int | Sequence[int]) -> tuple[int, ...]:
        if isinstance(value, int):
            return (value,) * n
        return tuple(int(v) for v in value)

    pairs: tuple[tuple[int, int], ...]
    if isinstance(pads, int):
        pairs = ((pads, pads),) * n
    else:
        items: list[Any] = list(pads)
        pairs = tuple(
            (int(p), int(p)) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in items
        )
    return PoolParams(
        op=op,
        reduce=reduce,
        window=each(kernel),
        strides=each(strides if strides is not None else 1),
        dilations=each(dilations),
        pads=pairs,
        auto_pad=auto_pad,
        rounding=rounding,
        count_pad=count_pad,
        indices=indices,
        index_axis=index_axis,
    )


def compile_pool(
    input_shape: Sequence[int],
    dtype: Any,
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
    threads: int | None = None,
    path: str | None = None,
) -> PreparedPool:
    """pool() prepared once for inputs of one shape and dtype: returns a callable `f(x)`
    giving what `pool(x, ...)` gives with the same keywords (values, or (values, indices)),
    with the plan, the kernel path and its buffers built before the first call.

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
    params = _params(
        len(shape) - 2,
        kernel,
        strides,
        pads,
        dilations,
        reduce,
        rounding,
        auto_pad,
        count_pad,
        indices,
        index_axis,
        "irpool.compile_pool",
    )
    name = str(np.dtype(dtype).name)
    return PreparedPool(plan(params, shape, convention, dtype=name), thread_count(threads), path)
