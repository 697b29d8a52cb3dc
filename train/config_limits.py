"""The bounds of config values and the loading every config shares (training, imitation,
sweep, exploitability, tournament).

The caps below are far above any useful run and far below what exhausts memory: a config
that passes them starts training instead of dying in an allocation minutes later. A key's
bounds are declared once, with the key (:func:`int_field`, :func:`float_field`,
:func:`seed_field`), and :func:`check_bounds` checks them all; :func:`load_with_overrides`
reads a config's YAML with its ``--set`` items, naming an item that brought an error as it
was given. A training run and an imitation run each write into ``<runs_dir>/<name>/``:
:class:`RunConfig` is what their configs share (the folder, the rules, the YAML).

**The device**: a config's ``device`` key (``auto``, ``cpu`` or ``cuda``) says where the networks train.

``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``. The key is checked when a config
is loaded (a GPU config loads on any machine) and resolved when a run starts
(:func:`resolve_device`): ``cuda`` without a GPU is refused then, in one line. What a run
writes for others to load (exported agents, league snapshots, clones) is CPU tensors
whatever the device.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml

from uno_env.config_values import ConfigError, check_float, check_int, check_seed, check_switch
from uno_env.configuration import apply_overrides, load_yaml_mapping
from uno_env.console import portable_path
from uno_env.files import shown
from uno_env.rules import Rules, load_rules

__all__ = [
    "DEVICES",
    "MAX_BATCH_SIZE",
    "MAX_BUFFER_SIZE",
    "MAX_EPOCHS",
    "MAX_EVAL_GAMES",
    "MAX_GRADIENT_STEPS",
    "MAX_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_NUM_ENVS",
    "MAX_NUM_WORKERS",
    "MAX_N_STEP",
    "MAX_POOL_SIZE",
    "MAX_ROLLOUT",
    "MAX_STEPS",
    "MAX_TORCH_THREADS",
    "MAX_WEIGHT",
    "RunConfig",
    "check_bounds",
    "check_config_source",
    "check_device_name",
    "check_net_arch",
    "check_overrides",
    "float_field",
    "int_field",
    "load_with_overrides",
    "make_paths_portable",
    "resolve_device",
    "seed_field",
    "switch_field",
]


T = TypeVar("T")


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

MAX_NUM_WORKERS = 256
"""Most workers of the training env (the bound of
:class:`uno_env.envs.shared_vec_env.ShardedUnoVecEnv` itself): more than any machine's cores."""


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


def _checked(default: Any, check: Callable[..., Any], **bounds: Any) -> Any:
    """A dataclass field whose value :func:`check_bounds` checks with ``check``."""
    return dataclasses.field(
        default=default, metadata={"check": functools.partial(check, **bounds)}
    )


def int_field(default: int | None, low: int, high: int, why: str = "") -> Any:
    """A config's integer key with its bounds, declared once: :func:`check_bounds` refuses a
    value outside ``low..high`` as :func:`~uno_env.config_values.check_int` does (a key whose
    default is ``None`` may also be ``None``)."""
    return _checked(default, check_int, low=low, high=high, why=why)


