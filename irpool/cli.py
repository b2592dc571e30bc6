"""Command line: argparse -> library call -> printed report and exit code.

Exit codes: 0 ok, 1 a finding (a declared shape or a compared value disagrees), 2 invalid input
or usage (one line on stderr), 3 an oracle that was asked for is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from . import __version__
from .errors import IrpoolError, UsageError, Where

EXIT_OK, EXIT_FINDING, EXIT_INVALID, EXIT_ORACLE = 0, 1, 2, 3
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_INVALID)


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, the handler of its parsed arguments (which returns the exit
    code), the function that adds its options, and its help texts."""

    name: str
    run: Callable[[argparse.Namespace], int]
    options: Callable[[Any], None]
    help: str
    description: str


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False) + "\n")


# -- check -----------------------------------------------------------------------------------


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import SCHEMA, check_file, format_report

    reports = [check_file(path) for path in args.paths]
    if args.openvino:
        from .check import add_openvino_findings

        for r in reports:
            add_openvino_findings(r)
    if args.json:
        _print_json(
            {
                "schema": SCHEMA,
                "irpool": __version__,
                "ok": all(r.ok for r in reports),
                "files": [r.to_json() for r in reports],
            }
        )
    else:
        for r in reports:
            print(format_report(r, verbose=args.verbose))
    return EXIT_OK if all(r.ok for r in reports) else EXIT_FINDING


def _check_options(p: Any) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="model.xml, a file of <layer> fragments, or model.onnx",
    )
    p.add_argument(
        "--json", action="store_true", help="print a JSON report (schema irpool.check/1)"
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="show formulas and notes of every layer"
    )
    p.add_argument(
        "--openvino",
        action="store_true",
        help="also ask openvino for the output shape of every layer, of any type",
    )


CHECK = Command(
    "check",
    _cmd_check,
    _check_options,
    help="verify the declared shapes of pooling layers",
    description=(
        "Infer the output shape of every pooling layer of an OpenVINO IR (or of pasted "
        "<layer> fragments) from its attributes and input dims, as openvino does, and report "
        "every declared <dim> that disagrees, with the formula and its numbers. Other layer "
        "types are taken as declared. For an ONNX model (.onnx) the declared shapes are "
        "compared with onnxruntime's sizes, with notes where the operator text of the "
        "node's version or onnx's own shape inference says otherwise. Exit 0 when all agree, "
        "1 on a disagreement, 2 on invalid input."
    ),
)


# -- run ---------------------------------------------------------------------------------------


