"""The environment adapters of uno-lab and the definitions they share.

Three adapters sit on the batched core (:mod:`uno_env.core`) and the one observation encoding
(:mod:`uno_env.observation`); none of them holds a rule of the game:

* :mod:`uno_env.envs.pettingzoo_env`: ``raw_env`` / ``env``, a PettingZoo AEC env where every
  seat is an agent (``from uno_env import env``);
* :mod:`uno_env.envs.gym_env`: ``UnoGymEnv``, a Gymnasium env where one learner seat plays
  against opponent policies (``gymnasium.make("uno_env/Uno-v0")``);
* :mod:`uno_env.envs.vec_env`: ``UnoVecEnv``, a natively batched Stable-Baselines3 ``VecEnv``.

This module holds what all three share: the spaces, the reward schemes and the key schedule
that turns a seed into the deals of successive hands. See ``docs/envs.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.observation import OBS_DIM, OBS_LAYOUT
from uno_env.rng import derive_keys, keyed_bits
from uno_env.rules import Rules

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

# ----------------------------------------------------------------------------------------
# Spaces
# ----------------------------------------------------------------------------------------

DECK_POINTS = int((C.FACE_POINTS.astype(np.int64) * C.FACE_COUNTS).sum())
"""Points of the whole deck (1240): no hand can score more."""


def field_bounds(rules: Rules) -> dict[str, tuple[float, float]]:
    """The (low, high) bounds of each observation field (the table of :mod:`uno_env.observation`)."""
    most_copies = float(C.FACE_COUNTS.max())
    # Envs deal a fresh match per episode, but a match-level score stays below the target
    # plus one hand's points; the factor 2 leaves room for house scoring rules.
    max_score = (rules.target_score + 2 * DECK_POINTS) / rules.target_score
    return {
        "hand": (0.0, most_copies),
        "top_card": (0.0, 1.0),
        "colour": (0.0, 1.0),
        "direction": (-1.0, 1.0),
        "phase": (0.0, 1.0),
        "drawn_card": (0.0, 1.0),
        "pending_penalty": (0.0, float(C.DECK_SIZE)),
        "hand_sizes": (0.0, float(C.DECK_SIZE)),
        "scores": (0.0, max_score),
        "discard_counts": (0.0, most_copies),
        "draw_pile_size": (0.0, 1.0),
        "declared": (0.0, 1.0),
        "uno_exposed": (0.0, 1.0),
        "num_players": (0.0, 1.0),
        "legal_actions": (0.0, 1.0),
    }


def observation_bounds(
    rules: Rules,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Return the (low, high) bounds of the observation vector, each shape (OBS_DIM,).

    A field of :data:`~uno_env.observation.OBS_LAYOUT` without known bounds (a field added
    after this table was written) is left unbounded, so the spaces never reject a valid
    observation; ``tests/test_observation.py`` checks the table covers every field.
    """
    low = np.full(OBS_DIM, -np.inf, dtype=np.float32)
    high = np.full(OBS_DIM, np.inf, dtype=np.float32)
    known = field_bounds(rules)
    for name, where in OBS_LAYOUT.items():
        if name in known:
            low[where], high[where] = known[name]
    return low, high


def observation_space(rules: Rules) -> spaces.Box:
    """The flat observation space: a float32 Box of shape (OBS_DIM,)."""
    low, high = observation_bounds(rules)
    return spaces.Box(low=low, high=high, shape=(OBS_DIM,), dtype=np.float32)


def action_space() -> spaces.Discrete:
    """The action space: the 80 action ids of ``docs/engine.md``."""
    return spaces.Discrete(C.NUM_ACTIONS)


# ----------------------------------------------------------------------------------------
# Rewards
# ----------------------------------------------------------------------------------------

RewardFn = Callable[[Rules, UnoState], npt.NDArray[np.float32]]
"""A reward scheme: ``(rules, state) -> (B, N)`` float32 rewards of the finished hands.

It is called on states whose hands may be live, finished or truncated, and must give zeros
for the live and truncated ones. The envs pay a hand's reward once, when it ends.
"""

