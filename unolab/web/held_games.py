"""The games in play, held in memory by id, with the caps and the idle timeout
(:class:`Games`); finished hands are on disk (:mod:`unolab.web.store`).
"""

from __future__ import annotations

import threading
import time

from unolab.web.errors import Busy, NotFound
from unolab.web.settings import ServeConfig
from unolab.web.table import WebGame

__all__ = ["IDLE_BEFORE_EVICTION_S", "Games"]

IDLE_BEFORE_EVICTION_S = 300
"""A client at its cap gives up its least recently used game for a new one only if that
game has been untouched this long (a game being played is never taken away)."""


class Games:
    """The games held in memory, by id, with the caps and the idle timeout.

    Two caps bound memory: ``max_games`` in all and ``max_games_per_client`` per client
    address, so that one client cannot fill the server with games it abandons.
    """

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def add(self, game: WebGame) -> None:
        """Hold a new game (its ``client`` set).

        Games idle past ``idle_minutes`` are dropped first. A client at its cap gives up
        its oldest finished game, else its least recently used one if that has been idle
        for :data:`IDLE_BEFORE_EVICTION_S`. At the server's cap, finished games go first
        (they are on disk).

        Raises:
            Busy: when a cap is still reached.
        """
        config = self.config
        with self._lock:
            now = time.monotonic()
            idle = now - 60 * config.idle_minutes
            for old in [k for k, g in self._games.items() if g.touched < idle]:
                del self._games[old]
            mine = sorted(
                (g for g in self._games.values() if g.client == game.client),
                key=lambda g: (not self._finished(g), g.touched),
            )
            if len(mine) >= config.max_games_per_client:
                oldest = mine[0]
                if not self._finished(oldest) and oldest.touched > now - IDLE_BEFORE_EVICTION_S:
                    raise Busy(
                        f"this client holds {len(mine)} games in play (the server's "
                        f"--max-games-per-client is {config.max_games_per_client}); finish "
                        f"one, or wait {IDLE_BEFORE_EVICTION_S // 60} minutes for the oldest "
                        "to count as abandoned"
                    )
                del self._games[oldest.id]
            if len(self._games) >= config.max_games:
                for old in [k for k, g in self._games.items() if self._finished(g)]:
                    del self._games[old]
            if len(self._games) >= config.max_games:
                raise Busy(
                    f"the server holds {config.max_games} games (its --max-games); "
                    "finish one or try again later"
                )
            self._games[game.id] = game

    @staticmethod
    def _finished(game: WebGame) -> bool:
        """A match that is over and on disk: dropping it loses nothing."""
        return game.match_over and not game.unsaved

    def get(self, game_id: str) -> WebGame:
        """A held game.

        Raises:
            NotFound: for an unknown (or dropped) id.
        """
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise NotFound(f"no game {game_id!r} on this server (finished games are under Replay)")
        game.touched = time.monotonic()
        return game

    def __len__(self) -> int:
        return len(self._games)
