"""The spaces of the envs, derived from the one table of observation fields, and the check
that an action is an element of the action space.

An env refuses what is not an action id (:func:`action_id`, :func:`action_ids`) before
anything else looks at it: an integer outside 0..79, a fractional or non-finite number, a
bool, text, ``None`` or a nested list. Such an action is a bug of the caller, not a move of
the game, so it is an error under every ``illegal_action`` mode (as PettingZoo's
``AssertOutOfBoundsWrapper`` makes it), and it is named as it was given, never as the
64-bit number it would wrap to.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from uno_env import cards as C
from uno_env.core import IllegalActionError
from uno_env.files import shown
from uno_env.observation import OBS_DIM, observation_bounds
from uno_env.rules import Rules

__all__ = [
    "action_id",
    "action_ids",
    "action_space",
    "masked_observation_space",
    "observation_space",
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
