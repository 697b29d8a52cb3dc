"""A folder held by one process: the operating system's lock, portable.

A job that writes into a folder for minutes or days (:class:`uno_env.folders.RunFolder`)
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
from pathlib import Path
from types import TracebackType

from uno_env.files import UnwritableFileError, check_writable_target

__all__ = ["PID_BYTES", "FolderInUseError", "FolderLock"]

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
