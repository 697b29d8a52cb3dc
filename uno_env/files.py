"""Reading and writing the lab's files safely: bounded reads, atomic writes, and a folder's lock.

Every file the lab reads may come from someone else (a shared record, a run folder, a
config), so it is read through :func:`read_regular_file`: it must be a regular file (a FIFO
would block the reader forever, ``/dev/zero`` never ends) no larger than a stated limit,
and the answer to anything else is one :class:`UnreadableFileError` line naming the file.

Every file the lab writes for keeps is written through :func:`write_atomically`: a
temporary file beside the target, flushed to disk, then renamed over it, so a crash or a
full disk leaves either the old file or the new one, never a torn one. Only a regular file
(or nothing) is ever replaced: a device, a pipe, a folder or a symlink at the target is an
:class:`UnwritableFileError` and is left as it is.

**A folder held by one process.** A job that writes into a folder for minutes or days (:class:`uno_env.folders.RunFolder`)
keeps a second process out of it with :class:`FolderLock`, which names the first one's pid.
The lock is the operating system's: ``flock`` on Linux and macOS, ``msvcrt.locking`` on
Windows, imported where it is used, so that the rest of the lab (the engine, the envs)
imports on any system. The operating system drops the lock when its process ends, however
it ends (kill -9 included), so a stale lock file never blocks a resume.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "PID_BYTES",
    "FolderInUseError",
    "FolderLock",
    "UnreadableFileError",
    "UnwritableFileError",
    "check_writable_target",
    "read_regular_file",
    "read_regular_text",
    "save_atomically",
    "shown",
    "why_missing",
    "write_atomically",
]


_CHUNK = 1 << 20


class UnreadableFileError(ValueError):
    """A file that cannot be read as asked: missing, not a regular file, too large, unreadable.

    The message is one line that names the file and what is wrong with it.
    """


class UnwritableFileError(OSError, ValueError):
    """A write's target is something other than a regular file or nothing (a device, a pipe,
    a socket, a folder or a symlink), which the rename would replace; it is left alone.

    The message is one line that names the path and what is there. It is both an ``OSError``
    (a write failed) and a ``ValueError`` (the path a user gave is not one to write to).
    """


def shown(value: Any, limit: int = 60) -> str:
    """A value for a message, cut short: values from files can be huge or deeply nested.

    Args:
        value: Any value; it is shown with ``repr``.
        limit: The most characters shown (an ellipsis marks a cut).

    Returns:
        The ``repr`` of ``value``, at most ``limit`` characters long.
    """
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # a deeply nested value, or an int over the digit limit
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def why_missing(path: str | Path) -> str:
    """Why ``path`` opens no file, in words for a message after its name.

    ``Path.exists`` says False for a missing file, a symlink loop and a symlink to nothing
    alike, and "does not exist" would send the user looking for the wrong thing.

    Returns:
        ``"does not exist"``, ``"is a symlink loop (...)"`` or ``"is a symlink to ..., which
        does not exist"``.
    """
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "is a symlink loop (its links lead back to themselves)"
        if os.path.islink(path):
            return f"is a symlink to {os.readlink(path)!r}, which does not exist"
    except ValueError:  # a NUL in the path
        return "is not a valid path (it contains a NUL character)"
    return "does not exist"


def read_regular_file(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file no larger than ``limit``.

    The file is opened without blocking and checked on the open descriptor, so a FIFO, a
    device or a socket is refused before anything is read, and a file that grows while it
    is read is still cut off at the limit.

    Args:
        path: The file.
        limit: The most bytes accepted.
        what: What the file is, for the message (``"record"``, ``"run config"``).

    Returns:
        The file's bytes.

    Raises:
        UnreadableFileError: one line naming the file, when it does not exist, is a folder
            or not a regular file, is larger than ``limit`` or cannot be read.
    """
    name = str(path)
    if "\0" in name:
        raise UnreadableFileError(f"{what} {name!r}: the path contains a NUL character")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ELOOP):
            raise UnreadableFileError(f"{what} {name!r} {why_missing(name)}") from None
        if err.errno == errno.EISDIR:
            raise UnreadableFileError(f"{what} {name!r} is a folder, not a file") from None
        raise UnreadableFileError(
            f"{what} {name!r} cannot be opened: {err.strerror or err}"
        ) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFileError(f"{what} {name!r} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFileError(
                f"{what} {name!r} is not a regular file (a pipe, device or socket); "
                "give a plain file"
            )
        if info.st_size > limit:
            raise UnreadableFileError(
                f"{what} {name!r} is {info.st_size:,} bytes, more than the {limit:,} "
                "accepted; is it the right file?"
            )
        parts: list[bytes] = []
        total = 0
        while True:
            block = os.read(fd, _CHUNK)
            if not block:
                break
            total += len(block)
            if total > limit:
                raise UnreadableFileError(
                    f"{what} {name!r} grew past the {limit:,} bytes accepted while it was read"
                )
            parts.append(block)
        return b"".join(parts)
    except OSError as err:
        raise UnreadableFileError(
            f"{what} {name!r} cannot be read: {err.strerror or err}"
        ) from None
    finally:
        os.close(fd)


