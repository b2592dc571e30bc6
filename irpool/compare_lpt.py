"""`compare` on quantized models: the pooling layers openvino's CPU plugin runs on integer
codes after its low-precision transformations (LPT; irpool/lpt.py).

For each such layer irpool recovers the codes from the FakeQuantize output openvino gives the
layer (re-quantizing a quantized value gives its own code back), pools them as the plugin does,
and compares the dequantized result; where LPT fuses a following FakeQuantize into the layer,
the layer's own output does not exist in the deployed model and asking for it would break the
fusion, so the probe reads the FakeQuantize's output instead and irpool computes the pool and
the fused FakeQuantize together (`QuantizedLayer.read_at`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import lpt
from .errors import IrpoolError
from .model import Graph, Layer
from .ops import REGISTRY

Array = npt.NDArray[Any]
F32 = np.float32


@dataclass(frozen=True)
class QuantizedLayer:
    """A pooling layer LPT runs on codes, and the FakeQuantize layers around it."""

    kind: str
    source: Layer
    """The FakeQuantize whose output the layer reads."""
    levels: int
    ranges: tuple[Array, ...]
    post: Layer | None
    """A FakeQuantize LPT fuses into the layer (its only reader), or None."""
    post_levels: int = 0
    post_ranges: tuple[Array, ...] = ()
    post_decomposed: bool = False
    """The fused FakeQuantize feeds more than Results: LPT decomposes it as well, and its
    output (what the probe reads) is its codes dequantized, (codes - shift) * scale
    (measured)."""

    layer: str = ""
    """The pooling layer's name."""
    indices_unused: bool = False
    """A MaxPool-8's indices output that nothing reads: asking for it changes how the plugin
    runs the layer (measured: the dequantization after it moves 20 of 600 values by an ulp)."""

    @property
    def read_at(self) -> str | None:
        """The layer whose (first) output the probe reads instead of the pooling layer's
        outputs (the layer itself: its values only)."""
        if self.post is not None:
            return self.post.name
        return self.layer if self.indices_unused else None

    def note(self, d: lpt.Decomposition) -> str:
        where = (
            f'; compared at the output of FakeQuantize "{self.post.label}", which the plugin '
            "fuses into it (its own output does not exist as deployed, and asking for it would "
            "break the fusion)"
            if self.post is not None
            else ""
        )
        return (
            f"openvino's low-precision transformations run it on the {d.describe()} of "
            f'FakeQuantize "{self.source.label}", the dequantization moved after it{where}'
        )


def _const(graph: Graph, layer: Layer, port: int) -> Array | None:
    """An input's constant value, through Converts (a model saved with f16 weights)."""
    from .run import read_const

    if layer.id is None or port >= len(layer.inputs):
        return None
    edge = graph.producer(layer.id, layer.inputs[port].id)
    while edge is not None:
        src = graph.layer(edge.from_layer)
        role = REGISTRY.role(src)
        if role == "const":
            try:
                return np.asarray(read_const(graph, src), dtype=F32)
            except IrpoolError:
                return None
        if role != "convert" or src.id is None or not src.inputs:
            return None
        edge = graph.producer(src.id, src.inputs[0].id)
    return None


def _fq(graph: Graph, layer: Layer) -> tuple[int, tuple[Array, ...]] | None:
    from .lpt_run import levels_of

    if REGISTRY.role(layer) != "quantize":
        return None
    ranges = [_const(graph, layer, k) for k in range(1, 5)]
    if any(r is None for r in ranges):
        return None
    try:
        return levels_of(layer), tuple(r for r in ranges if r is not None)
    except IrpoolError:
        return None


def _readers(graph: Graph, layer: Layer, port: int) -> list[Layer]:
    return [
        graph.layer(e.to_layer)
        for e in graph.edges
        if e.from_layer == layer.id and e.from_port == port
    ]


def _integral_pool(layer: Layer) -> bool:
    from .ops.quantize import lpt_kind

    spec = REGISTRY.spec(layer)
    if spec is None or REGISTRY.role(layer) != "pooling":
        return False
    rounding = layer.data.get("rounding_type")
    return lpt_kind(spec, rounding.strip().lower() if rounding else None) == "max"


