"""Starting a fresh model from trained weights: a training config's ``init_from``.

:func:`initialise_from` loads an SB3 checkpoint ``.zip`` of the same algorithm and
architecture (every network and the optimiser state), or an exported ``.safetensors``
policy (the acting network only), into the model a run has just built.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError

from uno_env.rules import Rules
from unolab.agents.learned import load_policy
from unolab.agents.policy_metadata import CheckpointMismatchError
from unolab.train import algorithms
from unolab.train.algorithms import load_policy_layers
from unolab.train.checkpoint_files import DamagedCheckpointError

__all__ = ["initialise_from"]


def initialise_from(model: Any, path: str | Path, rules: Rules) -> None:
    """Overwrite a fresh model's weights with trained ones (``init_from`` of the config).

    Neither file is unpickled: a zip's tensors are read with torch's weights-only loader
    (:func:`~unolab.train.algorithms.load_checkpoint_state`).

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
        _, activation = algorithms.policy_layers(model)
        if policy.meta.activation != activation:
            raise ValueError(
                f"init_from: {path} uses {policy.meta.activation} activations, this run's "
                f"network {activation} (an imitation clone for DQN needs activation: relu)"
            )
        layers = [
            (m.weight.detach(), m.bias.detach())
            for m in policy.net.layers
            if isinstance(m, torch.nn.Linear)
        ]
        try:
            load_policy_layers(model, layers)
        except ValueError as err:
            raise ValueError(f"init_from: {path}: {err}") from None
        return
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"init_from: {path} is not a readable SB3 checkpoint (not a zip archive); give a "
            "run's latest.zip or best.zip"
        )
    try:
        algorithms.load_checkpoint_state(path, model)
    except DamagedCheckpointError as err:
        advice = (
            "same algorithm and net_arch needed"
            if "does not fit" in str(err)
            else "give a run's latest.zip or best.zip"
        )
        raise ValueError(f"init_from: {err}; {advice}") from None
