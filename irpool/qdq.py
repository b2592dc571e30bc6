"""ONNX QDQ models as onnxruntime runs them: its QDQ transformer's fusions around pooling.

A QDQ model computes a quantized pooling node as DequantizeLinear -> pool -> QuantizeLinear.
At its default graph optimization level (ORT_ENABLE_EXTENDED and above; not at BASIC or
DISABLE_ALL) onnxruntime 1.32 rewrites that group before anything runs (measured from
SessionOptions.optimized_model_filepath):

* DQ -> AveragePool -> Q becomes com.microsoft QLinearAveragePool, DQ -> GlobalAveragePool ->
  Q becomes QLinearGlobalAveragePool, when the DQ's input and the Q's output have one type
  (u8/u8 or i8/i8) and the pool's output feeds only that Q (no graph output, no other reader;
  a DQ output read elsewhere is duplicated and does not stop it).  The fused node computes
  something else than the float chain: on 8x8 inputs 5-18% of k2s2 cells, a third of
  k3s2p1 ceil count_include_pad cells differ between the two levels.  Where the fused node
  cannot take the group's values onnxruntime refuses the whole model: scales or zero points
  not of rank 0 ("Scale and Zero-point must be a scalar"; per-axis or shape [1]), and an
  AveragePool with a `dilations` attribute (QLinearAveragePool has none; even [1, 1]).
* DQ -> MaxPool -> Q loses its DQ and Q (the MaxPool runs on the codes) when both have
  constant rank-0 scales and zero points of equal values, the MaxPool has no Indices output
  and the opset is at least 12.  The values do not change (a max commutes with the monotone
  quantization), but the tensors between them no longer exist.
* GlobalMaxPool and every mixed-type group stay as written.

`onnxruntime_graph(graph)` is the graph with those fusions applied, which irpool then runs
with the com.microsoft kernels it already reproduces bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import SpecError
from .model import Edge, Graph, Layer, Port
from .ops.onnx_attrs import opset_of

Array = npt.NDArray[Any]

FUSED = {
    "AveragePool": "QLinearAveragePool",
    "GlobalAveragePool": "QLinearGlobalAveragePool",
}


@dataclass(frozen=True)
class Fusion:
    """One group onnxruntime rewrites: the pool node's label and what it becomes."""

    node: str
    op: str
    """The pool node's op type."""
    becomes: str
    """QLinearAveragePool, QLinearGlobalAveragePool, or `MaxPool on codes`."""
    dq: str
    q: str
    floats_in: str = ""
    """The DQ's output tensor (the dequantized input of the pool)."""
    floats_out: str = ""
    """The output tensor of the DequantizeLinear that alone reads the Q's codes, or ""."""
    params: tuple[Any, ...] = ()
    """(x_scale, x_zero_point, y_scale, y_zero_point) where all are constants (zero points
    as onnxruntime holds them: u8 + 128 for an int8 pair it turned into u8), else ()."""

    def describe(self) -> str:
        return (
            f'node "{self.node}": onnxruntime fuses DequantizeLinear "{self.dq}" -> {self.op} -> '
            f'QuantizeLinear "{self.q}" into {self.becomes} (its default graph optimization); '
            "irpool runs the fused node"
        )


def _onnx(layer: Layer, op: str) -> bool:
    return layer.domain in ("ai.onnx", "") and layer.type == op and layer.version is not None


def _readers(graph: Graph, layer: Layer, port: Port) -> list[tuple[Layer, int]]:
    return [
        (graph.layer(e.to_layer), e.to_port)
        for e in graph.edges
        if e.from_layer == layer.id and e.from_port == port.id
    ]


def _producer(graph: Graph, layer: Layer, k: int) -> Layer | None:
    fed = graph.feeder(layer, k)
    return None if fed is None else fed[0]


def _name(port: Port) -> str:
    return port.names[0] if port.names else ""


def _constant(graph: Graph, layer: Layer, k: int) -> Array | None:
    if k >= len(layer.inputs):
        return None
    name = _name(layer.inputs[k])
    return np.asarray(graph.initializers[name]) if name in graph.initializers else None


