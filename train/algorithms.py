"""The registry of training algorithms: the one place that knows each SB3 model class.

For each algorithm of a config (``algorithm: ppo`` or ``algorithm: dqn``) an
:class:`Algorithm` names

* the SB3 model class (sb3-contrib's ``MaskablePPO``, or :class:`~unolab.train.masked_dqn.MaskedDQN`);
* how a checkpoint ``.zip`` loads without running code from it (:func:`restore_checkpoint`:
  a model built from the run's config, the zip's tensors read with torch's weights-only
  loader and its counters from its JSON), and with SB3's own unpickling for trusted files
  (:func:`load_checkpoint`, with the ``custom_objects`` the class needs);
* how a fresh model is built for a training run from its config (:func:`make_model`);
* how it exports: the modules of its acting network (:func:`policy_layers`,
  :func:`load_policy_layers`).

Every user of SB3 checkpoints goes through this module: the training run
(:mod:`unolab.train.run`), the export (:mod:`unolab.train.export`), the league's snapshots (through the
export) and the tournament's ``--allow-pickle`` participants. Layers: :mod:`unolab.train.config`
and :mod:`unolab.train.masked_dqn` below it; export, league, run and the ``python -m unolab.train.ppo`` /
``unolab.train.dqn`` entry points above it.
"""

from __future__ import annotations

import functools
import io
import json
import math
import pickle
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv
from torch import nn

from uno_env.files import shown
from uno_env.observation import OBS_DIM, OBS_LAYOUT
from unolab.train.checkpoint_files import DamagedCheckpointError
from unolab.train.config import TrainConfig
from unolab.train.config_limits import MAX_STEPS
from unolab.train.dueling import DuelingDQNPolicy, DuelingHead
from unolab.train.masked_dqn import MaskedDQN
from unolab.train.masked_replay import MaskedReplayBuffer

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "algorithm_for_model",
    "final_steps",
    "get_algorithm",
    "hand_size_potential",
    "load_checkpoint",
    "load_checkpoint_state",
    "load_policy_layers",
    "make_model",
    "policy_layers",
    "restore_checkpoint",
]

Layers = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class Algorithm:
    """One training algorithm of the lab.

    Attributes:
        name: The config's ``algorithm`` value (``ppo``, ``dqn``).
        label: Its name in messages (``MaskablePPO``, ``DQN``).
        model_class: The SB3 class of its models and checkpoints.
        build: A fresh model for a training run: ``build(config, env)``.
        acting_modules: The modules of a model's acting network, observation side first
            (flatten features extractor: they map the observation straight to one logit or
            Q-value per action).
        owns: Whether a model has this algorithm's acting network.
        steps_per_collect: The learner steps SB3 collects between two checks of the step
            budget (a PPO rollout: ``n_steps`` x ``num_envs``): a run ends on a multiple.
        custom_objects: Passed to ``model_class.load`` (replace pickled attributes).
        counters: The model's counters a resumed run carries on (read from the plain JSON
            values of a checkpoint's ``data``; everything else is rebuilt from the config).
    """

    name: str
    label: str
    model_class: type[BaseAlgorithm]
    build: Callable[[TrainConfig, VecEnv], BaseAlgorithm]
    acting_modules: Callable[[Any], list[nn.Module]]
    owns: Callable[[Any], bool]
    steps_per_collect: Callable[[TrainConfig], int]
    custom_objects: Mapping[str, Any] = field(default_factory=dict)
    counters: tuple[str, ...] = ("num_timesteps", "_n_updates", "_episode_num")

    def make_model(self, config: TrainConfig, env: VecEnv) -> Any:
        """A fresh model of this algorithm for ``config`` (its ``<algorithm>:`` section)."""
        return self.build(config, env)

    def load(self, path: str | Path, env: VecEnv | None = None) -> Any:
        """Load a checkpoint ``.zip`` on the CPU, with ``env`` to resume training.

        SB3 zips are read with cloudpickle, which runs code from the file: load only trusted
        checkpoints. Training, resuming and exporting use :func:`restore_checkpoint`, which
        runs none.
        """
        return self.model_class.load(
            path, env=env, device="cpu", custom_objects=dict(self.custom_objects) or None
        )


# ---------------------------------------------------------------------- MaskablePPO