def _input_specs(
    specs: list[str] | None, limit: int | None, sources: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Arrays from -i arguments ([NAME=]FILE.npy or FILE.npz) and the paths they came from;
    `sources` is filled with the file of each array (an .npz member as FILE:MEMBER)."""
    from .arrays import load_arrays

    arrays: dict[str, Any] = {}
    paths: list[str] = []
    for spec in specs or []:
        name, path = "", spec
        if not os.path.exists(spec) and "=" in spec:
            name, path = spec.split("=", 1)
        loaded = load_arrays(path, limit)
        paths.append(path)
        if list(loaded) == [""]:
            key = name
            if key in arrays:
                raise UsageError(f"input {key or '(unnamed)'} is given twice")
            arrays[key] = loaded[""]
            if sources is not None:
                sources[key] = path
        else:
            for key, array in loaded.items():
                full = f"{name}.{key}" if name else key
                if full in arrays:
                    raise UsageError(f"input {full} is given twice")
                arrays[full] = array
                if sources is not None:
                    sources[full] = f"{path}:{key}"
    return arrays, paths


def _parse_range(text: str) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--range {text!r}: expected LO,HI such as -1,1") from None
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(high - low)):
        raise UsageError(f"--range {text!r}: expected finite LO and HI less than 1e308 apart")
    if not low < high:
        raise UsageError(f"--range {text!r}: expected LO < HI")
    return low, high


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= {least}")
    return value


def _positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def _natural(text: str) -> int:
    return _int_at_least(text, 0)


def _add_input_options(p: Any, input_help: str) -> None:
    """The options that choose a command's input arrays: files, or random ones."""
    p.add_argument(
        "-i", "--input", dest="inputs", action="append", metavar="[NAME=]FILE", help=input_help
    )
    p.add_argument("--seed", type=_natural, default=0, help="seed of random inputs (default 0)")
    p.add_argument(
        "--range", default="-1,1", metavar="LO,HI", help="range of random inputs (default -1,1)"
    )
    p.add_argument(
        "--cast",
        action="store_true",
        help="convert inputs to the Parameter's element type instead of refusing",
    )
    p.add_argument(
        "--max-elements",
        type=_positive_int,
        default=None,
        metavar="N",
        help="largest array to allocate (default 2^30 elements)",
    )


def _add_convention_option(p: Any, help: str) -> None:
    """--convention: the runtime whose behaviour irpool computes (default: the model's)."""
    from .conventions import CONVENTIONS

    p.add_argument("--convention", choices=list(CONVENTIONS), default=None, help=help)


def _add_progress_option(p: Any) -> None:
    p.add_argument(
        "--progress",
        choices=["auto", "on", "off"],
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )


def _progress(args: argparse.Namespace) -> Callable[..., None] | None:
    """The progress callback --progress asks for (auto: only when stderr is a terminal)."""
    from .compare import progress_bar

    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        return progress_bar()
    return None


def _model_inputs(graph: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The arrays given with -i bound to the model's Parameters, or random ones."""
    from .run import bind_inputs, parameters, random_inputs

    sources: dict[str, str] = {}
    inputs, _ = _input_specs(args.inputs, args.max_elements, sources)
    if not inputs:
        low, high = _parse_range(args.range)
        return random_inputs(graph, args.seed, low, high, args.max_elements)
    bound = bind_inputs(graph, inputs, args.cast, sources)
    return {la.name or la.label: bound[la.index] for la in parameters(graph)}


def load_model(path: str) -> Any:
    """An IR file, fragments, or an ONNX model (by its .onnx suffix)."""
    from .api import load

    return load(path)


def _cmd_run(args: argparse.Namespace) -> int:
    from .arrays import save_npz
    from .files import check_output
    from .run import (
        find_layer,
        layer_input_shape,
        random_array,
        random_inputs,
        run_graph,
        run_layer,
    )

    limit = args.max_elements
    graph = load_model(args.model)
    sources: dict[str, str] = {}
    inputs, input_paths = _input_specs(args.inputs, limit, sources)
    protected = [args.model, os.path.splitext(args.model)[0] + ".bin", *input_paths]
    check_output(args.output, args.force, protected)
    if not args.output.lower().endswith(".npz"):
        raise UsageError(
            "run writes an .npz archive (one array per output); give -o a name ending in .npz",
            Where(file=args.output),
        )
    inputs_path = None
    low, high = _parse_range(args.range)
    if args.layer is not None:
        layer = find_layer(graph, args.layer)
        extra: dict[str, Any] = {}
        if inputs:
            x, extra = _layer_input(layer, inputs)
        else:
            shape = layer_input_shape(graph, layer)
            from .arrays import check_elements

            check_elements(shape, f'input of "{layer.label}"', limit, layer.where())
            et = layer.inputs[0].element_type or "f32"
            x = random_array(shape, et, args.seed, low, high)
            inputs = {"input": x}
        plan, outputs = run_layer(graph, args.layer, x, args.convention, args.cast, limit, extra)
        plans: dict[str, Any] = {layer.label: plan}
        tensors: dict[str, Any] = {}
        notes: list[str] = []
    else:
        if not inputs:
            inputs = random_inputs(graph, args.seed, low, high, limit)
        result = run_graph(graph, inputs, args.convention, args.cast, limit, sources)
        outputs, plans, tensors = result.outputs, result.all_plans(), result.tensors
        notes = result.notes
    if not input_paths:
        inputs_path = os.path.splitext(args.output)[0] + ".inputs.npz"
        check_output(inputs_path, args.force, protected)
    to_save = dict(outputs)
    if args.save_all:
        to_save.update(tensors)
    save_npz(args.output, to_save)
    if inputs_path:
        save_npz(inputs_path, inputs)
    for label, plan in plans.items():
        print(
            f"{label}: {plan.op} [{plan.convention}] {list(plan.input_shape)} -> "
            f"{list(plan.output_shape)}"
        )
        refused = getattr(plan, "refused_by", None)
        if refused:
            print(f"  note: {refused}; irpool computes the layer all the same")
    for name, array in to_save.items():
        print(f"  {name}: {array.dtype.name} {list(array.shape)}")
    for note in notes:
        print(f"note: {note}")
    print(
        f"wrote {args.output}"
        + (f" and the random inputs to {inputs_path} (seed {args.seed})" if inputs_path else "")
    )
    return EXIT_OK


def _layer_input(layer: Any, inputs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The data input of a layer run alone, and the arrays given for its other inputs (by
    tensor name or inputN): one unnamed array is the data input."""
    if len(inputs) == 1:
        return next(iter(inputs.values())), {}
    first = layer.inputs[0].names if layer.inputs else ()
    key = next((k for k in inputs if k in (*first, "input0", "")), None)
    if key is None:
        names = ", ".join(p.names[0] for p in layer.inputs if p.names) or "input0, input1, ..."
        raise UsageError(
            "--layer runs one layer: give one input array, or name each of its inputs "
            f"(NAME=FILE with the tensor names {names})"
        )
    rest = {k: v for k, v in inputs.items() if k != key}
    return inputs[key], rest


def _run_options(p: Any) -> None:
    p.add_argument("model", metavar="MODEL", help="model.xml or model.onnx")
    _add_input_options(
        p,
        "input array (.npy, or .npz holding several); NAME is a Parameter's layer or tensor "
        "name; repeat for several Parameters",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.npz",
        help="the .npz archive to write (one array per output)",
    )
    p.add_argument("--layer", metavar="NAME", help="run only this pooling layer")
    _add_convention_option(p, "compute what this runtime would (default: openvino for IR layers)")
    p.add_argument(
        "--save-all",
        action="store_true",
        help="also save every intermediate tensor, keyed layername:port",
    )
    p.add_argument("--force", action="store_true", help="replace an existing output file")


RUN = Command(
    "run",
    _cmd_run,
    _run_options,
    help="execute a pooling net or one pooling layer with numpy",
    description=(
        "Execute an IR net of pooling layers (AvgPool-1/14/16, MaxPool-1/8/14, "
        "AdaptiveAvgPool-8, AdaptiveMaxPool-8, ReduceMean/Max/Sum-1, ReduceL1/L2-4) and the "
        "glue between them (Parameter, Const, Convert, ConvertLike, Abs, Sign, ReLU, Sqrt, "
        "Multiply, Power, Reshape, Split, Concat, Squeeze, Unsqueeze, Result), or one "
        "pooling layer of any IR with --layer; or an ONNX model of pooling nodes "
        "(AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool, LpPool, GlobalLpPool, "
        "MaxUnpool, com.microsoft QLinearAveragePool and QLinearGlobalAveragePool, with "
        "Identity/Squeeze/Unsqueeze). OUT.npz holds one array per Result (keyed by the "
        "Result layer's name) or graph output (keyed by its name); with --layer: output0 "
        "and, for MaxPool-8/14 and AdaptiveMaxPool-8, output1 (the indices); a layer's other "
        "computed inputs (MaxUnpool's indices) are given as -i NAME=FILE by tensor name. "
        "Without -i, inputs are drawn at random and saved beside the output as "
        "OUT.inputs.npz."
    ),
)


# -- explain -------------------------------------------------------------------------------


def _int_tuple(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"{what} {text!r}: expected integers separated by commas") from None
    if any(v < 0 for v in values):
        raise UsageError(f"{what} {text!r}: expected integers >= 0")
    return values


def _cmd_explain(args: argparse.Namespace) -> int:
    from .explain import SCHEMA, explain_graph, format_report, to_json
    from .files import check_output

    graph = load_model(args.model)
    shape = _int_tuple(args.input_shape, "--input-shape") if args.input_shape else None
    if args.png:
        check_output(args.png, args.force, [args.model])
    reports = explain_graph(graph, args.layer, args.convention, shape, args.max_elements)
    if args.png:
        if len(reports) != 1:
            raise UsageError("--png draws one layer: choose it with --layer NAME")
        from .plot import draw

        cells = [_int_tuple(c, "--cell") for c in args.cells] if args.cells else None
        draw(reports[0], args.png, cells, args.depth)
    if args.json:
        _print_json(
            {"schema": SCHEMA, "irpool": __version__, "layers": [to_json(r) for r in reports]}
        )
    else:
        print("\n\n".join(format_report(r) for r in reports))
        if args.png:
            print(f"wrote {args.png}")
    return EXIT_OK


def _explain_options(p: Any) -> None:
    p.add_argument("model", metavar="MODEL", help="model.xml, <layer> fragments, or model.onnx")
    p.add_argument("--layer", metavar="NAME", help="the layer (default: every pooling layer)")
    _add_convention_option(
        p, "explain what this runtime computes (default: openvino for IR, onnx for ONNX)"
    )
    p.add_argument(
        "--input-shape", metavar="N,C,...", help="input shape for a layer whose input is dynamic"
    )
    p.add_argument("--json", action="store_true", help="print JSON (schema irpool.explain/1)")
    p.add_argument("--png", metavar="FILE.png", help="draw the windows (needs matplotlib)")
    p.add_argument(
        "--cell",
        dest="cells",
        action="append",
        metavar="I,J",
        help="output cell whose window to draw (repeatable; default corners+centre)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=0,
        help="for 3-D layers: the window of the first spatial axis to draw",
    )
    p.add_argument("--force", action="store_true", help="replace an existing PNG")
    p.add_argument(
        "--max-elements",
        type=_positive_int,
        default=None,
        metavar="N",
        help="largest input or output to explain (default 2^30 elements)",
    )


EXPLAIN = Command(
    "explain",
    _cmd_explain,
    _explain_options,
    help="one pooling layer in numbers and pictures",
    description=(
        "For each spatial axis of a pooling layer: the attributes as written, the pads "
        "after auto_pad, the output-size formula with its numbers, the first and last "
        "windows, the windows that reach into the padding or the ceil overhang, empty "
        "windows, and the divisor of every kind of border window under each convention."
    ),
)


# -- compare -------------------------------------------------------------------------------


def _add_cross_check_inputs(p: Any, layer_help: str, atol: str, rtol: str) -> None:
    """The options compare and convert-report start with: the input arrays, --layer, and the
    tolerances (their defaults as written in the help)."""
    _add_input_options(p, "input array (.npy or .npz); default: random from --seed and --range")
    p.add_argument("--layer", dest="layers", action="append", metavar="NAME", help=layer_help)
    p.add_argument(
        "--atol", type=float, default=float(atol), help=f"absolute tolerance (default {atol})"
    )
    p.add_argument(
        "--rtol", type=float, default=float(rtol), help=f"relative tolerance (default {rtol})"
    )


def _add_cross_check_report(p: Any, exact_help: str, schema: str) -> None:
    """--exact and --json, as compare and convert-report take them."""
    p.add_argument("--exact", action="store_true", help=exact_help)
    p.add_argument("--json", action="store_true", help=f"print JSON (schema {schema})")


def _print_report(
    args: argparse.Namespace,
    report: Any,
    format_report: Callable[[Any], str],
    to_json: Callable[[Any], Any],
    ok: bool,
    extra: dict[str, Any] | None = None,
    after: Sequence[str] = (),
) -> int:
    """A compare or convert-report report on stdout (JSON with --json, `extra` keys added; in
    text, the lines `after` follow the report), and the exit code."""
    if args.json:
        _print_json({**to_json(report), **(extra or {})})
    else:
        print(format_report(report))
        if after:
            print("\n".join(after))
    return EXIT_OK if ok else EXIT_FINDING


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare_model, format_report, to_json
    from .oracles import openvino_rt

    graph = load_model(args.model)
    if graph.format != "onnx":
        openvino_rt.load()
    if graph.fragment:
        raise UsageError(f"{args.model} holds layer fragments; compare needs a full net")
    inputs = _model_inputs(graph, args)
    show = None if args.json else _progress(args)
    report = compare_model(
        graph,
        inputs,
        args.layers,
        args.convention,
        args.atol,
        args.rtol,
        args.precision,
        args.fail_fast,
        show,
        args.exact,
    )
    source = _source_check(graph, inputs, args)
    extra = {"source": source[0]} if source else {}
    return _print_report(
        args, report, format_report, to_json, report.passed, extra, source[1] if source else []
    )


def _source_check(
    graph: Any, inputs: dict[str, Any], args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]] | None:
    """After compare's verdict on an IR whose source framework is detected: the layers openvino
    computes otherwise than that framework would (irpool/audit_ir.py); None when undetected."""
    if graph.format != "ir" or args.layers:
        return None
    from .audit_ir import compare_lines

    command = ["irpool", "convert-report", args.model]
    for spec in args.inputs or []:
        command += ["-i", spec]
    if not args.inputs:
        command += ["--seed", str(args.seed), "--range", args.range]
    try:
        guess, lines, records = compare_lines(graph, inputs, command)
    except IrpoolError as e:
        return {"error": e.message}, [f"source framework not checked: {e.message}"]
    if guess is None:
        return None
    record = {"framework": guess.framework, "evidence": guess.evidence, "differing": records}
    return record, lines


def _compare_options(p: Any) -> None:
    p.add_argument("model", metavar="MODEL", help="model.xml or model.onnx")
    _add_cross_check_inputs(
        p,
        "compare only this pooling layer: its name, or (ONNX) an output tensor's (repeatable)",
        atol="0",
        rtol="0",
    )
    _add_convention_option(
        p, "what irpool computes (default: openvino for IR, onnx for ONNX models)"
    )
    p.add_argument(
        "--precision",
        default="f32",
        choices=["f32", "f16", "bf16"],
        help="openvino's INFERENCE_PRECISION_HINT (default f32)",
    )
    _add_cross_check_report(
        p,
        "no allowance for summation-order rounding in ONNX float means (bit for bit)",
        "irpool.compare/1",
    )
    p.add_argument("--fail-fast", action="store_true", help="stop at the first differing layer")
    _add_progress_option(p)


COMPARE = Command(
    "compare",
    _cmd_compare,
    _compare_options,
    help="cross-check every pooling layer of a model against openvino (or onnxruntime)",
    description=(
        "Run the whole model in openvino (any layer types; onnxruntime for an ONNX model), "
        "take each pooling layer's actual input from it, compute the layer with irpool's "
        "core and compare the "
        "outputs: errors in abs/rel/ulp, mismatch counts, the worst element, the smallest "
        "tolerances that would pass; indices exactly. A mismatch is diagnosed against the "
        "other conventions and the known divergences. IR layers must match openvino bit for "
        "bit (measured: they do). Float AveragePool nodes of an ONNX model may also differ "
        "from onnxruntime by summation-order rounding, at most (taps + 1) * eps * max|x| of "
        "the window (plus one ulp of an f16 output), because onnxruntime's MLAS kernels sum "
        "a window in another order than irpool (measured: up to 4 ulp on shufflenet, at most "
        "0.21 of that bound over 1,050 random nodes); --exact turns this off. MaxPool, "
        "indices and integer types are always compared exactly. A layer openvino 2026.4 "
        "is known to crash or fail on (AvgPool-16, or MaxPool-8/14 with its indices used, "
        "without dilations) is refused before openvino sees it. Reductions (ReduceMean, "
        "ReduceSum, ReduceL1/L2, global pooling) may differ by another summation order, at "
        "most (n + 1) * eps * mean|x| of the n reduced elements plus one ulp (openvino may "
        "lay a reduction out otherwise inside a network); --exact turns this off too. An "
        "ONNX node onnxruntime has no kernel for (LpPool-1) is compared with onnx's "
        "reference evaluator. Pooling-like layers irpool does not cover (ROIPooling, "
        "ReduceMin, ...) are listed as skipped, with the reason, and counted in the "
        "summary. Exit 0 all agree, 1 a mismatch, 2 invalid input, 3 the oracle is not "
        "installed."
    ),
)


# -- convert-report --------------------------------------------------------------------------


def _cmd_convert_report(args: argparse.Namespace) -> int:
    from .convert_report import convert_report, format_report, to_json
    from .frontends import onnx_model
    from .oracles import openvino_rt

    if not onnx_model.is_onnx_path(args.model):
        return _cmd_audit(args)
    if args.source or args.input_shapes:
        raise UsageError("--source and --input-shape are for IRs and source models, not ONNX")
    openvino_rt.load()
    graph = onnx_model.load(args.model)
    inputs = _model_inputs(graph, args)
    report = convert_report(graph, inputs, args.atol, args.rtol, args.layers, args.exact)
    return _print_report(args, report, format_report, to_json, report.same)


def _cmd_audit(args: argparse.Namespace) -> int:
    """convert-report on an IR or on a PyTorch or TensorFlow model (irpool/audit.py)."""
    from .audit import audit_tf, audit_torch, format_report, parse_shapes, source_kind, to_json

    kind = source_kind(args.model)
    atol, rtol = (0.0, 0.0) if args.exact else (args.atol, args.rtol)
    if kind == "ir":
        from .audit_ir import audit_ir

        graph = load_model(args.model)
        if args.input_shapes and not args.inputs:
            from .audit_ir import random_inputs_of_shapes

            low, high = _parse_range(args.range)
            shapes = parse_shapes(args.input_shapes)
            inputs = random_inputs_of_shapes(graph, shapes, args.seed, low, high)
        elif args.input_shapes:
            raise UsageError("give -i or --input-shape, not both")
        else:
            inputs = _model_inputs(graph, args)
        report = audit_ir(graph, inputs, args.source, atol, rtol, args.layers)
        if not args.inputs:
            from .audit import random_inputs_note

            low, high = _parse_range(args.range)
            report.notes.append(random_inputs_note(list(report.inputs), low, high, args.seed))
    elif kind in ("torch", "tf"):
        if args.source is not None and args.source != kind:
            raise UsageError(f"{args.model} is a {kind} model; --source is for IRs")
        if not os.path.exists(args.model):
            raise UsageError("no such file or directory", Where(file=args.model))
        inputs, _ = _input_specs(args.inputs, args.max_elements)
        low, high = _parse_range(args.range)
        audit = audit_torch if kind == "torch" else audit_tf
        report = audit(
            args.model,
            None,
            inputs,
            parse_shapes(args.input_shapes),
            args.seed,
            low,
            high,
            args.cast,
            atol,
            rtol,
            args.layers,
        )
    else:
        raise UsageError(
            "convert-report takes an ONNX model (.onnx), an IR (.xml), a PyTorch program (.pt2, "
            "TorchScript .pt), a Keras model (.keras) or a SavedModel directory",
            Where(file=args.model),
        )
    return _print_report(args, report, format_report, to_json, report.same)


def _convert_report_options(p: Any) -> None:
    p.add_argument(
        "model",
        metavar="MODEL",
        help="model.onnx, model.xml, model.pt2 / model.pt, model.keras or a SavedModel directory",
    )
    _add_cross_check_inputs(
        p,
        "report only this pooling node: its ONNX name or an output tensor's; a source model's "
        "op: its name, module path or layer (repeatable)",
        atol="1e-6",
        rtol="1e-5",
    )
    p.add_argument(
        "--source",
        choices=["torch", "onnx", "tf"],
        default=None,
        help="the framework an IR was converted from (default: detected; PyTorch when no mark "
        "tells)",
    )
    p.add_argument(
        "--input-shape",
        dest="input_shapes",
        action="append",
        metavar="[NAME=]N,C,...",
        help="shape of a random input the source model does not record (repeatable)",
    )
    _add_cross_check_report(
        p,
        "no allowance for summation-order rounding in float means (source models and IRs: bit "
        "for bit)",
        "irpool.convert-report/2; /3 for IRs and source models",
    )


CONVERT_REPORT = Command(
    "convert-report",
    _cmd_convert_report,
    _convert_report_options,
    help="what openvino's conversion made of each pooling op (ONNX, PyTorch, TensorFlow)",
    description=(
        "Convert an ONNX model (any network) with openvino, run it on openvino's CPU plugin "
        "with each pooling node's input and outputs as extra outputs, and compare what the "
        "converted model computes there with what the ONNX node means (irpool's onnx "
        "convention, which follows onnxruntime) on the same input; name the divergence "
        "where they differ (D1, D2c, D4, D6, D10b). With onnxruntime installed, each node's "
        "meaning is also checked against onnxruntime's own output (as compare does). Float "
        "means may differ by summation-order rounding, (taps + 1) * eps * max|x| of the "
        "window, unless --exact. "
        "A PyTorch program (.pt2 from torch.export.save, or TorchScript from torch.jit.save) "
        "or a TensorFlow model (a SavedModel directory, a .keras file) is converted with "
        "openvino too, and each pooling op as the framework computes it (run again on the "
        "input openvino gave its layer) is compared with the layer it became: torch's or "
        "TensorFlow's name of the op, the layer, both attributes, the differing cells and "
        "the divergence (D3, D8, D36, D37, D38). An IR (.xml) is compared layer by layer "
        "with what its source framework computes for the same attributes: the framework is "
        "detected from the marks openvino's front ends leave, or given with --source. "
        "Exit 0 all the same, 1 a difference, 2 invalid input (also a model openvino "
        "cannot convert, such as divisor_override), 3 openvino, onnx, torch or tensorflow "
        "missing."
    ),
)


# -- fixtures ----------------------------------------------------------------------------------


def _cmd_fixtures(args: argparse.Namespace) -> int:
    from .fixtures import format_summary, generate, plan_cases

    if args.verify:
        from .oracles import openvino_rt

        openvino_rt.load()
    cases, skipped, settings = plan_cases(
        args.preset, args.grid, args.from_model, args.layers, args.seed
    )
    show = _progress(args)
    report = generate(
        args.outdir, cases, settings, skipped, args.force, args.resume, args.verify, show
    )
    print(format_summary(report))
    unexplained = [s for s in report.statuses if s.status != "confirmed" and not s.known]
    return EXIT_FINDING if unexplained else EXIT_OK


def _fixtures_options(p: Any) -> None:
    p.add_argument("outdir", metavar="OUTDIR")
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--preset",
        choices=["smoke", "corners", "full", "family"],
        default=None,
        help="smoke: one case per op version; corners: every named divergence and the spec "
        "examples; full: versions x ranks x attributes x element types; family: "
        "AdaptiveAvgPool-8, AdaptiveMaxPool-8 and ReduceMean/Max/Sum/L1/L2 (default smoke)",
    )
    source.add_argument("--grid", metavar="FILE.toml", help="a sweep of your own (TOML)")
    source.add_argument(
        "--from",
        dest="from_model",
        metavar="MODEL.xml",
        help="standalone cases of the pooling layers of a real model",
    )
    p.add_argument(
        "--layer",
        dest="layers",
        action="append",
        metavar="NAME",
        help="with --from: the layer to extract (repeatable; default every pooling layer)",
    )
    p.add_argument("--seed", type=_natural, default=0, help="seed of the random inputs (default 0)")
    p.add_argument(
        "--verify",
        action="store_true",
        help="run every case on openvino's CPU plugin and mark it confirmed or diverges",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty OUTDIR (case folders of the same name are replaced)",
    )
    mode.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted run: keep its finished cases, write the rest",
    )
    _add_progress_option(p)


FIXTURES = Command(
    "fixtures",
    _cmd_fixtures,
    _fixtures_options,
    help="write golden test cases: models, inputs, expected outputs, manifest",
    description=(
        "Write one folder per pooling case into OUTDIR (model.xml, input.npy, "
        "expected.npz, meta.json) and an index.json manifest; format in docs/fixtures.md. "
        "OUTDIR is created if its parent exists; a non-empty OUTDIR is refused unless "
        "--resume or --force. Exit 0 ok, 1 when --verify finds a case openvino disagrees "
        "with for a reason that is not a known refusal, 2 invalid input, 3 openvino is "
        "not installed (--verify)."
    ),
)


# -- main --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="irpool",
        description=(
            "Check, run, explain and cross-check the pooling layers of OpenVINO IR models "
            "(AvgPool-1/14/16, MaxPool-1/8/14) and ONNX pooling nodes."
        ),
    )
    parser.add_argument("--version", action="version", version=f"irpool {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        command.options(p)
        p.set_defaults(func=command.run)
    return parser


COMMANDS = (CHECK, RUN, EXPLAIN, COMPARE, CONVERT_REPORT, FIXTURES)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        sys.stderr.write("irpool: a COMMAND is required; see the list above or irpool --help\n")
        return EXIT_INVALID
    try:
        code: int = args.func(args)
        sys.stdout.flush()
        return code
    except IrpoolError as e:
        sys.stderr.write(f"irpool: {_one_line(str(e))}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("irpool: interrupted\n")
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except MemoryError:
        sys.stderr.write("irpool: out of memory; lower the input size or IRPOOL_MAX_ELEMENTS\n")
        return EXIT_INVALID
    except Exception as e:  # a bug: one line, and the traceback on request
        if os.environ.get("IRPOOL_DEBUG"):
            raise
        sys.stderr.write(
            f"irpool: internal error: {type(e).__name__}: {_one_line(str(e))} "
            "(this is a bug in irpool; set IRPOOL_DEBUG=1 for the traceback)\n"
        )
        return EXIT_INTERNAL


def _one_line(text: str) -> str:
    return " ".join(text.split())
