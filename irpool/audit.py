"""`irpool convert-report` on a source model: did openvino's conversion of a PyTorch or
TensorFlow model keep the meaning of each pooling op?

The source framework's oracle (`oracles/torch_rt.py`, `oracles/tensorflow_rt.py`) converts the
model with openvino, finds the layer each pooling op became, runs the converted model on
openvino's CPU plugin and runs the framework's own op again on the very input openvino gave that
layer, so that a difference belongs to the op's conversion and not to the layers upstream (which
drift by a few ulps after any convolution).  This module compares the two, names the divergence
that explains a difference (irpool's divergence table), and prints or serialises the report.
The same report serves an IR without its source (`audit_ir.py`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from .compare import (
    OutputComparison,
    _json_value,
    cell_records,
    compare_arrays,
    conversion_record,
    mismatch_cells,
)
from .errors import InputError, IrpoolError, UsageError, Where
from .model import element_type_of_numpy
from .source_ops import FRAMEWORK_TITLES, IrLayer, Traced, TracedOp

Array = npt.NDArray[Any]
SCHEMA = "irpool.convert-report/3"

AUDIT_TOLERANCE = (1e-6, 1e-5)
"""The default atol and rtol of an audit (a PyTorch, TensorFlow or IR model): two frameworks
may sum a float mean in different orders, and the audit has no per-window bound for that
(an ONNX report: 0 and the summation bound; --exact: none)."""
"""The JSON of a source-model or IR audit (irpool.convert-report/2 stays the ONNX report's)."""


@dataclass
class OpAudit:
    """One pooling op of the source (or one pooling layer of an IR) and its verdict."""

    name: str
    """The framework's name of the op (an IR audit: the layer's name)."""
    op: str
    """The framework's operator (aten.avg_pool2d.default, aten::max_pool2d, AvgPool); an IR
    audit: the layer's type and version."""
    layers: list[IrLayer]
    """The converted model's layer(s) it became (an IR audit: the layer itself)."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """The framework's arguments of the op."""
    module: str = ""
    module_class: str = ""
    function: str = ""
    code: str = ""
    call: str | None = None
    """An IR audit: the framework's call that means the layer's attributes."""
    outputs: list[OutputComparison] = field(default_factory=list)
    same: bool | None = True
    """None: nothing was compared (`error` says why)."""
    divergence: str | None = None
    cells: list[tuple[int, ...]] = field(default_factory=list)
    """The first spatial positions where openvino's values differ, each once."""
    values: list[tuple[tuple[int, ...], Any, Any]] = field(default_factory=list)
    """The first differing values: (index, openvino's, the framework's)."""
    mapping: str = ""
    end_to_end: bool | None = None
    """Whether the framework's own value of the op (the framework running the whole model)
    also equals openvino's, within the tolerances (None: not known)."""
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    merged_with: list[str] = field(default_factory=list)
    """The other ops of the source that became the same layer (openvino keeps one node for
    identical computations on one tensor); each is compared with that layer."""

    @property
    def divergence_id(self) -> str | None:
        if self.divergence is None or not self.divergence.startswith("D"):
            return None
        return self.divergence.split(":", 1)[0].split(" ", 1)[0]

    @property
    def title(self) -> str:
        """How the report names the op: module path (class), operator, node."""
        parts = []
        if self.module or self.module_class:
            path = self.module or "the model"
            parts.append(f"{path} ({self.module_class}):" if self.module_class else f"{path}:")
        parts.append(self.op)
        if self.name and self.name != self.op:
            parts.append(f'"{self.name}"')
        return " ".join(parts)


@dataclass
class SourceGuess:
    """Which framework an IR came from, and the marks that say so."""

    framework: str | None
    """torch, onnx, tf, or None when no mark decides."""
    evidence: list[str]
    given: bool = False
    """Whether --source named it (then nothing was detected)."""
    assumed: str | None = None
    """The framework assumed when none was detected."""


@dataclass
class AuditReport:
    path: str
    framework: str
    """torch, tf or onnx: whose meaning the layers were compared with."""
    route: str
    openvino: str
    framework_version: str | None
    inputs: dict[str, list[int]]
    ops: list[OpAudit]
    source: SourceGuess | None = None
    notes: list[str] = field(default_factory=list)
    atol: float = 0.0
    rtol: float = 0.0

    @property
    def same(self) -> bool:
        return all(op.same is not False for op in self.ops)

    @property
    def differing(self) -> list[OpAudit]:
        return [op for op in self.ops if op.same is False]


# -- inputs -----------------------------------------------------------------------------------


def parse_shapes(specs: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    """--input-shape [NAME=]N,C,... values by input name ('' when unnamed)."""
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs or []:
        name, _, text = spec.rpartition("=")
        try:
            dims = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise UsageError(
                f"--input-shape {spec!r}: expected [NAME=]N,C,... such as 1,3,6,6"
            ) from None
        if not dims or any(d < 1 for d in dims):
            raise UsageError(f"--input-shape {spec!r}: expected dims >= 1")
        if name in shapes:
            raise UsageError(f"--input-shape for {name or 'the input'} is given twice")
        shapes[name] = dims
    return shapes


def model_arrays(
    path: str,
    names: Sequence[str],
    shapes: Sequence[tuple[int, ...] | None],
    dtypes: Sequence[np.dtype[Any]],
    given: Mapping[str, Array],
    shape_specs: Mapping[str, tuple[int, ...]],
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    cast: bool = False,
) -> list[Array]:
    """The model's inputs in order: the arrays given by name (one unnamed array for a model of
    one input), else random ones (uniform in [low, high), as `irpool run` draws them) of the
    shape the model file records or --input-shape gives."""
    from .arrays import check_elements
    from .run import random_array

    where = Where(file=path)
    checks = (
        (given, "no model input {}", repr),
        (shape_specs, "--input-shape names no model input ({})", str),
    )
    for keys, message, show in checks:
        unknown = [show(n) for n in keys if n and n not in names]
        if unknown:
            inputs = ", ".join(names) or "none"
            raise UsageError(
                f"{message.format(', '.join(unknown))}; the inputs are {inputs}", where
            )
    if ("" in given or "" in shape_specs) and len(names) != 1:
        raise UsageError(
            f"the model has {len(names)} inputs ({', '.join(names)}): name each, NAME=FILE or "
            "NAME=N,C,...",
            where,
        )
    arrays = []
    for i, (name, shape, dtype) in enumerate(zip(names, shapes, dtypes, strict=True)):
        array = given.get(name, given.get("") if len(names) == 1 else None)
        wanted = shape_specs.get(name, shape_specs.get("") if len(names) == 1 else None)
        if array is not None:
            if array.dtype != dtype:
                if not cast:
                    raise InputError(
                        f"input {name!r} is {array.dtype}; the model takes {dtype} (or give "
                        "--cast)",
                        where,
                    )
                array = array.astype(dtype)
            arrays.append(np.ascontiguousarray(array))
            continue
        shape = wanted or shape
        if shape is None:
            raise UsageError(
                f"the shape of input {name!r} is not in the model file; give it with "
                f"--input-shape {name}=N,C,... or the array with -i {name}=FILE.npy",
                where,
            )
        check_elements(shape, f"input {name!r}", None, where)
        element_type = element_type_of_numpy(dtype.name) or "f32"
        arrays.append(random_array(shape, element_type, seed + i, low, high))
    return arrays


# -- comparing what the oracle traced ---------------------------------------------------------


def _divergence(op: TracedOp, framework: str, outputs: list[OutputComparison]) -> str:
    from . import divergences

    layer = op.layers[0] if op.layers else None
    facts = divergences.Conversion(
        kind="window",
        reduce=op.reduce,
        attrs=op.attributes,
        shapes_differ=any(not c.shape_ok for c in outputs),
        indices_differ=any(c.name == "indices" and not c.passed for c in outputs),
        openvino_layer=_brief(layer) if layer else "no layer",
        front_end=framework,
        op=op.op,
        nan_input=op.nan_input,
        overhang=_overhang(op),
        family=op.family,
    )
    return divergences.in_source_conversion(facts)


def _overhang(op: TracedOp) -> tuple[str, ...]:
    """Which of D1, D1c, D1d the op's converted layer exercises: its parameters with PyTorch's
    ceil rounding written as openvino's ceil_torch, planned as openvino computes them."""
    from .divergences import touched
    from .geometry import plan

    p = op.params
    if p is None or op.input_shape is None or p.reduce != "mean":
        return ()
    as_converted = replace(p, rounding="ceil_torch" if p.rounding != "floor" else "floor")
    try:
        planned = plan(as_converted, op.input_shape, "openvino")
    except IrpoolError:
        return ()
    return tuple(d for d in touched(planned, params=as_converted) if d in ("D1", "D1c", "D1d"))


def differing_values(
    got: Array, expected: Array, atol: float, rtol: float, limit: int = 8
) -> list[tuple[tuple[int, ...], Any, Any]]:
    """The first `limit` elements where openvino's values differ from the framework's: (index,
    openvino's, the framework's)."""
    from .arrays import mismatches

    if got.shape != expected.shape:
        return []
    exact = expected.dtype.kind in "iu"
    bad = mismatches(got, expected, atol, rtol, exact=exact)
    found = []
    for index in np.argwhere(bad)[:limit]:
        at = tuple(int(i) for i in index)
        found.append((at, got[at].item(), expected[at].item()))
    return found


def _brief(layer: IrLayer) -> str:
    """A layer as a divergence names it: type-version and the attributes that decide."""
    keys = ("rounding_type", "exclude-pad", "auto_pad", "axis")
    shown = ", ".join(f"{k}={layer.attributes[k]}" for k in keys if k in layer.attributes)
    return f"{layer.op} ({shown})" if shown else layer.op


def _shown(attributes: Mapping[str, Any]) -> str:
    """An IR layer's attributes as the IR writes them (the pooling ones first)."""
    first = ("kernel", "strides", "pads_begin", "pads_end", "dilations", "exclude-pad")
    keys = [k for k in first if k in attributes]
    keys += [k for k in attributes if k not in keys and k != "index_element_type"]
    return " ".join(f'{k}="{attributes[k]}"' for k in keys)


def audit_traced(op: TracedOp, framework: str, atol: float, rtol: float) -> OpAudit:
    """Compare what the oracle traced of one op: openvino's values against the framework's."""
    result = OpAudit(
        name=op.name,
        op=op.op,
        layers=list(op.layers),
        attributes=dict(op.attributes),
        module=op.module,
        module_class=op.module_class,
        function=op.function,
        code=op.code,
        mapping=op.mapping,
        notes=list(op.notes),
        error=op.error,
        merged_with=list(op.merged_with),
    )
    title = FRAMEWORK_TITLES[framework]
    if op.error is not None:
        result.same = None
        return result
    if not op.layers:
        result.notes.append(
            f"openvino's converted model has no pooling layer for this {title} op (it may have "
            "become other layers, or none if its result is unused)"
        )
    own_same = []
    for out in op.outputs:
        expected = out.framework if out.framework is not None else out.own
        if out.openvino is None or expected is None:
            result.notes.append(
                f"{out.kind} {out.name!r}: not in openvino's converted model, not compared"
            )
            continue
        exact = out.kind == "indices" or expected.dtype.kind in "iu"
        got = out.openvino
        if out.kind == "indices" and got.dtype.kind in "iu" and expected.dtype.kind in "iu":
            got = got.astype(expected.dtype)  # i32 or i64 indices: the values are compared
        c = compare_arrays(out.kind, got, expected, atol, rtol, exact)
        c.declared = out.name
        result.outputs.append(c)
        if out.own is not None:
            own = compare_arrays(out.kind, got, out.own, atol, rtol, exact)
            own_same.append(own.passed)
    if not result.outputs:
        result.same = None
        result.error = "no output of the op is in openvino's converted model"
        return result
    result.end_to_end = all(own_same) if own_same else None
    result.same = all(c.passed for c in result.outputs)
    if not result.same:
        result.divergence = _divergence(op, framework, result.outputs)
        first = next((o for o in op.outputs if o.openvino is not None), None)
        expected = None
        if first is not None:
            expected = first.framework if first.framework is not None else first.own
        if first is not None and expected is not None and first.openvino is not None:
            result.cells = mismatch_cells(first.openvino, expected)
            result.values = differing_values(first.openvino, expected, atol, rtol)
    return result


def report_of(
    path: str,
    traced: Traced,
    atol: float = AUDIT_TOLERANCE[0],
    rtol: float = AUDIT_TOLERANCE[1],
    layers: list[str] | None = None,
) -> AuditReport:
    """The audit report of what an oracle traced (only the ops `layers` names, if given)."""
    from .oracles import openvino_rt

    ops = [audit_traced(op, traced.framework, atol, rtol) for op in traced.ops]
    if layers:
        ops = select(ops, layers, path)
    return AuditReport(
        path=path,
        framework=traced.framework,
        route=traced.route,
        openvino=openvino_rt.version(),
        framework_version=traced.framework_version,
        inputs={k: list(v) for k, v in traced.inputs.items()},
        ops=ops,
        notes=list(traced.notes),
        atol=atol,
        rtol=rtol,
    )


def _answers(op: OpAudit, name: str) -> bool:
    return name in (op.name, op.module, op.op) or any(la.name == name for la in op.layers)


def select(ops: list[OpAudit], names: list[str], path: str) -> list[OpAudit]:
    """The ops --layer NAME picks: the framework's name of the op, its module path, or its
    converted layer's name; an unknown name is a usage error listing them."""
    unknown = [n for n in names if not any(_answers(op, n) for op in ops)]
    if unknown:
        known = ", ".join(op.module or op.name for op in ops) or "none"
        raise UsageError(
            f"no pooling op {', '.join(repr(u) for u in unknown)}; pooling ops: {known}",
            Where(file=path),
        )
    return [op for op in ops if any(_answers(op, n) for n in names)]


# -- entry points -----------------------------------------------------------------------------


def source_kind(path: str) -> str | None:
    """'torch' for a .pt2 or TorchScript file, 'tf' for a SavedModel directory or a .keras file,
    'ir' for an .xml, 'onnx' for an .onnx, None otherwise."""
    low = path.lower()
    if low.endswith(".onnx"):
        return "onnx"
    if low.endswith(".xml"):
        return "ir"
    if low.endswith((".keras", ".h5")):
        return "tf"
    if os.path.isdir(path):
        marks = ("saved_model.pb", "saved_model.pbtxt")
        return "tf" if any(os.path.isfile(os.path.join(path, m)) for m in marks) else None
    if low.endswith((".pt2", ".pt", ".pth", ".ts", ".jit")):
        return "torch"
    from .oracles import torch_rt

    return "torch" if torch_rt.file_kind(path) is not None else None


def audit_model(
    model: Any,
    example_inputs: Any = None,
    given: Mapping[str, Array] | None = None,
    shapes: Mapping[str, tuple[int, ...]] | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    cast: bool = False,
    atol: float = AUDIT_TOLERANCE[0],
    rtol: float = AUDIT_TOLERANCE[1],
    layers: list[str] | None = None,
    *,
    framework: str,
    route: str = "trace",
) -> AuditReport:
    """Audit openvino's conversion of a PyTorch (`framework="torch"`: a .pt2 / TorchScript
    file, or a live ExportedProgram, ScriptModule or torch.nn.Module) or TensorFlow model
    (`"tf"`: a SavedModel directory, a .keras file, or a live Keras model): its inputs (given,
    from the examples, or drawn), traced op by op and compared within (atol, rtol).  `route`
    (PyTorch, a live module): 'trace' or 'export', how openvino gets it."""
    from .oracles import openvino_rt, tensorflow_rt, torch_rt

    openvino_rt.load()
    named_path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
    program: Any
    if framework == "torch":
        torch_rt.load()
        path = named_path or f"<{type(model).__name__}>"
        if named_path is not None:
            program = torch_rt.open_file(path)
        else:
            program = torch_rt.from_object(model, path, route)
        trace: Any = torch_rt.trace
    elif framework == "tf":
        tensorflow_rt.load()
        path = named_path or "<keras model>"
        program = tensorflow_rt.open_model(model, path, dict(shapes or {}))
        trace = tensorflow_rt.trace
    else:
        raise UsageError(f'framework "{framework}": expected "torch" or "tf"')
    named = dict(given or {})
    if example_inputs is not None:
        named.update(_examples(example_inputs, program.input_names))
    arrays = model_arrays(
        path,
        program.input_names,
        program.input_shapes,
        program.input_dtypes,
        named,
        dict(shapes or {}),
        seed,
        low,
        high,
        cast,
    )
    report = report_of(path, trace(program, arrays), atol, rtol, layers)
    report.notes += _random_note(program.input_names, named, low, high, seed)
    return report


audit_torch = partial(audit_model, framework="torch")
"""audit_model of a PyTorch model (a path, or a live module with `route`)."""
audit_tf = partial(audit_model, framework="tf")
"""audit_model of a TensorFlow model (a SavedModel directory, a .keras file, a Keras model)."""


def _random_note(
    names: Sequence[str], given: Mapping[str, Array], low: float, high: float, seed: int
) -> list[str]:
    drawn = [n for n in names if n not in given and not (len(names) == 1 and "" in given)]
    if not drawn:
        return []
    return [random_inputs_note(drawn, low, high, seed)]


def random_inputs_note(names: Sequence[str], low: float, high: float, seed: int) -> str:
    return (
        f"random input(s) {', '.join(names)}: uniform in [{low:g}, {high:g}), seed {seed} "
        "(-i NAME=FILE.npy gives your own)"
    )


def _examples(example_inputs: Any, names: Sequence[str]) -> dict[str, Array]:
    """example_inputs (an array or tensor, a tuple of them, or a dict by input name) as numpy
    arrays by input name."""
    if isinstance(example_inputs, Mapping):
        return {str(k): _as_array(v) for k, v in example_inputs.items()}
    items = list(example_inputs) if isinstance(example_inputs, (list, tuple)) else [example_inputs]
    if len(items) != len(names):
        raise UsageError(
            f"{len(items)} example input(s) for a model of {len(names)} ({', '.join(names)})"
        )
    return {name: _as_array(v) for name, v in zip(names, items, strict=True)}


def _as_array(value: Any) -> Array:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    return np.asarray(value)


# -- output -----------------------------------------------------------------------------------


def _attributes_text(attributes: Mapping[str, Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(str(x) for x in v) + "]"
        return str(v)

    return ", ".join(f"{k}={one(v)}" for k, v in attributes.items() if v is not None)


def _header(report: AuditReport) -> list[str]:
    title = FRAMEWORK_TITLES.get(report.framework, report.framework)
    if report.route == "IR":
        lines = [
            f"{report.path}: each pooling layer as openvino {report.openvino} computes it, "
            f"against what {title} computes for the same attributes on the same input"
        ]
        guess = report.source
        if guess is not None:
            if guess.given:
                lines.append(f"  source: {title} (--source)")
            elif guess.framework is not None:
                lines.append(f"  source: {title}, detected: {'; '.join(guess.evidence)}")
            else:
                lines.append(
                    f"  source: NOT DETECTED ({'; '.join(guess.evidence)}); assumed {title}: "
                    "give --source torch, onnx or tf if the model came from elsewhere"
                )
        return lines
    version = f" {report.framework_version}" if report.framework_version else ""
    return [
        f"{report.path}: {report.route} ({title}{version}), converted by openvino "
        f"{report.openvino}; each pooling op as {title} computes it against the converted "
        "model's layer, on the input openvino gave that layer"
    ]


def format_report(report: AuditReport) -> str:
    title = FRAMEWORK_TITLES.get(report.framework, report.framework)
    lines = _header(report)
    if report.inputs:
        shown = ", ".join(f"{k} {v}" for k, v in report.inputs.items())
        lines.append(f"  inputs: {shown}")
    lines.extend(f"  note: {note}" for note in report.notes)
    for op in report.ops:
        status = {True: "same", False: "DIFF", None: "skip"}[op.same]
        became = ", ".join(f'{la.op} "{la.name}"' for la in op.layers) or "no layer"
        if report.route == "IR":
            lines.append(f'  {status}  layer "{op.name}" ({op.op})')
            if op.call:
                lines.append(f"          {title}: {op.call}")
        else:
            lines.append(f"  {status}  {op.title} -> {became}")
            if op.code:
                lines.append(f"          source: {op.code}")
            if op.attributes:
                lines.append(f"          {title}: {_attributes_text(op.attributes)}")
            for la in op.layers:
                lines.append(
                    f"          openvino {la.op}: {_shown(la.attributes) or '(no attributes)'}"
                )
        if op.error:
            lines.append(f"          not compared: {op.error}")
        for c in op.outputs:
            if not c.shape_ok:
                lines.append(f"          {c.name}: openvino {c.computed}, {title} {c.produced}")
            elif not c.passed and not c.mismatches:
                lines.append(f"          {c.name}: the element types differ ({title}: {c.dtype})")
            elif c.mismatches:
                nan = (
                    f" ({c.nan_mismatches} NaN where the other is not)" if c.nan_mismatches else ""
                )
                lines.append(
                    f"          {c.name}: {c.mismatches}/{c.size} differ{nan}, max abs "
                    f"{c.max_abs:.3g}; at {list(c.worst_index or ())} openvino "
                    f"{c.worst_irpool!r}, {title} {c.worst_openvino!r}"
                )
        if op.cells:
            lines.append(f"          differing cells (spatial): {[tuple(c) for c in op.cells]}")
        if op.values:
            shown = "; ".join(f"{list(at)} {g:.6g} / {w:.6g}" for at, g, w in op.values)
            lines.append(f"          first differing values (openvino / {title}): {shown}")
        if op.divergence:
            lines.append(f"          {op.divergence}")
        lines.extend(f"          note: {note}" for note in op.notes)
        if op.merged_with and op.layers:
            others = ", ".join(f'"{n}"' for n in op.merged_with)
            lines.append(
                f"          merged: openvino computes this op and {others} as one layer "
                f'("{op.layers[0].name}"): identical computations on the same tensor'
            )
        if op.mapping and "order only" in op.mapping:
            lines.append(f"          found by {op.mapping}")
    compared = sum(1 for op in report.ops if op.same is not None)
    bad = len(report.differing)
    what = "layer(s)" if report.route == "IR" else "op(s)"
    tail = f"{report.path}: {len(report.ops)} pooling {what}, {compared} compared, {bad} computed"
    tail += f" differently by openvino than by {title}"
    shared = _merged_layers(report)
    if shared:
        n_ops = sum(len(names) for names in shared.values())
        tail += (
            f"; {n_ops} ops became {len(shared)} merged layer(s) (identical computations on "
            "one tensor)"
        )
    lines.append(tail)
    return "\n".join(lines)


def _merged_layers(report: AuditReport) -> dict[str, list[str]]:
    """Each layer that several ops of the source became: its name -> the ops' names."""
    shared: dict[str, list[str]] = {}
    for op in report.ops:
        if op.merged_with and op.layers:
            names = shared.setdefault(op.layers[0].name, [])
            names.append(op.name)
    return shared


def _output_json(c: OutputComparison) -> dict[str, Any]:
    record = {k: _json_value(v) for k, v in conversion_record(c, "source").items()}
    record.update(cell_records(c, "source"))
    return record


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return _json_value(value)
    return str(value)


def to_json(report: AuditReport) -> dict[str, Any]:
    guess = report.source
    return {
        "schema": SCHEMA,
        "file": report.path,
        "framework": report.framework,
        "framework_version": report.framework_version,
        "route": report.route,
        "openvino": report.openvino,
        "source": None
        if guess is None
        else {
            "framework": guess.framework,
            "given": guess.given,
            "evidence": guess.evidence,
            "assumed": guess.assumed,
        },
        "inputs": report.inputs,
        "atol": report.atol,
        "rtol": report.rtol,
        "same": report.same,
        "notes": report.notes,
        "merged_layers": [
            {"layer": layer, "ops": names} for layer, names in _merged_layers(report).items()
        ],
        "ops": [
            {
                "name": op.name,
                "op": op.op,
                "module": op.module,
                "module_class": op.module_class,
                "function": op.function,
                "code": op.code,
                "attributes": _jsonable(op.attributes),
                "call": op.call,
                "openvino_layers": [
                    {"name": la.name, "op": la.op, "attributes": la.attributes} for la in op.layers
                ],
                "mapping": op.mapping,
                "merged_with": op.merged_with,
                "same": op.same,
                "end_to_end_same": op.end_to_end,
                "error": op.error,
                "divergence": op.divergence,
                "divergence_id": op.divergence_id,
                "cells": [list(c) for c in op.cells],
                "differing_values": [
                    {"index": list(at), "openvino": _json_value(g), "source": _json_value(w)}
                    for at, g, w in op.values
                ],
                "notes": op.notes,
                "outputs": [_output_json(c) for c in op.outputs],
            }
            for op in report.ops
        ],
    }
