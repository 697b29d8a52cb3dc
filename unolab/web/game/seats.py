"""The seats of a table for several people (:class:`SharedTable`): who sits where, each
seat's secret token, who is here and who is away, and the turn timer.

A host opens a table: seat 0 is the host's, each other seat is a bot's or open for a
person. Whoever has the table's link may watch it (public information only) or take an
open seat. Taking a seat hands the browser a secret token (``secrets.token_urlsafe``); the
server keeps only its SHA-256, and every request of the seat must carry the token.

A player with no request for ``away_seconds`` counts as away: the host's stand-in agent
plays their turns (and the turns of a seat nobody has taken yet) until the player's next
request brings them back to their seat. While two or more people have taken seats, a
person's turn lasts at most ``turn_seconds``; then the seat plays its safe default move
(:func:`default_action`: ``draw`` when the rules allow it, else ``keep``, else the first
legal move) and play goes on.

Who was last seen when lives in memory only (a request per second or two would otherwise
write to the disk each time): after a restart every player counts as here, and the turn
in play starts again in full.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

from unolab.web.game.live import StoredSeat, StoredTable

__all__ = [
    "AWAY_SECONDS",
    "HOST_SEAT",
    "TURN_SECONDS",
    "SeatState",
    "SharedTable",
    "hash_token",
    "new_token",
    "now",
]

HOST_SEAT = 0
"""The host's seat."""

AWAY_SECONDS = (120, 30, 3600)
"""A player counts as away after this many seconds without a request: the default, the
least and the most a host may choose."""

TURN_SECONDS = (60, 10, 600)
"""How long a person's turn lasts at a table of several people: the default, the least and
the most a host may choose."""


def now() -> float:
    """The clock of presence and turn timers (seconds since the epoch)."""
    return time.time()


def new_token() -> str:
    """A seat's secret token: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What the server keeps of a token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass
class SeatState:
    """One seat for people.

    Attributes:
        seat: The seat.
        token_hash: The hash of the seat's token (``None``: open).
        name: The player's name (``None``: open).
        seen: When the player last made a request (memory only).
    """

    seat: int
    token_hash: str | None = None
    name: str | None = None
    seen: float = 0.0

    @property
    def taken(self) -> bool:
        """Someone has taken the seat."""
        return self.token_hash is not None


@dataclass
class SharedTable:
    """A table for several people, in memory.

    Attributes:
        stand_in: The agent id that plays an away (or untaken) seat.
        away_seconds: A player with no request for this long counts as away.
        turn_seconds: How long a person's turn lasts while several people sit.
        seats: The seats for people, by seat.
        started: Whether the host started the game (before, nobody moves).
        changes: Joins and starts so far (a part of :meth:`version`).
        turn_since: When the turn in play began.
        ran_out: Seat -> the move number at which its last turn ran out (so that its late
            move is told why it is refused).
    """

    stand_in: str
    away_seconds: int
    turn_seconds: int
    seats: dict[int, SeatState]
    started: bool = False
    changes: int = 0
    turn_since: float = field(default_factory=now)
    ran_out: dict[int, int] = field(default_factory=dict)

    @classmethod
    def restore(cls, stored: StoredTable) -> SharedTable:
        """The table of the file: every taken seat counts as here, the turn starts now."""
        at = now()
        return cls(
            stand_in=stored.stand_in,
            away_seconds=stored.away_seconds,
            turn_seconds=stored.turn_seconds,
            seats={s.seat: SeatState(s.seat, s.token_hash, s.name, at) for s in stored.seats},
            started=stored.started,
            changes=stored.changes,
            turn_since=at,
        )

    def stored(self) -> StoredTable:
        """The table as the file holds it."""
        return StoredTable(
            stand_in=self.stand_in,
            away_seconds=self.away_seconds,
            turn_seconds=self.turn_seconds,
            started=self.started,
            changes=self.changes,
            seats=tuple(self.stored_seat(seat) for seat in sorted(self.seats)),
        )

    def stored_seat(self, seat: int) -> StoredSeat:
        """One seat as the file holds it."""
        state = self.seats[seat]
        return StoredSeat(seat, state.token_hash, state.name)

    @property
    def people(self) -> list[int]:
        """The seats for people, in order."""
        return sorted(self.seats)

    def seat_of(self, token: str) -> int | None:
        """The seat whose token this is, or ``None``."""
        digest = hash_token(token)
        for seat, state in self.seats.items():
            if state.token_hash is not None and hmac.compare_digest(state.token_hash, digest):
                return seat
        return None

    def take(self, seat: int, name: str) -> str:
        """Give ``seat`` to a player: returns the seat's new token (kept nowhere)."""
        token = new_token()
        state = self.seats[seat]
        state.token_hash, state.name, state.seen = hash_token(token), name, now()
        self.changes += 1
        return token

    def open_seats(self) -> list[int]:
        """The seats for people nobody has taken."""
        return [seat for seat in self.people if not self.seats[seat].taken]

    def here(self, seat: int) -> bool:
        """The seat's player made a request within ``away_seconds``."""
        state = self.seats.get(seat)
        return state is not None and state.taken and now() - state.seen <= self.away_seconds

    def seen(self, seat: int) -> None:
        """The seat's player made a request (one who was away is back)."""
        self.seats[seat].seen = now()

    def controlled(self) -> set[int]:
        """The seats whose moves a person makes now (before the start: every seat for
        people, so that nobody moves)."""
        if not self.started:
            return set(self.seats)
        return {seat for seat in self.seats if self.here(seat)}

    @property
    def timed(self) -> bool:
        """Turns are timed: two or more people have taken seats."""
        return sum(state.taken for state in self.seats.values()) >= 2

    def turn_left(self) -> float | None:
        """Seconds left of the turn in play (``None``: turns are not timed)."""
        if not self.timed or not self.started:
            return None
        return round(max(0.0, self.turn_since + self.turn_seconds - now()), 1)

    def turn_began(self) -> None:
        """A new turn began (a step was taken, a hand dealt, the game started)."""
        self.turn_since = now()

    def version(self, seq: int, hands: int) -> str:
        """What the page compares to learn whether anything changed: the moves, the hands,
        the joins and the start, and who is here."""
        states = "".join(
            "o" if not s.taken else "h" if self.here(s.seat) else "a"
            for s in (self.seats[seat] for seat in self.people)
        )
        return f"{seq}.{hands}.{self.changes}.{int(self.started)}.{states}"
