"""`irpool compare`: every pooling layer of a real model, irpool against openvino, layer by layer.

openvino runs the whole model (any layer types); each pooling layer's actual input is taken
from it, irpool's core computes the layer under its convention, and the outputs are compared:
errors in abs/rel/ulp, mismatch counts, the worst element, the smallest tolerances that would
pass, NaN/Inf disagreements, indices exactly.  When they disagree, the other conventions and the
known divergences are tried, and the report says which one reproduces openvino's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from . import conventions as conv
from .compare_lpt import LPT_DIAGNOSIS, QuantizedLayer, compare_values, quantized_layers
from .compare_report import SCHEMA as SCHEMA
from .compare_report import CompareReport as CompareReport
from .compare_report import Diagnosis as Diagnosis
from .compare_report import LayerComparison as LayerComparison
from .compare_report import ProbeEffect as ProbeEffect
from .compare_report import Unrunnable as Unrunnable
from .compare_report import _fmt as _fmt
from .compare_report import _json_value as _json_value
from .compare_report import cell_records as cell_records
from .compare_report import conversion_record as conversion_record
from .compare_report import format_report as format_report
from .compare_report import outputs_json as outputs_json
from .compare_report import probe_effect as probe_effect
from .compare_report import progress_bar as progress_bar
from .compare_report import to_json as to_json
from .comparison import SUM_TOLERANCE as SUM_TOLERANCE
from .comparison import OutputComparison as OutputComparison
from .comparison import compare_arrays as compare_arrays
from .comparison import mismatch_cells as mismatch_cells
from .comparison import mismatch_map as mismatch_map
from .comparison import rounding_bound as rounding_bound
from .errors import IrpoolError, OracleRefused, Where
from .families import FamilyPlan
from .geometry import PoolPlan
from .model import Graph, Layer, format_shape, shape_of
from .oracles import openvino_rt, refusals
from .oracles.openvino_precision import ran_note
from .run import declared, pool_held, run_qlinear
from .shapes import PoolingLayer, infer, pooling_layer
from .skipped import Skipped, skipped_layers

Array = npt.NDArray[Any]


def layer_plans(pl: PoolingLayer, x: Array, indices_used: bool) -> dict[str, Any]:
    """The layer on input x under every convention: its plan (plan_to_json) and output shape,
    or why the convention refuses it."""
    from .run_report import plan_to_json

    out: dict[str, Any] = {}
    for name in conv.CONVENTIONS:
        try:
            p = pl.bound.plan(tuple(x.shape), x.dtype, name, indices_used)
        except IrpoolError as e:
            out[name] = {"refuses": e.message}
            continue
        out[name] = {"output_shape": list(p.output_shape), **plan_to_json(p)}
    return out


def _values_of(
    pl: PoolingLayer,
    x: Array,
    convention: str,
    like: np.dtype[Any] | None = None,
    indices_used: bool = True,
) -> tuple[PoolPlan, list[Array]]:
    """The layer on x under a convention, as openvino's probe shows it: an f16 layer whose
    input openvino held in float32 (see openvino_rt.probe_layers) is computed in float32 and
    rounded to `like` once; an integer layer that openvino runs in float32 is computed so
    (`indices_used` decides it for a MaxPool-8/14, see Convention.integers_in_float32)."""
    held = like if like is not None and like == np.float16 and x.dtype == np.float32 else None
    p, outs, held = pool_held(pl.bound, x, held, None, False, convention, indices_used)
    return p, [declared(outs[0], held), *outs[1:]]


def _agrees(
    got: list[Array],
    expected: list[Array],
    atol: float,
    rtol: float,
    allowance: Array | None = None,
) -> bool:
    for k, (g, e) in enumerate(zip(got, expected, strict=False)):
        if g.shape != e.shape:
            return False
        exact = k > 0 or g.dtype.kind in "iu"
        c = compare_arrays("", g, e, atol, rtol, exact, allowance if k == 0 else None)
        if not c.passed and c.mismatches:
            return False
        if not c.shape_ok:
            return False
    return True


def _family_values(
    pl: PoolingLayer,
    ins: list[Array | None],
    convention: str,
    like: np.dtype[Any] | None = None,
    indices_used: bool | None = None,
) -> tuple[FamilyPlan, list[Array]]:
    """A family layer on its inputs under a convention, as the oracle shows it: an f16 layer
    whose input the oracle held in float32 is computed in float32 and rounded to `like`."""
    from .run import run_layer

    p, outs = run_layer(pl.bound, ins, None, convention, indices_used)
    assert isinstance(p, FamilyPlan)
    x = ins[0]
    if like is not None and like == np.float16 and x is not None and x.dtype == np.float32:
        with np.errstate(over="ignore"):
            return p, [outs[0].astype(np.float16), *outs[1:]]
    return p, outs


def _other_values(
    pl: PoolingLayer, ins: list[Array | None], convention: str, expected: list[Array]
) -> tuple[PoolPlan | FamilyPlan, list[Array]]:
    """The layer under another convention, computed as its family's diagnosis says
    (`Diagnosing.held`), with the expected outputs' type and indices where they have them."""
    like = expected[0].dtype
    if pl.bound.family.diagnosing.held:
        x = ins[0]
        assert x is not None
        return _values_of(pl, x, convention, like, len(expected) > 1)
    return _family_values(pl, ins, convention, like, len(expected) > 1 or None)


