"""One chunk of a tournament: its schedule, its policies' seeds, and playing it as one batch.

A chunk is a fixed shard of deal sets (``games_per_chunk`` games). Every backend plays a
chunk with :func:`play_chunk` (the local loop, the worker pool, Ray tasks), and a replay of
one game rebuilds the very chunk it was played in from :func:`schedule_for` and
:func:`policy_seed`, so the same config gives the same games wherever they are played.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.play import play_tables
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents.llm.client import LLMEndpointError
from unolab.agents.llm.records import DecisionCache
from unolab.tournament.analysis import GameTable
from unolab.tournament.config import TournamentConfig
from unolab.tournament.design import Schedule, build_schedule, deal_keys
from unolab.tournament.participants import Entrant
from unolab.tournament.results import Unit, encode_lines
from unolab.tournament.telemetry import (
    LATENCY_KEY,
    chunk_report,
    decisions_file,
    policy_telemetry,
)

__all__ = ["ChunkOrder", "ChunkResult", "PlayChunk", "play_chunk", "policy_seed", "schedule_for"]


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
