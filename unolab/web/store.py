"""Finished web games on disk: one record per game, in the format of ``uno-lab play --record``.

A record is written (atomically) whenever a hand of the game ends, so a restarted server
loses no finished hand; the same files replay in the terminal (``uno-lab replay FILE``).
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

from unolab.play import write_record  # the one atomic record writer (uno-lab play --record)

__all__ = ["GameStore", "new_game_id", "valid_game_id"]

_ID = re.compile(r"[A-Za-z0-9_-]{22}")


def new_game_id() -> str:
    """An unguessable id (128 random bits)."""
    return secrets.token_urlsafe(16)


def valid_game_id(game_id: str) -> bool:
    """Whether ``game_id`` has the form of an id this server gives (so it is no path)."""
    return _ID.fullmatch(game_id) is not None


class GameStore:
    """The saved web games of one folder.

    Args:
        folder: Where records are written (created on first save).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, game_id: str) -> Path:
        """The record of a game (its id checked first).

        Raises:
            KeyError: for an id of another form.
        """
        if not valid_game_id(game_id):
            raise KeyError(game_id)
        return self.folder / f"{game_id}.json"

    def save(self, game_id: str, record: dict[str, Any]) -> None:
        """Write a game's record (replacing the older one atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_record(self.path(game_id), record)

    def listing(self, limit: int = 200) -> list[dict[str, Any]]:
        """The saved games, newest first: id, seat names, hands played, when saved."""
        if not self.folder.is_dir():
            return []
        found = []
        paths = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for path in paths[:limit]:
            if not valid_game_id(path.stem):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                found.append(
                    {
                        "id": path.stem,
                        "names": list(data["names"]),
                        "hands": len(data["hands"]),
                        "saved": data.get("saved", ""),
                        "finished": bool(data.get("match_over", False)),
                    }
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a foreign or damaged file: not listed
        return found
