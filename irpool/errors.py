"""Errors of irpool: one root, each error knows where it happened.

Low-level code (geometry, kernel) raises short facts without a place; the front end, which
knows the file, line and layer, attaches a `Where` with `IrpoolError.at`.  The CLI turns an
`IrpoolError` into one line on stderr and its `exit_code`; the library never prints or exits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- options named in messages ------------------------------------------------------------------
# A message that tells the user which option to change names it with `option(key)`: the command
# line shows the flag, the Python API the argument (OPTIONS), so that neither speaks the
# other's language.

OPTIONS: dict[str, tuple[str, str]] = {
    "cast": ("--cast", "cast=True"),
    "force": ("--force", "force=True"),
    "resume": ("--resume", "resume=True"),
    "layer": ("--layer ", "layer="),
    "layers": ("--layer", "layers="),
    "input": ("-i NAME=FILE", "inputs={NAME: array}"),
    "input_shape": ("--input-shape", "input_shapes="),
    "max_elements": ("--max-elements", "max_elements="),
    "from": ("--from", "model="),
    "seed": ("--seed ", "seed="),
    "cell": ("--cell", "cell"),
    "depth": ("--depth", "depth"),
    "png": ("--png", "draw()"),
    "preset_grid_from": ("--preset, --grid and --from", "preset=, grid= and model="),
}
_MARK = re.compile("\ue000([a-z_]+)\ue001")


def option(key: str) -> str:
    """A placeholder for option `key` (OPTIONS) in a message, rendered per interface."""
    assert key in OPTIONS, key
    return f"\ue000{key}\ue001"


def render(text: str, style: str = "api") -> str:
    """A message with its option placeholders written for the command line (`cli`) or for the
    Python API (`api`)."""
    column = 0 if style == "cli" else 1
    return _MARK.sub(lambda m: OPTIONS[m.group(1)][column], text)


@dataclass(frozen=True)
class Where:
    """A place in a model file: file, line, and the layer it concerns (any part may be absent)."""

    file: str | None = None
    line: int | None = None
    layer: str | None = None
    layer_id: str | None = None
    op: str | None = None
    version: str | None = None
    noun: str = "layer"
    """What the model calls its layers: `layer` (IR) or `node` (ONNX)."""

    def merged(self, other: Where | None) -> Where:
        """This place, with the fields it lacks taken from `other`."""
        if other is None:
            return self
        return Where(
            file=self.file if self.file is not None else other.file,
            line=self.line if self.line is not None else other.line,
            layer=self.layer if self.layer is not None else other.layer,
            layer_id=self.layer_id if self.layer_id is not None else other.layer_id,
            op=self.op if self.op is not None else other.op,
            version=self.version if self.version is not None else other.version,
            noun=self.noun if self.layer is not None else other.noun,
        )

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            parts.append(f"{self.file}:{self.line}" if self.line is not None else self.file)
        if self.layer is not None or self.layer_id is not None or self.op is not None:
            detail = ", ".join(
                p
                for p in (
                    self.op,
                    self.version,
                    f"id={self.layer_id}" if self.layer_id is not None else None,
                )
                if p
            )
            label = f'{self.noun} "{self.layer}"' if self.layer is not None else self.noun
            parts.append(f"{label} ({detail})" if detail else label)
        return ": ".join(parts)


class IrpoolError(Exception):
    """Root of every error irpool raises on purpose; `exit_code` is what the CLI returns."""

    exit_code = 2

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.raw = message
        """The message with its option placeholders (see `option`)."""
        self.message = render(message, "api")
        super().__init__(self.message)
        self.where = where

    def at(self, where: Where | None) -> IrpoolError:
        """The same error with the missing parts of its place filled in from `where`."""
        merged = self.where.merged(where) if self.where is not None else where
        clone = type(self).__new__(type(self))
        IrpoolError.__init__(clone, self.raw, merged)
        return clone

    def text(self, style: str = "api") -> str:
        """The place and the message, options named for the command line or the Python API."""
        prefix = str(self.where) if self.where is not None else ""
        message = render(self.raw, style)
        return f"{prefix}: {message}" if prefix else message

    def __str__(self) -> str:
        return self.text("api")


class IrParseError(IrpoolError):
    """The file is not well-formed, not an IR, hostile, or breaks an IR rule."""


class SpecError(IrpoolError):
    """An attribute is missing, malformed or not allowed for the op version."""


class ShapeError(IrpoolError):
    """Shapes do not fit the op (rank, kernel larger than the padded input, ...)."""


class InputError(IrpoolError):
    """An input array is unreadable or does not match what the model declares."""


class OutputError(IrpoolError):
    """An output path cannot be written safely (exists, is a directory, missing folder)."""


class LimitError(IrpoolError):
    """A size limit would be exceeded; nothing was allocated."""


class UsageError(IrpoolError):
    """The command line asks for something inconsistent."""


class OracleMissing(IrpoolError):
    """An oracle runtime (openvino, onnxruntime, onnx) was asked for but is not installed."""

    exit_code = 3


class OracleRefused(IrpoolError):
    """An oracle runtime refused a model irpool accepted (its reason is in the message)."""
