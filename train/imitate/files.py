"""Recorded demonstrations on disk: keep an expensive recording, train on several.

Recording a search teacher takes an hour per few hundred thousand decisions, fitting a clone
on them a minute. An imitation run with ``keep_demonstrations: true`` writes what it recorded
to ``runs/<name>/demonstrations.npz``; a later run lists such files under ``include`` and
trains on them together with what it records itself (``samples: 0`` records nothing), so a
recording can be extended by parallel runs, or refitted with other settings, without
searching again.

The file is a compressed NumPy archive (no pickle): the arrays of
:class:`~unolab.train.imitate.data.Demonstrations` and a JSON header with the format, the
observation version and the rules they were recorded under. :func:`load_demonstrations`
refuses a file of another observation version or other rules, naming the file and both
sides.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.files import save_atomically
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.train.checkpoint_files import ZIP_READ_ERRORS
from unolab.train.imitate.data import Demonstrations

__all__ = [
    "DEMONSTRATIONS_FILE",
    "DemonstrationFileError",
    "concat_demonstrations",
    "load_demonstrations",
    "save_demonstrations",
]

DEMONSTRATIONS_FILE = "demonstrations.npz"
"""The name of a run's kept recording, in its run folder."""
_FORMAT = 1
_ARRAYS = ("observations", "masks", "actions", "phases", "teachers", "games")


class DemonstrationFileError(ValueError):
    """A demonstrations file that cannot be used: unreadable, or of other rules or version."""


def save_demonstrations(path: str | Path, demos: Demonstrations, rules: Rules) -> Path:
    """Write ``demos`` to ``path`` (``.npz``), atomically: a crash leaves no half file.

    Args:
        path: The file to write (its folder must exist).
        demos: The recorded decisions.
        rules: The rules they were recorded under (checked when the file is loaded).

    Returns:
        The path written.
    """
    target = Path(path)
    header = {
        "format": _FORMAT,
        "obs_version": OBS_VERSION,
        "rules": rules.to_dict(),
        "teacher_names": list(demos.teacher_names),
        "num_games": demos.num_games,
        "forced": demos.forced,
        "seconds": demos.seconds,
    }
    arrays: dict[str, Any] = {name: getattr(demos, name) for name in _ARRAYS}
    if demos.values is not None:
        arrays["values"] = demos.values
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)

    def write(tmp: Path) -> None:
        with tmp.open("wb") as handle:
            np.savez_compressed(handle, **arrays)

    save_atomically(target, write)
    return target


def load_demonstrations(path: str | Path, rules: Rules) -> Demonstrations:
    """Read a file written by :func:`save_demonstrations`, checked against ``rules``.

    Raises:
        FileNotFoundError: naming a missing file.
        DemonstrationFileError: for a file that is not such a recording, or was recorded
            under another observation version or other rules (naming the first difference).
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"demonstrations file {str(source)!r} does not exist")
    try:
        with np.load(source, allow_pickle=False) as archive:
            header = json.loads(bytes(archive["header"]).decode())
            arrays = {name: archive[name] for name in _ARRAYS}
            values = archive["values"] if "values" in archive.files else None
    except ZIP_READ_ERRORS as err:
        raise DemonstrationFileError(
            f"{source}: not a demonstrations file written by uno-lab train imitate ({err})"
        ) from err
    if header.get("format") != _FORMAT:
        raise DemonstrationFileError(
            f"{source}: demonstrations format {header.get('format')!r}, this lab reads {_FORMAT}"
        )
    if header.get("obs_version") != OBS_VERSION:
        raise DemonstrationFileError(
            f"{source}: recorded under observation version {header.get('obs_version')}, this "
            f"lab encodes version {OBS_VERSION}; record it again"
        )
    wanted = rules.to_dict()
    recorded = header.get("rules", {})
    different = sorted(k for k in set(wanted) | set(recorded) if wanted.get(k) != recorded.get(k))
    if different:
        key = different[0]
        raise DemonstrationFileError(
            f"{source}: recorded under other rules ({key}: {recorded.get(key)!r}, this run "
            f"plays {wanted.get(key)!r}); include only recordings of the run's rules"
        )
    n = arrays["actions"].shape[0]
    if arrays["observations"].shape != (n, OBS_DIM) or (
        values is not None and values.shape[0] != n
    ):
        raise DemonstrationFileError(f"{source}: arrays of inconsistent shapes")
    return Demonstrations(
        observations=arrays["observations"].astype(np.float32, copy=False),
        masks=arrays["masks"].astype(bool, copy=False),
        actions=arrays["actions"].astype(np.int64, copy=False),
        phases=arrays["phases"].astype(np.int8, copy=False),
        teachers=arrays["teachers"].astype(np.int16, copy=False),
        games=arrays["games"].astype(np.int64, copy=False),
        teacher_names=tuple(header["teacher_names"]),
        num_games=int(header["num_games"]),
        forced=int(header["forced"]),
        seconds=float(header["seconds"]),
        values=None if values is None else values.astype(np.float16, copy=False),
    )


def concat_demonstrations(parts: Sequence[Demonstrations]) -> Demonstrations:
    """One recording of several: games renumbered apart, teachers merged by name.

    A part without estimates (a bot teacher) contributes NaN rows when another part has
    them. The seconds add up (recording time spent in all).
    """
    if not parts:
        raise ValueError("concat_demonstrations: no recording given")
    if len(parts) == 1:
        return parts[0]
    names: list[str] = []
    for part in parts:
        names += [n for n in part.teacher_names if n not in names]
    teachers, games, values = [], [], []
    offset = 0
    with_values = any(p.values is not None for p in parts)
    for part in parts:
        index = np.array([names.index(n) for n in part.teacher_names], dtype=np.int16)
        teachers.append(index[part.teachers] if index.size else part.teachers)
        games.append(part.games + offset)
        offset += part.num_games
        if with_values:
            values.append(
                part.values
                if part.values is not None
                else np.full(part.masks.shape, np.nan, dtype=np.float16)
            )
    return Demonstrations(
        observations=np.concatenate([p.observations for p in parts]),
        masks=np.concatenate([p.masks for p in parts]),
        actions=np.concatenate([p.actions for p in parts]),
        phases=np.concatenate([p.phases for p in parts]),
        teachers=np.concatenate(teachers),
        games=np.concatenate(games),
        teacher_names=tuple(names),
        num_games=offset,
        forced=sum(p.forced for p in parts),
        seconds=sum(p.seconds for p in parts),
        values=np.concatenate(values) if with_values else None,
    )
