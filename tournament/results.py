"""Game records and the crash-safe ``games.jsonl`` store.

One JSON object per line, one line per game. Lines are appended a chunk at a time with a
single ``write``, then ``flush`` and ``os.fsync``, so a killed run (even ``kill -9``) leaves
every chunk it reported complete on disk. A write that fails (a full disk, an I/O error)
truncates the file back to its length before the chunk and raises one line naming the file,
so a chunk lands whole or not at all. Only a crash in the middle of the write (of the
machine, or a ``kill -9`` that lands inside the write call) can leave part of a chunk: :meth:`ResultStore.load` drops a torn last line, and the runner
drops a chunk found only in part (:meth:`ResultStore.repair` removes its lines) and plays it
again whole. A resumed run then plays only the units that are missing, in the batches of an
uninterrupted run, so no finished game is lost, duplicated or played differently.

A log is refused (one line naming the file and the line) when a line is corrupt or when two
lines give one game different results (two runs wrote into it); a line repeated exactly is
counted and ignored.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import json
import os
import stat
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.cards import DECK_SIZE
from uno_env.config_values import ConfigError
from uno_env.console import one_line
from uno_env.files import UnreadableFileError, read_regular_file, shown
from uno_env.outcomes import TableResults
from uno_env.rules import MAX_TURNS_LIMIT
from unolab.tournament.run_folder import MAX_LOG_BYTES, write_error, write_file

__all__ = [
    "END_KINDS",
    "MAX_INDEX",
    "MAX_POINTS",
    "GameRecord",
    "ResultStore",
    "Unit",
    "encode_lines",
]

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
        """One line of JSON (no newline): ``json.dumps(record, separators=(",", ":"))``."""
        return _line(
            self.deal,
            self.seating,
            self.variant,
            self.key,
            [json.dumps(s) for s in self.seats],
            list(self.ranks),
            list(self.points),
            list(self.cards_left),
            self.turns,
            json.dumps(self.end),
            self.forfeit_seat,
            json.dumps(self.reason),
        )

    @classmethod
    def from_json(cls, line: str) -> GameRecord:
        """Parse one line, checking every field's type (a hand-edited line is caught here).

        Raises:
            ValueError: for malformed JSON, a missing field or a field of the wrong type,
                naming the field and the value.
        """
        try:
            data = json.loads(line)
        except RecursionError:
            raise ValueError("the JSON is nested too deeply; a game is one flat object") from None
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        missing = [name for name in _FIELDS if name not in data]
        if missing:
            raise ValueError(f"missing field(s) {missing}")
        seats = data["seats"]
        if (
            not isinstance(seats, list)
            or not seats
            or not all(isinstance(n, str) and n for n in seats)
        ):
            raise ValueError(f"'seats' must be a list of participant names, got {shown(seats)}")
        k = len(seats)
        end = data["end"]
        if end not in END_KINDS:
            raise ValueError(f"'end' must be one of {list(END_KINDS)}, got {shown(end)}")
        forfeit_seat = data["forfeit_seat"]
        if forfeit_seat is not None:
            forfeit_seat = _int(data, "forfeit_seat", upper=k)
        if (end == "forfeit") != (forfeit_seat is not None):
            raise ValueError(f"'end' is {end!r} but 'forfeit_seat' is {shown(forfeit_seat)}")
        reason = data["reason"]
        if not isinstance(reason, str):
            raise ValueError(f"'reason' must be a string, got {shown(reason)}")
        return cls(
            deal=_int(data, "deal", upper=MAX_INDEX, what="64-bit game indices"),
            seating=_int(data, "seating", upper=MAX_INDEX, what="64-bit game indices"),
            variant=_int(data, "variant", upper=MAX_INDEX, what="64-bit game indices"),
            key=_int(data, "key", upper=2**64, what="64-bit game keys"),
            seats=tuple(seats),
            ranks=_ints(data, "ranks", k, upper=k),
            points=_ints(data, "points", k, upper=MAX_POINTS, what="32-bit hand points"),
            cards_left=_ints(data, "cards_left", k, upper=DECK_SIZE + 1, what="the deck"),
            turns=_int(data, "turns", upper=MAX_TURNS_LIMIT, what="the rules' max_turns"),
            end=end,
            forfeit_seat=forfeit_seat,
            reason=reason,
        )


_FIELDS = tuple(f.name for f in dataclasses.fields(GameRecord))


MAX_INDEX = 2**63
"""Deal, seating and variant indices are 64-bit: a larger one is no game of any run."""
MAX_POINTS = 2**31
"""A hand's points are 32-bit (the engine's ``hand_points``)."""


def _int(data: dict[str, Any], key: str, upper: int | None = None, what: str = "the seats") -> int:
    """A non-negative JSON integer (below ``upper`` when given); booleans are refused."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key!r} must be a non-negative integer, got {shown(value)}")
    if upper is not None and value >= upper:
        raise ValueError(f"{key!r} must be below {upper} ({what}), got {shown(value)}")
    return value


