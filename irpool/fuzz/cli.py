"""The `irpool fuzz` command: its options and its handler (irpool.cli registers them)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def options(p: Any) -> None:
    """differential fuzzing: hunt divergences between the runtimes, name the known ones

    Draw pooling cases with hypothesis (windowed AvgPool/MaxPool of every version, rank 1-3,
    pads, dilations, ceil, auto_pad; global max/mean/sum; f32, f16, bf16, f64, i8, u8, i32;
    zero-sized and overhanging windows; NaN, infinities, -0.0, subnormals, ties, huge values),
    run each on every runtime installed (openvino on the IR, onnxruntime on the ONNX node,
    PyTorch's functional call, openvino's ONNX front end) and on irpool's convention for each,
    and sort every disagreement: explained by a known divergence (its id), an irpool bug
    (irpool's convention for a runtime does not reproduce it) or new. Each new divergence and
    irpool bug is shrunk and written as a bundle under DIR/findings (model, input, expected
    outputs, repro.py that exits 1 while it reproduces). DIR keeps hypothesis' example
    database: running again on the same DIR replays the earlier findings first. The summary
    is written to DIR/summary.txt, .json (schema irpool.fuzz/1) and .html. Exit 0 nothing
    new, 1 a new divergence or an irpool bug, 2 invalid input, 3 hypothesis or every runtime
    missing (pip install 'irpool[fuzz]').
    """
    p.add_argument("-o", "--outdir", required=True, metavar="DIR", help="the campaign's folder")
    p.add_argument(
        "--ops",
        default="window,global",
        help="comma-separated op kinds: window (AvgPool/MaxPool and their ONNX, PyTorch "
        "forms), global (Reduce*/GlobalMaxPool/GlobalAveragePool/amax/mean); default both",
    )
    p.add_argument(
        "--runtimes",
        default=None,
        help="comma-separated: openvino, onnxruntime, torch, openvino-onnx (openvino's ONNX "
        "front end), tf (TensorFlow: windowed pools, SAME or VALID), openvino-torch (the "
        "PyTorch call converted by openvino's PyTorch front end: seconds per conversion); "
        "default every one installed but tf and openvino-torch",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds of case generation (shrinking a finding may take up to a quarter more; "
        "default 60)",
    )
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument(
        "--progress",
        choices=["auto", "on", "off"],
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (schema irpool.fuzz/1: irpool/schemas/fuzz-1.json)",
    )


def run(args: argparse.Namespace) -> int:
    import json

    from ..errors import UsageError
    from . import fuzz
    from .report import format_text

    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: at least 1")
    if not (args.budget > 0) or args.budget == float("inf"):
        raise UsageError(f"--budget {args.budget}: a positive number of seconds")
    if args.seed < 0:
        raise UsageError(f"--seed {args.seed}: at least 0")
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    runtimes = (
        None
        if args.runtimes is None
        else tuple(r.strip() for r in args.runtimes.split(",") if r.strip())
    )
    show = None
    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        from ..progress import progress_bar

        show = progress_bar("fuzz", "s", sys.stderr, force=True)
    doc = fuzz(args.outdir, ops, runtimes, args.budget, args.seed, args.workers, progress=show)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    else:
        print(format_text(doc))
    return int(doc["exit_code"])
