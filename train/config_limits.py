"""The bounds of training config values, shared by the training, imitation and sweep configs.

The caps below are far above any useful run and far below what exhausts memory: a config
that passes them starts training instead of dying in an allocation minutes later.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

from uno_env.config_values import ConfigError, check_float, check_int
from uno_env.files import shown

__all__ = [
    "MAX_BATCH_SIZE",
    "MAX_BUFFER_SIZE",
    "MAX_EPOCHS",
    "MAX_EVAL_GAMES",
    "MAX_GRADIENT_STEPS",
    "MAX_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_NUM_ENVS",
    "MAX_N_STEP",
    "MAX_POOL_SIZE",
    "MAX_ROLLOUT",
    "MAX_STEPS",
    "MAX_TORCH_THREADS",
    "MAX_WEIGHT",
    "check_bounds",
    "check_config_source",
    "check_net_arch",
    "check_overrides",
    "float_field",
    "int_field",
]

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


def check_net_arch(net_arch: tuple[int, ...]) -> None:
    """``net_arch``: 1 to :data:`MAX_LAYERS` hidden layers of 1 to :data:`MAX_LAYER_WIDTH`."""
    if not 1 <= len(net_arch) <= MAX_LAYERS:
        raise ConfigError(
            f"net_arch: {list(net_arch)} must list 1 to {MAX_LAYERS} hidden layer widths "
            "(e.g. [256, 256])"
        )
    for i, width in enumerate(net_arch):
        check_int(f"net_arch[{i}]", width, 1, MAX_LAYER_WIDTH, "units of a hidden layer")


def check_overrides(overrides: object, argument: str = "overrides") -> list[str]:
    """Check the ``key=value`` items of a config loader (the ``--set`` of the commands).

    A string is refused rather than read one character at a time, and each item must be
    text (bytes, numbers and ``None`` are no ``key=value`` item).

    Args:
        overrides: The items as given.
        argument: The argument's name, as the message names it.

    Returns:
        The items, as a list.

    Raises:
        TypeError: naming ``argument`` and the value (or the item) as given.
    """
    if isinstance(overrides, (str, bytes)) or not isinstance(overrides, Sequence):
        raise TypeError(
            f"{argument}: expected a list of 'key=value' strings (e.g. ['seed=3']), "
            f"got {shown(overrides)}"
        )
    for item in overrides:
        if not isinstance(item, str):
            raise TypeError(
                f"{argument}: expected 'key=value' strings (e.g. 'seed=3'), got the item "
                f"{shown(item)}"
            )
    return list(overrides)


def check_config_source(path: object, base: object, argument: str = "path") -> None:
    """Check a config loader's ``path`` (a YAML file or None) and ``base`` (a mapping or None).

    Raises:
        TypeError: naming the argument and the value as given.
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"{argument}: expected a YAML config's path (text or a Path) or None, got {shown(path)}"
        )
    if base is not None and not isinstance(base, Mapping):
        raise TypeError(f"base: expected a mapping of config keys or None, got {shown(base)}")


def int_field(default: int, low: int, high: int, why: str = "") -> Any:
    """A config section's integer key with its bounds, declared once: :func:`check_bounds`
    refuses a value outside ``low..high`` as :func:`~uno_env.config_values.check_int` does."""
    check = functools.partial(check_int, low=low, high=high, why=why)
    return dataclasses.field(default=default, metadata={"check": check})


def float_field(
    default: float, low: float, high: float, why: str = "", *, low_open: bool = False
) -> Any:
    """A config section's number key with its bounds, declared once: :func:`check_bounds`
    refuses a value outside them as :func:`~uno_env.config_values.check_float` does."""
    check = functools.partial(check_float, low=low, high=high, low_open=low_open, why=why)
    return dataclasses.field(default=default, metadata={"check": check})


def check_bounds(section: Any) -> None:
    """Check each key of a config section declared by :func:`int_field` or
    :func:`float_field`, in the order of its fields.

    Raises:
        ConfigError: naming the first key out of its bounds, its value and the bounds.
    """
    for key in dataclasses.fields(section):
        check = key.metadata.get("check")
        if check is not None:
            check(key.name, getattr(section, key.name))
