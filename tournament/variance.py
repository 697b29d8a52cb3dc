"""How much duplicate deal sets reduce variance, measured on the tournament's own games.

For a participant at a table, let ``x[d, j]`` be its game score (:mod:`unolab.tournament.analysis`)
in deal set ``d`` under seating ``j`` (S seatings). Two estimators of its strength use S
games each:

* **duplicate** (what the tournament plays): the mean of ``x[d, :]``, S seatings of one
  deal; its variance is estimated by the variance over deal sets of the row means;
* **independent deals** with the same balanced seatings: S games on S independent deals,
  one per seating; its variance is ``sum_j Var_d(x[:, j]) / S^2``, estimated from the same
  games (deal sets are independent of each other, so the column variances are exactly those
  of independent deals).

A second baseline, **independent deals with random seats** (``ratio_random_seats``), uses the
variance of all single games pooled over seatings, divided by S: it also carries the seat
advantage (the first mover wins about 52% of two-player hands), which a balanced design
removes even without duplicate deals.

The ratio ``duplicate / independent`` is the fraction of games the duplicate design needs
for the same precision (below 1 is a gain); ``1 - ratio`` is the reduction. Variances are
pooled over tables (within each table, then summed) so that differences between tables do
not enter. In the ``ab`` format the same is done for the paired difference ``B - A``: the
candidate and the incumbent on the same deals and seats, against playing them on independent
deals.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from unolab.tournament.analysis import GameTable

__all__ = ["ab_variance", "variance_reduction"]


def _deal_matrix(
    table: GameTable, scores: npt.NDArray[np.float64], pid: int, games: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """``(deals, x[d, j])`` for one participant, over the deal sets it played in full."""
    at = (table.seats == pid) & games[:, None]
    rows = np.flatnonzero(at.any(axis=1))
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0))
    n_seatings = int(table.seating.max()) + 1
    deals, inv = np.unique(table.deal[rows], return_inverse=True)
    x = np.full((deals.size, n_seatings), np.nan)
    x[inv, table.seating[rows]] = scores[rows][at[rows]]
    full = ~np.isnan(x).any(axis=1)
    return deals[full], x[full]


Estimate = tuple[float, float, float, int]
"""(duplicate variance, independent balanced, independent random seats, deal sets)."""


def _pooled(groups: list[Estimate]) -> dict[str, Any]:
    """Pool the estimates of several groups (weighted by their degrees of freedom)."""
    dof = sum(g[3] - 1 for g in groups)
    dup, ind, rnd = (sum(g[i] * (g[3] - 1) for g in groups) / max(dof, 1) for i in range(3))
    ratio = dup / ind if ind > 0 else None
    return {
        "var_duplicate": dup,
        "var_independent": ind,
        "var_independent_random_seats": rnd,
        "ratio": ratio,
        "reduction": None if ratio is None else 1.0 - ratio,
        "ratio_random_seats": dup / rnd if rnd > 0 else None,
        "deal_sets": sum(g[3] for g in groups),
    }


def _estimates(x: npt.NDArray[np.float64]) -> Estimate:
    n_deals, n_seatings = x.shape
    dup = float(x.mean(axis=1).var(ddof=1))
    ind = float(x.var(axis=0, ddof=1).sum() / n_seatings**2)
    rnd = float(x.ravel().var(ddof=1) / n_seatings)
    return dup, ind, rnd, n_deals


def variance_reduction(table: GameTable, tables_of_deal: npt.NDArray[np.int64]) -> dict[str, Any]:
    """Duplicate against independent deals, per participant and overall.

    Args:
        table: The games.
        tables_of_deal: The table of each game's deal set, (G,).

    Returns:
        ``{"overall": {...}, "participants": {name: {...}}}`` with ``ratio`` (games needed
        by the duplicate design per game of independent deals), ``reduction``, the two
        variances per deal set and the number of deal sets used.
    """
    scores = table.game_scores()
    per_participant: dict[str, Any] = {}
    everything: list[Estimate] = []
    for pid, name in enumerate(table.names):
        groups = []
        for t in np.unique(tables_of_deal):
            for v in np.unique(table.variant):
                games = (tables_of_deal == t) & (table.variant == v)
                _, x = _deal_matrix(table, scores, pid, games)
                if x.shape[0] >= 2:
                    groups.append(_estimates(x))
        if groups:
            per_participant[name] = _pooled(groups)
            everything += groups
    return {
        "overall": _pooled(everything) if everything else None,
        "participants": per_participant,
    }


def ab_variance(
    table: GameTable, candidate: int, incumbent: int, tables_of_deal: npt.NDArray[np.int64]
) -> dict[str, Any] | None:
    """Variance of the paired difference B - A per deal set, against independent deals."""
    scores = table.game_scores()
    groups = []
    for t in np.unique(tables_of_deal):
        at_t = tables_of_deal == t
        deals_b, xb = _deal_matrix(table, scores, candidate, at_t & (table.variant == 1))
        deals_a, xa = _deal_matrix(table, scores, incumbent, at_t & (table.variant == 0))
        both = np.intersect1d(deals_a, deals_b)
        if both.size < 2:
            continue
        xb = xb[np.searchsorted(deals_b, both)]
        xa = xa[np.searchsorted(deals_a, both)]
        _, b_ind, b_rnd, _ = _estimates(xb)
        _, a_ind, a_rnd, _ = _estimates(xa)
        dup = float((xb - xa).mean(axis=1).var(ddof=1))
        groups.append((dup, b_ind + a_ind, b_rnd + a_rnd, int(both.size)))
    return _pooled(groups) if groups else None
