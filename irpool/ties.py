"""The .5 ties of a quantized pooling chain: FakeQuantize -> pooling layer -> FakeQuantize.

The FakeQuantize after the pooling layer rounds each output to a quantization step.  Three
readings of the chain compute the number it rounds differently, and where that number is an
exact .5 tie (or within float32 rounding of one) they can land on different steps:

* `openvino`: the CPU plugin after its low-precision transformations (LPT; irpool/lpt.py): the
  pool on the integer codes of the first FakeQuantize, the second FakeQuantize fused into it
  with its input range divided by the scale: clamp, x*isc + ish (one fma where the plugin makes
  it a post-op of the Pooling/Reduce node), round half to even;
* `reference`: the FakeQuantize specification in float32, as openvino's reference
  implementation computes it, around the pooling layer computed in float32, no LPT;
* `lpt_off`: the CPU plugin with LPT switched off (LP_TRANSFORMS_MODE=False, f32): the first
  FakeQuantize as the plugin's Subgraph computes it (its output step an fma), the pool in
  float32, the second FakeQuantize (a FakeQuantize node after an AvgPool, a Subgraph after a
  MaxPool, a post-op of a Reduce node: get_runtime_model(), openvino 2026.4.1) with x*isc +
  ish as one fma (measured: 0 mismatching codes on u8, i8 and zero-point chains of each kind;
  rounding that product first mismatches up to 40 of 1,800).

All three start from the same tensor: the first FakeQuantize's input as irpool's run computes
it under openvino's convention.  For every output cell where they give different steps,
`chain_ties` gives the number before rounding in each reading, which way each rounds, the
codes, and the exact value the specification defines (the first FakeQuantize's steps
dequantized, pooled and re-quantized in rational arithmetic): a cell whose exact value is
k + 1/2 is a true tie; the others are near-ties that float32 rounding pushes either side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from . import lpt
from .compare_lpt import QuantizedLayer, quantized_layer
from .errors import IrpoolError
from .model import Graph, Layer

Array = npt.NDArray[Any]
F32 = np.float32

READINGS = ("openvino", "reference", "lpt_off")
TITLES = {
    "openvino": "openvino (LPT)",
    "reference": "reference (spec in float)",
    "lpt_off": "openvino, LPT off",
}
FAR = 0.01
"""A differing cell whose exact value is farther than this (in steps) from k + 1/2 differs for
another reason than rounding."""
SAME = {"openvino": "LPT on", "reference": "the reference"}
CELLS_SHOWN = 20
"""The text lists this many differing cells (the JSON lists them all, up to CELLS_KEPT)."""
CELLS_KEPT = 10_000
TIE_ULPS = 8
"""An exact value this many float32 ulps from k + 1/2 counts as a tie: the model's float32
constants (2.55 is not 2.55) move a tie intended in decimals by a few ulps."""


@dataclass
class Rounding:
    """One reading of one cell: the value before rounding, which way it rounds, the code."""

    value: float
    rounds: str
    """up, down, half to even (up), half to even (down), exact, below the range, above the range."""
    code: int

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "value_text": _f32(self.value),
            "rounds": self.rounds,
            "code": self.code,
        }


@dataclass
class TieCell:
    index: tuple[int, ...]
    exact: Fraction | None
    """The specification's value before rounding in exact arithmetic (None: not computed)."""
    readings: dict[str, Rounding]

    @property
    def off_tie(self) -> float | None:
        """The exact value less the nearest k + 1/2."""
        if self.exact is None:
            return None
        return float(self.exact - (Fraction(math.floor(self.exact)) + Fraction(1, 2)))

    @property
    def tie(self) -> bool | None:
        """The exact value is k + 1/2, or within TIE_ULPS float32 ulps of it."""
        if self.exact is None or self.off_tie is None:
            return None
        return abs(self.off_tie) <= TIE_ULPS * float(np.spacing(F32(abs(float(self.exact)))))

    def exact_text(self) -> str:
        if self.exact is None or self.off_tie is None:
            return "?"
        half = math.floor(self.exact) + 0.5
        if self.off_tie == 0:
            return f"{half:g} exactly (a .5 tie)"
        sign = "+" if self.off_tie > 0 else "-"
        what = "a .5 tie but for the float32 constants" if self.tie else "not a tie"
        return f"{half:g} {sign} {abs(self.off_tie):.2g} ({what})"


