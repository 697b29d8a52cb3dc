"""The sections of a training config: opponents, evaluation, PPO and DQN hyper-parameters.

Each section is a frozen dataclass that checks its values on construction and raises
:class:`~uno_env.ConfigError` naming the key and its bounds (:mod:`unolab.train.config_limits`).
:class:`~unolab.train.config.TrainConfig` holds one of each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from uno_env.config_values import ConfigError, check_float, check_int
from uno_env.files import shown
from unolab.agents import BOT_NAMES
from unolab.agents.python_bots import CLASS_FORMS, is_class_spec
from unolab.agents.resolve import is_agent_file
from unolab.agents.shipped import shipped_agent_names
from unolab.train.config_limits import (
    MAX_BATCH_SIZE,
    MAX_BUFFER_SIZE,
    MAX_EPOCHS,
    MAX_EVAL_GAMES,
    MAX_GRADIENT_STEPS,
    MAX_N_STEP,
    MAX_POOL_SIZE,
    MAX_ROLLOUT,
    MAX_STEPS,
    MAX_WEIGHT,
    check_net_arch,
)

__all__ = ["DQNParams", "EvalConfig", "OpponentMix", "PPOParams"]


def _check_bots(where: str, names: Sequence[str]) -> None:
    """Each name is a bot, a shipped agent, a Python class (``my_bots.py:MyBot``, loaded
    when the run starts) or an exported agent's path (its rules are checked when the run
    loads it, against the run's rules)."""
    shipped = shipped_agent_names()
    unknown = sorted(
        name
        for name in set(names)
        if name not in BOT_NAMES
        and name not in shipped
        and not is_agent_file(name)
        and not (is_class_spec(name) and name.partition(":")[0] not in BOT_NAMES)
    )
    if unknown:
        raise ConfigError(
            f"{where}: unknown bot(s) {unknown}; bots are {list(BOT_NAMES)}, or give a shipped "
            f"agent ({', '.join(shipped)}), {CLASS_FORMS} or an exported agent's path "
            "(.safetensors with its .json beside it)"
        )


@dataclass(frozen=True)
class OpponentMix:
    """Who the learner plays against.

    Attributes:
        bots: Bot name (or a shipped agent's name, or an exported agent's path: a frozen
            network opponent) -> relative weight in the opponent pool.
        self_play: Total weight of the frozen snapshots of the learner (0 disables self-play).
        snapshot_every: Learner steps between two snapshots frozen into the pool.
        pool_size: Most recent snapshots kept in the pool (each is a network held in memory).

    Each bound is stated once, by its check in ``__post_init__``.
    """

    bots: dict[str, float] = field(default_factory=lambda: {"random": 1.0})
    self_play: float = 0.0
    snapshot_every: int = 100_000
    pool_size: int = 5

    def __post_init__(self) -> None:
        _check_bots("opponents.bots", list(self.bots))
        for bot, weight in self.bots.items():
            check_float(f"bots.{bot}", weight, 0.0, MAX_WEIGHT, why="weights are relative")
        check_float("self_play", self.self_play, 0.0, MAX_WEIGHT, why="weights are relative")
        if sum(self.bots.values()) <= 0 and self.self_play <= 0:
            raise ConfigError("opponents: give a bot a positive weight or set self_play > 0")
        if sum(self.bots.values()) <= 0:
            raise ConfigError(
                "opponents.bots: at least one bot needs a positive weight, to play until the "
                "first snapshot exists"
            )
        check_int("snapshot_every", self.snapshot_every, 1, MAX_STEPS)
        check_int(
            "pool_size", self.pool_size, 1, MAX_POOL_SIZE, "each snapshot is a network in memory"
        )


@dataclass(frozen=True)
class EvalConfig:
    """Periodic evaluation against bots (seats alternated, Wilson 95% intervals).

    Attributes:
        every: Learner steps between evaluations.
        games: Games against each bot.
        bots: The bots to evaluate against (shipped agents and exported agents' paths too);
            the first one picks the best checkpoint.
    """

    every: int = 100_000
    games: int = 2000
    bots: tuple[str, ...] = ("random", "mixbot")

    def __post_init__(self) -> None:
        _check_bots("eval.bots", self.bots)
        if not self.bots:
            raise ConfigError("eval.bots: name at least one bot")
        # Evaluations are kept by bot name: a bot named twice would be played twice, its
        # first result replaced by the second.
        repeated = next((bot for i, bot in enumerate(self.bots) if bot in self.bots[:i]), None)
        if repeated is not None:
            raise ConfigError(f"bots: {shown(repeated)} is given twice; name each bot once")
        check_int("every", self.every, 1, MAX_STEPS)
        check_int("games", self.games, 1, MAX_EVAL_GAMES)


