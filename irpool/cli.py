"""Command line: argparse -> library call -> printed report and exit code.

Exit codes: 0 ok, 1 a finding (a declared shape or a compared value disagrees), 2 invalid input
or usage (one line on stderr), 3 an oracle that was asked for is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from . import __version__
from .errors import IrpoolError, UsageError, Where

EXIT_OK, EXIT_FINDING, EXIT_INVALID, EXIT_ORACLE = 0, 1, 2, 3
EXIT_INTERNAL = 70


class UsageFailure(Exception):
    """A usage error of the command line (unknown option, missing argument, bad value), raised
    by the parser of the command it concerns; `main` reports it (one line, exit 2)."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message

    @property
    def line(self) -> str:
        return f"{self.prog}: error: {self.message} (see {self.prog} --help)"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit code 2, with the
    closest spelling of a misspelt command, choice or option."""

    def error(self, message: str) -> NoReturn:
        raise UsageFailure(self.prog, _with_suggestion(message, self))


def _with_suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message, with "did you mean ...?" when a misspelt word is close to one the
    parser knows (a command, a choice of an option, an option of the command)."""
    import difflib

    choice = re.match(r"argument (\S+): invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if choice:
        known = re.findall(r"'([^']*)'", choice[3]) or choice[3].split(", ")
        what = "command" if choice[1] == "COMMAND" else f"choice of {choice[1]}"
        message = f"unknown {what} {choice[2]!r}; expected one of {', '.join(known)}"
        close = difflib.get_close_matches(choice[2], known, n=1, cutoff=0.75)
        return f"{message}; did you mean {close[0]!r}?" if close else message
    unknown = re.match(r"unrecognized arguments: (.*)$", message)
    if unknown:
        options = [o for a in parser._actions for o in a.option_strings]
        for word in unknown[1].split():
            close = difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.75)
            if word.startswith("-") and close:
                return f"{message}; did you mean {close[0]}?"
    return message


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, the handler of its parsed arguments (which returns the exit
    code), and the function that adds its options, whose docstring is the command's help: a
    first line for the list of commands, then the description --help prints."""

    name: str
    run: Callable[[argparse.Namespace], int]
    options: Callable[[Any], None]

    @property
    def help(self) -> str:
        return _paragraphs(self.options.__doc__)[0]

    @property
    def description(self) -> str:
        return _paragraphs(self.options.__doc__)[-1]


def _paragraphs(doc: str | None) -> list[str]:
    """The first paragraph of a docstring and the rest, each joined into one line (without
    inspect.cleandoc: importing inspect costs a tenth of --help's start-up)."""
    first, _, rest = (doc or "").strip().partition("\n\n")
    return [" ".join(first.split()), " ".join(rest.split()) or " ".join(first.split())]


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def _json_help(schema_file: str) -> str:
    name, _, version = schema_file.rpartition("-")
    return f"print JSON (schema irpool.{name}/{version}: irpool/schemas/{schema_file}.json)"


def _repeatable(p: Any, flags: str, dest: str, metavar: str, help: str) -> None:
    """An option that may be given several times (`flags`: its spellings, space-separated),
    collected in a list."""
    p.add_argument(*flags.split(), dest=dest, action="append", metavar=metavar, help=help)


LAYER_HELP = "name, id, output tensor name or a unique part of the name"


# -- check -----------------------------------------------------------------------------------


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import SCHEMA, check_file, format_report

    reports = [check_file(path) for path in args.paths]
    fragments = [r.path for r in reports if r.graph.fragment]
    if args.openvino and fragments:
        raise UsageError(
            "--openvino reads whole models; a file of <layer> fragments is no model openvino "
            "can read",
            Where(file=fragments[0]),
        )
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
    """verify the declared shapes of pooling layers

    Infer the output shape of every pooling layer of an OpenVINO IR (or of pasted <layer>
    fragments) from its attributes and input dims, as openvino does, and report every declared
    <dim> that disagrees, with the formula and its numbers. Other layer types are taken as
    declared. For an ONNX model (.onnx) the declared shapes are compared with onnxruntime's
    sizes, with notes where the operator text of the node's version or onnx's own shape
    inference says otherwise. Exit 0 when all agree, 1 on a disagreement, 2 on invalid input.
    """
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


CHECK = Command("check", _cmd_check, _check_options)


# -- run ---------------------------------------------------------------------------------------


def _input_specs(specs: list[str] | None, limit: int | None) -> tuple[dict[str, Any], list[str]]:
    """Arrays from -i arguments ([NAME=]FILE: .npy, .npz, .pb or a test_data_set folder; see
    irpool.inputs) and the paths they came from."""
    from .inputs import load_given

    given = load_given(specs, limit)
    return given.arrays, given.paths


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


def _tolerance(text: str) -> float:
    """A tolerance: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number >= 0")
    return value


def _add_input_shape_option(p: Any) -> None:
    _repeatable(
        p,
        "--input-shape",
        "input_shapes",
        "[NAME=]SHAPE",
        "shape of model input NAME, such as x=1,3,32,32 (without NAME: the only input); "
        "replaces its declared shape as openvino's reshape does (repeatable)",
    )


def _add_input_options(p: Any, input_help: str) -> None:
    """The options that choose a command's input arrays: files, shapes, or random ones."""
    _repeatable(p, "-i --input", "inputs", "[NAME=]FILE", input_help)
    _add_input_shape_option(p)
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


def _progress(args: argparse.Namespace, what: str = "", unit: str = "step") -> Any:
    """The progress callback --progress asks for (a tqdm bar on stderr; auto: only when stderr
    is a terminal)."""
    from .progress import progress_bar

    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        return progress_bar(what, unit, sys.stderr, force=True)
    return None


def _shaped(graph: Any, args: argparse.Namespace) -> Any:
    """The graph with the shapes of --input-shape given to its inputs (irpool.inputs)."""
    from .inputs import parse_shapes, reshaped

    return reshaped(graph, parse_shapes(getattr(args, "input_shapes", None)))


def _model_inputs(graph: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The arrays given with -i bound to the model's inputs, random ones for the rest (of
    their declared or --input-shape shapes: give `_shaped(graph, args)`)."""
    from .inputs import draw, load_given

    given = load_given(args.inputs, args.max_elements)
    low, high = _parse_range(args.range)
    arrays, _ = draw(graph, given, args.seed, low, high, args.cast, args.max_elements)
    return arrays


def load_model(path: str) -> Any:
    """An IR file, fragments, or an ONNX model (by its .onnx suffix)."""
    from .api import load

    return load(path)


def _cmd_run(args: argparse.Namespace) -> int:
    from .arrays import save_npz
    from .files import check_output
    from .inputs import load_given, parse_shapes
    from .run_report import execute, format_report

    limit = args.max_elements
    graph = load_model(args.model)
    given = load_given(args.inputs, limit)
    protected = [args.model, os.path.splitext(args.model)[0] + ".bin", *given.paths]
    check_output(args.output, args.force, protected)
    if not args.output.lower().endswith(".npz"):
        raise UsageError(
            "run writes an .npz archive (one array per output); give -o a name ending in .npz",
            Where(file=args.output),
        )
    low, high = _parse_range(args.range)
    shapes = parse_shapes(args.input_shapes)
    report = execute(
        graph, given, shapes, args.layer, args.convention, args.cast, args.seed, low, high, limit
    )
    report.output_file = args.output
    report.saved_tensors = args.save_all
    if any(s.source == "random" for s in report.sources):
        report.random_inputs_file = os.path.splitext(args.output)[0] + ".inputs.npz"
        check_output(report.random_inputs_file, args.force, protected)
    to_save = dict(report.outputs)
    if args.save_all:
        to_save.update(report.tensors)
    save_npz(args.output, to_save)
    if report.random_inputs_file:
        save_npz(report.random_inputs_file, report.inputs)
    if args.json:
        _print_json(report.to_json())
    else:
        print(format_report(report))
    return EXIT_OK


def _run_options(p: Any) -> None:
    """execute a pooling net or one pooling layer with numpy

    Execute an IR net of pooling layers (AvgPool-1/14/16, MaxPool-1/8/14, AdaptiveAvgPool-8,
    AdaptiveMaxPool-8, ReduceMean/Max/Sum-1, ReduceL1/L2-4) and the glue between them
    (Parameter, Const, Convert, ConvertLike, Abs, Sign, ReLU, Sqrt, Multiply, Power, Reshape,
    Split, Concat, Squeeze, Unsqueeze, Result), or one pooling layer of any IR with --layer; or
    an ONNX model of pooling nodes (AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool,
    LpPool, GlobalLpPool, MaxUnpool, com.microsoft QLinearAveragePool and
    QLinearGlobalAveragePool, with Identity/Squeeze/Unsqueeze). OUT.npz holds one array per
    Result (keyed by the Result layer's name) or graph output (keyed by its name); with --layer:
    output0 and, for MaxPool-8/14 and AdaptiveMaxPool-8, output1 (the indices); a layer's other
    computed inputs (MaxUnpool's indices) are given as -i NAME=FILE by tensor name. Without -i,
    inputs are drawn at random and saved beside the output as OUT.inputs.npz.
    """
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
    p.add_argument("--layer", metavar="NAME", help=f"run only this pooling layer ({LAYER_HELP})")
    _add_convention_option(p, "compute what this runtime would (default: openvino for IR layers)")
    p.add_argument(
        "--save-all",
        action="store_true",
        help="also save every intermediate tensor, keyed layername:port",
    )
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.add_argument("--json", action="store_true", help=_json_help("run-1"))


RUN = Command("run", _cmd_run, _run_options)


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
    from .inputs import parse_shapes, reshaped

    graph = load_model(args.model)
    shapes = parse_shapes(args.input_shapes)
    shape = None
    if graph.fragment:  # no model inputs: a shape is the layer's input
        if set(shapes) - {""}:
            raise UsageError("a file of layer fragments has no model inputs to give shapes to")
        shape = shapes.get("")
    else:
        graph = reshaped(graph, shapes)
    refused: IrpoolError | None = None
    if args.png:
        try:
            check_output(args.png, args.force, [args.model])
        except IrpoolError as e:  # the explanation is still printed (not with --json)
            if args.json:
                raise
            refused = e
    reports = explain_graph(graph, args.layer, args.convention, shape, args.max_elements)
    if args.png and refused is None:
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
        if refused is not None:
            sys.stdout.flush()
            raise refused
        if args.png:
            print(f"wrote {args.png}")
    return EXIT_OK


def _explain_options(p: Any) -> None:
    """one pooling layer in numbers and pictures

    For each spatial axis of a pooling layer: the attributes as written, the pads after
    auto_pad, the output-size formula with its numbers, the first and last windows, the windows
    that reach into the padding or the ceil overhang, empty windows, and the divisor of every
    kind of border window under each convention.
    """
    p.add_argument("model", metavar="MODEL", help="model.xml, <layer> fragments, or model.onnx")
    p.add_argument(
        "--layer", metavar="NAME", help=f"the layer ({LAYER_HELP}; default: every pooling layer)"
    )
    _add_convention_option(
        p, "explain what this runtime computes (default: openvino for IR, onnx for ONNX)"
    )
    _add_input_shape_option(p)
    p.add_argument("--json", action="store_true", help=_json_help("explain-1"))
    p.add_argument("--png", metavar="FILE.png", help="draw the windows (needs matplotlib)")
    _repeatable(
        p,
        "--cell",
        "cells",
        "I,J",
        "output cell whose window to draw (repeatable; default corners+centre)",
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


EXPLAIN = Command("explain", _cmd_explain, _explain_options)


# -- compare -------------------------------------------------------------------------------


def _add_cross_check_inputs(p: Any, layer_help: str, atol: str, rtol: str) -> None:
    """The options compare and convert-report start with: the input arrays, --layer, and the
    tolerances (their defaults as written in the help)."""
    _add_input_options(p, INPUT_HELP)
    _repeatable(p, "--layer", "layers", "NAME", layer_help)
    p.add_argument(
        "--atol",
        type=_tolerance,
        default=float(atol),
        help=f"absolute tolerance (default {atol}: {TOLERANCE_REASON})",
    )
    p.add_argument(
        "--rtol", type=_tolerance, default=float(rtol), help=f"relative tolerance (default {rtol})"
    )


TOLERANCE_REASON = (
    "irpool reproduces the runtimes bit for bit, and float means get their own allowance "
    "for summation order, see --exact"
)
INPUT_HELP = (
    "input array: .npy, .npz, .pb (ONNX TensorProto) or a test_data_set_N folder; NAME is a "
    "model input (repeatable; default: random from --seed and --range)"
)


def _add_cross_check_report(p: Any, exact_help: str, schema: str) -> None:
    """--exact, --json and --html, as compare and convert-report take them."""
    p.add_argument("--exact", action="store_true", help=exact_help)
    p.add_argument("--json", action="store_true", help=_json_help(schema))
    p.add_argument(
        "--html",
        metavar="FILE.html",
        help="also write a self-contained HTML page of the report (heatmaps of differing cells)",
    )
    p.add_argument(
        "--extract",
        metavar="DIR",
        default=None,
        help="also write a bundle (irpool extract: a small model, repro.py, REPORT.md) of "
        "every differing layer into DIR/NN-NAME, the first one first (DIR: new or empty)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace an existing HTML file or --extract folder"
    )


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
    text, the lines `after` follow the report), an --html page, and the exit code."""
    if args.html:
        from .files import atomic_write_text
        from .html import render_html

        atomic_write_text(args.html, render_html(to_json(report)))
    if args.json:
        _print_json({**to_json(report), **(extra or {})})
    else:
        print(format_report(report))
        if after:
            print("\n".join(after))
        if args.html:
            print(f"wrote {args.html}")
    return EXIT_OK if ok else EXIT_FINDING


def _check_html(args: argparse.Namespace) -> None:
    """Refuse an --html path that exists (without --force) before anything runs."""
    if args.html:
        from .files import check_output

        if not args.html.lower().endswith((".html", ".htm")):
            raise UsageError("--html writes a web page; give it a name ending in .html")
        check_output(args.html, args.force, [args.model, *(args.inputs or [])])


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare_model, format_report, to_json
    from .oracles import openvino_rt

    _check_html(args)
    _check_extract(args)
    graph = load_model(args.model)
    if graph.format != "onnx":
        openvino_rt.load()
    if graph.fragment:
        raise UsageError(f"{args.model} holds layer fragments; compare needs a full net")
    graph = _shaped(graph, args)
    inputs = _model_inputs(graph, args)
    show = _progress(args, "compare", "layer")
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
    extra: dict[str, Any] = {"source": source[0]} if source else {}
    after = list(source[1]) if source else []
    if args.extract:
        from .extract_command import compare_extract

        lines, extra["extracted"] = compare_extract(args, graph, inputs, report, source)
        after += lines
    return _print_report(args, report, format_report, to_json, report.passed, extra, after)


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
    for spec in args.input_shapes or []:
        command += ["--input-shape", spec]
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
    """cross-check every pooling layer of a model against openvino (or onnxruntime)

    Run the whole model in openvino (onnxruntime for an ONNX model; onnx's reference evaluator
    for a node onnxruntime has no kernel for), compute each pooling layer with irpool on the
    input the runtime gave it, and compare the outputs: errors in abs/rel/ulp, the worst
    element, the smallest tolerances that pass; indices exactly. A mismatch is diagnosed against
    the other conventions and the known divergences. Float means and reductions may differ by
    summation order within a bound (docs/cli.md); pooling-like layers irpool does not cover are
    listed as skipped. Exit 0 all agree, 1 a mismatch, 2 invalid input, 3 the oracle is not
    installed.
    """
    p.add_argument("model", metavar="MODEL", help="model.xml or model.onnx")
    _add_cross_check_inputs(
        p, f"compare only this pooling layer ({LAYER_HELP}; repeatable)", atol="0", rtol="0"
    )
    _add_convention_option(
        p, "what irpool computes (default: openvino for IR, onnx for ONNX models)"
    )
    p.add_argument(
        "--precision",
        default=None,
        choices=["f32", "f16", "bf16"],
        help="openvino's INFERENCE_PRECISION_HINT (default: the CPU plugin's own on this "
        "machine, bf16 where the CPU has AVX512_BF16 or AMX, else f32; the report says which)",
    )
    _add_cross_check_report(
        p, "no allowance for summation-order rounding in ONNX float means", "compare-1"
    )
    p.add_argument("--fail-fast", action="store_true", help="stop at the first differing layer")
    _add_progress_option(p)


COMPARE = Command("compare", _cmd_compare, _compare_options)


# -- convert-report --------------------------------------------------------------------------


def _cmd_convert_report(args: argparse.Namespace) -> int:
    from .convert_report import convert_report, format_report, to_json
    from .frontends import onnx_model
    from .oracles import openvino_rt

    _check_html(args)
    _check_extract(args)
    if not onnx_model.is_onnx_path(args.model):
        return _cmd_audit(args)
    if args.source:
        raise UsageError("--source is for IRs (which framework they came from), not ONNX models")
    openvino_rt.load()
    graph = _shaped(onnx_model.load(args.model), args)
    inputs = _model_inputs(graph, args)
    atol = 0.0 if args.atol is None else args.atol
    rtol = 0.0 if args.rtol is None else args.rtol
    report = convert_report(graph, inputs, atol, rtol, args.layers, args.exact)
    extra, after = _extract_differing(args, graph, inputs, report)
    return _print_report(args, report, format_report, to_json, report.same, extra, after)


def _check_extract(args: argparse.Namespace) -> None:
    """Refuse an --extract folder that cannot be written, before anything runs."""
    if getattr(args, "extract", None):
        from .extract_command import check_extract_dir

        check_extract_dir(args)


def _extract_differing(
    args: argparse.Namespace, graph: Any, inputs: dict[str, Any], report: Any
) -> tuple[dict[str, Any], list[str]]:
    """convert-report --extract DIR: a bundle of every node or layer that differs."""
    if not getattr(args, "extract", None):
        return {}, []
    from .extract_command import convert_extract

    lines, records = convert_extract(args, graph, inputs, report)
    return {"extracted": records}, lines


def _cmd_audit(args: argparse.Namespace) -> int:
    """convert-report on an IR or on a PyTorch or TensorFlow model (irpool/audit.py)."""
    from .audit import (
        AUDIT_TOLERANCE,
        audit_tf,
        audit_torch,
        format_report,
        parse_shapes,
        source_kind,
        to_json,
    )

    kind = source_kind(args.model)
    atol = AUDIT_TOLERANCE[0] if args.atol is None else args.atol
    rtol = AUDIT_TOLERANCE[1] if args.rtol is None else args.rtol
    if args.exact:
        atol, rtol = 0.0, 0.0
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
    if kind == "ir":
        extra, after = _extract_differing(args, graph, inputs, report)
    else:
        from .extract_command import source_extract

        extra, after = source_extract(args, report)
    return _print_report(args, report, format_report, to_json, report.same, extra, after)


def _convert_report_options(p: Any) -> None:
    """what openvino's conversion made of each pooling op (ONNX, PyTorch, TensorFlow)

    Convert a model with openvino, run it on openvino's CPU plugin, and compare what each
    pooling op became with what the op means in its framework, on the same input: ONNX (irpool's
    onnx convention, checked against onnxruntime when it is installed), a PyTorch program (.pt2,
    TorchScript .pt) or a TensorFlow model (SavedModel, .keras) run by the framework itself, or
    an IR compared with its detected (or --source) framework; name the divergence where they
    differ (docs/divergences.md, docs/debugging-a-converted-model.md). Exit 0 all the same, 1 a
    difference, 2 invalid input (also a model openvino cannot convert), 3 openvino, onnx, torch
    or tensorflow missing.
    """
    p.add_argument(
        "model",
        metavar="MODEL",
        help="model.onnx, model.xml, model.pt2 / model.pt, model.keras or a SavedModel directory",
    )
    _add_cross_check_inputs(
        p,
        f"report only this pooling node ({LAYER_HELP}); a source model's op: its name, module "
        "path or layer (repeatable)",
        atol="0",
        rtol="0",
    )
    # the defaults depend on the model: ONNX 0 (see --exact), source models and IRs 1e-6, 1e-5
    p.set_defaults(atol=None, rtol=None)
    for action in p._actions:
        if action.dest == "atol":
            action.help = (
                f"absolute tolerance (default 0 for ONNX: {TOLERANCE_REASON}; 1e-6 for source "
                "models and IRs, whose frameworks may sum float means in another order)"
            )
        elif action.dest == "rtol":
            action.help = "relative tolerance (default 0 for ONNX, 1e-5 otherwise)"
    p.add_argument(
        "--source",
        choices=["torch", "onnx", "tf"],
        default=None,
        help="the framework an IR was converted from (default: detected; PyTorch when no mark "
        "tells)",
    )
    _add_cross_check_report(
        p,
        "no allowance for summation-order rounding in float means (source models and IRs: bit "
        "for bit)",
        "convert-report-2",
    )
    for action in p._actions:
        if action.dest == "json":
            action.help = (
                "print JSON (schema irpool.convert-report/2 for ONNX, /3 for source models and "
                "IRs: irpool/schemas/convert-report-2.json, convert-report-3.json)"
            )


CONVERT_REPORT = Command("convert-report", _cmd_convert_report, _convert_report_options)


# -- fixtures ----------------------------------------------------------------------------------


def _cmd_fixtures(args: argparse.Namespace) -> int:
    from .fixtures import format_summary, generate, plan_cases

    if args.verify:
        from .oracles import openvino_rt

        openvino_rt.load()
    if (args.inputs or args.input_shapes) and args.from_model is None:
        raise UsageError("-i and --input-shape give the inputs of --from MODEL.xml")
    cases, skipped, settings = plan_cases(
        args.preset,
        args.grid,
        args.from_model,
        args.layers,
        args.seed,
        inputs=args.inputs,
        input_shapes=args.input_shapes,
        data_set=args.data_set,
    )
    show = _progress(args, "fixtures", "case")
    report = generate(
        args.outdir, cases, settings, skipped, args.force, args.resume, args.verify, show
    )
    if args.json:
        from .fixtures import summary_to_json

        _print_json(summary_to_json(report))
    else:
        print(format_summary(report))
    unexplained = [s for s in report.statuses if s.status != "confirmed" and not s.known]
    return EXIT_FINDING if unexplained else EXIT_OK


def _fixtures_options(p: Any) -> None:
    """write golden test cases: models, inputs, expected outputs, manifest

    Write one folder per pooling case into OUTDIR (model.xml, input.npy, expected.npz,
    meta.json) and an index.json manifest; format in docs/fixtures.md. OUTDIR is created if its
    parent exists; a non-empty OUTDIR is refused unless --resume or --force. Exit 0 ok, 1 when
    --verify finds a case openvino disagrees with for a reason that is not a known refusal, 2
    invalid input, 3 openvino is not installed (--verify).
    """
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
    layer_help = f"with --from: the layer to extract ({LAYER_HELP}; repeatable; default all)"
    _repeatable(p, "--layer", "layers", "NAME", layer_help)
    input_help = "with --from: the model's input array (as run and compare take them)"
    _repeatable(p, "-i --input", "inputs", "[NAME=]FILE", input_help)
    _add_input_shape_option(p)
    p.add_argument(
        "--data-set",
        action="store_true",
        help="also write each case's input and outputs as ONNX TensorProto files "
        "(test_data_set_0/input_0.pb, output_0.pb, ...; needs onnx)",
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
    p.add_argument("--json", action="store_true", help=_json_help("fixtures-summary-1"))


FIXTURES = Command("fixtures", _cmd_fixtures, _fixtures_options)


# -- extract ---------------------------------------------------------------------------------


def _cmd_extract(args: argparse.Namespace) -> int:
    from .extract_command import run

    return run(args)


def _extract_options(p: Any) -> None:
    """write a minimal standalone repro of one layer (a bundle for a bug report)

    Cut one pooling layer out of a model (IR: the layer with Parameters of its real input's
    shape and type and its constant inputs; ONNX: the node alone with its opset), feed it the
    input the runtime gave it inside the full model, check that it still shows what the full
    model shows (else keep the full model's dynamic dims, then producers, then consumers),
    shrink the input while the finding persists, and write a folder that needs nothing but the
    runtime and numpy: the model, input.npz, expected.npz, repro.py (exit 1 while the
    difference reproduces, 0 once fixed), REPORT.md and bundle.json (docs/extract.md). Exit 0
    when the layer agrees, 1 when the bundle reproduces a difference, 2 invalid input, 3 the
    runtime is not installed.
    """
    from .extract_command import add_options

    add_options(p)


EXTRACT = Command("extract", _cmd_extract, _extract_options)


# -- main --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="irpool",
        description=(
            "Check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX "
            "models, the whole family: windowed pooling (AvgPool-1/14/16, MaxPool-1/8/14; "
            "AveragePool, MaxPool), adaptive pooling (AdaptiveAvgPool-8, AdaptiveMaxPool-8), "
            "reductions (ReduceMean/Max/Sum-1, ReduceL1/L2-4), global pooling "
            "(GlobalAveragePool, GlobalMaxPool), Lp pooling (LpPool, GlobalLpPool), MaxUnpool "
            "and quantized average pooling (QLinearAveragePool, QLinearGlobalAveragePool)."
        ),
        epilog="See irpool COMMAND --help for the options of a command, and docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"irpool {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog=f"Exit codes and the options every command shares: docs/cli.md. With --json "
            f"a failure prints an error document ({ERROR_SCHEMA}) on stdout.",
        )
        command.options(p)
        p.set_defaults(func=command.run)
        _SUBPARSERS[command.name] = p
    return parser


_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}
"""The parser of each command, by name (build_parser fills it): an unknown option is reported
by the parser of its command, which names `irpool CMD --help`."""


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from .fuzz.cli import run

    return run(args)


from .fuzz.cli import options as _fuzz_options  # noqa: E402 - light: argparse only

FUZZ = Command("fuzz", _cmd_fuzz, _fuzz_options)


COMMANDS = (CHECK, RUN, EXPLAIN, COMPARE, CONVERT_REPORT, FIXTURES, EXTRACT, FUZZ)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    failure = _Failure(words)
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(words)
        if extra:
            command = _SUBPARSERS.get(getattr(args, "command", None) or "", parser)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
    except UsageFailure as e:
        return failure.usage(e)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        sys.stderr.write("irpool: a COMMAND is required; see the list above or irpool --help\n")
        return EXIT_INVALID
    try:
        with warnings.catch_warnings():
            if not os.environ.get("IRPOOL_DEBUG"):
                # no library's warning reaches the user (numpy's RuntimeWarnings on infinite
                # scales, the runtimes' deprecations): irpool says what matters itself
                warnings.simplefilter("ignore")
            _check_environment()
            code: int = args.func(args)
        sys.stdout.flush()
        return code
    except UsageFailure as e:
        return failure.usage(e)
    except IrpoolError as e:
        return failure.error(e)
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
        return failure.internal(e)


ERROR_SCHEMA = "irpool.error/1"


class _Failure:
    """How a failed command is reported: one line on stderr, and with --json an error document
    (irpool/schemas/error-1.json) on stdout, so that a script reads a failure as it reads a
    report."""

    def __init__(self, words: list[str]) -> None:
        before_dashes = words[: words.index("--")] if "--" in words else words
        self.json = "--json" in before_dashes
        names = {c.name for c in COMMANDS}
        self.command = next((w for w in before_dashes if w in names), None)

    def usage(self, e: UsageFailure) -> int:
        command = e.prog.removeprefix("irpool").strip() or self.command
        return self._report(EXIT_INVALID, "usage", e.line, e.message, None, None, command)

    def error(self, e: IrpoolError) -> int:
        kind = "oracle-missing" if e.exit_code == EXIT_ORACLE else "input"
        message = _one_line(e.text("cli"))
        return self._report(e.exit_code, kind, f"irpool: {message}", message, e, e.where)

    def internal(self, e: Exception) -> int:
        message = (
            f"internal error: {type(e).__name__}: {_one_line(str(e))} "
            "(this is a bug in irpool; set IRPOOL_DEBUG=1 for the traceback)"
        )
        return self._report(EXIT_INTERNAL, "internal", f"irpool: {message}", message, e, None)

    def _report(
        self,
        code: int,
        kind: str,
        line: str,
        message: str,
        error: Exception | None,
        where: Where | None,
        command: str | None = None,
    ) -> int:
        sys.stderr.write(line + "\n")
        if self.json:
            document: dict[str, Any] = {
                "schema": ERROR_SCHEMA,
                "irpool": __version__,
                "command": command or self.command,
                "exit_code": code,
                "kind": kind,
                "message": message,
                "where": None,
            }
            if error is not None:
                document["error"] = type(error).__name__
            if where is not None:
                document["where"] = {
                    "file": where.file,
                    "line": where.line,
                    "layer": where.layer,
                    "layer_id": where.layer_id,
                    "op": where.op,
                }
            sys.stdout.flush()
            _print_json(document)
        return code


def _check_environment() -> None:
    """Every irpool setting of the environment is read before anything runs, so that a bad one
    is refused by name whatever the command (an integer >= 1, or unset; IRPOOL_OV_ISA one of
    the instruction sets irpool models)."""
    from .cpu import plugin_isa
    from .env import env_int

    for name in ("IRPOOL_MAX_ELEMENTS", "IRPOOL_MAX_XML_BYTES", "IRPOOL_THREADS"):
        env_int(name, 1)
    plugin_isa()


def _one_line(text: str) -> str:
    return " ".join(text.split())
