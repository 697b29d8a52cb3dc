"""Reading data that someone else may have written: run folders, saved games, uploads.

Everything the server reads from disk or from a request is data, never code, and may be
hostile: a FIFO that blocks a reader forever, a file of gigabytes, JSON nested a hundred
thousand levels deep, a symbolic link to a file elsewhere on the server. The helpers here
read such data with bounds and answer every failure with one :class:`~unolab.web.errors.Invalid`
line that names the file as the browser knows it (a run id, a saved game id), never by its
path on the server.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from uno_env.files import UnreadableFileError, read_regular_file
from unolab.web.errors import Invalid

__all__ = [
    "MAX_JSON_BYTES",
    "inside",
    "is_regular",
    "json_text",
    "one_line",
    "parse_json",
    "read_bytes",
    "read_json",
]

MAX_JSON_BYTES = 16 * 2**20
"""The largest JSON file read whole (a run's config, a saved game): far above real ones."""

_BYTE_ORDER_MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
"""How UTF-8, UTF-16 LE and UTF-16 BE text may begin (UTF-32's begin as UTF-16's)."""

_MAX_DETAIL = 300
"""The longest message passed on from a parser (values from files can be huge)."""


def one_line(text: str, limit: int = _MAX_DETAIL) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def is_regular(path: Path) -> bool:
    """Whether ``path`` is (or links to) a regular file; never blocks, never raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with every symbolic link followed, lies under ``root`` (resolved)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
        return False


def read_bytes(path: Path, limit: int, what: str, shown_as: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Args:
        path: The file on the server.
        limit: The most bytes accepted.
        what: What the file is (``"run config"``).
        shown_as: How the message names the file (never its server path).

    Raises:
        Invalid: one line, for a missing file, a FIFO or device, a folder, a file too large.
    """
    try:
        return read_regular_file(path, limit, what)
    except UnreadableFileError as err:
        text = str(err).replace(repr(str(path)), repr(shown_as)).replace(str(path), shown_as)
        raise Invalid(one_line(text)) from None


def json_text(raw: bytes, where: str) -> str:
    """``raw`` read as the text of JSON: UTF-8, as JSON is exchanged (RFC 8259, 8.1).

    Python's own JSON reader would also take UTF-16 and UTF-32 (with or without a byte
    order mark) and skip UTF-8's byte order mark; the lab writes none of them and the
    terminal's readers refuse them, so every reader of the server refuses them too, with
    one line. A NUL byte is never part of JSON text (it marks UTF-16 or UTF-32).

    Raises:
        Invalid: naming ``where``, for bytes that are not UTF-8, that start with a byte
            order mark or that hold a NUL byte.
    """
    if raw.startswith(_BYTE_ORDER_MARKS):
        raise Invalid(
            f"{where}: starts with a byte order mark; JSON is read as UTF-8 text without one"
        )
    if b"\x00" in raw:
        raise Invalid(f"{where}: holds NUL bytes (UTF-16 or UTF-32?); JSON is read as UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{where}: not UTF-8 text") from None


def parse_json(raw: bytes | str, where: str) -> Any:
    """Parse JSON from an untrusted source (bytes are read by :func:`json_text`).

    Raises:
        Invalid: naming ``where``, for text that is not UTF-8 JSON or is nested too deeply
            to parse (the parser would exhaust the stack).
    """
    text = json_text(raw, where) if isinstance(raw, bytes) else raw
    try:
        return json.loads(text)
    except RecursionError:
        raise Invalid(f"{where}: the JSON is nested too deeply to read") from None
    except ValueError as err:
        raise Invalid(f"{where}: not valid JSON ({one_line(str(err))})") from None


def read_json(path: Path, what: str, shown_as: str, limit: int = MAX_JSON_BYTES) -> Any:
    """A regular JSON file of at most ``limit`` bytes, parsed (see :func:`read_bytes`)."""
    return parse_json(read_bytes(path, limit, what, shown_as), shown_as)