@dataclass
class ChainTies:
    """The ties of one pooling layer between two FakeQuantize layers."""

    layer: str
    source: str
    post: str
    cells: int
    levels: int
    code_type: str
    """The codes shown: u8 or i8 (LPT's decomposition of the second FakeQuantize), or `step`
    (0 .. levels-1) where LPT does not decompose it."""
    readings: list[str]
    """The readings shown: openvino and reference, and lpt_off where it differs from both."""
    differing: list[TieCell] = field(default_factory=list)
    differing_count: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    """Per pair "a/b": the cells where readings a and b give different codes."""
    ties: int = 0
    """Differing cells whose exact value is a .5 tie."""
    directions: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per reading, over the differing exact ties: how many it rounds up and down."""
    inputs: str = ""
    lpt_off_same_as: str | None = None
    """The reading whose codes LPT off gives on every cell (then it is not shown)."""
    far: int = 0
    """Differing cells whose exact value is more than FAR steps from k + 1/2: not a rounding
    matter (an AvgPool's padded taps are LPT's code 0, which a zero point makes -zp*scale)."""
    through: list[str] = field(default_factory=list)
    """The MaxPool layers between the first FakeQuantize and the layer (they pool its codes)."""

    def summary(self) -> str:
        ov = self.directions.get("openvino", {})
        near = self.differing_count - self.ties - self.far
        text = (
            f"{self.differing_count:,} of {self.cells:,} cells get different codes; "
            f"{self.ties:,} of them {'is a .5 tie' if self.ties == 1 else 'are .5 ties'}"
        )
        if self.ties:
            text += f" (openvino's LPT rounds {ov.get('up', 0):,} up, {ov.get('down', 0):,} down"
            ref = self.directions.get("reference", {})
            text += f"; the reference {ref.get('up', 0):,} up, {ref.get('down', 0):,} down)"
        if near:
            text += f", {near:,} near-ties that float32 rounding puts on either side"
        if self.far:
            text += (
                f", {self.far:,} far from any .5 (the readings compute different values there, "
                "not a rounding)"
            )
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "fake_quantize_before": self.source,
            "fake_quantize_after": self.post,
            "through": self.through,
            "levels": self.levels,
            "code_type": self.code_type,
            "inputs": self.inputs,
            "cells": self.cells,
            "readings": self.readings,
            "lpt_off_same_as": self.lpt_off_same_as,
            "differing_cells": self.differing_count,
            "exact_ties": self.ties,
            "far_from_ties": self.far,
            "pairs": self.counts,
            "tie_directions": self.directions,
            "summary": self.summary(),
            "listed": [
                {
                    "index": list(c.index),
                    "exact": None if c.exact is None else str(c.exact),
                    "exact_value": None if c.exact is None else float(c.exact),
                    "tie": c.tie,
                    "off_tie": c.off_tie,
                    **{k: c.readings[k].to_json() for k in self.readings},
                }
                for c in self.differing[:CELLS_KEPT]
            ],
        }


def _f32(v: float) -> str:
    return str(np.format_float_positional(F32(v), unique=True, trim="-"))


def why_not(graph: Graph, layer: Layer) -> str | None:
    """None where `chain_ties` applies to the layer, else why not (also None where no
    FakeQuantize is around it at all: nothing to say)."""
    q = quantized_layer(graph, layer)
    if q is None:
        return None
    if q.post is None:
        return (
            "no FakeQuantize reads its output: nothing rounds it to codes, so it has no .5 ties "
            "(its readings differ by float32 rounding only)"
        )
    return None


def _between(graph: Graph, layer: Layer, source: Layer) -> list[Layer]:
    """The MaxPool layers between the first FakeQuantize and the layer, in order (LPT moves
    the dequantization past them: they pool the codes)."""
    chain: list[Layer] = []
    found = graph.feeder(layer)
    while found is not None and found[0] is not source:
        chain.insert(0, found[0])
        found = graph.feeder(found[0])
    return chain


def _float_pool(bound: Any, kind: str, x: Array) -> Array:
    from .run import run_layer

    ins: list[Array | None] = [x]
    if kind.startswith("reduce"):
        ins += [None] * (len(bound.layer.inputs) - 1)
    _, outs = run_layer(bound, ins, convention="openvino")
    return np.asarray(outs[0], dtype=F32)


def _rounds(t: Array, steps: Array) -> Array:
    """Which way each value rounds to its step."""
    with np.errstate(all="ignore"):
        frac = t - np.floor(t)
    out = np.full(t.shape, "exact", dtype=object)
    out[steps > t] = "up"
    out[steps < t] = "down"
    half = frac == 0.5
    out[half & (steps > t)] = "half to even (up)"
    out[half & (steps < t)] = "half to even (down)"
    return out


def _readings(
    graph: Graph, q: QuantizedLayer, layer: Layer, x0: Array, fq_out: Array
) -> tuple[dict[str, tuple[Array, Array, Array]], Array, Any]:
    """Per reading: (the value before rounding, the step, which way); the first
    FakeQuantize's steps (integers) and the bound layer."""
    from .ops import bind
    from .run import pool_codes

    bound = bind(graph, layer, "openvino")
    p1 = lpt.fq_params(q.levels, list(q.ranges), x0.ndim)
    d = lpt.decompose(p1)
    assert d is not None  # quantized_layer found one
    codes = d.codes(np.asarray(fq_out, dtype=F32), p1)
    through = [bind(graph, mid, "openvino") for mid in _between(graph, layer, q.source)]
    for mid in through:  # MaxPools of the codes before the layer
        codes = pool_codes(mid, "max", codes)[1]
    _, pooled, _ = pool_codes(bound, q.kind, codes)
    p2 = lpt.fq_params(q.post_levels, list(q.post_ranges), pooled.ndim)
    top = F32(p2.levels - 1)
    fused = lpt.fused_ranges(p2, d.for_rank(pooled.ndim))
    t_lpt = lpt.cpu_position(pooled, fused, q.kind != "max")
    out: dict[str, tuple[Array, Array, Array]] = {}
    steps = np.rint(t_lpt)
    out["openvino"] = (t_lpt, steps, _rounds(t_lpt, steps))

    def floats(v: Array) -> Array:
        for mid in through:
            v = _float_pool(mid, "max", v)
        return _float_pool(bound, q.kind, v)

    y_ref = floats(lpt.reference_fake_quantize(x0, p1))
    t_ref, low, high = lpt.reference_position(y_ref, p2)
    steps = np.where(low, F32(0), np.where(high, top, np.rint(t_ref)))
    how = _rounds(t_ref, steps)
    how[low] = "below the range"
    how[high] = "above the range"
    out["reference"] = (t_ref, steps, how)

    y_off = floats(lpt.cpu_fake_quantize(x0, p1, fma_out=True))
    t_off = lpt.cpu_position(y_off, p2, fused=True)
    steps = np.rint(t_off)
    out["lpt_off"] = (t_off, steps, _rounds(t_off, steps))
    s1 = codes - F32(d.lo)
    return out, s1, bound