def _code_type(graph: Graph, layer: Layer, side: str) -> str | None:
    """The element type of a DQ's input (`side` in) or a Q's output (out): its zero point's,
    a declared type, a Q's output_dtype or uint8; None where it is not known."""
    zp = _constant(graph, layer, 2)
    if zp is not None:
        return str(zp.dtype.name)
    if side == "out":
        raw = layer.attrs.get("output_dtype", 0)
        return {0: "uint8", 2: "uint8", 3: "int8"}.get(int(raw), "other")  # type: ignore[call-overload]
    declared = layer.inputs[0].element_type if layer.inputs else None
    if declared is not None:
        return {"u8": "uint8", "i8": "int8"}.get(declared, declared)
    src = _producer(graph, layer, 0)
    if src is not None and _onnx(src, "QuantizeLinear"):
        return _code_type(graph, src, "out")
    return None


def _group(graph: Graph, pool: Layer) -> tuple[Layer, Layer] | None:
    """The DQ before and the Q after a pool node when they form a group onnxruntime's QDQ
    selector takes: the pool's only output feeds exactly that Q."""
    dq = _producer(graph, pool, 0)
    if dq is None or not _onnx(dq, "DequantizeLinear") or not pool.outputs:
        return None
    if len(pool.outputs) != 1:
        return None
    readers = _readers(graph, pool, pool.outputs[0])
    if len(readers) != 1 or readers[0][1] != readers[0][0].inputs[0].id:
        return None
    q = readers[0][0]
    if not _onnx(q, "QuantizeLinear"):
        return None
    return dq, q


def _scalar_params(graph: Graph, dq: Layer, q: Layer) -> bool:
    """Whether every scale and zero point the group lists is of rank 0 (a constant's shape, or
    a declared one)."""
    for layer in (dq, q):
        for port in layer.inputs[1:3]:
            if not _name(port):
                continue
            value = graph.initializers.get(_name(port))
            dims = tuple(np.asarray(value).shape) if value is not None else port.dims
            if dims is not None and len(dims) != 0:
                return False
    return True


def onnxruntime_fusions(graph: Graph) -> list[tuple[Fusion, Layer, Layer, Layer]]:
    """The groups onnxruntime fuses (pool, dq, q for each); SpecError where its fusion makes
    a model it then refuses to load."""
    found = []
    for pool in graph.layers:
        if not any(_onnx(pool, op) for op in (*FUSED, "MaxPool")):
            continue
        group = _group(graph, pool)
        if group is None:
            continue
        dq, q = group
        t_in, t_out = _code_type(graph, dq, "in"), _code_type(graph, q, "out")
        if t_in is None or t_in != t_out or t_in not in ("uint8", "int8"):
            continue
        if pool.type == "MaxPool":
            if _drops_max(graph, pool, dq, q):
                found.append(
                    (
                        _fusion(graph, pool, "MaxPool on codes", dq, q),
                        pool,
                        dq,
                        q,
                    )
                )
            continue
        becomes = FUSED[pool.type]
        if not _scalar_params(graph, dq, q):
            raise SpecError(
                f"onnxruntime refuses this model: its QDQ fusion turns DequantizeLinear "
                f'"{dq.label}" -> {pool.type} -> QuantizeLinear "{q.label}" into {becomes}, which '
                "takes rank-0 scales and zero points ('Scale and Zero-point must be a scalar'; "
                "measured with per-axis and shape-[1] ones); expected rank-0 scales and zero "
                "points",
                pool.where(),
            )
        if "dilations" in pool.attrs:
            raise SpecError(
                f"onnxruntime refuses this model: its QDQ fusion turns DequantizeLinear "
                f'"{dq.label}" -> AveragePool -> QuantizeLinear "{q.label}" into '
                "QLinearAveragePool, which has no dilations attribute (INVALID_GRAPH, also for "
                "dilations [1, ...]); expected the AveragePool without a dilations attribute",
                pool.where(),
            )
        found.append((_fusion(graph, pool, becomes, dq, q), pool, dq, q))
    return found


def _fusion(graph: Graph, pool: Layer, becomes: str, dq: Layer, q: Layer) -> Fusion:
    readers = _readers(graph, q, q.outputs[0])
    after = ""
    if len(readers) == 1 and _onnx(readers[0][0], "DequantizeLinear"):
        after = _name(readers[0][0].outputs[0])
    values = [_constant(graph, la, k) for la in (dq, q) for k in (1, 2)]
    code = np.uint8 if _code_type(graph, dq, "in") == "uint8" else np.int8
    values = [np.zeros((), code) if v is None and k in (1, 3) else v for k, v in enumerate(values)]
    params = tuple(values) if all(v is not None for v in values) else ()
    return Fusion(
        pool.label, pool.type, becomes, dq.label, q.label, _name(dq.outputs[0]), after, params
    )


