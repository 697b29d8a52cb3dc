"""The run folder's file operations, each failure one line naming the file and what to do.

Reads go through :func:`uno_env.files.read_regular_file` (a FIFO or ``/dev/zero`` in the run
folder would otherwise hang the command), and an unreadable file becomes a
:class:`~uno_env.config_values.ConfigError`. Writes go through
:func:`uno_env.files.write_atomically` (a full disk leaves the old file, never a torn one),
and a failed write becomes an :class:`OSError` whose message names the file and says how
to resume.
"""

from __future__ import annotations

import errno
from pathlib import Path

from uno_env.config_values import ConfigError
from uno_env.files import UnreadableFileError, read_regular_text, write_atomically

__all__ = [
    "MAX_LOG_BYTES",
    "MAX_RECORD_BYTES",
    "read_record_text",
    "write_error",
    "write_file",
]

MAX_LOG_BYTES = 4 << 30
"""The largest ``games.jsonl`` read: about twenty million games. The log is read whole and
every game is held in memory, so a larger one would exhaust the memory anyway."""

MAX_RECORD_BYTES = 64 << 20
"""The largest ``config.json`` / ``games.meta.json`` read (they hold a config: kilobytes)."""

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""Errors that more free space (or a larger quota) cures."""


def read_record_text(path: Path, what: str, hint: str) -> str:
    """The text of a small file of the run folder.

    Args:
        path: The file (it must exist).
        what: What it is, for the message (``"run record"``).
        hint: What to do, appended to the message.

    Raises:
        ConfigError: one line naming the file, for a file that is not a regular UTF-8 file
            of at most :data:`MAX_RECORD_BYTES`.
    """
    try:
        return read_regular_text(path, MAX_RECORD_BYTES, what)
    except UnreadableFileError as err:
        raise ConfigError(f"{err}; {hint}") from None


def write_error(err: OSError, path: Path, doing: str) -> OSError:
    """A failed write as one line: the reason, the file, and how to resume.

    Args:
        err: The operating system's error.
        path: The file written.
        doing: What was being written (``"appending games to"``).

    Returns:
        An :class:`OSError` with the same ``errno`` whose message says it all (its
        ``strerror`` is the whole line, so a CLI prints it as it is).
    """
    reason = err.strerror or " ".join(str(err).split()) or type(err).__name__
    reason = reason[:1].lower() + reason[1:]
    if err.errno in _NO_SPACE:
        hint = "free space and rerun the same command to resume"
    else:
        hint = "rerun the same command to resume once the folder can be written"
    return OSError(err.errno or errno.EIO, f"{reason}: {doing} {path}; {hint}")


def write_file(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` atomically (the old file stays whole on a failure).

    Raises:
        OSError: one line naming the file (see :func:`write_error`).
    """
    try:
        write_atomically(path, data)
    except OSError as err:
        raise write_error(err, path, "cannot write") from None
