"""Ratings from finishing orders: a batch Bradley-Terry fit on the Elo scale with bootstrap
intervals over whole deal sets, and openskill's online ratings.

**Maximum likelihood (Bradley-Terry, Elo scale).** Every game is split into the comparisons
between its pairs of seats (:mod:`unolab.tournament.analysis`: 1 to the seat ahead, half each on a
tie). The strengths ``theta`` maximise ``sum W_ij log sigmoid(theta_i - theta_j)`` plus a weak
Gaussian prior (standard deviation 1000 Elo) that keeps a participant that won every
comparison finite; Newton's method converges in a few steps (the objective is concave).
Ratings are ``theta * 400 / ln(10)`` centred on a mean of 0. The comparisons of one game are
not independent and duplicate deals correlate games further, so the intervals do not come
from the Hessian: they are percentile intervals of a bootstrap that resamples whole deal
sets (in at most :data:`MAX_BLOCKS` blocks of consecutive deal sets, for speed).

**openskill.** Weng-Lin Bayesian ratings, updated game by game in deal order (so the result
is reproducible). The model is ``BradleyTerryFull``: every pair of seats is compared, and a
tie counts as half a win for each side, which is exactly the convention of the pairwise
matrix and of the batch fit above. openskill's ``PlackettLuce`` is not used: it mis-rates
tied ranks (openskill.py issue #155), and ties are the norm here (the losers of a hand tie).
``ThurstoneMostellerFull`` handles ties too but with its own draw-margin model (``epsilon``),
which would not match the half-point convention.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from unolab.tournament.analysis import GameTable, pairwise_counts

__all__ = [
    "ELO_PER_NAT",
    "MAX_BLOCKS",
    "bootstrap_elo",
    "deal_blocks",
    "fit_bradley_terry",
    "openskill_ratings",
]

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of log-odds."""
MAX_BLOCKS = 2000
"""Most resampling units of the bootstrap (blocks of consecutive deal sets)."""
_PRIOR_SD = 1000.0 / ELO_PER_NAT


def fit_bradley_terry(
    wins: npt.NDArray[np.float64],
    games: npt.NDArray[np.float64],
    *,
    prior_sd: float = _PRIOR_SD,
    start: npt.NDArray[np.float64] | None = None,
    iterations: int = 50,
) -> npt.NDArray[np.float64]:
    """Maximum a posteriori Bradley-Terry strengths, in Elo, with mean 0.

    Args:
        wins: ``W[i, j]``: i's points against j (draws count half), (P, P).
        games: ``N[i, j]``: comparisons between i and j (symmetric), (P, P).
        prior_sd: Standard deviation of the Gaussian prior, in log-odds units.
        start: Starting point, in Elo.
        iterations: Most Newton steps.

    Returns:
        Ratings in Elo, (P,), mean 0.
    """
    p = wins.shape[0]
    theta = np.zeros(p) if start is None else np.asarray(start, dtype=np.float64) / ELO_PER_NAT
    precision = 1.0 / (prior_sd * prior_sd)
    for _ in range(iterations):
        diff = theta[:, None] - theta[None, :]
        prob = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - games * prob).sum(axis=1) - precision * theta
        curv = games * prob * (1.0 - prob)
        hess = curv - np.diag(curv.sum(axis=1)) - precision * np.eye(p)
        step = np.clip(np.linalg.solve(hess, grad), -2.0, 2.0)  # damped far from the optimum
        theta = theta - step
        if np.abs(step).max() < 1e-10:
            break
    out: npt.NDArray[np.float64] = (theta - theta.mean()) * ELO_PER_NAT
    return out


def deal_blocks(deals: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], int]:
    """Map each game's deal set to a resampling block (at most :data:`MAX_BLOCKS`).

    Returns:
        ``(block of each game, number of blocks)``.
    """
    uniq, inv = np.unique(deals, return_inverse=True)
    n_blocks = min(uniq.size, MAX_BLOCKS)
    if n_blocks == 0:
        return inv.astype(np.int64), 0
    block_of_deal = (np.arange(uniq.size) * n_blocks) // uniq.size
    return block_of_deal[inv].astype(np.int64), int(n_blocks)


def bootstrap_elo(
    table: GameTable, resamples: int, seed: int, level: float = 0.95
) -> dict[str, Any]:
    """Bradley-Terry Elo with percentile bootstrap intervals over whole deal sets.

    Args:
        table: The games.
        resamples: Bootstrap resamples (0: point estimates only).
        seed: Seed of the resampling.
        level: Coverage of the intervals.

    Returns:
        ``{"elo", "low", "high", "resamples", "blocks"}``: lists by participant id.
    """
    blocks, n_blocks = deal_blocks(table.deal)
    w_blocks, n_blocks_games = pairwise_counts(table, blocks, max(n_blocks, 1))
    w_all, n_all = w_blocks.sum(axis=0), n_blocks_games.sum(axis=0)
    elo = fit_bradley_terry(w_all, n_all)
    p = elo.size
    if resamples == 0 or n_blocks < 2:
        nan = [math.nan] * p
        return {"elo": elo.tolist(), "low": nan, "high": nan, "resamples": 0, "blocks": n_blocks}
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xB007]))
    weights = rng.multinomial(n_blocks, np.full(n_blocks, 1.0 / n_blocks), size=resamples)
    w_flat = weights @ w_blocks.reshape(n_blocks, p * p)
    n_flat = weights @ n_blocks_games.reshape(n_blocks, p * p)
    samples = np.empty((resamples, p))
    for r in range(resamples):
        samples[r] = fit_bradley_terry(w_flat[r].reshape(p, p), n_flat[r].reshape(p, p), start=elo)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail], axis=0)
    return {
        "elo": elo.tolist(),
        "low": low.tolist(),
        "high": high.tolist(),
        "resamples": resamples,
        "blocks": n_blocks,
    }


def openskill_ratings(table: GameTable) -> dict[str, Any]:
    """openskill ``BradleyTerryFull`` ratings, updated game by game in deal order.

    Returns:
        ``{"model", "mu", "sigma", "ordinal"}``: lists by participant id (``ordinal`` is
        ``mu - 3 sigma``, a conservative estimate).
    """
    from openskill.models import BradleyTerryFull

    model = BradleyTerryFull()
    ratings = [model.rating(name=name) for name in table.names]
    order = np.lexsort((table.variant, table.seating, table.deal))
    for g in order:
        seats = [int(p) for p in table.seats[g]]
        teams = [[ratings[p]] for p in seats]
        ranks = [float(r) for r in table.ranks[g]]
        new = model.rate(teams, ranks=ranks)
        for p, team in zip(seats, new, strict=True):
            ratings[p] = team[0]
    return {
        "model": "openskill.BradleyTerryFull",
        "mu": [float(r.mu) for r in ratings],
        "sigma": [float(r.sigma) for r in ratings],
        "ordinal": [float(r.ordinal()) for r in ratings],
    }
