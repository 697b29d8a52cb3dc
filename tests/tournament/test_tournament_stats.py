"""Tests of the tournament statistics against known cases.

* Wilson intervals of scores (draws as half points): known values, scipy for whole scores.
* The GSPRT: Wald's bounds; on simulated coin flips of known bias it accepts H1 when B is
  better and H0 when it is not, with error rates near the nominal 5%; it stops by itself.
* Bradley-Terry: recovers known Elo differences from simulated games; bootstrap intervals
  over deal sets cover them.
* openskill: ties are symmetric, a winner rises.
* Pairwise counts: ties are half points, ``W + W.T == N``.
* The variance-reduction estimator on deal sets whose correlation is known.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from unolab.tournament.analysis import GameTable, pairwise_counts, score_interval
from unolab.tournament.results import GameRecord
from unolab.tournament.stats import (
    bootstrap_elo,
    elo_to_score,
    fit_bradley_terry,
    llr_path,
    openskill_ratings,
    score_to_elo,
    sequential_sprt,
    sprt_bounds,
    variance_reduction,
)


def _record(deal: int, seating: int, seats: Sequence[str], ranks: Sequence[int]) -> GameRecord:
    return GameRecord(
        deal=deal,
        seating=seating,
        variant=0,
        key=deal,
        seats=tuple(seats),
        ranks=tuple(ranks),
        points=(0,) * len(seats),
        cards_left=(0,) * len(seats),
        turns=10,
        end="won",
    )


# --- Wilson -------------------------------------------------------------------------------


def test_wilson_known_values() -> None:
    low, high = score_interval(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    low, high = score_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)


def test_wilson_matches_scipy_and_takes_half_points() -> None:
    from scipy.stats import binomtest

    for k, n in [(3, 17), (40, 41), (512, 1000)]:
        ci = binomtest(k, n).proportion_ci(method="wilson")
        assert score_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-5)  # z = 1.96
    # 7.5 points out of 10: the Wilson formula at p = 0.75.
    p, n, z = 0.75, 10, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert score_interval(7.5, 10) == pytest.approx((centre - half, centre + half))


# --- SPRT ---------------------------------------------------------------------------------


def test_elo_score_round_trip_and_bounds() -> None:
    assert float(elo_to_score(0.0)) == 0.5
    assert float(elo_to_score(400.0)) == pytest.approx(10 / 11)
    for elo in (-250.0, -3.0, 0.0, 35.0, 600.0):
        assert score_to_elo(float(elo_to_score(elo))) == pytest.approx(elo)
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))


def _coin_runs(p: float, runs: int, n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((runs, n)) < p).astype(np.float64)


def _decisions(flips: np.ndarray, elo0: float, elo1: float) -> list[str]:
    return [sequential_sprt(row, elo0, elo1).decision for row in flips]


def test_sprt_accepts_h1_for_a_better_player() -> None:
    flips = _coin_runs(0.60, runs=40, n=3000, seed=1)
    assert _decisions(flips, 0.0, 35.0) == ["H1"] * 40


def test_sprt_accepts_h0_for_a_worse_player() -> None:
    flips = _coin_runs(0.40, runs=40, n=3000, seed=2)
    assert _decisions(flips, 0.0, 35.0) == ["H0"] * 40


def test_sprt_error_rates_are_near_nominal() -> None:
    elo0, elo1 = 0.0, 35.0
    s0, s1 = float(elo_to_score(elo0)), float(elo_to_score(elo1))
    lower, upper = sprt_bounds(0.05, 0.05)
    for p, wrong, seed in ((s0, "H1", 3), (s1, "H0", 4)):
        path = llr_path(_coin_runs(p, runs=400, n=6000, seed=seed), elo0, elo1)
        path[:, :9] = 0.0  # the test's minimum of 10 observations
        crossed = (path >= upper) | (path <= lower)
        assert crossed.any(axis=1).mean() > 0.99, "the test stops by itself"
        first = crossed.argmax(axis=1)
        accepted_h1 = path[np.arange(400), first] >= upper
        rate = accepted_h1.mean() if wrong == "H1" else (~accepted_h1).mean()
        assert rate <= 0.085, f"p={p:.4f}: wrong decision {wrong} in {rate:.1%} of runs"


def test_sequential_sprt_stops_at_the_first_crossing() -> None:
    flips = _coin_runs(0.7, runs=1, n=2000, seed=5)[0]
    result = sequential_sprt(flips, 0.0, 35.0)
    assert result.decision == "H1" and result.decided
    path = llr_path(flips, 0.0, 35.0)
    assert path[result.n - 1] >= result.upper
    assert (path[9 : result.n - 1] < result.upper).all()
    assert (path[9 : result.n - 1] > result.lower).all()
    # More data after the decision changes nothing.
    longer = sequential_sprt(np.concatenate([flips, np.zeros(500)]), 0.0, 35.0)
    assert longer.n == result.n


def test_sprt_continues_without_enough_data() -> None:
    result = sequential_sprt([1.0, 1.0, 1.0], 0.0, 35.0)
    assert result.decision == "continue" and result.n == 3
    assert sequential_sprt([], 0.0, 10.0).decision == "continue"
    with pytest.raises(ValueError):
        sequential_sprt([0.5], 10.0, 0.0)


# --- Bradley-Terry and openskill ---------------------------------------------------------


def _simulated_games(elo: Sequence[float], per_pair: int, seed: int) -> list[GameRecord]:
    rng = np.random.default_rng(seed)
    records, deal = [], 0
    names = [f"p{i}" for i in range(len(elo))]
    for i in range(len(elo)):
        for j in range(i + 1, len(elo)):
            p_i = float(elo_to_score(elo[i] - elo[j]))
            for _ in range(per_pair):
                i_wins = rng.random() < p_i
                records.append(_record(deal, 0, (names[i], names[j]), (0, 1) if i_wins else (1, 0)))
                deal += 1
    return records


def test_bradley_terry_recovers_known_ratings() -> None:
    truth = np.array([-100.0, 0.0, 150.0])
    truth -= truth.mean()
    records = _simulated_games(truth.tolist(), per_pair=6000, seed=6)
    table = GameTable.from_records(records, ["p0", "p1", "p2"], 2)
    w, n = pairwise_counts(table)
    elo = fit_bradley_terry(w[0], n[0])
    assert elo.sum() == pytest.approx(0.0, abs=1e-9)
    assert elo == pytest.approx(truth, abs=15.0)
    boot = bootstrap_elo(table, resamples=200, seed=0)
    assert boot["elo"] == pytest.approx(elo.tolist())
    for t, low, high in zip(truth, boot["low"], boot["high"], strict=True):
        assert low < t < high
        assert high - low < 40.0


def test_bradley_terry_stays_finite_for_a_perfect_record() -> None:
    w = np.array([[0.0, 20.0], [0.0, 0.0]])
    n = np.array([[0.0, 20.0], [20.0, 0.0]])
    elo = fit_bradley_terry(w, n)
    assert np.isfinite(elo).all() and elo[0] > 300.0


def test_openskill_ties_are_symmetric_and_winners_rise() -> None:
    tied = [_record(d, 0, ("a", "b", "c"), (1, 1, 0)) for d in range(30)]
    ratings = openskill_ratings(GameTable.from_records(tied, ["a", "b", "c"], 3))
    assert ratings["model"] == "openskill.BradleyTerryFull"
    mu = ratings["mu"]
    assert mu[0] == pytest.approx(mu[1])
    assert mu[2] > mu[0] + 5.0


def test_pairwise_counts_score_ties_as_half() -> None:
    records = [
        _record(0, 0, ("a", "b", "c"), (0, 1, 1)),
        _record(1, 0, ("c", "a", "b"), (0, 2, 1)),
    ]
    table = GameTable.from_records(records, ["a", "b", "c"], 3)
    w, n = (m[0] for m in pairwise_counts(table))
    assert np.array_equal(w + w.T, n)
    assert w[0, 1] == 1.0  # a beat b, then lost to b
    assert w[1, 2] == 0.5  # b tied c, then lost to c
    assert w[2, 1] == 1.5
    assert n[1, 2] == 2.0
    assert table.game_scores()[0].tolist() == [1.0, 0.25, 0.25]


# --- variance reduction -------------------------------------------------------------------


def _two_seatings(first_wins: np.ndarray, second_wins: np.ndarray) -> GameTable:
    """Deal sets of A and B: seating 0 puts A in seat 0, seating 1 puts B there."""
    records = []
    for d, (x0, x1) in enumerate(zip(first_wins, second_wins, strict=True)):
        records.append(_record(d, 0, ("A", "B"), (0, 1) if x0 else (1, 0)))
        records.append(_record(d, 1, ("B", "A"), (1, 0) if x1 else (0, 1)))
    return GameTable.from_records(records, ["A", "B"], 2)


def test_variance_reduction_known_cases() -> None:
    rng = np.random.default_rng(0)
    coin = rng.random(4000) < 0.5
    tables = np.zeros(8000, dtype=np.int64)
    # The deal decides the seat that wins: A's two games always split, no variance left.
    seat_decides = variance_reduction(_two_seatings(coin, ~coin), tables)
    assert seat_decides["overall"]["ratio"] == pytest.approx(0.0)
    # The deal decides the player that wins: A's games agree, twice the variance.
    player_decides = variance_reduction(_two_seatings(coin, coin), tables)
    assert player_decides["overall"]["ratio"] == pytest.approx(2.0, rel=0.05)
    # Independent games: no gain.
    other = rng.random(4000) < 0.5
    independent = variance_reduction(_two_seatings(coin, other), tables)
    assert independent["overall"]["ratio"] == pytest.approx(1.0, abs=0.08)
    assert set(independent["participants"]) == {"A", "B"}
