"""The training run shared by PPO and DQN: envs, league, evaluation, checkpoints, resume.

Read it top to bottom: :func:`train` builds the batched env and the league, creates (or
resumes) the model of the config's algorithm (through the registry,
:mod:`unolab.train.algorithms`), and calls SB3's ``learn`` with :class:`LabCallback`, which freezes
snapshots into the league, evaluates against bots (win rates with Wilson intervals in
TensorBoard), and writes checkpoints:

``runs/<name>/``
    ``config.yaml`` the run's config; ``latest.zip`` / ``best.zip`` SB3 checkpoints (for
    ``--resume``; they use cloudpickle), ``latest.json`` / ``best.json`` their metadata
    (rules, observation version, algorithm, steps, evaluations, seed, git commit),
    ``<name>.safetensors`` + ``<name>.json`` the pickle-free export of the best checkpoint,
    named after the run (``best_policy.*`` is the same export under its older name), ``tb/``
    the TensorBoard logs, ``league_slot*.safetensors`` the self-play pool.

A run never silently replaces another: training into a folder that already holds a run is
refused unless it resumes (``--resume``) or starts over (``--overwrite``, which first removes
the old run's files). A running run holds the folder's lock (``.lock``,
:class:`uno_env.files.FolderLock`) until it ends, so a second run on the same folder is
refused, naming the first one's pid. Ctrl-C saves ``latest.zip`` and says how to resume.

Every file is written to a temporary name, flushed to disk and renamed over the old one
(a group of files, such as the league or the exported agent, is written into a scratch
folder first and then renamed file by file), so a full disk or a crash leaves each file
whole: the old checkpoint or the new one. A failed write ends the run with one line naming
the file and how to go on (``--resume`` continues from the last checkpoint written).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import shutil
import signal
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

import torch
import yaml
from safetensors import SafetensorError
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

from uno_env.configuration import ConfigError
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.files import (
    PARTIAL_SUFFIX,
    FolderInUseError,
    FolderLock,
    RunFolderLock,
    save_atomically,
    write_atomically,
)
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.arena import EvalResult, evaluate_vs
from unolab.agents.learned import CheckpointMismatchError, load_policy
from unolab.train import algorithms
from unolab.train.algorithms import algorithm_for_model, load_policy_layers
from unolab.train.config import TrainConfig, load_config
from unolab.train.export import export_policy, git_commit, snapshot_policy
from unolab.train.league import League

__all__ = [
    "LEGACY_POLICY_NAME",
    "EvaluationHook",
    "LabCallback",
    "RunExistsError",
    "RunResult",
    "RunWriteError",
    "TrainingInterrupted",
    "evaluate_model",
    "freeze_policy",
    "initialise_from",
    "main",
    "policy_path",
    "resumed_config_path",
    "run_files",
    "train",
]

LEGACY_POLICY_NAME = "best_policy"
"""The export's file name before runs named their agent after themselves; still written."""

_OWN_STEMS = frozenset({"best", "latest", "config", LEGACY_POLICY_NAME})
"""File stems of a run folder that an agent named after the run must not take."""

_PARTIAL = PARTIAL_SUFFIX
"""Suffix of a file being written; renamed over the real name once complete."""

_STAGING = "staging" + _PARTIAL
"""A scratch folder of the run: a group of files is written there, then renamed into the run."""

_START_ERRORS = (ValueError, OSError, FolderInUseError)
"""What a run's start raises for bad input: ConfigError and the other ValueErrors of the lab
(a bad value, a checkpoint that does not fit), FileNotFoundError, RunExistsError, the run
folder in use by another run, ..."""


EvaluationHook = Callable[[int, dict[str, EvalResult]], None]
"""Called after each periodic evaluation with the learner steps and the results per bot."""


