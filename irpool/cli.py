"""Command line: argparse -> library call -> printed report and exit code.

Exit codes: 0 ok, 1 a finding (a declared shape or a compared value disagrees), 2 invalid input
or usage (one line on stderr), 3 an oracle that was asked for is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from . import __version__
from .errors import IrpoolError

EXIT_OK, EXIT_FINDING, EXIT_INVALID, EXIT_ORACLE = 0, 1, 2, 3
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_INVALID)


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False) + "\n")


# -- check -----------------------------------------------------------------------------------


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import SCHEMA, check_file, format_report

    reports = [check_file(path) for path in args.paths]
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


def _add_check(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="verify the declared shapes of pooling layers",
        description=(
            "Infer the output shape of every pooling layer of an OpenVINO IR (or of pasted "
            "<layer> fragments) from its attributes and input dims, as openvino does, and report "
            "every declared <dim> that disagrees, with the formula and its numbers. Other layer "
            "types are taken as declared. Exit 0 when all agree, 1 on a disagreement, 2 on "
            "invalid input."
        ),
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="model.xml or a file of <layer> fragments"
    )
    p.add_argument(
        "--json", action="store_true", help="print a JSON report (schema irpool.check/1)"
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="show formulas and notes of every layer"
    )
    p.set_defaults(func=_cmd_check)


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
    for add in COMMANDS:
        add(sub)
    return parser


COMMANDS: list[Callable[[Any], None]] = [_add_check]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
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
