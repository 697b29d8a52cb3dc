"""Finished web games on disk: one record per game, in the format of ``uno-lab play --record``.

A record is written (atomically) whenever a hand of the game ends, so a restarted server
loses no finished hand; the same files replay in the terminal (``uno-lab replay FILE``).
A file of the folder is read only if it is a regular file of bounded size: the folder may
hold anything.

Human games as data (``uno-lab serve --collect-human-games``): a player who agrees keeps the
game as research data; its record then carries ``keep_as_data: true``, each human decision's
thinking time (``think_ms``, aligned with ``hands``) and the agents' names (``agent_names``).
:class:`ThinkTimes` measures the times; :func:`data_choice` reads the player's choice.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uno_env.files import UnreadableFileError, read_regular_file, write_atomically

MAX_RECORD_BYTES = 16 * 2**20
"""The largest saved game read (a long match records well under 1 MiB)."""

DECISIONS_SUFFIX = ".decisions.jsonl"
"""The suffix of a game's file of language-model decisions (``<id>.decisions.jsonl``)."""

__all__ = [
    "DECISIONS_SUFFIX",
    "MAX_RECORD_BYTES",
    "MAX_THINK_MS",
    "GameStore",
    "ThinkTimes",
    "data_choice",
    "new_game_id",
    "valid_game_id",
]

MAX_THINK_MS = 24 * 3600 * 1000
"""The longest thinking time recorded (a day, in ms); a longer pause is recorded as this."""

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


def data_choice(collecting: bool, keep: bool | None) -> bool | None:
    """The player's choice of a new game as the record keeps it: ``None`` on a server that
    keeps no games as data, else whether the player agreed (not ticking the box declines).

    Raises:
        ValueError: ``keep_as_data`` asked of a server that does not collect games.
    """
    if not collecting:
        if keep:
            raise ValueError(
                "keep_as_data: this server keeps no games as data (its operator turns that on "
                "with uno-lab serve --collect-human-games); leave it out"
            )
        return None
    return keep is True


@dataclass
class ThinkTimes:
    """How long the human took for each decision, measured on the server from the answer
    that put the decision before them (the deal, or the previous move) to the move.

    Attributes:
        since: When the current decision was put before the player (``time.monotonic``).
        ms: ``(hand, index of the action in the hand)`` -> the thinking time of a human
            decision, in ms. A move the server played (an agent's, a timed-out seat's) or
            one replayed after a restart of the server has none.
    """

    since: float = field(default_factory=time.monotonic)
    ms: dict[tuple[int, int], int] = field(default_factory=dict)

    def step(self, hands: list[list[str]], human: bool) -> None:
        """Note the action just appended to ``hands``; time it if a human decided it."""
        now = time.monotonic()
        if human:
            spent = min(MAX_THINK_MS, max(0, round((now - self.since) * 1000)))
            self.ms[(len(hands) - 1, len(hands[-1]) - 1)] = spent
        self.since = now

    def restart(self) -> None:
        """A new hand was dealt: the next decision is timed from now."""
        self.since = time.monotonic()

    def fields(
        self, hands: list[list[str]], keep: bool | None, labels: list[str | None]
    ) -> dict[str, Any]:
        """The record's data fields for ``hands`` (its finished hands): none on a server
        that keeps no games, ``keep_as_data`` alone for a declined game, else also
        ``think_ms`` (per hand, per action: ms, ``null`` for the server's moves) and
        ``agent_names`` (each seat's agent name, ``null`` for a human's seat)."""
        if keep is None:
            return {}
        if not keep:
            return {"keep_as_data": False}
        think = [[self.ms.get((h, i)) for i in range(len(hand))] for h, hand in enumerate(hands)]
        return {"keep_as_data": True, "think_ms": think, "agent_names": list(labels)}


def _modified(path: Path) -> float:
    """When a file was last written (0 for one that is gone: it is listed last)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
