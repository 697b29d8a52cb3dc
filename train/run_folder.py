"""A training run's folder: its files, the guard against training over a run, checkpoints.

``runs/<name>/`` holds ``config.yaml``, the SB3 checkpoints ``latest.zip`` / ``best.zip``
(and ``previous.zip``, the one before ``latest``) with their records ``latest.json`` /
``best.json`` / ``previous.json`` (each with its zip's SHA-256), the pickle-free export of
the best checkpoint (``<name>.safetensors`` + ``.json``, also as ``best_policy.*``), ``tb/``,
the league's ``league_slot*`` files, ``evaluations.jsonl`` and ``history.jsonl`` (the
settings changed on resuming, :mod:`unolab.train.resume`). The folder is a
:class:`uno_env.folders.RunFolder` (:func:`run_folder`: its lock, the files that make it a
run's, the ways out); every file is written whole (:func:`uno_env.files.save_atomically`; a
group of files through a scratch folder), and a failed write is one :class:`RunWriteError`
line naming the file and how to go on.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.console import one_line
from uno_env.files import PARTIAL_SUFFIX, check_writable_target
from uno_env.folders import NO_SPACE, RunFolder
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules
from unolab.train.checkpoint_files import (
    LATEST,
    PREVIOUS,
    DamagedCheckpointError,
    file_digest,
    has_checkpoint,
    verify_checkpoint,
)
from unolab.train.config import TrainConfig
from unolab.train.export import export_policy, git_commit
from unolab.train.imitate.config import CLONE_NAME

__all__ = [
    "HISTORY_FILE",
    "LEGACY_POLICY_NAME",
    "RunWriteError",
    "append_lines",
    "check_run_dir",
    "policy_path",
    "run_folder",
    "save_checkpoint",
    "save_group",
]

LEGACY_POLICY_NAME = "best_policy"
"""The export's file name before runs named their agent after themselves; still written."""

_OWN_STEMS = frozenset({"best", LATEST, PREVIOUS, "config", "history", LEGACY_POLICY_NAME})
"""File stems of a run folder that an agent named after the run must not take."""

HISTORY_FILE = "history.jsonl"
"""The run's history: one JSON line per setting changed when it was resumed (time, steps,
key, old value, new value)."""

_STAGING = "staging" + PARTIAL_SUFFIX
"""A scratch folder of the run: a group of files is written there, then renamed into the run."""


def policy_path(config: TrainConfig) -> Path:
    """Where the run's best checkpoint is exported, without suffix: named after the run.

    ``<run_dir>/<name>``, unless the name would take one of the run's own files (``best``,
    ``latest``, ``league_slot0``, ...): then ``<run_dir>/best_policy``.
    """
    name = config.name
    if name in _OWN_STEMS or name.startswith("league_slot"):
        name = LEGACY_POLICY_NAME
    return config.run_dir / name


def run_folder(config: TrainConfig) -> RunFolder:
    """The run's folder (``config.run_dir``): its lock, its files, the ways out of a refusal.

    Its files are what a run writes: ``--overwrite`` removes these and leaves anything else
    alone (``evaluations.jsonl`` too: a run started over appends its curve, which must not
    follow the old run's).
    """
    named = ["config.yaml", "tb", "latest.zip", "latest.json", "best.zip", "best.json"]
    named += ["previous.zip", "previous.json", "evaluations.jsonl", HISTORY_FILE]
    if config.imitate is not None:  # the folder of the run's own clone stage
        named.append(CLONE_NAME)
    for stem in dict.fromkeys([LEGACY_POLICY_NAME, policy_path(config).name]):
        named += [f"{stem}.safetensors", f"{stem}.json"]
    named += ["league_slot*.safetensors", "league_slot*.json", f"*{PARTIAL_SUFFIX}"]
    return RunFolder(
        config.run_dir,
        "training run",
        files=named,
        start_over="start it over with --overwrite (removes those files first)",
        resume=f"continue it with --resume {config.run_dir}",
        rename="give the new run another name with --set name=...",
        place="runs_dir",
        relocate="choose another folder with --set runs_dir=...",
        on_write_error=lambda err, path: write_failed(err, path, config.run_dir),
    )


def _check_run_targets(config: TrainConfig, folder: RunFolder) -> None:
    """Refuse to resume a run whose folder holds something other than a regular file where
    the run writes one (a pipe, a folder, a symlink, a device): the run would train, then
    fail at its first write. Nothing is written.

    Raises:
        ConfigError: one line naming each such file and what to do.
    """
    mix = config.opponents
    slots = mix.pool_size if mix.self_play > 0 else 0
    # The run's own files (:func:`run_folder`), its league's slots by number.
    named = [name for name in folder.files if "*" not in name and name not in ("tb", CLONE_NAME)]
    named += [f"league_slot{i}{end}" for i in range(slots) for end in (".safetensors", ".json")]
    bad = []
    for path in (config.run_dir / name for name in named):
        try:
            check_writable_target(path, "run file")
        except OSError:
            bad.append(path)
    logs = config.run_dir / "tb"  # TensorBoard's folder: the run writes into it
    if (logs.exists() or logs.is_symlink()) and not logs.is_dir():
        bad.append(logs)
    if bad:
        shown = ", ".join(str(path) for path in bad)
        verb = "is not a regular file" if len(bad) == 1 else "are not regular files"
        if bad == [logs]:
            verb = "is not a folder"
        raise ConfigError(
            f"cannot resume {config.run_dir}: {shown} {verb}, and the run writes "
            f"{'it' if len(bad) == 1 else 'them'}; remove or rename "
            f"{'it' if len(bad) == 1 else 'them'}, then resume again"
        )


