"""One chunk of a tournament: its schedule, its policies' seeds, playing it as one batch, and the
checks of a resumed log.

A chunk is a fixed shard of deal sets (``games_per_chunk`` games). Every backend plays a
chunk with :func:`play_chunk` (the local loop, the worker pool, Ray tasks), and a replay of
one game rebuilds the very chunk it was played in from :func:`schedule_for` and
:func:`policy_seed`, so the same config gives the same games wherever they are played.

**Resuming.** The checks of a resumed run's log: every game belongs to this schedule, its finishing
order is one the rules can give, and the chunks a crash left written only in part are found
(they are played again whole).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.config_values import ConfigError
from uno_env.play import play_tables
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents.llm.client import LLMEndpointError
from unolab.agents.llm.records import DecisionCache
from unolab.tournament.analysis import GameTable
from unolab.tournament.config import MAX_DEAL_SETS, TournamentConfig
from unolab.tournament.design import Schedule, build_schedule, deal_keys
from unolab.tournament.participants import Entrant
from unolab.tournament.results import GameRecord, ResultStore, Unit, encode_lines
from unolab.tournament.telemetry import (
    LATENCY_KEY,
    chunk_report,
    decisions_file,
    policy_telemetry,
)

__all__ = [
    "ChunkOrder",
    "ChunkResult",
    "PlayChunk",
    "check_records",
    "partial_chunks",
    "play_chunk",
    "policy_seed",
    "ranks_problem",
    "schedule_for",
]


def policy_seed(seed: int, chunk: int, participant: int) -> int:
    """The seed of a participant's policy in one chunk."""
    state = np.random.SeedSequence([seed, chunk, participant, 0x5EED]).generate_state(2)
    return int(state[0]) << 32 | int(state[1])


def schedule_for(config: TournamentConfig, entrants: Sequence[Entrant]) -> Schedule:
    """The schedule of ``config``'s tournament between ``entrants`` (the one derivation: a
    replay of a game rebuilds the very chunk it was played in)."""
    return build_schedule(
        [e.name for e in entrants],
        config.format,
        config.num_players,
        config.deal_sets,
        design=config.design,
        max_tables=config.max_tables,
        games_per_chunk=config.games_per_chunk,
        seed=config.seed,
    )


@dataclass(frozen=True)
class ChunkResult:
    """What playing a chunk gives back: the log lines, the games as columns, and what the
    participants reported.

    Attributes:
        text: The ``games.jsonl`` lines of the games (one per game, each ending in a newline).
        table: The same games as columns, in the same order.
        telemetry: Participant name -> its report on this chunk
            (:func:`unolab.tournament.telemetry.chunk_report`), for the participants whose
            policy has ``telemetry()``.
        stop: Why the run must stop (one line naming the participant), or ``""``: a
            participant's endpoint refused it (nothing answers at its address, an unknown
            model, a refused key), so every later game would forfeit alike.
    """

    text: str
    table: GameTable
    telemetry: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    stop: str = ""


PlayChunk = Callable[[Rules, Schedule, Sequence[Entrant], int, list[Unit]], ChunkResult]
"""The signature of :func:`play_chunk`: how a backend is told to play its chunks."""


class ChunkOrder:
    """Hands finished chunks on in the order they were planned, whatever order they finish in.

    Chunks played in parallel finish in any order (and a chunk lost with its worker finishes
    later still); handing them on in plan order makes ``games.jsonl`` the same bytes with any
    number of workers, after any restart, and after a resume (the log always holds a prefix
    of the plan, and the resume appends the rest in order).

    Args:
        count: How many chunks are planned (indices ``0 .. count-1`` into the plan).
        handle: Called with each chunk's result, in plan order.
    """

    def __init__(self, count: int, handle: Callable[[ChunkResult], None]) -> None:
        self.count = count
        self.handle = handle
        self.delivered = 0
        """Chunks ``0 .. delivered-1`` of the plan have been handed on."""
        self.waiting: dict[int, ChunkResult] = {}
        """Finished chunks held until those before them in the plan are handed on."""

    def put(self, index: int, result: ChunkResult) -> None:
        """Take the result of the chunk at ``index`` of the plan; hand on all that are due."""
        self.waiting[index] = result
        while self.delivered in self.waiting:
            self.handle(self.waiting.pop(self.delivered))
            self.delivered += 1

    @property
    def complete(self) -> bool:
        """Every planned chunk has been handed on."""
        return self.delivered >= self.count