def _order_only(
    pl: PoolingLayer,
    ins: list[Array | None],
    expected: list[Array],
    used: PoolPlan | FamilyPlan,
    got: list[Array],
    tolerances: tuple[float, float, str],
    cells: list[Any],
) -> Diagnosis | None:
    """The diagnosis of a layer whose every difference is within its family's allowance for
    another order of operations (summation order), or None."""
    atol, rtol, oracle = tolerances
    bound = pl.bound.family.allowance(used, ins, expected[0])
    if bound is None or not _agrees(got, expected, atol, rtol, bound):
        return None
    c = compare_arrays("", got[0], expected[0], 0.0, 0.0, False, bound)
    text = (
        f"summation-order rounding: the {c.rounding} differing value(s) are within "
        f"{SUM_TOLERANCE} (at most {_fmt(c.rounding_share)} of it, {_fmt(c.max_ulp)} "
        f"ulp); {oracle} sums a window in another order than irpool, the semantics "
        f"agree; first differing cells (spatial): {cells}"
    )
    return Diagnosis([used.convention], ["summation-order rounding"], cells, text)


def diagnose(
    pl: PoolingLayer,
    ins: list[Array | None],
    expected: list[Array],
    used: PoolPlan | FamilyPlan,
    got: list[Array],
    atol: float,
    rtol: float,
    oracle: str = "openvino",
    rounding: bool = False,
) -> Diagnosis:
    """Which convention reproduces the oracle's numbers for a layer of any family, and which
    divergence that is; the layer's family (`Family.diagnosing`) says which conventions are
    tried, when its allowance applies, and the wording.  `rounding`: the oracle may sum in
    another order (ONNX input), so values within the family's allowance count as reproduced."""
    from . import divergences

    rules = pl.bound.family.diagnosing
    cells = mismatch_cells(got[0], expected[0]) if got else []
    if rounding and rules.order_first:
        found = _order_only(pl, ins, expected, used, got, (atol, rtol, oracle), cells)
        if found is not None:
            return found
    x = ins[0] if ins and ins[0] is not None else np.empty((0,))
    matches: list[str] = []
    reasons: list[str] = []
    for name, other_convention in conv.CONVENTIONS.items():
        if name == used.convention or not (rules.every_convention or other_convention.diagnosed):
            continue
        try:
            other, values = _other_values(pl, ins, name, expected)
        except IrpoolError:
            continue
        allowed = rules.allowance_always or rounding
        bound = pl.bound.family.allowance(other, ins, expected[0]) if allowed else None
        if _agrees(values, expected, atol, rtol, bound):
            matches.append(name)
            reasons = reasons or divergences.between(used, other, x)
    if matches:
        who = " and ".join(f"the {m} convention" for m in matches)
        verb = "reproduces" if len(matches) == 1 else rules.many
        where = f"; first differing cells (spatial): {cells}" if cells else ""
        text = f"{who} {verb} {oracle}'s numbers: {'; '.join(reasons)}{where}"
    else:
        known = divergences.touched(used, x) if rules.lists_touched else []
        hint = f"; the input exercises {', '.join(known)}" if known else ""
        text = rules.unmatched.format(oracle=oracle, cells=cells, hint=hint)
    return Diagnosis(matches, reasons if matches else [], cells, text)


