"""Trained weights into a model built from a config, without running code from any file.

Resuming a run, exporting a checkpoint and ``init_from`` read a checkpoint zip here
(:func:`restore_checkpoint`, :func:`load_checkpoint_state`); ``init_from`` also takes an
exported policy's acting network (:func:`initialise_from`). The model is built from the
run's config (the registry, :mod:`unolab.train.algorithms`), and the zip's networks and optimiser state (``policy.pth``, ``policy.optimizer.pth``) are read
with torch's weights-only loader and its counters from the plain JSON values of its
``data``; SB3's pickled entries are never decoded. Every value is checked before the run
trusts it: sizes bounded by what the model can hold, tensors finite and of the model's
shapes, optimiser settings those of the config, counters in bounds. A file that fails is a
:class:`~unolab.train.checkpoint_files.DamagedCheckpointError` naming it.
"""

from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from stable_baselines3.common.vec_env import VecEnv

from uno_env.files import shown
from uno_env.observation import OBS_DIM
from uno_env.rules import Rules
from unolab.agents.learned import load_policy
from unolab.agents.policy_metadata import CheckpointMismatchError
from unolab.train.algorithms import (
    algorithm_for_model,
    load_policy_layers,
    make_model,
    policy_layers,
)
from unolab.train.checkpoint_files import ZIP_READ_ERRORS, DamagedCheckpointError
from unolab.train.config import TrainConfig, config_beside
from unolab.train.config_limits import MAX_STEPS

__all__ = ["initialise_from", "load_checkpoint_state", "restore_checkpoint"]


_MAX_COUNTER = 2**62
"""The largest counter a checkpoint's data may hold (below every 64-bit overflow)."""

_UNREADABLE = (
    *ZIP_READ_ERRORS,
    RuntimeError,
    TypeError,
    AttributeError,
    IndexError,
)
"""What reading a damaged or foreign zip, or its tensors, raises (zipfile, zlib, torch's
weights-only loader, ``load_state_dict``); an object only unpickling reads is refused apart."""


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
        model: A model of that algorithm and architecture (:func:`~unolab.train.algorithms.make_model`).
        counters: Also read the algorithm's counters (:attr:`~unolab.train.algorithms.TrainingAlgorithm.counters`) from the
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
                for name in ("policy.pth", "policy.optimizer.pth")  # networks, optimiser state
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


def restore_checkpoint(path: str | Path, env: VecEnv, config: TrainConfig | None = None) -> Any:
    """A run's model from its checkpoint zip, without running code from the file.

    The model is built from ``config`` (:func:`~unolab.train.algorithms.make_model`: its
    algorithm, network and hyper-parameters), then given the zip's tensors and counters
    (:func:`load_checkpoint_state`). What SB3 would unpickle from the zip (the spaces, the
    schedules, the last observations) comes from the config and the env instead: a resumed
    run starts its games afresh.

    Args:
        path: The checkpoint (``runs/<name>/latest.zip``).
        env: The env to train (or act) on.
        config: The config the checkpoint was trained with (None: the run's
            ``config.yaml`` beside the checkpoint).

    Raises:
        FileNotFoundError: the run's ``config.yaml`` is not beside the checkpoint.
        ConfigError: that config is not valid.
        DamagedCheckpointError: one line naming the file (see :func:`load_checkpoint_state`).
    """
    config = config_beside(path) if config is None else config
    model = make_model(config, env)
    found = load_checkpoint_state(path, model, counters=True, num_envs=config.num_envs)
    for name, value in found.items():
        setattr(model, name, value)
    return model


def initialise_from(model: Any, path: str | Path, rules: Rules) -> None:
    """Overwrite a fresh model's weights with trained ones (``init_from`` of the config).

    Neither file is unpickled: a zip's tensors are read with torch's weights-only loader
    (:func:`load_checkpoint_state`).

    Args:
        model: The freshly built SB3 model of the run.
        path: An SB3 checkpoint ``.zip`` of the same algorithm and architecture (all of its
            networks and the optimiser state are loaded), or an exported ``.safetensors``
            policy (only the acting network: the PPO value branch keeps its fresh
            initialisation). An exported policy must have been trained under ``rules``.
        rules: The rules of the run.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if the file is unreadable (naming it), if the weights do not fit the
            model (another algorithm or architecture), or
            (:class:`~unolab.agents.learned.CheckpointMismatchError`) an exported policy was
            trained under other rules or another observation version.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"init_from: {str(path)!r} does not exist (train that run first, e.g. "
            "uno-lab train ppo --config ppo/official_2p)"
        )
    if path.suffix == ".safetensors":
        try:
            policy = load_policy(path, rules=rules)
        except CheckpointMismatchError:
            raise
        except (ValueError, KeyError, RuntimeError, SafetensorError) as err:
            if isinstance(err, ValueError) and path.name in str(err):
                raise  # it names the file already
            raise ValueError(
                f"init_from: {path} is not a readable exported policy ({err}); export it "
                "again with python -m unolab.train.export"
            ) from err
        _, activation = policy_layers(model)
        if policy.meta.activation != activation:
            raise ValueError(
                f"init_from: {path} uses {policy.meta.activation} activations, this run's "
                f"network {activation} (an imitation clone for DQN needs activation: relu)"
            )
        try:
            load_policy_layers(model, policy.net.layer_weights())
        except ValueError as err:
            raise ValueError(f"init_from: {path}: {err}") from None
        return
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"init_from: {path} is not a readable SB3 checkpoint (not a zip archive); give a "
            "run's latest.zip or best.zip"
        )
    try:
        load_checkpoint_state(path, model)
    except DamagedCheckpointError as err:
        advice = (
            "same algorithm and net_arch needed"
            if "does not fit" in str(err)
            else "give a run's latest.zip or best.zip"
        )
        raise ValueError(f"init_from: {err}; {advice}") from None
