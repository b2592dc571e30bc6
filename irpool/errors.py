"""Errors of irpool: one root, each error knows where it happened.

Low-level code (geometry, kernel) raises short facts without a place; the front end, which
knows the file, line and layer, attaches a `Where` with `IrpoolError.at`.  The CLI turns an
`IrpoolError` into one line on stderr and its `exit_code`; the library never prints or exits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Where:
    """A place in a model file: file, line, and the layer it concerns (any part may be absent)."""

    file: str | None = None
    line: int | None = None
    layer: str | None = None
    layer_id: str | None = None
    op: str | None = None
    version: str | None = None

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
            label = f'layer "{self.layer}"' if self.layer is not None else "layer"
            parts.append(f"{label} ({detail})" if detail else label)
        return ": ".join(parts)


class IrpoolError(Exception):
    """Root of every error irpool raises on purpose; `exit_code` is what the CLI returns."""

    exit_code = 2

    def __init__(self, message: str, where: Where | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def at(self, where: Where | None) -> IrpoolError:
        """The same error with the missing parts of its place filled in from `where`."""
        merged = self.where.merged(where) if self.where is not None else where
        clone = type(self).__new__(type(self))
        IrpoolError.__init__(clone, self.message, merged)
        return clone

    def __str__(self) -> str:
        prefix = str(self.where) if self.where is not None else ""
        return f"{prefix}: {self.message}" if prefix else self.message


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
