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
from typing import Any

from uno_env.core import UnoState
from uno_env.rules import Rules
from unolab.web.game.live import StoredSeat, StoredTable
from unolab.web.guard import Conflict, Forbidden, Invalid

__all__ = [
    "AWAY_SECONDS",
    "HOST_SEAT",
    "SPECTATOR",
    "TURN_SECONDS",
    "SeatState",
    "SharedTable",
    "default_action",
    "hash_token",
    "new_token",
    "now",
]

HOST_SEAT = 0
"""The host's seat."""

SPECTATOR = -1
"""The listener of the spectators of a table for several people: nobody's cards are named."""

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


def default_action(rules: Rules, state: UnoState, seat: int) -> int:
    """The safe default move of ``seat``, whose turn ran out: ``draw`` when the rules allow
    it, else ``keep``, else the first legal move (the fallback move of a language model,
    :func:`uno_env.text.answers.fallback_action`)."""
    from uno_env.text.answers import fallback_action
    from uno_env.text.prompt import PromptOptions, decision_prompt
    from uno_env.text.view import seat_view

    return fallback_action(decision_prompt(seat_view(rules, state, seat), PromptOptions()))


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

    def player_name(self, name: str, seat: int) -> str:
        """The name a player gave for ``seat``, tidied (``player_<seat>`` for none).

        Raises:
            Invalid: for ``you`` or a name another player at the table has.
        """
        tidy = " ".join("".join(ch for ch in name if ch.isprintable()).split())
        if not tidy:
            return f"player_{seat}"
        if tidy.lower() == "you":
            raise Invalid("name: 'you' is how the table speaks to each player; choose another name")
        for other in self.seats.values():
            if other.seat != seat and other.name is not None and other.name.lower() == tidy.lower():
                raise Invalid(f"name: {tidy!r} sits at this table already; choose another name")
        return tidy

    def seat_for(self, token: str | None, required: bool) -> int:
        """The seat of ``token`` (its player is here now), or :data:`SPECTATOR` without
        one (where ``required`` is false).

        Raises:
            Forbidden: for a token of no seat of the table, or none where it is required.
        """
        if not token:
            if required:
                raise Forbidden(
                    "this needs your seat's token: take a seat with the table's link first"
                )
            return SPECTATOR
        seat = self.seat_of(token)
        if seat is None:
            raise Forbidden(
                "this seat token is not one of this table's: open the table's link again to "
                "watch or take a seat"
            )
        self.seen(seat)
        return seat

    def free_seat(self, wanted: int | None) -> int:
        """The seat a joining player gets: ``wanted``, or the first open one.

        Raises:
            Invalid: for a ``wanted`` seat that is not a seat for people.
            Conflict: for a ``wanted`` seat that is taken, or a full table.
        """
        if wanted is not None:
            if wanted not in self.seats:
                raise Invalid(
                    f"seat: seat {wanted} is not a seat for people at this table "
                    f"(those are {', '.join(map(str, self.people))})"
                )
            if self.seats[wanted].taken:
                raise Conflict(f"seat {wanted} is taken; choose another or watch")
            return wanted
        free = self.open_seats()
        if not free:
            raise Conflict("the table is full: every seat for people is taken; you can watch")
        return free[0]

    def start(self, seat: int) -> None:
        """The player in ``seat`` starts the game: the host, or anyone seated once the host
        is away.

        Raises:
            Forbidden: for another seat while the host is here.
            Conflict: for a game that has started already.
        """
        if seat != HOST_SEAT and self.here(HOST_SEAT):
            raise Forbidden(
                "only the host (seat 0) starts the game (anyone seated may once the host is away)"
            )
        if self.started:
            raise Conflict("the game has started already")
        self.started = True
        self.changes += 1
        self.turn_began()

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

    def time_out(self, seat: int, seq: int) -> bool:
        """Whether the turn of ``seat``, whose turn it is at move ``seq``, ran out: a seat
        whose player is here and took longer than ``turn_seconds`` (kept in ``ran_out``)."""
        left = self.turn_left()
        if left is None or left > 0 or seat not in self.controlled():
            return False
        self.ran_out[seat] = seq
        return True

    def turn_began(self) -> None:
        """A new turn began (a step was taken, a hand dealt, the game started)."""
        self.turn_since = now()

    def view(self, seat: int, current: int | None, stand_in: str) -> dict[str, Any]:
        """Who sits where and the turn timer, as ``seat`` sees them.

        Args:
            seat: A seat for people, or :data:`SPECTATOR`.
            current: The seat whose turn it is (``None``: the hand is over).
            stand_in: The label of the stand-in agent.
        """
        people = []
        for person in self.people:
            state = self.seats[person]
            here = self.here(person)
            people.append(
                {
                    "seat": person,
                    "name": state.name,
                    "state": "open" if not state.taken else "here" if here else "away",
                }
            )
        left = self.turn_left()
        return {
            "seat": None if seat == SPECTATOR else seat,
            "host": seat == HOST_SEAT,
            "started": self.started,
            "people": people,
            "stand_in": stand_in,
            "away_seconds": self.away_seconds,
            "turn_seconds": self.turn_seconds,
            "turn_left": None if left is None or current not in self.seats else left,
        }

    def version(self, seq: int, hands: int) -> str:
        """What the page compares to learn whether anything changed: the moves, the hands,
        the joins and the start, and who is here."""
        states = "".join(
            "o" if not s.taken else "h" if self.here(s.seat) else "a"
            for s in (self.seats[seat] for seat in self.people)
        )
        return f"{seq}.{hands}.{self.changes}.{int(self.started)}.{states}"
