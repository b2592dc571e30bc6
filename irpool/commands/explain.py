"""`irpool explain`: one pooling layer in numbers (and `--png`, in a picture)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import __version__
from ..cli_options import (
    EXIT_OK,
    LAYER_HELP,
    Command,
    _add_convention_option,
    _add_input_shape_option,
    _json_help,
    _natural,
    _positive_int,
    _print_json,
    _repeatable,
    load_model,
)
from ..errors import IrpoolError, UsageError


def _int_tuple(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"{what} {text!r}: expected integers separated by commas") from None
    if any(v < 0 for v in values):
        raise UsageError(f"{what} {text!r}: expected integers >= 0")
    return values


def _cmd_explain(args: argparse.Namespace) -> int:
    from ..explain import SCHEMA, explain_graph, format_report, to_json
    from ..files import check_output
    from ..inputs import parse_shapes, reshaped

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
    ties = _ties(graph, reports, args)
    if args.png and refused is None:
        try:
            _draw(reports, args)
        except IrpoolError as e:  # no matplotlib, a --cell outside: the text still comes
            if args.json:
                raise
            refused = e
    if args.json:
        _print_json(
            {
                "schema": SCHEMA,
                "irpool": __version__,
                "layers": [_with_ties(to_json(r), ties.get(r.layer)) for r in reports],
            }
        )
    else:
        print("\n\n".join(_text_with_ties(format_report(r), ties.get(r.layer)) for r in reports))
        if refused is not None:
            sys.stdout.flush()
            raise refused
        if args.png:
            print(f"wrote {args.png}")
    return EXIT_OK


def _ties(graph: Any, reports: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    """The .5 ties of the layers between FakeQuantize layers (irpool/ties.py), on the -i
    inputs or random ones; {} for a file of fragments or a convention other than openvino."""
    if graph.fragment or graph.format != "ir" or args.convention not in (None, "openvino"):
        return {}
    from ..cli_options import _parse_range
    from ..inputs import load_given
    from ..ties import explain_ties

    given = load_given(args.inputs, args.max_elements) if args.inputs else None
    low, high = _parse_range(args.range)
    labels = [r.layer for r in reports]
    return explain_ties(graph, labels, given, args.seed, low, high, args.max_elements)


def _with_ties(data: dict[str, Any], ties: Any) -> dict[str, Any]:
    if ties is None:
        return data
    return {**data, "quantized": ties if isinstance(ties, str) else ties.to_json()}


def _text_with_ties(text: str, ties: Any) -> str:
    from ..ties import format_ties

    if ties is None:
        return text
    if isinstance(ties, str):
        return f"{text}\n  quantized chain: {ties}"
    return "\n".join([text, *format_ties(ties)])


def _draw(reports: list[Any], args: argparse.Namespace) -> None:
    """--png: the picture of the one layer explained."""
    if len(reports) != 1:
        raise UsageError("--png draws one layer: choose it with --layer NAME")
    from ..plot import draw

    cells = [_int_tuple(c, "--cell") for c in args.cells] if args.cells else None
    draw(reports[0], args.png, cells, args.depth)


def _explain_options(p: Any) -> None:
    """one pooling layer in numbers and pictures

    For a windowed pooling layer (AvgPool, MaxPool; AveragePool, MaxPool, LpPool), per spatial
    axis: the attributes as written, the pads after auto_pad, the output-size formula with its
    numbers, the first and last windows, the windows that reach into the padding or the ceil
    overhang, empty windows, and the divisor of every kind of border window under each
    convention. For the rest of the family (adaptive pooling, reductions, global and Lp
    pooling, MaxUnpool, quantized average pooling): the plan the kernel runs, in words, and
    what each convention makes of it. Every layer ends with the known divergences it
    exercises. --png draws windowed and adaptive layers. A layer of an IR between two
    FakeQuantize layers also gets its .5 ties: on the -i inputs (else random ones) the output
    cells where openvino's low-precision reading, the specification in float and openvino with
    LPT off give different codes, the value each rounds and which way.
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
    p.add_argument(
        "--png",
        metavar="FILE.png",
        help="draw the windows, the conventions that differ side by side (needs matplotlib)",
    )
    _repeatable(
        p,
        "--cell",
        "cells",
        "I,J",
        "output cell whose window to draw (repeatable; default: every window of a small "
        "output, else the corners, the centre and a window where the conventions differ)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=0,
        help="for 3-D layers: the window of the first spatial axis to draw",
    )
    p.add_argument("--force", action="store_true", help="replace an existing PNG")
    _repeatable(
        p,
        "-i --input",
        "inputs",
        "[NAME=]FILE",
        "input array for the .5 ties of a layer between FakeQuantize layers (.npy, or .npz "
        "holding several; default: random, --seed, --range)",
    )
    p.add_argument(
        "--seed", type=_natural, default=0, help="seed of random inputs for the ties (default 0)"
    )
    p.add_argument(
        "--range",
        default="-1,1",
        metavar="LO,HI",
        help="range of random inputs for the ties (default -1,1)",
    )
    p.add_argument(
        "--max-elements",
        type=_positive_int,
        default=None,
        metavar="N",
        help="largest input or output to explain (default 2^30 elements)",
    )


EXPLAIN = Command("explain", _cmd_explain, _explain_options)
