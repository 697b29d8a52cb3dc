"""Training configs: frozen dataclasses loaded from YAML, with ``--set key=value`` overrides.

A config names the rules, the table size, the algorithm's hyper-parameters, the opponents
mix (bots and self-play snapshots), the evaluation settings and the seed. Every key is
validated: an unknown key or a bad value raises :class:`~uno_env.ConfigError` naming it and
the allowed keys or values.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from agents import BOT_NAMES
from uno_env.configuration import ConfigError, from_mapping, load_yaml_mapping
from uno_env.rules import Rules, load_rules

__all__ = [
    "INIT_SUFFIXES",
    "DQNParams",
    "EvalConfig",
    "OpponentMix",
    "PPOParams",
    "TrainConfig",
    "apply_overrides",
    "load_config",
]


INIT_SUFFIXES = (".zip", ".safetensors")
"""The files ``init_from`` accepts: SB3 checkpoints and exported policies."""


def _check_bots(where: str, names: Sequence[str]) -> None:
    unknown = sorted(set(names) - set(BOT_NAMES))
    if unknown:
        raise ConfigError(f"{where}: unknown bot(s) {unknown}; bots are {list(BOT_NAMES)}")


@dataclass(frozen=True)
class OpponentMix:
    """Who the learner plays against.

    Attributes:
        bots: Bot name -> relative weight in the opponent pool.
        self_play: Total weight of the frozen snapshots of the learner (0 disables self-play).
        snapshot_every: Learner steps between two snapshots frozen into the pool.
        pool_size: Most recent snapshots kept in the pool.
    """

    bots: dict[str, float] = field(default_factory=lambda: {"random": 1.0})
    self_play: float = 0.0
    snapshot_every: int = 100_000
    pool_size: int = 5

    def __post_init__(self) -> None:
        _check_bots("opponents.bots", list(self.bots))
        if any(w < 0 for w in self.bots.values()) or self.self_play < 0:
            raise ConfigError("opponents: weights must be >= 0")
        if sum(self.bots.values()) <= 0 and self.self_play <= 0:
            raise ConfigError("opponents: give a bot a positive weight or set self_play > 0")
        if sum(self.bots.values()) <= 0:
            raise ConfigError(
                "opponents.bots: at least one bot needs a positive weight, to play until the "
                "first snapshot exists"
            )
        if self.snapshot_every < 1 or self.pool_size < 1:
            raise ConfigError("opponents: snapshot_every and pool_size must be >= 1")


@dataclass(frozen=True)
class EvalConfig:
    """Periodic evaluation against bots (seats alternated, Wilson 95% intervals).

    Attributes:
        every: Learner steps between evaluations.
        games: Games against each bot.
        bots: The bots to evaluate against; the first one picks the best checkpoint.
    """

    every: int = 100_000
    games: int = 2000
    bots: tuple[str, ...] = ("random", "mixbot")

    def __post_init__(self) -> None:
        _check_bots("eval.bots", self.bots)
        if not self.bots:
            raise ConfigError("eval.bots: name at least one bot")
        if self.every < 1 or self.games < 1:
            raise ConfigError("eval: every and games must be >= 1")


@dataclass(frozen=True)
class PPOParams:
    """MaskablePPO hyper-parameters (sb3-contrib names)."""

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

    def __post_init__(self) -> None:
        if self.n_steps < 1 or self.batch_size < 2 or self.n_epochs < 1:
            raise ConfigError("ppo: n_steps, n_epochs must be >= 1 and batch_size >= 2")
        if not 0 < self.gamma <= 1 or not 0 < self.gae_lambda <= 1:
            raise ConfigError("ppo: gamma and gae_lambda must be in (0, 1]")


@dataclass(frozen=True)
class DQNParams:
    """Masked DQN hyper-parameters (SB3 names)."""

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

    def __post_init__(self) -> None:
        if self.buffer_size < self.batch_size:
            raise ConfigError("dqn: buffer_size must be >= batch_size")
        if not 0 <= self.exploration_final_eps <= 1:
            raise ConfigError("dqn: exploration_final_eps must be in [0, 1]")


@dataclass(frozen=True)
class TrainConfig:
    """One training run.

    Attributes:
        name: Run name; checkpoints and logs go to ``<runs_dir>/<name>/``.
        algorithm: ``ppo`` (MaskablePPO) or ``dqn`` (masked DQN).
        rules: A rules preset name or a YAML path (see ``docs/rules.md``).
        num_players: Seats per table.
        total_steps: Learner decisions to train for.
        num_envs: Games stepped together in the batched VecEnv.
        seed: Seed of the envs, opponents and network initialisation.
        learner_seat: ``random`` (drawn per hand) or a fixed seat.
        torch_threads: Torch intra-op threads (1 is fastest on small shared machines).
        runs_dir: Where runs are written.
        opponents: The opponents mix.
        eval: The evaluation settings.
        ppo: PPO hyper-parameters (used when ``algorithm: ppo``).
        dqn: DQN hyper-parameters (used when ``algorithm: dqn``).
        init_from: Start the network from trained weights instead of a random
            initialisation (fine-tuning): an SB3 checkpoint ``.zip`` of the same algorithm
            and architecture (e.g. ``runs/<name>/latest.zip``: every network, value head and
            optimiser state included), or an exported ``.safetensors`` policy (the acting
            network only; a PPO value head starts fresh). ``None`` (the default) trains from
            scratch. Steps count from 0 in the new run; ``--resume`` ignores it.
    """

    name: str
    algorithm: Literal["ppo", "dqn"]
    rules: str = "official"
    num_players: int = 2
    total_steps: int = 1_000_000
    num_envs: int = 256
    seed: int = 0
    learner_seat: str = "random"
    torch_threads: int = 1
    runs_dir: str = "runs"
    opponents: OpponentMix = field(default_factory=OpponentMix)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ppo: PPOParams = field(default_factory=PPOParams)
    dqn: DQNParams = field(default_factory=DQNParams)
    init_from: str | None = None

    def __post_init__(self) -> None:
        if self.init_from is not None and Path(self.init_from).suffix not in INIT_SUFFIXES:
            raise ConfigError(
                f"init_from must be an SB3 checkpoint (.zip, e.g. runs/<name>/latest.zip) or an "
                f"exported policy (.safetensors), got {self.init_from!r}"
            )
        if not self.name or "/" in self.name:
            raise ConfigError(f"name must be a non-empty run name without '/', got {self.name!r}")
        if self.total_steps < 1 or self.num_envs < 1 or self.torch_threads < 1:
            raise ConfigError("total_steps, num_envs and torch_threads must be >= 1")
        if self.learner_seat != "random" and not self.learner_seat.isdigit():
            raise ConfigError(
                f"learner_seat must be 'random' or a seat number, got {self.learner_seat!r}"
            )
        self.build_rules()  # validates rules and num_players together

    def build_rules(self) -> Rules:
        """The rules of this run (preset or YAML, with ``num_players``)."""
        return load_rules(self.rules, num_players=self.num_players)

    @property
    def seat(self) -> int | Literal["random"]:
        """The learner seat as the envs take it."""
        return "random" if self.learner_seat == "random" else int(self.learner_seat)

    @property
    def run_dir(self) -> Path:
        """``<runs_dir>/<name>``."""
        return Path(self.runs_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (for YAML and checkpoint metadata)."""
        return _plain(dataclasses.asdict(self))

    def to_yaml(self) -> str:
        """The config as YAML."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``key=value`` overrides (dotted keys for nested fields; values parsed as YAML).

    Raises:
        ConfigError: for an override without ``=``.
    """
    out = copy.deepcopy(dict(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(
                f"--set expects key=value (e.g. ppo.learning_rate=1e-4), got {item!r}"
            )
        node = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"--set {key}: {part!r} is not a section")
            node = child
        node[parts[-1]] = yaml.safe_load(raw)
    return out


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    base: Mapping[str, Any] | None = None,
) -> TrainConfig:
    """Load and validate a training config from YAML, with ``key=value`` overrides.

    Args:
        path: A YAML file, or ``None`` to start from ``base``.
        overrides: ``key=value`` strings (``--set``).
        base: A mapping to start from when there is no file.
    """
    data: dict[str, Any] = load_yaml_mapping(path) if path is not None else dict(base or {})
    where = str(path) if path is not None else "config"
    return from_mapping(TrainConfig, apply_overrides(data, overrides), where=where)
