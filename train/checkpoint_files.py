"""A run's checkpoint files: which ones it keeps, their checksums, and which one is good.

A checkpoint is a pair of files in the run folder: ``<tag>.zip`` (SB3's format: the network
and optimiser tensors, the counters) and ``<tag>.json``, its record (the steps, the
evaluations, the config it was trained with, and the SHA-256 of the zip). A run keeps two
checkpoints to resume from: ``latest`` and ``previous``, the one before it, which a new
``latest`` replaces only once the old one is checked good. ``best`` is the best-scoring one.

A checkpoint is good when its record can be read and the zip's SHA-256 is the one recorded
(a record written before checksums were recorded: when every member of the zip passes
its CRC check). A truncated, bit-flipped, empty or foreign file is damaged, and resuming
falls back to ``previous`` (:func:`checkpoint_to_resume`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.files import UnreadableFileError, read_regular_text, shown
from uno_env.folders import MAX_RECORD_BYTES
from unolab.agents.agent_files import RepeatedKeyError, is_json_int, unique_keys
from unolab.train.config_limits import MAX_STEPS

__all__ = [
    "CHECKPOINT_MEMBERS",
    "LATEST",
    "PREVIOUS",
    "RESUME_TAGS",
    "ZIP_READ_ERRORS",
    "Checkpoint",
    "DamagedCheckpointError",
    "checkpoint_to_resume",
    "file_digest",
    "has_checkpoint",
    "parse_json",
    "read_json",
    "verify_checkpoint",
]

LATEST = "latest"
"""The newest checkpoint of a run."""
PREVIOUS = "previous"
"""The checkpoint before ``latest``: what a run resumes from when ``latest`` is damaged."""
RESUME_TAGS = (LATEST, PREVIOUS)
"""The checkpoints a run resumes from, in the order they are tried."""

CHECKPOINT_MEMBERS = ("data", "policy.pth", "policy.optimizer.pth")
"""The members of an SB3 checkpoint zip that resuming reads."""

ZIP_READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    NotImplementedError,  # a member compressed by a method zipfile cannot read
    EOFError,
    OSError,
    ValueError,
    KeyError,  # a member missing (numpy's archives)
)
"""What reading a damaged, truncated or foreign zip raises (zipfile, zlib, numpy's ``.npz``
reader): a checkpoint's, a demonstrations file's."""


class DamagedCheckpointError(ValueError):
    """A checkpoint that cannot be trusted (truncated, bit-flipped, empty, not a zip, its
    record missing or unreadable); the message is one line naming the file and why."""


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint checked good.

    Attributes:
        tag: ``latest``, ``previous`` or ``best``.
        path: Its zip.
        record: Its record (``<tag>.json``): steps, evaluations, config, rules, ``sha256``.
    """

    tag: str
    path: Path
    record: dict[str, Any]

    @property
    def steps(self) -> int:
        """The learner steps the checkpoint was saved at."""
        return int(self.record["steps"])


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, in hex (read in chunks: a checkpoint may be large)."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def has_checkpoint(run_dir: Path) -> bool:
    """Whether the run folder holds a checkpoint to resume from (good or not)."""
    return any((Path(run_dir) / f"{tag}.zip").is_file() for tag in RESUME_TAGS)


