"""Resuming a training run, as a contract: the same run, or a one-line refusal.

A resumed run continues the model of its newest good checkpoint
(:func:`~unolab.train.checkpoint_files.checkpoint_to_resume`: ``latest.zip``, else
``previous.zip`` with a warning). The config it resumes with (the run's ``config.yaml``
and any ``--set``) is compared key by key with the config that checkpoint was trained with
(recorded in its ``.json``), and with the rules it was played under:

* a key of :data:`SAFE_ON_RESUME` may change: it changes neither the model nor the data it
  learns from. Each change is appended to the run's ``history.jsonl`` (time, steps, key,
  old value, new value) and ``config.yaml`` then holds the new value;
* the run's folder (``name``, ``runs_dir``) is where ``--resume`` points: ``config.yaml``
  says where the run is now, and the history records settings only;
* every other key is fixed for the life of the run (:data:`FIXED_ON_RESUME` says why,
  key by key or by section): a change is refused in one line naming the key, the saved
  value and the new one, and nothing is written.

``total_steps`` must also be more than the steps the checkpoint has done.

The model is rebuilt from the config and given the checkpoint's tensors and counters
(:func:`~unolab.train.checkpoint_state.restore_checkpoint`): nothing in the run folder is
unpickled, so no code runs from it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, TextIO

from stable_baselines3.common.vec_env import VecEnv

from uno_env.config_values import ConfigError
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules, load_rules
from unolab.train.algorithms import ALGORITHMS
from unolab.train.checkpoint_files import (
    Checkpoint,
    DamagedCheckpointError,
    checkpoint_to_resume,
    parse_json,
)
from unolab.train.checkpoint_state import restore_checkpoint
from unolab.train.config import TrainConfig, load_config
from unolab.train.run_folder import HISTORY_FILE, append_lines

__all__ = [
    "FIXED_ON_RESUME",
    "RUN_FOLDER_KEYS",
    "SAFE_ON_RESUME",
    "Change",
    "ResumeRefusedError",
    "ResumedRun",
    "config_changes",
    "read_history",
    "record_history",
    "refuse_fixed",
    "resume_model",
    "why_fixed",
]

SAFE_ON_RESUME: frozenset[str] = frozenset(
    {
        "total_steps",  # the step budget (above the steps done)
        "eval.every",  # the evaluation cadence, and with it the checkpoints'
        "eval.games",  # the games of each evaluation
        "torch_threads",  # the speed of the same computation
        "device",  # where the same computation runs
    }
)
"""The config keys a resumed run may change: none of them changes the model or the data it
learns from. Every other key is fixed for the life of a run."""

RUN_FOLDER_KEYS: frozenset[str] = frozenset({"name", "runs_dir"})
"""Where the run is: taken from the folder resumed, not a setting of the run."""

FIXED_ON_RESUME: Mapping[str, str] = MappingProxyType(
    {
        "algorithm": "the checkpoint is a model of it",
        "rules": "the data was played under these rules",
        "num_players": "the data was played at this table size",
        "num_envs": "the games stepped together shape the PPO rollout and the DQN replay rows",
        "seed": "it seeds the run's games, opponents and network",
        "num_workers": "the games are dealt per worker's shard: another count deals others",
        "learner_seat": "the learner's data comes from this seat",
        "opponents": "the opponents are who the learner's data is played against",
        "eval.bots": "the first one picks best.zip, and best.json's score is against it",
        # an algorithm's section (ppo: every ppo.* key), as its registry entry says
        **{name: algorithm.fixed_settings for name, algorithm in ALGORITHMS.items()},
        "init_from": "the network started from it",
        "imitate": "the network started from its clone",
    }
)
"""Why each fixed key (or section: ``ppo`` for every ``ppo.*``) cannot change on resume; an
algorithm's section says it through its registry entry
(:attr:`~unolab.train.algorithms.TrainingAlgorithm.fixed_settings`)."""

_SECTIONS = tuple(
    f.name for f in dataclasses.fields(TrainConfig) if f.default_factory is not dataclasses.MISSING
)
"""The config's sections whose keys are compared one by one (``opponents``, ``eval``, the
algorithms' sections; ``imitate`` is one value)."""


class ResumeRefusedError(ConfigError):
    """A resume that would change a fixed setting, or that has no steps left to train; the
    message is one line naming the key, the saved value and the new one."""


@dataclasses.dataclass(frozen=True)
class Change:
    """A setting changed when a run was resumed.

    Attributes:
        key: The config key (dotted: ``eval.every``; ``rules.<switch>`` for a rule).
        old: The value the checkpoint was trained with.
        new: The value given now.
    """

    key: str
    old: Any
    new: Any


