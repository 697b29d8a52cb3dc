"""Checking the arguments of the core's public functions: one place for each kind of value.

The compiled rules trust their inputs (an index past a batch or a table reads memory that is
not the game's), so every public function of :mod:`uno_env.core` checks what a caller hands
it here first. Each error is a ``ValueError`` or ``TypeError`` of one line that names the
argument and the value as it was given. The checks are O(1) or vectorised: they run on the
engine's hot path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_int
from uno_env.core.state import UnoState
from uno_env.files import shown
from uno_env.rules import Rules

__all__ = [
    "MAX_BATCH_SIZE",
    "check_game",
    "check_rules",
    "check_state",
    "check_table",
    "game_indices",
    "int_values",
    "is_int",
]

MAX_BATCH_SIZE = 2**20
"""Most games one batch may hold (1,048,576): what :func:`uno_env.core.init` deals and
:func:`uno_env.core.determinize` returns (B x K rows). A game's arrays take 0.6 kB (two
seats) to 2 kB (ten seats), and dealing them needs about 7 kB a game at its peak, so the
largest batch fits in about 8 GB; a larger one is refused before anything is allocated."""

_INT64 = np.iinfo(np.int64)


def is_int(value: object) -> bool:
    """An integer, Python's or NumPy's, but not a bool (a switch is no count, seat or id)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_rules(rules: object) -> Rules:
    """``rules`` as a :class:`Rules` object, or a ``TypeError`` naming it."""
    if not isinstance(rules, Rules):
        raise TypeError(
            f"rules: expected a Rules object (from uno_env.load_rules), got {shown(rules)}"
        )
    return rules


def check_state(state: object) -> UnoState:
    """``state`` as an :class:`UnoState`, or a ``TypeError`` naming it."""
    if not isinstance(state, UnoState):
        raise TypeError(f"state: expected an UnoState (from uno_env.core.init), got {shown(state)}")
    return state


def check_table(rules: object, state: object) -> None:
    """Check that ``rules`` and ``state`` are a :class:`Rules` and an :class:`UnoState` of
    the same table size (compiled rules for another size would read past the state's seats).

    Raises:
        TypeError: naming an argument of the wrong kind.
        ValueError: naming both table sizes.
    """
    check_rules(rules)
    n_players = check_state(state).hands.shape[1]
    if n_players != rules.num_players:  # type: ignore[attr-defined]
        raise ValueError(
            f"rules: num_players={rules.num_players} does not fit the state, which has "  # type: ignore[attr-defined]
            f"{n_players} seats"
        )


def check_game(what: str, game: object, n_games: int) -> int:
    """One game's index in a batch of ``n_games``: an int in ``0..n_games - 1``.

    Raises:
        ValueError: naming ``what`` and the value as given (a negative index does not count
            from the end: it is refused).
    """
    return check_int(what, game, 0, n_games - 1, f"the batch holds {n_games} games")


def int_values(what: str, values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Integers as an int64 array of the shape given, refusing whatever is no integer (a
    bool, a fraction, a string, ``None``) or lies outside int64, as given.

    Raises:
        ValueError: naming ``what`` and the first value that does not fit.
    """
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError):  # a ragged list, an int past uint64
        if not isinstance(values, list | tuple):
            raise ValueError(f"{what}: expected integers, got {shown(values)}") from None
        arr = np.asarray(values, dtype=object)
    kind = arr.dtype.kind
    if kind == "i":
        return arr.astype(np.int64, copy=False)
    if kind == "u":
        over = np.flatnonzero(arr.ravel() > _INT64.max)
        if over.size:
            given = arr.ravel()[over[0]].item()
            raise ValueError(f"{what}: {shown(given)} is out of range")
        return arr.astype(np.int64)
    if arr.size == 0:  # [] is float64 to NumPy, yet holds no value that is not an integer
        return np.zeros(arr.shape, dtype=np.int64)
    items: list[Any] = arr.ravel().tolist()
    for item in items:
        if not is_int(item):
            raise ValueError(f"{what}: expected integers, got {shown(item)}")
        if not _INT64.min <= item <= _INT64.max:
            raise ValueError(f"{what}: {shown(item)} is out of range")
    return np.array(items, dtype=np.int64).reshape(arr.shape)


def game_indices(what: str, games: npt.ArrayLike, n_games: int) -> npt.NDArray[np.int64]:
    """Games of a batch of ``n_games``, given as indices or as a boolean mask of shape
    ``(n_games,)``, as an int64 array of indices.

    Raises:
        ValueError: naming ``what`` and the index (as given) or the mask's shape that does
            not fit; a negative index does not count from the end: it is refused.
    """
    arr = np.asarray(games) if isinstance(games, np.ndarray) else None
    if arr is not None and arr.dtype == np.bool_:
        if arr.shape != (n_games,):
            raise ValueError(
                f"{what}: a boolean mask must have shape ({n_games},), got {arr.shape}"
            )
        return np.flatnonzero(arr)
    if (
        isinstance(games, list | tuple)
        and games
        and all(isinstance(g, (bool, np.bool_)) for g in games)
    ):
        return game_indices(what, np.asarray(games, dtype=np.bool_), n_games)
    idx = int_values(what, games)
    outside = np.flatnonzero((idx < 0) | (idx >= n_games))
    if outside.size:
        given = np.asarray(games, dtype=object).ravel()[outside[0]]
        raise ValueError(
            f"{what}: game {shown(given)} is out of range; the batch holds {n_games} games "
            f"(0..{n_games - 1})"
        )
    return idx
