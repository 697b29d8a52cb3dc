"""The live web games, by id (:class:`Games`): the caps, the idle timeout, and the file of
live games behind them (:mod:`unolab.web.game.live`): a game not in memory (after a
restart) is rebuilt from it, and every accepted action is committed to it before the
request that made it is answered. Finished hands are saved as records
(:mod:`unolab.web.store`).
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from unolab.web.game.live import DROPPED, EXPIRED, LIVE, LiveStore, StoredGame
from unolab.web.game.seats import SharedTable
from unolab.web.game.table import WebGame
from unolab.web.guard import Busy, Conflict, Forbidden, Gone, NotFound, NotStored
from unolab.web.settings import ServeConfig
from unolab.web.store import GameStore

Answer = TypeVar("Answer")

LOG = logging.getLogger(__name__)

__all__ = ["IDLE_BEFORE_EVICTION_S", "Games", "Restorer", "run_locked"]

IDLE_BEFORE_EVICTION_S = 300
"""A game untouched this long counts as abandoned: a client at its cap, or anyone when the
server is at its cap, may have it closed to start a new one (a game being played is never
taken away)."""

Restorer = Callable[[StoredGame], WebGame]
"""Rebuilds a game of the file of live games (:meth:`WebGame.restore` with the server's
agents)."""


async def run_locked(game: WebGame, work: Callable[[], Answer], at_once: bool) -> Answer:
    """``work()``, a request's use of ``game`` (its answer included), holding the
    game's lock.

    When ``at_once`` (every agent of the game answers at once: bots and networks) and
    no other request holds the lock, it runs in the event loop: a move costs about a
    millisecond of Python and one commit, less than handing it to a worker thread and
    back, so the server answers more moves a second. Otherwise (a search or a language
    model in the game, or its lock taken) it runs in a worker thread, and the loop
    serves the other games meanwhile.
    """
    if at_once and game.lock.acquire(blocking=False):
        try:
            return work()
        finally:
            game.lock.release()

    def locked() -> Answer:
        with game.lock:
            return work()

    return await run_in_threadpool(locked)


class Games:
    """The live games, by id: in the file of live games, and in memory once used.

    Two caps bound them: ``max_games`` in all and ``max_games_per_client`` per client
    address, so that one client cannot fill the server with games it abandons. A game idle
    past ``idle_minutes`` expires (:meth:`expire`, run on the server's schedule); one idle
    for :data:`IDLE_BEFORE_EVICTION_S` makes room for a new game at a cap. The id of a game
    taken out of play answers 410 with why (for :data:`unolab.web.game.live.TOMBSTONE_DAYS`).

    Args:
        config: The server's options (the caps, ``idle_minutes``).
        live: The file of live games.
        restore: Rebuilds a game of the file that is not in memory.
        store: Where finished hands are saved.
    """

    def __init__(
        self, config: ServeConfig, live: LiveStore, restore: Restorer, store: GameStore
    ) -> None:
        self.config = config
        self.live = live
        self.store = store
        self._restore = restore
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def add(self, game: WebGame) -> None:
        """Hold a new game (its ``client`` set), committed to the file.

        A client at its cap gives up its oldest finished game, else its least recently
        used one if that has been idle for :data:`IDLE_BEFORE_EVICTION_S`. At the server's
        cap, finished games go first, then the longest idle one if it is abandoned.

        Raises:
            Busy: when a cap is still reached.
        """
        dropped: list[WebGame] = []
        try:
            self._add(game, dropped)
        finally:
            for old in dropped:  # outside the lock: closing may wait for a connection
                old.close()

    def _add(self, game: WebGame, dropped: list[WebGame]) -> None:
        config = self.config
        with self._lock:
            now = time.time()
            abandoned = now - IDLE_BEFORE_EVICTION_S
            mine = sorted(
                self._weighed(self.live.held(game.client)),
                key=lambda held: (not held[1], held[2]),
            )
            if len(mine) >= config.max_games_per_client:
                oldest, finished, touched = mine[0]
                if not finished and touched > abandoned:
                    raise Busy(
                        f"this client holds {len(mine)} games in play (the server's "
                        f"--max-games-per-client is {config.max_games_per_client}); finish "
                        f"one, or wait {IDLE_BEFORE_EVICTION_S // 60} minutes for the oldest "
                        "to count as abandoned"
                    )
                self._end([oldest], DROPPED, dropped)
            every = self._weighed(self.live.held())
            if len(every) >= config.max_games:
                gone = [g for g, finished, _ in every if finished]
                if not gone:
                    idle = sorted((t, g) for g, _, t in every if t < abandoned)
                    gone = [g for _, g in idle[: len(every) - config.max_games + 1]]
                self._end(gone, DROPPED, dropped)
                if len(every) - len(gone) >= config.max_games:
                    raise Busy(
                        f"the server holds {config.max_games} games (its --max-games); "
                        "finish one or try again later"
                    )
            self.live.insert(game.stored())
            self._games[game.id] = game

    def _weighed(self, held: Sequence[Any]) -> list[tuple[str, bool, float]]:
        """``(id, finished, touched)`` of live games, as memory knows them best (the file
        learns that a game was read within a minute; a game in memory may hold an unsaved
        hand)."""
        out = []
        for row in held:
            game = self._games.get(row.id)
            if game is None:
                out.append((row.id, row.match_over, row.touched))
            else:
                out.append((row.id, self._finished(game), game.touched))
        return out

    def _end(self, game_ids: Sequence[str], status: str, dropped: list[WebGame]) -> None:
        """Take games out of play (the lock held)."""
        self.live.end(game_ids, status)
        for game_id in game_ids:
            game = self._games.pop(game_id, None)
            if game is not None:
                dropped.append(game)

    @staticmethod
    def _finished(game: WebGame) -> bool:
        """A match that is over and on disk: dropping it loses nothing."""
        return game.match_over and not game.unsaved

    def expire(self) -> int:
        """Take the games idle past ``idle_minutes`` out of play (what the server runs on
        its schedule); returns how many."""
        dropped: list[WebGame] = []
        cutoff = time.time() - 60 * self.config.idle_minutes
        with self._lock:
            idle = [g for g, _, touched in self._weighed(self.live.held()) if touched < cutoff]
            self._end(idle, EXPIRED, dropped)
        for old in dropped:
            old.close()
        return len(idle)

    def get(self, game_id: str) -> WebGame:
        """A live game, from memory or rebuilt from the file.

        Raises:
            NotFound: for an unknown id.
            Gone: for a game that expired or was closed to make room.
            Conflict: for a game this server cannot rebuild (its agents are not offered).
        """
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            game = self._load(game_id)
        now = time.time()
        if now - game.touched > 60:  # the file knows within a minute when it was last used
            self.live.touch(game.id, now)
        game.touched = now
        return game

    def solo(self, game_id: str) -> WebGame:
        """A live game for one person (:meth:`get`).

        Raises:
            Forbidden: for a table for several people: it is only seen through its seats'
                tokens (``/api/tables``).
        """
        game = self.get(game_id)
        if game.shared is not None:
            raise Forbidden(
                f"game {game_id} is a table for several people: open it with its link "
                f"(/#table={game_id})"
            )
        return game

    def table(self, game_id: str) -> tuple[WebGame, SharedTable]:
        """A live table for several people (:meth:`get`): the game and its seats (the
        game's ``shared``).

        Raises:
            NotFound: for a game for one person.
        """
        game = self.get(game_id)
        if game.shared is None:
            raise NotFound(
                f"no table for several people {game_id!r} on this server (a game for one "
                f"person opens as /#game={game_id})"
            )
        return game, game.shared

    def _load(self, game_id: str) -> WebGame:
        """Rebuild a game of the file (outside the lock: replaying takes a while)."""
        stored = self.live.load(game_id)
        if stored is None:
            raise NotFound(f"no game {game_id!r} on this server (finished games are under Replay)")
        if stored.status == EXPIRED:
            raise Gone(
                f"game {game_id} expired: nobody played it for {self.config.idle_minutes} "
                "minutes (the server's --idle-minutes); its finished hands are under Replay"
            )
        if stored.status != LIVE:
            raise Gone(
                f"game {game_id} was closed to make room for a newer game (the server's "
                "--max-games-per-client or --max-games); its finished hands are under Replay"
            )
        try:
            game = self._restore(stored)
        except ValueError as err:  # a file edited by hand
            raise Conflict(f"game {game_id} cannot be rebuilt: {err}") from None
        with self._lock:
            held = self._games.setdefault(game_id, game)
        if held is not game:  # another request rebuilt it first
            game.close()
        return held

    def commit(self, game: WebGame) -> None:
        """Commit the actions a request took (the game's lock held), before it is answered,
        and :meth:`save` a hand it finished.

        Raises:
            NotStored: the file could not be written; the game is dropped from memory and
                stands, at the next request, where the file has it (before this request).
            Gone: the game was taken out of play while the request ran.
        """
        moves, game.pending = game.pending, []
        self._committed(
            game,
            lambda: self.live.commit(
                game.id, moves, len(game.hands), game.match_over, game.touched
            ),
            ("moves", "move"),
            "the game stands where it stood before it: reload the game and try again",
        )
        self.save(game)

    def save(self, game: WebGame) -> None:
        """Write the game's record if a finished hand is not on disk yet (the game's lock
        held). A failed write changes no game: the hand stays in memory, the view carries
        ``save_error``, and the next request about the game tries again. A finished match
        closes its models' agents (their connections and record files)."""
        if game.match_over:
            game.close_models()
        if not game.unsaved:
            return
        try:
            self.store.save(game.id, game.record())
        except OSError as err:
            game.save_error = (
                f"the finished hand could not be saved to the games folder ({_reason(err)}); "
                "it is kept in memory and saved with your next request: free some space or "
                "check the folder"
            )
            return
        game.unsaved, game.save_error = False, None

    def commit_seats(self, game: WebGame, seat: int | None = None) -> None:
        """Commit a change of a table for several people (the game's lock held): ``seat``
        taken, or the start (``None``), before the request is answered.

        Raises:
            NotStored: the file could not be written; the table is dropped from memory and
                stands, at the next request, as the file has it.
            Gone: the table was taken out of play while the request ran.
        """
        shared = game.shared
        assert shared is not None
        self._committed(
            game,
            lambda: (
                self.live.start(game.id, shared.changes)
                if seat is None
                else self.live.seat(game.id, shared.stored_seat(seat), shared.changes)
            ),
            ("seats", "table"),
            "reload the table and try again",
        )

    def _committed(
        self, game: WebGame, write: Callable[[], bool], what: tuple[str, str], advice: str
    ) -> None:
        """Run ``write``, a commit of ``game`` to the live file (``what``: what it holds and
        what the player did, for the messages); a failed or lost commit drops the game from
        memory and raises ``NotStored`` or ``Gone``."""
        try:
            kept = write()
        except sqlite3.Error as err:
            LOG.error("game %s: its %s could not be committed: %s", game.id, what[0], err)
            self._forget(game)
            raise NotStored(
                f"the {what[1]} could not be stored (the server's games folder cannot be "
                f"written: {err}); {advice}"
            ) from None
        if not kept:
            self._forget(game)
            raise Gone(f"game {game.id} was taken out of play while this request ran")

    def _forget(self, game: WebGame) -> None:
        with self._lock:
            if self._games.get(game.id) is game:
                del self._games[game.id]
        game.close_models()

    def __len__(self) -> int:
        return len(self.live.held())


def _reason(err: OSError) -> str:
    """Why a write failed, in words and without the path."""
    if err.errno == errno.ENOSPC:
        return "the disk is full"
    return (err.strerror or type(err).__name__).lower()
