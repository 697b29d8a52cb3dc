"""Learned policies: small MLPs loaded from safetensors weights and a JSON metadata file.

Loading runs no code from the file (unlike SB3's zip checkpoints, which use cloudpickle):
the weights are plain tensors and the architecture is described by the metadata. Both files
are checked before any network is built: sizes are bounded, the metadata's types and values
are validated, and the safetensors header (read without loading the tensors) must list
exactly the tensors, shapes and dtypes the metadata describes. Anything wrong raises one
:class:`AgentFileError` naming the file and what to do. A policy refuses, with a clear
message (:class:`CheckpointMismatchError`), a checkpoint whose observation version or rules
differ from the env it is asked to play in. The metadata, and those checks of it, are
:mod:`unolab.agents.policy_metadata`'s; this module reads and writes the files and plays.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from safetensors import SafetensorError
from safetensors.torch import load, save
from torch import nn

from uno_env.files import (
    UnreadableFileError,
    read_regular_file,
    save_atomically,
    shown,
    write_atomically,
)
from uno_env.policy import Seed, check_agent_rules, check_masks, check_reset_games
from uno_env.rules import Rules, load_rules
from unolab.agents.agent_files import (
    EXPORT_HINT,
    MAX_AGENT_FILE_BYTES,
    MAX_HIDDEN_LAYERS,
    MAX_LAYER_WIDTH,
    MAX_METADATA_BYTES,
    AgentFileError,
    agent_paths,
    agent_stem,
    read_bounded,
    tensor_header,
)
from unolab.agents.policy_metadata import (
    ACTIVATIONS,
    CheckpointMismatchError,
    PolicyMetadata,
    check_encoding,
    check_metadata,
)
from unolab.agents.registry import agent_seed, shipped_agent_path

__all__ = [
    "MAX_AGENT_FILE_BYTES",
    "MAX_HIDDEN_LAYERS",
    "MAX_LAYER_WIDTH",
    "AgentFileError",
    "CheckpointMismatchError",
    "MLPNet",
    "TorchPolicy",
    "load_policy",
    "save_policy",
]


class MLPNet(nn.Module):
    """observation -> hidden layers -> one logit (or Q-value) per action."""

    def __init__(self, obs_dim: int, hidden: Sequence[int], num_actions: int, activation: str):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
        layers: list[nn.Module] = []
        size = obs_dim
        for width in hidden:
            layers += [nn.Linear(size, width), ACTIVATIONS[activation]()]
            size = width
        layers.append(nn.Linear(size, num_actions))
        self.layers = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Logits (or Q-values) for a batch of observations."""
        out: torch.Tensor = self.layers(obs)
        return out

    def linears(self) -> list[nn.Linear]:
        """The linear layers, input side first."""
        return [m for m in self.layers if isinstance(m, nn.Linear)]

    def layer_weights(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The (weight, bias) of each linear layer, input side first, detached: what
        :func:`save_policy` writes."""
        return [(m.weight.detach(), m.bias.detach()) for m in self.linears()]


def save_policy(
    path: str | Path, layers: Sequence[tuple[torch.Tensor, torch.Tensor]], meta: PolicyMetadata
) -> Path:
    """Write ``<path>.safetensors`` and ``<path>.json`` (weights, biases of each layer):
    both, or neither.

    Returns:
        The path of the safetensors file.

    Raises:
        UnwritableFileError: either file's path holds something other than a regular file
            (a folder, a link, a pipe): neither is written.
        OSError: a write failed (a full disk): neither file is changed.
    """
    base = agent_stem(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for i, (weight, bias) in enumerate(layers):
        tensors[f"layer{i}.weight"] = weight.detach().cpu().contiguous()
        tensors[f"layer{i}.bias"] = bias.detach().cpu().contiguous()
    weights_path = base.with_name(base.name + ".safetensors")
    raw = save(tensors)
    signed = dataclasses.replace(meta, digest=meta.digest_of(raw))
    text = signed.to_json()

    def write_both(scratch: Path) -> None:
        # The weights are written aside first (the large write, which a full disk stops);
        # the metadata goes into place only then, and the weights last, by a rename: a
        # failure to write either leaves both as they were, never new weights beside old
        # metadata (or none).
        scratch.write_bytes(raw)
        write_atomically(base.with_name(base.name + ".json"), text)

    save_atomically(weights_path, write_both)
    return weights_path


class TorchPolicy:
    """A learned policy following :class:`uno_env.policy.Policy`: the masked argmax of an MLP.

    ``act(observations, masks)`` takes a batch, observations of shape ``(B, obs_dim)`` and
    masks of shape ``(B, num_actions)``, and returns one legal action per row, shape
    ``(B,)``. A single observation of shape ``(obs_dim,)`` with its mask of shape
    ``(num_actions,)`` is accepted too and is treated as a batch of one: the result then has
    shape ``(1,)``.

    ``action_probs(observations, masks)`` shows what the policy thinks: for each row, the
    probability it gives each action, the softmax of the network's logits over the legal
    actions (illegal actions get 0; each row with a legal action sums to 1; a row without
    any, a finished game, is all zeros). A sampling policy (``deterministic=False``) draws
    its actions from these probabilities; a deterministic one plays the most probable
    action (its argmax).

    Args:
        net: The network.
        meta: Its metadata.
        deterministic: Argmax (True) or sampling from the masked softmax (False).
        seed: Seed of the sampling: an integer in ``0 <= seed < 2**64``, a NumPy
            ``Generator`` (an integer is drawn from it) or ``None`` (0).

    Raises:
        TypeError: for a ``deterministic`` that is not a bool.
        ValueError: for a seed out of range or not an integer, naming it.
    """

    def __init__(
        self,
        net: MLPNet,
        meta: PolicyMetadata,
        deterministic: bool = True,
        seed: Seed = None,
    ) -> None:
        if not isinstance(deterministic, (bool, np.bool_)):
            raise TypeError(f"deterministic must be True or False, got {shown(deterministic)}")
        seed = agent_seed(seed)  # a seed out of 0..2**64-1 is refused, not wrapped
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**62))
        self.net = net.eval()
        self.meta = meta
        self.name = meta.name
        self.deterministic = bool(deterministic)
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)

    def _masked_logits(
        self, observations: npt.ArrayLike, masks: npt.ArrayLike
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits with illegal actions at -inf, as a batch (a single row becomes a batch)."""
        arrays = []
        for argument, value in (("observations", observations), ("masks", masks)):
            try:
                arrays.append(np.asarray(value))
            except (ValueError, TypeError):  # ragged rows: no array at all
                raise ValueError(
                    f"policy {self.name!r}: {argument}: expected rows of equal length "
                    f"(an array), got {shown(value)}"
                ) from None
        obs, legal_np = arrays
        if obs.ndim == 1 and legal_np.ndim == 1:
            obs, legal_np = obs[None, :], legal_np[None, :]
        obs_dim, num_actions = self.meta.obs_dim, self.meta.num_actions
        if (
            obs.ndim != 2
            or obs.shape[1] != obs_dim
            or legal_np.shape != (obs.shape[0], num_actions)
        ):
            given = "" if isinstance(observations, np.ndarray) else f" ({shown(observations)})"
            raise ValueError(
                f"policy {self.name!r}: expected observations of shape (B, {obs_dim}) and "
                f"masks of shape (B, {num_actions}) (or one observation ({obs_dim},) with "
                f"its mask ({num_actions},)), got {obs.shape}{given} and {legal_np.shape}"
            )
        if obs.dtype.kind not in "fiub":  # text or objects: no encoding the lab writes
            raise ValueError(
                f"policy {self.name!r}: observations: expected numbers (float32, as "
                f"uno_env.observation.encode writes them), got dtype {obs.dtype}"
            )
        if obs.dtype.kind == "f" and not np.isfinite(obs).all():  # a NaN spreads to every logit
            raise ValueError(
                f"policy {self.name!r}: observations: hold NaN or infinite values; expected "
                "finite numbers (as uno_env.observation.encode writes them)"
            )
        legal_np = check_masks(f"policy {self.name!r}", legal_np)
        logits = self.net(torch.as_tensor(obs, dtype=torch.float32))
        legal = torch.tensor(legal_np)
        logits = logits.masked_fill(~legal, float("-inf"))
        return logits, legal

    def act(self, observations: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Choose one legal action per row.

        Args:
            observations: ``(B, obs_dim)``, or one observation ``(obs_dim,)``.
            masks: ``(B, num_actions)`` legal actions, or one mask ``(num_actions,)``.

        Returns:
            ``(B,)`` actions; ``(1,)`` for a single observation.

        Raises:
            ValueError: naming the expected and the given shapes, or observations that are
                not finite numbers.
        """
        with torch.no_grad():
            logits, legal = self._masked_logits(observations, masks)
            # Rows with no legal action (finished games) get action 0, which is ignored.
            logits[~legal.any(dim=1)] = 0.0
            if self.deterministic:
                return logits.argmax(dim=1).numpy().astype(np.int64)
            probs = torch.softmax(logits, dim=1)
            return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy()

    def action_probs(
        self, observations: npt.ArrayLike, masks: npt.ArrayLike
    ) -> npt.NDArray[np.float32]:
        """The probability the policy gives each action: the softmax of its legal logits.

        Illegal actions get 0 and each row with a legal action sums to 1 (a row without any
        is all zeros). A deterministic policy plays the argmax of these probabilities.

        Args:
            observations: ``(B, obs_dim)``, or one observation ``(obs_dim,)``.
            masks: ``(B, num_actions)`` legal actions, or one mask ``(num_actions,)``.

        Returns:
            ``(B, num_actions)`` float32 probabilities; ``(1, num_actions)`` for a single
            observation.

        Raises:
            ValueError: naming the expected and the given shapes, or observations that are
                not finite numbers.
        """
        with torch.no_grad():
            logits, legal = self._masked_logits(observations, masks)
            has_legal = legal.any(dim=1)
            logits[~has_legal] = 0.0  # a softmax over all -inf would be NaN
            probs = torch.softmax(logits, dim=1)
            probs[~has_legal] = 0.0
            return probs.numpy().astype(np.float32)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget.

        Raises:
            ValueError: for ``games`` that are neither None nor a boolean mask.
        """
        check_reset_games(f"policy {self.name!r}", games)

    def check_compatible(self, rules: Rules) -> None:
        """Refuse to play under other rules or another observation encoding.

        Raises:
            CheckpointMismatchError: naming what differs.
            TypeError: for ``rules`` that are no :class:`~uno_env.rules.Rules`.
        """
        check_metadata(self.meta, check_agent_rules(rules), where=self.name)


def _check_tensors(
    header: Mapping[str, tuple[str, tuple[int, ...]]],
    meta: PolicyMetadata,
    weights: Path,
    meta_path: Path,
) -> None:
    """The tensors must be exactly the layers that the metadata describes, shape for shape."""
    sizes = [meta.obs_dim, *meta.hidden, meta.num_actions]
    expected: dict[str, tuple[int, ...]] = {}
    for i in range(len(sizes) - 1):
        expected[f"layer{i}.weight"] = (sizes[i + 1], sizes[i])
        expected[f"layer{i}.bias"] = (sizes[i + 1],)
    missing = [name for name in expected if name not in header]
    extra = sorted(name for name in header if name not in expected)
    if missing or extra:
        found = "missing " + shown(missing, 120) if missing else "unexpected " + shown(extra)
        raise AgentFileError(
            f"{weights}: its tensors do not match the network described in {meta_path.name} "
            f"(obs_dim {meta.obs_dim}, hidden {list(meta.hidden)}, num_actions "
            f"{meta.num_actions}): {found}; use the .json exported with these weights or "
            f"{EXPORT_HINT}"
        )
    for name, shape in expected.items():
        if header[name][1] != shape:
            raise AgentFileError(
                f"{weights}: tensor {name!r} has shape {list(header[name][1])}, but "
                f"{meta_path.name} (obs_dim {meta.obs_dim}, hidden {list(meta.hidden)}, "
                f"num_actions {meta.num_actions}) needs {list(shape)}; use the .json "
                f"exported with these weights or {EXPORT_HINT}"
            )


def load_policy(
    path: str | Path,
    rules: Rules | str | Mapping[str, Any] | None = None,
    deterministic: bool = True,
    seed: Seed = None,
) -> TorchPolicy:
    """Load an exported policy (``.safetensors`` + ``.json``) without unpickling anything.

    Everything is checked before the network is built: the files' sizes (at most
    :data:`MAX_AGENT_FILE_BYTES`), the metadata (types, bounds, rules), the observation
    encoding and, from the safetensors header alone, that the tensors are exactly the
    layers the metadata describes. The weights must be finite.

    Args:
        path: The ``.safetensors`` file (or its ``.json``, or the path without suffix), or
            a shipped agent's name (``"ppo_official_2p"``, see :mod:`unolab.agents.registry`).
        rules: If given, the policy must have been trained under exactly these rules (Rules,
            a preset name, a YAML path or a mapping, as :func:`uno_env.load_rules` takes).
        deterministic: Argmax (default) or sampling.
        seed: Seed of the sampling (see :class:`TorchPolicy`).

    Raises:
        MissingAgentFileError: (a ``FileNotFoundError`` and a ``ValueError``) if a file is
            missing.
        AgentFileError: if a file is malformed, too large or inconsistent with the other
            (the message names the file and what to do).
        CheckpointMismatchError: if the rules or observation version differ.
        TypeError: for a ``path`` that is no text or path, or a ``deterministic`` that is
            not a bool.
        ValueError: for a seed :func:`~unolab.agents.registry.agent_seed` refuses, or
            rules :func:`uno_env.load_rules` refuses.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"path: expected an exported agent's path (text or a Path) or a shipped agent's "
            f"name, got {shown(path)}"
        )
    if not isinstance(deterministic, (bool, np.bool_)):
        raise TypeError(f"deterministic must be True or False, got {shown(deterministic)}")
    agent_seed(seed)  # checked before any file is read
    if rules is not None and not isinstance(rules, Rules):
        rules = load_rules(rules)  # a preset name, a YAML path or a mapping
    shipped = shipped_agent_path(str(path))
    if shipped is not None and not Path(path).exists():  # a shipped agent by name
        path = shipped
    weights, meta_path = agent_paths(path)
    meta = PolicyMetadata.from_json(
        read_bounded(meta_path, MAX_METADATA_BYTES), where=str(meta_path)
    )
    check_encoding(meta, where=str(weights))
    if rules is not None:
        check_metadata(meta, rules, where=str(weights))
    _check_tensors(tensor_header(weights), meta, weights, meta_path)
    try:
        raw = read_regular_file(weights, MAX_AGENT_FILE_BYTES, "agent weights")
    except UnreadableFileError as err:
        raise AgentFileError(f"{err}; copy the file again or {EXPORT_HINT}") from None
    if meta.digest is not None and meta.digest_of(raw) != meta.digest:
        raise AgentFileError(
            f"{meta_path}: its digest does not match {weights.name}: the metadata belongs to "
            "other weights, or was edited (its rules, network or algorithm); use the .json "
            f"exported with these weights or {EXPORT_HINT}"
        )
    try:
        tensors: Mapping[str, torch.Tensor] = load(raw)
    except (SafetensorError, OSError, RuntimeError, ValueError) as err:  # changed on disk
        raise AgentFileError(
            f"{weights}: the weights cannot be read ({err}); copy the file again or {EXPORT_HINT}"
        ) from None
    net = MLPNet(meta.obs_dim, meta.hidden, meta.num_actions, meta.activation)
    with torch.no_grad():
        for i, linear in enumerate(net.linears()):
            for part, param in (("weight", linear.weight), ("bias", linear.bias)):
                tensor = tensors.get(f"layer{i}.{part}")
                if tensor is None or tensor.shape != param.shape:
                    raise AgentFileError(
                        f"{weights}: the file changed while it was read; load it again"
                    )
                if not torch.isfinite(tensor).all():
                    raise AgentFileError(
                        f"{weights}: tensor 'layer{i}.{part}' holds NaN or infinite values; "
                        f"the training diverged or the file is damaged; {EXPORT_HINT}"
                    )
                param.copy_(tensor)
    return TorchPolicy(net, meta, deterministic=deterministic, seed=seed)
