"""The environment adapters of uno-lab and the definitions they share.

Three adapters sit on the batched core (:mod:`uno_env.core`) and the one observation encoding
(:mod:`uno_env.observation`); none of them holds a rule of the game:

* :mod:`uno_env.envs.pettingzoo_env`: ``raw_env`` / ``env``, a PettingZoo AEC env where every
  seat is an agent (``from uno_env import env``);
* :mod:`uno_env.envs.gym_env`: ``UnoGymEnv``, a Gymnasium env where one learner seat plays
  against opponent policies (``gymnasium.make("uno_env/Uno-v0")``);
* :mod:`uno_env.envs.vec_env`: ``UnoVecEnv``, a natively batched Stable-Baselines3 ``VecEnv``.

What all three share lives in modules beside them: :mod:`~uno_env.envs.common` (the spaces,
derived from :data:`uno_env.observation.OBS_FIELDS`, the reward schemes and the key schedule
that turns a seed into the deals of successive hands), :mod:`~uno_env.envs.opponents` (the
opponents) and
:mod:`~uno_env.envs.learner_tables` (the tables they play at, with the checks of their
arguments in :mod:`~uno_env.envs.table_inputs`). This module only re-exports.
See ``docs/envs.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uno_env.envs.common import (
        POINTS_PER_UNIT,
        REWARD_SCHEMES,
        RewardFn,
        action_space,
        base_key,
        episode_words,
        observation_space,
        place_rewards,
        points_rewards,
        resolve_reward,
        win_loss_rewards,
    )
    from uno_env.envs.gym_env import UnoGymEnv
    from uno_env.envs.pettingzoo_env import env, raw_env
    from uno_env.envs.vec_env import UnoVecEnv
    from uno_env.observation import field_bounds, observation_bounds

__all__ = [
    "POINTS_PER_UNIT",
    "REWARD_SCHEMES",
    "RewardFn",
    "UnoGymEnv",
    "UnoVecEnv",
    "action_space",
    "base_key",
    "env",
    "episode_words",
    "field_bounds",
    "observation_bounds",
    "observation_space",
    "place_rewards",
    "points_rewards",
    "raw_env",
    "resolve_reward",
    "win_loss_rewards",
]

# Every name is loaded on first use: the env classes import gymnasium, pettingzoo and
# stable-baselines3, and the rest the compiled engine, none of which the Gymnasium
# registration (uno_env.envs.registration, run by ``import uno_env``) needs.
_LAZY = {
    "POINTS_PER_UNIT": "uno_env.envs.common",
    "REWARD_SCHEMES": "uno_env.envs.common",
    "RewardFn": "uno_env.envs.common",
    "place_rewards": "uno_env.envs.common",
    "points_rewards": "uno_env.envs.common",
    "resolve_reward": "uno_env.envs.common",
    "win_loss_rewards": "uno_env.envs.common",
    "base_key": "uno_env.envs.common",
    "episode_words": "uno_env.envs.common",
    "action_space": "uno_env.envs.common",
    "observation_space": "uno_env.envs.common",
    "field_bounds": "uno_env.observation",
    "observation_bounds": "uno_env.observation",
    "UnoGymEnv": "uno_env.envs.gym_env",
    "UnoVecEnv": "uno_env.envs.vec_env",
    "env": "uno_env.envs.pettingzoo_env",
    "raw_env": "uno_env.envs.pettingzoo_env",
}


def __getattr__(name: str) -> Any:
    """Import a name from its module on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'uno_env.envs' has no attribute {name!r}")
