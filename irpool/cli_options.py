"""The options and helpers every command of the command line shares: exit codes, the input
options (-i, --input-shape, --seed, --range, --cast, --max-elements), --convention, --progress,
tolerances, JSON output, and loading a model.  The command modules import them from here."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import UsageError

EXIT_OK, EXIT_FINDING, EXIT_INVALID, EXIT_ORACLE = 0, 1, 2, 3
EXIT_INTERNAL = 70


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def _json_help(schema_file: str) -> str:
    name, _, version = schema_file.rpartition("-")
    return f"print JSON (schema irpool.{name}/{version}: irpool/schemas/{schema_file}.json)"


def _repeatable(p: Any, flags: str, dest: str, metavar: str, help: str) -> None:
    """An option that may be given several times (`flags`: its spellings, space-separated),
    collected in a list."""
    p.add_argument(*flags.split(), dest=dest, action="append", metavar=metavar, help=help)


LAYER_HELP = "name, id, output tensor name or a unique part of the name"


def _parse_range(text: str) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--range {text!r}: expected LO,HI such as -1,1") from None
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(high - low)):
        raise UsageError(f"--range {text!r}: expected finite LO and HI less than 1e308 apart")
    if not low < high:
        raise UsageError(f"--range {text!r}: expected LO < HI")
    return low, high


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= {least}")
    return value


def _positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def _natural(text: str) -> int:
    return _int_at_least(text, 0)


def _tolerance(text: str) -> float:
    """A tolerance: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number >= 0")
    return value


def _add_input_shape_option(p: Any) -> None:
    _repeatable(
        p,
        "--input-shape",
        "input_shapes",
        "[NAME=]SHAPE",
        "shape of model input NAME, such as x=1,3,32,32 (without NAME: the only input); "
        "replaces its declared shape as openvino's reshape does (repeatable)",
    )


def _add_input_options(p: Any, input_help: str) -> None:
    """The options that choose a command's input arrays: files, shapes, or random ones."""
    _repeatable(p, "-i --input", "inputs", "[NAME=]FILE", input_help)
    _add_input_shape_option(p)
    p.add_argument("--seed", type=_natural, default=0, help="seed of random inputs (default 0)")
    p.add_argument(
        "--range", default="-1,1", metavar="LO,HI", help="range of random inputs (default -1,1)"
    )
    p.add_argument(
        "--cast",
        action="store_true",
        help="convert inputs to the Parameter's element type instead of refusing",
    )
    p.add_argument(
        "--max-elements",
        type=_positive_int,
        default=None,
        metavar="N",
        help="largest array to allocate (default 2^30 elements)",
    )


def _add_convention_option(p: Any, help: str) -> None:
    """--convention: the runtime whose behaviour irpool computes (default: the model's), and
    --ov-isa."""
    from .conventions import CONVENTIONS

    p.add_argument("--convention", choices=list(CONVENTIONS), default=None, help=help)
    _add_isa_option(p)


def _add_isa_option(p: Any) -> None:
    """--ov-isa: the target modelled (cli.main chooses it once, before the command runs)."""
    from .target import ISAS

    p.add_argument(
        "--ov-isa",
        choices=list(ISAS),
        default=None,
        help="the instruction set of the CPU whose openvino is modelled (default: IRPOOL_OV_ISA, "
        "else this machine's)",
    )


def _add_progress_option(p: Any) -> None:
    p.add_argument(
        "--progress",
        choices=["auto", "on", "off"],
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )


def _progress(args: argparse.Namespace, what: str = "", unit: str = "step") -> Any:
    """The progress callback --progress asks for (a tqdm bar on stderr; auto: only when stderr
    is a terminal)."""
    from .progress import progress_bar

    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        return progress_bar(what, unit, sys.stderr, force=True)
    return None


def _shaped(graph: Any, args: argparse.Namespace) -> Any:
    """The graph with the shapes of --input-shape given to its inputs (irpool.inputs)."""
    from .inputs import parse_shapes, reshaped

    return reshaped(graph, parse_shapes(getattr(args, "input_shapes", None)))


def _model_inputs(graph: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The arrays given with -i bound to the model's inputs, random ones for the rest (of
    their declared or --input-shape shapes: give `_shaped(graph, args)`)."""
    from .inputs import draw, load_given

    given = load_given(args.inputs, args.max_elements)
    low, high = _parse_range(args.range)
    arrays, _ = draw(graph, given, args.seed, low, high, args.cast, args.max_elements)
    return arrays


def load_model(path: str) -> Any:
    """An IR file, fragments, or an ONNX model (by its .onnx suffix)."""
    from .api import load

    return load(path)


TOLERANCE_REASON = (
    "irpool reproduces the runtimes bit for bit, and float means get their own allowance "
    "for summation order, see --exact"
)


INPUT_HELP = (
    "input array: .npy, .npz, .pb (ONNX TensorProto) or a test_data_set_N folder; NAME is a "
    "model input (repeatable; default: random from --seed and --range)"
)


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, the handler of its parsed arguments (which returns the exit
    code), and the function that adds its options, whose docstring is the command's help: a
    first line for the list of commands, then the description --help prints."""

    name: str
    run: Callable[[argparse.Namespace], int]
    options: Callable[[Any], None]

    @property
    def help(self) -> str:
        return _paragraphs(self.options.__doc__)[0]

    @property
    def description(self) -> str:
        return _paragraphs(self.options.__doc__)[-1]


def _paragraphs(doc: str | None) -> list[str]:
    """The first paragraph of a docstring and the rest, each joined into one line (without
    inspect.cleandoc: importing inspect costs a tenth of --help's start-up)."""
    first, _, rest = (doc or "").strip().partition("\n\n")
    return [" ".join(first.split()), " ".join(rest.split()) or " ".join(first.split())]