def parse_json(text: str | bytes, where: str) -> Any:
    """The JSON value of ``text`` (a run's file, or one line of its log), checked.

    Args:
        text: The JSON text.
        where: What the message names (``runs/x/best.json``, ``runs/x/history.jsonl line 3``).

    Raises:
        UnreadableFileError: one line naming ``where`` and what is wrong, in words: not
            JSON (the parser's reason, line and column), nested too deeply to read, not
            UTF-8, or an object that gives a key twice.
    """
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKeyError as err:
        raise UnreadableFileError(f"{where} is not valid: {err}") from None
    except RecursionError:
        raise UnreadableFileError(f"{where} is not JSON: it is nested too deeply to read") from None
    except json.JSONDecodeError as err:
        raise UnreadableFileError(
            f"{where} is not JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except UnicodeDecodeError:
        raise UnreadableFileError(f"{where} is not JSON: it is not UTF-8 text") from None
    except ValueError as err:  # a number of more digits than Python reads
        detail = " ".join(str(err).split())[:160]
        raise UnreadableFileError(f"{where} is not JSON: {detail}") from None


def read_json(path: Path, what: str = "run file", limit: int = MAX_RECORD_BYTES) -> Any:
    """The JSON value of one of a run's files (a checkpoint record, ``best.json``).

    Raises:
        UnreadableFileError: one line naming the file: missing, not a regular file, too
            large, not UTF-8, not JSON or nested too deeply (:func:`parse_json`).
    """
    return parse_json(read_regular_text(path, limit, what), str(path))


def _read_record(path: Path) -> dict[str, Any]:
    """A checkpoint record: a JSON object whose ``steps`` is a count."""
    try:
        record = read_json(path, "checkpoint record")
    except UnreadableFileError as err:
        raise DamagedCheckpointError(str(err)) from None
    if not isinstance(record, dict):
        raise DamagedCheckpointError(f"{path} is not a JSON object")
    # Each value the resume acts on is checked here: a value out of its bounds or of the
    # wrong type is damage (the fallback is tried), never a budget or a version to obey.
    steps: Any = record.get("steps")
    if not is_json_int(steps) or not 0 <= steps <= MAX_STEPS:
        raise DamagedCheckpointError(
            f"{path}: steps is {shown(steps)}, not a count of steps from 0 to {MAX_STEPS:,}"
        )
    version = record.get("obs_version", 1)  # a record written before versions were recorded
    if not is_json_int(version) or version < 1:
        raise DamagedCheckpointError(
            f"{path}: obs_version is {shown(version)}, not an observation version (a positive "
            "integer)"
        )
    digest = record.get("sha256")
    if digest is not None and not isinstance(digest, str):
        raise DamagedCheckpointError(f"{path}: sha256 is {shown(digest)}, not a hex digest")
    return record


def verify_checkpoint(run_dir: Path, tag: str) -> Checkpoint:
    """Check the checkpoint ``<run_dir>/<tag>.zip`` before trusting it.

    Raises:
        DamagedCheckpointError: one line naming the file and what is wrong: missing, not a
            regular file, empty, its record missing or unreadable, a checksum that does not
            match, not a zip, a member missing or failing its CRC check.
    """
    path = Path(run_dir) / f"{tag}.zip"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DamagedCheckpointError(f"{path} does not exist") from None
    except OSError as err:
        raise DamagedCheckpointError(f"{path} cannot be read ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise DamagedCheckpointError(f"{path} is not a regular file")
    if info.st_size == 0:
        raise DamagedCheckpointError(f"{path} is empty")
    record_path = path.with_suffix(".json")
    if not record_path.exists():
        raise DamagedCheckpointError(f"{path} has no record {record_path.name} beside it")
    record = _read_record(record_path)
    recorded = record.get("sha256")
    try:
        if recorded and file_digest(path) != recorded:
            raise DamagedCheckpointError(
                f"{path} does not match the SHA-256 recorded in {record_path.name} (the file "
                "was damaged or changed after it was written)"
            )
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            missing = [name for name in CHECKPOINT_MEMBERS if name not in names]
            if missing:
                raise DamagedCheckpointError(
                    f"{path} is not a checkpoint of the lab (no {', '.join(missing)} in it)"
                )
            # A record without a checksum (an older run): every member's CRC instead.
            bad = None if recorded else archive.testzip()
    except DamagedCheckpointError:
        raise
    except ZIP_READ_ERRORS as err:
        raise DamagedCheckpointError(f"{path} is not a readable zip ({err})") from None
    if bad is not None:
        raise DamagedCheckpointError(f"{path}: {bad} fails its CRC check (the file is damaged)")
    return Checkpoint(tag, path, record)


def checkpoint_to_resume(
    run_dir: Path,
    use: Callable[[Checkpoint], Any],
    warn: Callable[[str], None],
) -> tuple[Checkpoint, Any]:
    """The newest good checkpoint of a run, and what ``use`` made of it.

    ``latest`` is tried first, then ``previous``; a checkpoint is skipped when it is
    damaged, or when ``use`` raises :class:`DamagedCheckpointError` (its tensors cannot be
    loaded). Once a checkpoint is good, ``warn`` is told of each one skipped, in one line;
    when none is good, the error alone names each file (no warning precedes it). Any other
    error of ``use`` (a config that does not match) is raised at once.

    Args:
        run_dir: The run's folder.
        use: Loads a good checkpoint (the model to train on).
        warn: Told, in one line, of each checkpoint skipped for the one resumed from.

    Raises:
        DamagedCheckpointError: no checkpoint is good; the message names each file and why.
    """
    problems: list[str] = []
    for tag in RESUME_TAGS:
        if tag != LATEST and not (Path(run_dir) / f"{tag}.zip").exists():
            continue
        try:
            checkpoint = verify_checkpoint(run_dir, tag)
            result = use(checkpoint)
        except DamagedCheckpointError as err:
            problems.append(str(err))
            continue
        for problem in problems:  # the ones skipped: latest, when previous is resumed from
            warn(f"warning: {problem}; trying {checkpoint.path}")
        return checkpoint, result
    raise DamagedCheckpointError(
        f"cannot resume: {'; '.join(problems)}; no good checkpoint is left: start over with "
        "--overwrite"
    )
