"""What a language model wrote at each of its moves, for the replay: its decision records.

A language-model agent records each decision as a JSON line
(:mod:`unolab.agents.llm.records`): a tournament under its run folder
(``decisions/<participant>/chunk-<n>.jsonl``), a web game next to its saved record
(``<id>.decisions.jsonl``). A replay matches a decision to its record by the game's key,
the seat, the hand and the turn (:class:`DecisionBook`); several decisions of one turn
(draw, then keep or play the drawn card) are matched in the order they were recorded. A
decision recorded again when a tournament's chunk was played again after a stop (every
answer ``replayed``) is the first one's copy and is skipped.

A tournament's game is replayed by playing its chunk again (:mod:`unolab.web.replay.tournament`):
a language model's seat then plays its recorded moves (:class:`RecordedPlayer`), and the
model is never asked again: the server sends no request to any endpoint a run folder names.

The records are data someone else may have written: each is read with bounds, and what the
page gets of it (:func:`decision_note`) is plain values of bounded length; the page shows
the model's text as text, never as markup.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.policy import ActArray, MaskArray
from uno_env.rules import Rules
from unolab.web.guard import is_regular, one_line, read_bytes

__all__ = [
    "MAX_DECISIONS_BYTES",
    "MAX_TEXT_CHARS",
    "DecisionBook",
    "RecordedPlayer",
    "decision_note",
    "place_of",
    "record_place",
]

MAX_DECISIONS_BYTES = 256 * 2**20
"""The largest file of decision records read (a chunk of 100 games records a few MB)."""

MAX_TEXT_CHARS = 8000
"""The most characters of one message or answer the page gets (the rest is cut)."""

Identity = tuple[int, int, int, int]
"""A decision's place: the game's key, the seat, the hand number, the turn."""


def _cut(text: Any) -> str:
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return value if len(value) <= MAX_TEXT_CHARS else value[:MAX_TEXT_CHARS] + " [...cut]"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and np.isfinite(value) else 0.0


def _identity(record: Mapping[str, Any]) -> Identity | None:
    parts = [_int(record.get(k)) for k in ("game", "seat", "hand_no", "turn")]
    if any(p is None for p in parts):
        return None
    game, seat, hand, turn = (int(p) for p in parts if p is not None)
    return game, seat, hand, turn


def _copied(record: Mapping[str, Any]) -> bool:
    """A decision recorded again from the records (every answer replayed): a copy."""
    requests = record.get("requests")
    return (
        isinstance(requests, list)
        and bool(requests)
        and all(isinstance(r, dict) and r.get("replayed") is True for r in requests)
    )


def decision_note(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record as the replay shows it: the prompt, the raw answers, the move, the flags,
    the latency and the tokens (plain values; long texts cut)."""
    messages = record.get("messages")
    prompt = ""
    if isinstance(messages, list):
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        prompt = _cut(users[0].get("content", "")) if users else ""
    responses = record.get("responses")
    errors = record.get("errors")
    action = record.get("action")
    form = record.get("form")
    endpoint_error = record.get("endpoint_error")
    model, agent = record.get("model"), record.get("agent")
    return {
        "model": one_line(model, 200) if isinstance(model, str) else "",
        "agent": one_line(agent, 200) if isinstance(agent, str) else "",
        "prompt": prompt,
        "responses": [_cut(r) for r in responses] if isinstance(responses, list) else [],
        "action": action if isinstance(action, str) else None,
        "form": form if isinstance(form, str) else None,
        "invalid": _int(record.get("invalid")) or 0,
        "retried": record.get("retried") is True,
        "fallback": record.get("fallback") is True,
        "errors": [one_line(str(e), 400) for e in errors] if isinstance(errors, list) else [],
        "endpoint_error": one_line(endpoint_error, 400)
        if isinstance(endpoint_error, str)
        else None,
        "latency_s": round(_number(record.get("latency_s")), 3),
        "tokens_in": _int(record.get("tokens_in")) or 0,
        "tokens_out": _int(record.get("tokens_out")) or 0,
    }