POINTS_PER_UNIT = 100.0
"""The ``points`` reward is in units of 100 card points."""


def win_loss_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """+1 to the winner, -1/(N-1) to each other seat (zero-sum): :func:`core.hand_rewards`.

    With ``teams``, +1 to both winning partners and -1 to the others.
    """
    return core.hand_rewards(rules, state)


def place_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Rewards by finishing place under ``play_to_last``: :func:`core.place_rewards`.

    Linear in the place, +1 for the first out to -1 for the last (zero-sum). Without
    ``play_to_last`` it equals the win/loss rewards.
    """
    return core.place_rewards(rules, state)


def points_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Card points: each losing seat pays the points left in its hand to the winners.

    A losing seat (one with a negative win/loss reward) gets ``-points_left / 100``
    (:func:`core.points_left`, so house scoring such as ``zero_scores_fifty`` counts); the
    winner, or the two winning partners with ``teams``, share what the losers pay. The
    rewards sum to zero; live and truncated hands give zeros.
    """
    out = np.zeros((state.batch_size, rules.num_players), dtype=np.float32)
    won = np.flatnonzero(state.done)
    if won.size:
        outcome = core.hand_rewards(rules, state)[won]
        losers = outcome < 0
        winners = outcome > 0
        left = core.points_left(rules, state, won).astype(np.float32) / POINTS_PER_UNIT
        paid = np.where(losers, left, 0.0)
        share = paid.sum(axis=1) / np.maximum(winners.sum(axis=1), 1)
        out[won] = np.where(winners, share[:, None], -paid)
    return out


REWARD_SCHEMES: dict[str, RewardFn] = {
    "win_loss": win_loss_rewards,
    "points": points_rewards,
    "place": place_rewards,
}
"""Named reward schemes: ``win_loss`` (default), ``points`` and ``place``."""


def resolve_reward(reward: str | RewardFn) -> RewardFn:
    """Return the reward function for a scheme name or a custom function.

    Raises:
        ValueError: for an unknown scheme name, listing the known ones.
    """
    if callable(reward):
        return reward
    if reward not in REWARD_SCHEMES:
        raise ValueError(
            f"unknown reward scheme {reward!r}; choose one of {sorted(REWARD_SCHEMES)}"
        )
    return REWARD_SCHEMES[reward]


# ----------------------------------------------------------------------------------------
# Seeding: one key schedule for every env
# ----------------------------------------------------------------------------------------

_SLOT_STRIDE = 2**32


def base_key(seed: int | np.random.Generator | None) -> np.uint64:
    """The 64-bit base key of a seed (``None``: fresh OS entropy)."""
    return np.uint64(derive_keys(seed, 1)[0])


def episode_words(
    base: np.uint64,
    slots: npt.NDArray[np.integer],
    episodes: npt.NDArray[np.integer],
    n_words: int,
) -> npt.NDArray[np.uint64]:
    """Random words of episode ``episodes[i]`` of slot ``slots[i]``, shape (k, n_words).

    Word 0 is the game key of the deal (see :func:`uno_env.core.init`); the learner envs use
    word 1 for a random learner seat and words 2.. to sample opponents from a pool. A slot is
    one game of a batch (the Gymnasium env and the AEC env are slot 0), so the same seed
    deals the same hands in every env.
    """
    slots_u = np.asarray(slots).astype(np.uint64)
    streams = slots_u * np.uint64(_SLOT_STRIDE) + np.asarray(episodes).astype(np.uint64)
    return keyed_bits(np.full(slots_u.shape, base, dtype=np.uint64), streams, n_words)


# ----------------------------------------------------------------------------------------
# Lazy exports of the env classes (they import gymnasium, pettingzoo and stable-baselines3)
# ----------------------------------------------------------------------------------------

_LAZY = {
    "UnoGymEnv": "uno_env.envs.gym_env",
    "UnoVecEnv": "uno_env.envs.vec_env",
    "env": "uno_env.envs.pettingzoo_env",
    "raw_env": "uno_env.envs.pettingzoo_env",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'uno_env.envs' has no attribute {name!r}")
