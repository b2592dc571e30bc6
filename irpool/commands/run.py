"""`irpool run`: a pooling net, or one pooling layer, executed by irpool's core."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..cli_options import (
    EXIT_OK,
    LAYER_HELP,
    Command,
    _add_convention_option,
    _add_input_options,
    _json_help,
    _parse_range,
    _print_json,
    load_model,
)
from ..errors import UsageError, Where


def _input_specs(specs: list[str] | None, limit: int | None) -> tuple[dict[str, Any], list[str]]:
    """Arrays from -i arguments ([NAME=]FILE: .npy, .npz, .pb or a test_data_set folder; see
    irpool.inputs) and the paths they came from."""
    from ..inputs import load_given

    given = load_given(specs, limit)
    return given.arrays, given.paths


def _cmd_run(args: argparse.Namespace) -> int:
    from ..arrays import save_npz
    from ..files import check_output
    from ..inputs import load_given, parse_shapes
    from ..run_report import execute, format_report

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
