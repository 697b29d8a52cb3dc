"""The training run shared by PPO and DQN: envs, league, evaluation, checkpoints, resume.

Read it top to bottom: :func:`train` builds the batched env and the league, creates (or
resumes) the model of the config's algorithm (through the registry,
:mod:`unolab.train.algorithms`; ``init_from`` through :mod:`unolab.train.checkpoint_state`; an
``imitate`` stage first clones its teachers through :mod:`unolab.train.imitate`), and
calls SB3's ``learn`` with :class:`LabCallback` (:mod:`unolab.train.run_callback`), which
freezes snapshots into the league, evaluates against bots (win rates with Wilson intervals
in TensorBoard), and writes checkpoints:

``runs/<name>/``
    ``config.yaml`` the run's config; ``latest.zip`` / ``best.zip`` SB3 checkpoints
    (``previous.zip``: the one before ``latest``), ``latest.json`` / ``best.json`` /
    ``previous.json`` their records (rules, observation version, algorithm, steps,
    evaluations, seed, git commit, config, the zip's SHA-256), ``history.jsonl`` the settings
    changed on resuming (:mod:`unolab.train.resume`),
    ``<name>.safetensors`` + ``<name>.json`` the pickle-free export of the best checkpoint,
    named after the run (``best_policy.*`` is the same export under its older name), ``tb/``
    the TensorBoard logs, ``league_slot*.safetensors`` the self-play pool, ``clone/`` the
    imitation run of an ``imitate`` stage (its clone, report and config).

A run never silently replaces another: training into a folder that already holds a run is
refused unless it resumes (``--resume``) or starts over (``--overwrite``, which first removes
the old run's files). A resume is a contract (:mod:`unolab.train.resume`): it continues the
newest good checkpoint, rebuilt from the config without unpickling anything, and refuses a
change of any setting the model or its data depend on. A running run holds the folder's lock (``.lock``,
:class:`uno_env.folders.RunFolder`) until it ends, so a second run on the same folder is
refused, naming the first one's pid. Ctrl-C saves ``latest.zip`` and says how to resume.

Every file is written to a temporary name, flushed to disk and renamed over the old one
(a group of files, such as the league or the exported agent, is written into a scratch
folder first and then renamed file by file), so a full disk or a crash leaves each file
whole: the old checkpoint or the new one. A failed write ends the run with one line naming
the file and how to go on (``--resume`` continues from the last checkpoint written).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import torch
from stable_baselines3.common.callbacks import ConvertCallback
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from uno_env.config_values import check_switch
from uno_env.console import one_line
from uno_env.envs.shared_vec_env import ShardedUnoVecEnv
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.files import FolderInUseError, UnreadableFileError, shown
from uno_env.folders import RunFolder
from uno_env.rules import Rules
from unolab.agents import progress
from unolab.train import algorithms
from unolab.train.checkpoint_files import read_json
from unolab.train.checkpoint_state import initialise_from
from unolab.train.config import TrainConfig, config_for
from unolab.train.config_limits import resolve_device
from unolab.train.imitate.run import imitate
from unolab.train.resume import record_history, resume_model
from unolab.train.run_callback import EvaluationHook, LabCallback, League, check_eval_bots
from unolab.train.run_folder import (
    LEGACY_POLICY_NAME,
    check_run_dir,
    interrupts_deferred,
    policy_path,
    run_folder,
)

__all__ = ["RunResult", "TrainingInterrupted", "train", "train_algorithm", "training_env"]

START_ERRORS = (ValueError, OSError, FolderInUseError)
"""What a run's start raises for bad input: ConfigError and the other ValueErrors of the lab
(a bad value, a checkpoint that does not fit), FileNotFoundError, RunExistsError, the run
folder in use by another run, ..."""


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


def _best_score(run_dir: Path, first_bot: str) -> float:
    """The best checkpoint's score recorded in ``best.json`` (-1 when there is none).

    Raises:
        ValueError: one line naming ``best.json`` and what is wrong with it, in words.
    """
    best_file = run_dir / "best.json"
    if not best_file.is_file():
        return -1.0
    fix = "start over with --overwrite, or delete best.json and best.zip to keep training"
    try:
        record = read_json(best_file, "checkpoint record")
    except UnreadableFileError as err:
        raise ValueError(f"cannot resume: {err}; {fix}") from None
    evaluations = record.get("evaluations") if isinstance(record, dict) else None
    result = evaluations.get(first_bot) if isinstance(evaluations, dict) else None
    if not isinstance(result, dict) or "win_rate" not in result:
        raise ValueError(f"cannot resume: {best_file} has no win rate vs {first_bot}; {fix}")
    rate = result["win_rate"]
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise ValueError(
            f"cannot resume: {best_file}: win_rate {repr(rate)[:40]} vs {first_bot} is not a "
            f"number from 0 to 1; {fix}"
        )
    return float(rate)


def _clone_summary(report: Mapping[str, Any]) -> str:
    """One line on a clone stage's clone: its agreement with the teachers, its win rates."""
    rates = ", ".join(
        f"{bot} {r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
        for bot, r in report["strength"]["clone"].items()
    )
    overall = report["accuracy"]["overall"]
    agreement = (
        "no held-out decisions" if overall is None else f"{overall:.1%} of held-out decisions"
    )
    return f"the clone agrees with {report['teachers_label']} on {agreement}; win rate vs {rates}"


