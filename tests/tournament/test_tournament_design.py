"""Tests of the tournament design (``unolab.tournament.design``).

* Seatings: every design row is a permutation; every table position sits in every seat
  equally often (k = 2..10); the Williams design balances ordered neighbours.
* Tables: all k-subsets, or a balanced sample in which every participant sits at the same
  number of tables within one; reproducible from the seed.
* Schedules: chunks partition the units exactly once; in an A/B schedule the candidate and
  the incumbent sit in the same seat on the same deal; over a whole schedule each
  participant sits in each seat equally often; deal keys depend on (seed, deal) only.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from uno_env.config_values import ConfigError
from unolab.tournament.design import (
    balanced_tables,
    build_schedule,
    deal_keys,
    rotation_design,
    seatings,
    williams_design,
)

DESIGNS = [("pair", 2)] + [
    (design, k) for design in ("rotations", "williams") for k in range(2, 11)
]


@pytest.mark.parametrize(("design", "k"), DESIGNS)
def test_every_position_sits_in_every_seat_equally_often(design: str, k: int) -> None:
    rows = seatings(k, design)
    assert rows.shape[1] == k
    for row in rows:
        assert sorted(row.tolist()) == list(range(k)), "each row is a permutation"
    for seat in range(k):
        counts = np.bincount(rows[:, seat], minlength=k)
        assert (counts == counts[0]).all(), f"seat {seat}: {counts}"
    assert len({tuple(r) for r in rows.tolist()}) == rows.shape[0], "no repeated row"


@pytest.mark.parametrize("k", range(3, 11))
def test_williams_balances_ordered_neighbours(k: int) -> None:
    rows = williams_design(k)
    assert rows.shape[0] == (k if k % 2 == 0 else 2 * k)
    pairs = Counter((int(r[s]), int(r[s + 1])) for r in rows for s in range(k - 1))
    expected = 1 if k % 2 == 0 else 2
    assert set(pairs) == {(a, b) for a in range(k) for b in range(k) if a != b}
    assert set(pairs.values()) == {expected}


def test_rotations_reverse_neighbours() -> None:
    rows = rotation_design(4)
    assert rows.shape == (8, 4)
    # Forward rows: position p+1 sits right after p; reversed rows: p-1 does.
    right_of_zero = {int(r[(int(np.flatnonzero(r == 0)[0]) + 1) % 4]) for r in rows}
    assert right_of_zero == {1, 3}


def test_auto_design_and_errors() -> None:
    assert seatings(2).tolist() == [[0, 1], [1, 0]]
    assert np.array_equal(seatings(4), williams_design(4))
    with pytest.raises(ValueError, match="two players"):
        seatings(3, "pair")
    with pytest.raises(ValueError, match="unknown design"):
        seatings(3, "latin")


def test_all_tables_when_few() -> None:
    assert balanced_tables(5, 2, 0, 0) == list(itertools.combinations(range(5), 2))
    assert balanced_tables(5, 3, 100, 0) == list(itertools.combinations(range(5), 3))


@pytest.mark.parametrize(("n", "k", "m"), [(12, 4, 30), (20, 10, 7), (9, 3, 50)])
def test_balanced_sample(n: int, k: int, m: int) -> None:
    tables = balanced_tables(n, k, m, seed=3)
    assert len(tables) == m
    assert all(len(set(t)) == k for t in tables)
    counts = np.bincount([p for t in tables for p in t], minlength=n)
    assert counts.max() - counts.min() <= 1, counts
    assert tables == balanced_tables(n, k, m, seed=3)
    assert tables != balanced_tables(n, k, m, seed=4)


def test_balanced_sample_spreads_pairs() -> None:
    tables = balanced_tables(10, 2, 45, seed=0)  # as many tables as pairs: all distinct
    assert len(set(tables)) == 45


def test_too_many_tables_needs_max_tables() -> None:
    with pytest.raises(ConfigError, match="max_tables"):
        balanced_tables(40, 10, 0, 0)


def test_chunks_partition_the_units() -> None:
    names = [f"p{i}" for i in range(5)]
    sched = build_schedule(names, "round_robin", 3, 7, games_per_chunk=50, seed=1)
    assert sched.num_deal_sets == 10 * 7
    assert sched.games_per_deal_set == 6  # k = 3: Williams with its mirror
    units = [u for c in range(sched.num_chunks) for u in sched.units(c)]
    assert len(units) == len(set(units)) == sched.num_games
    assert all(
        sched.chunk_of(d) == c for c in range(sched.num_chunks) for d in sched.chunk_deals(c)
    )


@pytest.mark.parametrize(("fmt", "k"), [("round_robin", 2), ("round_robin", 4), ("gauntlet", 3)])
def test_each_participant_sits_in_each_seat_equally_often(fmt: str, k: int) -> None:
    names = [f"p{i}" for i in range(6)]
    sched = build_schedule(names, fmt, k, 4, seed=0)
    counts = np.zeros((len(names), k), dtype=np.int64)
    for c in range(sched.num_chunks):
        for unit in sched.units(c):
            for seat, pid in enumerate(sched.lineup(*unit)):
                counts[pid, seat] += 1
    for pid in range(len(names)):
        played = counts[pid][counts[pid] > 0]
        assert played.size in (0, k) and (played == played[0]).all(), (pid, counts[pid])


def test_ab_substitutes_in_the_same_seat_on_the_same_deal() -> None:
    names = ["cand", "inc", "f1", "f2", "f3"]
    sched = build_schedule(names, "ab", 3, 5, seed=0)
    assert sched.variants == (1, 0)
    for c in range(sched.num_chunks):
        for deal, seating, variant in sched.units(c):
            if variant:
                continue
            a = sched.lineup(deal, seating, 0)
            b = sched.lineup(deal, seating, 1)
            assert 1 in a and 0 not in a and 0 in b and 1 not in b
            assert a.index(1) == b.index(0)
            assert [p for p in a if p != 1] == [p for p in b if p != 0], "same field, same seats"


def test_deal_keys_are_a_function_of_seed_and_deal() -> None:
    keys = deal_keys(7, np.arange(1000))
    assert np.unique(keys).size == 1000
    assert np.array_equal(deal_keys(7, [5, 999]), keys[[5, 999]])
    assert not np.array_equal(deal_keys(8, np.arange(10)), keys[:10])


def test_vectorised_lineups_match() -> None:
    for fmt, names in (("round_robin", 5), ("gauntlet", 5), ("ab", 6)):
        sched = build_schedule([f"p{i}" for i in range(names)], fmt, 3, 3, seed=2)
        units = [u for c in range(sched.num_chunks) for u in sched.units(c)]
        assert sched.lineups(units).tolist() == [list(sched.lineup(*u)) for u in units]