def _build_ppo(config: TrainConfig, env: VecEnv) -> MaskablePPO:
    """A fresh MaskablePPO (MLP policy; the env gives it the legal-action masks)."""
    p = config.ppo
    arch = list(p.net_arch)
    return MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=p.learning_rate,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        ent_coef=p.ent_coef,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        policy_kwargs={"net_arch": {"pi": arch, "vf": arch}},
        tensorboard_log=str(config.run_dir / "tb"),
        seed=config.seed,
        verbose=0,
        device="cpu",
    )


def _ppo_owns(model: Any) -> bool:
    policy = getattr(model, "policy", None)
    return hasattr(policy, "mlp_extractor") and hasattr(policy, "action_net")


def _ppo_acting_modules(model: Any) -> list[nn.Module]:
    """The policy branch of the MLP extractor, then the action head (tanh)."""
    policy = model.policy
    return [*policy.mlp_extractor.policy_net, policy.action_net]


# ---------------------------------------------------------------------- masked DQN


def hand_size_potential(observations: np.ndarray, per_card: float) -> np.ndarray:
    """The DQN shaping potential: ``per_card`` × (the others' mean hand size - one's own).

    Read off the observation's ``hand_sizes`` (card counts, the observer first) and
    ``num_players`` fields; see :class:`~unolab.train.masked_replay.MaskedReplayBuffer` for how the
    potential shapes the returns without changing the greedy policy they lead to.

    Args:
        observations: (B, OBS_DIM) raw observations.
        per_card: The potential of one card of difference.

    Returns:
        (B,) potentials.
    """
    sizes = observations[:, OBS_LAYOUT["hand_sizes"]].astype(np.float64)
    players = observations[:, OBS_LAYOUT["num_players"]].argmax(axis=1) + 1
    others = sizes[:, 1:].sum(axis=1) / np.maximum(players - 1, 1)
    return np.asarray(per_card * (others - sizes[:, 0]), dtype=np.float32)


def _build_dqn(config: TrainConfig, env: VecEnv) -> MaskedDQN:
    """A fresh MaskedDQN (MLP Q-network, masked replay buffer)."""
    p = config.dqn
    potential = (
        functools.partial(hand_size_potential, per_card=p.hand_size_shaping)
        if p.hand_size_shaping > 0
        else None
    )
    return MaskedDQN(
        DuelingDQNPolicy if p.dueling else "MlpPolicy",
        env,
        double_q=p.double_q,
        n_step=p.n_step,
        potential=potential,
        learning_rate=p.learning_rate,
        buffer_size=p.buffer_size,
        learning_starts=p.learning_starts,
        batch_size=p.batch_size,
        gamma=p.gamma,
        train_freq=p.train_freq,
        gradient_steps=p.gradient_steps,
        target_update_interval=p.target_update_interval,
        exploration_fraction=p.exploration_fraction,
        exploration_final_eps=p.exploration_final_eps,
        replay_buffer_class=MaskedReplayBuffer,
        policy_kwargs={"net_arch": list(p.net_arch)},
        tensorboard_log=str(config.run_dir / "tb"),
        seed=config.seed,
        verbose=0,
        device="cpu",
    )


def _dqn_owns(model: Any) -> bool:
    return hasattr(getattr(model, "policy", None), "q_net")


def _dqn_acting_modules(model: Any) -> list[nn.Module]:
    """The Q-network (relu); a dueling head as one folded linear layer.

    The folded layer (:class:`~unolab.train.dueling.FoldedDuelingLinear`) computes
    ``V + A - mean(A)`` exactly; :func:`load_policy_layers` writes it back into the head
    through its ``unfold``.
    """
    return [m.folded() if isinstance(m, DuelingHead) else m for m in model.policy.q_net.q_net]


# ---------------------------------------------------------------------- the registry

ALGORITHMS: Mapping[str, Algorithm] = MappingProxyType(
    {
        "ppo": Algorithm(
            name="ppo",
            label="MaskablePPO",
            model_class=MaskablePPO,
            build=_build_ppo,
            acting_modules=_ppo_acting_modules,
            owns=_ppo_owns,
            # learn() collects whole rollouts of n_steps in every env
            steps_per_collect=lambda config: config.ppo.n_steps * config.num_envs,
        ),
        "dqn": Algorithm(
            name="dqn",
            label="DQN",
            model_class=MaskedDQN,
            build=_build_dqn,
            acting_modules=_dqn_acting_modules,
            owns=_dqn_owns,
            # learn() collects train_freq steps of every env between two updates
            steps_per_collect=lambda config: config.dqn.train_freq * config.num_envs,
            # The zip names its replay buffer class by a pickled reference: load the masked
            # buffer whatever module that reference names.
            custom_objects={"replay_buffer_class": MaskedReplayBuffer},
            # _n_calls paces the target network's updates (every target_update_interval)
            counters=("num_timesteps", "_n_updates", "_episode_num", "_n_calls"),
        ),
    }
)
"""The algorithms by config name, in the order a checkpoint of unknown kind is tried."""


