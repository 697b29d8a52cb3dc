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
    "one_line",
    "parse_json",
    "read_bytes",
    "read_json",
]

MAX_JSON_BYTES = 16 * 2**20
"""The largest JSON file read whole (a run's config, a saved game): far above real ones."""

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


def parse_json(raw: bytes | str, where: str) -> Any:
    """Parse JSON from an untrusted source.

    Raises:
        Invalid: naming ``where``, for text that is not UTF-8 JSON or is nested too deeply
            to parse (the parser would exhaust the stack).
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise Invalid(f"{where}: the JSON is nested too deeply to read") from None
    except UnicodeDecodeError:
        raise Invalid(f"{where}: not UTF-8 text") from None
    except ValueError as err:
        raise Invalid(f"{where}: not valid JSON ({one_line(str(err))})") from None


def read_json(path: Path, what: str, shown_as: str, limit: int = MAX_JSON_BYTES) -> Any:
    """A regular JSON file of at most ``limit`` bytes, parsed (see :func:`read_bytes`)."""
    return parse_json(read_bytes(path, limit, what, shown_as), shown_as)
