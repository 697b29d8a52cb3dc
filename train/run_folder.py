"""A training run's folder: its files, the guard against training over a run, checkpoints.

``runs/<name>/`` holds ``config.yaml``, the SB3 checkpoints ``latest.zip`` / ``best.zip``
with their metadata ``latest.json`` / ``best.json``, the pickle-free export of the best
checkpoint (``<name>.safetensors`` + ``.json``, also as ``best_policy.*``), ``tb/`` and the
league's ``league_slot*`` files. Every file is written whole (:func:`uno_env.files.save_atomically`;
a group of files through a scratch folder), and a failed write is one :class:`RunWriteError`
line naming the file and how to go on.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from safetensors import SafetensorError

from uno_env.configuration import ConfigError
from uno_env.files import (
    PARTIAL_SUFFIX,
    FolderLock,
    RunFolderLock,
    save_atomically,
    write_atomically,
)
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules
from unolab.train.config import TrainConfig
from unolab.train.export import export_policy, git_commit
from unolab.train.imitate_config import CLONE_NAME

__all__ = [
    "LEGACY_POLICY_NAME",
    "RunExistsError",
    "RunWriteError",
    "policy_path",
    "release_run_lock",
    "run_files",
    "save_checkpoint",
]

LEGACY_POLICY_NAME = "best_policy"
"""The export's file name before runs named their agent after themselves; still written."""

_OWN_STEMS = frozenset({"best", "latest", "config", LEGACY_POLICY_NAME})
"""File stems of a run folder that an agent named after the run must not take."""

_PARTIAL = PARTIAL_SUFFIX
"""Suffix of a file being written; renamed over the real name once complete."""

_STAGING = "staging" + _PARTIAL
"""A scratch folder of the run: a group of files is written there, then renamed into the run."""


class RunExistsError(FileExistsError):
    """The run folder already holds a run: resume it, or start over explicitly."""


def policy_path(config: TrainConfig) -> Path:
    """Where the run's best checkpoint is exported, without suffix: named after the run.

    ``<run_dir>/<name>``, unless the name would take one of the run's own files (``best``,
    ``latest``, ``league_slot0``, ...): then ``<run_dir>/best_policy``.
    """
    name = config.name
    if name in _OWN_STEMS or name.startswith("league_slot"):
        name = LEGACY_POLICY_NAME
    return config.run_dir / name


def run_files(config: TrainConfig) -> list[Path]:
    """The files (and ``tb/`` folder) of a run that exist in ``config.run_dir``.

    Only what a run writes: ``--overwrite`` removes these and leaves anything else alone.
    """
    run_dir = config.run_dir
    if not run_dir.is_dir():
        return []
    # evaluations.jsonl too: a run started over appends its curve, which must not follow
    # the old run's.
    named = ["config.yaml", "tb", "latest.zip", "latest.json", "best.zip", "best.json"]
    named.append("evaluations.jsonl")
    if config.imitate is not None:  # the folder of the run's own clone stage
        named.append(CLONE_NAME)
    for stem in {LEGACY_POLICY_NAME, policy_path(config).name}:
        named += [f"{stem}.safetensors", f"{stem}.json"]
    found = [run_dir / name for name in named if (run_dir / name).exists()]
    for pattern in ("league_slot*.safetensors", "league_slot*.json", f"*{_PARTIAL}"):
        found += sorted(run_dir.glob(pattern))
    return found