def selects(layer: Layer, name: str) -> bool:
    """Whether --layer NAME picks a layer: its name, `#N`, or (ONNX) one of its output tensors."""
    return layer.answers_to(name) or any(name in port.names for port in layer.outputs)


def _placed(error: OracleRefused, graph: Graph) -> OracleRefused:
    """A refusal that names an openvino op, placed at that layer of the file when it has one."""
    name = error.where.layer if error.where is not None else None
    layer = next((la for la in graph.layers if name is not None and la.name == name), None)
    if layer is None:
        return OracleRefused(error.message, (error.where or Where()).merged(Where(graph.path)))
    return OracleRefused(error.message, layer.where())


@dataclass(frozen=True)
class CompareOptions:
    """How compare holds each layer to the runtime (keywords of irpool.compare and options of
    `irpool compare`, by the same names)."""

    convention: str | None = None
    atol: float = 0.0
    rtol: float = 0.0
    precision: str | None = None
    exact: bool = False
    fail_fast: bool = False

    @classmethod
    def of(cls, args: Any) -> CompareOptions:
        """The options of a parsed command line (attributes by the fields' names)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


def compare_model(
    graph: Graph,
    inputs: Mapping[str, Array],
    layers: list[str] | None = None,
    options: CompareOptions | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> CompareReport:
    """Compare every (or each named) pooling layer of an IR net with openvino, or every pooling
    node of an ONNX model with onnxruntime.  Float means of an ONNX model may differ from
    onnxruntime's by summation-order rounding (rounding_bound) unless `options.exact`."""
    o = options or CompareOptions()
    convention, atol, rtol, exact = o.convention, o.atol, o.rtol, o.exact
    onnx_graph = graph.format == "onnx"
    precision, reason = _load_oracle(onnx_graph, o.precision)
    fusions: list[Any] = []
    if onnx_graph and (convention or "onnx") == "onnx":
        # a QDQ model: the nodes onnxruntime's QDQ rewrites make, as the probe leaves them
        from .qdq import probed_onnxruntime_graph

        graph, fusions, _ = probed_onnxruntime_graph(graph)
    pooling = select_layers(graph, infer(graph).pooling, layers)
    names = [pl.layer.name for pl in pooling if pl.layer.name]
    quantized = (
        quantized_layers(graph, [pl.layer for pl in pooling])
        if not onnx_graph and (convention or "openvino") == "openvino"
        else {}
    )
    probe = _probe(graph, pooling, names, inputs, precision, quantized)
    cv = convention or ("onnx" if onnx_graph else "openvino")
    rounding = onnx_graph and not exact
    report = CompareReport(
        graph.path,
        precision,
        probe.oracle,
        cv,
        atol,
        rtol,
        [],
        probe.missing,
        rounding,
        format=graph.format,
    )
    report.precision_reason = reason
    _probe_note(report, probe, graph.format)
    order = {la.index: i for i, la in enumerate(graph.topological())}
    pooling = sorted(pooling, key=lambda pl: order.get(pl.layer.index, 0))
    # onnxruntime pools f16 in float32 and drops the casts between two pooling nodes, so the
    # second one gets float32 values no output shows: they are rebuilt from the first node's
    # input with irpool's computation of it (itself compared just before)
    held: dict[tuple[int | None, int | None], Array] = {}
    for count, pl in enumerate(pooling):
        if progress:
            progress(count, len(pooling), pl.layer.label)
        if pl.layer.name not in probe.probed:
            continue
        result = _compare_layer(graph, pl, probe, quantized, report, exact, held)
        report.layers.append(result)
        # a layer irpool could not compute is reported and does not stop --fail-fast
        if o.fail_fast and not result.passed and result.error is None:
            break
    if progress:
        progress(len(pooling), len(pooling), "")
    if fusions:
        _qdq_probe(report, graph, pooling, inputs, fusions)
    if report.probe is not None and report.probe.moved and probe.plain is not None:
        _blame(report, graph, names, inputs, precision, quantized, probe.plain)
    if not layers:
        report.skipped = skipped_layers(graph)
    if onnx_graph and probe.unrun is not None:
        report.skipped += [
            Skipped(pl.layer.label, pl.spec.label, pl.layer.line, probe.unrun) for pl in pooling
        ]
    return report


