"""`irpool fixtures`: golden cases written to a folder."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..cli_options import (
    EXIT_FINDING,
    EXIT_OK,
    LAYER_HELP,
    Command,
    _add_input_shape_option,
    _add_isa_option,
    _add_progress_option,
    _json_help,
    _natural,
    _print_json,
    _progress,
    _repeatable,
)
from ..errors import UsageError


def _cmd_fixtures(args: argparse.Namespace) -> int:
    from ..conventions import target
    from ..fixtures import format_summary, generate, plan_cases
    from ..fixtures.sets import format_timing

    if args.verify:
        from ..oracles import openvino_rt

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
        args.outdir,
        cases,
        settings,
        skipped,
        args.force,
        args.resume,
        args.verify,
        show,
        machine=target(),  # what --ov-isa, IRPOOL_OV_ISA or this CPU chose (cli.main)
    )
    if args.json:
        from ..fixtures import summary_to_json

        _print_json(summary_to_json(report))
    else:
        print(format_summary(report))
        if sys.stderr.isatty():  # like the progress bar: for a person watching
            print(format_timing(report), file=sys.stderr)
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
        choices=["smoke", "corners", "full", "family", "int8"],
        default=None,
        help="smoke: one case per op version; corners: every named divergence and the spec "
        "examples; full: versions x ranks x attributes x element types; family: "
        "AdaptiveAvgPool-8, AdaptiveMaxPool-8 and ReduceMean/Max/Sum/L1/L2; int8: FakeQuantize -> "
        "AvgPool/MaxPool/ReduceMean -> [FakeQuantize] as the CPU plugin runs them (default smoke)",
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
    _add_isa_option(p)
    _add_progress_option(p)
    p.add_argument("--json", action="store_true", help=_json_help("fixtures-summary-1"))


FIXTURES = Command("fixtures", _cmd_fixtures, _fixtures_options)