def _exact_inputs(q: QuantizedLayer, bound: Any, s1: Array) -> tuple[Array, Array, Array] | None:
    """Per output cell, what the exact value needs: the sum (a mean pool) or the maximum of
    the first FakeQuantize's steps over the window, the taps inside the input, the divisor."""
    from .kernel.windows import divisor
    from .run import pool_codes, run_pooling

    if q.kind in ("max", "reduce_max"):
        _, top, _ = pool_codes(bound, q.kind, s1)
        ones = np.ones_like(top)
        return np.asarray(top, dtype=np.float64), ones, ones
    if q.kind == "reduce_mean":
        fp, _, _ = pool_codes(bound, q.kind, s1)
        axes = tuple(getattr(fp, "axes", ()))
        if 1 in axes:
            return None  # a per-channel range would mix channels
        keep = bool(getattr(fp, "keep", True))
        sums = np.sum(s1.astype(np.float64), axis=axes, keepdims=keep)
        count = np.full(sums.shape, float(getattr(fp, "count", 1)))
        return sums, count, count
    p, outs = run_pooling(bound, s1)
    div = np.broadcast_to(np.asarray(divisor(p.via or p), dtype=np.float64), outs[0].shape)
    sums = np.rint(np.asarray(outs[0], dtype=np.float64) * div)
    _, with_ones = run_pooling(bound, np.ones_like(s1))
    inside = np.rint(np.asarray(with_ones[0], dtype=np.float64) * div)
    return sums, inside, np.asarray(div)


