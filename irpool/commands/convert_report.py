"""`irpool convert-report`: what openvino's conversion made of each pooling op (ONNX, PyTorch,
TensorFlow, or an IR and its source framework)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..cli_options import (
    LAYER_HELP,
    TOLERANCE_REASON,
    Command,
    _model_inputs,
    _parse_range,
    _shaped,
    load_model,
)
from ..errors import UsageError, Where
from .compare import (
    _add_cross_check_inputs,
    _add_cross_check_report,
    _check_extract,
    _check_html,
    _extract_differing,
    _print_report,
)
from .run import _input_specs


def _cmd_convert_report(args: argparse.Namespace) -> int:
    from ..convert_report import convert_report, format_report, to_json
    from ..frontends import onnx_model
    from ..oracles import openvino_rt

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


def _cmd_audit(args: argparse.Namespace) -> int:
    """convert-report on an IR or on a PyTorch or TensorFlow model (irpool/audit.py)."""
    from ..audit import (
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
        from ..audit_ir import audit_ir

        graph = load_model(args.model)
        if args.input_shapes and not args.inputs:
            from ..audit_ir import random_inputs_of_shapes

            low, high = _parse_range(args.range)
            shapes = parse_shapes(args.input_shapes)
            inputs = random_inputs_of_shapes(graph, shapes, args.seed, low, high)
        elif args.input_shapes:
            raise UsageError("give -i or --input-shape, not both")
        else:
            inputs = _model_inputs(graph, args)
        report = audit_ir(graph, inputs, args.source, atol, rtol, args.layers)
        if not args.inputs:
            from ..audit import random_inputs_note

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
        from ..extract_command import source_extract

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