def to_codes(values: Array, scale: Array, zero_point: Array, dtype: Any) -> Array:
    """The codes a DequantizeLinear's float output stands for (openvino's conversion keeps
    only the dequantized tensor of a QuantizeLinear -> DequantizeLinear pair: one
    FakeQuantize): round(values / scale) + zero point, exact for 8-bit codes."""
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        steps = np.rint(np.asarray(values, np.float64) / np.float64(np.asarray(scale).reshape(())))
        codes = steps + np.asarray(zero_point).astype(np.int64).reshape(())
    return np.clip(np.nan_to_num(codes), info.min, info.max).astype(dtype)


def _drops_max(graph: Graph, pool: Layer, dq: Layer, q: Layer) -> bool:
    """onnxruntime's DropQDQNodes on a MaxPool: opset >= 12, constant rank-0 scales and zero
    points of equal values on both sides."""
    if opset_of(pool) < 12:
        return False
    values = [_constant(graph, la, k) for la in (dq, q) for k in (1, 2)]
    if any(v is None or v.ndim != 0 for v in values):
        return False
    s1, z1, s2, z2 = values
    assert s1 is not None and s2 is not None and z1 is not None and z2 is not None
    return bool(s1 == s2 and z1 == z2 and z1.dtype == z2.dtype)


def _s8_to_u8(graph: Graph) -> Graph:
    """onnxruntime's QDQS8ToU8 rewrite (x86): an int8 QuantizeLinear -> DequantizeLinear pair
    with the same constant rank-0 scale and zero point, the Q's output read by that DQ alone,
    becomes a uint8 pair with the zero point + 128.  The codes between them are u8; what the
    DQ gives is unchanged, but a pool fused after it computes `v / y_scale + zp` with the
    shifted zero point, which rounds near-ties otherwise (measured: 6 of 96 k2s2 cells)."""
    initializers: dict[str, Any] = dict(graph.initializers)
    changed: dict[int | None, Layer] = {}
    for q in graph.layers:
        if not _onnx(q, "QuantizeLinear") or not q.outputs:
            continue
        readers = _readers(graph, q, q.outputs[0])
        if len(readers) != 1 or not _onnx(readers[0][0], "DequantizeLinear"):
            continue
        dq = readers[0][0]
        values = [_constant(graph, la, k) for la in (q, dq) for k in (1, 2)]
        if any(v is None or v.ndim != 0 for v in values):
            continue
        s1, z1, s2, z2 = values
        assert s1 is not None and s2 is not None and z1 is not None and z2 is not None
        if z1.dtype != np.int8 or z2.dtype != np.int8 or s1 != s2 or z1 != z2:
            continue
        name = f"{q.label}/zero_point_u8"
        initializers[name] = np.asarray(int(z1) + 128, dtype=np.uint8)
        for la in (q, dq):
            ports = list(la.inputs)
            ports[2] = replace(ports[2], names=(name,), element_type="u8")
            changed[la.id] = replace(la, inputs=tuple(ports))
    if not changed:
        return graph
    layers = tuple(changed.get(la.id, la) for la in graph.layers)
    return replace(graph, layers=layers, initializers=initializers, _by_id={})


def onnxruntime_graph(graph: Graph) -> tuple[Graph, list[Fusion]]:
    """The ONNX graph as onnxruntime runs it at its default optimization level (unchanged,
    with no fusions, for an IR or a model without QDQ groups)."""
    if graph.format != "onnx":
        return graph, []
    graph = _s8_to_u8(graph)
    groups = onnxruntime_fusions(graph)
    if not groups:
        return graph, []
    initializers: dict[str, Any] = dict(graph.initializers)
    gone: set[int | None] = set()
    new: dict[int | None, Layer] = {}
    for fusion, pool, dq, q in groups:
        gone.add(q.id)
        if len(_readers(graph, dq, dq.outputs[0])) == 1 and not _graph_output(graph, dq):
            gone.add(dq.id)
        new[pool.id] = _fused_layer(graph, fusion, pool, dq, q, initializers)
    layers = tuple(new.get(la.id, la) for la in graph.layers if la.id not in gone)
    fused = replace(
        graph,
        layers=layers,
        edges=_edges(layers, initializers),
        initializers=initializers,
        _by_id={},
    )
    return fused, [g[0] for g in groups]


def _graph_output(graph: Graph, layer: Layer) -> bool:
    return any(
        r.type == "Result" for port in layer.outputs for r, _ in _readers(graph, layer, port)
    )


