"""The reward schemes of the learner envs: ``win_loss`` (default), ``points`` and ``place``.

The rules of who won and how many points a hand scores live in :mod:`uno_env.core`; a
scheme only turns the finished state into one reward per seat.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from uno_env import core
from uno_env.core import UnoState
from uno_env.files import shown
from uno_env.rules import Rules

__all__ = [
    "POINTS_PER_UNIT",
    "REWARD_SCHEMES",
    "CheckedReward",
    "RewardFn",
    "place_rewards",
    "points_rewards",
    "resolve_reward",
    "win_loss_rewards",
]

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
