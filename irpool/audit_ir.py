"""`irpool convert-report MODEL.xml`: an IR without its source model.  Which framework was it
converted from (the marks openvino's front ends leave), and does openvino compute each pooling
layer as that framework would for the same attributes?

openvino runs the IR once, each pooling layer's input and outputs made outputs of the model;
irpool computes each windowed layer under the source framework's convention (`torch`, `tf`,
`onnx`) on openvino's input of it, and the framework itself computes the adaptive and global
pools (AdaptiveAvgPool, AdaptiveMaxPool, ReduceMean, ReduceMax) when it is installed.
`irpool compare` prints one line per layer that differs when the source was detected
(`compare_lines`).

The marks, measured with openvino 2026.4.1 on every conversion route (docs/debugging-a-
converted-model.md lists them): the net's name (`onnx_Frontend_IR`, `TensorFlow_Frontend_IR`;
`ModelN` is openvino's name for any unnamed model, the PyTorch front end's among them), the
conversion parameters in the IR's rt_info (`framework`, `input_model`), layer names
(`aten::<op>` from TorchScript, `<node>/aten.<op>.<overload>/<type>` from torch.export) and
Result names (`<tensor>/sink_port_0` from the ONNX front end, `output_N`, `keras_tensor_N`,
`Identity:0` from TensorFlow's).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .audit import (
    AUDIT_TOLERANCE,
    AuditReport,
    OpAudit,
    SourceGuess,
    _examples,
    audit_tf,
    audit_torch,
    differing_values,
    source_kind,
)
from .compare import _values_of, compare_arrays, mismatch_cells, selects
from .errors import IrpoolError, OracleMissing, UsageError, Where
from .frontends import ir_xml
from .model import Graph, Layer
from .ops import REGISTRY
from .ops import tensorflow as tf_ops
from .ops import torch as torch_ops
from .ops.openvino import pooling_like
from .run import parameters
from .shapes import PoolingLayer, infer
from .source_ops import FRAMEWORK_TITLES, IrLayer

Array = npt.NDArray[Any]
SOURCES = ("torch", "onnx", "tf")
ASSUMED = "torch"
"""What an IR with no mark of a front end is compared with: most OpenVINO models come from
PyTorch (the report says so, and --source changes it)."""

_INPUT_MODEL = {
    ".onnx": "onnx",
    ".pt2": "torch",
    ".pt": "torch",
    ".pth": "torch",
    ".pb": "tf",
    ".keras": "tf",
    ".h5": "tf",
}
_FRAMEWORK = {"pytorch": "torch", "torch": "torch", "onnx": "onnx", "tf": "tf"}


def detect(graph: Graph, pooling: list[PoolingLayer] | None = None) -> SourceGuess:
    """The framework an IR was converted from, with the marks that say so.  Strong marks decide
    (their points add up); weak ones (op versions, rounding_type=ceil_torch) are only shown."""
    score = dict.fromkeys(SOURCES, 0)
    decisive: list[str] = []
    shown: list[str] = []

    def mark(framework: str | None, points: int, why: str) -> None:
        if framework is not None and points:
            score[framework] += points
            decisive.append(why)
        else:
            shown.append(why)

    name = graph.name or ""
    if re.fullmatch(r"Model\d+", name):
        # the PyTorch front end leaves its models unnamed, and openvino names every unnamed
        # model ModelN (one built with openvino's Python API too): a weak mark only
        mark(None, 0, f'net name "{name}" (openvino\'s default: PyTorch front end, or Python)')
    elif name == "onnx_Frontend_IR":
        mark("onnx", 3, f'net name "{name}"')
    elif name == "TensorFlow_Frontend_IR":
        mark("tf", 3, f'net name "{name}"')
    given = dict(graph.conversion)
    framework = _FRAMEWORK.get(given.get("framework", "").lower())
    if framework is not None:
        extra = " dynamo=True" if given.get("dynamo") == "True" else ""
        mark(framework, 4, f"conversion_parameters framework={given['framework']}{extra}")
    model = given.get("input_model", "")
    if model:
        found = next((fw for suffix, fw in _INPUT_MODEL.items() if model.endswith(suffix)), None)
        if found is None and re.search(r"saved_?model", model, re.IGNORECASE):
            found = "tf"
        mark(found, 4 if found else 0, f"conversion_parameters input_model={model}")
    names = [la.name or "" for la in graph.layers]
    script = [n for n in names if "aten::" in n]
    export = [n for n in names if re.search(r"(^|/)aten\.\w+\.\w+/", n)]
    if script:
        mark("torch", 5, f"{len(script)} layer names with aten:: (TorchScript), e.g. {script[0]}")
    if export:
        mark(
            "torch",
            5,
            f"{len(export)} layer names <node>/aten.<op>.<overload>/<type> "
            f"(torch.export), e.g. {export[0]}",
        )
    results = [la.name or "" for la in graph.layers if REGISTRY.role(la) == "result"]
    if results and all(r.endswith("/sink_port_0") for r in results):
        mark("onnx", 2, "Results named <tensor>/sink_port_0 (the ONNX front end)")
    tf_like = r"output_\d+|keras_tensor(_\d+)?|[\w/]+:\d+"
    if results and all(re.fullmatch(tf_like, r) for r in results):
        mark("tf", 2, f"Results named like TensorFlow outputs, e.g. {results[0]}")
    evidence = decisive + shown
    weak = _weak_marks(graph, pooling)
    best = max(score, key=lambda k: score[k])
    if score[best] == 0:
        return SourceGuess(None, [*evidence, "no mark of a front end", *weak], assumed=ASSUMED)
    if sum(1 for v in score.values() if v == score[best]) > 1:
        tied = ", ".join(k for k, v in score.items() if v == score[best])
        return SourceGuess(None, [*evidence, f"marks of {tied} alike"], assumed=ASSUMED)
    return SourceGuess(best, evidence)


def windowed(graph: Graph) -> list[PoolingLayer]:
    """The windowed pooling layers of an IR (AvgPool, MaxPool): the adaptive and reduce layers
    (irpool's pooling families) are audited as the framework computes them, apart."""
    return [pl for pl in infer(graph).pooling if pl.bound.family.windows]


def _weak_marks(graph: Graph, pooling: list[PoolingLayer] | None) -> list[str]:
    if pooling is None:
        try:
            pooling = windowed(graph)
        except IrpoolError:
            return []
    marks = []
    torch_rounding = sum(1 for pl in pooling if pl.bound.params.rounding == "ceil_torch")
    if torch_rounding:
        marks.append(
            f"{torch_rounding} layer(s) with rounding_type=ceil_torch (the PyTorch front end; the "
            "ONNX front end too for AveragePool with ceil_mode)"
        )
    v14 = sum(1 for pl in pooling if pl.spec.since == 14)
    if v14:
        marks.append(f"{v14} AvgPool-14/MaxPool-14 layer(s) (the PyTorch front end's versions)")
    return marks


def _call(framework: str, pl: PoolingLayer, rank: int) -> tuple[str | None, str | None]:
    """The framework call that means the layer's attributes, or why there is none."""
    params = pl.bound.params_for(rank)
    if framework == "torch":
        return torch_ops.call_for(params)
    if framework == "tf":
        return tf_ops.call_for(params)
    return f"the ONNX op with these attributes, as onnxruntime computes it ({pl.spec.label})", None


def _ir_layer(layer: Layer, op: str) -> IrLayer:
    return IrLayer(layer.label, op, {k: str(v) for k, v in layer.data.items()})


def _window_layer(
    pl: PoolingLayer,
    framework: str,
    ins: list[Array],
    outs: list[Array],
    atol: float,
    rtol: float,
) -> OpAudit:
    title = FRAMEWORK_TITLES[framework]
    layer = pl.layer
    result = OpAudit(layer.label, pl.spec.label, [_ir_layer(layer, pl.spec.label)])
    x = ins[0]
    try:
        call, why = _call(framework, pl, x.ndim)
    except IrpoolError as e:
        call, why = None, e.message
    if call is None:
        result.same, result.error = None, f"{title} has no such pooling: {why}"
        return result
    result.call = call
    like = outs[0].dtype if outs else None
    try:
        used, want = _values_of(pl, x, framework, like, len(outs) > 1)
        as_written = pl.bound.plan(x.shape, x.dtype.name, "openvino")
    except IrpoolError as e:
        result.same, result.error = None, f"{title} has no such pooling: {e.message}"
        return result
    for k, got in enumerate(outs):
        if k >= len(want):
            break
        exact = k > 0 or want[k].dtype.kind in "iu"
        c = compare_arrays("values" if k == 0 else "indices", got, want[k], atol, rtol, exact)
        result.outputs.append(c)
    result.same = all(c.passed for c in result.outputs)
    if not result.same:
        from .divergences import between

        said = between(as_written, used, x)
        result.divergence = "; ".join(said)
        _mark_differing(result, outs, want, atol, rtol)
    return result


def _mark_differing(
    result: OpAudit, outs: list[Array], want: list[Array], atol: float, rtol: float
) -> None:
    """Where the first outputs differ (cells and values), when both sides have one of the
    same shape."""
    if outs and want and outs[0].shape == want[0].shape:
        result.cells = mismatch_cells(outs[0], want[0])
        result.values = differing_values(outs[0], want[0], atol, rtol)


def _like_layer(
    layer: Layer,
    kind: tuple[str, str],
    framework: str,
    ins: list[Array],
    outs: list[Array],
    atol: float,
    rtol: float,
) -> OpAudit | None:
    """An adaptive or global pool (a ReduceMean/ReduceMax over every spatial axis of a 2-D or
    3-D input), computed by the source framework itself; None for a reduction that is no
    pooling."""
    title = FRAMEWORK_TITLES[framework]
    op = f"{layer.type}-{(layer.version or 'opset1').removeprefix('opset')}"
    result = OpAudit(layer.label, op, [_ir_layer(layer, op)])
    family, reduce = kind
    argument = [int(v) for v in np.ravel(ins[1])] if len(ins) > 1 else []
    keep = str(layer.data.get("keep_dims", "false")).lower() == "true"
    rank = ins[0].ndim
    if family == "reduce":
        axes = sorted(a % rank for a in argument)
        if rank < 4 or axes not in (list(range(2, rank)), list(range(1, rank - 1))):
            return None  # a mean or max over other axes (a normalisation): no pooling
    try:
        if framework == "torch":
            from .oracles import torch_rt

            result.call, want = torch_rt.pooling_like(family, reduce, ins[0], argument, keep)
        elif framework == "tf" and family == "reduce":
            from .oracles import tensorflow_rt

            result.call, want = tensorflow_rt.reduce(reduce, ins[0], argument, keep)
        else:
            result.same = None
            result.error = (
                f"{title} has no adaptive pooling op"
                if family == "adaptive"
                else f"irpool does not compute {title}'s global pooling; compare it with "
                "`irpool compare` on the ONNX model"
            )
            return result
    except OracleMissing as e:
        result.same, result.error = None, e.message
        return result
    for k, (got, expected) in enumerate(zip(outs, want, strict=False)):
        name = "values" if k == 0 else "indices"
        if k > 0:
            got = got.astype(np.int64)
        result.outputs.append(compare_arrays(name, got, expected, atol, rtol, k > 0))
    result.same = all(c.passed for c in result.outputs)
    if not result.same:
        nan = ins[0].dtype.kind == "f" and not bool(np.isfinite(ins[0]).all())
        if reduce == "max" and nan:
            key = "D38" if family == "reduce" else "D8"
            result.divergence = (
                f"{key}: a max over NaN or -inf: {title} propagates NaN (and keeps -inf); "
                "openvino's running maximum skips NaN"
            )
        else:
            result.divergence = "no known divergence explains the difference"
        _mark_differing(result, outs, want, atol, rtol)
    return result


def random_inputs_of_shapes(
    graph: Graph,
    shapes: Mapping[str, tuple[int, ...]],
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
) -> dict[str, Array]:
    """Random inputs for an IR whose Parameters have dynamic dims, of the shapes --input-shape
    gives (by Parameter name; unnamed for a single Parameter); static Parameters keep theirs."""
    from .audit import model_arrays
    from .model import numpy_dtype
    from .run import _element_type, parameters
    from .shapes import parameter_shape

    params = parameters(graph)
    names = [la.name or la.label for la in params]
    static: list[tuple[int, ...] | None] = []
    for la in params:
        shape = parameter_shape(la)
        fixed = shape is not None and all(d.is_static for d in shape)
        static.append(tuple(d.lo for d in shape) if fixed and shape is not None else None)
    dtypes = [numpy_dtype(_element_type(la), la.where()) for la in params]
    arrays = model_arrays(graph.path, names, static, dtypes, {}, shapes, seed, low, high)
    return dict(zip(names, arrays, strict=True))


def _chosen(
    graph: Graph,
    pooling: list[PoolingLayer],
    like: list[tuple[Layer, Any]],
    layers: list[str] | None,
) -> tuple[list[PoolingLayer], list[tuple[Layer, Any]]]:
    """The windowed and pooling-like layers `layers` names (all without it); a usage error
    naming the known ones for a name none of them has."""
    if not layers:
        return pooling, like
    unknown = [
        n
        for n in layers
        if not any(selects(pl.layer, n) for pl in pooling)
        and not any(selects(la, n) for la, _ in like)
    ]
    if unknown:
        known = [pl.layer.label for pl in pooling] + [la.label for la, _ in like]
        raise UsageError(
            f"no pooling layer {', '.join(map(repr, unknown))}; pooling layers: "
            f"{', '.join(known) or 'none'}",
            Where(file=graph.path),
        )
    windows = [pl for pl in pooling if any(selects(pl.layer, n) for n in layers)]
    return windows, [(la, kind) for la, kind in like if any(selects(la, n) for n in layers)]


def audit_ir(
    graph: Graph,
    inputs: Mapping[str, Array] | None = None,
    source: str | None = None,
    atol: float = AUDIT_TOLERANCE[0],
    rtol: float = AUDIT_TOLERANCE[1],
    layers: list[str] | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
) -> AuditReport:
    """Every (or each named) pooling layer of an IR: openvino against what the source framework
    computes for the layer's attributes, on the same input.  `inputs` by Parameter name (random
    from `seed` when None); `source` torch, onnx or tf (detected when None)."""
    from .oracles import openvino_rt, refusals

    openvino_rt.load()
    if graph.fragment or graph.format != "ir":
        raise UsageError(f"{graph.path}: convert-report takes a full IR net here")
    pooling = windowed(graph)
    if source is not None and source not in SOURCES:
        raise UsageError(f"--source {source!r}; expected one of {', '.join(SOURCES)}")
    guess = SourceGuess(source, [], given=True) if source is not None else detect(graph, pooling)
    framework = guess.framework or guess.assumed or ASSUMED
    if inputs is None:
        from .run import random_inputs

        inputs = random_inputs(graph, seed, low, high)
    like = [(la, kind) for la in graph.topological() if (kind := pooling_like(la.type))]
    windows, like = _chosen(graph, pooling, like, layers)
    names = [pl.layer.name for pl in windows if pl.layer.name]
    names += [la.name for la, _ in like if la.name]
    with refusals("openvino", graph.path):
        probed, missing = openvino_rt.probe_layers(graph.path, names, inputs)
    order = {la.index: i for i, la in enumerate(graph.topological())}
    found: list[tuple[int, OpAudit]] = []
    for pl in windows:
        if pl.layer.name not in probed:
            continue
        ins, outs = probed[pl.layer.name]
        found.append(
            (order.get(pl.layer.index, 0), _window_layer(pl, framework, ins, outs, atol, rtol))
        )
    for la, kind in like:
        if la.name not in probed:
            continue
        ins, outs = probed[la.name]
        audited = _like_layer(la, kind, framework, ins, outs, atol, rtol)
        if audited is not None:
            found.append((order.get(la.index, 0), audited))
    report = AuditReport(
        path=graph.path,
        framework=framework,
        route="IR",
        openvino=openvino_rt.version(),
        framework_version=None,
        inputs={k: list(v.shape) for k, v in inputs.items()},
        ops=[op for _, op in sorted(found, key=lambda item: item[0])],
        source=guess,
        atol=atol,
        rtol=rtol,
    )
    report.notes.extend(
        f'layer "{name}" is not in openvino\'s model (it reaches no Result): not compared'
        for name in missing
    )
    return report


def compare_lines(
    graph: Graph, inputs: Mapping[str, Array], command: list[str]
) -> tuple[SourceGuess | None, list[str], list[dict[str, Any]]]:
    """What `irpool compare` adds after its verdict on an IR whose source was detected: one line
    per pooling layer openvino computes otherwise than that framework would, with the command
    that shows the details.  (None, [], []) when no source was detected."""
    guess = detect(graph)
    if guess.framework is None:
        return None, [], []
    title = FRAMEWORK_TITLES[guess.framework]
    report = audit_ir(graph, inputs, guess.framework)
    lines, records = [], []
    for op in report.differing:
        c = next((o for o in op.outputs if not o.passed), None)
        what = (
            f"{c.mismatches}/{c.size} {c.name} differ"
            if c is not None and c.shape_ok
            else f"openvino {c.computed}, {title} {c.produced}"
            if c is not None
            else "differs"
        )
        key = op.divergence_id or (op.divergence or "").split(":", 1)[0]
        why = f" ({key})" if key.startswith("D") else ""
        details = shlex.join([*command, "--layer", op.name])
        lines.append(
            f'  {title} source: layer "{op.name}" ({op.op}): {what} from {title}\'s '
            f"{op.call or 'computation'}{why}; details: {details}"
        )
        records.append(
            {"layer": op.name, "op": op.op, "divergence": op.divergence, "details": details}
        )
    head = f"converted from {title} (detected: {guess.evidence[0]}): " + (
        f"{len(lines)} pooling layer(s) compute otherwise than {title} would"
        if lines
        else f"every pooling layer computes what {title} would"
    )
    return guess, [head, *lines], records


# -- convert_report on any model but ONNX -------------------------------------------------


def convert_report(
    model: Any,
    example_inputs: Any = None,
    route: str = "trace",
    atol: float = AUDIT_TOLERANCE[0],
    rtol: float = AUDIT_TOLERANCE[1],
) -> AuditReport:
    """The Python API: audit openvino's conversion of a live torch.nn.Module (ExportedProgram,
    ScriptModule), a Keras model, or a model file (.pt2, .pt, .keras, a SavedModel directory,
    an IR .xml), on `example_inputs` (an array or tensor, a tuple of them, or a dict by input
    name; random when None).  For a live module `route` chooses how openvino gets it: 'trace'
    (what ov.convert_model(module, example_input=...) does) or 'export' (torch.export).
    Returns the report `irpool convert-report` prints (`format_report`, `to_json`)."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        kind = source_kind(path)
        if kind == "ir":
            graph = ir_xml.load(path)
            arrays = (
                _examples(example_inputs, _ir_inputs(graph)) if example_inputs is not None else None
            )
            return audit_ir(graph, arrays, atol=atol, rtol=rtol)
        if kind == "tf":
            return audit_tf(path, example_inputs, atol=atol, rtol=rtol)
        if kind == "torch":
            return audit_torch(path, example_inputs, atol=atol, rtol=rtol)
        raise UsageError(
            "convert_report takes a .pt2, TorchScript, .keras, SavedModel or IR model; "
            "for .onnx use `irpool convert-report` (ONNX report)",
            Where(file=path),
        )
    if _is_keras(model):
        return audit_tf(model, example_inputs, atol=atol, rtol=rtol)
    return audit_torch(model, example_inputs, atol=atol, rtol=rtol, route=route)


def _is_keras(model: Any) -> bool:
    return any(c.__module__.split(".")[0] in ("keras", "tf_keras") for c in type(model).__mro__)


def _ir_inputs(graph: Any) -> list[str]:
    return [la.name or la.label for la in parameters(graph)]