class RunExistsError(FileExistsError):
    """The run folder already holds a run: resume it, or start over explicitly."""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``checkpoint`` is what was saved to resume it (None: nothing).

    Attributes:
        run_dir: The run's folder.
        steps: Learner steps done when it stopped.
        checkpoint: The ``latest.zip`` written, or None if it could not be written.
        reason: Why nothing was saved, when nothing was.
    """

    def __init__(
        self, run_dir: Path, steps: int, checkpoint: Path | None, reason: str = ""
    ) -> None:
        super().__init__(f"training stopped at step {steps}")
        self.run_dir = run_dir
        self.steps = steps
        self.checkpoint = checkpoint
        self.reason = reason


@dataclass(frozen=True)
class RunResult:
    """What a run produced.

    Attributes:
        run_dir: The run's folder.
        steps: Learner steps done.
        seconds: Wall time of this call's training.
        evaluations: The last evaluation's results per bot.
        best_score: The best checkpoint's win rate against the first evaluation bot.
        policy: The exported agent of the best checkpoint (``<run_dir>/<name>.safetensors``),
            or None if the run has none.
    """

    run_dir: Path
    steps: int
    seconds: float
    evaluations: dict[str, dict[str, Any]]
    best_score: float
    policy: Path | None = None


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
    named = ["config.yaml", "tb", "latest.zip", "latest.json", "best.zip", "best.json"]
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


def evaluate_model(
    model: Any,
    config: TrainConfig,
    rules: Rules,
    steps: int,
    *,
    progress: bool = False,
    log: TextIO | None = None,
) -> dict[str, EvalResult]:
    """Play ``config.eval.games`` batched games against each evaluation bot, seats rotated.

    Args:
        model: The SB3 model evaluated (its current policy, argmax).
        config: The run's config (``eval`` section, seed).
        rules: The rules of the run.
        steps: The learner steps, for the policy's name.
        progress: Show a progress bar per seat (hidden anyway when not a terminal).
        log: Where to say which evaluation runs now (e.g. ``sys.stderr``), or None.
    """
    policy = snapshot_policy(model, f"{config.name}@{steps}", config.algorithm, rules)
    results = {}
    for bot in config.eval.bots:
        if log is not None:
            print(
                f"[{config.name}] step {steps:,}: evaluating vs {bot} "
                f"({config.eval.games:,} hands)...",
                file=log,
                flush=True,
            )
        results[bot] = evaluate_vs(
            rules, policy, bot, config.eval.games, seed=config.seed + 7919, progress=progress
        )
    return results


class LabCallback(BaseCallback):
    """Snapshots into the league, periodic evaluation and checkpoints during ``learn``.

    Args:
        config: The run's config.
        rules: The rules of the run.
        league: The opponents pool.
        best_score: The best checkpoint's score so far (-1: none yet).
        progress: Show progress bars during evaluations.
        log: Where to report evaluations (None: silent).
        on_evaluation: Called after each evaluation with the steps and the results per bot
            (a sweep reports them to Ray Tune).
    """

    def __init__(
        self,
        config: TrainConfig,
        rules: Rules,
        league: League,
        best_score: float,
        progress: bool = False,
        log: TextIO | None = sys.stderr,
        on_evaluation: EvaluationHook | None = None,
    ):
        super().__init__()
        self.config = config
        self.rules = rules
        self.league = league
        self.best_score = best_score
        self.progress = progress
        self.log = log
        self.on_evaluation = on_evaluation
        self.evaluations: dict[str, dict[str, Any]] = {}
        self.next_snapshot = 0
        self.next_eval = 0
        self.last_eval_step = -1

    def _on_training_start(self) -> None:
        steps = self.model.num_timesteps
        self.next_snapshot = steps + self.config.opponents.snapshot_every
        self.next_eval = steps + self.config.eval.every

    def _on_rollout_start(self) -> None:
        # The update after this rollout trains the value network only while the steps
        # before the rollout are fewer than the warm-up (ppo.value_warmup_steps).
        warmup = self.config.ppo.value_warmup_steps if self.config.algorithm == "ppo" else 0
        if warmup:
            freeze_policy(self.model, int(self.model.num_timesteps) < warmup)

    def _on_training_end(self) -> None:
        if self.config.algorithm == "ppo" and self.config.ppo.value_warmup_steps:
            freeze_policy(self.model, False)

    def _on_step(self) -> bool:
        steps = self.model.num_timesteps
        if self.league.slots and steps >= self.next_snapshot:
            self.league.snapshot(self.model, self.config.algorithm, steps)
            self.next_snapshot += self.config.opponents.snapshot_every
        if steps >= self.next_eval:
            self.evaluate_and_checkpoint()
            self.next_eval += self.config.eval.every
        return True

    def evaluate_and_checkpoint(self) -> None:
        """Evaluate now, log to TensorBoard, save ``latest`` and (if better) ``best``."""
        steps = int(self.model.num_timesteps)
        self.last_eval_step = steps
        results = evaluate_model(
            self.model, self.config, self.rules, steps, progress=self.progress, log=self.log
        )
        for bot, res in results.items():
            self.logger.record(f"eval/win_rate_vs_{bot}", res.win_rate)
            self.logger.record(f"eval/win_rate_vs_{bot}_ci_low", res.ci_low)
            self.logger.record(f"eval/win_rate_vs_{bot}_ci_high", res.ci_high)
        self.logger.dump(steps)
        self.evaluations = {bot: res.to_dict() for bot, res in results.items()}
        score = results[self.config.eval.bots[0]].win_rate
        self.save_latest()
        if score > self.best_score:
            self.best_score = score
            save_checkpoint(self.model, self.config, self.rules, "best", steps, self.evaluations)
        summary = ", ".join(
            f"{bot} {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}]"
            for bot, r in results.items()
        )
        if self.log is not None:
            print(
                f"[{self.config.name}] step {steps:,}: win rate vs {summary}",
                file=self.log,
                flush=True,
            )
        if self.on_evaluation is not None:  # last: the checkpoints are on disk by now
            self.on_evaluation(steps, results)

    def save_latest(self) -> Path:
        """Write ``latest.zip`` / ``latest.json`` and the league: all ``--resume`` needs."""
        steps = int(self.model.num_timesteps)
        save_checkpoint(self.model, self.config, self.rules, "latest", steps, self.evaluations)
        _save_group(self.league.save, self.config.run_dir, "league_slot*.safetensors")
        return self.config.run_dir / "latest.zip"


def freeze_policy(model: Any, frozen: bool) -> None:
    """Stop (or restart) the training of a model's acting network, the value side untouched.

    The acting network is the algorithm's (:attr:`unolab.train.algorithms.Algorithm.acting_modules`):
    for PPO the policy branch and the action head, so only the value network learns while it
    is frozen (``ppo.value_warmup_steps``).
    """
    for module in algorithm_for_model(model).acting_modules(model):
        for parameter in module.parameters():
            parameter.requires_grad_(not frozen)


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


def initialise_from(model: Any, path: str | Path, rules: Rules) -> None:
    """Overwrite a fresh model's weights with trained ones (``init_from`` of the config).

    Args:
        model: The freshly built SB3 model of the run.
        path: An SB3 checkpoint ``.zip`` of the same algorithm and architecture (all of its
            networks and the optimiser state are loaded), or an exported ``.safetensors``
            policy (only the acting network: the PPO value branch keeps its fresh
            initialisation). An exported policy must have been trained under ``rules``.
        rules: The rules of the run.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if the file is unreadable (naming it), if the weights do not fit the
            model (another algorithm or architecture), or
            (:class:`~unolab.agents.learned.CheckpointMismatchError`) an exported policy was
            trained under other rules or another observation version.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"init_from: {str(path)!r} does not exist (train that run first, e.g. "
            "uno-lab train ppo --config configs/ppo/official_2p.yaml)"
        )
    if path.suffix == ".safetensors":
        try:
            policy = load_policy(path, rules=rules)
        except CheckpointMismatchError:
            raise
        except (ValueError, KeyError, RuntimeError, SafetensorError) as err:
            if isinstance(err, ValueError) and path.name in str(err):
                raise  # it names the file already
            raise ValueError(
                f"init_from: {path} is not a readable exported policy ({err}); export it "
                "again with python -m unolab.train.export"
            ) from err
        _, activation = algorithms.policy_layers(model)
        if policy.meta.activation != activation:
            raise ValueError(
                f"init_from: {path} uses {policy.meta.activation} activations, this run's "
                f"network {activation} (an imitation clone for DQN needs activation: relu)"
            )
        layers = [
            (m.weight.detach(), m.bias.detach())
            for m in policy.net.layers
            if isinstance(m, torch.nn.Linear)
        ]
        try:
            load_policy_layers(model, layers)
        except ValueError as err:
            raise ValueError(f"init_from: {path}: {err}") from None
        return
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"init_from: {path} is not a readable SB3 checkpoint (not a zip archive); give a "
            "run's latest.zip or best.zip"
        )
    try:
        model.set_parameters(str(path), exact_match=True, device="cpu")
    except (zipfile.BadZipFile, EOFError) as err:
        raise ValueError(
            f"init_from: {path} is not a readable SB3 checkpoint ({err}); give a run's "
            "latest.zip or best.zip"
        ) from err
    except (KeyError, RuntimeError, ValueError) as err:
        raise ValueError(
            f"init_from: {path} does not fit this run's model (same algorithm and net_arch "
            f"needed): {err}"
        ) from err