def get_algorithm(name: str) -> Algorithm:
    """The registered algorithm called ``name``.

    Raises:
        ValueError: for an unknown name.
    """
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; choose one of {list(ALGORITHMS)}") from None


def make_model(config: TrainConfig, env: VecEnv) -> Any:
    """A fresh model of ``config.algorithm`` for a training run."""
    return get_algorithm(config.algorithm).make_model(config, env)


def final_steps(config: TrainConfig, done: int = 0) -> int:
    """The learner steps a run of ``config`` really ends at, from ``done`` steps.

    SB3 checks the step budget only between two collections of
    :attr:`Algorithm.steps_per_collect` steps, so a run goes on to the first multiple of
    them (counted from ``done``) that reaches ``total_steps``: 250,000 steps of 64 envs x
    128-step rollouts run 262,144.
    """
    per_collect = get_algorithm(config.algorithm).steps_per_collect(config)
    remaining = max(config.total_steps - done, 0)
    return done + -(-remaining // per_collect) * per_collect


def load_checkpoint(path: str | Path, algorithm: str, env: VecEnv | None = None) -> Any:
    """Load an SB3 checkpoint ``.zip`` of ``algorithm`` on the CPU (``env``: to resume).

    This unpickles the file (cloudpickle), which runs code from it: only for trusted
    checkpoints (the tournament's ``--allow-pickle`` participants). A run's own checkpoints
    load without it through :func:`restore_checkpoint`.

    Raises:
        ValueError: for an unknown algorithm.
    """
    return get_algorithm(algorithm).load(path, env)


_TENSOR_MEMBERS = ("policy.pth", "policy.optimizer.pth")
"""The members of a checkpoint zip holding tensors: the networks, the optimiser's state."""

_MAX_COUNTER = 2**62
"""The largest counter a checkpoint's data may hold (below every 64-bit overflow)."""

_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,  # a member compressed by a method zipfile cannot read
    EOFError,
    OSError,
    RuntimeError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    pickle.UnpicklingError,
)
"""What reading a damaged or foreign zip, or its tensors, raises (torch's weights-only
loader, zipfile, zlib, ``load_state_dict``)."""