@dataclass(frozen=True)
class PPOParams:
    """MaskablePPO hyper-parameters (sb3-contrib names).

    Each bound is stated once, by its check in ``__post_init__`` (a bad value's error
    names the key, the allowed range and why).

    ``value_warmup_steps``: for its first steps the run trains the value network only, the
    policy frozen. A run started from a clone (``init_from``) gets a trained policy and an
    untrained value head, whose first advantages would undo the clone (docs/training.md).
    """

    learning_rate: float = 3e-4
    n_steps: int = 128
    batch_size: int = 8192
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: tuple[int, ...] = (256, 256)
    value_warmup_steps: int = 0

    def __post_init__(self) -> None:
        check_float("learning_rate", self.learning_rate, 0.0, 1.0, low_open=True)
        check_int("n_steps", self.n_steps, 1, MAX_ROLLOUT)
        check_int("batch_size", self.batch_size, 2, MAX_BATCH_SIZE)
        check_int("n_epochs", self.n_epochs, 1, MAX_EPOCHS)
        check_float("gamma", self.gamma, 0.0, 1.0, low_open=True, why="a discount")
        check_float("gae_lambda", self.gae_lambda, 0.0, 1.0, low_open=True, why="a discount")
        check_float("clip_range", self.clip_range, 0.0, 1.0, low_open=True)
        check_float("ent_coef", self.ent_coef, 0.0, math.inf)
        check_float("vf_coef", self.vf_coef, 0.0, math.inf)
        check_float("max_grad_norm", self.max_grad_norm, 0.0, math.inf, low_open=True)
        check_net_arch(self.net_arch)
        check_int("value_warmup_steps", self.value_warmup_steps, 0, MAX_STEPS)


@dataclass(frozen=True)
class DQNParams:
    """Masked DQN hyper-parameters (SB3 names).

    Each bound is stated once, by its check in ``__post_init__``; ``n_step`` must also
    stay below the buffer's rows (:class:`~unolab.train.config.TrainConfig` checks it).
    """

    learning_rate: float = 1e-4
    buffer_size: int = 200_000
    learning_starts: int = 10_000
    batch_size: int = 256
    gamma: float = 0.995
    train_freq: int = 4
    gradient_steps: int = 1
    target_update_interval: int = 2_000
    exploration_fraction: float = 0.2
    exploration_final_eps: float = 0.05
    net_arch: tuple[int, ...] = (256, 256)
    double_q: bool = False
    """Double-DQN target: the online network picks the best legal next action, the target
    network values it (curbs the over-estimation that the plain max causes)."""
    dueling: bool = False
    """Dueling Q-network: ``Q = V + A - mean(A)`` (exported folded into one last layer)."""
    n_step: int = 1
    """Rewards summed before bootstrapping (n-step returns): a hand's final reward reaches
    the decisions ``n_step`` turns before it in one update."""
    hand_size_shaping: float = 0.0
    """Potential-based reward shaping, per card of hand-size difference (0: none): each
    decision is credited at once with the change in (the others' mean hand size - one's
    own); the shaping telescopes over a hand, so it leaves the best policy unchanged."""

    def __post_init__(self) -> None:
        check_float("learning_rate", self.learning_rate, 0.0, 1.0, low_open=True)
        check_int("buffer_size", self.buffer_size, 1, MAX_BUFFER_SIZE, "the replay buffer's memory")
        check_int("batch_size", self.batch_size, 1, MAX_BATCH_SIZE)
        if self.buffer_size < self.batch_size:
            raise ConfigError(
                f"buffer_size must be >= batch_size, got buffer_size={self.buffer_size}, "
                f"batch_size={self.batch_size}"
            )
        check_int("learning_starts", self.learning_starts, 0, MAX_STEPS)
        check_float("gamma", self.gamma, 0.0, 1.0, low_open=True, why="a discount")
        check_int("train_freq", self.train_freq, 1, MAX_STEPS, "0 would never train")
        check_int("gradient_steps", self.gradient_steps, 1, MAX_GRADIENT_STEPS)
        check_int("target_update_interval", self.target_update_interval, 1, MAX_STEPS)
        check_float("exploration_fraction", self.exploration_fraction, 0.0, 1.0)
        check_float("exploration_final_eps", self.exploration_final_eps, 0.0, 1.0)
        check_int("n_step", self.n_step, 1, MAX_N_STEP, "rewards summed before bootstrapping")
        check_float(
            "hand_size_shaping", self.hand_size_shaping, 0.0, 1.0, why="the reward of a win is 1"
        )
        check_net_arch(self.net_arch)
