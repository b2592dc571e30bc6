"""Command line: argparse -> library call -> printed report and exit code.

Exit codes: 0 ok, 1 a finding (a declared shape or a compared value disagrees), 2 invalid input
or usage (one line on stderr), 3 an oracle that was asked for is not installed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __version__
from .cli_options import EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, EXIT_ORACLE, Command, _print_json
from .commands.check import CHECK
from .commands.compare import COMPARE
from .commands.convert_report import CONVERT_REPORT
from .commands.explain import EXPLAIN
from .commands.extract import EXTRACT
from .commands.fixtures import FIXTURES
from .commands.run import RUN
from .conventions import use_target
from .cpu import plugin_isa, this_machine
from .errors import IrpoolError, Where
from .target import Target


class UsageFailure(Exception):
    """A usage error of the command line (unknown option, missing argument, bad value), raised
    by the parser of the command it concerns; `main` reports it (one line, exit 2)."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message

    @property
    def line(self) -> str:
        return f"{self.prog}: error: {self.message} (see {self.prog} --help)"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit code 2, with the
    closest spelling of a misspelt command, choice or option."""

    def error(self, message: str) -> NoReturn:
        raise UsageFailure(self.prog, _with_suggestion(message, self))


def _with_suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message, with "did you mean ...?" when a misspelt word is close to one the
    parser knows (a command, a choice of an option, an option of the command)."""
    import difflib

    choice = re.match(r"argument (\S+): invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if choice:
        known = re.findall(r"'([^']*)'", choice[3]) or choice[3].split(", ")
        what = "command" if choice[1] == "COMMAND" else f"choice of {choice[1]}"
        message = f"unknown {what} {choice[2]!r}; expected one of {', '.join(known)}"
        close = difflib.get_close_matches(choice[2], known, n=1, cutoff=0.75)
        return f"{message}; did you mean {close[0]!r}?" if close else message
    unknown = re.match(r"unrecognized arguments: (.*)$", message)
    if unknown:
        options = [o for a in parser._actions for o in a.option_strings]
        for word in unknown[1].split():
            close = difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.75)
            if word.startswith("-") and close:
                return f"{message}; did you mean {close[0]}?"
    return message


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="irpool",
        description=(
            "Check, run, explain and cross-check the pooling layers of OpenVINO IR and ONNX "
            "models, the whole family: windowed pooling (AvgPool-1/14/16, MaxPool-1/8/14; "
            "AveragePool, MaxPool), adaptive pooling (AdaptiveAvgPool-8, AdaptiveMaxPool-8), "
            "reductions (ReduceMean/Max/Sum-1, ReduceL1/L2-4), global pooling "
            "(GlobalAveragePool, GlobalMaxPool), Lp pooling (LpPool, GlobalLpPool), MaxUnpool "
            "and quantized average pooling (QLinearAveragePool, QLinearGlobalAveragePool)."
        ),
        epilog="See irpool COMMAND --help for the options of a command, and docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"irpool {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog=f"Exit codes and the options every command shares: docs/cli.md. With --json "
            f"a failure prints an error document ({ERROR_SCHEMA}) on stdout.",
        )
        command.options(p)
        p.set_defaults(func=command.run)
        _SUBPARSERS[command.name] = p
    return parser


_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}
"""The parser of each command, by name (build_parser fills it): an unknown option is reported
by the parser of its command, which names `irpool CMD --help`."""


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from .fuzz.cli import run

    return run(args)


from .fuzz.cli import options as _fuzz_options  # noqa: E402 - light: argparse only

FUZZ = Command("fuzz", _cmd_fuzz, _fuzz_options)


COMMANDS = (CHECK, RUN, EXPLAIN, COMPARE, CONVERT_REPORT, FIXTURES, EXTRACT, FUZZ)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    failure = _Failure(words)
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(words)
        if extra:
            command = _SUBPARSERS.get(getattr(args, "command", None) or "", parser)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
    except UsageFailure as e:
        return failure.usage(e)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        sys.stderr.write("irpool: a COMMAND is required; see the list above or irpool --help\n")
        return EXIT_INVALID
    try:
        with warnings.catch_warnings():
            if not os.environ.get("IRPOOL_DEBUG"):
                # no library's warning reaches the user (numpy's RuntimeWarnings on infinite
                # scales, the runtimes' deprecations): irpool says what matters itself
                warnings.simplefilter("ignore")
            machine = _check_environment(getattr(args, "ov_isa", None))
            with use_target(machine):  # the target every plan of the command carries
                code: int = args.func(args)
        sys.stdout.flush()
        return code
    except UsageFailure as e:
        return failure.usage(e)
    except IrpoolError as e:
        return failure.error(e)
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
        return failure.internal(e)


ERROR_SCHEMA = "irpool.error/1"


class _Failure:
    """How a failed command is reported: one line on stderr, and with --json an error document
    (irpool/schemas/error-1.json) on stdout, so that a script reads a failure as it reads a
    report."""

    def __init__(self, words: list[str]) -> None:
        before_dashes = words[: words.index("--")] if "--" in words else words
        self.json = "--json" in before_dashes
        names = {c.name for c in COMMANDS}
        self.command = next((w for w in before_dashes if w in names), None)

    def usage(self, e: UsageFailure) -> int:
        command = e.prog.removeprefix("irpool").strip() or self.command
        return self._report(EXIT_INVALID, "usage", e.line, e.message, None, None, command)

    def error(self, e: IrpoolError) -> int:
        kind = "oracle-missing" if e.exit_code == EXIT_ORACLE else "input"
        message = _one_line(e.text("cli"))
        return self._report(e.exit_code, kind, f"irpool: {message}", message, e, e.where)

    def internal(self, e: Exception) -> int:
        message = (
            f"internal error: {type(e).__name__}: {_one_line(str(e))} "
            "(this is a bug in irpool; set IRPOOL_DEBUG=1 for the traceback)"
        )
        return self._report(EXIT_INTERNAL, "internal", f"irpool: {message}", message, e, None)

    def _report(
        self,
        code: int,
        kind: str,
        line: str,
        message: str,
        error: Exception | None,
        where: Where | None,
        command: str | None = None,
    ) -> int:
        sys.stderr.write(line + "\n")
        if self.json:
            document: dict[str, Any] = {
                "schema": ERROR_SCHEMA,
                "irpool": __version__,
                "command": command or self.command,
                "exit_code": code,
                "kind": kind,
                "message": message,
                "where": None,
            }
            if error is not None:
                document["error"] = type(error).__name__
            if where is not None:
                document["where"] = {
                    "file": where.file,
                    "line": where.line,
                    "layer": where.layer,
                    "layer_id": where.layer_id,
                    "op": where.op,
                }
            sys.stdout.flush()
            _print_json(document)
        return code


def _check_environment(ov_isa: str | None) -> Target:
    """Every irpool setting of the environment is read before anything runs, so that a bad one
    is refused by name whatever the command (an integer >= 1, or unset; IRPOOL_OV_ISA one of
    the instruction sets irpool models); the target the command models (--ov-isa, else
    IRPOOL_OV_ISA, else this machine)."""
    from .env import env_int

    for name in ("IRPOOL_MAX_ELEMENTS", "IRPOOL_MAX_XML_BYTES", "IRPOOL_THREADS"):
        env_int(name, 1)
    plugin_isa()
    return this_machine(ov_isa)


def _one_line(text: str) -> str:
    return " ".join(text.split())
