"""The run folder's file writes, each failure one line naming the file and what to do.

Writes go through :func:`uno_env.files.write_atomically` (a full disk leaves the old file,
never a torn one), and a failed write becomes an :class:`OSError` whose message names the
file and says how to resume.
"""

from __future__ import annotations

import errno
from pathlib import Path

from uno_env.files import write_atomically
from uno_env.folders import NO_SPACE

__all__ = [
    "MAX_LOG_BYTES",
    "write_error",
    "write_file",
]

MAX_LOG_BYTES = 4 << 30
"""The largest ``games.jsonl`` read: about twenty million games. The log is read whole and
every game is held in memory, so a larger one would exhaust the memory anyway."""


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
    if err.errno in NO_SPACE:
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