def _load_resume_checkpoint(path: Path, algorithm: str, env: Any) -> Any:
    """The run's ``latest.zip``, or a ValueError naming it if it cannot be read."""
    try:
        return algorithms.load_checkpoint(path, algorithm, env=env)
    except (zipfile.BadZipFile, EOFError, KeyError, RuntimeError, ValueError) as err:
        raise ValueError(
            f"cannot resume: {path} is not a readable {algorithm} checkpoint ({err}); start "
            "over with --overwrite"
        ) from err


def _best_score(run_dir: Path, first_bot: str) -> float:
    """The best checkpoint's score recorded in ``best.json`` (-1 when there is none)."""
    best_file = run_dir / "best.json"
    if not best_file.is_file():
        return -1.0
    try:
        return float(json.loads(best_file.read_text())["evaluations"][first_bot]["win_rate"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(
            f"cannot resume: {best_file} has no win rate vs {first_bot} ({err!r}); start over "
            "with --overwrite, or delete best.json and best.zip to keep training"
        ) from err


@dataclass
class _Session:
    """A started run: everything :func:`_learn` needs (it holds the run folder's lock)."""

    config: TrainConfig
    rules: Rules
    env: VecMonitor
    model: Any
    league: League
    callback: LabCallback
    resume: bool
    lock: RunFolderLock


def _start(
    config: TrainConfig,
    resume: bool,
    overwrite: bool,
    progress_bar: bool,
    log: TextIO | None,
    on_evaluation: EvaluationHook | None = None,
) -> _Session:
    """Check the run folder, build the env, league and model; write nothing before it works.

    The run folder's lock is taken before the model is built or loaded and held until
    :func:`_learn` ends (a run that holds it already is named at once). An old run is
    removed (``overwrite``) only once the new one has been built.

    Raises:
        FolderInUseError: another run holds the folder; the message names its pid.
    """
    torch.set_num_threads(config.torch_threads)
    rules = config.build_rules()
    run_dir = config.run_dir
    lock = RunFolderLock(run_dir, "training run")
    env = None
    try:
        if (run_dir / FolderLock.LOCK_NAME).is_file():
            lock.take()  # a run that is still going is named before anything else
        _check_run_dir(config, resume, overwrite)
        league = League(config.opponents, rules, seed=config.seed)
        env = VecMonitor(
            UnoVecEnv(
                config.num_envs,
                rules,
                opponents=league.pool,
                seed=config.seed,
                learner_seat=config.seat,
            )
        )
        lock.take()
        # Again, now that no other run can start here: one may have begun meanwhile.
        stale = _check_run_dir(config, resume, overwrite)
        best_score = -1.0
        if resume:
            model = _load_resume_checkpoint(run_dir / "latest.zip", config.algorithm, env)
            league.load(run_dir)
            best_score = _best_score(run_dir, config.eval.bots[0])
        else:
            model = algorithms.make_model(config, env)
            if config.init_from is not None:
                initialise_from(model, config.init_from, rules)
        _remove(stale)
        _save_atomically(lambda p: p.write_text(config.to_yaml()), run_dir / "config.yaml")
    except BaseException:
        if env is not None:
            env.close()
        lock.release(undo=True)
        raise
    callback = LabCallback(
        config, rules, league, best_score, progress_bar, log, on_evaluation=on_evaluation
    )
    return _Session(config, rules, env, model, league, callback, resume, lock)


def _learn(session: _Session, progress_bar: bool, log: TextIO | None) -> RunResult:
    """Train a started run to its ``total_steps``; on Ctrl-C save ``latest`` and stop.

    Raises:
        TrainingInterrupted: on Ctrl-C, after saving what ``--resume`` needs.
    """
    config, model, callback = session.config, session.model, session.callback
    remaining = max(config.total_steps - int(model.num_timesteps), 0)
    if log is not None:
        verb = "resuming" if session.resume else "training"
        print(
            f"[{config.name}] {verb} {config.algorithm} to {config.total_steps:,} steps in "
            f"{config.run_dir} (Ctrl-C saves a checkpoint and stops)",
            file=log,
            flush=True,
        )
    start = time.perf_counter()
    try:
        if remaining:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                progress_bar=progress_bar,
                reset_num_timesteps=not session.resume,
                tb_log_name=config.algorithm,
            )
        callback.init_callback(model)
        if callback.last_eval_step != model.num_timesteps:
            callback.evaluate_and_checkpoint()  # the final evaluation and checkpoint
    except KeyboardInterrupt as interrupt:
        steps = int(model.num_timesteps)
        with _interrupts_deferred():
            callback.init_callback(model)
            try:
                checkpoint: Path | None = callback.save_latest()
                reason = ""
            except OSError as err:
                checkpoint, reason = None, err.strerror or _one_line(err)
        raise TrainingInterrupted(config.run_dir, steps, checkpoint, reason) from interrupt
    finally:
        session.env.close()
        session.lock.release()
    stem = policy_path(config)
    exported = [p.with_suffix(".safetensors") for p in (stem, stem.with_name(LEGACY_POLICY_NAME))]
    return RunResult(
        run_dir=config.run_dir,
        steps=int(model.num_timesteps),
        seconds=time.perf_counter() - start,
        evaluations=callback.evaluations,
        best_score=callback.best_score,
        policy=next((p for p in exported if p.is_file()), None),
    )


def train(
    config: TrainConfig,
    resume: bool = False,
    progress_bar: bool = True,
    overwrite: bool = False,
    log: TextIO | None = sys.stderr,
    on_evaluation: EvaluationHook | None = None,
) -> RunResult:
    """Train ``config`` (or resume it from ``config.run_dir``) and return what it produced.

    The model is ``config.algorithm``'s of :data:`unolab.train.algorithms.ALGORITHMS`.

    Args:
        config: The run.
        resume: Continue the run in ``config.run_dir`` from its ``latest.zip``.
        progress_bar: Show progress bars (training and evaluations; hidden when not a
            terminal).
        overwrite: Start over if ``config.run_dir`` holds a run: its files are removed
            once the new run has been built.
        log: Where to report the start and each evaluation (None: silent).
        on_evaluation: Called after each evaluation with the steps and the results per
            bot (``unolab.train.sweep`` reports them to Ray Tune).

    Raises:
        RunExistsError: if ``config.run_dir`` holds a run and neither ``resume`` nor
            ``overwrite`` is set.
        FileNotFoundError: to resume a run without ``latest.zip``, or a missing ``init_from``.
        ValueError: for a config the envs refuse or an ``init_from`` that does not fit.
        FolderInUseError: another run holds ``config.run_dir``; the message names its pid.
        RunWriteError: (an OSError) a checkpoint could not be written (a full disk); the
            message names the file and says how to continue.
        TrainingInterrupted: on Ctrl-C, once ``latest.zip`` is saved.
    """
    session = _start(config, resume, overwrite, progress_bar, log, on_evaluation)
    return _learn(session, progress_bar, log)


def _one_line(err: BaseException | str) -> str:
    """An exception's message on one line (YAML and numpy messages span several)."""
    return " ".join(str(err).split()) or type(err).__name__


def _fail(err: BaseException, prog: str) -> NoReturn:
    """The command line's answer to bad input: ``<prog>: error: <message>`` on stderr, exit 2
    (argparse's form, so every error of a command reads alike)."""
    print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
    raise SystemExit(2)


def resumed_config_path(run_dir: Path) -> Path:
    """The config a run resumed from ``run_dir`` trains with (``run_dir/config.yaml``).

    Raises:
        FileNotFoundError: naming the path, when the folder holds no run.
    """
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(
            f"cannot resume: {path} does not exist (give the folder of a run, "
            "e.g. --resume runs/<name>)"
        )
    return path


def _load_run_config(args: argparse.Namespace, algorithm: str) -> TrainConfig:
    """The config of the command line: the file (or the resumed run's), with ``--set``.

    Raises:
        ConfigError: naming the file, key or value at fault.
        FileNotFoundError: to resume a folder that holds no run.
    """
    for item in args.overrides:
        key, _, raw = item.partition("=")
        try:
            yaml.safe_load(raw)
        except yaml.YAMLError:
            raise ConfigError(f"--set {key}: {raw!r} is not a valid YAML value") from None
    path = args.config if args.config is not None else resumed_config_path(args.resume)
    try:
        config = load_config(path, args.overrides)
        if args.resume is not None:
            config = load_config(
                None,
                [*args.overrides, f"runs_dir={args.resume.parent}", f"name={args.resume.name}"],
                base=config.to_dict(),
            )
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or _one_line(err)
        raise ConfigError(f"{path}: not valid YAML ({problem}{where})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a YAML text file (it is not UTF-8)") from None
    if config.algorithm != algorithm:
        raise ConfigError(
            f"{path} is a {config.algorithm} config; train it with uno-lab train "
            f"{config.algorithm} (or python -m unolab.train.{config.algorithm})"
        )
    return config


def build_parser(algorithm: str, prog: str | None = None) -> argparse.ArgumentParser:
    """The options of a training command (``python -m unolab.train.<algorithm>``, ``uno-lab train``)."""
    parser = argparse.ArgumentParser(
        prog=prog or f"python -m unolab.train.{algorithm}",
        description=f"Train a {algorithm.upper()} UNO agent from a YAML config.",
    )
    parser.add_argument("--config", type=Path, help="YAML config (e.g. configs/ppo/quick.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field, dotted for nested ones (e.g. --set ppo.learning_rate=1e-4)",
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue the run in runs/<name>"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="start over if runs/<name> holds a run (removes that run's files first)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> None:
    """Make SIGTERM (``kill``, a scheduler's stop) save and stop the run as Ctrl-C does.

    A run started in the background (``nohup ... &``) ignores SIGINT, so ``kill PID`` is
    how it is stopped; without this it would end without saving ``latest.zip``.
    """
    # Not the main thread (a sweep trial): the caller owns the signals.
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGTERM, _raise_interrupt)


def main(algorithm: str, argv: Sequence[str] | None = None, prog: str | None = None) -> RunResult:
    """Command line of ``python -m unolab.train.<algorithm>`` (an algorithm of the registry).

    Bad input (a config error, a missing file, a run that exists) ends with one line
    ``<prog>: error: ...`` on stderr and exit status 2; Ctrl-C (or SIGTERM) saves
    ``latest.zip`` and exits 130.

    Args:
        algorithm: A name of the algorithm registry (``ppo``, ``dqn``).
        argv: The arguments (default: ``sys.argv[1:]``).
        prog: The command's name in messages (default: ``python -m unolab.train.<algorithm>``).
    """
    parser = build_parser(algorithm, prog)
    args = parser.parse_args(argv)
    if args.config is None and args.resume is None:
        parser.error("give --config FILE, or --resume RUN_DIR to continue a run")
    if args.resume is not None and args.overwrite:
        parser.error("--resume continues a run, --overwrite starts it over: give one of them")
    progress = not args.no_progress
    try:
        config = _load_run_config(args, algorithm)
        session = _start(config, args.resume is not None, args.overwrite, progress, sys.stderr)
    except KeyboardInterrupt:
        print("interrupted before training started: nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    except _START_ERRORS as err:
        _fail(err, parser.prog)
    _stop_on_sigterm()
    try:
        result = _learn(session, progress, sys.stderr)
    except OSError as err:  # the machine, not the input: a full disk, a failed write
        if not isinstance(err, RunWriteError):
            err = _write_failed(
                err, getattr(err, "filename", None) or config.run_dir, config.run_dir
            )
        print(f"{parser.prog}: error: {_one_line(err.strerror or err)}", file=sys.stderr)
        raise SystemExit(1) from None
    except TrainingInterrupted as stop:
        if stop.checkpoint is None:
            print(
                f"interrupted at step {stop.steps:,}; could not save a checkpoint: {stop.reason}",
                file=sys.stderr,
            )
        else:
            print(
                f"interrupted at step {stop.steps:,}: saved {stop.checkpoint}; continue with "
                f"{parser.prog} --resume {stop.run_dir}",
                file=sys.stderr,
            )
        raise SystemExit(130) from None
    exported = f", the agent {result.policy}" if result.policy is not None else ""
    print(
        f"trained {result.steps:,} steps in {result.seconds:.0f} s; checkpoints{exported} "
        f"and TensorBoard logs in {result.run_dir} (tensorboard --logdir {result.run_dir / 'tb'})"
    )
    return result