def quantized_layer(graph: Graph, layer: Layer) -> QuantizedLayer | None:
    """What LPT does with a pooling layer of an IR (None: it runs in float)."""
    from .ops.quantize import lpt_kind

    spec = REGISTRY.spec(layer)
    if spec is None or layer.id is None or not layer.inputs or graph.format != "ir":
        return None
    rounding = layer.data.get("rounding_type")
    kind = lpt_kind(spec, rounding.strip().lower() if rounding else None)
    if kind is None:
        return None
    edge = graph.producer(layer.id, layer.inputs[0].id)
    if edge is None:
        return None
    source = graph.layer(edge.from_layer)
    while _integral_pool(source) and source.id is not None and source.inputs:
        # a MaxPool on codes keeps them integers: LPT moves the dequantization past it too
        edge = graph.producer(source.id, source.inputs[0].id)
        if edge is None:
            return None
        source = graph.layer(edge.from_layer)
    found = _fq(graph, source)
    if found is None:
        return None
    levels, ranges = found
    d = lpt.decompose(lpt.fq_params(levels, list(ranges), 4))
    if d is None or (kind in ("max", "reduce_max") and not d.positive):
        return None
    post: Layer | None = None
    post_found = None
    if layer.outputs:
        readers = _readers(graph, layer, layer.outputs[0].id)
        values_only = len(layer.outputs) < 2 or not graph.consumed(layer.id, layer.outputs[1].id)
        if len(readers) == 1 and values_only and readers[0].name:
            post_found = _fq(graph, readers[0])
            if post_found is not None:
                post = readers[0]
    if post is not None and post_found is not None and post.id is not None:
        decomposed = any(
            REGISTRY.role(r) != "result"
            for port in post.outputs
            for r in _readers(graph, post, port.id)
        )
        return QuantizedLayer(
            kind, source, levels, ranges, post, *post_found, decomposed, layer.name or ""
        )
    unused = len(layer.outputs) > 1 and not graph.consumed(layer.id, layer.outputs[1].id)
    return QuantizedLayer(
        kind, source, levels, ranges, None, layer=layer.name or "", indices_unused=unused
    )


def quantized_layers(graph: Graph, layers: list[Layer]) -> dict[str, QuantizedLayer]:
    """The quantized layers among `layers`, by name."""
    found = {}
    for layer in layers:
        q = quantized_layer(graph, layer)
        if q is not None and layer.name:
            found[layer.name] = q
    return found


def values(q: QuantizedLayer, pooled_of: Any, x: Array) -> tuple[list[Array], lpt.Decomposition]:
    """irpool's result for the layer on the FakeQuantize output `x` openvino gave it:
    `pooled_of(codes)` pools float32 codes as LPT runs the layer (lpt_run); the dequantized
    values, or, with a fused FakeQuantize, that FakeQuantize's output."""
    p = lpt.fq_params(q.levels, list(q.ranges), x.ndim)
    d = lpt.decompose(p)
    assert d is not None
    codes = d.codes(np.asarray(x, dtype=F32), p)
    pooled, rest = pooled_of(codes)
    d = d.for_rank(pooled.ndim)
    if q.post is None:
        return [d.dequantize(pooled), *rest], d
    post = lpt.fq_params(q.post_levels, list(q.post_ranges), pooled.ndim)
    fused = lpt.fused_ranges(post, d)
    d2 = lpt.decompose(post) if q.post_decomposed else None
    if d2 is None:
        return [lpt.cpu_fake_quantize(pooled, fused, q.kind != "max", fma_out=True)], d
    to_codes = lpt.FakeQuantizeParams(
        fused.levels, fused.il, fused.ih, np.asarray(F32(d2.lo)), np.asarray(F32(d2.hi))
    )
    return [d2.dequantize(lpt.cpu_fake_quantize(pooled, to_codes, q.kind != "max"))], d


def compare_values(bound: Any, q: QuantizedLayer, x: Array) -> tuple[list[Array], Any, str]:
    """irpool's outputs for a quantized layer on openvino's input `x`, its plan, and the note
    the report prints."""
    from .run import pool_codes

    plan: list[Any] = []

    def pooled_of(codes: Array) -> tuple[Array, list[Array]]:
        p, pooled, rest = pool_codes(bound, q.kind, codes)
        plan.append(p)
        return pooled, rest

    got, d = values(q, pooled_of, x)
    return got, plan[0], q.note(d)


LPT_DIAGNOSIS = (
    "irpool computes this layer as openvino's low-precision transformations run it (the pool "
    "on integer codes, the reciprocal multiply, the dequantization after it, a following "
    "FakeQuantize fused with its input range divided by the scale); a difference here is in "
    "that arithmetic: please report it"
)
