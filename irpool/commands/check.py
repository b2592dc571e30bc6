"""`irpool check`: the declared shapes of pooling layers against irpool's inference."""

from __future__ import annotations

import argparse
from typing import Any

from .. import __version__
from ..cli_options import (
    EXIT_FINDING,
    EXIT_OK,
    Command,
    _add_isa_option,
    _print_json,
)
from ..errors import UsageError, Where


def _cmd_check(args: argparse.Namespace) -> int:
    from ..check import SCHEMA, check_file, format_report

    reports = [check_file(path) for path in args.paths]
    fragments = [r.path for r in reports if r.graph.fragment]
    if args.openvino and fragments:
        raise UsageError(
            "--openvino reads whole models; a file of <layer> fragments is no model openvino "
            "can read",
            Where(file=fragments[0]),
        )
    if args.openvino:
        from ..check import add_openvino_findings

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
    _add_isa_option(p)


CHECK = Command("check", _cmd_check, _check_options)
