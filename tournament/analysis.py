"""Statistics of finished games: scores, the pairwise matrix, seats, histograms, deal sets.

Scoring convention (used by the pairwise matrix, the ratings and the SPRT alike): within a
game every pair of seats is a comparison; the seat that finished ahead scores 1, the other 0,
and tied seats score half each (as a draw in chess). A seat's *game score* is its mean over
the other seats at the table, in [0, 1]; an equal player expects 0.5 at any table size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from unolab.agents.arena import wilson_interval
from unolab.tournament.results import END_KINDS, GameRecord

__all__ = [
    "GameTable",
    "deal_set_scores",
    "endings",
    "pairwise_counts",
    "pairwise_table",
    "participant_stats",
    "score_interval",
    "seat_advantage",
]

_wilson = cast(Any, wilson_interval)


def score_interval(score: float, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a score proportion with half points for draws.

    :func:`unolab.agents.arena.wilson_interval` applied to ``score`` successes out of ``n`` (its
    formula only uses the proportion, so half-point totals are fine).
    """
    low, high = _wilson(score, n)
    return float(low), float(high)


_COLUMNS = (
    "deal",
    "seating",
    "variant",
    "seats",
    "ranks",
    "turns",
    "end",
    "forfeit_seat",
    "reasons",
)


@dataclass(frozen=True)
class GameTable:
    """Finished games as columns (:meth:`from_records` sorts them by unit).

    Attributes:
        names: Participant names by id.
        deal: Deal set, (G,).
        seating: Seating row, (G,).
        variant: Variant, (G,).
        seats: Participant id in each seat, (G, k).
        ranks: Finishing position of each seat, (G, k).
        turns: Decisions, (G,).
        end: Index into :data:`unolab.tournament.results.END_KINDS`, (G,).
        forfeit_seat: Forfeiting seat or -1, (G,).
        reasons: Forfeit reason of each game ("" if none), (G,) object.
    """

    names: tuple[str, ...]
    deal: npt.NDArray[np.int64]
    seating: npt.NDArray[np.int64]
    variant: npt.NDArray[np.int64]
    seats: npt.NDArray[np.int64]
    ranks: npt.NDArray[np.int64]
    turns: npt.NDArray[np.integer]
    end: npt.NDArray[np.int64]
    forfeit_seat: npt.NDArray[np.int64]
    reasons: npt.NDArray[np.object_]

    @classmethod
    def empty(cls, names: Sequence[str], num_players: int) -> GameTable:
        """No games."""
        return cls.from_records([], names, num_players)

    @classmethod
    def concat(cls, tables: Sequence[GameTable]) -> GameTable:
        """The games of several tables (same participants), in the given order."""
        first = tables[0]
        return cls(
            names=first.names,
            **{name: np.concatenate([getattr(t, name) for t in tables]) for name in _COLUMNS},
        )

    @classmethod
    def from_records(
        cls, records: Iterable[GameRecord], names: Sequence[str], num_players: int
    ) -> GameTable:
        """Build the columns (records are sorted by unit)."""
        rows = sorted(records, key=lambda r: r.unit)
        index = {name: i for i, name in enumerate(names)}
        g, k = len(rows), num_players

        def col(values: Iterable[Any], shape: tuple[int, ...]) -> npt.NDArray[np.int64]:
            return np.array(list(values), dtype=np.int64).reshape(shape)

        return cls(
            names=tuple(names),
            deal=col((r.deal for r in rows), (g,)),
            seating=col((r.seating for r in rows), (g,)),
            variant=col((r.variant for r in rows), (g,)),
            seats=col((index[n] for r in rows for n in r.seats), (g, k)),
            ranks=col((x for r in rows for x in r.ranks), (g, k)),
            turns=col((r.turns for r in rows), (g,)),
            end=col((END_KINDS.index(r.end) for r in rows), (g,)),
            forfeit_seat=col(
                (-1 if r.forfeit_seat is None else r.forfeit_seat for r in rows), (g,)
            ),
            reasons=np.array([r.reason for r in rows], dtype=object).reshape(g),
        )

    @property
    def num_games(self) -> int:
        """G."""
        return int(self.deal.shape[0])

    @property
    def num_players(self) -> int:
        """k."""
        return int(self.seats.shape[1])

    def subset(self, games: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> GameTable:
        """Some of the games, in the order given."""
        idx = np.arange(self.num_games)[games]
        return GameTable(names=self.names, **{name: getattr(self, name)[idx] for name in _COLUMNS})

    def sorted_by_unit(self) -> GameTable:
        """The games sorted by ``(deal, seating, variant)``."""
        return self.subset(np.lexsort((self.variant, self.seating, self.deal)))

    def units(self) -> list[tuple[int, int, int]]:
        """``(deal, seating, variant)`` of every game."""
        return list(
            zip(self.deal.tolist(), self.seating.tolist(), self.variant.tolist(), strict=True)
        )

    def pair_results(self) -> npt.NDArray[np.float64]:
        """(G, k, k): score of seat i against seat j (1, 0.5 or 0; 0 on the diagonal)."""
        r = self.ranks
        out = (r[:, :, None] < r[:, None, :]).astype(np.float64)
        out += 0.5 * (r[:, :, None] == r[:, None, :])
        out[:, np.arange(self.num_players), np.arange(self.num_players)] = 0.0
        return out

    def game_scores(self) -> npt.NDArray[np.float64]:
        """(G, k): each seat's mean pairwise score against the other seats, in [0, 1]."""
        out: npt.NDArray[np.float64] = self.pair_results().sum(axis=2) / (self.num_players - 1)
        return out


def pairwise_counts(
    table: GameTable, groups: npt.NDArray[np.int64] | None = None, num_groups: int = 1
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Pairwise scores ``W[g, i, j]`` (i's points against j) and encounters ``N[g, i, j]``.

    Args:
        table: The games.
        groups: Group of each game (e.g. its deal set block), (G,); ``None``: one group.
        num_groups: Number of groups.

    Returns:
        ``(W, N)``, each (num_groups, P, P); ``W + W.T == N`` in every group.
    """
    n_part = len(table.names)
    grp = np.zeros(table.num_games, dtype=np.int64) if groups is None else groups
    k = table.num_players
    pairs = table.pair_results()
    i_idx, j_idx = np.nonzero(~np.eye(k, dtype=bool))
    pi = table.seats[:, i_idx]
    pj = table.seats[:, j_idx]
    flat = (grp[:, None] * n_part + pi) * n_part + pj
    size = num_groups * n_part * n_part
    wins = np.bincount(flat.ravel(), weights=pairs[:, i_idx, j_idx].ravel(), minlength=size)
    count = np.bincount(flat.ravel(), minlength=size).astype(np.float64)
    shape = (num_groups, n_part, n_part)
    out_w: npt.NDArray[np.float64] = wins.reshape(shape).astype(np.float64)
    return out_w, count.reshape(shape)


def pairwise_table(table: GameTable) -> dict[str, Any]:
    """The pairwise score matrix with Wilson 95% intervals.

    Returns:
        ``{"names", "score", "games", "low", "high"}``: (P, P) nested lists; ``score[i][j]``
        is i's score against j (``None`` where they never met).
    """
    w, n = pairwise_counts(table)
    w, n = w[0], n[0]
    p = len(table.names)
    score: list[list[float | None]] = [[None] * p for _ in range(p)]
    low: list[list[float | None]] = [[None] * p for _ in range(p)]
    high: list[list[float | None]] = [[None] * p for _ in range(p)]
    for i in range(p):
        for j in range(p):
            if n[i, j] > 0:
                score[i][j] = float(w[i, j] / n[i, j])
                low[i][j], high[i][j] = score_interval(float(w[i, j]), int(n[i, j]))
    return {
        "names": list(table.names),
        "score": score,
        "games": n.astype(int).tolist(),
        "low": low,
        "high": high,
    }


def _score_and_wins(total: float, wins: int, games: int) -> dict[str, Any]:
    """The mean score of ``games`` games (``total`` points) with its Wilson interval, the
    wins and the win rate (``None`` for no games)."""
    low, high = score_interval(total, games) if games else (0.0, 1.0)
    return {
        "score": total / games if games else None,
        "score_low": low,
        "score_high": high,
        "wins": wins,
        "win_rate": wins / games if games else None,
    }


def participant_stats(table: GameTable) -> list[dict[str, Any]]:
    """Per participant: games, score (with a Wilson interval), wins, places, forfeits."""
    k = table.num_players
    scores = table.game_scores()
    won = table.end == END_KINDS.index("won")
    ff = np.flatnonzero(table.forfeit_seat >= 0)
    forfeiters = table.seats[ff, table.forfeit_seat[ff]]
    out = []
    for pid, name in enumerate(table.names):
        at = table.seats == pid
        games = int(at.sum())
        total = float(scores[at].sum())
        ranks = table.ranks[at]
        wins = int((at & (table.ranks == 0) & won[:, None]).sum())
        forfeits = int(np.count_nonzero(forfeiters == pid))
        out.append(
            {
                "name": name,
                "games": games,
                **_score_and_wins(total, wins, games),
                "positions": np.bincount(ranks, minlength=k).astype(int).tolist(),
                "forfeits": forfeits,
            }
        )
    return out


def seat_advantage(table: GameTable) -> list[dict[str, Any]]:
    """Per seat (0 plays first, k-1 deals): mean score and win rate, with Wilson intervals."""
    scores = table.game_scores()
    won = table.end == END_KINDS.index("won")
    out = []
    g = table.num_games
    for seat in range(table.num_players):
        total = float(scores[:, seat].sum())
        wins = int(np.count_nonzero(won & (table.ranks[:, seat] == 0)))
        w_low, w_high = wilson_interval(wins, g) if g else (0.0, 1.0)
        out.append(
            {
                "seat": seat,
                **_score_and_wins(total, wins, g),
                "win_low": w_low,
                "win_high": w_high,
            }
        )
    return out


def endings(table: GameTable, max_reasons: int = 5) -> dict[str, Any]:
    """How games ended: counts of won / truncated / forfeit, and who forfeited and why."""
    counts = {kind: int(np.count_nonzero(table.end == i)) for i, kind in enumerate(END_KINDS)}
    forfeits: dict[str, dict[str, Any]] = {}
    for g in np.flatnonzero(table.forfeit_seat >= 0):
        name = table.names[int(table.seats[g, table.forfeit_seat[g]])]
        entry = forfeits.setdefault(name, {"games": 0, "reasons": []})
        entry["games"] += 1
        reason = table.reasons[g]
        if reason not in entry["reasons"] and len(entry["reasons"]) < max_reasons:
            entry["reasons"].append(reason)
    return {
        "counts": counts,
        "forfeits": forfeits,
        "turns_mean": float(table.turns.mean()) if table.num_games else None,
        "turns_max": int(table.turns.max()) if table.num_games else None,
    }


def deal_set_scores(table: GameTable, subject: int, reference: int | None = None) -> Any:
    """Per complete deal set, the score that the SPRT and the A/B comparison use.

    Args:
        table: The games (any order).
        subject: The participant tested (the candidate).
        reference: ``None``: the subject's mean game score over the deal set (a gauntlet).
            A participant id: the A/B score ``0.5 + (mean_B - mean_A) / 2`` of the subject
            (variant 1, B) against the reference it replaced (variant 0, A) on the same
            deal and seats, in [0, 1], 0.5 when they do equally well.

    Returns:
        ``(deals, scores)``: the deal indices in increasing order and their scores.
    """
    scores = table.game_scores()
    mine = scores[table.seats == subject]
    in_game = (table.seats == subject).any(axis=1)
    if reference is None:
        deals = table.deal[in_game]
        uniq, inv = np.unique(deals, return_inverse=True)
        sums = np.bincount(inv, weights=mine, minlength=uniq.size)
        counts = np.bincount(inv, minlength=uniq.size)
        return uniq, sums / counts
    theirs = scores[table.seats == reference]
    in_ref = (table.seats == reference).any(axis=1)
    d_b, d_a = table.deal[in_game], table.deal[in_ref]
    uniq = np.intersect1d(d_b, d_a)
    pos_b = np.searchsorted(uniq, d_b)
    pos_a = np.searchsorted(uniq, d_a)
    ok_b = (pos_b < uniq.size) & (uniq[np.minimum(pos_b, uniq.size - 1)] == d_b)
    ok_a = (pos_a < uniq.size) & (uniq[np.minimum(pos_a, uniq.size - 1)] == d_a)
    mean_b = np.bincount(pos_b[ok_b], weights=mine[ok_b], minlength=uniq.size) / np.maximum(
        np.bincount(pos_b[ok_b], minlength=uniq.size), 1
    )
    mean_a = np.bincount(pos_a[ok_a], weights=theirs[ok_a], minlength=uniq.size) / np.maximum(
        np.bincount(pos_a[ok_a], minlength=uniq.size), 1
    )
    return uniq, 0.5 + (mean_b - mean_a) / 2.0
