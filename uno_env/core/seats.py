"""Seat arithmetic: who is k seats ahead, skipping seats that have finished."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env.core.state import IntArray, UnoState
from uno_env.rules import Rules

__all__ = ["active_seats", "seats_ahead"]


def active_seats(rules: Rules, s: UnoState, games: IntArray) -> npt.NDArray[np.bool_]:
    """(k, N) mask of the seats still playing (all of them without ``play_to_last``)."""
    return np.asarray(s.finish_rank[games] < 0)


def seats_ahead(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray, k: int | IntArray
) -> IntArray:
    """The seat ``k`` active seats ahead of ``seats`` in each game's direction of play.

    ``k = 0`` is the seat itself. Seats that finished (``play_to_last``) are skipped.
    """
    n_players = rules.num_players
    steps = np.broadcast_to(np.asarray(k, dtype=np.int64), games.shape)
    direction = s.direction[games].astype(np.int64)
    if not rules.play_to_last:
        return (seats + steps * direction) % n_players
    offsets = np.arange(1, 2 * n_players + 1)
    candidates = (seats[:, None] + offsets[None, :] * direction[:, None]) % n_players
    active = s.finish_rank[games[:, None], candidates] < 0
    reached = np.cumsum(active, axis=1) >= steps[:, None]
    out = candidates[np.arange(games.size), np.argmax(reached, axis=1)]
    return np.where(steps == 0, seats, out)