def _exact(
    q: QuantizedLayer, index: tuple[int, ...], parts: tuple[Array, Array, Array], rank: int
) -> Fraction:
    """The specification in exact arithmetic: the steps dequantized, pooled, re-quantized."""
    total, inside, div = (float(a[index]) for a in parts)
    p1 = lpt.fq_params(q.levels, list(q.ranges), rank)
    p2 = lpt.fq_params(q.post_levels, list(q.post_ranges), rank)
    c = index[1] if len(index) > 1 else 0

    def at(a: Array) -> Fraction:
        flat = a.reshape(-1) if a.size > 1 else a.reshape(1)
        return Fraction(float(flat[c] if flat.size > 1 else flat[0]))

    step1 = (at(p1.oh) - at(p1.ol)) / (q.levels - 1)
    if q.kind in ("max", "reduce_max"):
        m = Fraction(int(total)) * step1 + at(p1.ol)
    else:
        m = (Fraction(int(total)) * step1 + int(inside) * at(p1.ol)) / Fraction(div)
    return (m - at(p2.il)) / (at(p2.ih) - at(p2.il)) * (q.post_levels - 1)


def chain_codes(graph: Graph, layer: Layer, tensors: dict[str, Array]) -> dict[str, Array]:
    """Every output cell's code under each reading (READINGS), as chain_ties compares them;
    {} where the layer is not FakeQuantize -> layer -> FakeQuantize."""
    q = quantized_layer(graph, layer)
    if q is None or q.post is None or why_not(graph, layer) is not None:
        return {}
    before = graph.feeder(q.source)
    if before is None or not q.source.outputs:
        return {}
    x0 = np.asarray(tensors[f"{before[0].label}:{before[1]}"], dtype=F32)
    fq_out = np.asarray(tensors[f"{q.source.label}:{q.source.outputs[0].id}"], dtype=F32)
    readings, _, _ = _readings(graph, q, layer, x0, fq_out)
    post_d = lpt.decompose(lpt.fq_params(q.post_levels, list(q.post_ranges), 4))
    lo = 0 if post_d is None else int(post_d.lo)
    return {k: (v[1] + lo).astype(np.int64) for k, v in readings.items()}


def chain_ties(
    graph: Graph, layer: Layer, tensors: dict[str, Array], inputs: str = ""
) -> ChainTies | None:
    """The ties of `layer` (None: it is not FakeQuantize -> layer -> FakeQuantize, see
    why_not).  `tensors`: every layer output of irpool's run under openvino's convention,
    keyed "label:port" (RunResult.tensors)."""
    q = quantized_layer(graph, layer)
    if q is None or q.post is None or why_not(graph, layer) is not None:
        return None
    before = graph.feeder(q.source)
    if before is None or not q.source.outputs:
        return None
    x0 = np.asarray(tensors[f"{before[0].label}:{before[1]}"], dtype=F32)
    fq_out = np.asarray(tensors[f"{q.source.label}:{q.source.outputs[0].id}"], dtype=F32)
    readings, s1, bound = _readings(graph, q, layer, x0, fq_out)
    post_d = lpt.decompose(lpt.fq_params(q.post_levels, list(q.post_ranges), 4))
    lo = 0 if post_d is None else int(post_d.lo)
    code_type = "step" if post_d is None else post_d.precision
    steps = {k: v[1] for k, v in readings.items()}
    differs = (steps["openvino"] != steps["reference"]) | (steps["openvino"] != steps["lpt_off"])
    shown = ["openvino", "reference"]
    same_as = [k for k in ("openvino", "reference") if (steps["lpt_off"] == steps[k]).all()]
    if not same_as:
        shown.append("lpt_off")
    pairs = {
        f"{a}/{b}": int((steps[a] != steps[b]).sum())
        for a, b in (("openvino", "reference"), ("openvino", "lpt_off"), ("reference", "lpt_off"))
    }
    report = ChainTies(
        layer.label,
        q.source.label,
        q.post.label,
        int(differs.size),
        q.post_levels,
        code_type,
        shown,
        counts=pairs,
        inputs=inputs,
        lpt_off_same_as=same_as[0] if same_as else None,
        through=[mid.label for mid in _between(graph, layer, q.source)],
    )
    where = np.argwhere(differs)
    report.differing_count = len(where)
    try:
        parts = _exact_inputs(q, bound, s1)
    except IrpoolError:
        parts = None
    directions: dict[str, dict[str, int]] = {k: {"up": 0, "down": 0} for k in READINGS}
    for idx in where:
        index = tuple(int(i) for i in idx)
        exact = None if parts is None else _exact(q, index, parts, len(index))
        cell = TieCell(
            index,
            exact,
            {
                k: Rounding(float(t[index]), str(how[index]), int(s[index]) + lo)
                for k, (t, s, how) in readings.items()
            },
        )
        if cell.off_tie is not None and abs(cell.off_tie) > FAR:
            report.far += 1
        if cell.tie:
            report.ties += 1
            for k in READINGS:
                r = readings[k]
                up = float(r[1][index]) > math.floor(exact)  # type: ignore[arg-type]
                directions[k]["up" if up else "down"] += 1
        if len(report.differing) < CELLS_KEPT:
            report.differing.append(cell)
    report.directions = {k: v for k, v in directions.items() if k in shown}
    return report


