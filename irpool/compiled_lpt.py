"""The steps of irpool.compile_model (compiled_model.py) for quantized chains: a FakeQuantize
on the plugin's reading and the pooling layers openvino's LPT runs on integer codes (lpt.py,
lpt_run.py), prepared once: constants, decomposition, fused ranges, plans, kernels."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled_base import LayerPath, _declared, _plain, _run_module
from .model import Graph, Layer
from .ops import REGISTRY
from .ops.binding import Bound

Array = npt.NDArray[Any]


class LptSteps:
    """CompiledModel's steps for quantized chains (a mixin: it reads the model's graph and
    kernel path)."""

    graph: Graph
    kernel_path: str
    threads: int

    def _readers(self, layer: Layer) -> list[tuple[Layer, int]]:
        """The layers that read `layer`'s outputs, each with the input position it reads."""
        graph = self.graph
        by_id = {la.id: la for la in graph.layers}
        out = []
        for e in graph.edges:
            if e.from_layer != layer.id:
                continue
            reader = by_id[e.to_layer]
            where = [k for k, port in enumerate(reader.inputs) if port.id == e.to_port]
            out.append((reader, where[0] if where else -1))
        return out

    def _quantize_step(
        self, layer: Layer, optional: list[Any], moving: list[bool]
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None] | None:
        """A FakeQuantize whose ranges are constants, on the plugin's reading (lpt_run): its
        constants, LPT's decomposition, the ranges a moved dequantization is fused into and
        the kernels made once; a call computes the value only where a reader takes it and the
        codes only where a reader may pool them.  None: the interpreter's own step."""
        from . import lpt
        from .lpt_run import Quant, levels_of

        rn = _run_module()
        if len(optional) != 5 or any(v is None for v in optional) or any(moving[1:]):
            return None
        x = optional[0]
        quant = getattr(x, "quant", None)
        moved = quant is not None and quant.moved
        if not moved and not (quant is not None or (_plain(x) and x.declared == "f32")):
            return None
        data = quant.codes if quant is not None and moved else x.output()
        if data.dtype != np.float32:
            return None
        ranges = [v.constant if v.constant is not None else v.output() for v in optional[1:]]
        levels = levels_of(layer)
        p = lpt.fq_params(levels, ranges, data.ndim)
        d = lpt.decompose(p)
        shape = tuple(data.shape)
        if quant is not None and moved:
            # a post-op only where the pooling layer's output has no other reader (run)
            post = quant.post_op and not rn._shared(self.graph, layer)
            p_in = lpt.fused_ranges(p, quant.d)
            value_of = self._fq_kernel(shape, p_in, post, True)
        else:
            p_in, post = p, False
            value_of = self._fq_kernel(shape, p, False, None)
        readers = self._readers(layer)
        codes_of = None
        if d is not None and any(REGISTRY.role(r) != "result" for r, _ in readers):
            to_codes = lpt.FakeQuantizeParams(
                levels, p_in.il, p_in.ih, np.asarray(np.float32(d.lo)), np.asarray(np.float32(d.hi))
            )
            codes_of = self._fq_kernel(shape, to_codes, post, None)
        # a pooling layer (plugin) reads a FakeQuantize's codes, never its value
        value_read = d is None or not all(k == 0 and _pools(r) for r, k in readers)
        if not value_read and codes_of is None:
            value_read = True
        # where LPT pools the codes, the other readers read their dequantization (run.codes_pooled)
        dequantize = (
            d.dequantize if d is not None and rn.codes_pooled(self.graph, layer, d) else None
        )
        label = layer.label
        value_type = rn.Value

        def run(v: list[Any]) -> list[Any]:
            src = v[0].quant.codes if moved else v[0].output()
            codes = codes_of(src) if codes_of is not None else None
            if not value_read:
                value = codes
            elif dequantize is not None and codes is not None:
                value = dequantize(codes)
            else:
                value = value_of(src)
            q = Quant(d, codes, source=label) if codes is not None and d is not None else None
            return [value_type(value, "f32", "f32", quant=q)]

        return run, None

    def _fq_kernel(
        self, shape: tuple[int, ...], p: Any, fused: bool, fma_out: bool | None
    ) -> Callable[[Array], Array]:
        """lpt.cpu_fake_quantize(x, p, fused, fma_out) for float32 data of `shape`: numba_glue's
        kernel with its constants laid out once where it serves (kernel/glue_compiled.py), else
        the numpy reading."""
        from . import lpt

        def numpy(x: Array) -> Array:
            return lpt.cpu_fake_quantize(x, p, fused, fma_out)

        if self.kernel_path == "numpy" or not shape or 0 in shape:
            return numpy
        from .kernel import glue_compiled as gc
        from .kernel.compiled import installed

        if not installed():
            return numpy
        consts = gc._fq_constants(shape, p) or _fq_constants_zero_bounds(shape, p)
        if not consts:
            return numpy
        kernel = gc.kernels().fake_quantize
        out_fma = fused if fma_out is None else fma_out
        f32 = np.float32

        def compiled(x: Array) -> Array:
            out = np.empty(shape, f32)
            kernel(x.reshape(-1), *consts, fused, out_fma, out.reshape(-1))
            return out

        return compiled

    def _codes_step(
        self, bound: Bound, src: Any
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath] | None:
        """A pooling layer LPT runs on the codes of the FakeQuantize (or MaxPool of codes)
        before it: its plan on the codes, the counts it divides by and the dequantization made
        once; a call pools the codes on the prepared plan (the compiled path where it serves)
        and dequantizes only where a reader other than a FakeQuantize takes the value.  None:
        LPT does not transform the layer (the interpreter's own step)."""
        from .lpt_run import Quant

        rn = _run_module()
        kind = rn._lpt_kind(bound)
        quant = src.quant
        if kind is None or not quant.integral:
            return None
        if kind in ("max", "reduce_max") and not quant.d.positive:
            return None
        codes = np.asarray(quant.codes, dtype=np.float32)
        if codes.dtype != np.float32 or codes is not quant.codes:
            return None
        p, pooled_codes, _ = rn.pool_codes(bound, kind, codes, None)
        d = quant.d.for_rank(pooled_codes.ndim)
        post_op = kind != "max"
        source = quant.source
        value_read = not all(
            k == 0 and REGISTRY.role(r) == "quantize" for r, k in self._readers(bound.layer)
        )
        value_type = rn.Value
        declared = _declared
        if kind in ("reduce_mean", "reduce_max"):
            pool, path = self._codes_reduce_step(bound, kind, codes, p, pooled_codes)
        else:
            pool, path = self._codes_window_step(bound, kind, p, pooled_codes)

        def run(v: list[Any]) -> list[Any]:
            pooled, rest = pool(v[0].quant.codes)
            value = d.dequantize(pooled) if value_read else pooled
            q = Quant(d, pooled, moved=True, post_op=post_op, source=source)
            return [value_type(value, "f32", "f32", quant=q), *(declared(a) for a in rest)]

        return run, path

    def _codes_reduce_step(
        self, bound: Bound, kind: str, codes: Array, p: Any, pooled_codes: Array
    ) -> tuple[Callable[[Array], tuple[Array, list[Array]]], LayerPath]:
        """A ReduceMean/ReduceMax on LPT's codes: the compiled reduction where one serves."""
        layer = bound.layer
        from .lpt_run import reduce_codes

        axes = tuple(getattr(p, "axes", ()))
        keep = bool(getattr(p, "keep", True))
        count = int(getattr(p, "count", 1))

        reduce = self._codes_reduce(kind, codes.shape, axes, count, pooled_codes.shape)

        def pool(x: Array) -> tuple[Array, list[Array]]:
            if reduce is not None:
                out = reduce(x)
                if out is not None:
                    return out, []
            return reduce_codes(kind, x, axes, keep, count), []

        path = (
            LayerPath(bound.label, layer.type, "compiled", "on LPT's codes: compiled (numba)")
            if reduce is not None
            else LayerPath(
                bound.label,
                layer.type,
                "numpy",
                "on LPT's codes: the numpy core, plan prepared"
                + ("" if self.kernel_path == "numpy" else " (axes not the last ones)"),
            )
        )
        return pool, path

    def _codes_window_step(
        self, bound: Bound, kind: str, p: Any, pooled_codes: Array
    ) -> tuple[Callable[[Array], tuple[Array, list[Array]]], LayerPath]:
        """A windowed pooling layer on LPT's codes: its plan prepared once, an AvgPool's sums
        recovered from the means of the codes."""
        from .kernel.prepared import PreparedPool

        layer = bound.layer
        keep_indices = bool(p.indices and bound.indices_used)
        plan = p if p.indices == keep_indices else dataclasses.replace(p, indices=keep_indices)
        prepared = PreparedPool(plan, self.threads, self.kernel_path)
        run_plan = prepared.run
        if prepared.path == "compiled" and plan.via is None:
            # the codes are float32 arrays of the traced shape (a FakeQuantize's or a
            # MaxPool's fresh output): no check per call
            kernel = prepared._compiled

            def run_plan(x: Array) -> tuple[Array, Array | None]:
                return kernel()(x)

        if kind == "avg":
            from .kernel.windows import divisor
            from .lpt import mean_of_codes

            div = np.asarray(divisor(p.via or p), dtype=np.float64)
            recover = self._codes_average(div, pooled_codes.shape, bound.channels_last)

            def pool(x: Array) -> tuple[Array, list[Array]]:
                means, _ = run_plan(x)
                if recover is not None:
                    return recover(means), []
                with np.errstate(all="ignore"):
                    sums = np.rint(np.asarray(means, dtype=np.float64) * div)
                    sums = np.where(np.isfinite(sums), sums, 0.0)
                return mean_of_codes(sums.astype(np.float32), div), []

        else:

            def pool(x: Array) -> tuple[Array, list[Array]]:
                values, indices = run_plan(x)
                return values, [] if indices is None else [indices]

        path = LayerPath(bound.label, layer.type, prepared.path, f"on LPT's codes: {prepared.why}")
        return pool, path

    def _codes_average(
        self, div: Array, shape: tuple[int, ...], channels_last: bool
    ) -> Callable[[Array], Array] | None:
        """An AvgPool of codes from its windows' means (lpt_run.average_codes: the exact sums
        recovered, times the float32 reciprocal of each count) in one pass of numba_lpt's
        kernel, the counts laid out once; None where it does not serve (the numpy path, a
        channels-last layout, counts not shaped like the trailing axes)."""
        from .kernel.compiled import installed

        if self.kernel_path == "numpy" or not installed() or channels_last or 0 in shape:
            return None
        if div.ndim > len(shape) or tuple(shape[len(shape) - div.ndim :]) != div.shape:
            return None
        counts = np.ascontiguousarray(div, dtype=np.float64).reshape(-1)
        with np.errstate(all="ignore"):
            recips = (np.float32(1) / counts.astype(np.float32)).astype(np.float32)
        kernel = _lpt_kernels().average_of_codes
        f32 = np.float32

        def recover(means: Array) -> Array:
            out = np.empty(shape, f32)
            kernel(np.ascontiguousarray(means).reshape(-1), counts, recips, out.reshape(-1))
            return out

        return recover

    def _codes_reduce(
        self,
        kind: str,
        shape: tuple[int, ...],
        axes: tuple[int, ...],
        count: int,
        out_shape: tuple[int, ...],
    ) -> Callable[[Array], Array | None] | None:
        """A ReduceMean or ReduceMax of codes over the last axes on numba_lpt's kernel (what
        lpt_run.reduce_codes computes; None from a call: a non-finite code, numpy's reading
        then); None where it does not serve (the numpy path, other axes, empty data)."""
        from .kernel.compiled import installed

        if self.kernel_path == "numpy" or not installed() or not shape or 0 in shape:
            return None
        ndim = len(shape)
        norm = sorted({a % ndim for a in axes})
        if not norm or norm != list(range(ndim - len(norm), ndim)):
            return None
        n = int(np.prod([shape[a] for a in norm]))
        if n != count or n == 0 or n >= 65536:
            return None
        kernels = _lpt_kernels()
        is_max = kind == "reduce_max"
        sums, top = kernels.sum_of_codes_rows, kernels.max_of_codes_rows
        f32 = np.float32
        divisor = f32(count)

        def reduce(x: Array) -> Array | None:
            out = np.empty(out_shape, f32)
            flat = np.ascontiguousarray(x).reshape(-1)
            if is_max:
                return out if top(flat, n, out.reshape(-1)) else None
            if not sums(flat, n, out.reshape(-1)):
                return None
            # lpt.reduce_mean_of_codes: f32(sum) / count, one IEEE division
            return np.divide(out, divisor, out=out)

        return reduce


