"""`irpool compare`: every pooling layer of a model against openvino (or onnxruntime); the
report options compare and convert-report share."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from ..cli_options import (
    EXIT_FINDING,
    EXIT_OK,
    INPUT_HELP,
    LAYER_HELP,
    TOLERANCE_REASON,
    Command,
    _add_convention_option,
    _add_input_options,
    _add_progress_option,
    _json_help,
    _model_inputs,
    _print_json,
    _progress,
    _repeatable,
    _shaped,
    _tolerance,
    load_model,
)
from ..errors import IrpoolError, UsageError


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
        from ..files import atomic_write_text
        from ..html import render_html

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
        from ..files import check_output

        if not args.html.lower().endswith((".html", ".htm")):
            raise UsageError("--html writes a web page; give it a name ending in .html")
        check_output(args.html, args.force, [args.model, *(args.inputs or [])])


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import CompareOptions, compare_model, format_report, to_json
    from ..oracles import openvino_rt

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
        CompareOptions.of(args),
        show,
    )
    source = _source_check(graph, inputs, args)
    extra: dict[str, Any] = {"source": source[0]} if source else {}
    after = list(source[1]) if source else []
    if args.extract:
        from ..extract_command import compare_extract

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
    from ..audit_ir import compare_lines

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


def _check_extract(args: argparse.Namespace) -> None:
    """Refuse an --extract folder that cannot be written, before anything runs."""
    if getattr(args, "extract", None):
        from ..extract_command import check_extract_dir

        check_extract_dir(args)


def _extract_differing(
    args: argparse.Namespace, graph: Any, inputs: dict[str, Any], report: Any
) -> tuple[dict[str, Any], list[str]]:
    """convert-report --extract DIR: a bundle of every node or layer that differs."""
    if not getattr(args, "extract", None):
        return {}, []
    from ..extract_command import convert_extract

    lines, records = convert_extract(args, graph, inputs, report)
    return {"extracted": records}, lines
