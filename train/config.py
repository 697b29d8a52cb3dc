"""Training configs: frozen dataclasses loaded from YAML, with ``--set key=value`` overrides.

A config names the rules, the table size, the algorithm's hyper-parameters, the opponents
mix (bots and self-play snapshots), the evaluation settings and the seed. Every key is
validated: an unknown key or a bad value raises :class:`~uno_env.ConfigError` naming it and
the allowed keys or values.

This module holds the whole run's :class:`TrainConfig` and its loader; its sections are in
:mod:`unolab.train.config_sections` and the largest values allowed in
:mod:`unolab.train.config_limits`. Each bound is stated once, by the check that enforces it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uno_env.config_values import (
    ConfigError,
    check_folder,
    check_folder_name,
    check_int,
    from_mapping,
)
from uno_env.files import shown, why_missing
from uno_env.rules import DEFAULT_NUM_PLAYERS
from unolab.train.config_limits import (
    MAX_NUM_ENVS,
    MAX_NUM_WORKERS,
    MAX_STEPS,
    MAX_TORCH_THREADS,
    RunConfig,
    check_bounds,
    check_device_name,
    check_overrides,
    int_field,
    load_with_overrides,
    make_paths_portable,
    seed_field,
)
from unolab.train.config_sections import DQNParams, EvalConfig, OpponentMix, PPOParams
from unolab.train.imitate.config import CLONE_NAME, ImitateConfig, ImitateStage

__all__ = [
    "INIT_SUFFIXES",
    "TrainConfig",
    "config_beside",
    "config_for",
    "load_config",
]


INIT_SUFFIXES = (".zip", ".safetensors")
"""The files ``init_from`` accepts: SB3 checkpoints and exported policies."""


@dataclass(frozen=True)
class TrainConfig(RunConfig):
    """One training run.

    Attributes:
        name: Run name; checkpoints and logs go to ``<runs_dir>/<name>/``.
        algorithm: A name of the algorithm registry
            (:data:`unolab.train.algorithms.ALGORITHMS`): ``ppo`` (MaskablePPO) or ``dqn``
            (masked DQN), or one registered by :func:`~unolab.train.algorithms.register`.
        rules: A rules preset name or a YAML path (see ``docs/rules.md``).
        num_players: Seats per table.
        total_steps: Learner decisions to train for.
        num_envs: Games stepped together in the batched VecEnv.
        seed: Seed of the envs, opponents and network initialisation (``0 <= seed < 2**63``).
        learner_seat: ``random`` (drawn per hand) or a fixed seat, ``0`` to
            ``num_players - 1``.
        torch_threads: Torch intra-op threads (1 is fastest on small shared machines; at
            most :data:`MAX_TORCH_THREADS`).
        num_workers: Processes stepping the games, the training process among them (1, the
            default: :class:`~uno_env.envs.vec_env.UnoVecEnv` in the training process; more:
            :class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv`, one shard of the games
            per worker, the first stepped by the training process itself). At most ``num_envs`` and :data:`MAX_NUM_WORKERS`. The games
            played depend on it (each worker's shard has its own key schedule).
        device: Where the networks train: ``auto`` (the default: ``cuda`` when torch sees
            a GPU, else ``cpu``), ``cpu`` or ``cuda``. Exported agents are CPU tensors
            whatever the device.
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
        imitate: Clone teachers first and start from the clone (a PPO run only; see
            :class:`~unolab.train.imitate.config.ImitateStage`): one command runs the
            imitation into ``<run_dir>/clone/``, then trains from its clone as
            ``init_from`` would. ``None`` (the default): no such stage. Not with
            ``init_from``; ``--resume`` skips it.
    """

    name: str
    algorithm: str
    rules: str = "official"
    num_players: int = DEFAULT_NUM_PLAYERS
    total_steps: int = int_field(1_000_000, 1, MAX_STEPS)
    num_envs: int = int_field(256, 1, MAX_NUM_ENVS, "the batched games' memory")
    seed: int = seed_field()
    learner_seat: str = "random"
    torch_threads: int = int_field(1, 1, MAX_TORCH_THREADS)
    num_workers: int = int_field(1, 1, MAX_NUM_WORKERS, "processes stepping the env")
    device: str = "auto"
    runs_dir: str = "runs"
    opponents: OpponentMix = field(default_factory=OpponentMix)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ppo: PPOParams = field(default_factory=PPOParams)
    dqn: DQNParams = field(default_factory=DQNParams)
    init_from: str | None = None
    imitate: ImitateStage | None = None

    def __post_init__(self) -> None:
        # The registry imports torch and SB3 (its models): only once a config is built.
        from unolab.train.algorithms import ALGORITHMS

        algorithm = ALGORITHMS.get(self.algorithm) if isinstance(self.algorithm, str) else None
        if algorithm is None:
            raise ConfigError(
                f"algorithm: {shown(self.algorithm)} is not allowed; choose one of "
                f"{list(ALGORITHMS)}"
            )
        make_paths_portable(self, "runs_dir", "init_from")
        if self.init_from is not None and Path(self.init_from).suffix not in INIT_SUFFIXES:
            raise ConfigError(
                f"init_from must be an SB3 checkpoint (.zip, e.g. runs/<name>/latest.zip) or an "
                f"exported policy (.safetensors), got {self.init_from!r}"
            )
        check_folder_name("name", self.name)
        check_bounds(self)
        check_device_name("device", self.device)
        if self.num_workers > self.num_envs:
            raise ConfigError(
                f"num_workers: {self.num_workers} is more than num_envs ({self.num_envs}): "
                "each worker steps at least one game"
            )
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
        algorithm.check_config(self)
        if self.imitate is not None:
            if self.init_from is not None:
                raise ConfigError(
                    f"imitate and init_from both start the network (init_from: "
                    f"{self.init_from!r}); give one of them"
                )
            try:
                self.imitation_config()
            except ConfigError as err:
                raise ConfigError(f"imitate: {err}") from None

    def imitation_config(self) -> ImitateConfig | None:
        """The imitation run of the ``imitate`` stage (``None`` without one): the clone goes
        to ``<run_dir>/clone/clone.safetensors``, shaped as this run's policy network."""
        if self.imitate is None:
            return None
        return self.imitate.imitate_config(
            CLONE_NAME,
            rules=self.rules,
            num_players=self.num_players,
            net_arch=self.ppo.net_arch,
            seed=self.seed,
            torch_threads=self.torch_threads,
            device=self.device,
            runs_dir=str(self.run_dir),
            eval_bots=self.eval.bots,
        )

    @property
    def seat(self) -> int | Literal["random"]:
        """The learner seat as the envs take it."""
        return "random" if self.learner_seat == "random" else int(self.learner_seat)


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


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    base: Mapping[str, Any] | None = None,
    *,
    check_init_from: bool = True,
    overrides_from: str | None = "--set",
) -> TrainConfig:
    """Load and validate a training config from YAML, with ``key=value`` overrides.

    Args:
        path: A YAML file, or ``None`` to start from ``base``.
        overrides: ``key=value`` strings (``--set``).
        base: A mapping to start from when there is no file.
        check_init_from: Check that ``init_from`` exists (a resumed run does not read it:
            its network has started already).
        overrides_from: How a message names an override that brought the error (``--set
            seed=1.5: expected an integer, got 1.5``); None: as the file (``config.seed``).

    Raises:
        ConfigError: one line naming the file (or the override), the key and the bad value
            (or the YAML problem and its line), the bound it breaks, or an ``init_from``
            that does not exist.
        TypeError: for a ``path`` that is no text or path, a ``base`` that is no mapping, or
            ``overrides`` that are no list of ``key=value`` strings, naming the value.
    """

    def build(checked: dict[str, Any], where: str) -> TrainConfig:
        seat = checked.get("learner_seat")
        if isinstance(seat, int) and not isinstance(seat, bool):  # `learner_seat: 1` in YAML
            checked = {**checked, "learner_seat": str(seat)}
        config = from_mapping(TrainConfig, checked, where=where)
        if check_init_from:
            _check_init_from(config, where)
        return config

    return load_with_overrides(
        path, overrides, base, build, example="ppo.learning_rate=1e-4", option=overrides_from
    )


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
        TypeError: for a ``source`` of none of these kinds or ``overrides`` that are no list
            of ``key=value`` strings, naming the value.
    """
    if not isinstance(source, (TrainConfig, Mapping, str, os.PathLike)):
        raise TypeError(
            f"source: expected a TrainConfig, a YAML config's path or a mapping of its keys, "
            f"got {shown(source)}"
        )
    overrides = check_overrides(overrides)
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


def config_beside(checkpoint: str | Path) -> TrainConfig:
    """The config of the run a checkpoint belongs to: the ``config.yaml`` beside it.

    ``init_from`` is not checked: the run's network has started already.

    Args:
        checkpoint: A run's checkpoint (``runs/<name>/latest.zip``).

    Raises:
        FileNotFoundError: no ``config.yaml`` beside the checkpoint.
        ConfigError: naming the file, for an invalid config, or a ``config.yaml`` that is
            not a regular file (a folder, a pipe).
    """
    path = Path(checkpoint).parent / "config.yaml"
    if not path.exists():  # a folder, a pipe...: the config loader says what it is
        raise FileNotFoundError(
            f"{str(path)!r} {why_missing(path)}: give a checkpoint of a training run "
            "(runs/<name>/latest.zip or best.zip, with the run's config.yaml next to it)"
        )
    return load_config(path, check_init_from=False)  # bad YAML: a ConfigError naming it
