"""The metadata of an exported policy: what it was trained on and how its network is built.

An exported agent is a ``.safetensors`` file of weights and a ``.json`` file of
:class:`PolicyMetadata`. The metadata is validated before anything is built from it (every
key present, of its type and within bounds, so the network it describes is always small
enough to build), carries a digest that ties it to its weights, and decides whether the
policy may play a game (:func:`check_metadata`): a checkpoint made for other rules or another
observation encoding raises :class:`CheckpointMismatchError`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from torch import nn

from uno_env.cards import NUM_ACTIONS
from uno_env.observation import OBS_DIM, OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.agent_files import (
    metadata_object,
    parse_json,
)

__all__ = [
    "ACTIVATIONS",
    "CheckpointMismatchError",
    "PolicyMetadata",
    "check_encoding",
    "check_metadata",
]

ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The module of each activation a network may use (:data:`ACTIVATION_NAMES`), by name."""


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
        digest: ``sha256:<hex>`` of the weights file and of the fields above that decide
            how the network plays (everything but ``name`` and ``extra``), written by
            :func:`save_policy` and checked by :func:`load_policy`: a ``.json`` paired with
            another agent's weights, or edited to other rules, is refused. ``None`` for
            files exported before digests (they load unchecked).
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
    digest: str | None = None

    def to_json(self) -> str:
        """Serialise to JSON."""
        data = {**self.__dict__, "hidden": list(self.hidden)}
        if self.digest is None:
            del data["digest"]
        return json.dumps(data, indent=2, sort_keys=True)

    def digest_of(self, weights: bytes) -> str:
        """The digest of these weights under this metadata (see :attr:`digest`)."""
        played = {
            "algorithm": self.algorithm,
            "obs_version": self.obs_version,
            "obs_dim": self.obs_dim,
            "num_actions": self.num_actions,
            "hidden": list(self.hidden),
            "activation": self.activation,
            "rules": self.rules,
        }
        digest = hashlib.sha256(weights)
        digest.update(json.dumps(played, sort_keys=True, separators=(",", ":")).encode())
        return "sha256:" + digest.hexdigest()

    @classmethod
    def from_json(cls, text: str | bytes, where: str = "metadata") -> PolicyMetadata:
        """Parse and validate JSON metadata (see :meth:`from_dict`).

        Raises:
            AgentFileError: naming ``where`` and what is wrong (bad JSON, a missing key, a
                value of the wrong type or out of bounds).
        """
        raw = text.encode("utf-8") if isinstance(text, str) else text
        return cls.from_dict(parse_json(raw, where, "metadata"), where=where)

    @classmethod
    def from_dict(cls, data: Any, where: str = "metadata") -> PolicyMetadata:
        """Validate parsed metadata: every key present, of its type and within bounds.

        The checks are :func:`~unolab.agents.agent_files.metadata_object`'s (every reader's).

        Raises:
            AgentFileError: naming ``where``, the key and the bad value.
        """
        data = metadata_object(data, where)
        return cls(
            name=data["name"],
            algorithm=data["algorithm"],
            obs_version=data["obs_version"],
            obs_dim=data["obs_dim"],
            num_actions=data["num_actions"],
            hidden=tuple(data["hidden"]),
            activation=data["activation"],
            rules=data["rules"],
            extra=data["extra"],
            digest=data.get("digest"),
        )


def check_encoding(meta: PolicyMetadata, where: str) -> None:
    """Raise :class:`CheckpointMismatchError` if ``meta`` was made for another encoding."""
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


def check_metadata(meta: PolicyMetadata, rules: Rules, where: str) -> None:
    """Raise :class:`CheckpointMismatchError` if ``meta`` does not fit ``rules`` and this code."""
    check_encoding(meta, where)
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
