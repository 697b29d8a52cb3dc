"""The checks of a resumed run's log: every game belongs to this schedule, its finishing
order is one the rules can give, and the chunks a crash left written only in part are found
(they are played again whole).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from uno_env.config_values import ConfigError
from uno_env.rules import Rules
from unolab.tournament.config import MAX_DEAL_SETS
from unolab.tournament.design import Schedule, deal_keys
from unolab.tournament.results import GameRecord, ResultStore, Unit

__all__ = ["check_records", "partial_chunks", "ranks_problem"]


def check_records(
    schedule: Schedule, rules: Rules, done: Mapping[Unit, GameRecord], store: ResultStore
) -> None:
    """Refuse games that do not belong to this schedule (a foreign or edited log), or whose
    finishing order the rules cannot give (two winners of a hand without teams).

    Args:
        schedule: This run's schedule.
        rules: This run's rules (``teams`` and ``play_to_last`` decide the finishing orders).
        done: The games on disk.
        store: The log they were read from (its path and line numbers are named).

    Raises:
        ConfigError: naming the log, the line and what is wrong with it.
    """
    n_seatings = schedule.seatings.shape[0]
    names = set(schedule.names)
    # No run of this config (its tables are fixed by the fingerprint) has more deal sets.
    max_deals = MAX_DEAL_SETS * len(schedule.tables)

    def refuse(unit: Unit, problem: str) -> ConfigError:
        return ConfigError(
            f"{store.path}: line {store.line_of.get(unit, '?')}: game {unit} {problem}; fix "
            "or delete that line, or rerun with --fresh to discard every game"
        )

    deals = [min(unit[0], max_deals) for unit in done]
    keys = deal_keys(schedule.seed, np.array(deals, dtype=np.uint64)).tolist() if deals else []
    for (unit, record), key in zip(done.items(), keys, strict=True):
        deal, seating, variant = unit
        if len(record.seats) != schedule.num_players:
            raise refuse(
                unit, f"has {len(record.seats)} seats, the tables have {schedule.num_players}"
            )
        unknown = sorted(set(record.seats) - names)
        if unknown:
            raise refuse(unit, f"names unknown participant(s) {unknown}")
        if not (0 <= seating < n_seatings and 0 <= variant < len(schedule.variants)) or not (
            deal < max_deals
        ):
            raise refuse(unit, "is not part of this tournament")
        problem = ranks_problem(record, rules)
        if problem:
            raise refuse(unit, problem)
        if record.key != key:
            raise ConfigError(
                f"{store.path}: line {store.line_of.get(unit, '?')}: game {unit} was dealt "
                f"with key {record.key}, but deal {deal} of seed {schedule.seed} has key {key}: "
                "the log holds games of another run (another seed, or lines copied in); "
                "restore this run's log, or rerun with --fresh to discard every game"
            )
        if deal >= schedule.num_deal_sets:
            continue  # from a longer run of the same config: kept, not used
        expected = tuple(schedule.names[p] for p in schedule.lineup(deal, seating, variant))
        if record.seats != expected:
            raise refuse(unit, f"seats {list(record.seats)}, the schedule says {list(expected)}")


def ranks_problem(record: GameRecord, rules: Rules) -> str:
    """What is wrong with a game's finishing order under ``rules`` (``""`` when nothing).

    The orders :mod:`uno_env.outcomes` gives: each seat's rank is the number of seats that
    finished strictly ahead of it (tied seats share the best position of their group). A won
    hand has one winner at rank 0 and the others tied at 1; with ``teams``, the winner and
    the partner opposite at 0 and the other team at 2; under ``play_to_last`` every seat its
    own place. A truncated hand ties the seats still playing (every seat, unless
    ``play_to_last`` let some out first, who keep their places); a forfeit puts the
    forfeiting seat alone in last place and ties the seats still playing above it. A won
    hand also took at least one turn, and a seat at rank 0 went out (no card left).
    """
    ranks = record.ranks
    k = len(ranks)
    shown_ranks = list(ranks)
    order = sorted(ranks)
    if any(r != i for i, r in enumerate(order) if i == 0 or r != order[i - 1]):
        return (
            f"has ranks {shown_ranks}, which is no finishing order (a seat's rank counts "
            "the seats ahead of it)"
        )
    if record.end == "won":
        if rules.play_to_last:
            expected, what = list(range(k)), "every seat its own place"
        elif rules.teams:
            expected, what = [0, 0, 2, 2], "the winning team at 0 and the other at 2"
        else:
            expected, what = [0] + [1] * (k - 1), "one winner at 0 and the others at 1"
        if order != expected or (rules.teams and ranks[0] != ranks[2]):
            return f"is a won hand with ranks {shown_ranks}; these rules rank {what}"
        if record.turns < 1:  # a seat went out: it played at least once
            return f"is a won hand with turns {record.turns}; a won hand takes at least 1 turn"
        if all(left for rank, left in zip(ranks, record.cards_left, strict=True) if rank == 0):
            return (
                f"is a won hand with ranks {shown_ranks} and cards_left "
                f"{list(record.cards_left)}; the seat that went out holds no card"
            )
        return ""
    seat = record.forfeit_seat
    if seat is not None and ranks[seat] != k - 1:
        return f"has ranks {shown_ranks}, but its forfeiting seat {seat} must rank last ({k - 1})"
    playing = [r for i, r in enumerate(ranks) if i != seat]
    if not rules.play_to_last:
        if any(playing):
            return (
                f"is a {record.end} hand with ranks {shown_ranks}; the seats still playing tie at 0"
            )
        return ""
    tied = max(playing)  # the seats still playing; those out before them each keep a place
    if sorted(r for r in playing if r != tied) != list(range(tied)):
        return (
            f"is a {record.end} hand with ranks {shown_ranks}; only the seats still playing may tie"
        )
    return ""


def partial_chunks(
    schedule: Schedule, done: Mapping[Unit, GameRecord], counts: set[int] | None
) -> tuple[set[int], set[int]]:
    """The chunks the log holds only in part, which must be dropped and played again whole.

    A chunk is written whole by one append, so what a log holds of a chunk is either all of
    its deal sets, or the deal sets before the end of the run that wrote it (a run of fewer
    ``deal_sets``, extended later): consecutive deal sets from the chunk's first, each with
    all its games, up to a recorded count. Anything else is the start of a chunk whose write
    a crash cut short; playing its missing games in a smaller batch would give other games
    than an uninterrupted run.

    Args:
        schedule: This run's schedule.
        done: The games on disk.
        counts: The deal-set counts of the runs that wrote the log (``None``: not recorded;
            any end at a whole deal set is then accepted).

    Returns:
        The chunks held in part, and the ends of the chunks held whole short of their end
        (the counts of earlier runs, as far as the log shows them).
    """
    if not done:
        return set(), set()
    deals = np.fromiter((unit[0] for unit in done), dtype=np.int64, count=len(done))
    present, games = np.unique(deals, return_counts=True)  # sorted; bounded by the check
    per_chunk = schedule.deal_sets_per_chunk
    chunks = present // per_chunk
    bounds = np.flatnonzero(np.diff(chunks)) + 1
    partial: set[int] = set()
    ends: set[int] = set()
    for sel in np.split(np.arange(present.size), bounds):
        chunk = int(chunks[sel[0]])
        first, size = chunk * per_chunk, sel.size
        end = first + size
        consecutive = int(present[sel[0]]) == first and int(present[sel[-1]]) == end - 1
        complete = bool((games[sel] == schedule.games_per_deal_set).all())
        short = size < per_chunk
        if not (consecutive and complete) or (short and counts is not None and end not in counts):
            partial.add(chunk)
        elif short:
            ends.add(end)
    return partial, ends
