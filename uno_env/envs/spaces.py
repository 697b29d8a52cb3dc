"""The spaces of the envs, derived from the one table of observation fields."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from uno_env import cards as C
from uno_env.observation import OBS_DIM, observation_bounds
from uno_env.rules import Rules

__all__ = ["action_space", "observation_space"]


def observation_space(rules: Rules) -> spaces.Box:
    """The flat observation space: a float32 Box of shape (OBS_DIM,), bounded per field."""
    low, high = observation_bounds(rules)
    return spaces.Box(low=low, high=high, shape=(OBS_DIM,), dtype=np.float32)


def action_space() -> spaces.Discrete:
    """The action space: the 80 action ids of ``docs/engine.md``."""
    return spaces.Discrete(C.NUM_ACTIONS)
