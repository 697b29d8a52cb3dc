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

import json
import sys
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import torch
from safetensors import SafetensorError
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

from uno_env.envs.vec_env import UnoVecEnv
from uno_env.files import (
    FolderInUseError,
    FolderLock,
    RunFolderLock,
)
from uno_env.rules import Rules
from unolab.agents.arena import EvalResult, evaluate_vs
from unolab.agents.learned import CheckpointMismatchError, load_policy
from unolab.train import algorithms
from unolab.train.algorithms import algorithm_for_model, load_policy_layers
from unolab.train.config import TrainConfig, config_for
from unolab.train.export import snapshot_policy
from unolab.train.league import League
from unolab.train.run_folder import (
    LEGACY_POLICY_NAME,
    RunExistsError,
    RunWriteError,
    _check_run_dir,
    _interrupts_deferred,
    _one_line,
    _remove,
    _save_atomically,
    _save_group,
    policy_path,
    run_files,
    save_checkpoint,
)

__all__ = [
    "LEGACY_POLICY_NAME",
    "AlgorithmTrainer",
    "EvaluationHook",
    "LabCallback",
    "RunExistsError",
    "RunResult",
    "RunWriteError",
    "TrainingInterrupted",
    "evaluate_model",
    "freeze_policy",
    "initialise_from",
    "policy_path",
    "run_files",
    "train",
]

_START_ERRORS = (ValueError, OSError, FolderInUseError)
"""What a run's start raises for bad input: ConfigError and the other ValueErrors of the lab
(a bad value, a checkpoint that does not fit), FileNotFoundError, RunExistsError, the run
folder in use by another run, ..."""


EvaluationHook = Callable[[int, dict[str, EvalResult]], None]
"""Called after each periodic evaluation with the learner steps and the results per bot."""


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


@dataclass(frozen=True)
class AlgorithmTrainer:
    """The ``train`` of an algorithm's module (``unolab.train.ppo.train``,
    ``unolab.train.dqn.train``), for scripts and notebooks.

    Called with a :class:`~unolab.train.config.TrainConfig`, the path of a YAML config or a
    mapping of its keys (``algorithm`` may be left out) and ``overrides`` as ``--set`` items,
    it runs what ``uno-lab train ALGORITHM --config FILE`` runs and returns the
    :class:`RunResult`; ``resume``, ``overwrite``, ``progress_bar`` and ``log`` are
    :func:`train`'s. It raises ``ConfigError`` for an invalid config or one of another
    algorithm, and as :func:`train`.

    Example::

        from unolab.train.ppo import train
        result = train("configs/ppo/tiny.yaml", ["total_steps=2048"])
    """

    algorithm: str

    def __call__(
        self,
        config: TrainConfig | str | Path | Mapping[str, Any],
        overrides: Sequence[str] = (),
        *,
        resume: bool = False,
        overwrite: bool = False,
        progress_bar: bool = True,
        log: TextIO | None = sys.stderr,
    ) -> RunResult:
        """Train the config with this algorithm; return what the run produced."""
        return train(
            config_for(config, self.algorithm, overrides),
            resume=resume,
            progress_bar=progress_bar,
            overwrite=overwrite,
            log=log,
        )