def play_chunk(
    rules: Rules,
    schedule: Schedule,
    entrants: Sequence[Entrant],
    chunk: int,
    units: Sequence[Unit],
) -> ChunkResult:
    """Play some units of one chunk as a single batch.

    Every participant of the chunk gets a fresh policy seeded from ``(seed, chunk, id)``; one
    whose factory or ``reset`` raises forfeits every game of the chunk where it sits. After
    the games, each policy that has ``telemetry()`` reports (:mod:`unolab.tournament.telemetry`).

    An entrant with a ``records`` folder (the run folder) whose policy has
    ``record_to(path)`` records its decisions there
    (:func:`~unolab.tournament.telemetry.decisions_file`); the decisions recorded by an
    earlier play of the chunk are answered again from the records (``use_cache``), without
    asking the model.

    Args:
        rules: The rules of every game.
        schedule: The tournament's schedule.
        entrants: The participants.
        chunk: The chunk's index in the schedule.
        units: The units of the chunk to play.

    Raises:
        ConfigError: for a records file of the chunk that holds something else than
            decision records (naming the file and the line).
        OSError: when the records cannot be written (one line naming the file).
    """
    names = schedule.names
    if not units:
        return ChunkResult("", GameTable.empty(names, schedule.num_players))
    unit_arr = np.array(units, dtype=np.int64).reshape(-1, 3)
    lineups = schedule.lineups(unit_arr)
    keys = deal_keys(schedule.seed, unit_arr[:, 0])
    needed = set(lineups.ravel().tolist())
    policies: list[Policy | None] = []
    broken: dict[int, str] = {}
    recording: dict[int, tuple[Path, int]] = {}
    try:
        for p in range(len(entrants)):
            policy = None
            if p in needed:
                try:
                    policy = entrants[p].build(policy_seed(schedule.seed, chunk, p))
                except Exception as err:  # the participant forfeits this chunk, the others play
                    broken[p] = f"could not be built: {type(err).__name__}: {err}"
            policies.append(policy)
            records = entrants[p].records
            if policy is not None and records is not None:
                # Not a forfeit: a records file that cannot be read or written is the run's.
                started = _record(policy, decisions_file(records, names[p], chunk))
                if started is not None:
                    recording[p] = started
        res = play_tables(
            rules, policies, lineups, keys, dealer=rules.num_players - 1, broken=broken
        )
        telemetry: dict[str, dict[str, Any]] = {}
        for p, policy in enumerate(policies):
            report = policy_telemetry(policy) if policy is not None else None
            if report is None:
                continue
            if LATENCY_KEY not in report and p in recording:
                report[LATENCY_KEY] = _recorded_latencies(*recording[p])
            telemetry[names[p]] = chunk_report(report)
    finally:
        for policy in policies:
            if policy is not None and (
                hasattr(policy, "record_to") or hasattr(policy, "telemetry")
            ):
                closer = getattr(policy, "close", None)
                if callable(closer):
                    closer()
    reasons = np.full(len(units), "", dtype=object)
    for i, why in res.reasons.items():
        reasons[i] = why
    table = GameTable(
        names=names,
        deal=unit_arr[:, 0].copy(),
        seating=unit_arr[:, 1].copy(),
        variant=unit_arr[:, 2].copy(),
        seats=lineups,
        ranks=res.ranks,
        turns=res.turns,
        end=res.end,
        forfeit_seat=res.forfeit_seat,
        reasons=reasons,
    )
    seats = [[names[p] for p in row] for row in lineups.tolist()]
    stop = _refused(res.reasons, lineups, res.forfeit_seat, names)
    return ChunkResult(encode_lines(units, keys.tolist(), seats, res), table, telemetry, stop)


def _record(policy: Policy, path: Path) -> tuple[Path, int] | None:
    """Have ``policy`` record its decisions to ``path`` (when it can), first handing it the
    decisions recorded there already (when it takes a cache).

    Returns:
        The file and its size before this chunk's decisions (where they begin), or ``None``
        for a policy that keeps no records.
    """
    record_to = getattr(policy, "record_to", None)
    if not callable(record_to):
        return None
    use_cache = getattr(policy, "use_cache", None)
    if path.exists() and callable(use_cache):
        use_cache(DecisionCache.load(path))
    record_to(path)
    return path, path.stat().st_size if path.exists() else 0


def _recorded_latencies(path: Path, start: int) -> list[float]:
    """The latencies of the requests recorded in ``path`` from byte ``start`` on (answers
    replayed from records took none)."""
    out: list[float] = []
    try:
        with path.open("rb") as file:
            file.seek(start)
            lines = file.read().split(b"\n")
    except OSError:
        return out
    for line in lines:
        try:
            record = json.loads(line)
            out.extend(float(r["latency_s"]) for r in record["requests"] if not r.get("replayed"))
        except (ValueError, KeyError, TypeError):
            continue  # not a whole record: a line cut short
    return out


_ENDPOINT_ERRORS: list[type[LLMEndpointError]] = [
    LLMEndpointError,
    *LLMEndpointError.__subclasses__(),
]
_LASTING = tuple(cls.__name__ + ": " for cls in _ENDPOINT_ERRORS if cls.lasting)
"""How the forfeit reason of a lasting endpoint failure begins (the play loop names the
exception's class)."""


def _refused(
    reasons: Mapping[int, str], lineups: np.ndarray, forfeit_seat: np.ndarray, names: Sequence[str]
) -> str:
    """The line that stops the run when an endpoint refused a participant, or ``""``."""
    for row, why in sorted(reasons.items()):
        if why.startswith(_LASTING):
            who = names[int(lineups[row, int(forfeit_seat[row])])]
            return f"participant {who!r}: {why.partition(': ')[2]}"
    return ""


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