def format_ties(t: ChainTies) -> list[str]:
    """The lines explain prints under the layer."""
    lines = [
        f'  quantized chain: FakeQuantize "{t.source}" -> '
        + "".join(f'"{mid}" -> ' for mid in t.through)
        + "this layer -> FakeQuantize "
        f'"{t.post}" ({t.levels} levels; codes {t.code_type})',
        f"    readings: {'; '.join(TITLES[k] for k in t.readings)}"
        + (
            ""
            if "lpt_off" in t.readings
            else f"; LPT off gives the same codes as {SAME[t.lpt_off_same_as or 'reference']}"
        ),
        f"    on {t.inputs}" if t.inputs else "",
        f"    {t.summary()}",
    ]
    lines = [line for line in lines if line]
    for c in t.differing[:CELLS_SHOWN]:
        lines.append(f"    cell {c.index}: exact {c.exact_text()}")
        for k in t.readings:
            r = c.readings[k]
            lines.append(f"      {TITLES[k]}: {_f32(r.value)} rounds {r.rounds} -> code {r.code}")
    if t.differing_count > CELLS_SHOWN:
        lines.append(f"    ... {t.differing_count - CELLS_SHOWN:,} more cells (--json lists them)")
    return lines


def explain_ties(
    graph: Graph,
    labels: list[str],
    given: Any = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    limit: int | None = None,
) -> dict[str, ChainTies | str]:
    """For each explained layer (by label) that sits between FakeQuantize layers: its ties on
    the given inputs (else random ones), or why they are not listed.  The net is run once by
    irpool under openvino's convention; a net irpool does not run gives the reason."""
    from .inputs import draw
    from .run import run_graph

    layers = {la.label: la for la in graph.layers if la.label in labels}
    said: dict[str, ChainTies | str] = {}
    chains = []
    for label, layer in layers.items():
        if quantized_layer(graph, layer) is None:
            continue
        reason = why_not(graph, layer)
        if reason is not None:
            said[label] = reason
        else:
            chains.append(layer)
    if not chains:
        return said
    try:
        arrays, sources = draw(graph, given, seed, low, high, False, limit)
    except IrpoolError as e:
        return {**said, **{la.label: f"no inputs for its .5 ties: {e.message}" for la in chains}}
    what = "; ".join(_source_text(s) for s in sources)
    try:
        tensors = run_graph(graph, arrays, "openvino", limit=limit).tensors
    except IrpoolError as e:
        try:
            tensors = _from_openvino(graph, chains, arrays)
        except IrpoolError:
            for layer in chains:
                said[layer.label] = f"its .5 ties need the net run, and irpool says: {e.message}"
            return said
        what += "; the first FakeQuantize's output from openvino (irpool does not run the net)"
    for layer in chains:
        found = chain_ties(graph, layer, tensors, what)
        if found is not None:
            said[layer.label] = found
    return said


def _from_openvino(graph: Graph, chains: list[Layer], arrays: dict[str, Array]) -> dict[str, Array]:
    """The tensors chain_ties reads, from openvino at f32: each chain's first FakeQuantize's
    output, which also stands for its input (re-quantizing a quantized value gives its own step
    back; the FakeQuantize may be fused into a Convolution, whose input does not exist as
    deployed)."""
    from .oracles.openvino_tensors import layer_outputs

    if graph.path is None:
        raise IrpoolError("the model has no file for openvino to read")
    sources: dict[str, Layer] = {}
    for layer in chains:
        q = quantized_layer(graph, layer)
        if q is not None and q.source.name and q.source.outputs:
            sources[q.source.label] = q.source
    got = layer_outputs(graph.path, [(la.name or "", 0) for la in sources.values()], arrays)
    tensors: dict[str, Array] = {}
    for source, value in zip(sources.values(), got, strict=True):
        tensors[f"{source.label}:{source.outputs[0].id}"] = value
        before = graph.feeder(source)
        if before is not None:
            tensors[f"{before[0].label}:{before[1]}"] = value
    return tensors


def _source_text(s: Any) -> str:
    if s.source == "random":
        return f"{s.name}: random (seed {s.seed}, uniform in [{s.low:g}, {s.high:g}))"
    return f"{s.name}: {s.label()}"
