"""One chunk of a tournament: its schedule, its policies' seeds, and playing it as one batch.

A chunk is a fixed shard of deal sets (``games_per_chunk`` games). Every backend plays a
chunk with :func:`play_chunk` (the local loop, the worker pool, Ray tasks), and a replay of
one game rebuilds the very chunk it was played in from :func:`schedule_for` and
:func:`policy_seed`, so the same config gives the same games wherever they are played.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from uno_env.play import play_tables
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.tournament.analysis import GameTable
from unolab.tournament.config import TournamentConfig
from unolab.tournament.design import Schedule, build_schedule, deal_keys
from unolab.tournament.participants import Entrant
from unolab.tournament.results import Unit, encode_lines

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
    """What playing a chunk gives back: the log lines and the games as columns.

    Attributes:
        text: The ``games.jsonl`` lines of the games (one per game, each ending in a newline).
        table: The same games as columns, in the same order.
    """

    text: str
    table: GameTable


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
    whose factory or ``reset`` raises forfeits every game of the chunk where it sits.
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
    for p in range(len(entrants)):
        policy = None
        if p in needed:
            try:
                policy = entrants[p].build(policy_seed(schedule.seed, chunk, p))
            except Exception as err:  # the participant forfeits this chunk, the others play
                broken[p] = f"could not be built: {type(err).__name__}: {err}"
        policies.append(policy)
    res = play_tables(rules, policies, lineups, keys, dealer=rules.num_players - 1, broken=broken)
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
    return ChunkResult(encode_lines(units, keys.tolist(), seats, res), table)
