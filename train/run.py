"""The training run shared by PPO and DQN: envs, league, evaluation, checkpoints, resume.

Read it top to bottom: :func:`train` builds the batched env and the league, creates (or
resumes) the model of the config's algorithm (through the registry,
:mod:`train.algorithms`), and calls SB3's ``learn`` with :class:`LabCallback`, which freezes
snapshots into the league, evaluates against bots (win rates with Wilson intervals in
TensorBoard), and writes checkpoints:

``runs/<name>/``
    ``config.yaml`` the run's config; ``latest.zip`` / ``best.zip`` SB3 checkpoints (for
    ``--resume``; they use cloudpickle), ``latest.json`` / ``best.json`` their metadata
    (rules, observation version, algorithm, steps, evaluations, seed, git commit),
    ``best_policy.safetensors`` + ``best_policy.json`` the pickle-free export, ``tb/`` the
    TensorBoard logs, ``league_slot*.safetensors`` the self-play pool.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

from agents.arena import EvalResult, evaluate_vs
from agents.learned import load_policy
from train import algorithms
from train.algorithms import load_policy_layers
from train.config import TrainConfig, load_config
from train.export import export_policy, git_commit, snapshot_policy
from train.league import League
from uno_env.configuration import ConfigError
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules

__all__ = ["LabCallback", "RunResult", "evaluate_model", "initialise_from", "main", "train"]


@dataclass(frozen=True)
class RunResult:
    """What a run produced."""

    run_dir: Path
    steps: int
    seconds: float
    evaluations: dict[str, dict[str, Any]]
    best_score: float


def evaluate_model(
    model: Any, config: TrainConfig, rules: Rules, steps: int
) -> dict[str, EvalResult]:
    """Play ``config.eval.games`` batched games against each evaluation bot, seats rotated."""
    policy = snapshot_policy(model, f"{config.name}@{steps}", config.algorithm, rules)
    return {
        bot: evaluate_vs(
            rules, policy, bot, config.eval.games, seed=config.seed + 7919, progress=False
        )
        for bot in config.eval.bots
    }


class LabCallback(BaseCallback):
    """Snapshots into the league, periodic evaluation and checkpoints during ``learn``."""

    def __init__(self, config: TrainConfig, rules: Rules, league: League, best_score: float):
        super().__init__()
        self.config = config
        self.rules = rules
        self.league = league
        self.best_score = best_score
        self.evaluations: dict[str, dict[str, Any]] = {}
        self.next_snapshot = 0
        self.next_eval = 0
        self.last_eval_step = -1

    def _on_training_start(self) -> None:
        steps = self.model.num_timesteps
        self.next_snapshot = steps + self.config.opponents.snapshot_every
        self.next_eval = steps + self.config.eval.every

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
        results = evaluate_model(self.model, self.config, self.rules, steps)
        for bot, res in results.items():
            self.logger.record(f"eval/win_rate_vs_{bot}", res.win_rate)
            self.logger.record(f"eval/win_rate_vs_{bot}_ci_low", res.ci_low)
            self.logger.record(f"eval/win_rate_vs_{bot}_ci_high", res.ci_high)
        self.logger.dump(steps)
        self.evaluations = {bot: res.to_dict() for bot, res in results.items()}
        score = results[self.config.eval.bots[0]].win_rate
        save_checkpoint(self.model, self.config, self.rules, "latest", steps, self.evaluations)
        self.league.save(self.config.run_dir)
        if score > self.best_score:
            self.best_score = score
            save_checkpoint(self.model, self.config, self.rules, "best", steps, self.evaluations)
        summary = ", ".join(
            f"{bot} {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}]"
            for bot, r in results.items()
        )
        print(f"[{self.config.name}] step {steps:,}: win rate vs {summary}", file=sys.stderr)


def save_checkpoint(
    model: Any,
    config: TrainConfig,
    rules: Rules,
    tag: str,
    steps: int,
    evaluations: dict[str, dict[str, Any]],
) -> None:
    """Write ``<tag>.zip`` (SB3, for resuming), ``<tag>.json`` and, for ``best``, the export."""
    run_dir = config.run_dir
    model.save(run_dir / f"{tag}.zip")
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
    (run_dir / f"{tag}.json").write_text(json.dumps(meta, indent=2))
    if tag == "best":
        extra = {"steps": steps, "evaluations": evaluations, "seed": config.seed}
        export_policy(model, run_dir / "best_policy", config.name, config.algorithm, rules, extra)


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
        ValueError: if the weights do not fit the model (another algorithm or architecture),
            or (:class:`~agents.learned.CheckpointMismatchError`) an exported policy was
            trained under other rules or another observation version.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"init_from: {str(path)!r} does not exist (train that run first, e.g. "
            "uno-lab train ppo --config configs/ppo/official_2p.yaml)"
        )
    if path.suffix == ".safetensors":
        policy = load_policy(path, rules=rules)
        layers = [
            (m.weight.detach(), m.bias.detach())
            for m in policy.net.layers
            if isinstance(m, torch.nn.Linear)
        ]
        load_policy_layers(model, layers)
        return
    try:
        model.set_parameters(str(path), exact_match=True, device="cpu")
    except (KeyError, RuntimeError, ValueError) as err:
        raise ValueError(
            f"init_from: {path} does not fit this run's model (same algorithm and net_arch "
            f"needed): {err}"
        ) from err


def train(config: TrainConfig, resume: bool = False, progress_bar: bool = True) -> RunResult:
    """Train ``config`` (or resume it from ``config.run_dir``) and return what it produced.

    The model is ``config.algorithm``'s of :data:`train.algorithms.ALGORITHMS`.
    """
    torch.set_num_threads(config.torch_threads)
    rules = config.build_rules()
    run_dir = config.run_dir
    if resume and not (run_dir / "latest.zip").is_file():
        raise FileNotFoundError(
            f"cannot resume: {run_dir / 'latest.zip'} does not exist (a run writes it at its "
            "first evaluation)"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(config.to_yaml())

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
    best_score = -1.0
    if resume:
        model = algorithms.load_checkpoint(run_dir / "latest.zip", config.algorithm, env=env)
        league.load(run_dir)
        best_file = run_dir / "best.json"
        if best_file.is_file():
            best = json.loads(best_file.read_text())
            best_score = best["evaluations"][config.eval.bots[0]]["win_rate"]
    else:
        model = algorithms.make_model(config, env)
        if config.init_from is not None:
            initialise_from(model, config.init_from, rules)
    callback = LabCallback(config, rules, league, best_score)
    remaining = max(config.total_steps - int(model.num_timesteps), 0)
    start = time.perf_counter()
    if remaining:
        model.learn(
            total_timesteps=remaining,
            callback=callback,
            progress_bar=progress_bar,
            reset_num_timesteps=not resume,
            tb_log_name=config.algorithm,
        )
    callback.init_callback(model)
    if callback.last_eval_step != model.num_timesteps:
        callback.evaluate_and_checkpoint()  # the final evaluation and checkpoint
    env.close()
    return RunResult(
        run_dir=run_dir,
        steps=int(model.num_timesteps),
        seconds=time.perf_counter() - start,
        evaluations=callback.evaluations,
        best_score=callback.best_score,
    )


def main(algorithm: str, argv: Sequence[str] | None = None) -> RunResult:
    """Command line of ``python -m train.<algorithm>`` (an algorithm of the registry)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m train.{algorithm}",
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
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.config is None and args.resume is None:
        parser.error("give --config FILE, or --resume RUN_DIR to continue a run")
    try:
        path = args.config if args.config is not None else args.resume / "config.yaml"
        config = load_config(path, args.overrides)
        if args.resume is not None:
            config = load_config(
                None,
                [*args.overrides, f"runs_dir={args.resume.parent}", f"name={args.resume.name}"],
                base=config.to_dict(),
            )
    except ConfigError as err:
        parser.error(str(err))
    if config.algorithm != algorithm:
        parser.error(
            f"{path} is a {config.algorithm} config; use python -m train.{config.algorithm}"
        )
    result = train(config, resume=args.resume is not None, progress_bar=not args.no_progress)
    print(
        f"trained {result.steps:,} steps in {result.seconds:.0f} s; checkpoints, exported policy "
        f"and TensorBoard logs in {result.run_dir} (tensorboard --logdir {result.run_dir / 'tb'})"
    )
    return result