def training_env(config: TrainConfig, rules: Rules, league: League) -> VecEnv:
    """The batched games a run trains on: in this process (``num_workers: 1``), or sharded
    over ``num_workers`` processes (this one and ``num_workers - 1`` worker processes), each
    building the league's pool itself and told of its snapshots (:meth:`League.share_with`).

    Raises:
        ValueError: for a config the envs refuse; WorkerError: a worker could not start.
    """
    if config.num_workers == 1:
        return UnoVecEnv(
            config.num_envs,
            rules,
            opponents=league.pool,
            seed=config.seed,
            learner_seat=config.seat,
        )
    env = ShardedUnoVecEnv(
        config.num_envs,
        rules,
        opponents=league.recipe(config.torch_threads),
        seed=config.seed,
        learner_seat=config.seat,
        num_workers=config.num_workers,
        # SB3's loops keep a step's observations for one more step only: no copy needed.
        shared_observations=True,
    )
    try:
        league.share_with(env)
    except BaseException:
        env.close()
        raise
    return env


@dataclass
class _Session:
    """A started run: everything :func:`learn` needs (it holds the run folder's lock)."""

    config: TrainConfig
    env: VecMonitor
    model: Any
    callback: LabCallback
    resume: bool
    lock: RunFolder


def start_run(
    config: TrainConfig,
    resume: bool,
    overwrite: bool,
    progress_bar: bool,
    log: TextIO | None,
    on_evaluation: EvaluationHook | None = None,
) -> _Session:
    """Check the run folder, build the env, league and model; write nothing before it works.

    The run folder's lock is taken before the model is built or loaded and held until
    :func:`learn` ends (a run that holds it already is named at once). An old run is
    removed (``overwrite``) only once the new one has been built; an ``imitate`` stage then
    records and fits its clone (``<run_dir>/clone/``) and the model starts from it.

    Raises:
        FolderInUseError: another run holds the folder; the message names its pid.
    """
    torch.set_num_threads(config.torch_threads)
    resolve_device(config.device)  # cuda without a GPU: one line, before anything is built
    rules = config.build_rules()
    run_dir = config.run_dir
    lock = run_folder(config)
    env = None
    try:
        if lock.lock_file.is_file():
            lock.hold()  # a run that is still going is named before anything else
        check_run_dir(config, resume, overwrite)
        check_eval_bots(config, rules)
        league = League(config.opponents, rules, seed=config.seed)
        env = VecMonitor(training_env(config, rules, league))
        lock.hold()
        # Again, now that no other run can start here: one may have begun meanwhile.
        stale = check_run_dir(config, resume, overwrite)
        best_score = -1.0
        resumed = None
        if resume:
            # The contract: fixed settings unchanged, steps left; the newest good checkpoint.
            resumed = resume_model(config, env, log)
            model, config = resumed.model, resumed.config
            league.load(run_dir)
            best_score = _best_score(run_dir, config.eval.bots[0])
        else:
            model = algorithms.make_model(config, env)
            if config.init_from is not None:
                initialise_from(model, config.init_from, rules)
        lock.remove(stale)
        stage = None if resume else config.imitation_config()
        if stage is not None:  # stage 1: the clone the network starts from
            if log is not None:
                print(f"[{config.name}] stage 1: a clone in {stage.run_dir}", file=log, flush=True)
            clone = imitate(stage, overwrite=True, progress=progress_bar, log=log)
            initialise_from(model, clone.policy, rules)
            if log is not None:
                print(f"[{config.name}] {_clone_summary(clone.report)}", file=log, flush=True)
        if resumed is not None:  # what changed, then the config it changed to
            record_history(run_dir, resumed.checkpoint.steps, resumed.changes)
        lock.write("config.yaml", config.to_yaml())
    except BaseException:
        if env is not None:
            env.close()
        lock.release(undo=True)
        raise
    callback = LabCallback(
        config, rules, league, best_score, progress_bar, log, on_evaluation=on_evaluation
    )
    return _Session(config, env, model, callback, resume, lock)


