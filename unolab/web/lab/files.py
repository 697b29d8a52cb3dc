"""Finding the runs of the Lab tab under the runs folder, and reading their files confined.

A run folder is data that anyone with write access to the runs folder may have shaped: a
symbolic link out of it, a FIFO named ``summary.json``, a tree of a million folders. The
walk here is bounded (:data:`MAX_DEPTH` levels, :data:`MAX_FOLDERS` folders), follows no
symbolic link to a folder, and a run's file counts only if it is a regular file that lies,
every link followed, inside its run folder and the runs folder. Every message names a file
by its path relative to the runs folder, never by its path on the server.
"""

from __future__ import annotations

import math
import os
import unicodedata
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.rules import PRESETS, Rules
from unolab.web.guard import Invalid, inside, is_regular, parse_json, read_bytes

__all__ = [
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_FOLDERS",
    "MAX_ID_CHARS",
    "REPLAY_FILES",
    "TOURNAMENT_FILE",
    "TRAINING_CONFIG",
    "TRAINING_FILES",
    "Found",
    "RunFiles",
    "find_runs",
    "integer",
    "nameable",
    "rate",
    "real",
    "rules_name",
]

MAX_DEPTH = 4
"""How deep under the runs folder a run folder may sit (``runs/tournaments/<name>`` is 2)."""

MAX_ID_CHARS = MAX_DEPTH * 256
"""The longest run id: :data:`MAX_DEPTH` folder names of at most 255 characters (the most a
common file system allows) and the ``/`` between them. A run whose id is longer (a file
system of longer names) is not listed, as its id would not be accepted."""

MAX_FOLDERS = 500
"""Most folders the walk looks into; a runs folder larger than this is listed in part."""

MAX_ENTRIES = 100_000
"""Most folder entries the walk reads in all (a folder of saved games holds many files)."""

TOURNAMENT_FILE = "summary.json"
"""What marks a tournament run: ``unolab.tournament`` writes it when a run's games are in."""

TRAINING_CONFIG = "config.yaml"
"""Written by a training run when it starts (``unolab.train.run``)."""

TRAINING_FILES = ("evaluations.jsonl", "latest.json", "best.json")
"""Written by a training run at each evaluation; with :data:`TRAINING_CONFIG`, one of them
marks a training run (an imitation run writes ``config.yaml`` but none of these)."""

REPLAY_FILES = ("games.jsonl", "config.json")
"""Written by a tournament run as it plays: its games and the config that rebuilds them
(what the replay tab needs to play a game again)."""

_SKIPPED = frozenset({"tb", "web_games", "__pycache__"})
"""Folders that hold no run and can hold many entries (TensorBoard logs, saved web games)."""


@dataclass(frozen=True)
class RunFiles:
    """One run folder, its files read with bounds and confined to it.

    Attributes:
        root: The runs folder.
        folder: The run folder (under ``root``).
        run_id: The folder relative to ``root``, ``/``-separated: how messages name it.
    """

    root: Path
    folder: Path
    run_id: str

    def shown(self, name: str) -> str:
        """How a message names the run's file ``name`` (relative to the runs folder)."""
        return f"{self.run_id}/{name}"

    def has(self, name: str) -> bool:
        """Whether ``name`` is a regular file inside the run folder and the runs folder."""
        path = self.folder / name
        return is_regular(path) and inside(path, self.folder) and inside(path, self.root)

    def modified(self, name: str) -> float:
        """When ``name`` was last written (seconds since the epoch; 0 if unknown)."""
        try:
            return os.stat(self.folder / name).st_mtime
        except (OSError, ValueError):
            return 0.0

    def read(self, name: str, what: str, limit: int) -> bytes:
        """The bytes of the run's file ``name``, at most ``limit`` of them.

        Raises:
            Invalid: one line naming the file relative to the runs folder, for a file that
                is missing, not regular, outside the run folder or too large.
        """
        if not self.has(name):
            # Said the same way whether it is missing, a pipe or a link elsewhere: the
            # server tells nothing about what lies outside the runs folder.
            raise Invalid(f"{what} {self.shown(name)!r} is not a regular file in its run folder")
        return read_bytes(self.folder / name, limit, what, self.shown(name))

    def json(self, name: str, what: str, limit: int) -> Any:
        """The run's JSON file ``name``, parsed (see :meth:`read`).

        Raises:
            Invalid: one line naming the file, also for text that is not JSON.
        """
        return parse_json(self.read(name, what, limit), self.shown(name))

    def files(self, suffix: str, limit: int) -> list[str]:
        """The names of the regular files of the run folder (not below it) ending in
        ``suffix``, sorted; at most ``limit`` of them. A name that is no text
        (:func:`nameable`) is passed over: it could be neither sent nor asked for."""
        try:
            with os.scandir(self.folder) as entries:
                names = sorted(
                    e.name for e in entries if e.name.endswith(suffix) and nameable(e.name)
                )
        except OSError:
            return []
        return [name for name in names if self.has(name)][:limit]


