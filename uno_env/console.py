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
  a script did not answer itself, or a path with a name longer than the file system holds,
  :func:`caused_by_input`): one line, ``<prog>: error: <message>`` (:func:`error_line`),
  exit 2; any other operating-system error (a full disk) the same line, exit 1, naming
  ``the standard output`` when writing the results out failed (``> /dev/full``,
  :func:`named_stdout`). Never a traceback.

A path given on a command line goes through :func:`path_argument` (argparse's ``type=``), so
that an empty one is refused by name instead of becoming ``.``, the current folder; a path
named in a config or a record goes through :func:`portable_path`, so that one written on
Windows (``agents\\mine.safetensors``) is found on Linux and macOS too.

A part that needs an optional extra that is not installed says so in one line with the pip
command that installs it (:func:`missing_extra_message`, :func:`require_extra`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

__all__ = [
    "BROKEN_PIPE_EXIT",
    "CLOSED_STREAM_EXIT",
    "EXTRA_OF_MODULE",
    "INPUT_ERRNOS",
    "INPUT_ERRORS",
    "INTERRUPTED_EXIT",
    "STDOUT_NAME",
    "caused_by_input",
    "check_output_file",
    "error_line",
    "fail",
    "missing_extra_message",
    "name_too_long",
    "named_stdout",
    "one_line",
    "path_argument",
    "portable_path",
    "require_extra",
    "run_main",
    "silence_stdout",
    "standard_streams_closed",
    "system_error_line",
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
        with named_stdout():
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
        fail(err, name)
    except OSError as err:  # the machine (a full disk, a lost device), or a name too long
        if caused_by_input(err):
            fail(err, name)
        if err.filename == STDOUT_NAME:
            silence_stdout()  # the exit's flush would fail the same way again
        with contextlib.suppress(OSError):  # stderr itself may be the broken stream
            print(f"{name}: error: {system_error_line(err)}", file=sys.stderr)
        raise SystemExit(1) from None
    raise SystemExit(status if isinstance(status, int) else 0)


STDOUT_NAME = "the standard output"
"""What an error of writing to stdout names as its file (it has no name of its own)."""


class _NamedStream:
    """A text stream whose write errors name it: Python's own carry no file name, and the
    one line a failed command prints should say where the output could not go."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self._name = name

    def _named(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except BrokenPipeError:
            raise  # a reader that went away: answered by its own exit status
        except OSError as err:
            if err.filename is None:
                err.filename = self._name
            raise

    def write(self, text: str) -> int:
        written: int = self._named(lambda: self._stream.write(text))
        return written

    def flush(self) -> None:
        self._named(self._stream.flush)

    def __getattr__(self, name: str) -> Any:  # everything else is the stream's own
        return getattr(self._stream, name)


@contextlib.contextmanager
def named_stdout() -> Iterator[None]:
    """Within the block, an error of writing to stdout (a full disk, ``> /dev/full``) names
    :data:`STDOUT_NAME` as its file; the stream itself is restored after it."""
    stream = sys.stdout
    sys.stdout = _NamedStream(stream, STDOUT_NAME)
    try:
        yield
    finally:
        sys.stdout = stream


INPUT_ERRORS: tuple[type[Exception], ...] = (
    ValueError,  # ConfigError, UnreadableFileError, UnwritableFileError and the other checks
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
    PermissionError,
)
"""The errors a user's input causes below a command's ``main``: one line, exit status 2."""

INPUT_ERRNOS: frozenset[int] = frozenset({errno.ENAMETOOLONG})
"""The operating-system errors (``OSError.errno``) that a path as given causes, whatever the
machine: a name longer than the file system holds. Python has no class of its own for them."""


def caused_by_input(err: BaseException) -> bool:
    """Whether an error is the user's input (exit 2), not the machine's (exit 1).

    An error of :data:`INPUT_ERRORS`, or an ``OSError`` whose ``errno`` is in
    :data:`INPUT_ERRNOS` (a path with a name longer than the file system holds).
    """
    return isinstance(err, INPUT_ERRORS) or (isinstance(err, OSError) and err.errno in INPUT_ERRNOS)


def error_line(err: BaseException) -> str:
    """The one line an error is shown as: :func:`one_line`, but a name too long for the file
    system is named (the path as given) with what to do, not as ``[Errno 36]``."""
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        where = err.filename if err.filename is not None else err.strerror or "a path"
        shown = os.fsdecode(where) if isinstance(where, (str, bytes)) else str(where)
        return (
            f"{shown}: a name in this path is too long for the file system (most hold "
            f"{NAME_MAX} bytes a name); give a shorter path"
        )
    return one_line(err)


def system_error_line(err: OSError) -> str:
    """An operating-system error (a full disk, a failed write) as one line naming the file."""
    if err.strerror and err.filename is not None and str(err.filename) not in err.strerror:
        return f"{err.filename}: {err.strerror[:1].lower()}{err.strerror[1:]}"
    if err.strerror and not str(err).startswith("["):
        return one_line(err)
    return (err.strerror or one_line(err)).rstrip(".")


def one_line(err: BaseException | str) -> str:
    """The error's message (or a text) on one line (an error's type's name when it has none)."""
    text = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
    return text if text or isinstance(err, str) else type(err).__name__


def fail(err: BaseException, prog: str) -> NoReturn:
    """The answer to bad input: ``<prog>: error: <message>`` on stderr (:func:`error_line`),
    exit 2 (argparse's form, so every error of a command reads alike).

    Raises:
        SystemExit: always, with status 2.
    """
    with contextlib.suppress(OSError):  # stderr itself may be the broken stream
        print(f"{prog}: error: {error_line(err)}", file=sys.stderr)
    raise SystemExit(2) from None


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
    problem = name_too_long(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def portable_path(path: str | Path) -> Path:
    """A path named in a config or a record, written with either separator.

    Configs and records travel between systems: one written on Windows names
    ``agents\\mine.safetensors``, one written on Linux or macOS ``agents/mine.safetensors``.
    Windows takes both separators; elsewhere a backslash is a character a name may hold, so
    it is read as a separator only where the path as written does not exist.

    Args:
        path: The path as the config or record gives it.

    Returns:
        The path for this system.
    """
    text = os.fspath(path)
    if os.sep == "/" and "\\" in text and not os.path.lexists(text):
        text = text.replace("\\", "/")
    return Path(text)


def check_output_file(path: Path, option: str = "--out") -> None:
    """Refuse, before any work, an output file that the end of the work could not write.

    Checked: a folder at ``path``; a file where a folder of it would be made; a name too
    long (:func:`name_too_long`); a device, pipe, socket or symlink there
    (:func:`uno_env.files.check_writable_target`). Missing folders are fine (they are made).

    Raises:
        ValueError: or ``IsADirectoryError``/``NotADirectoryError``, one line naming
            ``option`` and the path (exit 2 under :func:`run_main`).
    """
    from uno_env.files import check_writable_target  # the one check of what is at a target

    problem = name_too_long(path)
    if problem:
        raise ValueError(f"{option} {problem}")
    if path.is_dir():
        raise IsADirectoryError(f"{option} {path} is a folder; give a file name")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"{option} {path}: {folder} is a file, so it cannot be made")
    check_writable_target(path, option)


NAME_MAX = 255
"""The longest name (bytes) a file system is assumed to hold where it cannot be asked."""

PATH_MAX = 4096
"""The longest path (bytes, with its final NUL) the operating system takes (Linux's)."""


def name_too_long(path: str | Path) -> str:
    """Why a path cannot exist on this machine because a name in it, or the whole of it, is
    too long (``""`` when it can): checked where a command reads its arguments, so that the
    path is refused by name before any work, not as ``[Errno 36]`` after it.

    A name over :data:`NAME_MAX` bytes is measured against the limit of the file system it
    would be on (the nearest folder of the path that exists), the path as given against
    :data:`PATH_MAX`; a file system that holds less is left to ``open()`` (and
    :func:`caused_by_input`).
    """
    text = os.fspath(path)
    try:
        full = os.fsencode(text)  # as given: the system measures the path it is handed
        names = [(part, len(os.fsencode(part))) for part in Path(text).parts]
    except (UnicodeError, ValueError):  # not a name the file system can take: open() says so
        return ""
    longest = max(names, key=lambda item: item[1], default=("", 0))
    if longest[1] > NAME_MAX or len(full) >= PATH_MAX:
        limit = _name_limit(Path(os.path.abspath(text)))
        if longest[1] > limit:
            return (
                f"{text}: a name in this path is too long for the file system ({longest[1]} "
                f"bytes; it holds {limit}); give a shorter path"
            )
        if len(full) >= PATH_MAX:
            return (
                f"{text}: the path is too long ({len(full)} bytes; the system takes "
                f"{PATH_MAX - 1}); give a shorter path"
            )
    return ""


def _name_limit(path: Path) -> int:
    """The longest name the file system of ``path``'s nearest existing folder holds."""
    pathconf = getattr(os, "pathconf", None)  # POSIX only: elsewhere the usual limit
    if pathconf is None:
        return NAME_MAX
    for folder in path.parents:
        try:
            if folder.is_dir():
                return int(pathconf(folder, "PC_NAME_MAX"))
        except (OSError, ValueError):
            return NAME_MAX
    return NAME_MAX


EXTRA_OF_MODULE: dict[str, str] = {
    "openai": "llm",
    "pyspiel": "openspiel",
    "fastapi": "web",
    "starlette": "web",
    "uvicorn": "web",
    "httpx": "web",
    "ray": "ray",
    "rlcard": "bench",
    "jupyter": "notebooks",
    "nbformat": "notebooks",
    "nbclient": "notebooks",
    "ipykernel": "notebooks",
}
"""The top-level module of each optional dependency -> the extra that installs it."""

_INSTEAD: dict[str, str] = {"bench": ", or leave the peer out with --no-rlcard"}
"""What else a command without the extra can do, where there is something."""


def missing_extra_message(err: ModuleNotFoundError, subject: str = "this") -> str:
    """One line for a missing module: the extra and the pip command, when it is an extra's.

    Args:
        err: The import error.
        subject: What needs the module (``the ray backend``).

    Returns:
        The message, e.g. ``this needs the 'web' extra (uvicorn is not installed): pip
        install 'uno-lab[web]'``.
    """
    module = (err.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is not None:
        instead = _INSTEAD.get(extra, "")
        return (
            f"{subject} needs the '{extra}' extra ({module} is not installed): "
            f"pip install 'uno-lab[{extra}]'{instead}"
        )
    return (
        f"the module {module or err.name!r} is missing: reinstall uno-lab "
        "(pip install --force-reinstall uno-lab)"
    )


def require_extra(module: str, error: type[Exception], subject: str) -> ModuleType:
    """Import ``module``, an optional extra's (one of :data:`EXTRA_OF_MODULE`).

    Args:
        module: The module's name, e.g. ``ray``.
        error: What to raise when it is missing.
        subject: What needs it, as the message names it (``the ray backend``).

    Raises:
        error: when it is not installed, in one line with the pip command that installs
            it (:func:`missing_extra_message`).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise error(missing_extra_message(err, subject)) from None
