"""A job's folder: the one place where a long job's files, lock and guards live.

A training run, an imitation, a tournament, a sweep or an exploitability estimate writes
into its folder for minutes or days. :class:`RunFolder` is that folder for every one of
them: its lock (:class:`FolderLock` keeps a second process out, naming the first one's
pid), the check that it holds no other run (the job's own files, or the fingerprint it
recorded), ``--resume`` / ``--overwrite`` / ``--fresh``, the writer that leaves each file
whole (:func:`uno_env.files.save_atomically`: a temporary file, flushed, renamed), and
the one-line error that names the folder and what to do.

The lock is the operating system's (:mod:`uno_env.files`), dropped when its process ends,
however it ends, so a stale lock file never blocks a resume.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.files import (
    FolderLock,
    UnreadableFileError,
    UnwritableFileError,
    read_regular_text,
    save_atomically,
)

__all__ = [
    "MAX_RECORD_BYTES",
    "NO_SPACE",
    "RunExistsError",
    "RunFolder",
    "write_failure",
]


class RunExistsError(FileExistsError):
    """The folder already holds a run: continue it, start it over explicitly, or choose
    another folder."""


MAX_RECORD_BYTES = 64 << 20
"""The largest run record read (:meth:`RunFolder.read_record`; they hold a config: kilobytes)."""

NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""Write errors that more free space (or a larger quota) cures."""


