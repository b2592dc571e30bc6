"""Command line: argparse -> library call -> printed report and exit code.

Exit codes: 0 ok, 1 a finding (a declared shape or a compared value disagrees), 2 invalid input
or usage (one line on stderr), 3 an oracle that was asked for is not installed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .cli_options import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    Command,
)
from .commands.check import CHECK
from .commands.compare import COMPARE
from .commands.convert_report import CONVERT_REPORT
from .commands.explain import EXPLAIN
from .commands.extract import EXTRACT
from .commands.fixtures import FIXTURES
from .commands.run import RUN
from .errors import IrpoolError


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_INVALID)


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
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        command.options(p)
        p.set_defaults(func=command.run)
    return parser


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from .fuzz.cli import run

    return run(args)


from .fuzz.cli import options as _fuzz_options  # noqa: E402 - light: argparse only

FUZZ = Command("fuzz", _cmd_fuzz, _fuzz_options)


COMMANDS = (CHECK, RUN, EXPLAIN, COMPARE, CONVERT_REPORT, FIXTURES, EXTRACT, FUZZ)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        sys.stderr.write("irpool: a COMMAND is required; see the list above or irpool --help\n")
        return EXIT_INVALID
    try:
        _check_environment()
        code: int = args.func(args)
        sys.stdout.flush()
        return code
    except IrpoolError as e:
        sys.stderr.write(f"irpool: {_one_line(e.text('cli'))}\n")
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