def _ints(
    data: dict[str, Any],
    key: str,
    size: int,
    upper: int | None = None,
    what: str = "the seats",
) -> tuple[int, ...]:
    """A list of ``size`` integers, one per seat."""
    values = data[key]
    if not isinstance(values, list) or len(values) != size:
        raise ValueError(
            f"{key!r} must be a list of {size} integers (one per seat), got {shown(values)}"
        )
    return tuple(_int({key: v}, key, upper, what) for v in values)


class ResultStore:
    """The append-only, crash-safe game log of a run.

    Args:
        path: The ``games.jsonl`` file (created on the first append).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.dropped_tail = 0
        """Bytes of a torn last line found by the last :meth:`load`."""
        self.duplicates = 0
        """Lines repeating a game already read, exactly (kept: the first) in the last
        :meth:`load`."""
        self.line_of: dict[Unit, int] = {}
        """The line number (from 1) of each game read by the last :meth:`load`."""
        self._good_bytes = 0
        self._line_units: list[Unit] = []
        self._line_ends = array.array("q")

    def load(self, repair: bool = True) -> dict[Unit, GameRecord]:
        """Read every complete game, repairing a torn last line.

        A last line without its newline, or that is not complete JSON, is a write cut short
        by a crash: it is dropped, and (with ``repair``) the file is truncated to the end of
        the previous line. A bad line anywhere else, a last line that is complete JSON but
        not a valid game, or a line that gives a game already read another result is
        corruption and raises; the file is left as it is.

        Args:
            repair: Truncate a torn last line now; with ``False`` the file is left untouched
                until :meth:`repair` (so a caller can check the games first).

        Returns:
            The games by unit, in file order.

        Raises:
            ConfigError: (a ValueError) naming the file and the first corrupt line, or the
                file when it cannot be read (a folder, a FIFO, a device, larger than
                :data:`~unolab.tournament.run_folder.MAX_LOG_BYTES`), and what to do.
        """
        self.dropped_tail = 0
        self.duplicates = 0
        self.line_of = {}
        self._good_bytes = 0
        self._line_units = []
        self._line_ends = array.array("q")
        if not self.path.exists() and not self.path.is_symlink():
            return {}
        try:
            raw = read_regular_file(self.path, MAX_LOG_BYTES, "game log")
        except UnreadableFileError as err:
            raise ConfigError(f"{err}; move it away, or rerun with --fresh to start over") from None
        lines = raw.split(b"\n")
        tail = lines.pop()  # the bytes after the last newline: empty unless torn
        records: dict[Unit, GameRecord] = {}
        good_bytes = 0
        for number, line in enumerate(lines, start=1):
            try:
                record = GameRecord.from_json(line.decode())
            except (ValueError, UnicodeDecodeError) as err:
                if number == len(lines) and not tail and _incomplete_json(line):
                    tail = line  # a torn last line that happens to end at a newline
                    break
                raise ConfigError(
                    f"{self.path}: line {number} is corrupt ({one_line(err)}); fix or delete "
                    "that line, or rerun with --fresh to discard every game"
                ) from err
            good_bytes += len(line) + 1
            unit = record.unit
            self._line_units.append(unit)
            self._line_ends.append(good_bytes)
            first = records.get(unit)
            if first is not None:
                if first != record:
                    raise ConfigError(
                        f"{self.path}: line {number} gives game {unit} another result than "
                        f"line {self.line_of[unit]} (two runs wrote into this log): restore "
                        "the log from a copy, or rerun with --fresh to discard every game"
                    )
                self.duplicates += 1
                continue
            records[unit] = record
            self.line_of[unit] = number
        self._good_bytes = good_bytes
        self.dropped_tail = len(raw) - good_bytes
        if repair:
            self.repair()
        return records

    def repair(self, drop: Set[Unit] = frozenset()) -> int:
        """Truncate the torn last line found by :meth:`load`, and remove the lines of ``drop``.

        Lines to drop at the end of the file (where a torn chunk is) are cut off by
        truncating it; lines elsewhere are removed by rewriting the log atomically.

        Args:
            drop: Games whose lines go (the games of chunks found only in part).

        Returns:
            The number of lines removed (besides a torn last line).

        Raises:
            OSError: one line naming the log, when it cannot be truncated or rewritten.
        """
        gone = [i for i, unit in enumerate(self._line_units) if unit in drop] if drop else []
        keep_bytes = self._good_bytes
        if gone and len(gone) == len(self._line_units) - gone[0]:
            keep_bytes = self._line_ends[gone[0] - 1] if gone[0] else 0
            gone = []  # every line from the first dropped one on: a truncation removes them
        if gone:
            self._rewrite_without(set(gone))
        elif keep_bytes < self._good_bytes or self.dropped_tail:
            self._truncate(keep_bytes)
        removed = sum(1 for unit in self._line_units if unit in drop) if drop else 0
        # What load() found is used up: a second repair needs a second load.
        self._line_units = []
        self._line_ends = array.array("q")
        self._good_bytes = self.path.stat().st_size if self.path.exists() else 0
        return removed

    def _truncate(self, size: int) -> None:
        try:
            with self.path.open("r+b") as f:
                f.truncate(size)
                f.flush()
                os.fsync(f.fileno())
        except OSError as err:
            raise write_error(err, self.path, "cannot repair the game log") from None

    def _rewrite_without(self, lines: set[int]) -> None:
        """Rewrite the log without the given lines (indices from 0) and without a torn tail."""
        try:
            raw = read_regular_file(self.path, MAX_LOG_BYTES, "game log")
        except UnreadableFileError as err:
            raise ConfigError(f"{err}; move it away, or rerun with --fresh") from None
        kept = []
        start = 0
        for i, end in enumerate(self._line_ends):
            if i not in lines:
                kept.append(raw[start:end])
            start = end
        write_file(self.path, b"".join(kept))

    def append(self, records: Iterable[GameRecord]) -> int:
        """Append games durably: a single ``write`` of all their lines, then ``fsync``.

        Returns:
            The number of games written.
        """
        lines = [r.to_json() + "\n" for r in records]
        self.append_text("".join(lines))
        return len(lines)

    def append_text(self, text: str) -> None:
        """Append ready-made lines (each ending in a newline) durably: one ``write``, ``fsync``.

        The chunk lands whole or not at all: if the write or the ``fsync`` fails (a full
        disk), the file is truncated back to its length before it.

        Raises:
            OSError: one line naming the log and how to resume.
        """
        if not text:
            return
        data = text.encode()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as err:
            raise write_error(err, self.path, "cannot open the game log") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ConfigError(
                    f"{self.path} is not a regular file; move it away and rerun the same "
                    "command to resume"
                )
            before = info.st_size  # the lock makes this run the only writer
            whole = False
            try:
                _write_all(fd, data)
                whole = True
                os.fsync(fd)
            except OSError as err:
                # Take the chunk back (a full disk wrote part of it; a failed fsync may lose
                # any of it): a resume must find it whole or absent.
                _truncate_to(fd, before)
                raise write_error(err, self.path, "cannot append games to") from None
            except BaseException:
                if not whole:  # Ctrl-C between two writes of one chunk
                    _truncate_to(fd, before)
                raise  # the chunk is all written: it stays, as after a kill -9
        finally:
            os.close(fd)

    def clear(self) -> None:
        """Delete the log (a fresh start)."""
        self.path.unlink(missing_ok=True)


def _truncate_to(fd: int, size: int) -> None:
    """Cut the file back to ``size`` bytes (shrinking a file needs no free space)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)
        os.fsync(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (one ``write`` call unless the kernel takes less)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _incomplete_json(line: bytes) -> bool:
    """Whether a line is a prefix of JSON cut short (a torn write), not a complete value."""
    try:
        json.loads(line.decode())
    except (ValueError, UnicodeDecodeError):
        return True
    except RecursionError:  # nested past any game: damage, never dropped as a torn write
        return False
    return False


def _line(
    deal: int,
    seating: int,
    variant: int,
    key: int,
    seats: list[str],
    ranks: list[int],
    points: list[int],
    cards_left: list[int],
    turns: int,
    end: str,
    forfeit_seat: int | None,
    reason: str,
) -> str:
    """The one encoder of a log line, from its fields (the strings already JSON-quoted).

    Written by hand rather than by ``json.dumps`` of a dict (a third of a chunk's time in
    the workers): the line is exactly ``json.dumps(record, separators=(",", ":"))``.
    """

    def ints(values: list[int]) -> str:
        return "[" + ",".join(map(str, values)) + "]"

    forfeit = "null" if forfeit_seat is None or forfeit_seat < 0 else str(forfeit_seat)
    return (
        f'{{"deal":{deal},"seating":{seating},"variant":{variant},"key":{key},'
        f'"seats":[{",".join(seats)}],"ranks":{ints(ranks)},"points":{ints(points)},'
        f'"cards_left":{ints(cards_left)},"turns":{turns},"end":{end},'
        f'"forfeit_seat":{forfeit},"reason":{reason}}}'
    )


def encode_lines(
    units: Sequence[Unit], keys: list[int], seats: list[list[str]], res: TableResults
) -> str:
    """The log lines of a chunk's games, one :class:`GameRecord` each (built in the worker,
    so the main process only writes them); each string is JSON-quoted once."""
    ranks, points = res.ranks.tolist(), res.points.tolist()
    cards, turns = res.cards_left.tolist(), res.turns.tolist()
    ends, forfeits = res.end.tolist(), res.forfeit_seat.tolist()
    quoted: dict[str, str] = {}

    def text(value: str) -> str:
        out = quoted.get(value)
        if out is None:
            out = quoted[value] = json.dumps(value)
        return out

    lines = [
        _line(
            deal,
            seating,
            variant,
            keys[i],
            [text(name) for name in seats[i]],
            ranks[i],
            points[i],
            cards[i],
            turns[i],
            text(END_KINDS[ends[i]]),
            forfeits[i],
            text(res.reasons.get(i, "")),
        )
        for i, (deal, seating, variant) in enumerate(units)
    ]
    return "\n".join(lines) + "\n"
