"""Learned policies: small MLPs loaded from safetensors weights and a JSON metadata file.

Loading runs no code from the file (unlike SB3's zip checkpoints, which use cloudpickle):
the weights are plain tensors and the architecture is described by the metadata. A policy
refuses, with a clear message, a checkpoint whose observation version or rules differ from
the env it is asked to play in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from uno_env.cards import NUM_ACTIONS
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules

__all__ = [
    "CheckpointMismatchError",
    "MLPNet",
    "PolicyMetadata",
    "TorchPolicy",
    "load_policy",
    "save_policy",
]

_ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


class CheckpointMismatchError(ValueError):
    """A checkpoint was made for other rules or another observation encoding."""


@dataclass(frozen=True)
class PolicyMetadata:
    """What a learned policy was trained on and how its network is built.

    Attributes:
        name: A name for leaderboards.
        algorithm: ``ppo`` or ``dqn``.
        obs_version: The observation encoding version it was trained with.
        obs_dim: Input size.
        num_actions: Output size.
        hidden: Hidden layer sizes.
        activation: ``tanh`` or ``relu``.
        rules: The rules it was trained under (``Rules.to_dict()``).
        extra: Anything else (steps, evaluation results, seed, git commit).
    """

    name: str
    algorithm: str
    obs_version: int
    obs_dim: int
    num_actions: int
    hidden: tuple[int, ...]
    activation: str
    rules: dict[str, Any]
    extra: dict[str, Any]

    def to_json(self) -> str:
        """Serialise to JSON."""
        data = {**self.__dict__, "hidden": list(self.hidden)}
        return json.dumps(data, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str = "metadata") -> PolicyMetadata:
        """Parse JSON metadata, naming missing keys."""
        data = json.loads(text)
        missing = sorted(set(cls.__dataclass_fields__) - set(data))
        if missing:
            raise ValueError(f"{where}: missing key(s) {missing}")
        data["hidden"] = tuple(data["hidden"])
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


class MLPNet(nn.Module):
    """observation -> hidden layers -> one logit (or Q-value) per action."""

    def __init__(self, obs_dim: int, hidden: Sequence[int], num_actions: int, activation: str):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {list(_ACTIVATIONS)}, got {activation!r}")
        layers: list[nn.Module] = []
        size = obs_dim
        for width in hidden:
            layers += [nn.Linear(size, width), _ACTIVATIONS[activation]()]
            size = width
        layers.append(nn.Linear(size, num_actions))
        self.layers = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Logits (or Q-values) for a batch of observations."""
        out: torch.Tensor = self.layers(obs)
        return out


def _linear_weights(net: MLPNet) -> list[nn.Linear]:
    return [m for m in net.layers if isinstance(m, nn.Linear)]


def save_policy(
    path: str | Path, layers: Sequence[tuple[torch.Tensor, torch.Tensor]], meta: PolicyMetadata
) -> Path:
    """Write ``<path>.safetensors`` and ``<path>.json`` (weights, biases of each layer).

    Returns:
        The path of the safetensors file.
    """
    base = Path(path).with_suffix("")
    base.parent.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for i, (weight, bias) in enumerate(layers):
        tensors[f"layer{i}.weight"] = weight.detach().cpu().contiguous()
        tensors[f"layer{i}.bias"] = bias.detach().cpu().contiguous()
    weights_path = base.with_suffix(".safetensors")
    save_file(tensors, str(weights_path))
    base.with_suffix(".json").write_text(meta.to_json())
    return weights_path