def _fused_layer(
    graph: Graph, fusion: Fusion, pool: Layer, dq: Layer, q: Layer, initializers: dict[str, Any]
) -> Layer:
    out = q.outputs[0]
    if fusion.becomes == "MaxPool on codes":
        x = replace(dq.inputs[0], id=0)
        return replace(pool, inputs=(x,), outputs=(replace(out, id=1),))
    ports = []
    for k, (src, i) in enumerate(((dq, 0), (dq, 1), (dq, 2), (q, 1), (q, 2))):
        if i < len(src.inputs) and _name(src.inputs[i]):
            ports.append(replace(src.inputs[i], id=k))
            continue
        # an omitted zero point is 0 of the code type (the fused node lists every input)
        dtype = np.uint8 if _code_type(graph, dq, "in") == "uint8" else np.int8
        name = f"{pool.label}/{'x' if src is dq else 'y'}_zero_point"
        initializers[name] = np.zeros((), dtype=dtype)
        ports.append(Port(k, None, (name,), (), None))
    domain = "com.microsoft"
    attrs = dict(pool.attrs)
    return replace(
        pool,
        type=fusion.becomes,
        version="opset1",
        domain=domain,
        attrs=attrs,
        data={k: str(v) for k, v in attrs.items()},
        inputs=tuple(ports),
        outputs=(replace(out, id=len(ports)),),
    )


def _edges(layers: tuple[Layer, ...], initializers: Mapping[str, Any]) -> tuple[Edge, ...]:
    """Edges from each tensor's producer to its readers (as the ONNX reader derives them)."""
    producer: dict[str, tuple[int, int]] = {}
    for layer in layers:
        for port in layer.outputs:
            if port.names and layer.id is not None:
                producer[port.names[0]] = (layer.id, port.id)
    edges = []
    for layer in layers:
        for port in layer.inputs:
            name = _name(port)
            if not name or name in initializers or name not in producer:
                continue
            assert layer.id is not None
            src = producer[name]
            edges.append(Edge(src[0], src[1], layer.id, port.id, None))
    return tuple(edges)


def _with_outputs(graph: Graph, names: list[str]) -> Graph:
    """The graph with a Result reading each tensor of `names` (as a probe adds outputs)."""
    top = max((la.id or 0) for la in graph.layers) + 1
    added = []
    for k, name in enumerate(dict.fromkeys(names)):
        lid = top + k
        port = Port(0, None, (name,), None, None)
        added.append(
            Layer(lid, f"{name}/probe", "Result", "opset1", {}, (port,), (), graph.path, None, lid)
        )
    layers = (*graph.layers, *added)
    return replace(graph, layers=layers, edges=_edges(layers, graph.initializers), _by_id={})


def _pooling_tensors(graph: Graph) -> list[str]:
    from .ops import REGISTRY

    names = []
    for layer in graph.layers:
        if layer.type == "Result" or not REGISTRY.is_pooling(layer):
            continue
        for port in (*layer.inputs, *layer.outputs):
            name = _name(port)
            if name and name not in graph.initializers:
                names.append(name)
    return names


def probed_onnxruntime_graph(graph: Graph) -> tuple[Graph, list[Fusion], bool]:
    """The graph as onnxruntime runs it when a probe reads every pooling node's input and
    output tensors (of the graph as it runs unprobed): (graph, fusions, whether the probe
    changes what onnxruntime runs).  A probe can undo a rewrite: an int8 pair whose codes become
    a graph output is not turned into u8 (measured), so the fused node runs on int8 codes
    with the zero points as written."""
    plain, fusions = onnxruntime_graph(graph)
    if not fusions:
        return graph, [], False
    wanted = _pooling_tensors(plain)
    probed, probed_fusions = onnxruntime_graph(_with_outputs(graph, wanted))
    probes = {la.id for la in probed.layers if la.name and la.name.endswith("/probe")}
    probes -= {la.id for la in graph.layers}
    layers = tuple(la for la in probed.layers if la.id not in probes)
    kept = replace(probed, layers=layers, edges=_edges(layers, probed.initializers), _by_id={})
    same = [(f.node, f.becomes) for f in fusions] == [(f.node, f.becomes) for f in probed_fusions]
    shifted = _u8_pairs(plain) != _u8_pairs(kept)
    return kept, probed_fusions, not same or shifted


def _u8_pairs(graph: Graph) -> set[str]:
    return {name for name in graph.initializers if name.endswith("/zero_point_u8")}


