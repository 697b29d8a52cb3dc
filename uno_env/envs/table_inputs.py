"""The checks of what the envs and their learner tables are given, made before anything
changes.

:class:`~uno_env.envs.learner_tables.LearnerTables` is given its size, the learner's seat and
the opponents when it is built, and explicit keys and learner seats at a reset; every env is
given a reset's options, and the AEC env ``agent_iter``'s ``max_iter``. Each is read and
checked here, and refused with a message naming it and what is allowed, so that a bad
argument never leaves an env half changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from uno_env.core.checks import is_int
from uno_env.core.setup import game_keys
from uno_env.envs.opponents import OpponentPool, OpponentsSpec
from uno_env.files import shown
from uno_env.policy import PolicyFactory, RandomBot

__all__ = [
    "MAX_NUM_GAMES",
    "ResetNeededError",
    "check_learner_seat",
    "check_max_iter",
    "check_num_games",
    "check_options",
    "explicit_hands",
    "opponent_lineup",
]


class ResetNeededError(RuntimeError, ValueError):
    """An env was used before ``reset()`` dealt its games, or after it stopped: only
    ``reset()`` deals them again. A ``ValueError`` too, as Python's own "operation on a
    closed file" is: the call is refused, nothing changes."""


def check_options(options: object) -> Mapping[str, Any]:
    """A reset's ``options``: a mapping, or ``None`` for none.

    Raises:
        ValueError: naming ``options`` as given.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(
            f"options: expected a dict such as {{'key': 7}} or None, got {shown(options)}"
        )
    return options


def check_max_iter(max_iter: object) -> int:
    """``agent_iter``'s ``max_iter``: an integer (a count at or below 0 yields no agent).

    Raises:
        ValueError: for anything else, naming it as given.
    """
    if not is_int(max_iter):
        raise ValueError(f"max_iter: expected an integer, got {shown(max_iter)}")
    return int(max_iter)  # type: ignore[call-overload]


MAX_NUM_GAMES = 65_536
"""Most games a learner env steps together: the batched state and observations of 65,536
games already take gigabytes, and the core's throughput stops growing long before."""


def check_num_games(num_games: int | np.integer) -> int:
    """The number of games B, an int in ``1..MAX_NUM_GAMES`` (NumPy's too; not a bool).

    Raises:
        ValueError: for anything else, naming it as given.
    """
    if not is_int(num_games) or not 1 <= num_games <= MAX_NUM_GAMES:
        raise ValueError(
            f"the number of games must be a positive int, at most {MAX_NUM_GAMES:,} (the "
            f"batched games' memory), got {shown(num_games)}"
        )
    return int(num_games)


def check_learner_seat(
    learner_seat: int | np.integer | Literal["random"], n_players: int
) -> int | None:
    """The learner's fixed seat, or None for ``"random"`` (a seat drawn for each hand).

    Raises:
        ValueError: for anything but ``"random"`` or a seat in ``0..n_players - 1``.
    """
    if not (
        (isinstance(learner_seat, str) and learner_seat == "random")
        or (is_int(learner_seat) and 0 <= learner_seat < n_players)
    ):
        raise ValueError(
            f"learner_seat must be 'random' or a seat in 0..{n_players - 1}, got {learner_seat!r}"
        )
    return None if isinstance(learner_seat, str) else int(learner_seat)


def opponent_lineup(
    opponents: OpponentsSpec, n_players: int
) -> tuple[list[object], list[int], OpponentPool | None]:
    """The opponents as given (see :mod:`uno_env.envs.opponents`), read into a lineup.

    Returns:
        The policies (or factories), which of them plays each opponent seat (entry k-1 for
        the seat k places after the learner), and the pool each hand draws them from, if any.

    Raises:
        ValueError: for a list without one policy per opponent seat.
    """
    if opponents is None:
        return [PolicyFactory(RandomBot.name, RandomBot)], [0] * (n_players - 1), None
    if isinstance(opponents, OpponentPool):
        return opponents.policies, [0] * (n_players - 1), opponents
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        if len(opponents) != n_players - 1:
            raise ValueError(
                f"a list of opponents needs one policy per opponent seat: {n_players - 1} "
                f"for {n_players} players, got {len(opponents)} (use an OpponentPool to "
                "sample from a pool)"
            )
        return list(opponents), list(range(n_players - 1)), None
    return [opponents], [0] * (n_players - 1), None


def explicit_hands(
    games: npt.NDArray[np.int64],
    keys: npt.ArrayLike | None,
    learner_seats: npt.ArrayLike | None,
    n_players: int,
) -> tuple[npt.NDArray[np.uint64] | None, npt.NDArray[np.int64] | None]:
    """Explicit keys and learner seats for ``games`` (None where not given), checked.

    Each may be one value for every game or one per game.

    Raises:
        ValueError: for a key that is not an integer in [0, 2**64), a seat that is not
            a seat of the game (a bool is not a seat), or the wrong number of either.
    """
    key_arr = seat_arr = None
    if keys is not None:
        key_arr = _per_game(game_keys(keys), games, "key", keys)
    if learner_seats is not None:
        arr = np.asarray(learner_seats)
        values = arr.ravel().tolist()
        if (
            arr.dtype == object
            or arr.dtype.kind not in "iu"
            or not all(0 <= seat < n_players for seat in values)
        ):
            raise ValueError(
                f"learner_seat must be a seat in 0..{n_players - 1} (one for every game or "
                f"one per game), got {learner_seats!r}"
            )
        seat_arr = _per_game(arr.astype(np.int64), games, "learner_seat", learner_seats)
    return key_arr, seat_arr


def _per_game(
    arr: npt.NDArray[Any], games: npt.NDArray[np.int64], what: str, given: object
) -> npt.NDArray[Any]:
    if arr.size == 1:
        return np.full(games.shape, arr.reshape(()), dtype=arr.dtype)
    if arr.shape != games.shape:
        raise ValueError(f"{what} must be one value or one per game ({games.size}), got {given!r}")
    return arr