def _probe_note(report: CompareReport, probe: _Probed, model_format: str) -> None:
    """What the probe did to the runtime's final outputs, or why that is not checked."""
    if probe.plain is not None:
        report.probe = probe_effect(probe.plain, probe.finals)
    elif model_format == "ir":
        report.probe_unchecked = (
            "openvino does not compile the model as it stands, so there is no run without the "
            "probe to hold its final outputs against"
        )


def _qdq_probe(
    report: CompareReport,
    graph: Graph,
    pooling: list[PoolingLayer],
    inputs: Mapping[str, Array],
    fusions: list[Any],
) -> None:
    """A QDQ model: each fused node's layer names onnxruntime's rewrite, and onnxruntime runs
    the model with and without the probe (which can undo its int8 -> u8 rewrite)."""
    from .frontends.onnx_model import read_model
    from .oracles import onnxruntime_rt

    said = {f.node: f.describe() for f in fusions}
    for layer in report.layers:
        if layer.layer in said:
            layer.notes.append(said[layer.layer])
    wanted = [
        p.names[0]
        for pl in pooling
        for p in (*pl.layer.inputs, *pl.layer.outputs)
        if p.names and p.names[0] and p.names[0] not in graph.initializers
    ]
    with refusals("onnxruntime", graph.path):
        plain, probed = onnxruntime_rt.finals_with_and_without(
            read_model(graph.path), wanted, inputs
        )
    report.probe = probe_effect(plain, probed)
    report.probe.runtime = "onnxruntime"


def _load_oracle(onnx_graph: bool, precision: str | None) -> tuple[str, str | None]:
    """Load the runtime that checks the model (onnxruntime for ONNX, openvino for IR) and settle
    the inference precision: the one asked for, else the runtime's default and why."""
    reason = "asked for" if precision is not None else None
    if onnx_graph:
        from .oracles import onnxruntime_rt

        onnxruntime_rt.load()
        return precision or openvino_rt.DEFAULT_PRECISION, reason
    openvino_rt.load()
    if precision is None:
        precision, reason = openvino_rt.default_precision()
    ran = ran_note(precision)  # the hint is a request (irpool/oracles/openvino_precision.py)
    return precision, reason if ran is None else f"{reason}; {ran}"


@dataclass
class _Probed:
    """What the runtime gave for the model: each probed layer's inputs and outputs, the layers it
    could not probe, and (openvino) the model's final outputs with and without the probe."""

    probed: dict[str, tuple[list[Array], list[Array]]]
    missing: list[str]
    oracle: str
    skipped: dict[str, str] = field(default_factory=dict)
    finals: list[Array] = field(default_factory=list)
    plain: list[Array] | None = None
    unrun: str | None = None


def _probe(
    graph: Graph,
    pooling: list[PoolingLayer],
    names: list[str],
    inputs: Mapping[str, Array],
    precision: str,
    quantized: dict[str, QuantizedLayer],
) -> _Probed:
    """Run the model in its runtime, reading every pooling layer's inputs and outputs."""
    if graph.format == "onnx":
        from .oracles import onnxruntime_rt

        fallback: list[str] = []
        unrun: str | None = None
        try:
            probed, missing = _probe_onnx(graph, pooling, inputs, fallback)
        except Unrunnable as e:
            probed, missing, unrun = {}, [], str(e)
        oracle = (
            fallback[0] if fallback else f"onnxruntime {onnxruntime_rt.load()[1].__version__} CPU"
        )
        return _Probed(probed, missing, oracle, unrun=unrun)
    skipped: dict[str, str] = {}
    finals: list[Array] = []
    try:
        with refusals("openvino", graph.path):
            probed, missing = openvino_rt.probe_layers(
                graph.path,
                names,
                inputs,
                openvino_rt.LayerProbe(
                    precision,
                    skipped=skipped,
                    instead={n: q.read_at for n, q in quantized.items() if q.read_at},
                    finals=finals,
                ),
            )
            try:  # the model as it stands, without the probe's outputs or i32 stand-ins
                plain = openvino_rt.final_outputs(graph.path, inputs, precision)
            except OracleRefused:  # openvino does not compile it as it stands (i64
                plain = None  # adaptive indices): there is no unprobed run to compare
    except OracleRefused as e:
        raise _placed(e, graph) from None
    oracle = f"openvino {openvino_rt.version()} CPU, INFERENCE_PRECISION_HINT={precision}"
    return _Probed(probed, missing, oracle, skipped, finals, plain)


