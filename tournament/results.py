"""Game records and the crash-safe ``games.jsonl`` store.

One JSON object per line, one line per game. Lines are appended a chunk at a time with a
single ``write``, then ``flush`` and ``os.fsync``, so a killed run (even ``kill -9``) leaves
every chunk it reported complete on disk. At worst the last line is torn (a crash of the
machine in the middle of a write): :meth:`ResultStore.load` drops that partial line, truncates
the file back to its last complete line and reports the games that are there. A resumed run
then plays only the units that are missing, so no finished game is lost or duplicated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["END_KINDS", "GameRecord", "ResultStore", "Unit"]

Unit = tuple[int, int, int]
"""``(deal, seating, variant)``: the identity of a game."""

END_KINDS = ("won", "truncated", "forfeit")
"""How a game ended: a seat went out, ``max_turns`` was hit, or an agent forfeited."""


@dataclass(frozen=True)
class GameRecord:
    """One finished game.

    Attributes:
        deal: Deal set index.
        seating: Row of the seating design.
        variant: 0, or in the ``ab`` format 0 (incumbent) / 1 (candidate).
        key: The game key (the deal seed: deck order and per-seat draw streams).
        seats: Participant name in each seat (seat 0 plays first; seat k-1 deals).
        ranks: Finishing position of each seat, 0 first; tied seats share the best position
            of their group (the losers of a won hand all get 1).
        points: Points each seat scored in the hand (the engine's ``hand_points``).
        cards_left: Cards in each hand at the end.
        turns: Decisions taken.
        end: ``won``, ``truncated`` or ``forfeit``.
        forfeit_seat: The seat that forfeited, else ``None``.
        reason: Why it forfeited (the exception or the illegal action), else ``""``.
    """

    deal: int
    seating: int
    variant: int
    key: int
    seats: tuple[str, ...]
    ranks: tuple[int, ...]
    points: tuple[int, ...]
    cards_left: tuple[int, ...]
    turns: int
    end: str
    forfeit_seat: int | None = None
    reason: str = ""

    @property
    def unit(self) -> Unit:
        """``(deal, seating, variant)``."""
        return (self.deal, self.seating, self.variant)

    def to_json(self) -> str:
        """One line of JSON (no newline)."""
        data: dict[str, Any] = {
            "deal": self.deal,
            "seating": self.seating,
            "variant": self.variant,
            "key": self.key,
            "seats": list(self.seats),
            "ranks": list(self.ranks),
            "points": list(self.points),
            "cards_left": list(self.cards_left),
            "turns": self.turns,
            "end": self.end,
            "forfeit_seat": self.forfeit_seat,
            "reason": self.reason,
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> GameRecord:
        """Parse one line.

        Raises:
            ValueError: for malformed JSON or missing fields.
        """
        data = json.loads(line)
        try:
            return cls(
                deal=int(data["deal"]),
                seating=int(data["seating"]),
                variant=int(data["variant"]),
                key=int(data["key"]),
                seats=tuple(data["seats"]),
                ranks=tuple(int(r) for r in data["ranks"]),
                points=tuple(int(p) for p in data["points"]),
                cards_left=tuple(int(c) for c in data["cards_left"]),
                turns=int(data["turns"]),
                end=str(data["end"]),
                forfeit_seat=None if data["forfeit_seat"] is None else int(data["forfeit_seat"]),
                reason=str(data["reason"]),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"game record lacks a field or has a bad one: {err}") from err


class ResultStore:
    """The append-only, crash-safe game log of a run.

    Args:
        path: The ``games.jsonl`` file (created on the first append).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.dropped_tail = 0
        """Bytes of a torn last line dropped by the last :meth:`load`."""
        self.duplicates = 0
        """Lines repeating a unit already read (kept: the first) in the last :meth:`load`."""

    def load(self) -> dict[Unit, GameRecord]:
        """Read every complete game, repairing a torn last line.

        A last line without its newline, or that does not parse, is a write cut short by a
        crash: the file is truncated to the end of the previous line. A bad line anywhere
        else is corruption and raises.

        Returns:
            The games by unit, in file order.

        Raises:
            ValueError: naming the first corrupt line that is not the last one.
        """
        self.dropped_tail = 0
        self.duplicates = 0
        if not self.path.is_file():
            return {}
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        tail = lines.pop()  # the bytes after the last newline: empty unless torn
        records: dict[Unit, GameRecord] = {}
        good_bytes = 0
        for number, line in enumerate(lines, start=1):
            try:
                record = GameRecord.from_json(line.decode())
            except (ValueError, UnicodeDecodeError) as err:
                if number == len(lines) and not tail:
                    tail = line  # a torn last line that happens to end at a newline
                    break
                raise ValueError(f"{self.path}: line {number} is corrupt: {err}") from err
            good_bytes += len(line) + 1
            if record.unit in records:
                self.duplicates += 1
                continue
            records[record.unit] = record
        if good_bytes < len(raw):
            self.dropped_tail = len(raw) - good_bytes
            with self.path.open("r+b") as f:
                f.truncate(good_bytes)
                f.flush()
                os.fsync(f.fileno())
        return records

    def append(self, records: Iterable[GameRecord]) -> int:
        """Append games durably: a single ``write`` of all their lines, then ``fsync``.

        Returns:
            The number of games written.
        """
        lines = [r.to_json() + "\n" for r in records]
        self.append_text("".join(lines))
        return len(lines)

    def append_text(self, text: str) -> None:
        """Append ready-made lines (each ending in a newline) durably: one ``write``, ``fsync``."""
        if not text:
            return
        data = text.encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab", buffering=0) as f:  # unbuffered: one write() call
            written = 0
            while written < len(data):
                written += f.write(data[written:]) or 0
            os.fsync(f.fileno())

    def clear(self) -> None:
        """Delete the log (a fresh start)."""
        self.path.unlink(missing_ok=True)