def onnxruntime_codes(
    pl: Any, ins: list[Array | None], like: Any, meaning: Any
) -> tuple[Any, list[Array], Array, Array | None]:
    """A fused node on openvino's codes (convert-report): (plan, onnxruntime's output codes,
    the input, irpool's reading of what openvino's low-precision pooling makes of the same
    codes or None where it is not modelled).  Where onnxruntime turned an int8 group into u8
    (its zero point then of u8) the int8 codes are shifted by 128 on the way in and out."""
    x = ins[0]
    assert x is not None
    zp = ins[2] if len(ins) > 2 else None
    shift = x.dtype == np.int8 and zp is not None and zp.dtype == np.uint8
    run_ins = list(ins)
    if shift:
        run_ins[0] = (x.astype(np.int16) + 128).astype(np.uint8)
    used, want, _ = meaning(pl, run_ins, like)
    if shift:
        want = [(w.astype(np.int16) - 128).astype(np.int8) for w in want]
    return used, want, x, _lpt_codes(pl, used, x, ins)


def _lpt_codes(pl: Any, used: Any, x: Array, ins: list[Array | None]) -> Array | None:
    """The codes openvino's CPU plugin computes for a QDQ group from codes `x`, as irpool reads
    its low-precision transformations (irpool/lpt.py).  openvino's conversion (convert_model)
    folds each QuantizeLinear -> DequantizeLinear pair into one FakeQuantize whose input and
    output ranges are [(T_min - zp) * scale, (T_max - zp) * scale]; LPT decomposes the first
    into codes and a dequantization, moves the dequantization after the pool, pools the codes
    and fuses the second FakeQuantize (its input range divided by the scale, plus the shift).
    A ceil_mode pool LPT leaves in float32 (`_float_codes`)."""
    from . import lpt
    from .kernel import pool

    kind = pl.layer.type
    if kind not in ("QLinearAveragePool", "QLinearGlobalAveragePool") or len(ins) < 4:
        return None
    if kind == "QLinearAveragePool" and _int_attr(pl.layer, "ceil_mode"):
        return _float_codes(pl, x, ins)
    f32 = np.float32
    s1, s2 = (np.asarray(ins[k], dtype=f32).reshape(()) for k in (1, 3))
    z1 = int(np.asarray(ins[2] if ins[2] is not None else 0).reshape(()))
    z2 = int(np.asarray(ins[4] if len(ins) > 4 and ins[4] is not None else 0).reshape(()))
    info = np.iinfo(x.dtype)

    def folded(scale: Any, zp: int) -> lpt.FakeQuantizeParams:
        lo = f32(f32(info.min - zp) * scale)
        hi = f32(f32(info.max - zp) * scale)
        return lpt.fq_params(256, [np.asarray(v) for v in (lo, hi, lo, hi)], x.ndim)

    p_in, p_out = folded(s1, z1), folded(s2, z2)
    d = lpt.decompose(p_in)
    if d is None:
        return None
    # the FakeQuantize's step number (code - T_min), from LPT's lowest code up
    codes = np.asarray(x.astype(np.float64) - info.min + d.lo, dtype=f32)
    if kind == "QLinearGlobalAveragePool":
        axes = tuple(range(2, x.ndim))
        count = int(np.prod([x.shape[a] for a in axes]))
        sums = np.sum(codes.astype(np.float64), axis=axes, keepdims=True)
        means = lpt.reduce_mean_of_codes(sums, count)
    else:
        from .lpt_run import average_codes

        floats, _ = pool(codes, used)
        means = average_codes(codes, used, floats)
    fused = lpt.fused_ranges(p_out, d.for_rank(x.ndim))
    values = lpt.cpu_fake_quantize(means, fused, fused=True, fma_out=True)
    return to_codes(values, s2, np.asarray(z2), x.dtype)


def _folded(x: Array, scale: Array, zp: int) -> Any:
    """The FakeQuantize openvino's conversion makes of a QuantizeLinear -> DequantizeLinear
    pair: input and output range [(T_min - zp) * scale, (T_max - zp) * scale]."""
    from . import lpt

    f32 = np.float32
    info = np.iinfo(x.dtype)
    lo = f32(f32(info.min - zp) * scale)
    hi = f32(f32(info.max - zp) * scale)
    return lpt.fq_params(256, [np.asarray(v) for v in (lo, hi, lo, hi)], x.ndim)


