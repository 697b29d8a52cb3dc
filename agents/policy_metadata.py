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
    EXPORT_HINT,
    MAX_HIDDEN_LAYERS,
    MAX_LAYER_WIDTH,
    AgentFileError,
    is_json_int,
    metadata_object,
    parse_json,
    shown,
)

__all__ = [
    "ACTIVATIONS",
    "CheckpointMismatchError",
    "PolicyMetadata",
    "check_encoding",
    "check_metadata",
]

ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The activations a network may use, by their name in the metadata."""


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

        Keys the lab does not know are ignored. Sizes must be positive integers, with at most
        :data:`MAX_HIDDEN_LAYERS` hidden layers of at most :data:`MAX_LAYER_WIDTH` units, so
        the network described is always small enough to build.

        Raises:
            AgentFileError: naming ``where``, the key and the bad value.
        """
        data = metadata_object(data, where)

        def bad(key: str, expected: str) -> AgentFileError:
            return AgentFileError(
                f"{where}: {key!r} must be {expected}, got {shown(data[key])}; {EXPORT_HINT}"
            )

        for key in ("name", "algorithm"):
            if not isinstance(data[key], str) or not data[key]:
                raise bad(key, "a non-empty string")
        for key in ("obs_version", "obs_dim", "num_actions"):
            if not is_json_int(data[key]) or data[key] < 1:
                raise bad(key, "a positive integer")
        if data["obs_dim"] > MAX_LAYER_WIDTH or data["num_actions"] > MAX_LAYER_WIDTH:
            key = "obs_dim" if data["obs_dim"] > MAX_LAYER_WIDTH else "num_actions"
            raise bad(key, f"at most {MAX_LAYER_WIDTH}")
        hidden = data["hidden"]
        if not isinstance(hidden, list) or len(hidden) > MAX_HIDDEN_LAYERS:
            raise bad("hidden", f"a list of at most {MAX_HIDDEN_LAYERS} layer sizes")
        for i, width in enumerate(hidden):
            if not is_json_int(width) or not 1 <= width <= MAX_LAYER_WIDTH:
                raise AgentFileError(
                    f"{where}: 'hidden'[{i}] must be an integer from 1 to {MAX_LAYER_WIDTH}, "
                    f"got {shown(width)}; {EXPORT_HINT}"
                )
        if not isinstance(data["activation"], str) or data["activation"] not in ACTIVATIONS:
            raise bad("activation", f"one of {list(ACTIVATIONS)}")
        for key in ("rules", "extra"):
            if not isinstance(data[key], dict):
                raise bad(key, "a JSON object")
        try:
            Rules.from_dict(data["rules"], where=f"{where}: rules")
        except ValueError as err:
            raise AgentFileError(f"{err}; {EXPORT_HINT}") from None
        digest = data.get("digest")
        if digest is not None and not (
            isinstance(digest, str)
            and digest.startswith("sha256:")
            and len(digest) == 71
            and all(c in "0123456789abcdef" for c in digest[7:])
        ):
            raise bad("digest", "'sha256:' and 64 hexadecimal digits")
        return cls(
            name=data["name"],
            algorithm=data["algorithm"],
            obs_version=data["obs_version"],
            obs_dim=data["obs_dim"],
            num_actions=data["num_actions"],
            hidden=tuple(hidden),
            activation=data["activation"],
            rules=data["rules"],
            extra=data["extra"],
            digest=digest,
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
