"""The experimental design: which tables play, under which seatings, on which deals.

Terms used throughout the package:

* **participant id**: the index of a participant in ``TournamentConfig.all_participants``.
* **table**: the base line-up of k participants (ids).
* **seating**: a permutation of the table: row ``j`` of :func:`seatings` says which table
  position sits in each seat. Seat 0 plays first (the dealer is always seat k-1).
* **deal set**: one shuffled deal (a 64-bit game key: deck order and per-seat draw streams)
  replayed under every seating of the design, and in the ``ab`` format once with the
  incumbent and once with the candidate in the substituted position. Deal set ``d`` is played
  at table ``d % len(tables)``, so every prefix of deal sets is spread over all tables.
* **unit**: one game, ``(deal, seating, variant)``.
* **chunk**: a block of consecutive deal sets, played as one batch and written to disk at
  once. The chunking depends on the config only, never on the number of workers, so the same
  config gives the same games.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from uno_env.config_values import ConfigError
from uno_env.rng import keyed_bits

__all__ = [
    "Schedule",
    "balanced_tables",
    "build_schedule",
    "deal_keys",
    "pair_design",
    "rotation_design",
    "seatings",
    "williams_design",
]

_MAX_ENUMERATED_TABLES = 100_000
_DEAL_STREAM = 0x7E57_0000
"""Stream offset of the deal keys (any fixed number: it only has to stay the same)."""


def pair_design() -> npt.NDArray[np.int64]:
    """Two players: both seatings."""
    return np.array([[0, 1], [1, 0]], dtype=np.int64)


def rotation_design(k: int) -> npt.NDArray[np.int64]:
    """The k cyclic rotations of the table and the k rotations of its reversed order.

    Row ``r < k`` puts table position ``(s + r) % k`` in seat ``s``; row ``k + r`` puts
    ``(r - s) % k``. Every position sits in every seat twice; in the reversed rows each
    player's neighbours swap sides. (With two players the reversed rows repeat the forward
    ones and are left out.)
    """
    seats = np.arange(k)
    rows: list[tuple[int, ...]] = []
    for row in [(seats + r) % k for r in range(k)] + [(r - seats) % k for r in range(k)]:
        if tuple(row.tolist()) not in rows:  # two players: the reversed rows repeat
            rows.append(tuple(row.tolist()))
    out: npt.NDArray[np.int64] = np.array(rows, dtype=np.int64)
    return out


def williams_design(k: int) -> npt.NDArray[np.int64]:
    """A Williams design: a Latin square whose rows balance neighbours.

    The first row is ``0, 1, k-1, 2, k-2, ...`` and row ``i`` adds ``i`` modulo k. For even k
    (k rows) every ordered pair of positions sits in adjacent seats (seat s, then s+1) exactly
    once; for odd k the mirrored rows are added (2k rows) and every ordered pair is adjacent
    exactly twice. The wrap-around pair (seat k-1, seat 0) is not part of the balance: no
    design of k rows can balance it too. Every position sits in every seat equally often.
    """
    first = [0]
    low, high = 1, k - 1
    while len(first) < k:
        first.append(low)
        low += 1
        if len(first) < k:
            first.append(high)
            high -= 1
    base = np.array(first, dtype=np.int64)
    rows = [(base + i) % k for i in range(k)]
    if k % 2 == 1:
        rows += [row[::-1] for row in rows]
    out: npt.NDArray[np.int64] = np.array(rows, dtype=np.int64)
    return out


def seatings(k: int, design: str = "auto") -> npt.NDArray[np.int64]:
    """The seatings of one deal set, shape (S, k): row j, seat s -> table position.

    Args:
        k: Table size, 2 to 10.
        design: ``pair``, ``rotations``, ``williams`` or ``auto`` (``pair`` for two players,
            ``williams`` otherwise).

    Raises:
        ValueError: for an unknown design or ``pair`` with k != 2.
    """
    if design == "auto":
        design = "pair" if k == 2 else "williams"
    if design == "pair":
        if k != 2:
            raise ValueError("the pair design is for two players")
        return pair_design()
    if design == "rotations":
        return rotation_design(k)
    if design == "williams":
        return williams_design(k)
    raise ValueError(f"unknown design {design!r}; choose auto, pair, rotations or williams")


def balanced_tables(num_items: int, size: int, max_tables: int, seed: int) -> list[tuple[int, ...]]:
    """Every ``size``-subset of ``range(num_items)``, or a balanced sample of them.

    With ``max_tables == 0`` or no more subsets than ``max_tables``, all subsets are returned
    (lexicographic order). Otherwise ``max_tables`` subsets are built greedily: each takes the
    items that have sat at the fewest tables so far, then those that met the already chosen
    ones least often, ties broken by a seeded shuffle. Every item then sits at the same
    number of tables within one, and pairs meet about equally often.

    Raises:
        ConfigError: when there are too many subsets to play them all and ``max_tables`` is 0.
    """
    total = math.comb(num_items, size)
    if max_tables == 0 or total <= max_tables:
        if total > _MAX_ENUMERATED_TABLES:
            raise ConfigError(
                f"{total} tables of {size} among {num_items} participants: set max_tables to "
                "play a balanced sample"
            )
        return list(itertools.combinations(range(num_items), size))
    rng = np.random.default_rng(np.random.SeedSequence([seed, num_items, size]))
    seat_count = np.zeros(num_items, dtype=np.int64)
    pair_count = np.zeros((num_items, num_items), dtype=np.int64)
    tables: list[tuple[int, ...]] = []
    for _ in range(max_tables):
        chosen: list[int] = []
        for _ in range(size):
            left = np.setdiff1d(np.arange(num_items), chosen)
            picked = np.array(chosen, dtype=np.int64)
            met = pair_count[np.ix_(left, picked)].sum(axis=1) if chosen else np.zeros(left.size)
            tie = rng.random(left.size)
            order = np.lexsort((tie, met, seat_count[left]))
            chosen.append(int(left[order[0]]))
        table = tuple(sorted(chosen))
        for i in table:
            seat_count[i] += 1
            for j in table:
                if i != j:
                    pair_count[i, j] += 1
        tables.append(table)
    return tables


def deal_keys(seed: int, deals: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """The game key of each deal set: a pure function of the config seed and the deal index."""
    d = np.atleast_1d(np.asarray(deals, dtype=np.uint64))
    base = np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)
    bits = keyed_bits(np.full(d.shape, base[0], dtype=np.uint64), d + np.uint64(_DEAL_STREAM), 1)
    return np.asarray(bits[:, 0], dtype=np.uint64)


@dataclass(frozen=True)
class Schedule:
    """Every game of a tournament, and how they are grouped into chunks.

    Attributes:
        names: Participant names by participant id.
        tables: Base line-ups, participant ids by table position. In the ``ab`` format,
            position 0 holds -1: the substituted position.
        seatings: (S, k) seat -> table position, for every deal set.
        variants: ``ab``: the participant ids substituted into position 0 (incumbent, then
            candidate); otherwise ``(-1,)``, a single variant that substitutes nothing.
        deal_sets_per_table: Deal sets played at each table.
        games_per_chunk: The config's batch size, from which the chunk size follows.
        seed: The config seed (deal keys, agents' seeds).
    """

    names: tuple[str, ...]
    tables: tuple[tuple[int, ...], ...]
    seatings: npt.NDArray[np.int64]
    variants: tuple[int, ...]
    deal_sets_per_table: int
    games_per_chunk: int
    seed: int

    @property
    def num_players(self) -> int:
        """Table size k."""
        return int(self.seatings.shape[1])

    @property
    def num_deal_sets(self) -> int:
        """Deal sets in all."""
        return len(self.tables) * self.deal_sets_per_table

    @property
    def games_per_deal_set(self) -> int:
        """Seatings times variants."""
        return int(self.seatings.shape[0]) * len(self.variants)

    @property
    def num_games(self) -> int:
        """Games in all."""
        return self.num_deal_sets * self.games_per_deal_set

    @property
    def deal_sets_per_chunk(self) -> int:
        """Deal sets in one chunk (at least one)."""
        return max(1, self.games_per_chunk // self.games_per_deal_set)

    @property
    def num_chunks(self) -> int:
        """Chunks in all."""
        return -(-self.num_deal_sets // self.deal_sets_per_chunk)

    def chunk_deals(self, chunk: int) -> range:
        """The deal sets of a chunk."""
        start = chunk * self.deal_sets_per_chunk
        return range(start, min(start + self.deal_sets_per_chunk, self.num_deal_sets))

    def chunk_of(self, deal: int) -> int:
        """The chunk that holds a deal set."""
        return deal // self.deal_sets_per_chunk

    def table_of(self, deal: int) -> int:
        """The table a deal set is played at."""
        return deal % len(self.tables)

    def lineup(self, deal: int, seating: int, variant: int) -> tuple[int, ...]:
        """Participant ids by seat for one unit."""
        table = list(self.tables[self.table_of(deal)])
        if self.variants[variant] >= 0:
            table[0] = self.variants[variant]
        return tuple(table[p] for p in self.seatings[seating])

    def lineups(self, units: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Participant ids by seat for many units, (G, k) from (G, 3) units."""
        u = np.asarray(units, dtype=np.int64).reshape(-1, 3)
        base = np.array(self.tables, dtype=np.int64)[u[:, 0] % len(self.tables)]
        substitute = np.array(self.variants, dtype=np.int64)[u[:, 2]]
        base[:, 0] = np.where(substitute >= 0, substitute, base[:, 0])
        out: npt.NDArray[np.int64] = np.take_along_axis(base, self.seatings[u[:, 1]], axis=1)
        return out

    def units(self, chunk: int) -> list[tuple[int, int, int]]:
        """Every ``(deal, seating, variant)`` of a chunk, in order."""
        return [
            (d, s, v)
            for d in self.chunk_deals(chunk)
            for s in range(self.seatings.shape[0])
            for v in range(len(self.variants))
        ]


def build_schedule(
    names: Sequence[str],
    fmt: str,
    num_players: int,
    deal_sets: int,
    *,
    design: str = "auto",
    max_tables: int = 0,
    games_per_chunk: int = 2048,
    seed: int = 0,
) -> Schedule:
    """Lay out a tournament.

    Args:
        names: Participant names by id. ``gauntlet``: id 0 is the candidate, the rest the
            field. ``ab``: id 0 is the candidate, id 1 the incumbent, the rest the field.
        fmt: ``round_robin``, ``gauntlet`` or ``ab``.
        num_players: Table size k.
        deal_sets: Deal sets per table.
        design: See :func:`seatings`.
        max_tables: See :func:`balanced_tables`.
        games_per_chunk: Batch size of one chunk.
        seed: The config seed.
    """
    k = num_players
    ids = list(range(len(names)))
    variants: tuple[int, ...] = (-1,)
    if fmt == "round_robin":
        tables = balanced_tables(len(ids), k, max_tables, seed)
    elif fmt == "gauntlet":
        field = ids[1:]
        tables = [
            (0, *(field[i] for i in sub))
            for sub in balanced_tables(len(field), k - 1, max_tables, seed)
        ]
    elif fmt == "ab":
        field = ids[2:]
        tables = [
            (-1, *(field[i] for i in sub))
            for sub in balanced_tables(len(field), k - 1, max_tables, seed)
        ]
        variants = (1, 0)  # the incumbent (A), then the candidate (B), on the same deal
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return Schedule(
        names=tuple(names),
        tables=tuple(tables),
        seatings=seatings(k, design),
        variants=variants,
        deal_sets_per_table=deal_sets,
        games_per_chunk=games_per_chunk,
        seed=seed,
    )