def check_run_dir(config: TrainConfig, resume: bool, overwrite: bool) -> list[Path]:
    """Refuse to train over an existing run by accident; return what ``overwrite`` removes.

    Raises:
        ConfigError: for a run folder path that holds no folder (a run name is a folder of
            its own: the config refuses ``.`` and ``..``).
        FileNotFoundError: to resume a run that has no checkpoint (``latest.zip`` or
            ``previous.zip``).
        RunExistsError: for a new run in a folder that holds one, without ``overwrite``.
    """
    run_dir = config.run_dir
    folder = run_folder(config)
    folder.check_place()
    if resume:
        _check_run_targets(config, folder)
        if not has_checkpoint(run_dir):
            raise FileNotFoundError(
                f"cannot resume: {run_dir / 'latest.zip'} does not exist (a run writes it at "
                "its first evaluation, or when stopped with Ctrl-C): the run stopped before it "
                "saved anything; start it again with --overwrite"
            )
        return []
    return folder.check_new(overwrite)


class RunWriteError(OSError):
    """A file of the run could not be written; the message (its ``strerror``) is one line
    naming the file and how to go on."""


def write_failed(err: OSError, path: Path, run_dir: Path) -> RunWriteError:
    """A failed write as one line: the file, the reason, and how to go on.

    The run can continue from ``latest.zip`` when one was written (each file is replaced
    whole, so it is the last good checkpoint); without one it starts over.
    """
    if isinstance(err, RunWriteError):
        return err
    code = err.errno or errno.EIO
    reason = err.strerror or one_line(err)
    if has_checkpoint(run_dir):
        hint = f"free space and continue from the last checkpoint with --resume {run_dir}"
    else:
        hint = f"free space and start the run again with --overwrite (no checkpoint in {run_dir})"
    if code not in NO_SPACE:
        hint = hint.replace("free space", "make the folder writable")
    return RunWriteError(code, f"cannot write {path}: {reason[:1].lower()}{reason[1:]}; {hint}")


def save_group(
    write: Callable[[Path], Any],
    run_dir: Path,
    files: str,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """``write(folder)`` into a scratch folder of the run, then rename each file it wrote
    into the run: a failure (a full disk) leaves every file of the run whole.

    Args:
        write: Writes the files into the folder it is given.
        run_dir: The run's folder.
        files: The files written, as a message names them when the error does not
            (``"league_slot*.safetensors"``).
        before_replace: Called once every file is written and flushed, just before they
            are renamed into the run (to keep the files they replace under other names).

    Raises:
        RunWriteError: one line naming the file (an OSError).
    """
    staging = run_dir / _STAGING
    try:
        RunFolder.remove([staging])
        staging.mkdir()
        write(staging)
        # A record (.json) goes into place after the file it describes (its checksum).
        written = sorted(staging.iterdir(), key=lambda path: (path.suffix == ".json", path.name))
        for path in written:
            with open(path, "rb") as stream:  # flushed before it replaces the old file
                os.fsync(stream.fileno())
            check_writable_target(run_dir / path.name, "run file")
        if before_replace is not None:
            before_replace()
        for path in written:
            os.replace(path, run_dir / path.name)
    except OSError as err:
        name = getattr(err, "filename", None)
        where = run_dir / (Path(name).name if name else files)
        raise write_failed(err, where, run_dir) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def append_lines(path: Path, lines: Sequence[str], run_dir: Path) -> None:
    """Append lines to one of the run's logs (``evaluations.jsonl``, ``history.jsonl``).

    Raises:
        RunWriteError: one line naming the file (an OSError), also when the path is not a
            regular file (a pipe would block the run, a device swallow the lines).
    """
    try:
        check_writable_target(path, "run log")
        with open(path, "a+b") as log:
            # A log cut short after its last line (a crash, an edit) gets its line break
            # first: the new line must not be glued to it.
            start = b""
            if log.seek(0, os.SEEK_END) > 0:
                log.seek(-1, os.SEEK_END)
                start = b"" if log.read(1) == b"\n" else b"\n"
            log.write(start + "".join(f"{line}\n" for line in lines).encode("utf-8"))
    except OSError as err:
        raise write_failed(err, path, run_dir) from None


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
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

    The zip and its record (with the zip's SHA-256) are written into the run's scratch
    folder and flushed first (:func:`save_group`); then, for ``latest``, a good ``latest``
    becomes ``previous`` (a damaged one is dropped, never kept as the fallback), and the new
    pair is renamed into place: a crash or a full disk leaves a good checkpoint to resume
    from. The export of ``best`` is named after the run (:func:`policy_path`) and copied to
    ``best_policy.*``, the name older scripts read. Every file is replaced whole.

    Raises:
        RunWriteError: (an OSError) one line naming the file that could not be written.
    """
    run_dir = config.run_dir
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

    def write(folder: Path) -> None:
        model.save(folder / f"{tag}.zip")
        record = {**meta, "sha256": file_digest(folder / f"{tag}.zip")}
        (folder / f"{tag}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")

    def keep_previous() -> None:
        if tag != LATEST:
            return
        with contextlib.suppress(DamagedCheckpointError):  # checked good (its checksum) first
            verify_checkpoint(run_dir, LATEST)
            for suffix in (".zip", ".json"):
                check_writable_target(run_dir / f"{PREVIOUS}{suffix}", "checkpoint")
                os.replace(run_dir / f"{LATEST}{suffix}", run_dir / f"{PREVIOUS}{suffix}")

    save_group(write, run_dir, f"{tag}.zip", keep_previous)
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

        save_group(export, run_dir, f"{stem.name}.safetensors")
