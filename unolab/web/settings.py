"""The options of ``uno-lab serve``: a frozen, bounds-checked config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from uno_env.configuration import check_int

__all__ = ["ServeConfig"]

MAX_GAMES_LIMIT = 100_000
"""Most live games a server may be told to hold."""
MAX_BODY_LIMIT = 64 * 2**20
"""Largest request body a server may be told to accept (64 MiB)."""


@dataclass(frozen=True)
class ServeConfig:
    """How the browser table is served.

    Attributes:
        host: The address to bind; ``127.0.0.1`` (this machine only) by default. Any other
            address lets other machines play on this server: an explicit choice.
        port: The TCP port, 1 to 65535.
        agents_dir: A folder of exported agents (``.safetensors`` + ``.json``) offered as
            opponents besides the bots and the shipped agents; ``None`` for none.
        games_dir: Where finished web games are saved (one JSON record per game).
        runs_dir: Where tournament runs are looked for (folders holding ``games.jsonl``).
        max_games: Most games held at once (live and recently finished); more get HTTP 429.
        max_body_bytes: Largest request body, in bytes; larger ones get HTTP 413.
        idle_minutes: A game untouched this long is dropped from memory (finished hands
            are on disk already).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    agents_dir: Path | None = None
    games_dir: Path = Path("runs/web_games")
    runs_dir: Path = Path("runs")
    max_games: int = 1000
    max_body_bytes: int = 2**20
    idle_minutes: int = 120

    def __post_init__(self) -> None:
        check_int("port", self.port, 1, 65535, "a TCP port")
        check_int("max_games", self.max_games, 1, MAX_GAMES_LIMIT, "games held in memory")
        check_int("max_body_bytes", self.max_body_bytes, 256, MAX_BODY_LIMIT, "request size")
        check_int("idle_minutes", self.idle_minutes, 1, 7 * 24 * 60, "at most a week")
        if not self.host.strip():
            raise ValueError("host: give an address to bind, e.g. 127.0.0.1")
        if self.agents_dir is not None and not Path(self.agents_dir).is_dir():
            raise ValueError(
                f"--agents-dir {self.agents_dir}: not a folder; give the folder that holds "
                "exported agents (.safetensors with .json)"
            )
        if Path(self.games_dir).exists() and not Path(self.games_dir).is_dir():
            raise ValueError(f"--games-dir {self.games_dir}: exists and is not a folder")

    @property
    def is_local(self) -> bool:
        """Whether only this machine can reach the server."""
        return self.host in ("127.0.0.1", "localhost", "::1")
