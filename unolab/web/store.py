"""Finished web games on disk: one record per game, in the format of ``uno-lab play --record``.

A record is written (atomically) whenever a hand of the game ends, so a restarted server
loses no finished hand; the same files replay in the terminal (``uno-lab replay FILE``).
A file of the folder is read only if it is a regular file of bounded size: the folder may
hold anything.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

from uno_env.files import UnreadableFileError, read_regular_file, write_atomically

MAX_RECORD_BYTES = 16 * 2**20
"""The largest saved game read (a long match records well under 1 MiB)."""

DECISIONS_SUFFIX = ".decisions.jsonl"
"""The suffix of a game's file of language-model decisions (``<id>.decisions.jsonl``)."""

__all__ = ["DECISIONS_SUFFIX", "MAX_RECORD_BYTES", "GameStore", "new_game_id", "valid_game_id"]

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

    def decisions_path(self, game_id: str) -> Path:
        """The decisions of the language models of a game, one JSON line each (as
        :mod:`unolab.agents.llm.records` writes them), next to its record.

        Raises:
            KeyError: for an id of another form.
        """
        return self.path(game_id).with_suffix(DECISIONS_SUFFIX)

    def save(self, game_id: str, record: dict[str, Any]) -> None:
        """Write a game's record (replacing the older one atomically).

        Raises:
            OSError: the folder cannot be created or the file written (a full disk); the
                older record, if any, is left whole.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path(game_id), json.dumps(record, indent=2))

    def read(self, game_id: str) -> bytes:
        """The bytes of a saved game.

        Raises:
            KeyError: for an id of another form.
            UnreadableFileError: if there is no such file, or it is no regular file or too
                large (the message names the file by its server path).
        """
        return read_regular_file(self.path(game_id), MAX_RECORD_BYTES, "saved game")

    def listing(self, limit: int = 200) -> list[dict[str, Any]]:
        """The saved games, newest first: id, seat names, hands played, when saved."""
        if not self.folder.is_dir():
            return []
        found = []
        paths = sorted(
            (p for p in self.folder.glob("*.json") if valid_game_id(p.stem)),
            key=_modified,
            reverse=True,
        )
        for path in paths[:limit]:
            try:
                data = json.loads(read_regular_file(path, MAX_RECORD_BYTES, "saved game"))
            except (UnreadableFileError, ValueError, RecursionError):
                continue  # a damaged file, a pipe: not listed
            names = data.get("names") if isinstance(data, dict) else None
            hands = data.get("hands") if isinstance(data, dict) else None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                continue  # a foreign file: no seat names to show
            if not isinstance(hands, list):
                continue
            saved = data.get("saved")
            found.append(
                {
                    "id": path.stem,
                    "names": names,
                    "hands": len(hands),
                    "saved": saved if isinstance(saved, str) else "",
                    "finished": data.get("match_over") is True,
                }
            )
        return found


def _modified(path: Path) -> float:
    """When a file was last written (0 for one that is gone: it is listed last)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
