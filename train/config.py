"""Training configs: frozen dataclasses loaded from YAML, with ``--set key=value`` overrides.

A config names the rules, the table size, the algorithm's hyper-parameters, the opponents
mix (bots and self-play snapshots), the evaluation settings and the seed. Every key is
validated: an unknown key or a bad value raises :class:`~uno_env.ConfigError` naming it and
the allowed keys or values.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from uno_env.configuration import (
    ConfigError,
    apply_overrides,
    check_float,
    check_folder,
    check_int,
    check_seed,
    from_mapping,
    load_yaml_mapping,
)
from uno_env.rules import DEFAULT_NUM_PLAYERS, Rules, load_rules
from unolab.agents import BOT_NAMES

__all__ = [
    "INIT_SUFFIXES",
    "MAX_BATCH_SIZE",
    "MAX_BUFFER_SIZE",
    "MAX_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_NUM_ENVS",
    "MAX_N_STEP",
    "MAX_POOL_SIZE",
    "MAX_ROLLOUT",
    "MAX_STEPS",
    "DQNParams",
    "EvalConfig",
    "OpponentMix",
    "PPOParams",
    "TrainConfig",
    "check_net_arch",
    "config_for",
    "load_config",
]


INIT_SUFFIXES = (".zip", ".safetensors")
"""The files ``init_from`` accepts: SB3 checkpoints and exported policies."""

# The caps below are far above any useful run and far below what exhausts memory: a config
# that passes them starts training instead of dying in an allocation minutes later.
MAX_STEPS = 10**12
"""Most steps for any step count (``total_steps``, ``every``, ``snapshot_every``, ...): a
trillion decisions is years of training on one machine."""

MAX_NUM_ENVS = 65_536
"""Most games stepped together: the batched state and observations of 65,536 games already
take gigabytes, and the throughput of the core stops growing long before."""

MAX_POOL_SIZE = 1_000
"""Most self-play snapshots kept: each one is a copy of the network held in memory."""

MAX_LAYERS = 16
"""Most hidden layers of ``net_arch``: the lab's networks have two."""

MAX_LAYER_WIDTH = 4_096
"""Widest hidden layer of ``net_arch``: the observation has a few hundred entries, and a
wider square layer costs hundreds of megabytes with its optimiser state."""

MAX_BATCH_SIZE = 2**20
"""Largest minibatch (PPO and DQN): beyond a million samples a batch does not fit in memory."""

MAX_ROLLOUT = 2**22
"""Most transitions of one PPO rollout (``ppo.n_steps * num_envs``): the rollout buffer holds
an observation and an action mask for each, gigabytes at four million."""

MAX_BUFFER_SIZE = 2_000_000
"""Most transitions of the DQN replay buffer: two observations and a mask per transition
make two million of them several gigabytes."""

MAX_WEIGHT = 1e6
"""Largest opponent weight: weights are relative, and huge ones overflow their sum."""

MAX_GRADIENT_STEPS = 1_000
"""Most DQN gradient steps per update: more is a typo, and each one is a minibatch."""

MAX_N_STEP = 1_000
"""Longest DQN n-step return: longer than any hand, where it is the Monte-Carlo return."""

MAX_EPOCHS = 1_000
"""Most PPO epochs over one rollout: more is a typo that makes a run never finish."""

MAX_EVAL_GAMES = 1_000_000
"""Most evaluation games against each bot: a million already gives a 0.1% interval."""

MAX_TORCH_THREADS = 1_024
"""Most torch threads: more than any machine's cores."""

MAX_NAME_BYTES = 200
"""Longest run name, in UTF-8 bytes: it is a folder name, and file systems allow 255."""


def _check_bots(where: str, names: Sequence[str]) -> None:
    unknown = sorted(set(names) - set(BOT_NAMES))
    if unknown:
        raise ConfigError(f"{where}: unknown bot(s) {unknown}; bots are {list(BOT_NAMES)}")


@dataclass(frozen=True)
class OpponentMix:
    """Who the learner plays against.

    Attributes:
        bots: Bot name -> relative weight in the opponent pool (finite, 0 to
            :data:`MAX_WEIGHT`).
        self_play: Total weight of the frozen snapshots of the learner (0 disables self-play;
            at most :data:`MAX_WEIGHT`).
        snapshot_every: Learner steps between two snapshots frozen into the pool (1 to
            :data:`MAX_STEPS`).
        pool_size: Most recent snapshots kept in the pool (1 to :data:`MAX_POOL_SIZE`: each
            is a network held in memory).
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
        every: Learner steps between evaluations (1 to :data:`MAX_STEPS`).
        games: Games against each bot (1 to :data:`MAX_EVAL_GAMES`).
        bots: The bots to evaluate against; the first one picks the best checkpoint.
    """

    every: int = 100_000
    games: int = 2000
    bots: tuple[str, ...] = ("random", "mixbot")

    def __post_init__(self) -> None:
        _check_bots("eval.bots", self.bots)
        if not self.bots:
            raise ConfigError("eval.bots: name at least one bot")
        check_int("every", self.every, 1, MAX_STEPS)
        check_int("games", self.games, 1, MAX_EVAL_GAMES)


