"""The statistics of a tournament: ratings with intervals, sequential tests, and the variance
that duplicate deals save. Every figure is computed from the games' table
(:mod:`unolab.tournament.analysis`), so a resumed run gives the same numbers.

**Ratings**

Ratings from finishing orders: a batch Bradley-Terry fit on the Elo scale with bootstrap
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
tied ranks (a bug reported upstream to openskill.py), and ties are the norm here (the losers of a hand tie).
``ThurstoneMostellerFull`` handles ties too but with its own draw-margin model (``epsilon``),
which would not match the half-point convention.

**Sequential probability ratio tests**

Sequential probability ratio tests: stop as soon as the data decide "is B better than A".

The observations are deal-set scores in ``[0, 1]`` (see :mod:`unolab.tournament.analysis`): a
deal set replays one deal under every seating, so it plays the role of the game pair of
chess testing (whose pentanomial model fastchess and fishtest use). Their distribution is
unknown and far from binomial, so the test is the *generalised* SPRT (GSPRT) of a normal
model with unknown variance: under hypothesis ``H_k`` the mean is ``s_k``, the expected
score of an Elo difference ``elo_k``, ``s = 1 / (1 + 10^(-elo/400))``, and the variance is
fitted by maximum likelihood under each hypothesis. With n observations of mean ``m`` and
variance ``v`` (divided by n)::

    LLR = n/2 * ln((v + (m - s0)^2) / (v + (m - s1)^2))

Wald's bounds: accept H1 when ``LLR >= ln((1 - beta) / alpha)``, accept H0 when
``LLR <= ln(beta / (1 - alpha))``, else continue. The test is sequential: it is evaluated
after every deal set and stops at the first crossing (a minimum of ``min_n`` observations
keeps it from deciding on a handful of identical deal sets, whose variance is zero).

**Variance of duplicate deals**

How much duplicate deal sets reduce variance, measured on the tournament's own games.

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

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from unolab.tournament.analysis import GameTable, pairwise_counts

__all__ = [
    "ELO_PER_NAT",
    "MAX_BLOCKS",
    "MIN_OBSERVATIONS",
    "SprtResult",
    "ab_variance",
    "bootstrap_elo",
    "deal_blocks",
    "elo_to_score",
    "fit_bradley_terry",
    "llr_path",
    "openskill_ratings",
    "score_to_elo",
    "sequential_sprt",
    "sprt_bounds",
    "variance_reduction",
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


MIN_OBSERVATIONS = 10
_VAR_FLOOR = 1e-12


def elo_to_score(elo: float | npt.NDArray[np.float64]) -> Any:
    """Expected score of an Elo difference (logistic, 400 points = odds of 10)."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=np.float64) / 400.0))


def score_to_elo(score: float) -> float:
    """Elo difference of an expected score in (0, 1) (infinite at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's ``(lower, upper)`` bounds of the log-likelihood ratio."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def llr_path(scores: npt.ArrayLike, elo0: float, elo1: float) -> npt.NDArray[np.float64]:
    """The GSPRT log-likelihood ratio after each observation, shape (n,) (or (r, n)).

    Args:
        scores: Observations in [0, 1], shape (n,) or (runs, n) for many runs at once.
        elo0: Elo difference under H0.
        elo1: Elo difference under H1.
    """
    x = np.asarray(scores, dtype=np.float64)
    s0, s1 = float(elo_to_score(elo0)), float(elo_to_score(elo1))
    n = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mean = np.cumsum(x, axis=-1) / n
    var = np.maximum(np.cumsum(x * x, axis=-1) / n - mean * mean, 0.0) + _VAR_FLOOR
    out: npt.NDArray[np.float64] = (
        0.5 * n * np.log((var + (mean - s0) ** 2) / (var + (mean - s1) ** 2))
    )
    return out


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test.

    Attributes:
        decision: ``H1`` (B is better by about ``elo1``), ``H0`` (not better than ``elo0``)
            or ``continue``.
        n: Observations used (up to and including the deciding one).
        llr: The log-likelihood ratio after ``n`` observations.
        lower: Accept H0 at or below this.
        upper: Accept H1 at or above this.
        mean: Mean score of the ``n`` observations.
        elo: That mean as an Elo difference.
        elo0: Elo under H0.
        elo1: Elo under H1.
        alpha: Type I error rate.
        beta: Type II error rate.
    """

    decision: str
    n: int
    llr: float
    lower: float
    upper: float
    mean: float
    elo: float
    elo0: float
    elo1: float
    alpha: float
    beta: float

    @property
    def decided(self) -> bool:
        """Whether the test has stopped."""
        return self.decision != "continue"

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping (for JSON)."""
        return asdict(self)


def sequential_sprt(
    scores: npt.ArrayLike,
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    min_n: int = MIN_OBSERVATIONS,
) -> SprtResult:
    """Run the GSPRT over observations in order and stop at the first crossing.

    Args:
        scores: Observations in [0, 1], in the order they were made (deal-set order).
        elo0: Elo difference under H0.
        elo1: Elo difference under H1 (> elo0).
        alpha: Probability of accepting H1 when H0 holds.
        beta: Probability of accepting H0 when H1 holds.
        min_n: No decision before this many observations.

    Returns:
        The decision and the statistics at the stopping point (or at the end).
    """
    if not elo1 > elo0:
        raise ValueError(f"need elo1 > elo0, got {elo0}, {elo1}")
    x = np.asarray(scores, dtype=np.float64)
    lower, upper = sprt_bounds(alpha, beta)
    decision, n = "continue", int(x.size)
    llr = 0.0
    if x.size:
        path = llr_path(x, elo0, elo1)
        crossed = (path >= upper) | (path <= lower)
        crossed[: max(0, min_n - 1)] = False
        hits = np.flatnonzero(crossed)
        if hits.size:
            n = int(hits[0]) + 1
            decision = "H1" if path[n - 1] >= upper else "H0"
        llr = float(path[n - 1])
    mean = float(x[:n].mean()) if n else 0.5
    return SprtResult(
        decision=decision,
        n=n,
        llr=llr,
        lower=lower,
        upper=upper,
        mean=mean,
        elo=score_to_elo(mean),
        elo0=elo0,
        elo1=elo1,
        alpha=alpha,
        beta=beta,
    )


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