class TorchPolicy:
    """A learned policy following :class:`uno_env.policy.Policy`: the masked argmax of an MLP.

    Args:
        net: The network.
        meta: Its metadata.
        deterministic: Argmax (True) or sampling from the masked softmax (False).
        seed: Seed of the sampling.
    """

    def __init__(
        self,
        net: MLPNet,
        meta: PolicyMetadata,
        deterministic: bool = True,
        seed: int | None = None,
    ) -> None:
        self.net = net.eval()
        self.meta = meta
        self.name = meta.name
        self.deterministic = deterministic
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose one legal action per row."""
        with torch.no_grad():
            logits = self.net(torch.as_tensor(observations, dtype=torch.float32))
            legal = torch.tensor(np.asarray(masks, dtype=bool))
            logits = logits.masked_fill(~legal, float("-inf"))
            # Rows with no legal action (finished games) get action 0, which is ignored.
            logits[~legal.any(dim=1)] = 0.0
            if self.deterministic:
                return logits.argmax(dim=1).numpy().astype(np.int64)
            probs = torch.softmax(logits, dim=1)
            return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy()

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget."""

    def check_compatible(self, rules: Rules) -> None:
        """Refuse to play under other rules or another observation encoding.

        Raises:
            CheckpointMismatchError: naming what differs.
        """
        check_metadata(self.meta, rules, where=self.name)


def check_metadata(meta: PolicyMetadata, rules: Rules, where: str) -> None:
    """Raise :class:`CheckpointMismatchError` if ``meta`` does not fit ``rules`` and this code."""
    if meta.obs_version != OBS_VERSION or meta.obs_dim != OBS_DIM:
        raise CheckpointMismatchError(
            f"{where}: trained with observation version {meta.obs_version} "
            f"({meta.obs_dim} features); this uno-lab encodes version {OBS_VERSION} "
            f"({OBS_DIM} features). Retrain or use a matching uno-lab version."
        )
    if meta.num_actions != NUM_ACTIONS:
        raise CheckpointMismatchError(
            f"{where}: {meta.num_actions} actions, expected {NUM_ACTIONS}"
        )
    trained = Rules.from_dict(meta.rules).game_rules()
    rules = rules.game_rules()
    if trained != rules:
        diff = {
            k: (v, getattr(rules, k))
            for k, v in trained.to_dict().items()
            if getattr(rules, k) != v
        }
        raise CheckpointMismatchError(
            f"{where}: trained under other rules; differing switches (trained, requested): {diff}"
        )


def load_policy(
    path: str | Path,
    rules: Rules | None = None,
    deterministic: bool = True,
    seed: int | None = None,
) -> TorchPolicy:
    """Load an exported policy (``.safetensors`` + ``.json``) without unpickling anything.

    Args:
        path: The ``.safetensors`` file (or the path without suffix).
        rules: If given, the policy must have been trained under exactly these rules.
        deterministic: Argmax (default) or sampling.
        seed: Seed of the sampling.

    Raises:
        FileNotFoundError: if a file is missing.
        CheckpointMismatchError: if the rules or observation version differ.
    """
    base = Path(path).with_suffix("")
    weights, meta_path = base.with_suffix(".safetensors"), base.with_suffix(".json")
    for p in (weights, meta_path):
        if not p.is_file():
            raise FileNotFoundError(f"exported policy file {str(p)!r} does not exist")
    meta = PolicyMetadata.from_json(meta_path.read_text(), where=str(meta_path))
    if rules is not None:
        check_metadata(meta, rules, where=str(base))
    elif meta.obs_version != OBS_VERSION:
        check_metadata(meta, Rules.from_dict(meta.rules), where=str(base))
    net = MLPNet(meta.obs_dim, meta.hidden, meta.num_actions, meta.activation)
    tensors: Mapping[str, torch.Tensor] = load_file(str(weights))
    for i, linear in enumerate(_linear_weights(net)):
        try:
            linear.weight.data.copy_(tensors[f"layer{i}.weight"])
            linear.bias.data.copy_(tensors[f"layer{i}.bias"])
        except (KeyError, RuntimeError) as err:
            raise ValueError(
                f"{weights}: weights do not fit the network in {meta_path}: {err}"
            ) from err
    return TorchPolicy(net, meta, deterministic=deterministic, seed=seed)
