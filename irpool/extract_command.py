"""`irpool extract` on the command line, and the `--extract DIR` of compare and
convert-report (irpool/cli.py registers them; the work is irpool.extract's, imported only
when a command runs, so that --help stays light)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from . import cli_options as cli
from .errors import IrpoolError, UsageError, Where


def add_options(p: Any) -> None:
    p.add_argument("model", metavar="MODEL", help="model.xml or model.onnx")
    p.add_argument(
        "--layer",
        required=True,
        metavar="NAME",
        help=f"the pooling layer (or node) to extract ({cli.LAYER_HELP})",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="the bundle's folder: new, or empty (an existing one only with --force)",
    )
    cli._add_input_options(p, cli.INPUT_HELP)
    cli._add_convention_option(
        p,
        "what the layer should compute (default: the finding's: openvino's own rules when "
        "compare finds the layer differing, else the source framework an IR was converted from; "
        "onnx for ONNX models)",
    )
    p.add_argument(
        "--runtime",
        choices=["openvino", "onnxruntime"],
        default=None,
        help="an ONNX model's runtime in the repro: openvino (its conversion, as convert-report "
        "audits it; default) or onnxruntime (as compare checks it)",
    )
    p.add_argument(
        "--precision",
        default="f32",
        choices=["f32", "f16", "bf16"],
        help="openvino's INFERENCE_PRECISION_HINT (default f32)",
    )
    p.add_argument(
        "--atol",
        type=cli._tolerance,
        default=None,
        help="absolute tolerance of the repro (default 0; 1e-6 for a layer held to PyTorch's "
        "or TensorFlow's convention, as convert-report audits an IR)",
    )
    p.add_argument(
        "--rtol",
        type=cli._tolerance,
        default=None,
        help="relative tolerance of the repro (default 0; 1e-5 for PyTorch's or TensorFlow's)",
    )
    p.add_argument(
        "--no-minimize",
        dest="minimize",
        action="store_false",
        help="keep the real input (do not shrink it)",
    )
    p.add_argument(
        "--no-grow",
        dest="grow",
        action="store_false",
        help="the layer alone, even when it does not show the finding without its neighbours",
    )
    p.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="do not run the bundle's repro.py once to record its exit code",
    )
    p.add_argument("--force", action="store_true", help="replace an existing non-empty folder")
    p.add_argument("--json", action="store_true", help=cli._json_help("extract-1"))


def run(args: argparse.Namespace) -> int:
    from .audit import source_kind
    from .extract import ExtractOptions, check_outdir, extract_layer

    if source_kind(args.model) in ("torch", "tf"):
        raise UsageError(
            "extract cuts a layer from an IR or an ONNX model; save openvino's conversion of "
            "this one (ov.save_model(ov.convert_model(...), 'model.xml')) and extract from the "
            "IR (convert-report model.xml --extract DIR writes every differing layer)",
            Where(file=args.model),
        )
    graph = cli.load_model(args.model)
    if graph.fragment:
        raise UsageError(f"{args.model} holds layer fragments; extract needs a full model")
    if graph.format != "onnx" and args.runtime == "onnxruntime":
        raise UsageError("--runtime onnxruntime is for ONNX models; an IR runs on openvino")
    check_outdir(args.output, args.force, [args.model, *(args.inputs or [])])
    graph = cli._shaped(graph, args)
    inputs = cli._model_inputs(graph, args)
    result = extract_layer(graph, args.layer, args.output, inputs, ExtractOptions.of(args))
    if args.json:
        cli._print_json(result.to_json())
    else:
        print(format_result(result))
    return cli.EXIT_FINDING if result.reproduces else cli.EXIT_OK


def format_result(r: Any) -> str:
    """The text extract prints: where the bundle is and what it shows."""
    shows = (
        f"reproduces: {r.runtime} differs from the {r.convention} convention"
        + (f" ({r.divergence_id})" if r.divergence_id else "")
        if r.reproduces
        else f"agrees: {r.runtime} computes what the {r.convention} convention does"
    )
    shapes = ", ".join(f"{k} {v}" for k, v in r.input_shapes.items())
    real = ", ".join(f"{k} {v}" for k, v in r.real_shapes.items())
    lines = [f'{r.path}: layer "{r.layer}" ({r.op}) of {r.model}; {shows}']
    lines.append(
        f"  input {shapes} ({r.cells} cells, {r.nonzero} non-zero), from {real} inside the model"
    )
    if r.kept:
        lines.append(f"  the layer alone does not show it; kept: {', '.join(r.kept)}")
    if r.repro_exit is not None:
        lines.append(f"  repro.py exits {r.repro_exit}")
    if not r.consistent:
        lines.append(
            "  warning: the bundle does not show what the full model shows (see REPORT.md)"
        )
    for note in r.notes:
        lines.append(f"  note: {note}")
    lines.append(f"  {len(r.files)} files, {r.size} bytes: {', '.join(r.files)}")
    return "\n".join(lines)


# -- compare --extract DIR, convert-report --extract DIR --------------------------------------


def check_extract_dir(args: argparse.Namespace) -> None:
    """Refuse an --extract folder that cannot be written, before anything runs."""
    if getattr(args, "extract", None):
        from .extract import check_outdir

        check_outdir(args.extract, args.force, [args.model, *(args.inputs or [])])


def extract_all(
    args: argparse.Namespace,
    graph: Any,
    inputs: Mapping[str, Any],
    layers: list[tuple[str, str | None]],
) -> tuple[list[str], list[dict[str, Any]]]:
    """Bundles of `layers` ((name, convention), in order) into args.extract/NN-NAME, written in
    a temporary folder renamed into place once all are done; the lines the text report prints
    after itself and the records of --json ("extracted")."""
    import shutil
    import tempfile

    from .extract import ExtractOptions, extract_layer, move_into_place

    if not layers:
        return [f"--extract: no differing layer, nothing written to {args.extract}"], []
    parent = os.path.dirname(os.path.abspath(args.extract))
    folder = tempfile.mkdtemp(prefix=".irpool-extract-all-", dir=parent)
    lines: list[str] = []
    records: list[dict[str, Any]] = []
    try:
        for k, (name, convention) in enumerate(layers, start=1):
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-60:]
            sub = os.path.join(folder, f"{k:02d}-{safe}")
            final = os.path.join(args.extract, os.path.basename(sub))
            try:
                precision = getattr(args, "precision", None) or "f32"
                options = ExtractOptions(convention=convention, precision=precision)
                r = extract_layer(graph, name, sub, inputs, options)
            except IrpoolError as e:
                lines.append(f'--extract: layer "{name}" not extracted: {e.message}')
                records.append(
                    {
                        "layer": name,
                        "bundle": None,
                        "divergence_id": None,
                        "repro_exit": None,
                        "cells": None,
                        "error": e.message,
                    }
                )
                continue
            did = f" ({r.divergence_id})" if r.divergence_id else ""
            lines.append(
                f'--extract: {final}: layer "{name}"{did}, input of {r.cells} cells, repro.py '
                f"exits {r.repro_exit}"
            )
            records.append(
                {
                    "layer": name,
                    "bundle": final,
                    "divergence_id": r.divergence_id,
                    "repro_exit": r.repro_exit,
                    "cells": r.cells,
                    "error": None,
                }
            )
        move_into_place(folder, args.extract, args.force)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return lines, records


def compare_extract(
    args: argparse.Namespace, graph: Any, inputs: Mapping[str, Any], report: Any, source: Any
) -> tuple[list[str], list[dict[str, Any]]]:
    """compare --extract: every layer compare finds differing (under its convention), then every
    layer the detected source framework computes otherwise (under that framework's)."""
    layers: list[tuple[str, str | None]] = [
        (layer.layer, report.convention) for layer in report.layers if not layer.passed
    ]
    if source is not None and isinstance(source[0], dict):
        framework = source[0].get("framework")
        for record in source[0].get("differing", []):
            if all(record["layer"] != name for name, _ in layers):
                layers.append((record["layer"], framework))
    return extract_all(args, graph, inputs, layers)


def convert_extract(
    args: argparse.Namespace, graph: Any, inputs: Mapping[str, Any], report: Any
) -> tuple[list[str], list[dict[str, Any]]]:
    """convert-report --extract on an ONNX model (every node openvino's conversion computes
    otherwise, runtime openvino) or an IR (every layer its source framework computes otherwise,
    under that framework's convention)."""
    if graph.format == "onnx":
        layers: list[tuple[str, str | None]] = [
            (node.node, None)
            for node in report.nodes
            if node.divergence is not None or any(not c.passed for c in node.outputs)
        ]
    else:
        framework = getattr(report, "framework", None)
        layers = [(op.name, framework) for op in report.differing]
    return extract_all(args, graph, inputs, layers)


def source_extract(args: argparse.Namespace, report: Any) -> tuple[dict[str, Any], list[str]]:
    """convert-report --extract on a PyTorch or TensorFlow model: not written (a bundle is cut
    from an IR or an ONNX model); the line says how to get one."""
    if not getattr(args, "extract", None):
        return {}, []
    names = [op.name for op in report.differing]
    if not names:
        return {"extracted": []}, [f"--extract: no differing op, nothing written to {args.extract}"]
    why = (
        "not written for a source model: save openvino's conversion of it "
        "(ov.save_model(ov.convert_model(...), 'model.xml')) and run irpool convert-report "
        "model.xml --extract DIR, which cuts each differing layer from the IR"
    )
    records = [
        {
            "layer": n,
            "bundle": None,
            "divergence_id": None,
            "repro_exit": None,
            "cells": None,
            "error": why,
        }
        for n in names
    ]
    return {"extracted": records}, [f"--extract: {why}"]