def _member(archive: zipfile.ZipFile, name: str, limit: int, path: Path) -> bytes:
    """A member of a checkpoint zip, refused when larger than it can be for the model."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise DamagedCheckpointError(
            f"{path} is not a checkpoint of the lab (no {name} in it)"
        ) from None
    if info.file_size > limit:
        raise DamagedCheckpointError(
            f"{path}: {name} holds {info.file_size:,} bytes, more than a checkpoint of this "
            f"network can ({limit:,})"
        )
    return archive.read(name)


def _check_optimizer_state(optimizer: torch.optim.Optimizer, path: Path) -> None:
    """Each per-parameter tensor of the loaded optimiser state has its parameter's shape
    (torch checks only the counts; a wrong shape would fail at the first update)."""
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            for key, value in optimizer.state.get(parameter, {}).items():
                if torch.is_tensor(value) and value.dim() > 0 and value.shape != parameter.shape:
                    raise DamagedCheckpointError(
                        f"{path}: the optimiser's {key} of shape {tuple(value.shape)} does not "
                        f"fit a parameter of shape {tuple(parameter.shape)}"
                    )


_OPTIMIZER_FLAGS = frozenset(
    {"params", "lr", "initial_lr", "foreach", "fused", "capturable", "differentiable"}
)
"""Keys of an optimiser's parameter group that the config does not set: the parameters,
the learning rate (set again at each update, from its schedule) and torch's implementation
switches (which change nothing that is learned)."""

_NON_NEGATIVE_STATE = frozenset({"step", "exp_avg_sq", "max_exp_avg_sq"})
"""Optimiser state that a run can only make zero or positive (a negative second moment
makes the update NaN)."""


def _check_saved_values(
    policy: Any, optimizer: Any, fresh: torch.optim.Optimizer, path: Path
) -> None:
    """Refuse a checkpoint whose values no training run writes: a network or optimiser
    state with NaN or infinities (every later update would be NaN), or optimiser settings
    other than the config's (``eps``, ``betas``, ``weight_decay``, ``maximize``...: the
    run would learn under settings its config.yaml does not describe).

    Raises:
        DamagedCheckpointError: naming the file and the value at fault.
    """
    if not isinstance(policy, dict) or not isinstance(optimizer, dict):
        raise DamagedCheckpointError(f"{path}: its networks or optimiser state are no mapping")
    for name, tensor in policy.items():
        if (
            torch.is_tensor(tensor)
            and tensor.is_floating_point()
            and not torch.isfinite(tensor).all()
        ):
            raise DamagedCheckpointError(
                f"{path}: the network's {name} holds NaN or infinite values (the training "
                "diverged or the file is damaged)"
            )
    groups, expected = optimizer.get("param_groups"), fresh.state_dict()["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(expected):
        raise DamagedCheckpointError(f"{path}: the optimiser's parameter groups do not fit")
    for group, wanted in zip(groups, expected, strict=True):
        if not isinstance(group, dict):
            raise DamagedCheckpointError(f"{path}: an optimiser parameter group is no mapping")
        lr = group.get("lr")
        if torch.is_tensor(lr) and lr.numel() == 1:
            lr = lr.item()
        if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not 0 <= lr < math.inf:
            raise DamagedCheckpointError(
                f"{path}: the optimiser's learning rate is {shown(lr)}, not a number >= 0"
            )
        for key in wanted.keys() & group.keys() - _OPTIMIZER_FLAGS:
            saved, own = group[key], wanted[key]
            if isinstance(saved, (list, tuple)) and isinstance(own, (list, tuple)):
                saved, own = tuple(saved), tuple(own)
            if type(saved) is not type(own) or saved != own:
                raise DamagedCheckpointError(
                    f"{path}: the optimiser's {key} is {shown(group[key])}, but the run's "
                    f"config makes it {wanted[key]!r} (the file is damaged or was edited)"
                )
    state = optimizer.get("state")
    for entry in state.values() if isinstance(state, dict) else ():
        for key, value in entry.items() if isinstance(entry, dict) else ():
            if not torch.is_tensor(value) or not value.is_floating_point():
                continue
            if not torch.isfinite(value).all():
                what = "NaN or infinite values"
            elif key in _NON_NEGATIVE_STATE and bool((value < 0).any()):
                what = "negative values"
            else:
                continue
            raise DamagedCheckpointError(
                f"{path}: the optimiser's {key} holds {what} (the training diverged or the "
                "file is damaged)"
            )


def _counters(raw: bytes, names: tuple[str, ...], path: Path) -> dict[str, int]:
    """The named counters of a checkpoint's ``data`` (JSON), each a count in bounds.

    Only these plain values are read: the data's ``:serialized:`` entries (cloudpickle) are
    never decoded.
    """
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise DamagedCheckpointError(f"{path}: its data is not a JSON object")
    counters = {}
    for name in names:
        value = data.get(name)
        top = MAX_STEPS if name == "num_timesteps" else _MAX_COUNTER
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
            raise DamagedCheckpointError(
                f"{path}: its data's {name} is {str(value)[:40]}, not a count from 0 to {top:,}"
            )
        counters[name] = value
    return counters


def load_checkpoint_state(
    path: str | Path, model: Any, *, counters: bool = False, num_envs: int = 1
) -> dict[str, int]:
    """Load a checkpoint zip's tensors into a model built for it, running no code from it.

    The networks (``policy.pth``) and the optimiser's state (``policy.optimizer.pth``) are
    read with torch's weights-only loader, which builds tensors and plain containers only;
    the data's pickled entries are never read. Every member is bounded by what a checkpoint
    of the model can hold.

    Args:
        path: An SB3 checkpoint ``.zip`` of the model's algorithm and architecture.
        model: A model of that algorithm and architecture (:func:`make_model`).
        counters: Also read the algorithm's counters (:attr:`Algorithm.counters`) from the
            data, checked to be counts.
        num_envs: The games the checkpoint's run stepped together (its data holds their
            last observations), for the bound on the data.

    Returns:
        The counters by name (empty unless ``counters``).

    Raises:
        DamagedCheckpointError: one line naming the file: not a zip, damaged, a member
            missing or too large, tensors that do not fit the model, bad counters.
    """
    path = Path(path)
    if not path.is_file():
        raise DamagedCheckpointError(f"{path} is not a regular file")
    algorithm = algorithm_for_model(model)
    state_bytes = sum(t.numel() * t.element_size() for t in model.policy.state_dict().values())
    # The optimiser keeps two moments per parameter; the rest is the format's framing.
    limit = 4 * state_bytes + (1 << 20)
    try:
        with zipfile.ZipFile(path) as archive:
            policy, optimizer = (
                torch.load(
                    io.BytesIO(_member(archive, name, limit, path)),
                    map_location="cpu",
                    weights_only=True,
                )
                for name in _TENSOR_MEMBERS
            )
            found = {}
            if counters:
                # The data holds the last observations of every env, base64-encoded.
                data_limit = 16 * OBS_DIM * max(num_envs, 1) + (16 << 20)
                raw = _member(archive, "data", data_limit, path)
                found = _counters(raw, algorithm.counters, path)
    except DamagedCheckpointError:
        raise
    except pickle.UnpicklingError:  # torch's message advises weights_only=False: never here
        raise DamagedCheckpointError(
            f"{path} holds objects other than tensors, which only unpickling (running code "
            "from the file) could read: refused"
        ) from None
    except _UNREADABLE as err:
        raise DamagedCheckpointError(
            f"{path} is not a readable {algorithm.name} checkpoint ({_reason(err)})"
        ) from None
    _check_saved_values(policy, optimizer, model.policy.optimizer, path)
    try:
        model.policy.load_state_dict(policy)
        model.policy.optimizer.load_state_dict(optimizer)
    except _UNREADABLE as err:
        raise DamagedCheckpointError(
            f"{path} does not fit this {algorithm.name} network ({_reason(err)})"
        ) from None
    _check_optimizer_state(model.policy.optimizer, path)
    return found


def _reason(err: BaseException) -> str:
    """An error's message on one line, cut short (torch lists every tensor that differs)."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def restore_checkpoint(path: str | Path, config: TrainConfig, env: VecEnv) -> Any:
    """A run's model from its checkpoint zip, without running code from the file.

    The model is built from ``config`` (:func:`make_model`: its algorithm, network and
    hyper-parameters), then given the zip's tensors and counters
    (:func:`load_checkpoint_state`). What SB3 would unpickle from the zip (the spaces, the
    schedules, the last observations) comes from the config and the env instead: a resumed
    run starts its games afresh.

    Args:
        path: The checkpoint (``runs/<name>/latest.zip``).
        config: The config the checkpoint was trained with.
        env: The env to train (or act) on.

    Raises:
        DamagedCheckpointError: one line naming the file (see :func:`load_checkpoint_state`).
    """
    model = make_model(config, env)
    found = load_checkpoint_state(path, model, counters=True, num_envs=config.num_envs)
    for name, value in found.items():
        setattr(model, name, value)
    return model


