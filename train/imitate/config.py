"""The config of an imitation run (``uno-lab train imitate``): a frozen dataclass with bounds.

An imitation run clones one teacher, or a weighted mix of teachers, into a network of the
PPO policy's architecture: it plays games of its own with the teachers, records their
decisions and fits the network to them (:mod:`unolab.train.imitate`). Every key is validated when
the YAML is loaded: an unknown key, an unknown teacher, a size out of range or a NaN weight
raises :class:`~uno_env.ConfigError` naming the file, the key and the value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uno_env.config_values import (
    ConfigError,
    check_float,
    check_folder,
    check_folder_name,
    check_int,
    from_mapping,
)
from uno_env.observation import OBS_DIM
from uno_env.rules import DEFAULT_NUM_PLAYERS
from unolab.agents import AGENT_NAMES, BOT_NAMES
from unolab.agents.pimc import MAX_ROLLOUTS
from unolab.train.config_limits import (
    MAX_BATCH_SIZE,
    MAX_EVAL_GAMES,
    MAX_NUM_ENVS,
    MAX_TORCH_THREADS,
    MAX_WEIGHT,
    RunConfig,
    check_bounds,
    check_device_name,
    check_net_arch,
    float_field,
    int_field,
    load_with_overrides,
    make_paths_portable,
    seed_field,
    switch_field,
)

__all__ = [
    "CLONE_NAME",
    "MAX_IMITATION_EPOCHS",
    "MAX_SAMPLES",
    "ImitateConfig",
    "ImitateStage",
    "load_imitate_config",
]

MAX_SAMPLES = 4_000_000
"""Most recorded decisions: each holds a float32 observation (OBS_DIM entries) in memory,
so four million take about 6 GB; a few hundred thousand already clone a bot well."""

MAX_IMITATION_EPOCHS = 100
"""Most passes over the recorded decisions: more is a typo that never finishes."""

AGENT_SUFFIX = ".safetensors"
"""A teacher that is not a bot name is an exported agent (its ``.json`` beside it)."""


def _check_mix(where: str, mix: Mapping[str, float], *, agents_allowed: bool) -> None:
    """Bot names (or, for teachers, search agents and exported agents) with finite weights
    in [0, MAX_WEIGHT], one positive."""
    if not mix:
        raise ConfigError(f"{where}: name at least one bot with a weight, e.g. {{mixbot: 1.0}}")
    names = AGENT_NAMES if agents_allowed else BOT_NAMES
    for name, weight in mix.items():
        is_agent = agents_allowed and Path(name).suffix == AGENT_SUFFIX
        if name not in names and not is_agent:
            also = " or the path of an exported agent (.safetensors)" if agents_allowed else ""
            raise ConfigError(
                f"{where}: unknown bot {name!r}; give a bot name ({', '.join(names)}){also}"
            )
        if is_agent and not Path(name).is_file():
            raise ConfigError(f"{where}: the agent file {name!r} does not exist")
        check_float(f"{where}.{name}", weight, 0.0, MAX_WEIGHT, why="weights are relative")
    if sum(mix.values()) <= 0:
        raise ConfigError(f"{where}: at least one weight must be positive, got {dict(mix)}")


@dataclass(frozen=True)
class ImitateConfig(RunConfig):
    """One imitation run: who to clone, how much data, how to fit, how to report.

    Attributes:
        name: Run name; the clone and its report go to ``<runs_dir>/<name>/``.
        rules: A rules preset name or a YAML path (see ``docs/rules.md``).
        num_players: Seats per table.
        teachers: Agent name (a bot, or the search agent ``pimc``: expert iteration) or
            exported agent ``.safetensors`` -> relative weight. Each teacher seat of each
            game is held by one teacher drawn with these weights.
        teacher_budget: Rollouts per candidate action of a search teacher (``pimc``), 1 to
            :data:`unolab.agents.pimc.MAX_ROLLOUTS`, or iterations per decision of ``ismcts``
            (at most :data:`unolab.agents.ismcts.MAX_ITERATIONS`); ``None`` (the default): the
            agent's own default. Ignored by the other teachers.
        opponents: ``None`` (the default): every seat is a teacher seat. A mix of bots:
            one seat per game (drawn at random) is a teacher seat, the others are held by
            these bots, whose decisions are not recorded.
        samples: Teacher decisions to record, training and validation together (1,000 to
            :data:`MAX_SAMPLES`). Forced decisions (one legal action) are not counted:
            there is nothing to learn from them.
        validation: Share of the games held out for validation: their
            decisions are never trained on.
        games_per_batch: Games played side by side while recording.
        epochs: Passes over the training decisions.
        batch_size: Decisions per gradient step.
        learning_rate: Adam's learning rate, in (0, 1].
        weight_decay: Adam's L2 penalty, in [0, 1].
        label_smoothing: Share of the target spread over the other legal actions, in
            [0, 0.5): keeps the clone's logits moderate, so PPO can still explore from it.
        net_arch: Hidden layer widths: the ``ppo.net_arch`` of the run that starts from the
            clone (``init_from``).
        activation: ``tanh`` (MaskablePPO's policy network) or ``relu`` (the DQN Q-network).
        eval_games: Hands of each strength measurement.
        eval_bots: The bots the clone and its teachers are measured against (same deals).
        eval_teachers: Measure the teachers too (``true``, the default); ``false``: the
            clone alone (a search teacher's measurement takes many minutes, and a refit of a
            kept recording need not repeat it).
        seed: Seed of the games, the split, the initialisation and the minibatches.
        torch_threads: Torch intra-op threads.
        device: Where the clone is fitted: ``auto`` (the default: ``cuda`` when torch sees
            a GPU), ``cpu`` or ``cuda`` (:mod:`unolab.train.config_limits`). The clone is written
            as CPU tensors.
        runs_dir: Where runs are written.
        behaviour: ``None`` (the default): the teachers play every decision they record.
            A bot name or exported agent (typically a clone of an earlier run): it plays
            ``behaviour_share`` of the teacher seats' decisions, drawn at random, while the
            teacher's action is still the one recorded (DAgger: the teacher labels the
            positions the learner reaches by its own choices).
        behaviour_share: Share of the teacher seats' decisions ``behaviour`` plays, in
            (0, 1].
        keep_demonstrations: Write the recorded decisions to
            ``<run_dir>/demonstrations.npz`` for later runs to ``include`` (compressed:
            34 MB for 400,000 decisions of a search teacher).
        include: Demonstrations files of earlier runs (recorded under the same rules and
            observation version) to train on together with this run's own recording.
            With at least one, ``samples`` may be 0: fit on them alone.
        value_targets: ``None`` (the default): imitate the teacher's chosen action. A
            temperature in (0, 10]: where a search teacher recorded its estimates, imitate
            the softmax of its estimated rewards (range -1..1) divided by the temperature,
            over the actions it searched; low temperatures approach its choice, higher
            ones spread the target over near-equal actions instead of one noisy pick.
    """

    name: str
    rules: str = "official"
    num_players: int = DEFAULT_NUM_PLAYERS
    teachers: dict[str, float] = field(default_factory=lambda: {"mixbot": 1.0})
    opponents: dict[str, float] | None = None
    teacher_budget: int | None = int_field(
        None, 1, MAX_ROLLOUTS, "rollouts per candidate action of a search teacher"
    )
    samples: int = 1_000_000
    validation: float = float_field(0.05, 0.01, 0.5, "a share of the games")
    games_per_batch: int = int_field(4096, 1, MAX_NUM_ENVS)
    epochs: int = int_field(4, 1, MAX_IMITATION_EPOCHS)
    batch_size: int = int_field(1024, 1, MAX_BATCH_SIZE)
    learning_rate: float = float_field(1e-3, 0.0, 1.0, low_open=True)
    weight_decay: float = float_field(0.0, 0.0, 1.0)
    label_smoothing: float = float_field(0.0, 0.0, 0.5, "a share", high_open=True)
    net_arch: tuple[int, ...] = (256, 256)
    activation: Literal["tanh", "relu"] = "tanh"
    eval_games: int = int_field(4000, 1, MAX_EVAL_GAMES)
    eval_bots: tuple[str, ...] = ("random",)
    eval_teachers: bool = switch_field(True)
    seed: int = seed_field()
    torch_threads: int = int_field(1, 1, MAX_TORCH_THREADS)
    device: str = "auto"
    runs_dir: str = "runs"
    behaviour: str | None = None
    behaviour_share: float = float_field(0.5, 0.0, 1.0, "a share", low_open=True)
    keep_demonstrations: bool = switch_field(False)
    include: tuple[str, ...] = ()
    value_targets: float | None = float_field(
        None, 0.0, 10.0, "a temperature over estimated rewards in -1..1", low_open=True
    )

    def __post_init__(self) -> None:
        check_folder_name("name", self.name)
        make_paths_portable(self, "teachers", "behaviour", "include", "runs_dir")
        _check_mix("teachers", self.teachers, agents_allowed=True)
        if self.opponents is not None:
            _check_mix("opponents", self.opponents, agents_allowed=False)
        check_bounds(self)
        check_device_name("device", self.device)
        check_int(
            "samples",
            self.samples,
            0 if self.include else 1_000,
            MAX_SAMPLES,
            f"each holds {OBS_DIM} float32 features in memory"
            + ("" if self.include else "; 0 only with demonstrations to include"),
        )
        if self.behaviour is not None and (
            self.behaviour not in BOT_NAMES and not self.behaviour.endswith(AGENT_SUFFIX)
        ):
            raise ConfigError(
                f"behaviour: {self.behaviour!r} is neither a bot ({', '.join(BOT_NAMES)}) nor "
                f"an exported agent (a {AGENT_SUFFIX} file)"
            )
        for index, item in enumerate(self.include):
            # Existence is checked when the run starts (a recipe may name recordings that
            # its first steps make), before anything is recorded.
            if not isinstance(item, str) or not item.endswith(".npz"):
                raise ConfigError(
                    f"include[{index}]: {item!r} is not a demonstrations file; give the "
                    "demonstrations.npz of a run made with keep_demonstrations: true"
                )
        check_net_arch(self.net_arch)
        if not self.eval_bots:
            raise ConfigError("eval_bots: name at least one bot, e.g. [random]")
        unknown = sorted(set(self.eval_bots) - set(BOT_NAMES))
        if unknown:
            raise ConfigError(f"eval_bots: unknown bot(s) {unknown}; bots are {list(BOT_NAMES)}")
        check_folder("runs_dir", self.runs_dir)
        self.build_rules()  # validates rules and num_players together


CLONE_NAME = "clone"
"""The folder, inside a training run's folder, of its ``imitate`` stage's clone
(``<run_dir>/clone/clone.safetensors``)."""


@dataclass(frozen=True)
class ImitateStage:
    """A training config's ``imitate`` section: clone teachers first, then train from the clone.

    One ``uno-lab train ppo`` command then does both stages of the warm start: an imitation
    run into ``<run_dir>/clone/`` (as ``uno-lab train imitate`` would), then the PPO run
    from its clone, as with ``init_from``. The keys are an imitation config's (same meaning,
    same bounds, checked by building one); the rest comes from the training run: its rules
    and table size, ``ppo.net_arch`` with tanh activations, its seed, torch threads, and
    its ``eval.bots`` that are bots (the clone's measurement; the teachers are not measured).
    Each attribute is the :class:`ImitateConfig` key of its name, with a default of its own.
    """

    teachers: dict[str, float] = field(default_factory=lambda: {"mixbot": 1.0})
    samples: int = 200_000
    validation: float = 0.05
    games_per_batch: int = 2048
    epochs: int = 4
    batch_size: int = 1024
    learning_rate: float = 1e-3
    label_smoothing: float = 0.02
    eval_games: int = 1000

    def __post_init__(self) -> None:
        self.imitate_config(name=CLONE_NAME)  # the imitation config's checks, stated once

    def imitate_config(
        self, name: str, eval_bots: Sequence[str] = ("random",), **run: Any
    ) -> ImitateConfig:
        """The imitation run of this stage, with the training run's settings.

        Args:
            name: The imitation run's name.
            eval_bots: The training run's evaluation bots: those that are bots measure the
                clone (``random`` when none is).
            run: The training run's ``rules``, ``num_players``, ``net_arch``, ``seed``,
                ``torch_threads``, ``device`` and ``runs_dir`` (an imitation config's default where
                one is not given).

        Raises:
            ConfigError: naming the key at fault (``samples: ...``).
        """
        bots = tuple(bot for bot in eval_bots if bot in BOT_NAMES) or ("random",)
        stage = {key.name: getattr(self, key.name) for key in dataclasses.fields(self)}
        # The stage's own keys (teachers, samples, validation, ...) and the run's.
        return ImitateConfig(
            name=name, activation="tanh", eval_bots=bots, eval_teachers=False, **run, **stage
        )


def load_imitate_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    base: Mapping[str, Any] | None = None,
) -> ImitateConfig:
    """Load and validate an imitation config from YAML, with ``key=value`` overrides.

    Args:
        path: A YAML file, or ``None`` to start from ``base``.
        overrides: ``key=value`` strings (``--set``; values parsed as YAML).
        base: A mapping to start from when there is no file.

    Raises:
        ConfigError: one line naming the file, the key and the bad value (or the YAML
            problem and its line), or the bound it breaks.
        TypeError: for a ``path`` that is no text or path, a ``base`` that is no mapping, or
            ``overrides`` that are no list of ``key=value`` strings, naming the value.
    """

    def build(data: dict[str, Any], where: str) -> ImitateConfig:
        if "algorithm" in data and "teachers" not in data:  # a PPO or DQN config by mistake
            raise ConfigError(
                f"{where} is a training config (algorithm: {data['algorithm']}), not an "
                f"imitation config; train it with uno-lab train {data['algorithm']}"
            )
        if "name" not in data:
            raise ConfigError(
                f"{where}: name is missing; give the run a name (its clone is written to "
                "<runs_dir>/<name>/<name>.safetensors)"
            )
        return from_mapping(ImitateConfig, data, where=where)

    return load_with_overrides(path, overrides, base, build, example="samples=1000")
