"""Writing outputs without surprises: refuse to replace what exists (unless --force), never
replace a directory, the model or an input, write to a temporary file and rename it."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from .errors import OutputError, Where, option


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def exists_in_folder(path: str, where: Where, folder_word: str) -> bool:
    """Whether `path` exists; raise when the folder it goes in does not (irpool makes none)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(
            f"{folder_word} {folder} does not exist; create it first (irpool does not)", where
        )
    return os.path.lexists(path)


def check_output(path: str, force: bool = False, protected: Iterable[str] = ()) -> None:
    """Raise unless `path` may be written: its folder exists, and it is new, or a regular file
    that is not a protected one (model, inputs) and --force was given."""
    where = Where(file=path)
    if not exists_in_folder(path, where, "output folder"):
        return
    if os.path.isdir(path):
        raise OutputError("output path exists and is a directory; expected a file name", where)
    for other in protected:
        if other and _same_file(path, other):
            raise OutputError(
                "output path exists and is one of the command's inputs; it is never overwritten",
                where,
            )
    if os.path.islink(path) and not force:
        raise OutputError(
            f"output path exists (a symbolic link); pass {option('force')} to replace it", where
        )
    if not force:
        raise OutputError(f"output path exists; pass {option('force')} to replace it", where)
    if not os.path.isfile(path):
        raise OutputError("output path exists and is not a regular file; refusing", where)


def _process_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _process_umask()
"""The umask, read once at import (reading it means setting it, which threads must not race)."""


TEMP_FILE_PREFIX = ".irpool-"
TEMP_FILE_SUFFIX = ".tmp"
"""atomic_open writes `TEMP_FILE_PREFIX + random + TEMP_FILE_SUFFIX` beside its target; a
process killed (SIGKILL) between that write and the rename leaves the file behind."""
_TEMP_FILE = re.compile(
    re.escape(TEMP_FILE_PREFIX) + r"[A-Za-z0-9_]+" + re.escape(TEMP_FILE_SUFFIX) + r"\Z"
)


def is_temporary_file(folder: str, name: str) -> bool:
    """Whether `folder/name` is a temporary file atomic_open left: named like one, and a
    regular file (not a link or folder)."""
    if not _TEMP_FILE.match(name):
        return False
    try:
        mode = os.lstat(os.path.join(folder, name)).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode)


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "wb") -> Iterator[IO[bytes]]:
    """A temporary file beside `path`, renamed onto it when the block ends without error and
    removed otherwise, so that `path` is never half-written."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_FILE_PREFIX, suffix=TEMP_FILE_SUFFIX, dir=folder)
    except OSError as e:
        raise OutputError(f"cannot write in {folder}: {e.strerror}", Where(file=path)) from None
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            # mkstemp makes the file private: give it the mode a plain open() would, or keep
            # the mode of the file it replaces
            try:
                keep = stat.S_IMODE(os.stat(path).st_mode)
            except OSError:
                keep = 0o666 & ~UMASK
            os.fchmod(handle.fileno(), keep)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"cannot write the output: {e.strerror or e}", Where(file=path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    with atomic_open(path) as handle:
        write(handle)


def atomic_write_bytes(path: str, data: bytes) -> None:
    with atomic_open(path) as handle:
        handle.write(data)


def atomic_write_text(path: str, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
