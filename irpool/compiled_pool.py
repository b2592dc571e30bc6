"""The steps of irpool.compile_model (compiled_model.py) for pooling layers on float tensors:
a windowed pooling layer's plan and kernel prepared once (kernel/prepared.py), a layer of
another family's, and an f16 tensor held in float32 (LPT's codes: compiled_lpt.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy.typing as npt

from .compiled_base import LayerPath, _declared, _plain, _Prepared, _run_module, _value
from .compiled_lpt import LptSteps
from .model import Graph, Layer
from .ops import REGISTRY
from .ops.binding import Bound

Array = npt.NDArray[Any]


class PoolSteps(LptSteps):
    """CompiledModel's steps for pooling layers (a mixin: it reads the model's graph, kernel
    path and threads)."""

    graph: Graph
    kernel_path: str
    threads: int
    convention: str | None

    def _interpreted(
        self, bound: Bound, run: Callable[[list[Any]], list[Any]], why: str
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        return run, LayerPath(bound.label, bound.layer.type, "interpreted", why)

    def _pool_step(
        self, bound: Bound, optional: list[Any], plugin: bool, hold_f16: bool, prepare: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        rn = _run_module()
        from .kernel.prepared import PreparedPool

        convention = self.convention

        def interpreted(v: list[Any]) -> list[Any]:
            _, outs = rn._pool(bound, v, convention, None, True, plugin, hold_f16)
            return list(outs)

        src = optional[0] if optional else None
        if not prepare or bound.spec.kind == "qlinear" or src is None:
            why = "a quantized layer" if bound.spec.kind == "qlinear" else "its input is constant"
            return self._interpreted(bound, interpreted, why)
        if (
            plugin
            and _plain(src)
            and src.declared in ("f16", "bf16")
            and self._results_only(bound.layer)
        ):
            return self._half_step(bound, optional, plugin)
        if plugin and getattr(src, "quant", None) is not None:
            made = self._codes_step(bound, src)
            if made is not None:
                return made
        if not _plain(src) or src.declared != "f32":
            return self._interpreted(
                bound,
                interpreted,
                f"its input is a {src.declared} tensor held as {src.held}: the interpreter's "
                "conversions run around the plan",
            )
        p, _ = rn._pool(bound, optional, convention, None, True, plugin, hold_f16)
        if plugin and p.indices and not bound.indices_used:
            # a MaxPool-8/14 whose indices nothing reads: the values alone (the plugin's float
            # values do not depend on the indices output; computing them costs several times
            # the values' time)
            p = dataclasses.replace(p, indices=False)
        prepared = PreparedPool(p, self.threads, self.kernel_path)
        declared = _declared

        pool = prepared.run
        if prepared.path == "compiled" and p.via is None:
            # the program's signature fixes this input's dtype and shape: no check per call
            kernel = prepared._compiled

            def pool(x: Array) -> tuple[Array, Array | None]:
                return kernel()(x)

        def direct(v: list[Any]) -> list[Any]:
            values, indices = pool(v[0])
            return [values] if indices is None else [values, indices]

        def run(v: list[Any]) -> list[Any]:
            values, indices = prepared.run(v[0].array)
            outs = [_value(values, "f32", "f32")]
            if indices is not None:
                outs.append(declared(indices))
            return outs

        return _Prepared(run, direct), LayerPath(
            bound.label, bound.layer.type, prepared.path, prepared.why
        )

    def _results_only(self, layer: Layer) -> bool:
        """Whether only Results read the layer's outputs (a tensor held in f32 for the layers
        after it is delivered rounded to its declared type there)."""
        graph = self.graph
        if graph.ir_version == 10:
            return False
        by_id = {la.id: la for la in graph.layers}
        readers = [by_id[e.to_layer] for e in graph.edges if e.from_layer == layer.id]
        return bool(readers) and all(REGISTRY.role(la) == "result" for la in readers)

    def _half_step(
        self, bound: Bound, optional: list[Any], plugin: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        """A windowed layer of an f16 or bf16 input (the plugin's way: widened to f32, pooled,
        rounded to the input's type at the Result it feeds) on the plan for data of that type,
        as compile_pool runs it: the compiled kernel widens and rounds as it goes
        (bit-identical to the numpy core)."""
        rn = _run_module()
        from .kernel.prepared import PreparedPool

        p, _ = rn._pool(bound, optional, self.convention, None, True, plugin, False)
        x = optional[0].array
        half = bound.plan(
            tuple(x.shape), "bfloat16" if optional[0].declared == "bf16" else "float16"
        )
        keep = bool(p.indices and bound.indices_used)  # unread indices: the values alone
        if half.indices != keep:
            half = dataclasses.replace(half, indices=keep)
        prepared = PreparedPool(half, self.threads, self.kernel_path)
        declared = _declared

        def direct(v: list[Any]) -> list[Any]:
            values, indices = prepared.run(v[0])
            return [values] if indices is None else [values, indices]

        def run(v: list[Any]) -> list[Any]:
            return [declared(a) for a in direct([v[0].array])]

        return _Prepared(run, direct), LayerPath(
            bound.label, bound.layer.type, prepared.path, prepared.why
        )

    def _family_step(
        self, bound: Bound, optional: list[Any], moving: list[bool], prepare: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        rn = _run_module()
        from .kernel.family_compiled import prepare as prepare_family

        convention = self.convention

        def interpreted(v: list[Any]) -> list[Any]:
            _, outs = rn._family(bound, v, None, convention)
            return list(outs)

        family = bound.family
        src = optional[0] if optional else None
        if not prepare or src is None:
            return self._interpreted(bound, interpreted, "its input is constant")
        if getattr(src, "quant", None) is not None and convention in (None, "openvino"):
            made = self._codes_step(bound, src)
            if made is not None:
                return made
        if not _plain(src):
            return self._interpreted(
                bound,
                interpreted,
                f"its input is a {src.declared} tensor held as {src.held}: the interpreter's "
                "conversions run around the plan",
            )
        computed = [k for k in family.value_inputs if k < len(moving) and moving[k]]
        if computed:
            return self._interpreted(
                bound,
                interpreted,
                f"its input {computed[0]} (a size or axes) is computed by the model: the plan is "
                "made per call",
            )
        p, _ = rn._family(bound, optional, None, convention)
        kernel = prepare_family(p, self.threads, self.kernel_path)
        declared = _declared

        def run(v: list[Any]) -> list[Any]:
            arrays = [v[0].array, *(x.output() if x is not None else None for x in v[1:])]
            return [declared(a) for a in kernel(arrays)]

        return _Prepared(run, kernel), LayerPath(
            bound.label, bound.layer.type, kernel.path, kernel.why
        )
