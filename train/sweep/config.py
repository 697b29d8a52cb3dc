"""Sweep configs: frozen dataclasses loaded from YAML (the shipped ``sweep/*``: ``uno-lab config list``).

A sweep varies keys of one training config (``train_config``). Each key of ``search_space``
is a dotted training-config key (``ppo.learning_rate``, ``seed``, ``opponents.self_play``)
with one way to draw its values:

* ``{grid: [a, b, ...]}``: every value, in every combination with the other grid keys;
* ``{choice: [a, b, ...]}``: one value at random per sample;
* ``{uniform: [low, high]}``, ``{loguniform: [low, high]}``: a random number in the range;
* ``{randint: [low, high]}``: a random integer, ``low <= n < high``.

Seeds are a dimension like any other (``seed: {grid: [1, 2]}``). Every value is checked
against the training config before anything starts: a key that does not exist, a value the
training config refuses (both ends of a range) or an empty search space raises
:class:`~uno_env.config_values.ConfigError` naming the file, the key and the value.

Example (``configs/sweep/quick_lr_ent.yaml``)::

    name: quick_lr_ent
    train_config: ../ppo/quick.yaml
    search_space:
      ppo.learning_rate: {grid: [1.0e-4, 3.0e-4]}
      ppo.ent_coef: {grid: [0.0, 0.01]}
      seed: {grid: [1, 2]}
    max_concurrent: 2
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from uno_env.config_values import ConfigError, check_folder, check_folder_name, from_mapping
from uno_env.configuration import load_yaml_mapping
from unolab.train.config import TrainConfig
from unolab.train.config import load_config as load_train_config
from unolab.train.config_limits import (
    MAX_STEPS,
    check_bounds,
    check_config_source,
    int_field,
    make_paths_portable,
)

__all__ = [
    "KINDS",
    "MAX_CONCURRENT",
    "MAX_SAMPLES",
    "SET_BY_TRIAL",
    "Dimension",
    "SchedulerConfig",
    "SweepConfig",
    "grid_size",
    "load_sweep_config",
    "longest_run",
    "trial_overrides",
]

KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
"""How a dimension draws its values (see the module's docstring)."""

MAX_SAMPLES = 10_000
"""Most samples of the search space: each is a whole training run."""

MAX_CONCURRENT = 1_024
"""Most trials at once: more than any cluster's cores (each trial takes one)."""

MAX_GRID_VALUES = 1_000
"""Most values of one ``grid`` or ``choice`` dimension: each is checked, and a grid's product
is the number of trials."""


@dataclass(frozen=True)
class Dimension:
    """One key of the search space and how its values are drawn.

    Attributes:
        key: A dotted training-config key (``ppo.learning_rate``).
        kind: One of :data:`KINDS`.
        values: The values (``grid``, ``choice``) or the range ``(low, high)``.
    """

    key: str
    kind: str
    values: tuple[Any, ...]

    @property
    def checked_values(self) -> tuple[Any, ...]:
        """The values checked against the training config: every one, or both range ends
        (``randint``'s high end is excluded, so ``high - 1``)."""
        if self.kind == "randint":
            return (self.values[0], self.values[1] - 1)
        return self.values

    def to_tune(self) -> Any:
        """The Ray Tune search-space object of this dimension."""
        from ray import tune

        if self.kind == "grid":
            return tune.grid_search(list(self.values))
        if self.kind == "choice":
            return tune.choice(list(self.values))
        low, high = self.values
        draw = {"uniform": tune.uniform, "loguniform": tune.loguniform, "randint": tune.randint}
        return draw[self.kind](low, high)


@dataclass(frozen=True)
class SchedulerConfig:
    """Early stopping of bad trials.

    Attributes:
        kind: ``asha`` (asynchronous successive halving: at each rung, trials below the top
            ``1 / reduction_factor`` of their rung stop) or ``none`` (every trial runs to
            its end).
        grace_evaluations: Periodic evaluations every trial gets before it may be stopped.
        reduction_factor: ASHA's halving rate.
    """

    kind: Literal["asha", "none"] = "asha"
    grace_evaluations: int = int_field(1, 1, 1_000)
    reduction_factor: int = int_field(2, 2, 100)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True)
