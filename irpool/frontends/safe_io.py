"""Reading user files without surprises: regular files only, bounded size, no decompression."""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat

from ..env import env_int
from ..errors import IrParseError, LimitError, Where

DEFAULT_MAX_XML_BYTES = 512 * 1024 * 1024
"""Largest XML file irpool reads (512 MiB); `IRPOOL_MAX_XML_BYTES` changes it."""

_COMPRESSED = (
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
    (b"\x5d\x00\x00", "lzma"),
)


def max_xml_bytes() -> int:
    return env_int("IRPOOL_MAX_XML_BYTES", DEFAULT_MAX_XML_BYTES)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: str, what: str) -> int:
    """A read-only descriptor of `path`, opened non-blocking and checked with fstat to be a
    regular file before anything is read."""
    where = Where(file=path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise IrParseError(f"{what} file not found", where) from None
    except OSError as e:
        raise IrParseError(f"cannot open {what} file: {e.strerror}", where) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise IrParseError(f"{what} path is {_kind(mode)}; expected a regular file", where)
    return fd


def regular_file_size(path: str, what: str) -> int:
    """The size of `path`, which must be a regular file."""
    fd = _open_regular(path, what)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_range(path: str, offset: int, size: int, what: str) -> bytes:
    """`size` bytes of a regular file from `offset` (fewer if the file is shorter)."""
    fd = _open_regular(path, what)
    try:
        return os.pread(fd, size, offset)
    finally:
        os.close(fd)


def read_regular_file(path: str, limit: int, what: str = "model") -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes.

    The file is opened non-blocking and checked with fstat before anything is read, so a FIFO
    or a device is refused without waiting on it or reading from it.
    """
    where = Where(file=path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise IrParseError(f"{what} file not found", where) from None
    except OSError as e:
        raise IrParseError(f"cannot access {what} file: {e.strerror}", where) from None
    if not stat.S_ISREG(st.st_mode):
        raise IrParseError(f"{what} path is {_kind(st.st_mode)}; expected a regular file", where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.EACCES:
            raise IrParseError(f"permission denied reading {what} file", where) from None
        raise IrParseError(f"cannot open {what} file: {e.strerror}", where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IrParseError(
                f"{what} path is {_kind(st.st_mode)}; expected a regular file", where
            )
        if st.st_size > limit:
            hint = " (set IRPOOL_MAX_XML_BYTES to raise it)" if what == "model" else ""
            raise LimitError(
                f"{what} file is {st.st_size} bytes, above the limit of {limit} bytes{hint}",
                where,
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise LimitError(f"{what} file grew above the limit of {limit} bytes", where)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def refuse_compressed(data: bytes, path: str) -> None:
    for magic, name in _COMPRESSED:
        if data.startswith(magic):
            raise IrParseError(
                f"file is {name}-compressed; irpool does not inflate files, decompress it first",
                Where(file=path),
            )


_DECL_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([^"'<>]*)["']""")
_LATIN1 = (b"iso-8859-1", b"latin1")


_UTF8 = (b"utf-8", b"utf8", b"us-ascii", b"ascii")


def encoding_note(data: bytes) -> str | None:
    """What irpool says when the XML declaration of a file without a byte-order mark names an
    encoding openvino does not read it in (anything but UTF-8, ASCII and ISO-8859-1): openvino
    ignores the name and reads the bytes as UTF-8, and so does irpool (decode_xml)."""
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, b"<\x00")):
        return None
    if data.startswith(b"\x00<"):
        return None
    m = _DECL_ENCODING.match(data[:512])
    if m is None or m.group(1).lower() in _UTF8 + _LATIN1:
        return None
    name = m.group(1).decode("ascii", "replace")
    return (
        f'the XML declaration names encoding="{name}", which openvino ignores: it reads the '
        "file as UTF-8, and so does irpool; declare UTF-8 (or write nothing)"
    )


def decode_xml(data: bytes, path: str) -> str:
    """The text of an XML file as openvino's reader (pugixml) decodes it: a byte-order mark
    (UTF-8, UTF-16, UTF-32) or UTF-16 bytes of "<" first; else ISO-8859-1 when the declaration
    names it (ISO-8859-1 or latin1, any case), else UTF-8 whatever the declaration names
    (measured with openvino 2026.4.1: "foo", "x-unknown-enc" and "UTF-16" declared on UTF-8
    bytes all load; docs/security.md)."""
    if data.startswith(codecs.BOM_UTF32_LE) or data.startswith(codecs.BOM_UTF32_BE):
        encoding, body = "utf-32", data
    elif data.startswith(codecs.BOM_UTF8):
        encoding, body = "utf-8", data[len(codecs.BOM_UTF8) :]
    elif data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        encoding, body = "utf-16", data
    elif data.startswith(b"<\x00?\x00") or data.startswith(b"<\x00"):
        encoding, body = "utf-16-le", data
    elif data.startswith(b"\x00<"):
        encoding, body = "utf-16-be", data
    else:
        m = _DECL_ENCODING.match(data[:512])
        declared = m.group(1).lower() if m else b""
        encoding, body = ("latin-1" if declared in _LATIN1 else "utf-8"), data
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as e:
        line = body[: e.start].count(b"\n") + 1 if "8" in encoding else None
        raise IrParseError(
            f"bytes are not valid {encoding.upper()} (byte {e.start}: {e.reason}); expected "
            "UTF-8 (openvino reads every file without a byte-order mark as UTF-8 unless its "
            "XML declaration names ISO-8859-1)",
            Where(file=path, line=line),
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text