class DecisionBook:
    """Decision records by their place in a game (see the module), handed out in order."""

    def __init__(self, records: Iterable[Mapping[str, Any]] = ()) -> None:
        self._found: dict[Identity, deque[Mapping[str, Any]]] = {}
        self.count = 0
        for record in records:
            self.add(record)

    def add(self, record: Mapping[str, Any]) -> None:
        """File a record (a copy, or one without its place, is skipped)."""
        identity = _identity(record)
        if identity is None or _copied(record):
            return
        self._found.setdefault(identity, deque()).append(record)
        self.count += 1

    def take(self, game: int, seat: int, hand_no: int, turn: int) -> Mapping[str, Any] | None:
        """The next record of a decision, or ``None`` when none is left for it."""
        queue = self._found.get((game, seat, hand_no, turn))
        return queue.popleft() if queue else None

    def put_back(self, place: Identity, record: Mapping[str, Any]) -> None:
        """Return a record taken, to be taken first again."""
        self._found.setdefault(place, deque()).appendleft(record)

    @classmethod
    def read(cls, path: Path, shown_as: str) -> DecisionBook:
        """The records of a file (a missing file holds none; a line that is no record,
        such as one cut short by a stop, is skipped).

        Raises:
            Invalid: naming ``shown_as``, for a file that is no regular file or too large.
        """
        book = cls()
        if not path.exists() and not path.is_symlink():
            return book
        if not is_regular(path):
            read_bytes(path, MAX_DECISIONS_BYTES, "decision records", shown_as)  # says why
        raw = read_bytes(path, MAX_DECISIONS_BYTES, "decision records", shown_as)
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue
            if isinstance(record, dict):
                book.add(record)
        return book


class RecordedPlayer:
    """A language model's seat replayed from its decision records: each decision plays
    the recorded move, and no model is asked.

    A decision with no record (the model's endpoint failed there and the game was
    forfeited) raises, so the replayed game forfeits where the played one did.

    Args:
        name: The participant's name (in messages).
        book: Its records of the chunk replayed.
    """

    needs_state = True
    """Called with the state (:func:`uno_env.play.choose_actions`), as the model was."""
    uses_observations = False

    def __init__(self, name: str, book: DecisionBook) -> None:
        self.name = name
        self.book = book
        self.consumed: list[Mapping[str, Any]] = []
        """The records of the moves played, in order (a caller empties it as it reads)."""

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Not available: the recorded moves are found from the state.

        Raises:
            TypeError: always.
        """
        raise TypeError(f"{self.name} replays recorded moves: it acts from the state")

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Nothing to forget: the records say every move."""

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """The recorded move of each row; the records used are appended to ``consumed``.

        Raises:
            LookupError: naming the decision, for one that was not recorded (the call then
                uses no record: the play loop asks again for the other rows).
        """
        if masks is None:
            masks = core.legal_action_mask(rules, state)
        seat_list = np.asarray(seats, dtype=np.int64).reshape(-1).tolist()
        actions = np.zeros(state.batch_size, dtype=np.int64)
        taken: list[tuple[Identity, Mapping[str, Any]]] = []
        try:
            for row, seat in enumerate(seat_list):
                if not masks[row].any():
                    continue
                place = place_of(state, row, seat)
                record = self.book.take(*place)
                action = _recorded_action(record)
                if record is not None:
                    taken.append((place, record))
                if action is None or not masks[row, action]:
                    raise LookupError(
                        f"{self.name}: no recorded move for seat {seat}, hand "
                        f"{place[2] + 1}, turn {place[3]}"
                    )
                actions[row] = action
        except LookupError:
            for place, record in reversed(taken):
                self.book.put_back(place, record)
            raise
        self.consumed.extend(record for _, record in taken)
        return actions


def place_of(state: UnoState, row: int, seat: int) -> Identity:
    """The place of the decision of ``seat`` in row ``row`` of ``state``."""
    return int(state.key[row]), seat, int(state.hand_no[row]), int(state.turn[row])


def record_place(record: Mapping[str, Any]) -> Identity | None:
    """The place a record names (``None`` for a record without one)."""
    return _identity(record)


def _recorded_action(record: Mapping[str, Any] | None) -> int | None:
    if record is None:
        return None
    action = _int(record.get("action_id"))
    if action is None and isinstance(record.get("action"), str):
        try:
            action = C.parse_action(record["action"])
        except ValueError:
            return None
    return action if action is not None and 0 <= action < C.NUM_ACTIONS else None