def read_regular_text(path: str | Path, limit: int, what: str = "file") -> str:
    """The UTF-8 text of a regular file no larger than ``limit`` (see :func:`read_regular_file`).

    Raises:
        UnreadableFileError: as :func:`read_regular_file`, or when the file is not UTF-8.
    """
    raw = read_regular_file(path, limit, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UnreadableFileError(
            f"{what} {str(path)!r} is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset "
            f"{err.start})"
        ) from None


def _mode_for(target: Path) -> int:
    """The permission bits ``target`` has, or those a new file gets under the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0)  # reading the umask means setting it; it is put back at once
        os.umask(mask)
        return 0o666 & ~mask


PARTIAL_SUFFIX = ".partial"
"""The suffix of a file being written (``.<name>.<random>.partial`` beside its target)."""


def _kind_of(mode: int) -> str:
    """What a non-regular file is, for a message."""
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for is_kind, name in kinds if is_kind(mode)), "not a regular file")


def check_writable_target(path: str | Path, what: str = "file") -> None:
    """Refuse a write target that is there and is not a regular file.

    A rename replaces whatever the target path holds, so a device node, a named pipe, a
    socket, a folder or a symlink there would be lost to a file written "atomically".

    Args:
        path: The path about to be written.
        what: What the file is, for the message (``"results"``, ``"policy"``).

    Raises:
        UnwritableFileError: one line naming the path and what is there.
    """
    name = str(path)
    try:
        mode = os.lstat(name).st_mode
    except FileNotFoundError:
        return
    except (OSError, ValueError):  # a NUL in the path, a parent that is a file...: open() says
        return
    if not stat.S_ISREG(mode):
        raise UnwritableFileError(
            f"{what} {name!r} is {_kind_of(mode)}, not a regular file; it is left as it is: "
            "give the path of a file to write"
        )


def save_atomically(path: str | Path, write: Callable[[Path], object]) -> None:
    """Have ``write`` write a file, then put it at ``path`` whole, or leave ``path`` alone.

    ``write`` gets a temporary path in the same folder (named ``*.partial``); the file it
    writes there is flushed to disk and renamed over ``path``. If anything fails (a full
    disk, an interrupt) the temporary file is removed and the error is raised.

    Args:
        path: The file to write.
        write: Writes the file at the path it is given (``model.save``,
            ``np.savez_compressed``...).

    Raises:
        UnwritableFileError: ``path`` is there and is not a regular file (a device, a pipe,
            a folder, a symlink): nothing is written.
        OSError: the write failed; ``path`` holds what it held before.
    """
    target = Path(path)
    check_writable_target(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=PARTIAL_SUFFIX, dir=target.parent)
    try:
        # mkstemp makes a private (0600) file: give it the mode the file has, or the one a
        # plain open() would give it, so that shared results stay readable by others.
        os.fchmod(fd, _mode_for(target))
        os.close(fd)
        fd = -1
        write(Path(tmp))
        with open(tmp, "rb") as written:
            os.fsync(written.fileno())
        check_writable_target(target)  # again: the write may have taken a while
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` so that it holds either the old content or the new, whole.

    Args:
        path: The file to write.
        data: Text (written as UTF-8) or bytes.

    Raises:
        UnwritableFileError: ``path`` is there and is not a regular file: nothing is written.
        OSError: the write failed; ``path`` holds what it held before.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    save_atomically(path, lambda tmp: tmp.write_bytes(raw))


PID_BYTES = 32
"""The lock file's first bytes hold the holder's pid; the lock itself is on a byte past them
(Windows locks are mandatory: a locked byte cannot be read by the process asking who holds it)."""


class FolderInUseError(RuntimeError):
    """Another live process holds the folder's lock; the message names its pid."""


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock of an open lock file; False when another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, PID_BYTES, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    """Drop the lock taken by :func:`_try_lock` (closing the file drops it too)."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, PID_BYTES, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _read_pid(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, PID_BYTES).decode("ascii", "replace").strip() or "unknown"


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"{os.getpid()}\n".encode())


class FolderLock:
    """An exclusive lock on a folder, held by one process while it writes there.

    The lock is the operating system's lock on ``LOCK_NAME`` inside the folder, which also
    records the holder's pid. The operating system drops the lock when its process ends, however it
    ends (kill -9 included), so a stale lock file never blocks a resume.

    Args:
        folder: The folder to hold (it must exist).
        what: What the folder is, for the message (``"tournament run"``).

    Example:
        >>> with FolderLock(run_dir, "tournament run"):  # doctest: +SKIP
        ...     play_the_games()
    """

    LOCK_NAME = ".lock"

    def __init__(self, folder: str | Path, what: str = "folder") -> None:
        self.folder = Path(folder)
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock.

        Raises:
            FolderInUseError: another process holds it; the message names its pid.
            OSError: the lock file cannot be created.
        """
        if self._fd is not None:
            return
        path = self.folder / self.LOCK_NAME
        # Never through a link: the pid written below would overwrite the file it points
        # at (anywhere, for root), or create one outside the folder.
        check_writable_target(path, f"the {self.what}'s lock file")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as err:
            if err.errno == errno.ELOOP:  # a link put there since the check
                raise UnwritableFileError(
                    f"the {self.what}'s lock file {str(path)!r} is a symbolic link; remove it "
                    "and rerun"
                ) from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnwritableFileError(
                    f"the {self.what}'s lock file {str(path)!r} is not a regular file; remove "
                    "it and rerun"
                )
            if not _try_lock(fd):
                holder = _read_pid(fd)
                raise FolderInUseError(
                    f"the {self.what} {str(self.folder)!r} is in use by another process "
                    f"(pid {holder}); wait for it to finish or stop it, or choose another folder"
                ) from None
            _write_pid(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the lock file stays; it is reused by the next holder)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                _unlock(fd)
            os.close(fd)

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
