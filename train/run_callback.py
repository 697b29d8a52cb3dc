"""The callback of a training run and its league: snapshots, evaluations and checkpoints.

The league (:class:`League`) is the run's opponent pool: bots and frozen snapshots of the
learner (:class:`SnapshotSlot`), saved beside the checkpoints for ``--resume``.

:class:`LabCallback` is what SB3's ``learn`` calls after each step of the run
(:mod:`unolab.train.run`): it freezes snapshots of the learner into the league, evaluates it
against bots every ``eval.every`` steps (:func:`evaluate_model`: win rates with Wilson
intervals, logged to TensorBoard), and writes the ``latest`` and ``best`` checkpoints. It
also freezes the acting network during the algorithm's warm-up (PPO's
``ppo.value_warmup_steps``: :func:`freeze_policy`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
import torch
from stable_baselines3.common.callbacks import BaseCallback

from uno_env.config_values import ConfigError
from uno_env.envs.opponents import OpponentPool
from uno_env.envs.shared_vec_env import OpponentsRecipe, ShardedUnoVecEnv
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents import BOT_NAMES, policy_factory
from unolab.agents.arena import EvalResult, evaluate_vs
from unolab.agents.learned import MLPNet, TorchPolicy, load_policy, save_policy
from unolab.agents.policy_metadata import PolicyMetadata
from unolab.agents.progress import say
from unolab.train.algorithms import algorithm_for_model, get_algorithm
from unolab.train.config import TrainConfig
from unolab.train.config_sections import OpponentMix
from unolab.train.evaluation_log import EVALUATIONS_FILE, read_evaluation_log
from unolab.train.export import snapshot_policy
from unolab.train.run_folder import append_lines, save_checkpoint, save_group

__all__ = [
    "EvaluationHook",
    "LabCallback",
    "League",
    "SnapshotSlot",
    "check_eval_bots",
    "evaluate_model",
    "fill_slot",
    "freeze_policy",
    "league_pool",
    "read_curve",
    "record_evaluation",
]


class SnapshotSlot:
    """A pool entry that plays as the newest snapshot put in it, or as a bot until then.

    The env's pool keeps a fixed list of policies with fixed weights; the league refills
    these slots in place when it freezes the learner, so the env needs no rebuilding.
    """

    def __init__(self, index: int, fallback: Policy) -> None:
        self.index = index
        self.fallback = fallback
        self.snapshot: TorchPolicy | None = None
        self.name = f"snapshot{index}"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Act as the snapshot, or as the fallback bot while the slot is empty."""
        player = self.snapshot if self.snapshot is not None else self.fallback
        return player.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


class League:
    """Bots and up to ``pool_size`` snapshots, sampled per opponent seat and hand.

    Args:
        mix: The configured mix.
        rules: The rules of the run.
        seed: Seeds the bots.
    """

    def __init__(self, mix: OpponentMix, rules: Rules, seed: int) -> None:
        self.rules = rules
        self.mix = mix
        self.seed = seed
        self.shared_env: ShardedUnoVecEnv | None = None
        names = [name for name, w in mix.bots.items() if w > 0]
        # A bot by name, or a frozen exported agent (checked against the run's rules).
        self.bots = [policy_factory(name, rules)(seed + i) for i, name in enumerate(names)]
        weights = [mix.bots[name] for name in names]
        self.slots: list[SnapshotSlot] = []
        if mix.self_play > 0:
            self.slots = [SnapshotSlot(i, self.bots[0]) for i in range(mix.pool_size)]
            weights += [mix.self_play / mix.pool_size] * mix.pool_size
        self.pool = OpponentPool([*self.bots, *self.slots], weights)
        self.snapshots_taken = 0

    def snapshot(self, model: Any, algorithm: str, steps: int) -> None:
        """Freeze the learner into the oldest slot (the league has slots: self-play is on)."""
        slot = self.slots[self.snapshots_taken % len(self.slots)]
        slot.snapshot = snapshot_policy(model, f"snapshot@{steps}", algorithm, self.rules)
        self.snapshots_taken += 1
        self._publish(slot)

    def recipe(self, torch_threads: int = 1) -> OpponentsRecipe:
        """How an env worker builds this league's pool (:func:`league_pool`): from the mix,
        the rules and the seed, with every slot empty until :meth:`share_with`'s env is told
        of a snapshot."""
        return OpponentsRecipe(league_pool, (self.mix, self.rules, self.seed, torch_threads))

    def share_with(self, env: ShardedUnoVecEnv) -> None:
        """Refill ``env``'s workers' slots whenever a slot of this league is filled (each
        worker plays a pool of its own, built by :meth:`recipe`)."""
        self.shared_env = env
        for slot in self.slots:
            self._publish(slot)

    def _publish(self, slot: SnapshotSlot) -> None:
        if self.shared_env is None or slot.snapshot is None:
            return
        layers = [
            (weight.numpy(), bias.numpy()) for weight, bias in slot.snapshot.net.layer_weights()
        ]
        self.shared_env.update_opponents(fill_slot, slot.index, layers, slot.snapshot.meta)

    def save(self, run_dir: Path) -> None:
        """Persist the filled slots (for ``--resume``) as safetensors policies."""
        for slot in self.slots:
            if slot.snapshot is not None:
                layers = slot.snapshot.net.layer_weights()
                save_policy(run_dir / f"league_slot{slot.index}", layers, slot.snapshot.meta)

    def load(self, run_dir: Path) -> None:
        """Refill the slots saved by :meth:`save`."""
        for slot in self.slots:
            path = run_dir / f"league_slot{slot.index}.safetensors"
            if path.is_file():
                slot.snapshot = load_policy(path, rules=self.rules)
                self.snapshots_taken += 1
                self._publish(slot)