@dataclass(frozen=True)
class PPOParams:
    """MaskablePPO hyper-parameters (sb3-contrib names).

    Bounds (checked on construction): ``learning_rate`` in (0, 1]; ``n_steps`` 1 to
    :data:`MAX_ROLLOUT` (and ``n_steps * num_envs`` at most that, see :class:`TrainConfig`);
    ``batch_size`` 2 to :data:`MAX_BATCH_SIZE` (SB3 needs two samples to normalise
    advantages); ``n_epochs`` 1 to :data:`MAX_EPOCHS`; ``gamma`` and ``gae_lambda`` in
    (0, 1] (discounts); ``clip_range`` in (0, 1] (a ratio clip of 0 or less never updates);
    ``ent_coef`` and ``vf_coef`` >= 0 and ``max_grad_norm`` > 0 (finite); ``net_arch`` 1 to
    :data:`MAX_LAYERS` layers of 1 to :data:`MAX_LAYER_WIDTH` units; ``value_warmup_steps``
    0 to :data:`MAX_STEPS`.

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

    Bounds (checked on construction): ``learning_rate`` in (0, 1]; ``buffer_size`` 1 to
    :data:`MAX_BUFFER_SIZE`; ``batch_size`` 1 to ``buffer_size``; ``learning_starts`` 0 to
    :data:`MAX_STEPS`; ``gamma`` in (0, 1] (a discount); ``train_freq`` and
    ``target_update_interval`` 1 to :data:`MAX_STEPS` (0 would never train or never update
    the target); ``gradient_steps`` 1 to :data:`MAX_GRADIENT_STEPS`;
    ``exploration_fraction`` and ``exploration_final_eps`` in [0, 1] (a fraction, a
    probability); ``hand_size_shaping`` in [0, 1]; ``n_step`` 1 to :data:`MAX_N_STEP` (and
    below ``buffer_size / num_envs``, the rows of the buffer, see :class:`TrainConfig`);
    ``net_arch`` as for PPO.
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


@dataclass(frozen=True)
class TrainConfig:
    """One training run.

    Attributes:
        name: Run name; checkpoints and logs go to ``<runs_dir>/<name>/``.
        algorithm: ``ppo`` (MaskablePPO) or ``dqn`` (masked DQN).
        rules: A rules preset name or a YAML path (see ``docs/rules.md``).
        num_players: Seats per table.
        total_steps: Learner decisions to train for (1 to :data:`MAX_STEPS`).
        num_envs: Games stepped together in the batched VecEnv (1 to :data:`MAX_NUM_ENVS`).
        seed: Seed of the envs, opponents and network initialisation (``0 <= seed < 2**63``).
        learner_seat: ``random`` (drawn per hand) or a fixed seat, ``0`` to
            ``num_players - 1``.
        torch_threads: Torch intra-op threads (1 is fastest on small shared machines; at
            most :data:`MAX_TORCH_THREADS`).
        runs_dir: Where runs are written (a folder, or one that can be created).
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
            :func:`load_config` checks that the file exists, unless it lies under
            ``runs_dir`` (the output of an earlier stage, checked when training starts).
    """

    name: str
    algorithm: Literal["ppo", "dqn"]
    rules: str = "official"
    num_players: int = DEFAULT_NUM_PLAYERS
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
        if (
            not self.name
            or any(c in self.name for c in "/\\\0")
            or self.name in (".", "..")
            or len(self.name.encode()) > MAX_NAME_BYTES
        ):
            raise ConfigError(
                f"name must be a plain folder name (no '/', '\\', '.' or '..', at most "
                f"{MAX_NAME_BYTES} bytes), got {self.name!r}"
            )
        check_int("total_steps", self.total_steps, 1, MAX_STEPS)
        check_int("num_envs", self.num_envs, 1, MAX_NUM_ENVS, "the batched games' memory")
        check_int("torch_threads", self.torch_threads, 1, MAX_TORCH_THREADS)
        check_seed("seed", self.seed)
        check_folder("runs_dir", self.runs_dir)
        rules = self.build_rules()  # validates rules and num_players together
        if self.learner_seat != "random":
            if not self.learner_seat.isdecimal():
                raise ConfigError(
                    f"learner_seat must be 'random' or a seat number, got {self.learner_seat!r}"
                )
            check_int(
                "learner_seat",
                int(self.learner_seat),
                0,
                rules.num_players - 1,
                f"seats of a {rules.num_players}-player table",
            )
        if self.algorithm == "dqn":
            rows = self.dqn.buffer_size // self.num_envs
            if self.dqn.n_step >= max(rows, 1):
                raise ConfigError(
                    f"dqn.n_step must be below the replay buffer's rows (buffer_size / "
                    f"num_envs = {rows}), got n_step={self.dqn.n_step}: raise dqn.buffer_size"
                )
        if self.algorithm == "ppo":
            check_int(
                "ppo.n_steps * num_envs",
                self.ppo.n_steps * self.num_envs,
                2,
                MAX_ROLLOUT,
                "the rollout buffer holds that many transitions; SB3 needs two",
            )

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


def check_net_arch(net_arch: tuple[int, ...]) -> None:
    """``net_arch``: 1 to :data:`MAX_LAYERS` hidden layers of 1 to :data:`MAX_LAYER_WIDTH`."""
    if not 1 <= len(net_arch) <= MAX_LAYERS:
        raise ConfigError(
            f"net_arch: {list(net_arch)} must list 1 to {MAX_LAYERS} hidden layer widths "
            "(e.g. [256, 256])"
        )
    for i, width in enumerate(net_arch):
        check_int(f"net_arch[{i}]", width, 1, MAX_LAYER_WIDTH, "units of a hidden layer")


def _check_init_from(config: TrainConfig, where: str) -> None:
    """``init_from`` must exist now, unless it lies under ``runs_dir``: a staged config
    (``official_2p.yaml``) names the output of a run not yet trained; training checks it
    when it starts."""
    if config.init_from is None:
        return
    path = Path(config.init_from)
    runs = Path(os.path.abspath(config.runs_dir))
    if Path(os.path.abspath(path)).is_relative_to(runs):
        return
    if path.is_dir():
        raise ConfigError(
            f"{where}: init_from: {config.init_from!r} is a folder; give a checkpoint .zip or "
            "an exported .safetensors file"
        )
    if not path.is_file():
        raise ConfigError(
            f"{where}: init_from: {config.init_from!r} does not exist (give an SB3 checkpoint "
            ".zip or an exported .safetensors policy)"
        )


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


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

    Raises:
        ConfigError: one line naming the file, the key and the bad value (or the YAML
            problem and its line), the bound it breaks, or an ``init_from`` that does not
            exist.
    """
    data: dict[str, Any] = load_yaml_mapping(path) if path is not None else dict(base or {})
    where = str(path) if path is not None else "config"
    data = apply_overrides(data, overrides, example="ppo.learning_rate=1e-4")
    seat = data.get("learner_seat")
    if isinstance(seat, int) and not isinstance(seat, bool):  # `learner_seat: 1` in YAML
        data = {**data, "learner_seat": str(seat)}
    config = from_mapping(TrainConfig, data, where=where)
    _check_init_from(config, where)
    return config


def config_for(
    source: TrainConfig | str | Path | Mapping[str, Any],
    algorithm: str,
    overrides: Sequence[str] = (),
) -> TrainConfig:
    """A training config of ``algorithm`` from a config object, a YAML file or a mapping.

    A mapping without ``algorithm`` takes ``algorithm``; a source of another algorithm is
    refused (a PPO config is not silently trained with DQN).

    Args:
        source: The config, the path of a YAML config, or a mapping of its keys.
        algorithm: ``ppo`` or ``dqn``.
        overrides: ``key=value`` items applied on top (as ``--set``).

    Raises:
        ConfigError: naming the file or key, for an invalid config or another algorithm.
    """
    if isinstance(source, TrainConfig):
        config = load_config(None, overrides, base=source.to_dict()) if overrides else source
    elif isinstance(source, Mapping):
        config = load_config(None, overrides, base={"algorithm": algorithm, **source})
    else:
        config = load_config(source, overrides)
    if config.algorithm != algorithm:
        raise ConfigError(
            f"{source if isinstance(source, (str, Path)) else 'config'}: algorithm "
            f"{config.algorithm!r}, not {algorithm!r}; train it with "
            f"uno-lab train {config.algorithm}"
        )
    return config