def _what_is_there(path: Path) -> str | None:
    """What holds a run folder's path when it is no folder (None: a folder, or nothing)."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):  # nothing there (or no path at all): the job makes it
        return None
    if stat.S_ISDIR(mode) or path.is_dir():  # a folder, or a symlink to one
        return None
    if stat.S_ISLNK(mode):
        target = os.readlink(path)
        return f"a symlink to {target!r}, which " + (
            "is no folder" if path.exists() else "does not exist"
        )
    if stat.S_ISREG(mode):
        return "a file, not a folder"
    return "a pipe, a device or a socket, not a folder"


def write_failure(err: OSError, path: Path) -> OSError:
    """A failed write as one line: the file, the reason, and what to do before rerunning.

    Returns:
        An :class:`OSError` with the same ``errno`` whose message (its ``strerror``) is the
        whole line.
    """
    if isinstance(err, UnwritableFileError):  # names the file and what is there already
        return err
    reason = err.strerror or " ".join(str(err).split()) or type(err).__name__
    fix = "free space" if err.errno in NO_SPACE else "make the folder writable"
    return OSError(
        err.errno or errno.EIO,
        f"cannot write {path}: {reason[:1].lower()}{reason[1:]}; {fix} and rerun",
    )


class RunFolder:
    """One job's folder: its lock, the check that it holds no other run, whole writes.

    Every long job of the lab writes into one folder through this class:

    * :meth:`hold` makes the folder (and the folders above it) and takes its lock: a second
      process on the folder is refused with :class:`FolderInUseError`, naming the first
      one's pid. :meth:`release` drops it and removes ``.lock`` (a finished run leaves none);
      ``undo`` also removes the folders a refused start made, so that it leaves the disk as
      it found it.
    * What makes a run the job's own is stated by the job: the files it writes (``files``;
      :meth:`check_new` refuses a new run in a folder that holds any of them, unless it
      starts over, ``--overwrite`` or ``--fresh``, which :meth:`remove` them), or a record
      of the fingerprint of its config (:meth:`check_record` refuses to continue a run
      recorded with another one, naming what differs). Continuing a run (``--resume``, or
      rerunning the same command) is the job's own check: what it needs to continue.
    * :meth:`write` replaces a file whole (:func:`uno_env.files.save_atomically`: written
      to a temporary name, flushed to disk, renamed), so that a crash or a full disk leaves
      the previous file as it was.

    Every refusal is one line naming the folder and what to do.

    Args:
        path: The folder (it need not exist yet).
        what: What the job is, for messages (``"training run"``).
        files: The job's files in the folder: names, or glob patterns (``"league_slot*"``).
        start_over: How to start a run over, with the option that does it (``"start it
            over with --overwrite"``, ``"start over with --fresh"``).
        resume: How to continue a run there (``"continue it with --resume runs/x"``); None
            for a job that cannot.
        rename: How to give the job another folder (``"give the run another name with
            --set name=..."``).
        place: The setting that says where the folder goes, named by a folder that cannot
            be made (``"runs_dir"``).
        relocate: How to put the folder elsewhere when it cannot be made (``"choose
            another folder with --set runs_dir=..."``).
        on_write_error: Turns a failed write of :meth:`write` (an OSError) and its path
            into the error raised, for a job that says more (how to continue); by
            default :func:`write_failure`.

    Example:
        >>> folder = RunFolder(Path("runs/a"), "imitation run", files=["a.safetensors"])
        >>> folder.check_new(overwrite=False)  # doctest: +SKIP
        >>> folder.hold()  # doctest: +SKIP
        >>> try:  # doctest: +SKIP
        ...     folder.write("report.json", "{}")
        ... finally:
        ...     folder.release()
    """

    def __init__(
        self,
        path: str | Path,
        what: str,
        *,
        files: Sequence[str] = (),
        start_over: str = "start it over with --overwrite",
        resume: str | None = None,
        rename: str = "choose another name",
        place: str = "",
        relocate: str = "choose another folder",
        on_write_error: Callable[[OSError, Path], OSError] | None = None,
    ) -> None:
        self.path = Path(path)
        self.what = what
        self.files = tuple(files)
        self.start_over = start_over
        self.resume = resume
        self.rename = rename
        self.place = place
        self.relocate = relocate
        self.on_write_error = on_write_error or write_failure
        self.lock = FolderLock(self.path, what)
        self.created: list[Path] = []

    # --- the lock ------------------------------------------------------------------------

    @property
    def lock_file(self) -> Path:
        """The lock's file, ``<folder>/.lock`` (there while a run holds the folder)."""
        return self.path / FolderLock.LOCK_NAME

    @property
    def held(self) -> bool:
        """Whether this object holds the folder's lock."""
        return self.lock.held

    def check_place(self) -> None:
        """Refuse a folder path that holds something other than a folder (a file, a pipe,
        a symlink to nothing): the folder cannot be made there, and starting over removes
        a run's files, never what a user put in its place.

        Raises:
            ConfigError: naming the path, what is there and what to do.
        """
        there = _what_is_there(self.path)
        if there is not None:
            raise ConfigError(
                f"the run folder {self.path} is {there}; remove or rename it, or {self.rename}"
            )

    def hold(self) -> None:
        """Make the folder if needed and take its lock (nothing when held already).

        Raises:
            FolderInUseError: another process holds it; the message names its pid.
            UnwritableFileError: ``.lock`` is a link, a pipe or a folder (named).
            ConfigError: the path holds no folder (:meth:`check_place`), or the folder
                cannot be made or locked: one line naming it and where else to go.
        """
        if self.lock.held:
            return
        self.check_place()
        missing = []
        for folder in (self.path, *self.path.parents):
            if folder.exists() or folder.is_symlink():
                break
            missing.append(folder)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.created = missing  # deepest first: the order to remove them in
            self.lock.acquire()
        except UnwritableFileError:
            raise
        except OSError as err:
            reason = err.strerror or " ".join(str(err).split())
            where = f"{self.place}: " if self.place else ""
            raise ConfigError(
                f"{where}the run folder {self.path} cannot be made or locked ({reason}); "
                f"{self.relocate}"
            ) from None

    def release(self, undo: bool = False) -> None:
        """Drop the lock and remove ``.lock``: a run that ended leaves none behind.

        The file is removed while the lock is still held, so no other run holds it
        meanwhile; nothing is removed when this object does not hold the lock (another
        run's file stays).

        Args:
            undo: Also remove the folders :meth:`hold` made, as far as they are empty (a
                refused start leaves the disk as it found it).
        """
        if self.lock.held:
            with contextlib.suppress(OSError):
                self.lock_file.unlink()
        self.lock.release()
        if undo:
            for folder in self.created:
                try:
                    folder.rmdir()
                except OSError:  # not empty (something else is there): keep it and above
                    break
            self.created = []

    # --- what makes a run the job's own -------------------------------------------------

    def existing(self) -> list[Path]:
        """The job's files (``files``) that the folder holds: what starting over removes."""
        if not self.path.is_dir():
            return []
        found = []
        for name in self.files:
            if "*" in name:
                found += sorted(self.path.glob(name))
            elif (self.path / name).exists() or (self.path / name).is_symlink():
                found.append(self.path / name)
        return found

    def ways_out(self) -> str:
        """What to do about a folder that holds a run, as the end of a message."""
        ways = [self.resume] if self.resume else []
        ways.append(self.start_over)
        return ", ".join(ways) + f", or {self.rename}"

    def check_new(self, overwrite: bool) -> list[Path]:
        """Refuse to start a new run over the folder's run by accident.

        Args:
            overwrite: The run starts over (``--overwrite`` / ``--fresh``).

        Returns:
            The job's files in the folder: what starting over removes (:meth:`remove`).

        Raises:
            RunExistsError: the folder holds the job's files and ``overwrite`` is not set:
                one line naming the folder, some of the files, and the ways out.
        """
        existing = self.existing()
        if existing and not overwrite:
            shown = ", ".join(p.name for p in existing[:4]) + (", ..." if len(existing) > 4 else "")
            raise RunExistsError(f"{self.path} already holds a run ({shown}): {self.ways_out()}")
        return existing

    @staticmethod
    def remove(paths: Sequence[Path]) -> None:
        """Remove files and folders (a run's, to start it over); a link goes, not its target."""
        for path in paths:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    def read_record(
        self, name: str, hint: str, required: str | None = None
    ) -> dict[str, Any] | None:
        """A JSON record of the folder (``config.json``), or None when there is none.

        Args:
            name: The record's file name.
            hint: What to do about a record that cannot be read, ending the message.
            required: A key whose text value makes the file a record (``"fingerprint"``).

        Raises:
            ConfigError: naming the file when it cannot be read (a folder, a FIFO, a
                device, too large) or is not what was written.
        """
        path = self.path / name
        if not path.exists() and not path.is_symlink():
            return None
        try:
            data = json.loads(read_regular_text(path, MAX_RECORD_BYTES, "run record"))
        except UnreadableFileError as err:
            raise ConfigError(f"{err}; {hint}") from None
        except (ValueError, RecursionError) as err:
            raise ConfigError(
                f"{path} cannot be read ({' '.join(str(err).split())}): {hint}"
            ) from None
        if not isinstance(data, dict) or (
            required is not None and not isinstance(data.get(required), str)
        ):
            what = f"no {required!r}" if required is not None else "not a JSON object"
            raise ConfigError(f"{path} is not a run record ({what}): {hint}")
        return data

    def check_record(
        self,
        name: str,
        fingerprint: str,
        differences: Callable[[dict[str, Any]], str],
        hint: str | None = None,
        required: str | None = "fingerprint",
    ) -> dict[str, Any] | None:
        """Refuse to continue a run that another config started.

        Args:
            name: The record (a JSON file of the folder) holding ``"fingerprint"``.
            fingerprint: This run's fingerprint.
            differences: What differs between a record and this run, in words (``"seed 3
                -> 4"``); an empty text says nothing that matters differs.
            hint: What to do about a record that cannot be read (default: start over).
            required: A key whose text value makes the file a record (None: a record from
                before fingerprints is compared by ``differences`` alone).

        Returns:
            The record, or None when the folder has none.

        Raises:
            ConfigError: one line naming the folder, the record, what differs and the ways
                out (start over with ``start_over``, or another folder).
        """
        ways = f"{self.start_over}, or {self.rename}"
        stored = self.read_record(name, hint or f"restore or delete it, or {ways}", required)
        if stored is None or stored.get("fingerprint") == fingerprint:
            return stored
        found = differences(stored)
        if not found:
            return stored
        raise ConfigError(
            f"{self.path} holds a {self.what} of another config ({name} differs: {found}): {ways}"
        )

    # --- writing -------------------------------------------------------------------------

    def write(self, name: str | Path, data: str | bytes | Callable[[Path], object]) -> Path:
        """Replace a file of the folder whole: the old one stays as it was on a failure.

        Args:
            name: The file, in the folder (an absolute path: anywhere).
            data: Its text (UTF-8), its bytes, or a function that writes it at the
                (temporary) path it is given.

        Returns:
            The file written.

        Raises:
            OSError: one line naming the file (``on_write_error``).
        """
        path = self.path / name
        if callable(data):
            write = data
        else:
            raw = data.encode("utf-8") if isinstance(data, str) else data
            write = lambda tmp: tmp.write_bytes(raw)  # noqa: E731
        try:
            save_atomically(path, write)
        except OSError as err:
            raise self.on_write_error(err, path) from None
        return path
