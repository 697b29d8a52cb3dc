"""The registry of training algorithms: the one place that names each algorithm.

A training run (:mod:`unolab.train.run`) asks the registry for the algorithm of its config
(``algorithm: ppo``) and uses it through :class:`TrainingAlgorithm`, the protocol every
algorithm implements: build a model for a config, learn for a number of steps with the run's
callbacks, load a trusted checkpoint, name its acting network (for the export, the league's
snapshots and ``init_from``), and its per-algorithm checks and texts. The model it builds
is a :class:`TrainableModel`: a step counter, its networks with their optimiser, and a
``save`` that writes the lab's checkpoint zip.

The two algorithms the lab ships are SB3 models, both through one adapter
(:class:`~unolab.train.sb3_algorithms.SB3Algorithm`): sb3-contrib's ``MaskablePPO`` and the
lab's :class:`~unolab.train.masked_dqn.MaskedDQN`. A training loop of another kind (a plain torch
loop in the style of CleanRL) joins with :func:`register` (docs/training.md, "Adding an
algorithm"; :class:`PlainLoopModel` gives it what the run's callbacks read).

How a checkpoint zip loads without running code from it is
:mod:`unolab.train.checkpoint_state`'s. Layers: :mod:`unolab.train.sb3_algorithms` below
it (the config imports the registry when a config is built, to check its algorithm); the
checkpoint reader, export, league, run and its command line (``uno-lab train NAME``) above
it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import torch
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.save_util import save_to_zip_file
from stable_baselines3.common.utils import configure_logger
from stable_baselines3.common.vec_env import VecEnv
from torch import nn

from unolab.train.sb3_algorithms import SB3_ALGORITHMS

if TYPE_CHECKING:  # the config checks its algorithm against this registry
    from unolab.train.config import TrainConfig

__all__ = [
    "ALGORITHMS",
    "PlainLoopModel",
    "TrainableModel",
    "TrainingAlgorithm",
    "algorithm_for_model",
    "final_steps",
    "get_algorithm",
    "load_checkpoint",
    "load_policy_layers",
    "make_model",
    "policy_layers",
    "register",
    "unregister",
]

Layers = list[tuple[torch.Tensor, torch.Tensor]]


class TrainableModel(Protocol):
    """What a training run reads and calls on a model (SB3's models have all of it).

    ``policy`` holds every network of the model and, as ``policy.optimizer``, their
    optimiser: a checkpoint holds their state dicts, and resuming loads them back into a
    model built from the run's config (:mod:`unolab.train.checkpoint_state`).
    """

    num_timesteps: int
    """Learner steps done: the run's step counter and a checkpoint's ``steps``."""

    @property
    def policy(self) -> nn.Module:
        """The networks, with their optimiser as ``policy.optimizer``."""
        ...

    def save(self, path: str | Path) -> None:
        """Write the lab's checkpoint zip (SB3's format: ``data``, ``policy.pth`` and
        ``policy.optimizer.pth``; :meth:`PlainLoopModel.save` writes it for a plain loop)."""
        ...


class TrainingAlgorithm(Protocol):
    """What a training run needs from an algorithm: the door of :func:`register`.

    Attributes:
        name: The config's ``algorithm`` value and the command's word (``uno-lab train
            NAME``).
        label: Its name in messages (``MaskablePPO``).
        description: What it trains, in a few words, for model cards (``MaskablePPO (an
            actor-critic network)``); each export records it.
        default_config: The shipped config (or a YAML file's path) ``uno-lab train NAME``
            trains without ``--config``.
        counters: The model's counters a checkpoint's ``data`` holds and a resumed run
            carries on (``num_timesteps`` first).
        fixed_settings: Why its config section cannot change when a run resumes.
    """

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def default_config(self) -> str: ...
    @property
    def counters(self) -> tuple[str, ...]: ...
    @property
    def fixed_settings(self) -> str: ...

    def build(self, config: TrainConfig, env: VecEnv) -> Any:
        """A fresh :class:`TrainableModel` for ``config``, acting on ``env``."""
        ...

    def learn(
        self, model: Any, steps: int, callbacks: Sequence[BaseCallback], *, reset: bool
    ) -> None:
        """Train ``model`` for ``steps`` more learner steps, calling ``callbacks`` as SB3
        calls them (a plain loop: :meth:`PlainLoopModel.start_callbacks`); ``reset``: the
        run starts (its step counter and logs from 0) rather than resumes."""
        ...

    def load(self, path: str | Path, env: VecEnv | None = None) -> Any:
        """A model from a trusted checkpoint file (this may run code from it)."""
        ...

    def acting_modules(self, model: Any) -> list[nn.Module]:
        """The modules of the acting network, observation side first: linear layers and
        activations mapping the observation to one logit or Q-value per action."""
        ...

    def owns(self, model: Any) -> bool:
        """Whether ``model`` is one of this algorithm's."""
        ...

    def steps_per_collect(self, config: TrainConfig) -> int:
        """The learner steps between two checks of the step budget (a run ends on a
        multiple of them)."""
        ...

    def check_config(self, config: TrainConfig) -> None:
        """Refuse a config this algorithm cannot train (:class:`~uno_env.ConfigError`)."""
        ...

    def policy_warmup_steps(self, config: TrainConfig) -> int:
        """The first steps during which the acting network stays frozen (0: none)."""
        ...


class PlainLoopModel:
    """The base of a model trained by a plain loop (not an SB3 algorithm).

    It holds what the run and its callbacks read (the step counter, the env, a logger
    writing the run's TensorBoard folder) and saves the lab's checkpoint zip. A subclass
    sets ``policy`` (every network, its optimiser as ``policy.optimizer``), implements
    its loop, and calls the run's callbacks through :meth:`start_callbacks`.

    Args:
        env: The batched env it trains on.
        tensorboard_log: The run's TensorBoard folder (``<run_dir>/tb``), or None.
    """

    policy: nn.Module
    counters: tuple[str, ...] = ("num_timesteps",)
    """The counters :meth:`save` writes: its algorithm's ``counters``, which resuming reads
    back."""

    def __init__(self, env: VecEnv, tensorboard_log: str | Path | None = None) -> None:
        self.env = env
        self.num_timesteps = 0
        self.tensorboard_log = tensorboard_log
        self.logger = Logger(None, [])

    def get_env(self) -> VecEnv:
        """The env it trains on (what SB3's callbacks ask a model for)."""
        return self.env

    def start_callbacks(
        self, callbacks: Sequence[BaseCallback], log_name: str, reset: bool
    ) -> CallbackList:
        """The run's callbacks, started: call ``on_step()`` after each step of the loop
        (stop when it returns False), then ``on_training_end()``.

        The logger is SB3's, writing ``<tensorboard_log>/<log_name>_<n>`` (a new folder
        unless the run resumes).
        """
        folder = None if self.tensorboard_log is None else str(self.tensorboard_log)
        self.logger = configure_logger(0, folder, log_name, reset)
        hooks = CallbackList(list(callbacks))
        hooks.init_callback(self)  # type: ignore[arg-type]  # what it reads, SB3's or not
        hooks.on_training_start(locals(), globals())
        return hooks

    def save(self, path: str | Path) -> None:
        """Write the lab's checkpoint zip with SB3's writer.

        So checksums, the fallback to ``previous`` and the reading without unpickling
        (:mod:`unolab.train.checkpoint_state`) treat it as any checkpoint: ``data`` (the
        counters, JSON), ``policy.pth`` (the networks' state dict) and
        ``policy.optimizer.pth`` (the state of ``policy.optimizer``).
        """
        optimizer: torch.optim.Optimizer = self.policy.optimizer  # type: ignore[assignment]
        params = {"policy": self.policy.state_dict(), "policy.optimizer": optimizer.state_dict()}
        counters = {name: int(getattr(self, name)) for name in self.counters}
        save_to_zip_file(path, data=counters, params=params)


_REGISTRY: dict[str, TrainingAlgorithm] = {a.name: a for a in SB3_ALGORITHMS}

ALGORITHMS: Mapping[str, TrainingAlgorithm] = MappingProxyType(_REGISTRY)
"""The algorithms by config name, in the order a checkpoint of unknown kind is tried."""


def register(algorithm: TrainingAlgorithm) -> None:
    """Add a training algorithm to the registry: configs may then name it.

    Args:
        algorithm: The algorithm (its ``name`` is the config's ``algorithm`` value).

    Raises:
        ValueError: the name is taken, or is no plain word.
    """
    name = algorithm.name
    if not name.isidentifier():
        raise ValueError(f"an algorithm's name is one word (letters, digits, _), got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"an algorithm named {name!r} is registered already")
    _REGISTRY[name] = algorithm


def unregister(name: str) -> None:
    """Remove a registered algorithm (a plugin's tests; the lab's own stay).

    Raises:
        ValueError: for a name not registered, or one of the lab's own algorithms.
    """
    if name not in _REGISTRY or name in {a.name for a in SB3_ALGORITHMS}:
        raise ValueError(f"{name!r} is no algorithm registered by register()")
    del _REGISTRY[name]


def get_algorithm(name: str) -> TrainingAlgorithm:
    """The registered algorithm called ``name``.

    Raises:
        ValueError: for an unknown name.
    """
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose one of {list(ALGORITHMS)}") from None


def make_model(config: TrainConfig, env: VecEnv) -> Any:
    """A fresh model of ``config.algorithm`` for a training run."""
    return get_algorithm(config.algorithm).build(config, env)


def final_steps(config: TrainConfig, done: int = 0) -> int:
    """The learner steps a run of ``config`` really ends at, from ``done`` steps.

    SB3 checks the step budget only between two collections of
    :meth:`TrainingAlgorithm.steps_per_collect` steps, so a run goes on to the first
    multiple of them (counted from ``done``) that reaches ``total_steps``: 250,000 steps
    of 64 envs x 128-step rollouts run 262,144.
    """
    per_collect = get_algorithm(config.algorithm).steps_per_collect(config)
    remaining = max(config.total_steps - done, 0)
    return done + -(-remaining // per_collect) * per_collect


def load_checkpoint(path: str | Path, algorithm: str, env: VecEnv | None = None) -> Any:
    """Load a checkpoint ``.zip`` of ``algorithm`` on the CPU (``env``: to resume).

    This unpickles the file (cloudpickle), which runs code from it: only for trusted
    checkpoints (the tournament's ``--allow-pickle`` participants). A run's own checkpoints
    load without it through :func:`~unolab.train.checkpoint_state.restore_checkpoint`.

    Raises:
        ValueError: for an unknown algorithm.
    """
    return get_algorithm(algorithm).load(path, env)


def algorithm_for_model(model: Any) -> TrainingAlgorithm:
    """The registered algorithm whose acting network ``model`` has.

    Raises:
        TypeError: for a model of no registered algorithm.
    """
    for algorithm in ALGORITHMS.values():
        if algorithm.owns(model):
            return algorithm
    labels = " or ".join(a.label for a in ALGORITHMS.values())
    raise TypeError(f"expected a {labels} model, got a {type(model).__name__}")


def _linears(model: Any) -> tuple[list[nn.Linear], str]:
    """The linear layers of a model's acting network and its activation (relu or tanh)."""
    modules = algorithm_for_model(model).acting_modules(model)
    activations = {type(m).__name__ for m in modules if not isinstance(m, nn.Linear)}
    activation = "relu" if "ReLU" in activations else "tanh"
    return [m for m in modules if isinstance(m, nn.Linear)], activation


def policy_layers(model: Any) -> tuple[Layers, str]:
    """The linear layers (weight, bias) of a model's acting network, as CPU copies, and its
    activation.

    MaskablePPO: the policy branch of the MLP extractor, then the action head (tanh).
    DQN: the Q-network (relu). Both use a flatten features extractor, so the layers map
    the observation straight to one logit / Q-value per action.

    Raises:
        TypeError: for a model of no registered algorithm.
    """
    linears, activation = _linears(model)
    # Copies on the CPU whatever the model's device: exports and snapshots load anywhere.
    return [
        (m.weight.detach().to("cpu", copy=True), m.bias.detach().to("cpu", copy=True))
        for m in linears
    ], activation


def load_policy_layers(model: Any, layers: Layers) -> None:
    """Copy exported (weight, bias) layers into a model's acting network, in place.

    The inverse of :func:`policy_layers`: the MaskablePPO policy branch and action head, or
    the DQN Q-network (and its target network). A PPO value branch is left as it is.

    Args:
        model: A model of a registered algorithm.
        layers: One (weight, bias) pair per linear layer, input side first.

    Raises:
        ValueError: if the layers do not fit the model's network (count or shapes).
        TypeError: for a model of no registered algorithm.
    """
    linears, _ = _linears(model)
    want = [tuple(m.weight.shape) for m in linears]
    got = [tuple(w.shape) for w, _ in layers]
    if want != got:
        raise ValueError(
            f"the exported layers {got} do not fit the model's network {want}: use the same "
            "net_arch as the exported policy"
        )
    with torch.no_grad():
        for linear, (weight, bias) in zip(linears, layers, strict=True):
            linear.weight.copy_(weight)
            linear.bias.copy_(bias)
            unfold = getattr(linear, "unfold", None)  # a folded DQN dueling head
            if callable(unfold):
                unfold()
    if hasattr(model.policy, "q_net_target"):
        model.policy.q_net_target.load_state_dict(model.policy.q_net.state_dict())