def league_pool(mix: OpponentMix, rules: Rules, seed: int, torch_threads: int) -> OpponentPool:
    """A league's opponent pool built afresh, in an env worker (:meth:`League.recipe`): its
    bots, and its snapshot slots empty (playing as the first bot) until :func:`fill_slot`."""
    torch.set_num_threads(torch_threads)
    return League(mix, rules, seed).pool


def fill_slot(
    pool: OpponentPool,
    index: int,
    layers: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]],
    meta: PolicyMetadata,
) -> None:
    """Put the snapshot given by its layers and metadata into slot ``index`` of ``pool``
    (a pool :func:`league_pool` built), in place."""
    net = MLPNet(meta.obs_dim, meta.hidden, meta.num_actions, meta.activation)
    with torch.no_grad():
        for linear, (weight, bias) in zip(net.linears(), layers, strict=True):
            linear.weight.copy_(torch.from_numpy(weight))
            linear.bias.copy_(torch.from_numpy(bias))
    for policy in pool.policies:
        if isinstance(policy, SnapshotSlot) and policy.index == index:
            policy.snapshot = TorchPolicy(net, meta)


EvaluationHook = Callable[[int, dict[str, EvalResult]], None]
"""Called after each periodic evaluation with the learner steps and the results per bot."""


def check_eval_bots(config: TrainConfig, rules: Rules) -> None:
    """Load each evaluation agent that is no bot name now, before the run starts: a damaged
    or mismatched agent file is refused before anything is written, not at the first
    evaluation, after minutes of training.

    Raises:
        ConfigError: naming ``eval.bots`` and what is wrong with the agent (its file).
    """
    for bot in config.eval.bots:
        if bot in BOT_NAMES:
            continue
        try:
            policy_factory(bot, rules)
        except ValueError as err:
            raise ConfigError(f"eval.bots: {err}") from None


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
        progress: Show a progress bar per bot (quiet under the training run's own bar).
        log: Where to say which evaluation runs now (e.g. ``sys.stderr``), or None.
    """
    policy = snapshot_policy(model, f"{config.name}@{steps}", config.algorithm, rules)
    results = {}
    for bot in config.eval.bots:
        if log is not None:
            say(
                f"[{config.name}] step {steps:,}: evaluating vs {bot} "
                f"({config.eval.games:,} hands)...",
                log,
            )
        # A bot by name; a shipped or exported agent through its factory (loaded once).
        opponent = bot if bot in BOT_NAMES else policy_factory(bot, rules)
        results[bot] = evaluate_vs(
            rules, policy, opponent, config.eval.games, seed=config.seed + 7919, progress=progress
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
        self.warmup = get_algorithm(config.algorithm).policy_warmup_steps(config)
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
        if self.warmup:
            freeze_policy(self.model, int(self.model.num_timesteps) < self.warmup)

    def _on_training_end(self) -> None:
        if self.warmup:
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
        record_evaluation(self.config.run_dir, steps, self.evaluations)
        summary = ", ".join(
            f"{bot} {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}]"
            for bot, r in results.items()
        )
        if self.log is not None:
            say(f"[{self.config.name}] step {steps:,}: win rate vs {summary}", self.log)
        if self.on_evaluation is not None:  # last: the checkpoints are on disk by now
            self.on_evaluation(steps, results)

    def save_latest(self) -> Path:
        """Write ``latest.zip`` / ``latest.json`` and the league: all ``--resume`` needs."""
        steps = int(self.model.num_timesteps)
        save_checkpoint(self.model, self.config, self.rules, "latest", steps, self.evaluations)
        save_group(self.league.save, self.config.run_dir, "league_slot*.safetensors")
        return self.config.run_dir / "latest.zip"


def record_evaluation(run_dir: Path, steps: int, results: dict[str, dict[str, Any]]) -> None:
    """Append one evaluation to the run's :data:`EVALUATIONS_FILE`.

    Written after the checkpoints, so a resumed run that evaluates a step again repeats its
    line: readers keep the last line of each step count.
    """
    line = json.dumps({"steps": steps, "results": results}, sort_keys=True)
    append_lines(run_dir / EVALUATIONS_FILE, [line], run_dir)


def read_curve(run_dir: Path, opponent: str) -> list[dict[str, Any]]:
    """A run's learning curve against ``opponent``, from its :data:`EVALUATIONS_FILE`
    (read by :func:`unolab.train.evaluation_log.read_evaluation_log`: a resumed run may
    repeat a step, and the last line of each step count is kept).

    Raises:
        unolab.train.evaluation_log.EvaluationLogError: naming the file and the line, for
            a line that is not an evaluation.
    """
    return [
        {key: value for key, value in dataclasses.asdict(point).items() if key != "opponent"}
        for point in read_evaluation_log(run_dir / EVALUATIONS_FILE)
        if point.opponent == opponent
    ]


def freeze_policy(model: Any, frozen: bool) -> None:
    """Stop (or restart) the training of a model's acting network, the value side untouched.

    The acting network is the algorithm's (:meth:`unolab.train.algorithms.TrainingAlgorithm.acting_modules`):
    for PPO the policy branch and the action head, so only the value network learns while it
    is frozen (``ppo.value_warmup_steps``).
    """
    for module in algorithm_for_model(model).acting_modules(model):
        for parameter in module.parameters():
            parameter.requires_grad_(not frozen)
