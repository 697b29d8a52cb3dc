"""Replays of recorded games: saved web games and uploaded ``uno-lab play --record`` files.

Both are records of the same format; they are read by the terminal replay's own loader
(:func:`unolab.records.load_record`), so a file the terminal refuses is refused here with the
same message. A saved game is read only if it is a regular file of bounded size, and
JSON nested too deeply to parse is refused with one line. A saved game against a language
model shows what the model wrote at each of its moves, from the decisions recorded next to
the game (:mod:`unolab.web.replay.decisions`).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_env.game import UnoGame
from uno_env.policy import ActionProbabilities
from uno_env.rules import Rules
from unolab.records import RecordError, load_record
from unolab.web.catalogue import Catalogue
from unolab.web.errors import Invalid, NotFound
from unolab.web.replay.decisions import DecisionBook, decision_note
from unolab.web.replay.frames import (
    PAGE_FRAMES,
    Advisor,
    Notes,
    build_frames,
    check_offset,
    frame_count,
    frame_page,
)
from unolab.web.store import MAX_RECORD_BYTES, GameStore
from unolab.web.untrusted import one_line, parse_json, read_bytes

__all__ = ["advisors_for", "replay_saved", "replay_upload"]

_LABEL = re.compile(r"\(([^()]+)\)$")


def advisors_for(
    catalogue: Catalogue, rules: Rules, agent_ids: Sequence[str | None]
) -> dict[int, Advisor]:
    """``action_probs`` of each seat held by a learned agent that fits ``rules``."""
    out: dict[int, Advisor] = {}
    for seat, agent_id in enumerate(agent_ids):
        if agent_id is None or agent_id not in catalogue.entries:
            continue
        if catalogue.entry(agent_id).rules is None:
            continue  # a bot: no network, no probabilities
        try:
            policy = catalogue.policy(agent_id, rules)
        except ValueError:
            continue  # trained for other rules: shown without probabilities
        if isinstance(policy, ActionProbabilities):
            out[seat] = policy.action_probs
    return out


def _replay(
    catalogue: Catalogue,
    raw: bytes,
    where: str,
    agent_ids: Sequence[str | None] | None,
    book: DecisionBook | None = None,
    offset: int = 0,
    limit: int = PAGE_FRAMES,
) -> dict[str, Any]:
    """Replay a page of a record given as bytes; every error names it as ``where``."""
    parse_json(raw, where)  # JSON too deep for the parser is refused here, with one line
    # The record reader takes a file: a private temporary copy, so no error names a path
    # of the server (the copy's name is replaced by ``where``).
    fd, name = tempfile.mkstemp(prefix="uno-lab-replay-", suffix=".json")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        try:
            rules, seed, names, hands = load_record(path)
        except (RecordError, FileNotFoundError) as err:
            raise Invalid(one_line(str(err).replace(str(path), where))) from None
        except RecursionError:
            raise Invalid(f"{where}: the JSON is nested too deeply to read") from None
    finally:
        path.unlink(missing_ok=True)
    if agent_ids is None or len(agent_ids) != len(names):
        # Older records keep only the seat names: "player_1 (mixbot)".
        agent_ids = []
        for name in names:
            found = _LABEL.search(name)
            entry = catalogue.entry_by_label(found.group(1)) if found else None
            agent_ids.append(entry.id if entry is not None else None)
    labels = [
        catalogue.entry(a).label if a is not None and a in catalogue.entries else None
        for a in agent_ids
    ]
    advisors = advisors_for(catalogue, rules, agent_ids)
    first = UnoGame(rules, seed=seed).state
    notes: Notes | None = None
    if book is not None and book.count:

        def notes(hand: int, move: int, state: Any) -> dict[str, Any] | None:
            seat = int(state.current[0])
            record = book.take(int(state.key[0]), seat, int(state.hand_no[0]), int(state.turn[0]))
            return None if record is None else decision_note(record)

    total = frame_count(hands)
    check_offset(total, offset, where)
    frames = build_frames(
        rules, first, hands, names, labels, advisors, where, notes, offset=offset, limit=limit
    )
    return {"title": where, "names": names, "seed": str(seed), **frame_page(total, offset, frames)}


def replay_saved(
    catalogue: Catalogue,
    store: GameStore,
    game_id: str,
    offset: int = 0,
    limit: int = PAGE_FRAMES,
) -> dict[str, Any]:
    """A page of the replay of a saved web game (from frame ``offset``, ``limit`` frames at
    most: :func:`unolab.web.replay.frames.build_frames`).

    Raises:
        NotFound: for an id with no saved game, or an ``offset`` past its last frame.
        Invalid: if the saved file is no regular file, is too large or does not replay.
    """
    where = f"saved game {game_id}"
    try:
        path = store.path(game_id)
    except KeyError:
        raise NotFound(f"no saved game {game_id!r}") from None
    if not path.exists():
        raise NotFound(f"no saved game {game_id!r}")
    raw = read_bytes(path, MAX_RECORD_BYTES, "saved game", where)
    data = parse_json(raw, where)
    found = data.get("agents") if isinstance(data, dict) else None
    agent_ids = (
        found if isinstance(found, list) and all(isinstance(a, str | None) for a in found) else None
    )
    book = DecisionBook.read(store.decisions_path(game_id), f"{where}: decisions")
    return _replay(catalogue, raw, where, agent_ids, book, offset, limit)


def replay_upload(
    catalogue: Catalogue, body: bytes, offset: int = 0, limit: int = PAGE_FRAMES
) -> dict[str, Any]:
    """A page of the replay of an uploaded record (the contents of a ``--record`` file);
    the page asks for each page with the same file.

    Raises:
        Invalid: naming what makes the upload no recorded game.
        NotFound: for an ``offset`` past its last frame.
    """
    return _replay(catalogue, body, "the uploaded file", None, None, offset, limit)