def learn(session: _Session, progress_bar: bool, log: TextIO | None) -> RunResult:
    """Train a started run to its ``total_steps``; on Ctrl-C save ``latest`` and stop.

    Raises:
        TrainingInterrupted: on Ctrl-C, after saving what ``--resume`` needs.
    """
    config, model, callback = session.config, session.model, session.callback
    algorithm = algorithms.get_algorithm(config.algorithm)
    done = int(model.num_timesteps)
    remaining = max(config.total_steps - done, 0)
    end = algorithms.final_steps(config, done)
    if log is not None:
        verb = "resuming" if session.resume else "training"
        rounded = ""
        if end > config.total_steps:
            per = algorithm.steps_per_collect(config)
            rounded = (
                f" (total_steps {config.total_steps:,} rounded up to whole rollouts of "
                f"{per:,} steps)"
            )
        progress.say(
            f"[{config.name}] {verb} {config.algorithm} to {end:,} steps{rounded} in "
            f"{config.run_dir} (Ctrl-C saves a checkpoint and stops)",
            log,
        )
    start = time.perf_counter()
    try:
        # One bar for the whole run; the evaluations' own bars stay quiet under it.
        with progress.progress_bar(
            f"training {config.name}", end, unit="steps", completed=done, enabled=progress_bar
        ) as bar:

            def move_bar(_locals: dict[str, Any], _globals: dict[str, Any]) -> bool:
                bar.update(model.num_timesteps)  # to the model's step count, after every step
                return True

            if remaining:  # the bar moves before an evaluation
                hooks = [ConvertCallback(move_bar), callback]
                algorithm.learn(model, remaining, hooks, reset=not session.resume)
            callback.init_callback(model)
            if callback.last_eval_step != model.num_timesteps:
                callback.evaluate_and_checkpoint()  # the final evaluation and checkpoint
    except KeyboardInterrupt as interrupt:
        steps = int(model.num_timesteps)
        with interrupts_deferred():
            callback.init_callback(model)
            try:
                checkpoint: Path | None = callback.save_latest()
                reason = ""
            except OSError as err:
                checkpoint, reason = None, err.strerror or one_line(err)
        raise TrainingInterrupted(config.run_dir, steps, checkpoint, reason) from interrupt
    finally:
        session.env.close()
        session.lock.release()
    stems = (policy_path(config).name, LEGACY_POLICY_NAME)
    exported = [config.run_dir / f"{stem}.safetensors" for stem in stems]
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
        resume: Continue the run in ``config.run_dir`` from its newest good checkpoint
            (``latest.zip``, else ``previous.zip``), under the resume contract of
            :mod:`unolab.train.resume`.
        progress_bar: Show the run's progress bar (:mod:`unolab.agents.progress`: on a
            terminal a bar of the steps the run really ends at, ``total_steps`` rounded up
            to whole rollouts; plain lines off a terminal).
        overwrite: Start over if ``config.run_dir`` holds a run: its files are removed
            once the new run has been built.
        log: Where to report the start and each evaluation (None: silent).
        on_evaluation: Called after each evaluation with the steps and the results per
            bot (``unolab.train.sweep`` reports them to Ray Tune).

    Raises:
        RunExistsError: if ``config.run_dir`` holds a run and neither ``resume`` nor
            ``overwrite`` is set.
        FileNotFoundError: to resume a run without a checkpoint, or a missing ``init_from``.
        ResumeRefusedError: (a ConfigError) to resume with a fixed setting changed, or with
            ``total_steps`` not above the steps done: one line naming the key and values.
        DamagedCheckpointError: (a ValueError) to resume a run none of whose checkpoints
            is good: one line naming each file.
        ValueError: for a config the envs refuse or an ``init_from`` that does not fit.
        FolderInUseError: another run holds ``config.run_dir``; the message names its pid.
        RunWriteError: (an OSError) a checkpoint could not be written (a full disk); the
            message names the file and says how to continue.
        TrainingInterrupted: on Ctrl-C, once ``latest.zip`` is saved.
        TypeError: for a ``config`` that is no TrainConfig, a ``log`` that is no text
            stream, or an ``on_evaluation`` that cannot be called; ConfigError (a
            ValueError) for a ``resume``, ``progress_bar`` or ``overwrite`` that is not a
            bool: each naming the argument and the value, before anything is written.
    """
    # Checked before anything is read or written: a switch given as a word (resume="no")
    # would be read as true.
    if not isinstance(config, TrainConfig):
        raise TypeError(
            f"config: expected a TrainConfig (unolab.train.config.load_config builds one from "
            f"a YAML file or a mapping), got {shown(config)}"
        )
    switches = {"resume": resume, "progress_bar": progress_bar, "overwrite": overwrite}
    for key, value in switches.items():
        check_switch(key, value)
    progress.check_log(log)
    if on_evaluation is not None and not callable(on_evaluation):
        raise TypeError(f"on_evaluation: expected a function or None, got {shown(on_evaluation)}")
    session = start_run(config, resume, overwrite, progress_bar, log, on_evaluation)
    return learn(session, progress_bar, log)


def train_algorithm(
    algorithm: str,
    config: TrainConfig | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
    *,
    resume: bool = False,
    overwrite: bool = False,
    progress_bar: bool = True,
    log: TextIO | None = sys.stderr,
) -> RunResult:
    """Train with a registered algorithm from a script or a notebook.

    Called with a :class:`~unolab.train.config.TrainConfig`, the path of a YAML config or a
    mapping of its keys (``algorithm`` may be left out) and ``overrides`` as ``--set`` items,
    it runs what ``uno-lab train ALGORITHM --config FILE`` runs and returns the
    :class:`RunResult`; ``resume``, ``overwrite``, ``progress_bar`` and ``log`` are
    :func:`train`'s.

    Example::

        from unolab.train.run import train_algorithm
        result = train_algorithm("ppo", "configs/ppo/tiny.yaml", ["total_steps=2048"])

    Raises:
        ConfigError: for an invalid config or one of another algorithm; and as :func:`train`.
    """
    return train(
        config_for(config, algorithm, overrides),
        resume=resume,
        progress_bar=progress_bar,
        overwrite=overwrite,
        log=log,
    )