@dataclass
class _Computed:
    """irpool's outputs for one layer and what produced them: the windowed plan (`used`), the
    family plan (`fused`), the allowance for summation order and the input it ran on."""

    got: list[Array]
    x: Array
    used: Any = None
    fused: Any = None
    allowance: Array | None = None
    note: str | None = None


def _compare_layer(
    graph: Graph,
    pl: PoolingLayer,
    probe: _Probed,
    quantized: dict[str, QuantizedLayer],
    report: CompareReport,
    exact: bool,
    held: dict[tuple[int | None, int | None], Array],
) -> LayerComparison:
    """One probed layer: irpool's outputs on the runtime's inputs, compared output by output,
    and diagnosed when they differ."""
    ins, outs = probe.probed[pl.layer.name or ""]
    cv = report.convention
    result = LayerComparison(pl.layer.label, pl.layer.id, pl.spec.label, pl.layer.line, cv)
    result.attributes = {k: str(v) for k, v in pl.layer.data.items()}
    if pl.layer.name in probe.skipped:
        result.notes.append(probe.skipped[pl.layer.name])
    lpt_layer = quantized.get(pl.layer.name or "")
    try:
        computed = _compute(graph, pl, list(ins), outs, lpt_layer, report, exact, held)
    except IrpoolError as e:
        result.passed = False
        result.error = e.message
        return result
    if computed.note is not None:
        result.notes.append(computed.note)
    result.outputs = _compare_outputs(pl, ins, outs, computed, report)
    result.passed = all(o.passed for o in result.outputs)
    if pl.spec.kind != "qlinear" and pl.bound.family.windows and lpt_layer is None:
        result.plans = layer_plans(pl, computed.x, len(outs) > 1)
    _explain_layer(result, pl, ins, outs, computed, lpt_layer is not None, report)
    return result


def _compute(
    graph: Graph,
    pl: PoolingLayer,
    ins: list[Array],
    outs: list[Array],
    lpt_layer: QuantizedLayer | None,
    report: CompareReport,
    exact: bool,
    held: dict[tuple[int | None, int | None], Array],
) -> _Computed:
    """irpool's computation of one layer on the inputs the runtime gave it."""
    cv = report.convention
    x = ins[0] if ins else np.empty((0,))
    if lpt_layer is not None:
        got, used, lpt_note = compare_values(pl.bound, lpt_layer, ins[0])
        return _Computed(got, x, used, fused=used, note=lpt_note)
    if not pl.bound.family.windows:
        like = outs[0].dtype if outs else None
        # the probe asks openvino for every output: an indices output is read there
        fused, got = _family_values(pl, list(ins), cv, like, len(outs) > 1 or None)
        allowance = None
        if outs and (report.rounding or not exact):
            allowance = pl.bound.family.allowance(fused, ins, outs[0])
        return _Computed(got, x, fused=fused, allowance=allowance)
    if pl.spec.kind == "qlinear":
        used, q = run_qlinear(pl.bound, list(ins), cv)
        return _Computed([q], x, used)
    x = ins[0]
    like = outs[0].dtype if outs else None
    if graph.format == "onnx" and conv.get(cv).onnxruntime_kernels and x.dtype == np.float16:
        edge = graph.producer(pl.layer.id or 0, pl.layer.inputs[0].id)
        if edge is not None:
            x = held.get((edge.from_layer, edge.from_port), x)
        x = x.astype(np.float32)
        used, wide = _values_of(pl, x, cv)
        held[(pl.layer.id, pl.layer.outputs[0].id)] = wide[0]
        with np.errstate(over="ignore"):
            got = [wide[0].astype(np.float16), *wide[1:]]
    else:
        # the probe asks openvino for every output it can compute, so a
        # MaxPool-8/14's indices are used there whenever they come back
        used, got = _values_of(pl, x, cv, like, len(outs) > 1)
    allowance = pl.bound.family.allowance(used, [x], outs[0]) if report.rounding and outs else None
    return _Computed(got, x, used, allowance=allowance)