def _float_codes(pl: Any, x: Array, ins: list[Array | None]) -> Array:
    """The codes openvino's CPU plugin computes for a QDQ AveragePool with ceil_mode from codes
    `x`.  openvino's conversion makes it an AvgPool-16 with rounding_type ceil_torch, which LPT
    does not transform: the runtime model is a Subgraph (the first FakeQuantize), a Pooling node
    in f32 and a Subgraph (the second).  Measured bit for bit (openvino 2026.4.1): the first
    FakeQuantize's output fma(step, osc, ol), the pool in float32 as openvino's convention
    computes it, the second FakeQuantize clamp, x*isc + (-il*isc) (the shift the product of the
    rounded isc, not -il*(levels-1)/(ih-il): that form misses up to 32 of 1,296 codes at .5
    ties), round half to even."""
    from . import lpt
    from .kernel import pool

    f32 = np.float32
    s1, s2 = (np.asarray(ins[k], dtype=f32).reshape(()) for k in (1, 3))
    z1 = int(np.asarray(ins[2] if ins[2] is not None else 0).reshape(()))
    z2 = int(np.asarray(ins[4] if len(ins) > 4 and ins[4] is not None else 0).reshape(()))
    p_in, p_out = _folded(x, s1, z1), _folded(x, s2, z2)
    info = np.iinfo(x.dtype)
    steps = np.asarray(x.astype(np.float64) - info.min, dtype=f32)
    lev = f32(255)
    with np.errstate(all="ignore"):
        values = lpt.fma(steps, (p_in.oh - p_in.ol) / lev, p_in.ol)
        plan = pl.bound.plan(tuple(x.shape), "float32", "openvino")
        y, _ = pool(values, plan)
        isc = lev / (p_out.ih - p_out.il)
        clamped = np.minimum(p_out.ih, np.maximum(p_out.il, np.asarray(y, dtype=f32)))
        t = np.asarray(clamped * isc + (-p_out.il * isc), dtype=f32)
        codes = np.rint(t).astype(np.int64) + info.min
    return np.clip(codes, info.min, info.max).astype(x.dtype)


def qdq_divergence(
    fusion: Fusion, layer: Layer, got: Array | None, want: Array, lpt_codes: Array | None
) -> str:
    """The divergence row a QDQ group's differing codes fall under (D45, or D45b where the
    include-pad padding of a zero-point group is at stake), with what irpool's reading of
    openvino's arithmetic says of them."""
    from .divergences import BY_ID

    pads = layer.attrs.get("pads") or ()
    padded = bool(_int_attr(layer, "count_include_pad")) and any(
        int(v) for v in (pads if isinstance(pads, (list, tuple)) else ())
    )
    zero_point = bool(fusion.params) and int(np.asarray(fusion.params[1]).reshape(())) not in (
        0,
        128 if np.asarray(fusion.params[1]).dtype == np.uint8 else 0,
    )
    ceil = bool(_int_attr(layer, "ceil_mode"))
    key = "D45b" if padded and zero_point and not ceil else "D45"
    head = f"{key}: {BY_ID[key].title}"
    if got is None or got.shape != want.shape:
        return head
    differ = got != want
    n = int(differ.sum())
    steps = int(np.abs(got.astype(np.int16) - want.astype(np.int16)).max())
    up = int((got.astype(np.int16) > want.astype(np.int16))[differ].sum())
    said = f"{head}: {n} of {got.size} codes differ (by up to {steps} step(s); openvino {up} up, "
    said += f"{n - up} down)"
    if lpt_codes is None:
        return said + "; irpool does not model openvino's arithmetic for this pool"
    lpt_miss = int((lpt_codes != got).sum())
    if lpt_miss:
        return (
            f"{said}; irpool's reading of openvino's low-precision arithmetic misses {lpt_miss} "
            f"of openvino's codes: a runtime or irpool bug"
        )
    if ceil:
        return (
            f"{said}; irpool's reading of openvino's arithmetic (LPT leaves the ceil_mode pool, "
            "an AvgPool-16 with ceil_torch, in float32: the dequantized codes pooled in float32, "
            "then the second FakeQuantize) reproduces every openvino code"
        )
    return (
        f"{said}; irpool's reading of openvino's low-precision pooling (the codes pooled, "
        "f32(sum) * f32(1/n), the requantization a fused FakeQuantize"
        + (", the padding code 0, which is not the zero point" if key == "D45b" else "")
        + ") reproduces every openvino code"
    )


def _int_attr(layer: Layer, name: str) -> int:
    value = layer.attrs.get(name, 0)
    return int(value) if isinstance(value, (int, float, np.integer)) else 0
