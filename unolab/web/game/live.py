"""The live web games on disk: one SQLite file, ``live.sqlite3`` in the games folder
(:class:`LiveStore`).

A live game is kept as what makes it: its settings, its seats, the deal's seed and every
accepted action, in the notation of ``uno-lab play --record``. The engine is deterministic
in these, so a restarted server deals the same cards and replays the same actions to stand
exactly where the game stood (:meth:`unolab.web.game.table.WebGame.restore`).

Every request that changes a game commits its actions in one transaction before it is
answered. The file is in WAL mode with ``synchronous=FULL``: a commit is on the disk (the
WAL synced) when it returns, so a move that was answered survives a ``kill -9`` of the
server and a power cut too; the price is one sync per request that changes a game (well
under the time the engine and the agents take).

A table for several people (:mod:`unolab.web.game.seats`) keeps its host's settings in
``shared`` and each seat for people in ``seats``: the player's name and a hash of the seat's
secret token (never the token itself). Schema 1 (before tables for several people) is
brought to schema 2 when the server opens it: the two tables are added, nothing else
changes, so an older file's games play on.

A file that is no SQLite database, or a database of another program, or of a newer
schema, is refused when the server starts, in one line naming it; nothing in it is
changed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "APPLICATION_ID",
    "LIVE_FILE",
    "SCHEMA_VERSION",
    "TOMBSTONE_DAYS",
    "LiveStore",
    "StoredGame",
    "StoredSeat",
    "StoredTable",
]

LIVE_FILE = "live.sqlite3"
"""The name of the file of live games in the games folder."""

APPLICATION_ID = 0x554E4F4C
"""SQLite's ``application_id`` of the file (``UNOL``): a database of another program is
refused rather than written into."""

SCHEMA_VERSION = 2
"""The file's ``user_version``: the layout of its tables."""

TOMBSTONE_DAYS = 7
"""How long an expired or dropped game still answers 410 with why (then 404)."""

_SCHEMA = """
CREATE TABLE games (
    id TEXT PRIMARY KEY,
    client TEXT NOT NULL,
    rules TEXT NOT NULL,
    seed TEXT NOT NULL,
    agents TEXT NOT NULL,
    labels TEXT NOT NULL,
    setup TEXT NOT NULL,
    hands INTEGER NOT NULL DEFAULT 1,
    match_over INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    touched REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'live'
);
CREATE INDEX games_by_status ON games (status, client, touched);
CREATE TABLE moves (
    game TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (game, seq)
) WITHOUT ROWID;
"""

_SHARED_SCHEMA = """
CREATE TABLE shared (
    game TEXT PRIMARY KEY,
    stand_in TEXT NOT NULL,
    away_seconds INTEGER NOT NULL,
    turn_seconds INTEGER NOT NULL,
    started INTEGER NOT NULL DEFAULT 0,
    changes INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE seats (
    game TEXT NOT NULL,
    seat INTEGER NOT NULL,
    token_hash TEXT,
    name TEXT,
    PRIMARY KEY (game, seat)
) WITHOUT ROWID;
"""
"""Schema 2: tables for several people (added to a schema-1 file when it is opened)."""

LIVE, EXPIRED, DROPPED = "live", "expired", "dropped"


@dataclass(frozen=True)
class StoredSeat:
    """A seat for people at a table for several people.

    Attributes:
        seat: The seat.
        token_hash: The SHA-256 of the seat's secret token (hex), or ``None`` while the
            seat is open.
        name: The player's name, or ``None`` while the seat is open.
    """

    seat: int
    token_hash: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class StoredTable:
    """A table for several people: its host's settings and its seats for people.

    Attributes:
        stand_in: The agent id that plays the seat of a player who is away (or not yet
            there).
        away_seconds: A player with no request for this long counts as away.
        turn_seconds: How long a person's turn lasts when several people sit at the table.
        started: Whether the host started the game.
        changes: Joins and starts so far (a part of the table's version).
        seats: The seats for people.
    """

    stand_in: str
    away_seconds: int
    turn_seconds: int
    started: bool = False
    changes: int = 0
    seats: tuple[StoredSeat, ...] = ()


@dataclass(frozen=True)
class StoredGame:
    """A live game as the file holds it.

    Attributes:
        id: The game's id.
        client: The address of the client that started it.
        rules: The rules, as :meth:`uno_env.rules.Rules.to_dict` gives them.
        seed: The deal's seed.
        agents: Each seat's agent id (``None`` for the human's seat).
        labels: Each seat's agent label, as shown.
        setup: The settings the game was started with.
        hands: The actions of each hand dealt so far (the last one may be in play).
        touched: When a request last used it (seconds since the epoch).
        status: ``live``, ``expired`` (idle too long) or ``dropped`` (made room for a
            newer game of its client, or of the server).
        shared: The table's seats and settings, for a table for several people.
    """

    id: str
    client: str
    rules: dict[str, Any]
    seed: int
    agents: list[str | None]
    labels: list[str | None]
    setup: dict[str, Any]
    hands: list[list[str]]
    touched: float
    status: str
    shared: StoredTable | None = None


