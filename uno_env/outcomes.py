"""How hands ended: :class:`TableResults`, the one outcome record of batched play.

:func:`uno_env.play.play_tables` fills it as games end; evaluations, tournaments and their
JSONL logs read it.

Finishing order (``ranks``). Without ``play_to_last`` a hand only tells who went out first:
the winner ranks 0 and the other seats tie at rank 1 (with ``teams``, both partners rank 0).
Under ``play_to_last`` the full finishing order is used. A truncated hand is a tie between
the seats still playing (seats already out under ``play_to_last`` keep their places). A
forfeiting seat ranks last and the seats still playing tie above it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from uno_env.core import UnoState
from uno_env.rules import Rules

__all__ = ["END_FORFEIT", "END_TRUNCATED", "END_WON", "TableResults"]

END_WON, END_TRUNCATED, END_FORFEIT = 0, 1, 2
"""How a hand ended: a seat went out, it hit ``max_turns``, or a seat forfeited."""


@dataclass(frozen=True)
class TableResults:
    """Outcomes of G hands with k seats.

    Attributes:
        winners: The seat that went out, else -1 (truncated, forfeited or not finished),
            (G,) int8.
        ranks: Finishing position of each seat (0 first, ties share), (G, k) int64.
        points: The engine's ``hand_points`` (the winner's points), (G, k) int32.
        rewards: Win/loss rewards (:func:`uno_env.core.hand_rewards`: +1 for the winner,
            -1/(k-1) for the others; zeros for truncated and forfeited hands), (G, k) float32.
        cards_left: Cards in each hand at the end, (G, k) int64.
        turns: Decisions taken, (G,) int32.
        end: ``END_WON``, ``END_TRUNCATED`` or ``END_FORFEIT``, (G,) int64.
        forfeit_seat: The forfeiting seat, else -1, (G,) int64.
        reasons: Game index -> why it was forfeited.
    """

    winners: npt.NDArray[np.int8]
    ranks: npt.NDArray[np.int64]
    points: npt.NDArray[np.int32]
    rewards: npt.NDArray[np.float32]
    cards_left: npt.NDArray[np.int64]
    turns: npt.NDArray[np.int32]
    end: npt.NDArray[np.int64]
    forfeit_seat: npt.NDArray[np.int64]
    reasons: dict[int, str]

    @classmethod
    def empty(cls, num_games: int, num_players: int) -> TableResults:
        """Results of ``num_games`` hands not played yet."""
        return cls(
            winners=np.full(num_games, -1, dtype=np.int8),
            ranks=np.zeros((num_games, num_players), dtype=np.int64),
            points=np.zeros((num_games, num_players), dtype=np.int32),
            rewards=np.zeros((num_games, num_players), dtype=np.float32),
            cards_left=np.zeros((num_games, num_players), dtype=np.int64),
            turns=np.zeros(num_games, dtype=np.int32),
            end=np.zeros(num_games, dtype=np.int64),
            forfeit_seat=np.full(num_games, -1, dtype=np.int64),
            reasons={},
        )

    @property
    def num_games(self) -> int:
        """Number of hands G."""
        return int(self.winners.shape[0])

    @property
    def num_players(self) -> int:
        """Seats k."""
        return int(self.ranks.shape[1])

    @property
    def truncated(self) -> npt.NDArray[np.bool_]:
        """Hands that hit ``max_turns`` (nobody won), (G,) bool."""
        out: npt.NDArray[np.bool_] = self.end == END_TRUNCATED
        return out

    def wins(self) -> npt.NDArray[np.int64]:
        """Hands won by each seat, (k,)."""
        won = self.winners[self.winners >= 0].astype(np.int64)
        return np.bincount(won, minlength=self.num_players)

    def put(self, games: npt.NDArray[np.int64], part: TableResults) -> None:
        """Write the hands of ``part`` into hands ``games`` of these results (in place)."""
        for name in _ARRAYS:
            getattr(self, name)[games] = getattr(part, name)
        for game, why in part.reasons.items():
            self.reasons[int(games[game])] = why


_ARRAYS = ("winners", "ranks", "points", "rewards", "cards_left", "turns", "end", "forfeit_seat")
"""The per-hand arrays of :class:`TableResults`."""


def record_ended(
    rules: Rules,
    state: UnoState,
    rows: npt.NDArray[np.int64],
    games: npt.NDArray[np.int64],
    out: TableResults,
) -> None:
    """Record the hands of ``rows`` of ``state`` (won, or cut short) as games ``games``."""
    done = state.done[rows]
    out.winners[games] = np.where(done, state.winner[rows], -1)
    out.ranks[games] = _competition_ranks(_order_keys(rules, state, rows))
    out.points[games] = state.hand_points[rows]
    out.cards_left[games] = state.hand_size[rows]
    out.turns[games] = state.turn[rows]
    out.end[games] = np.where(done, END_WON, END_TRUNCATED)


def record_forfeits(
    rules: Rules,
    state: UnoState,
    rows: npt.NDArray[np.int64],
    games: npt.NDArray[np.int64],
    reasons: list[str],
    out: TableResults,
    seats: npt.NDArray[np.int64] | None = None,
) -> None:
    """Record that ``seats`` (default: the acting seat of each row) forfeited ``rows``.

    Args:
        rules: The rules of the batch.
        state: The batch, with the forfeited hands still live.
        rows: The forfeited rows of ``state``.
        games: Their game numbers (indices into ``out``).
        reasons: Why each row forfeited, in the order of ``rows``.
        out: The results to write.
        seats: The forfeiting seat of each row.
    """
    seat = state.current[rows].astype(np.int64) if seats is None else seats.astype(np.int64)
    keys = _order_keys(rules, state, rows)  # live hands: seats still playing tie
    keys[np.arange(rows.size), seat] = np.inf
    out.ranks[games] = _competition_ranks(keys)
    out.cards_left[games] = state.hand_size[rows]
    out.turns[games] = state.turn[rows]
    out.end[games] = END_FORFEIT
    out.forfeit_seat[games] = seat
    for game, why in zip(games.tolist(), reasons, strict=True):
        out.reasons[int(game)] = why


def _competition_ranks(keys: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Rank of each seat: how many seats have a strictly smaller key (ties share)."""
    less = keys[:, None, :] < keys[:, :, None]
    out: npt.NDArray[np.int64] = less.sum(axis=2).astype(np.int64)
    return out


def _order_keys(
    rules: Rules, state: UnoState, rows: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Sort keys of the seats of finished games (smaller finishes earlier)."""
    n_players = rules.num_players
    keys = np.zeros((rows.size, n_players), dtype=np.float64)
    won = state.done[rows]
    if rules.play_to_last:
        rank = state.finish_rank[rows].astype(np.float64)
        keys = np.where(rank >= 0, rank, float(n_players))
    else:
        winners = state.winner[rows].astype(np.int64)
        keys[won] = 1.0
        w = np.flatnonzero(won)
        keys[w, winners[w]] = 0.0
        if rules.teams:
            keys[w, (winners[w] + 2) % 4] = 0.0
    return keys
