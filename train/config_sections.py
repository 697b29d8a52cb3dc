"""The sections of a training config: opponents, evaluation, PPO and DQN hyper-parameters.

Each section is a frozen dataclass that checks its values on construction and raises
:class:`~uno_env.ConfigError` naming the key and its bounds (:mod:`unolab.train.config_limits`).
:class:`~unolab.train.config.TrainConfig` holds one of each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from uno_env.config_values import ConfigError, check_float
from uno_env.files import shown
from unolab.agents import BOT_NAMES
from unolab.agents.llm.spec import is_llm_spec
from unolab.agents.python_bots import CLASS_FORMS, is_class_spec
from unolab.agents.registry import shipped_agent_names
from unolab.agents.resolve import is_agent_file
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
    check_bounds,
    check_net_arch,
    float_field,
    int_field,
)

__all__ = ["DQNParams", "EvalConfig", "OpponentMix", "PPOParams"]


def _check_bots(where: str, names: Sequence[str]) -> None:
    """Each name is a bot, a shipped agent, a Python class (``my_bots.py:MyBot``, loaded
    when the run starts), an exported agent's path (its rules are checked when the run
    loads it, against the run's rules) or a language model's spec file (each of its
    decisions a request)."""
    shipped = shipped_agent_names()
    unknown = sorted(
        name
        for name in set(names)
        if name not in BOT_NAMES
        and name not in shipped
        and not is_agent_file(name)
        and not is_llm_spec(name)
        and not (is_class_spec(name) and name.partition(":")[0] not in BOT_NAMES)
    )
    if unknown:
        raise ConfigError(
            f"{where}: unknown bot(s) {unknown}; bots are {list(BOT_NAMES)}, or give a shipped "
            f"agent ({', '.join(shipped)}), {CLASS_FORMS}, an exported agent's path "
            "(.safetensors with its .json beside it) or a language model's spec file (.yaml)"
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

    Each bound is stated once, with its key (checked by ``__post_init__``).
    """

    bots: dict[str, float] = field(default_factory=lambda: {"random": 1.0})
    self_play: float = float_field(0.0, 0.0, MAX_WEIGHT, "weights are relative")
    snapshot_every: int = int_field(100_000, 1, MAX_STEPS)
    pool_size: int = int_field(5, 1, MAX_POOL_SIZE, "each snapshot is a network in memory")

    def __post_init__(self) -> None:
        _check_bots("opponents.bots", list(self.bots))
        for bot, weight in self.bots.items():
            check_float(f"bots.{bot}", weight, 0.0, MAX_WEIGHT, why="weights are relative")
        check_bounds(self)
        if sum(self.bots.values()) <= 0:  # with self-play too: no snapshot exists at first
            raise ConfigError(
                "opponents.bots: at least one bot needs a positive weight, to play until the "
                "first snapshot exists"
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

    every: int = int_field(100_000, 1, MAX_STEPS)
    games: int = int_field(2000, 1, MAX_EVAL_GAMES)
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
        check_bounds(self)


@dataclass(frozen=True)
class PPOParams:
    """MaskablePPO hyper-parameters (sb3-contrib names).

    Each bound is stated once, with its key (a bad value's error names the key, the
    allowed range and why).

    ``value_warmup_steps``: for its first steps the run trains the value network only, the
    policy frozen. A run started from a clone (``init_from``) gets a trained policy and an
    untrained value head, whose first advantages would undo the clone (docs/training.md).
    """

    learning_rate: float = float_field(3e-4, 0.0, 1.0, low_open=True)
    n_steps: int = int_field(128, 1, MAX_ROLLOUT)
    batch_size: int = int_field(8192, 2, MAX_BATCH_SIZE)
    n_epochs: int = int_field(4, 1, MAX_EPOCHS)
    gamma: float = float_field(0.995, 0.0, 1.0, "a discount", low_open=True)
    gae_lambda: float = float_field(0.95, 0.0, 1.0, "a discount", low_open=True)
    clip_range: float = float_field(0.2, 0.0, 1.0, low_open=True)
    ent_coef: float = float_field(0.01, 0.0, math.inf)
    vf_coef: float = float_field(0.5, 0.0, math.inf)
    max_grad_norm: float = float_field(0.5, 0.0, math.inf, low_open=True)
    net_arch: tuple[int, ...] = (256, 256)
    value_warmup_steps: int = int_field(0, 0, MAX_STEPS)

    def __post_init__(self) -> None:
        check_bounds(self)
        check_net_arch(self.net_arch)


@dataclass(frozen=True)
class DQNParams:
    """Masked DQN hyper-parameters (SB3 names).

    Each bound is stated once, with its key; ``n_step`` must also stay below the buffer's
    rows (:class:`~unolab.train.config.TrainConfig` checks it).
    """

    learning_rate: float = float_field(1e-4, 0.0, 1.0, low_open=True)
    buffer_size: int = int_field(200_000, 1, MAX_BUFFER_SIZE, "the replay buffer's memory")
    learning_starts: int = int_field(10_000, 0, MAX_STEPS)
    batch_size: int = int_field(256, 1, MAX_BATCH_SIZE)
    gamma: float = float_field(0.995, 0.0, 1.0, "a discount", low_open=True)
    train_freq: int = int_field(4, 1, MAX_STEPS, "0 would never train")
    gradient_steps: int = int_field(1, 1, MAX_GRADIENT_STEPS)
    target_update_interval: int = int_field(2_000, 1, MAX_STEPS)
    exploration_fraction: float = float_field(0.2, 0.0, 1.0)
    exploration_final_eps: float = float_field(0.05, 0.0, 1.0)
    net_arch: tuple[int, ...] = (256, 256)
    double_q: bool = False
    """Double-DQN target: the online network picks the best legal next action, the target
    network values it (curbs the over-estimation that the plain max causes)."""
    dueling: bool = False
    """Dueling Q-network: ``Q = V + A - mean(A)`` (exported folded into one last layer)."""
    n_step: int = int_field(1, 1, MAX_N_STEP, "rewards summed before bootstrapping")
    """Rewards summed before bootstrapping (n-step returns): a hand's final reward reaches
    the decisions ``n_step`` turns before it in one update."""
    hand_size_shaping: float = float_field(0.0, 0.0, 1.0, "the reward of a win is 1")
    """Potential-based reward shaping, per card of hand-size difference (0: none): each
    decision is credited at once with the change in (the others' mean hand size - one's
    own); the shaping telescopes over a hand, so it leaves the best policy unchanged."""

    def __post_init__(self) -> None:
        check_bounds(self)
        if self.buffer_size < self.batch_size:
            raise ConfigError(
                f"buffer_size must be >= batch_size, got buffer_size={self.buffer_size}, "
                f"batch_size={self.batch_size}"
            )
        check_net_arch(self.net_arch)