@dataclass(frozen=True)
class Held:
    """One live game's row, as the caps weigh it."""

    id: str
    client: str
    touched: float
    match_over: bool


class LiveStore:
    """The file of live games: one connection, used by one thread at a time (its lock).

    Args:
        path: The SQLite file (created, with its folder, if missing).

    Raises:
        ValueError: one line naming the file, for a file that is no SQLite database (or
            a damaged one), a database of another program or of a newer schema, or one
            that cannot be opened or created; the file is left as it was.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = _open(self.path)

    def close(self) -> None:
        """Close the connection (what was committed is on disk)."""
        with self._lock:
            self._db.close()

    def insert(self, game: StoredGame) -> None:
        """Add a new game (no moves yet), committed."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO games (id, client, rules, seed, agents, labels, setup, hands, "
                "created, touched) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    game.id,
                    game.client,
                    json.dumps(game.rules),
                    str(game.seed),
                    json.dumps(game.agents),
                    json.dumps(game.labels),
                    json.dumps(game.setup),
                    len(game.hands),
                    game.touched,
                    game.touched,
                ),
            )
            if game.shared is not None:
                shared = game.shared
                self._db.execute(
                    "INSERT INTO shared (game, stand_in, away_seconds, turn_seconds, started, "
                    "changes) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        game.id,
                        shared.stand_in,
                        shared.away_seconds,
                        shared.turn_seconds,
                        int(shared.started),
                        shared.changes,
                    ),
                )
                self._db.executemany(
                    "INSERT INTO seats (game, seat, token_hash, name) VALUES (?, ?, ?, ?)",
                    [(game.id, s.seat, s.token_hash, s.name) for s in shared.seats],
                )

    def seat(self, game_id: str, seat: StoredSeat, changes: int) -> bool:
        """Give a seat of a table for several people its player (or open it again), and
        note the table's count of changes, committed.

        Returns:
            Whether the table is still live in the file.
        """
        with self._lock, self._db:
            if not self._note_changes(game_id, changes, started=False):
                return False
            self._db.execute(
                "UPDATE seats SET token_hash = ?, name = ? WHERE game = ? AND seat = ?",
                (seat.token_hash, seat.name, game_id, seat.seat),
            )
        return True

    def start(self, game_id: str, changes: int) -> bool:
        """Note that the host started a table for several people, committed.

        Returns:
            Whether the table is still live in the file.
        """
        with self._lock, self._db:
            return self._note_changes(game_id, changes, started=True)

    def _note_changes(self, game_id: str, changes: int, *, started: bool) -> bool:
        """Set a live table's count of changes (and mark it started), in the caller's
        transaction; False when the game is no longer live in the file."""
        statement = (
            "UPDATE shared SET started = 1, changes = ? WHERE game = ? AND EXISTS "
            if started
            else "UPDATE shared SET changes = ? WHERE game = ? AND EXISTS "
        )
        live = "(SELECT 1 FROM games WHERE id = ? AND status = 'live')"
        return bool(self._db.execute(statement + live, (changes, game_id, game_id)).rowcount)

    def commit(
        self,
        game_id: str,
        moves: Sequence[tuple[int, int, str]],
        hands: int,
        match_over: bool,
        touched: float,
    ) -> bool:
        """Add a game's new actions and its hand count in one transaction, committed (and
        synced) when this returns.

        Args:
            game_id: The game.
            moves: ``(seq, hand, action)`` of each new action (``seq`` counts from 1 over
                the match, ``hand`` from 0).
            hands: Hands dealt so far.
            match_over: Whether the match is over.
            touched: When the request came (seconds since the epoch).

        Returns:
            Whether the game is still live in the file (an expired or dropped game takes
            nothing).

        Raises:
            sqlite3.Error: the file could not be written (a full disk); nothing of this
                commit is in it.
        """
        with self._lock, self._db:
            updated = self._db.execute(
                "UPDATE games SET hands = ?, match_over = ?, touched = ? "
                "WHERE id = ? AND status = 'live'",
                (hands, int(match_over), touched, game_id),
            ).rowcount
            if not updated:
                return False
            self._db.executemany(
                "INSERT INTO moves (game, seq, hand, action) VALUES (?, ?, ?, ?)",
                [(game_id, seq, hand, action) for seq, hand, action in moves],
            )
        return True

    def touch(self, game_id: str, touched: float) -> None:
        """Note that a request used the game (read only)."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE games SET touched = MAX(touched, ?) WHERE id = ? AND status = 'live'",
                (touched, game_id),
            )

    def load(self, game_id: str) -> StoredGame | None:
        """A game of the file with its actions (any status), or ``None``."""
        with self._lock:
            row = self._db.execute(
                "SELECT id, client, rules, seed, agents, labels, setup, hands, touched, status "
                "FROM games WHERE id = ?",
                (game_id,),
            ).fetchone()
            if row is None:
                return None
            moves = self._db.execute(
                "SELECT hand, action FROM moves WHERE game = ? ORDER BY seq", (game_id,)
            ).fetchall()
            table = self._db.execute(
                "SELECT stand_in, away_seconds, turn_seconds, started, changes FROM shared "
                "WHERE game = ?",
                (game_id,),
            ).fetchone()
            seats = self._db.execute(
                "SELECT seat, token_hash, name FROM seats WHERE game = ? ORDER BY seat",
                (game_id,),
            ).fetchall()
        shared = None
        if table is not None:
            shared = StoredTable(
                stand_in=str(table[0]),
                away_seconds=int(table[1]),
                turn_seconds=int(table[2]),
                started=bool(table[3]),
                changes=int(table[4]),
                seats=tuple(StoredSeat(int(s), h, n) for s, h, n in seats),
            )
        hands: list[list[str]] = [[] for _ in range(max(1, int(row[7])))]
        for hand, action in moves:
            hands[int(hand)].append(str(action))
        return StoredGame(
            id=row[0],
            client=row[1],
            rules=json.loads(row[2]),
            seed=int(row[3]),
            agents=json.loads(row[4]),
            labels=json.loads(row[5]),
            setup=json.loads(row[6]),
            hands=hands,
            touched=float(row[8]),
            status=str(row[9]),
            shared=shared,
        )

    def held(self, client: str | None = None) -> list[Held]:
        """The live games (of ``client``, if given), least recently used first."""
        query = "SELECT id, client, touched, match_over FROM games WHERE status = 'live'"
        args: tuple[str, ...] = ()
        if client is not None:
            query += " AND client = ?"
            args = (client,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY touched", args).fetchall()
        return [Held(r[0], r[1], float(r[2]), bool(r[3])) for r in rows]

    def end(self, game_ids: Iterable[str], status: str) -> None:
        """Take games out of play (``expired`` or ``dropped``): their actions are deleted,
        their row stays for :data:`TOMBSTONE_DAYS` so that their id answers why."""
        ids = [(g,) for g in game_ids]
        if not ids:
            return
        now = time.time()
        with self._lock, self._db:
            self._db.executemany("DELETE FROM moves WHERE game = ?", ids)
            # The seats' tokens go with the game: its id then only answers why it ended.
            self._db.executemany("DELETE FROM seats WHERE game = ?", ids)
            self._db.executemany("DELETE FROM shared WHERE game = ?", ids)
            self._db.executemany(
                "UPDATE games SET status = ?, touched = ? WHERE id = ? AND status = 'live'",
                [(status, now, g) for (g,) in ids],
            )
            self._db.execute(
                "DELETE FROM games WHERE status != 'live' AND touched < ?",
                (now - TOMBSTONE_DAYS * 86400,),
            )


def _open(path: Path) -> sqlite3.Connection:
    """Open (or create) the file and check it is ours, without writing into a foreign one."""
    fresh = not path.exists() and not path.is_symlink()
    if not fresh and not path.is_file():
        raise ValueError(
            f"{path}: not a regular file; move it away (the live games are kept there)"
        )
    if fresh:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"{path}: cannot be created ({_why(err)})") from None
    try:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except sqlite3.Error as err:
        raise ValueError(f"{path}: cannot be opened ({err})") from None
    try:
        # Read before anything is written: a foreign or damaged file is left as it was.
        application, version = _identity(db)
        empty = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        if application != APPLICATION_ID and not (empty and application == 0):
            raise ValueError(
                f"{path}: a database of another program, not uno-lab's live games; move it "
                "away or give another --games-dir"
            )
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"{path}: written by a newer uno-lab (schema {version}, this one reads "
                f"{SCHEMA_VERSION}); upgrade uno-lab or give another --games-dir"
            )
        if not empty:
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise ValueError(
                    f"{path}: the database is damaged ({problem}); move it away to start "
                    "with no live games (finished games are kept apart, as .json records)"
                )
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA busy_timeout = 10000")
        if empty:  # one transaction: a file is either whole or still empty
            db.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}{_SHARED_SCHEMA}"
                f"PRAGMA application_id = {APPLICATION_ID};"
                f"PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            )
        elif version < 2:  # schema 1: the tables of several people are added, in one go
            db.executescript(
                f"BEGIN IMMEDIATE;{_SHARED_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            )
        db.isolation_level = "DEFERRED"  # ``with db`` opens and commits one transaction
    except sqlite3.DatabaseError as err:
        db.close()
        raise ValueError(
            f"{path}: not a database of uno-lab's live games, or a damaged one ({err}); move "
            "it away to start with no live games (finished games are kept apart, as .json "
            "records)"
        ) from None
    except ValueError:
        db.close()
        raise
    return db


def _identity(db: sqlite3.Connection) -> tuple[int, int]:
    """The file's ``application_id`` and ``user_version``."""
    application = int(db.execute("PRAGMA application_id").fetchone()[0])
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    return application, version


def _why(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()
