"""Small learned agents for tests, written into a test's folder (never the shipped ones,
which are retrained from time to time)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_tiny_agent"]


def write_tiny_agent(
    folder: Path,
    name: str = "tiny",
    seed: int = 0,
    activation: str = "tanh",
    random_biases: bool = False,
) -> Path:
    """A random one-hidden-layer network for the official 2-player rules under the current
    observation version: ``<folder>/<name>.safetensors`` and its ``.json``; returns the
    first. Biases are zeros unless ``random_biases``."""
    import torch

    from uno_env.cards import NUM_ACTIONS
    from uno_env.observation import OBS_DIM, OBS_VERSION
    from uno_env.rules import Rules
    from unolab.agents.learned import save_policy
    from unolab.agents.policy_metadata import PolicyMetadata

    torch.manual_seed(seed)
    hidden = 8
    meta = PolicyMetadata(
        name=name,
        algorithm="ppo",
        obs_version=OBS_VERSION,
        obs_dim=OBS_DIM,
        num_actions=NUM_ACTIONS,
        hidden=(hidden,),
        activation=activation,
        rules=Rules(num_players=2).to_dict(),
        extra={},
    )
    bias = torch.randn if random_biases else torch.zeros
    first = (torch.randn(hidden, OBS_DIM), bias(hidden))
    last = (torch.randn(NUM_ACTIONS, hidden), bias(NUM_ACTIONS))
    return save_policy(folder / name, [first, last], meta)