@dataclass(frozen=True)
class Found:
    """The runs under the runs folder, by id (the folder relative to it).

    Attributes:
        tournaments: Tournament runs (holding :data:`TOURNAMENT_FILE`).
        training: Training runs (holding :data:`TRAINING_CONFIG` and one of
            :data:`TRAINING_FILES`).
        replayable: Tournament runs whose games can be replayed (holding
            :data:`REPLAY_FILES`), finished or still playing.
    """

    tournaments: dict[str, RunFiles]
    training: dict[str, RunFiles]
    replayable: dict[str, RunFiles]


def find_runs(root: Path) -> Found:
    """Walk the runs folder (bounded, breadth first) for tournament and training runs (the
    one walk of the Lab tab and the replay tab).

    A run folder is not looked into further; a symbolic link to a folder is not followed;
    hidden folders and :data:`_SKIPPED` ones are passed over. The walk stops after
    :data:`MAX_FOLDERS` folders or :data:`MAX_ENTRIES` entries read.
    """
    found = Found({}, {}, {})
    root = Path(root)
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    visited = entries_read = 0
    while queue and visited < MAX_FOLDERS and entries_read < MAX_ENTRIES:
        folder, depth = queue.popleft()
        visited += 1
        names: set[str] = set()
        below: list[Path] = []
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    entries_read += 1
                    if entries_read > MAX_ENTRIES:
                        break
                    names.add(entry.name)
                    if (
                        depth < MAX_DEPTH
                        and not entry.name.startswith(".")
                        and entry.name not in _SKIPPED
                        and nameable(entry.name)
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        below.append(Path(entry.path))
        except OSError:  # unreadable, or removed while walked
            continue
        run_id = _run_id(folder, root)
        if (
            depth > 0
            and len(run_id) <= MAX_ID_CHARS
            and _classify(found, RunFiles(root, folder, run_id), names)
        ):
            continue
        queue.extend((child, depth + 1) for child in sorted(below))
    return found


def nameable(name: str) -> bool:
    """Whether a folder's name can be part of a run id: text (UTF-8) without control
    characters. Any other name (bytes the file system holds that are no text, a line break)
    cannot be written in a page's address or shown on one line: such a folder is neither
    listed nor opened."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by Python as lone surrogates
        return False
    return not any(unicodedata.category(char) == "Cc" for char in name)


def _run_id(folder: Path, root: Path) -> str:
    return folder.relative_to(root).as_posix()


def _classify(found: Found, run: RunFiles, names: set[str]) -> bool:
    """File ``run`` under the kinds its files mark; whether it is a run at all."""
    is_run = False
    if all(name in names and run.has(name) for name in REPLAY_FILES):
        found.replayable[run.run_id] = run
        is_run = True
    if TOURNAMENT_FILE in names and run.has(TOURNAMENT_FILE):
        found.tournaments[run.run_id] = run
        is_run = True
    if (
        TRAINING_CONFIG in names
        and run.has(TRAINING_CONFIG)
        and any(name in names and run.has(name) for name in TRAINING_FILES)
    ):
        found.training[run.run_id] = run
        is_run = True
    return is_run


def real(value: Any) -> float | None:
    """``value`` as a finite number, or ``None`` for anything else (``true`` included, and
    a whole number too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # a whole number of hundreds of digits
        return None
    return number if math.isfinite(number) else None


def rate(value: Any) -> float | None:
    """``value`` as a number from 0 to 1 (a win rate, an interval's end), or ``None``."""
    number = real(value)
    return number if number is not None and 0.0 <= number <= 1.0 else None


MAX_COUNT = 2**53 - 1
"""The largest count passed on to the page: a JavaScript number holds every whole number up
to it exactly (a count read from a file may have hundreds of digits)."""


def integer(value: Any) -> int | None:
    """``value`` if it is a whole number from 0 to :data:`MAX_COUNT` (not ``true``/``false``),
    else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


def rules_name(rules: Any) -> str:
    """The preset that rules from a run's file are (``custom`` when none is).

    Args:
        rules: A preset's name, or a mapping of rule switches (a summary's or a
            checkpoint's ``rules``); the table size and engine options do not count.
    """
    if isinstance(rules, str):
        return rules if rules in PRESETS else "custom"  # a YAML file's path says nothing
    if not isinstance(rules, dict):
        return "custom"
    try:
        given = Rules.from_dict(rules).game_rules().to_dict()
    except (ValueError, TypeError, RecursionError):
        return "custom"
    given.pop("num_players", None)
    for name, preset in PRESETS.items():
        switches = preset.game_rules().to_dict()
        switches.pop("num_players", None)
        if switches == given:
            return name
    return "custom"
