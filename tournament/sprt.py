"""Sequential probability ratio tests: stop as soon as the data decide "is B better than A".

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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "MIN_OBSERVATIONS",
    "SprtResult",
    "elo_to_score",
    "llr_path",
    "score_to_elo",
    "sequential_sprt",
    "sprt_bounds",
]

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