def _lpt_kernels() -> Any:
    from .kernel.compiled import NumbaModule

    if not _LPT:
        _LPT.append(NumbaModule("numba_lpt"))
    return _LPT[0]()


_LPT: list[Any] = []


def _fq_constants_zero_bounds(shape: tuple[int, ...], p: Any) -> tuple[Any, ...]:
    """glue_compiled's FakeQuantize constants where a clamp bound is a zero (a u8 range from 0,
    as NNCF writes after a ReLU), which its kernel refuses because numpy's maximum picks a
    zero's sign by its loop: the sign of a clamped zero cannot reach the output here, since it
    survives x * isc + ish only where ish is a zero too, and steps * osc + ol only where ol is
    -0.0.  So: every ol not -0.0, no range with both bounds zero, no NaN; else ()."""
    from .kernel import glue_compiled as gc

    layout = gc.fq_layout(shape, p)
    if layout is None:
        return ()
    flat, fit = layout
    il, ih, ol = flat[0], flat[1], flat[5]
    if bool(((ol == 0) & np.signbit(ol)).any()) or bool(((il == 0) & (ih == 0)).any()):
        return ()
    gc.kernels()
    return (*flat, *fit)


def _pools(layer: Layer) -> bool:
    """A pooling layer openvino's plugin runs (it reads a FakeQuantize's codes, not its
    value: run._pool and run._family)."""
    spec = REGISTRY.spec(layer)
    return spec is not None and bool(spec.pooling) and spec.kind != "qlinear"
