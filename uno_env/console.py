"""What every command shares: its standard streams guarded, its path arguments checked.

Every command of the lab (``uno-lab`` and each ``python -m unolab...`` script) runs its
``main`` through :func:`run_main`, which gives the same answers to the same faults:

- **stdout or stderr closed at start** (``uno-lab rules >&-``): Python then holds ``None``
  for the stream, and the descriptor is free, so the next file the command opens would
  take its number and receive what was meant for the terminal. The command does not start:
  exit :data:`CLOSED_STREAM_EXIT` (Python's own status for an output it could not flush).
- **a reader that goes away** (``uno-lab rules | head -1``): exit :data:`BROKEN_PIPE_EXIT`
  without a word, as a shell command killed by ``SIGPIPE`` would.
- **Ctrl-C**: one line, ``<prog>: interrupted``, exit 130.
- **an error a user's input caused** (:data:`INPUT_ERRORS`: a bad config, value or path that
  a script did not answer itself): one line, ``<prog>: error: <message>``, exit 2; any other
  operating-system error (a full disk) the same line, exit 1. Never a traceback.

A path given on a command line goes through :func:`path_argument` (argparse's ``type=``), so
that an empty one is refused by name instead of becoming ``.``, the current folder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "BROKEN_PIPE_EXIT",
    "CLOSED_STREAM_EXIT",
    "INPUT_ERRORS",
    "INTERRUPTED_EXIT",
    "one_line",
    "path_argument",
    "run_main",
    "silence_stdout",
    "standard_streams_closed",
]

CLOSED_STREAM_EXIT = 120
"""The exit status when stdout or stderr is closed (Python's own status for a failed flush)."""

BROKEN_PIPE_EXIT = 141
"""The exit status when the reader of stdout goes away (128 + SIGPIPE, as a shell reports it)."""

INTERRUPTED_EXIT = 130
"""The exit status after Ctrl-C (128 + SIGINT)."""


def standard_streams_closed() -> bool:
    """Whether stdout or stderr was closed when the process started (or has been since)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            return True
    return False


def silence_stdout() -> None:
    """Point stdout at the null device, so that the exit's flush does not hit a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a file (captured), or already closed
        pass


def run_main(main: Callable[[], object], prog: str | None = None) -> None:
    """Run a command's ``main`` and exit with its status, the standard streams guarded.

    Args:
        main: The command; it returns its exit status (an ``int``; anything else, such as
            the figures a benchmark returns, means 0) and prints its own one-line errors.
        prog: The command's name for the interrupt line (default: ``sys.argv[0]``'s name).

    Raises:
        SystemExit: always, with the status.
    """
    if standard_streams_closed():
        raise SystemExit(CLOSED_STREAM_EXIT)
    name = prog or os.path.basename(sys.argv[0] or "uno-lab")
    try:
        status = main()
        sys.stdout.flush()  # here, not at exit, so a pipe closed by its reader is caught
    except BrokenPipeError:
        silence_stdout()
        raise SystemExit(BROKEN_PIPE_EXIT) from None
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):  # stderr may have gone with the terminal
            print(f"{name}: interrupted", file=sys.stderr)
        raise SystemExit(INTERRUPTED_EXIT) from None
    except INPUT_ERRORS as err:  # what a user's input can cause: a config, a value, a path
        _say(name, err)
        raise SystemExit(2) from None
    except OSError as err:  # the machine, not the input: a full disk, a lost device
        _say(name, err)
        raise SystemExit(1) from None
    raise SystemExit(status if isinstance(status, int) else 0)


INPUT_ERRORS: tuple[type[Exception], ...] = (
    ValueError,  # ConfigError, UnreadableFileError, UnwritableFileError and the other checks
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
    PermissionError,
)
"""The errors a user's input causes below a command's ``main``: one line, exit status 2."""


def one_line(err: BaseException | str) -> str:
    """The error's message (or a text) on one line (an error's type's name when it has none)."""
    text = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
    return text if text or isinstance(err, str) else type(err).__name__


def _say(name: str, err: BaseException) -> None:
    with contextlib.suppress(OSError):  # stderr itself may be the broken stream
        print(f"{name}: error: {one_line(err)}", file=sys.stderr)


def path_argument(text: str) -> Path:
    """A file or folder path given on a command line (argparse's ``type=``).

    ``Path("")`` is ``.``, the current folder, which would turn a forgotten value into
    "is a folder" or a write into the wrong place: an empty or blank path, or one holding a
    NUL, is refused here.

    Raises:
        argparse.ArgumentTypeError: naming the value as given.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is an empty path; give a file or folder")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"{text!r}: a path cannot hold a NUL character")
    return Path(text)