@dataclasses.dataclass(frozen=True)
class ResumedRun:
    """A run ready to continue.

    Attributes:
        model: The model, with the checkpoint's tensors and counters.
        config: The config it continues with (the run folder as saved when unmoved).
        checkpoint: The checkpoint it continues from.
        changes: The safe settings changed (to record in the history).
    """

    model: Any
    config: TrainConfig
    checkpoint: Checkpoint
    changes: tuple[Change, ...]


def _plain(value: Any) -> Any:
    """A value as JSON holds it (tuples as lists): how a checkpoint's record saved it."""
    return json.loads(json.dumps(value, default=str))


def _flat(data: Mapping[str, Any]) -> dict[str, Any]:
    """A config's plain data as one mapping of dotted keys (``ppo.net_arch``), the rules
    (compared as the rules they build) left out."""
    flat = {key: value for key, value in data.items() if key not in ("rules", "num_players")}
    for section in _SECTIONS:
        if isinstance(flat.get(section), dict):
            for key, value in flat.pop(section).items():
                flat[f"{section}.{key}"] = value
    return flat


def _defaults() -> dict[str, Any]:
    """Every key's default, as plain data: what a record written before a key existed had."""
    defaults: dict[str, Any] = {}
    for field in dataclasses.fields(TrainConfig):
        if field.default is not dataclasses.MISSING:
            defaults[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = dataclasses.asdict(field.default_factory())
    return _flat(_plain(defaults))


def config_changes(
    saved: TrainConfig | Mapping[str, Any],
    new: TrainConfig,
    saved_rules: Mapping[str, Any] | None = None,
) -> list[Change]:
    """The settings ``new`` changes from ``saved``, in the config's order.

    The rules are compared as the rules they build (a preset named, or a YAML file of the
    same rules, is the same rules): ``rules.<switch>`` for a rule, ``num_players`` for the
    table size. A key that ``saved`` lacks (a record written before the key existed) has
    its default.

    Args:
        saved: The config a checkpoint was trained with, or its plain data (its record's
            ``config``: compared as saved, without loading the files it names).
        new: The config given to resume it.
        saved_rules: The rules the checkpoint was played under (its record's ``rules``);
            default: the rules ``saved`` builds now.
    """
    if isinstance(saved, TrainConfig):
        saved = saved.to_dict()
    if saved_rules is None:  # the rules the saved config builds
        saved_rules = load_rules(saved.get("rules"), num_players=saved.get("num_players")).to_dict()
    # A switch added since the record was written has its default (the official rules').
    old_rules = {**Rules().to_dict(), **_plain(dict(saved_rules))}
    new_rules = _plain(new.build_rules().to_dict())
    changes = [
        Change("num_players" if key == "num_players" else f"rules.{key}", old_rules.get(key), value)
        for key, value in new_rules.items()
        if old_rules.get(key) != value
    ]
    old = {**_defaults(), **_flat(_plain(dict(saved)))}
    given = _flat(_plain(new.to_dict()))
    changes += [
        Change(key, old.get(key), value) for key, value in given.items() if old.get(key) != value
    ]
    return changes


def why_fixed(key: str) -> str | None:
    """Why ``key`` cannot change on resume, or None for a safe key (or the run's folder)."""
    if key in SAFE_ON_RESUME or key in RUN_FOLDER_KEYS:
        return None
    section = key.partition(".")[0]
    algorithm = ALGORITHMS.get(section)
    return (
        FIXED_ON_RESUME.get(key)
        or FIXED_ON_RESUME.get(section)
        or (algorithm.fixed_settings if algorithm is not None else "the run depends on it")
    )


def refuse_fixed(run_dir: Path, changes: Sequence[Change]) -> None:
    """Refuse a resume that changes a fixed setting (:func:`why_fixed`).

    Raises:
        ResumeRefusedError: one line naming each fixed key changed, its saved value, the
            new one and why it is fixed.
    """
    refused = [(c, why) for c in changes if (why := why_fixed(c.key)) is not None]
    if refused:
        shown = "; ".join(
            f"{c.key} is {_shown(c.old)} in the run, {_shown(c.new)} given ({why})"
            for c, why in refused
        )
        raise ResumeRefusedError(
            f"cannot resume {run_dir}: {shown}. A resumed run may change only "
            f"{', '.join(sorted(SAFE_ON_RESUME))}; to train with other settings, start a new "
            "run under another name (--set name=...)"
        )


def _shown(value: Any) -> str:
    """A value on one line, as JSON writes it (``[32, 32]``, ``"official"``, ``null``)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _saved_config(checkpoint: Checkpoint, run_dir: Path) -> dict[str, Any]:
    """The config a checkpoint was trained with, as plain data: its record's (the run's
    ``config.yaml`` for a record written before records held it).

    Raises:
        DamagedCheckpointError: the record's config is not a mapping.
    """
    data = checkpoint.record.get("config")
    if data is None:
        return load_config(run_dir / "config.yaml", check_init_from=False).to_dict()
    if not isinstance(data, dict):
        raise DamagedCheckpointError(
            f"{checkpoint.path.with_suffix('.json')}: its config is not a mapping"
        )
    return data


def _check(checkpoint: Checkpoint, saved: Mapping[str, Any], new: TrainConfig) -> list[Change]:
    """The safe changes of a resume; a fixed one, or no steps left, is refused.

    Raises:
        ResumeRefusedError: one line naming each key refused, its saved value and the new
            one (or the steps done and the budget).
    """
    run_dir = new.run_dir
    version = checkpoint.record.get("obs_version", OBS_VERSION)
    if version != OBS_VERSION:
        raise ResumeRefusedError(
            f"cannot resume {run_dir}: its checkpoint was trained on observations of version "
            f"{_shown(version)}, this lab encodes version {OBS_VERSION}: start a new run"
        )
    rules = checkpoint.record.get("rules")
    changes = config_changes(saved, new, rules if isinstance(rules, dict) else None)
    changes = [c for c in changes if c.key not in RUN_FOLDER_KEYS]
    refuse_fixed(run_dir, changes)
    if new.total_steps <= checkpoint.steps:
        raise ResumeRefusedError(
            f"cannot resume {run_dir}: run {new.name} has done {checkpoint.steps:,} steps; "
            f"total_steps={new.total_steps} is not more: raise total_steps to resume "
            f"(e.g. --set total_steps={2 * max(checkpoint.steps, 1)})"
        )
    return changes


def resume_model(config: TrainConfig, env: VecEnv, log: TextIO | None = None) -> ResumedRun:
    """The model of the run in ``config.run_dir``, checked against ``config``.

    Writes nothing: the caller records the changes (:func:`record_history`) once the run
    has started.

    Args:
        config: The config to resume with.
        env: The env the model trains on.
        log: Where a checkpoint skipped as damaged is reported (None: stderr).

    Raises:
        ResumeRefusedError: a fixed setting changed, or ``total_steps`` is not above the
            steps done (one line, naming the key and both values).
        DamagedCheckpointError: no checkpoint is good (one line naming each file).
    """
    run_dir = config.run_dir

    def use(checkpoint: Checkpoint) -> tuple[Any, TrainConfig, tuple[Change, ...]]:
        saved = _saved_config(checkpoint, run_dir)
        changes = _check(checkpoint, saved, config)
        resumed = config
        name, runs_dir = saved.get("name"), saved.get("runs_dir")
        if isinstance(name, str) and isinstance(runs_dir, str):  # the folder as the run spells it
            same = os.path.abspath(Path(runs_dir) / name) == os.path.abspath(run_dir)
            resumed = dataclasses.replace(config, name=name, runs_dir=runs_dir) if same else config
        model = restore_checkpoint(checkpoint.path, env, resumed)
        if int(model.num_timesteps) != checkpoint.steps:
            raise DamagedCheckpointError(
                f"{checkpoint.path} holds {int(model.num_timesteps):,} steps, its record "
                f"{checkpoint.steps:,}"
            )
        return model, resumed, tuple(changes)

    warn = functools.partial(print, file=log if log is not None else sys.stderr, flush=True)
    checkpoint, (model, resumed, changes) = checkpoint_to_resume(run_dir, use, warn)
    return ResumedRun(model, resumed, checkpoint, changes)


def record_history(run_dir: Path, steps: int, changes: tuple[Change, ...] | list[Change]) -> None:
    """Append each change to the run's ``history.jsonl``: time, steps, key, old, new.

    Raises:
        RunWriteError: one line naming the file (an OSError).
    """
    if not changes:
        return
    when = datetime.now(UTC).isoformat(timespec="seconds")
    lines = [
        json.dumps({"time": when, "steps": steps, "key": c.key, "old": c.old, "new": c.new})
        for c in changes
    ]
    append_lines(Path(run_dir) / HISTORY_FILE, lines, Path(run_dir))


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    """The run's history: one mapping per change recorded (empty when none was).

    Raises:
        UnreadableFileError: one line naming the file and the line that is not JSON.
    """
    path = Path(run_dir) / HISTORY_FILE
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [parse_json(line, f"{path} line {n}") for n, line in enumerate(lines, 1) if line]