def algorithm_for_model(model: Any) -> Algorithm:
    """The registered algorithm whose acting network ``model`` has.

    Raises:
        TypeError: for a model of no registered algorithm.
    """
    for algorithm in ALGORITHMS.values():
        if algorithm.owns(model):
            return algorithm
    raise TypeError(f"expected a MaskablePPO or DQN model, got a {type(model).__name__}")


def policy_layers(model: Any) -> tuple[Layers, str]:
    """The linear layers (weight, bias) of an SB3 model's acting network, and its activation.

    MaskablePPO: the policy branch of the MLP extractor, then the action head (tanh).
    DQN: the Q-network (relu). Both use a flatten features extractor, so the layers map
    the observation straight to one logit / Q-value per action.

    Raises:
        TypeError: for a model of another kind.
    """
    modules = algorithm_for_model(model).acting_modules(model)
    linears = [m for m in modules if isinstance(m, nn.Linear)]
    activations = {type(m).__name__ for m in modules if not isinstance(m, nn.Linear)}
    activation = "relu" if "ReLU" in activations else "tanh"
    return [(m.weight.detach().clone(), m.bias.detach().clone()) for m in linears], activation


def load_policy_layers(model: Any, layers: Layers) -> None:
    """Copy exported (weight, bias) layers into an SB3 model's acting network, in place.

    The inverse of :func:`policy_layers`: the MaskablePPO policy branch and action head, or
    the DQN Q-network (and its target network). A PPO value branch is left as it is.

    Args:
        model: A MaskablePPO or DQN model.
        layers: One (weight, bias) pair per linear layer, input side first.

    Raises:
        ValueError: if the layers do not fit the model's network (count or shapes).
        TypeError: for a model of another kind.
    """
    modules = algorithm_for_model(model).acting_modules(model)
    linears = [m for m in modules if isinstance(m, nn.Linear)]
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