class SweepConfig:
    """A sweep: one training config, the keys varied, and how many trials run at once.

    Attributes:
        name: The sweep's name: everything goes to ``<output_dir>/<name>/``.
        train_config: The training config every trial starts from (a YAML file).
        search_space: Dotted training-config key -> ``{kind: values}`` (see the module).
        overrides: ``key=value`` items applied to every trial (e.g. ``total_steps=100000``).
        metric_bot: The evaluation bot whose win rate is the score (default: the training
            config's first ``eval.bots``).
        num_samples: Samples of the search space; with grid dimensions, each sample runs the
            whole grid.
        max_concurrent: Trials at once; each takes one CPU and one torch thread.
        scheduler: The early-stopping scheduler.
        output_dir: Parent folder of the sweep folder.
    """

    name: str
    train_config: str
    search_space: dict[str, Any] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    metric_bot: str | None = None
    num_samples: int = int_field(1, 1, MAX_SAMPLES, "each is a training run")
    max_concurrent: int = int_field(2, 1, MAX_CONCURRENT)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    output_dir: str = "runs/sweeps"

    def __post_init__(self) -> None:
        check_folder_name("name", self.name)
        check_bounds(self)
        make_paths_portable(self, "train_config", "output_dir")
        check_folder("output_dir", self.output_dir)

    @property
    def folder(self) -> Path:
        """``<output_dir>/<name>``: Tune's experiment, the trials' runs and the results."""
        return Path(self.output_dir) / self.name


SET_BY_TRIAL: Mapping[str, str] = MappingProxyType(
    {
        "name": "each trial's run is named after the trial",
        "runs_dir": "the trials' runs go into the sweep's folder",
        "torch_threads": "each trial trains on one CPU, with one torch thread",
    }
)
"""The training-config keys every trial sets itself (:mod:`unolab.train.sweep.run`), and why: a
search dimension of one would change nothing, so it is refused."""


def _dimension(where: str, key: str, spec: Any) -> Dimension:
    """Parse one entry of ``search_space`` (its values are checked later)."""
    if key in SET_BY_TRIAL:
        raise ConfigError(
            f"{where}: search_space.{key}: {key} is set by the sweep for every trial "
            f"({SET_BY_TRIAL[key]}), so varying it would change nothing; remove it"
        )
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise ConfigError(
            f"{where}: search_space.{key}: give one of {list(KINDS)} with its values, e.g. "
            f"{key}: {{grid: [1, 2]}}; got {spec!r}"
        )
    ((kind, values),) = spec.items()
    if kind not in KINDS:
        raise ConfigError(
            f"{where}: search_space.{key}: unknown kind {kind!r}; kinds are {list(KINDS)}"
        )
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise ConfigError(f"{where}: search_space.{key}.{kind}: expected a list, got {values!r}")
    values = tuple(values)
    if kind in ("grid", "choice"):
        if not 1 <= len(values) <= MAX_GRID_VALUES:
            raise ConfigError(
                f"{where}: search_space.{key}.{kind}: list 1 to {MAX_GRID_VALUES} values, "
                f"got {len(values)}"
            )
        seen: set[str] = set()
        for value in values:  # a value twice runs (or weighs) the same trial twice
            shown_value = json.dumps(value, sort_keys=True, default=repr)
            if shown_value in seen:
                raise ConfigError(
                    f"{where}: search_space.{key}.{kind}: the value {shown_value[:60]} is given "
                    "twice; list each value once"
                )
            seen.add(shown_value)
        return Dimension(key, kind, values)
    numbers = len(values) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )
    if not numbers or not values[0] < values[1]:
        raise ConfigError(
            f"{where}: search_space.{key}.{kind}: expected [low, high] with low < high, got "
            f"{list(values)}"
        )
    if kind == "loguniform" and values[0] <= 0:
        raise ConfigError(
            f"{where}: search_space.{key}.loguniform: the range must be positive, got "
            f"{list(values)}"
        )
    if kind == "randint" and not all(isinstance(v, int) for v in values):
        raise ConfigError(
            f"{where}: search_space.{key}.randint: expected two integers, got {list(values)}"
        )
    return Dimension(key, kind, values)