def _compare_outputs(
    pl: PoolingLayer,
    ins: list[Array],
    outs: list[Array],
    computed: _Computed,
    report: CompareReport,
) -> list[OutputComparison]:
    """Each output of the runtime against irpool's: values within the tolerances (and the
    allowance), indices exactly; with the declared and inferred shapes beside."""
    comparisons: list[OutputComparison] = []
    for k, expected in enumerate(outs):
        name = "values" if k == 0 else "indices"
        exact_k = k > 0 or expected.dtype.kind in "iu"
        got = computed.got
        mine = got[k] if k < len(got) else np.empty((0,))
        c = compare_arrays(
            name,
            mine,
            expected,
            report.atol,
            report.rtol,
            exact_k,
            computed.allowance if k == 0 else None,
        )
        port = pl.layer.outputs[k] if k < len(pl.layer.outputs) else None
        c.declared = (
            "[" + ",".join(map(str, port.dims)) + "]" if port and port.dims is not None else "-"
        )
        c.inferred = format_shape(pl.output_shape)
        if k == 0 and not all(d.is_static for d in pl.output_shape or ()) and ins:
            # a dynamic model: the shape irpool's rules give for the input the runtime had
            c.inferred = format_shape(pooling_layer(pl.bound, shape_of(ins[0].shape)).output_shape)
        comparisons.append(c)
    return comparisons


def _explain_layer(
    result: LayerComparison,
    pl: PoolingLayer,
    ins: list[Array],
    outs: list[Array],
    computed: _Computed,
    lpt: bool,
    report: CompareReport,
) -> None:
    """Notes and the diagnosis of a layer: onnx's reference evaluator's known bugs, and for a
    mismatch which convention or divergence reproduces the runtime's numbers."""
    oracle_name = "openvino"
    if report.format == "onnx":
        reference = report.openvino.startswith("onnx ")
        oracle_name = "onnx's reference evaluator" if reference else "onnxruntime"
    x, got = computed.x, computed.got
    known = None
    if report.runtime == "onnx-reference" and pl.bound.family.windows:
        known = _reference_known_wrong(pl, x)
    if known:
        result.notes.append(
            f"onnx's reference evaluator is known to compute this node otherwise ({known}); "
            "a difference here is the evaluator's, not irpool's (docs/divergences.md)"
        )
    if result.passed:
        return
    if lpt:
        result.diagnosis = Diagnosis([], [], mismatch_cells(got[0], outs[0]), LPT_DIAGNOSIS)
    elif not pl.bound.family.windows:
        result.diagnosis = diagnose(
            pl, list(ins), outs, computed.fused, got, report.atol, report.rtol, oracle_name
        )
    elif pl.spec.kind != "qlinear":
        result.diagnosis = diagnose(
            pl,
            [x],
            outs,
            computed.used,
            got,
            report.atol,
            report.rtol,
            oracle_name,
            rounding=report.format == "onnx",
        )
        if known:
            # the evaluator's known bug explains the difference (the divergence table's D12
            # family): irpool's onnx convention computes what onnxruntime's kernels compute;
            # the node counts as agreeing (exit 0), flagged as the evaluator's bug
            result.diagnosis.divergences.insert(0, known)
            result.diagnosis.text = (
                f"onnx's reference evaluator is known to be wrong here ({known}); irpool's "
                "onnx convention computes what onnxruntime's kernels compute"
                + (f"; also: {result.diagnosis.text}" if result.diagnosis.matches else "")
            )
            result.passed = True
            result.reference_bug = known