def float_field(
    default: float | None,
    low: float,
    high: float,
    why: str = "",
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Any:
    """A config's number key with its bounds, declared once: :func:`check_bounds` refuses a
    value outside them as :func:`~uno_env.config_values.check_float` does (a key whose
    default is ``None`` may also be ``None``)."""
    return _checked(
        default, check_float, low=low, high=high, low_open=low_open, high_open=high_open, why=why
    )


def seed_field(default: int | None = 0) -> Any:
    """A config's seed key: :func:`check_bounds` checks it as
    :func:`~uno_env.config_values.check_seed` does (``0 <= seed < 2**63``)."""
    return _checked(default, check_seed)


def switch_field(default: bool) -> Any:
    """A config's switch: :func:`check_bounds` refuses anything but ``True`` or ``False``
    (:func:`~uno_env.config_values.check_switch`)."""
    return _checked(default, check_switch)


def check_bounds(section: Any) -> None:
    """Check each key of a config declared by :func:`int_field`, :func:`float_field`,
    :func:`seed_field` or :func:`switch_field`, in the order of its fields.

    Raises:
        ConfigError: naming the first key out of its bounds, its value and the bounds.
    """
    for key in dataclasses.fields(section):
        check = key.metadata.get("check")
        value = getattr(section, key.name)
        if check is not None and not (value is None and key.default is None):
            check(key.name, value)


def make_paths_portable(config: Any, *keys: str) -> None:
    """Read the path keys of a frozen config with either separator, in place: a config
    written on Windows (``runs\\mine``, ``agents\\a.safetensors``) names the same path
    here (:func:`~uno_env.console.portable_path`).

    A key may hold a path, a list of paths or a mapping whose keys may be paths (a teacher
    mix); anything else, and a path without a backslash, is kept as it is.
    """

    def portable(value: Any) -> Any:
        if isinstance(value, str):
            return str(portable_path(value)) if "\\" in value else value
        if isinstance(value, tuple):
            return tuple(portable(item) for item in value)
        if isinstance(value, dict):
            return {portable(key): item for key, item in value.items()}
        return value

    for key in keys:
        object.__setattr__(config, key, portable(getattr(config, key)))


def load_with_overrides(
    path: str | Path | None,
    overrides: Sequence[str],
    base: Mapping[str, Any] | None,
    build: Callable[[dict[str, Any], str], T],
    *,
    example: str,
    option: str | None = "--set",
) -> T:
    """Build a config from a YAML file (or ``base``) with ``key=value`` items applied.

    Args:
        path: A YAML file, or ``None`` to start from ``base``.
        overrides: ``key=value`` items (``--set``; values parsed as YAML).
        base: A mapping to start from when there is no file.
        build: Builds the config from the mapping (items applied) and the name of its
            source (the file, or ``config``), raising ConfigError for a bad value.
        example: An item of the command's own, shown when one is malformed.
        option: How a message names an item that brought the error (``--set seed=1.5:
            expected an integer, got 1.5``); None: as the file does (``config.seed``).

    Raises:
        ConfigError: one line naming the file or the item, the key and the bad value.
        TypeError: for a ``path`` that is no text or path, a ``base`` that is no mapping, or
            ``overrides`` that are no list of ``key=value`` strings, naming the value.
    """
    check_config_source(path, base)
    items = check_overrides(overrides)
    data: dict[str, Any] = load_yaml_mapping(path) if path is not None else dict(base or {})
    where = str(path) if path is not None else "config"
    apply_overrides(data, items, example=example)  # a malformed item named as it is

    def built(subset: Sequence[str]) -> T:
        return build(apply_overrides(data, subset, example=example), where)

    try:
        return built(items)
    except ConfigError as err:
        if option is None:
            raise
        raise _named_by_items(err, built, items, where, option) from None


def _named_by_items(
    err: ConfigError,
    build: Callable[[Sequence[str]], object],
    items: list[str],
    where: str,
    option: str,
) -> ConfigError:
    """A config's error named by the ``key=value`` items that brought it (``--set seed=1.5:
    expected an integer, got 1.5``), or as it is when the file alone has it.

    Which items brought it is found by building the config without each item in turn (only
    when a config is refused): an item is named when the error changes without it; when
    none alone does (the same key given twice), every item is.
    """
    message = str(err)

    def error_of(subset: Sequence[str]) -> str | None:
        try:
            build(subset)
        except Exception as other:  # any error: it is only compared with the one to explain
            return str(other)
        return None

    if not items or error_of([]) == message:  # the file's own error
        return err
    named = [
        item for i, item in enumerate(items) if error_of(items[:i] + items[i + 1 :]) != message
    ]
    named = named or items
    rest = message.removeprefix(where)
    rest = rest[1:] if rest.startswith(".") else rest.removeprefix(": ")
    if len(named) == 1:  # the key is in the item already: `--set seed=1.5: expected ...`
        key = named[0].partition("=")[0].strip()
        for echo in (f"{key}: ", f"{key.replace('.', ': ')}: "):
            if rest.startswith(echo):
                rest = rest[len(echo) :]
                break
    texts = [" ".join(item.split()) for item in named]  # cut short: a value may be long
    shown_items = " ".join(f"{option} {t if len(t) <= 60 else t[:57] + '...'}" for t in texts)
    return ConfigError(f"{shown_items}: {rest}")


class RunConfig:
    """The base of a frozen dataclass config with the keys ``name``, ``rules``,
    ``num_players`` and ``runs_dir``: its run's folder, its rules and its plain data."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # the subclass is a dataclass
    name: str
    rules: str
    num_players: int
    runs_dir: str

    def build_rules(self) -> Rules:
        """The rules of this run (preset or YAML, with ``num_players``)."""
        return load_rules(self.rules, num_players=self.num_players)

    @property
    def run_dir(self) -> Path:
        """``<runs_dir>/<name>``."""
        return Path(self.runs_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data, lists for tuples (for YAML, records and reports)."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    def to_yaml(self) -> str:
        """The config as YAML."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


DEVICES = ("auto", "cpu", "cuda")
"""The values of a config's ``device`` key."""


def check_device_name(key: str, device: object) -> str:
    """A ``device`` key's value, one of :data:`DEVICES`.

    Raises:
        ConfigError: naming ``key`` and the value as given.
    """
    if not isinstance(device, str) or device not in DEVICES:
        raise ConfigError(f"{key}: {shown(device)} is not allowed; choose one of {list(DEVICES)}")
    return device


def resolve_device(device: str, key: str = "device") -> str:
    """The torch device a ``device`` key names here: ``"cpu"`` or ``"cuda"``.

    Raises:
        ConfigError: for ``cuda`` on a machine where torch sees no GPU (one line naming
            ``key`` and what to set instead), or a value not in :data:`DEVICES`.
    """
    import torch  # only when a run starts: a config loads without torch

    check_device_name(key, device)
    has_gpu = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if has_gpu else "cpu"
    if device == "cuda" and not has_gpu:
        raise ConfigError(
            f"{key}: cuda asks for a GPU, but torch sees none here (torch.cuda.is_available() "
            f"is False; torch {torch.__version__}); set {key}: cpu or {key}: auto"
        )
    return device
