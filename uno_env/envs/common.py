"""What every env shares: its spaces, its reward schemes and its key schedule.

**Spaces.** The spaces of the envs, derived from the one table of observation fields, and the check
that an action is an element of the action space.

An env refuses what is not an action id (:func:`action_id`, :func:`action_ids`) before
anything else looks at it: an integer outside 0..79, a fractional or non-finite number, a
bool, text, ``None`` or a nested list. Such an action is a bug of the caller, not a move of
the game, so it is an error under every ``illegal_action`` mode (as PettingZoo's
``AssertOutOfBoundsWrapper`` makes it), and it is named as it was given, never as the
64-bit number it would wrap to.

**Rewards.** The reward schemes of the learner envs: ``win_loss`` (default), ``points`` and ``place``.

The rules of who won and how many points a hand scores live in :mod:`uno_env.core`; a
scheme only turns the finished state into one reward per seat.

**Seeding.** One key schedule for every env: from a seed to the deals of successive hands.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from uno_env import cards as C
from uno_env import core
from uno_env.config_values import check_seed
from uno_env.core import IllegalActionError, UnoState
from uno_env.files import shown
from uno_env.observation import OBS_DIM, observation_bounds
from uno_env.rng import derive_keys, keyed_bits
from uno_env.rules import Rules

__all__ = [
    "POINTS_PER_UNIT",
    "REWARD_SCHEMES",
    "SLOT_STRIDE",
    "CheckedReward",
    "RewardFn",
    "action_id",
    "action_ids",
    "action_space",
    "base_key",
    "checked_seed",
    "episode_words",
    "masked_observation_space",
    "observation_space",
    "place_rewards",
    "points_rewards",
    "resolve_reward",
    "win_loss_rewards",
]


def observation_space(rules: Rules) -> spaces.Box:
    """The flat observation space: a float32 Box of shape (OBS_DIM,), bounded per field."""
    low, high = observation_bounds(rules)
    return spaces.Box(low=low, high=high, shape=(OBS_DIM,), dtype=np.float32)


def masked_observation_space(rules: Rules) -> spaces.Dict:
    """The AEC env's observation space: ``observation`` (:func:`observation_space`) and
    ``action_mask``, an int8 Box of the 80 actions (1: legal for the agent to act)."""
    return spaces.Dict(
        {
            "observation": observation_space(rules),
            "action_mask": spaces.Box(0, 1, shape=(C.NUM_ACTIONS,), dtype=np.int8),
        }
    )


def action_space() -> spaces.Discrete:
    """The action space: the 80 action ids of ``docs/engine.md``."""
    return spaces.Discrete(C.NUM_ACTIONS)


_IDS = f"an action id (an integer in 0..{C.NUM_ACTIONS - 1})"
_FEW = 16
"""Up to this many actions are range-checked one by one (faster than array operations)."""


def _number_id(value: int | float, given: object, what: str) -> int:
    """A number as an action id, or the error naming it as ``given``."""
    if isinstance(value, float) and not (math.isfinite(value) and value == round(value)):
        raise IllegalActionError(f"{what} must be {_IDS}, got {shown(given)}")
    if not 0 <= value < C.NUM_ACTIONS:
        raise IllegalActionError(f"{what} {shown(given)} is out of range 0..{C.NUM_ACTIONS - 1}")
    return int(value)


def action_id(action: object, what: str = "action") -> int:
    """``action`` as an action id, checked to be an element of :func:`action_space`.

    An integer (Python's or NumPy's) or a 0-d integer array; a float that holds an integer
    counts as it, as in :func:`uno_env.core.step`.

    Args:
        action: The action as given.
        what: What the message calls it (``"player_0's action"``).

    Returns:
        The action id, a Python int in 0..79 (it may still be illegal in the game).

    Raises:
        IllegalActionError: (a ``ValueError``) for a number that is not an action id: out of
            range, fractional, NaN or infinite, named as given.
        TypeError: for anything that is not a number: a bool, text, ``None``, a list or an
            array of another shape.
    """
    value: Any = action
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]  # a 0-d array: its one element, a NumPy scalar
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{what} must be {_IDS}, got {shown(action)}")
    return _number_id(value.item() if isinstance(value, np.generic) else value, action, what)


def action_ids(actions: npt.ArrayLike, count: int, unit: str = "game") -> npt.NDArray[np.int64]:
    """One action id per game, checked like :func:`action_id`, as the core steps them.

    Args:
        actions: ``count`` actions, any shape of that size (an array, a list).
        count: The number of games.
        unit: What the message calls a game (``"env"`` in a ``VecEnv``).

    Returns:
        An int64 array of shape ``(count,)``.

    Raises:
        ValueError: for another number of actions.
        IllegalActionError: for a number that is not an action id, naming the game and
            the value as given.
        TypeError: for actions that are not numbers (bools, text, objects).
    """
    if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (count,):
        # What a learning loop hands over at every step: checked with the least work.
        values = actions.tolist() if 0 < count <= _FEW else None
        if (
            min(values) >= 0 and max(values) < C.NUM_ACTIONS
            if values is not None
            else ((actions >= 0) & (actions < C.NUM_ACTIONS)).all()
        ):
            return actions
    try:
        arr = np.asarray(actions)
    except (ValueError, TypeError, OverflowError):  # ragged lists and the like
        raise TypeError(
            f"actions must be {_IDS} per {unit}, shape ({count},); got {shown(actions)}"
        ) from None
    if arr.size != count:
        raise ValueError(
            f"actions must hold one action per {unit}, shape ({count},); got {shown(actions)} "
            f"of shape {arr.shape}"
        )
    arr = arr.reshape(count)
    if arr.dtype.kind == "i" or (arr.dtype.kind == "u" and arr.dtype.itemsize < 8):
        # The common case, checked at once (a few values are checked fastest one by one).
        if (
            all(0 <= value < C.NUM_ACTIONS for value in arr.tolist())
            if count <= _FEW
            else ((arr >= 0) & (arr < C.NUM_ACTIONS)).all()
        ):
            return arr.astype(np.int64, copy=False)
    elif arr.dtype.kind not in "uf" and arr.dtype != object:
        raise TypeError(f"actions must be {_IDS} each, got {shown(actions)} (dtype {arr.dtype})")
    # One by one, as given: NumPy reads [2**63, 0] as floats, which would misname the first.
    given = actions if isinstance(actions, (list, tuple)) and len(actions) == count else None
    out = np.empty(count, dtype=np.int64)
    for game, value in enumerate(arr.tolist() if given is None else given):
        out[game] = action_id(value, f"{unit} {game}: action")
    return out


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


class CheckedReward:
    """A custom reward function whose every answer is checked before an env pays it.

    The envs index the table by game and seat: a table of another shape, or one that
    holds no numbers, would fail there with a bare ``IndexError`` naming nothing.

    Args:
        fn: The reward function (see :data:`RewardFn`).
    """

    def __init__(self, fn: RewardFn) -> None:
        self.fn = fn
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__

    def __call__(self, rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
        """The function's rewards, (B, N) float32, checked.

        Raises:
            TypeError: for a result that is not an array of numbers, naming the function.
            ValueError: for a table of another shape than (B, N), or a NaN or infinite
                reward, naming the function, the shape returned and the shape expected.
        """
        result = self.fn(rules, state)
        expected = (state.batch_size, rules.num_players)
        what = f"reward function {self.name!r}"
        try:
            raw = np.asarray(result)
        except (TypeError, ValueError):  # ragged lists
            raw = np.asarray(None)
        if raw.dtype.kind not in "biuf":
            raise TypeError(
                f"{what} returned {shown(result)}; expected a {expected} array of numbers "
                "(one reward per game and seat)"
            )
        table = raw.astype(np.float32)
        if table.shape != expected:
            raise ValueError(
                f"{what} returned shape {table.shape}; expected {expected}: one reward per "
                "game (rows) and seat (columns)"
            )
        if not np.isfinite(table).all():
            game, seat = (int(i) for i in np.argwhere(~np.isfinite(table))[0])
            raise ValueError(
                f"{what} returned {raw[game, seat].item()!r} for game {game}, seat {seat}; "
                "rewards must be finite float32 numbers"
            )
        return table


def resolve_reward(reward: str | RewardFn) -> RewardFn:
    """Return the reward function for a scheme name or a custom function.

    A custom function comes back as a :class:`CheckedReward`, so that a table of the wrong
    shape is one error naming it.

    Raises:
        ValueError: for an unknown scheme name, listing the known ones.
        TypeError: for anything that is neither a name nor a function.
    """
    if callable(reward):
        if isinstance(reward, CheckedReward) or any(
            reward is scheme for scheme in REWARD_SCHEMES.values()
        ):
            return reward
        return CheckedReward(reward)
    if not isinstance(reward, str):
        raise TypeError(
            f"reward must be a scheme name ({', '.join(sorted(REWARD_SCHEMES))}) or a reward "
            f"function, got {shown(reward)}"
        )
    if reward not in REWARD_SCHEMES:
        raise ValueError(
            f"unknown reward scheme {reward!r}; choose one of {sorted(REWARD_SCHEMES)}"
        )
    return REWARD_SCHEMES[reward]


SLOT_STRIDE = 2**32
"""The distance between two slots' streams in the key schedule (:func:`episode_words`)."""


def checked_seed(seed: object, what: str = "seed") -> int | None:
    """An env's seed checked: ``None``, or an integer (Python's or NumPy's, not a bool) in
    ``0 <= seed < 2**63``, as every seed of the lab (:func:`uno_env.config_values.check_seed`).

    Returns:
        The seed as a Python int (which Gymnasium's own seeding requires), or None.

    Raises:
        ValueError: naming ``what`` and the seed as given.
    """
    return None if seed is None else check_seed(what, seed)


def base_key(seed: int | np.integer | np.random.Generator | None) -> np.uint64:
    """The 64-bit base key of a seed (``None``: fresh OS entropy; a Generator: drawn from it).

    Raises:
        ValueError: for a seed that :func:`checked_seed` refuses.
    """
    if isinstance(seed, np.random.Generator):
        return np.uint64(derive_keys(seed, 1)[0])
    return np.uint64(derive_keys(checked_seed(seed), 1)[0])


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
    streams = slots_u * np.uint64(SLOT_STRIDE) + np.asarray(episodes).astype(np.uint64)
    return keyed_bits(np.full(slots_u.shape, base, dtype=np.uint64), streams, n_words)