def _remove(paths: Sequence[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _check_run_dir(config: TrainConfig, resume: bool, overwrite: bool) -> list[Path]:
    """Refuse to train over an existing run by accident; return what ``overwrite`` removes.

    Raises:
        ConfigError: for a run name that is not a folder of its own (``.``, ``..``).
        FileNotFoundError: to resume a run that has no ``latest.zip``.
        RunExistsError: for a new run in a folder that holds one, without ``overwrite``.
    """
    if config.name in (".", ".."):
        raise ConfigError(
            f"name: {config.name!r} is not a run name (the run would write into "
            f"{config.run_dir}); give one with --set name=..."
        )
    run_dir = config.run_dir
    if resume:
        if not (run_dir / "latest.zip").is_file():
            raise FileNotFoundError(
                f"cannot resume: {run_dir / 'latest.zip'} does not exist (a run writes it at "
                "its first evaluation, or when stopped with Ctrl-C)"
            )
        return []
    existing = run_files(config)
    if existing and not overwrite:
        shown = ", ".join(p.name for p in existing[:4]) + (", ..." if len(existing) > 4 else "")
        raise RunExistsError(
            f"{run_dir} already holds a run ({shown}): continue it with --resume {run_dir}, "
            "start it over with --overwrite (removes those files first), or give the new run "
            "another name with --set name=..."
        )
    return existing


class RunWriteError(OSError):
    """A file of the run could not be written; the message (its ``strerror``) is one line
    naming the file and how to go on."""


def _write_failed(err: BaseException, path: Path, run_dir: Path) -> RunWriteError:
    """A failed write as one line: the file, the reason, and how to go on.

    The run can continue from ``latest.zip`` when one was written (each file is replaced
    whole, so it is the last good checkpoint); without one it starts over.
    """
    if isinstance(err, RunWriteError):
        return err
    code = err.errno if isinstance(err, OSError) else None
    reason = err.strerror if isinstance(err, OSError) else None
    if code is None:  # safetensors reports "I/O error: No space left on device (os error 28)"
        found = re.search(r"os error (\d+)", str(err))
        code = int(found.group(1)) if found else errno.EIO
        reason = os.strerror(code) if found else None
    reason = reason or _one_line(err)
    if (run_dir / "latest.zip").is_file():
        hint = f"free space and continue from the last checkpoint with --resume {run_dir}"
    else:
        hint = f"free space and start the run again with --overwrite (no checkpoint in {run_dir})"
    if code not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        hint = hint.replace("free space", "make the folder writable")
    return RunWriteError(code, f"cannot write {path}: {reason[:1].lower()}{reason[1:]}; {hint}")


def _sync(path: Path) -> None:
    """Flush a written file to disk (before it is renamed over the old one)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_atomically(write: Any, path: Path, run_dir: Path | None = None) -> None:
    """``write(tmp)``, flush, then rename ``tmp`` over ``path``: never half a file.

    On a failure the temporary file is removed and ``path`` keeps what it held.

    Raises:
        RunWriteError: one line naming ``path`` (an OSError).
    """
    try:
        save_atomically(path, write)
    except (OSError, SafetensorError) as err:
        raise _write_failed(err, path, run_dir or path.parent) from None


def _save_group(write: Callable[[Path], Any], run_dir: Path, files: str) -> None:
    """``write(folder)`` into a scratch folder of the run, then rename each file it wrote
    into the run: a failure (a full disk) leaves every file of the run whole.

    Args:
        write: Writes the files into the folder it is given.
        run_dir: The run's folder.
        files: The files written, as a message names them when the error does not
            (``"league_slot*.safetensors"``).

    Raises:
        RunWriteError: one line naming the file (an OSError).
    """
    staging = run_dir / _STAGING
    try:
        _remove([staging])
        staging.mkdir()
        write(staging)
        for path in sorted(staging.iterdir()):
            _sync(path)
        for path in sorted(staging.iterdir()):
            os.replace(path, run_dir / path.name)
    except (OSError, SafetensorError) as err:
        name = getattr(err, "filename", None)
        where = run_dir / (Path(name).name if name else files)
        raise _write_failed(err, where, run_dir) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Ignore Ctrl-C and SIGTERM while a checkpoint is written (a second one must not
    corrupt it)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals cannot be changed (nor delivered) here
        yield
        return
    previous_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)


def save_checkpoint(
    model: Any,
    config: TrainConfig,
    rules: Rules,
    tag: str,
    steps: int,
    evaluations: dict[str, dict[str, Any]],
) -> None:
    """Write ``<tag>.zip`` (SB3, for resuming), ``<tag>.json`` and, for ``best``, the export.

    The export of ``best`` is named after the run (:func:`policy_path`) and copied to
    ``best_policy.*``, the name older scripts read. Every file is replaced whole.

    Raises:
        RunWriteError: (an OSError) one line naming the file that could not be written.
    """
    run_dir = config.run_dir
    _save_atomically(model.save, run_dir / f"{tag}.zip")
    meta = {
        "name": config.name,
        "algorithm": config.algorithm,
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
        "steps": steps,
        "evaluations": evaluations,
        "seed": config.seed,
        "git_commit": git_commit(),
        "config": config.to_dict(),
    }
    record = run_dir / f"{tag}.json"
    try:
        write_atomically(record, json.dumps(meta, indent=2))
    except OSError as err:
        raise _write_failed(err, record, run_dir) from None
    if tag == "best":
        extra = {"steps": steps, "evaluations": evaluations, "seed": config.seed}
        stem = policy_path(config)

        def export(folder: Path) -> None:
            weights = export_policy(
                model, folder / stem.name, config.name, config.algorithm, rules, extra
            )
            if stem.name != LEGACY_POLICY_NAME:
                legacy = folder / LEGACY_POLICY_NAME
                shutil.copyfile(weights, legacy.with_suffix(".safetensors"))
                shutil.copyfile(weights.with_suffix(".json"), legacy.with_suffix(".json"))

        _save_group(export, run_dir, f"{stem.name}.safetensors")


def _one_line(err: BaseException | str) -> str:
    """An exception's message on one line (YAML and numpy messages span several)."""
    return " ".join(str(err).split()) or type(err).__name__


def release_run_lock(lock: RunFolderLock, undo: bool = False) -> None:
    """Drop a run folder's lock and remove its lock file: a run that ended leaves no
    ``.lock`` behind (it would only name a process that is gone).

    The file is removed while the lock is still held, so no other run holds it meanwhile;
    a run starting later creates it afresh. ``undo`` is as for :meth:`RunFolderLock.release`
    (a refused start also removes the folders it created).
    """
    if lock.lock.held:
        with suppress(OSError):
            (lock.run_dir / FolderLock.LOCK_NAME).unlink()
    lock.release(undo=undo)