def _keys_of(data: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Every dotted key of a training config's mapping (sections and their fields)."""
    out = set()
    for key, value in data.items():
        out.add(prefix + key)
        if isinstance(value, Mapping) and key != "bots":  # opponents.bots.<name> are data
            out |= _keys_of(value, f"{prefix}{key}.")
    return out


def _check_key(where: str, key: str, base: TrainConfig) -> None:
    """Refuse a dotted key the training config does not have, naming the keys it has."""
    keys = _keys_of(base.to_dict())
    if key in keys or key.startswith("opponents.bots."):
        return
    section, _, _ = key.rpartition(".")
    near = sorted(k for k in keys if k.rpartition(".")[0] == section)
    raise ConfigError(
        f"{where}: search_space: {key!r} is not a key of the training config "
        f"{base.name!r}; keys{' of ' + section if section else ''} are {near}"
    )


def _check_set_once(where: str, overrides: Sequence[str], dimensions: Sequence[Dimension]) -> None:
    """Refuse a key that both ``overrides`` and ``search_space`` set (or a section of it):
    a trial would take one of the two values silently.

    Raises:
        ConfigError: naming the key and both places.
    """
    for item in overrides:
        key = item.partition("=")[0].strip()
        for dim in dimensions:
            if key == dim.key or key.startswith(dim.key + ".") or dim.key.startswith(key + "."):
                raise ConfigError(
                    f"{where}: {key!r} is set both in overrides ({item[:60]!r}) and in "
                    f"search_space ({dim.key}); set it in one of them"
                )


def trial_overrides(params: Mapping[str, Any]) -> list[str]:
    """``key=value`` items (the values as JSON, which YAML reads back) for one trial."""
    return [f"{key}={json.dumps(value)}" for key, value in params.items()]


def load_sweep_config(path: str | Path) -> tuple[SweepConfig, TrainConfig, list[Dimension]]:
    """Load a sweep config, its training config and its dimensions, every value checked.

    Returns:
        The sweep, the training config every trial starts from (``overrides`` applied), and
        the dimensions of the search space.

    Raises:
        ConfigError: naming the file, the key and the value at fault: an unknown key, a
            search-space key the training config does not have, a value it refuses, an
            empty search space, ``metric_bot`` not among the evaluation bots.
        FileNotFoundError: for a missing file.
        TypeError: for a ``path`` that is no text or path, naming the value.
    """
    check_config_source(path, None)
    where = str(path)
    sweep = from_mapping(SweepConfig, load_yaml_mapping(path), where=where)
    beside = Path(path).parent / sweep.train_config
    if not Path(sweep.train_config).is_file() and beside.is_file():
        # A path relative to the sweep file: how a shipped sweep names its training config,
        # which works from the package data as from a checkout.
        sweep = dataclasses.replace(sweep, train_config=str(beside))
    if not Path(sweep.train_config).is_file():
        raise ConfigError(
            f"{where}: train_config: {sweep.train_config!r} does not exist, here or beside "
            "the sweep file (give a training config's path, e.g. ../ppo/quick.yaml beside "
            "a sweep in configs/sweep/)"
        )
    named = f"{where}: overrides:"  # an override at fault is named as the item given
    try:
        base = load_train_config(sweep.train_config, sweep.overrides, overrides_from=named)
    except ConfigError as err:
        if str(err).startswith(named):
            raise
        raise ConfigError(f"{where}: train_config: {err}") from None
    if not sweep.search_space:
        raise ConfigError(
            f"{where}: search_space is empty: name at least one training-config key to vary, "
            "e.g. ppo.learning_rate: {grid: [1.0e-4, 3.0e-4]}"
        )
    dimensions = [_dimension(where, key, spec) for key, spec in sweep.search_space.items()]
    _check_set_once(where, sweep.overrides, dimensions)
    for dim in dimensions:
        _check_key(where, dim.key, base)
        for value in dim.checked_values:
            try:
                load_train_config(
                    None,
                    trial_overrides({dim.key: value}),
                    base=base.to_dict(),
                    overrides_from=None,
                )
            except ConfigError as err:
                raise ConfigError(
                    f"{where}: search_space.{dim.key}: the value {value!r} is refused: {err}"
                ) from None
    if sweep.metric_bot is not None and sweep.metric_bot not in base.eval.bots:
        raise ConfigError(
            f"{where}: metric_bot {sweep.metric_bot!r} is not one of the training config's "
            f"eval.bots {list(base.eval.bots)}"
        )
    return sweep, base, dimensions


def grid_size(dimensions: Sequence[Dimension]) -> int:
    """Trials per sample: the product of the grid dimensions' sizes."""
    return math.prod(len(d.values) for d in dimensions if d.kind == "grid")


def longest_run(base: TrainConfig, dimensions: Sequence[Dimension]) -> int:
    """The most learner steps any trial may train (ASHA's horizon)."""
    steps = [base.total_steps]
    for dim in dimensions:
        if dim.key == "total_steps":
            steps += [int(v) for v in dim.checked_values]
    return min(max(steps), MAX_STEPS)