def _blame(
    report: CompareReport,
    graph: Graph,
    names: list[str],
    inputs: Mapping[str, Array],
    precision: str,
    quantized: Mapping[str, Any],
    plain: list[Array],
) -> None:
    """The probe moved the final outputs: probe each compared layer alone to say whose tensors
    do it, and note it on those layers."""
    assert report.probe is not None
    by_name = {la.layer: la for la in report.layers}
    for name in names:
        alone: list[Array] = []
        with refusals("openvino", graph.path):
            openvino_rt.probe_layers(
                graph.path,
                [name],
                inputs,
                openvino_rt.LayerProbe(
                    precision,
                    instead={n: q.read_at for n, q in quantized.items() if q.read_at and n == name},
                    finals=alone,
                ),
            )
        effect = probe_effect(plain, alone)
        if not effect.moved:
            continue
        report.probe.layers.append(name)
        label = next((la for la in by_name if la == name or la.endswith(name)), None)
        if label is not None:
            by_name[label].notes.append(
                f"asking openvino for this layer's tensors alone changes what it runs: "
                f"{effect.moved} of the model's {effect.compared} final output values move "
                f"(max abs {_fmt(effect.max_abs)}); this result describes a probed execution"
            )


def _reference_known_wrong(pl: PoolingLayer, x: Array) -> str | None:
    """Why onnx's reference evaluator is known to compute this node otherwise (its bugs of the
    divergence table, oracles/onnx_reference.known_wrong), or None."""
    from .oracles import onnx_reference

    has_nan = (x.dtype.kind == "f" or x.dtype.name == "bfloat16") and bool(
        np.isnan(x.astype(np.float32)).any()
    )
    return onnx_reference.known_wrong(
        pl.layer.type, pl.layer.attrs, tuple(x.shape), has_nan, pl.spec.since
    )


def select_layers(
    graph: Graph, pooling: list[PoolingLayer], names: list[str] | None
) -> list[PoolingLayer]:
    """The pooling layers the names pick (all without names), each by name, id, output tensor
    name or a unique part of its name (irpool.lookup); a name that picks none is a usage error
    that lists the closest."""
    if not names:
        return pooling
    from .lookup import find_all, pick

    layers = [pl.layer for pl in pooling]
    return pick(pooling, layers, find_all(graph, names, layers))


def _probe_onnx(
    graph: Graph,
    pooling: list[PoolingLayer],
    inputs: Mapping[str, Array],
    fallback: list[str] | None = None,
) -> tuple[dict[str, tuple[list[Array], list[Array]]], list[str]]:
    """onnxruntime's values of every pooling node's inputs and outputs; where onnxruntime has
    no kernel for a node of the model, onnx's reference evaluator's (`fallback` then names
    it)."""
    fallback = [] if fallback is None else fallback
    from .frontends.onnx_model import read_model
    from .oracles import onnxruntime_rt

    model = read_model(graph.path)
    wanted = []
    for pl in pooling:
        for port in (*pl.layer.inputs, *pl.layer.outputs):
            if port.names and port.names[0] and port.names[0] not in graph.initializers:
                wanted.append(port.names[0])
    try:
        with refusals("onnxruntime", graph.path):
            tensors = onnxruntime_rt.probe_tensors(model, wanted, inputs)
    except OracleRefused as e:
        rows = [pl.spec.reference for pl in pooling if pl.spec.reference is not None]
        if "NOT_IMPLEMENTED" not in e.message and not rows:
            raise
        # onnxruntime has no kernel for some node (LpPool-1, GlobalLpPool-1/22), or a node is
        # of an op whose entry brings its own oracle row: onnx's reference evaluator stands
        # in for it, and the report says so
        from .oracles import onnx_reference

        reason = e.message.removeprefix("onnxruntime refused the model: ")
        try:
            tensors = onnx_reference.probe_tensors(model, sorted(set(wanted)), inputs, rows)
        except Exception as ref_error:  # the evaluator's own errors: it cannot run the model
            raise Unrunnable(
                f"neither runtime runs the model: onnxruntime has no kernel ({reason}); onnx's "
                f"reference evaluator fails too ({type(ref_error).__name__}: "
                f"{str(ref_error).splitlines()[0][:160] if str(ref_error) else '-'})"
            ) from None
        fallback.append(
            f"onnx {onnx_reference.version()} ReferenceEvaluator (onnxruntime has no kernel: "
            f"{reason})"
        )

    def value(name: str) -> Array:
        if name in graph.initializers:
            return np.asarray(graph.initializers[name])
        return tensors[name]

    found = {}
    for pl in pooling:
        ins = [value(p.names[0]) for p in pl.layer.inputs if p.names and p.names[0]]
        outs = [tensors[p.names[0]] for p in pl.layer.outputs if p.names]
        found[pl.layer.name or pl.layer.label] = (ins, outs)
    return found, []
