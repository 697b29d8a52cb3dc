"""Replays of recorded games: saved web games and uploaded ``uno-lab play --record`` files.

Both are records of the same format; they are read by the terminal replay's own loader
(:func:`unolab.records.load_record`), so a file the terminal refuses is refused here with the
same message. A saved game is read only if it is a regular file of bounded size, and
JSON nested too deeply to parse is refused with one line. A saved game against a language
model shows what the model wrote at each of its moves, from the decisions recorded next to
the game (:mod:`unolab.web.replay.decisions`).

**Frames.** A recorded game as replay frames: the table before each decision, and what was decided.

Frame 0 of each hand is the deal; every decision adds a frame. A frame holds the full table
(every hand: a record is no secret), the sentences that led to it, and the decision taken
next: who, what, the legal alternatives and, for a learned agent, the probability its
network gave each of them (``action_probs``); for a language model, what it wrote
(``model``: the prompt, its raw answers, the move read, the flags, the latency and the
tokens of its decision record, :func:`unolab.web.replay.decisions.decision_note`).
The last frame of each hand has no decision and
says how the record ends there: ``end`` is ``"hand"`` (the hand was played out) or ``"cut"``
(the record stops in the middle of the hand); every other frame's ``end`` is ``None``.

A replay is answered a page of frames at a time (:func:`frame_page`): at most
:data:`PAGE_FRAMES` frames, and no more once the page's JSON passed :data:`PAGE_BYTES`,
so that a small record of thousands of moves never becomes one answer of megabytes. Only
the frames of the page are pictured; the moves before it are stepped (and checked) only.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.game import UnoGame
from uno_env.narrate import Table, describe_deal, describe_hand_end, describe_step
from uno_env.observation import encode
from uno_env.policy import ActionProbabilities
from uno_env.rules import Rules
from unolab.records import RecordError, load_record
from unolab.web.catalogue import Catalogue
from unolab.web.game.picture import legal_moves, table_picture
from unolab.web.guard import Invalid, NotFound, one_line, parse_json, read_bytes
from unolab.web.replay.decisions import DecisionBook, decision_note
from unolab.web.store import MAX_RECORD_BYTES, GameStore

__all__ = [
    "PAGE_BYTES",
    "PAGE_FRAMES",
    "Advisor",
    "Notes",
    "advisors_for",
    "build_frames",
    "check_offset",
    "frame_count",
    "frame_page",
    "replay_saved",
    "replay_upload",
]


PAGE_FRAMES = 500
"""The most frames one answer of a replay holds (and how many it holds unless ``limit``
asks for fewer)."""

PAGE_BYTES = 2**20
"""A page of frames ends with the frame that takes its JSON past this size (1 MiB): a
frame is a few kB, a language model's decision with its prompt and answers some more."""

Advisor = Callable[[npt.NDArray[np.float32], npt.NDArray[np.bool_]], npt.NDArray[np.float32]]
"""A learned agent's ``action_probs(observations, masks)``."""

Notes = Callable[[int, int, core.UnoState], Mapping[str, Any] | None]
"""What a language model wrote at a decision: ``notes(hand, move, state)`` (0-based hand and
move of the record, the state before the move), or ``None`` where no model decided."""


def _probabilities(
    rules: Rules, state: core.UnoState, advisor: Advisor | None
) -> dict[str, float] | None:
    """The advisor's probability of each legal action in ``state`` (rounded), if any."""
    if advisor is None:
        return None
    mask = core.legal_action_mask(rules, state)
    probs = np.asarray(advisor(encode(rules, state), mask))[0]
    legal = np.flatnonzero(mask[0]).tolist()
    return {C.action_name(a): round(float(probs[a]), 4) for a in legal}


def build_frames(
    rules: Rules,
    first: core.UnoState,
    hands: Sequence[Sequence[str]],
    names: Sequence[str],
    agents: Sequence[str | None],
    advisors: Mapping[int, Advisor] | None = None,
    where: str = "the record",
    notes: Notes | None = None,
    offset: int = 0,
    limit: int = PAGE_FRAMES,
) -> list[dict[str, Any]]:
    """Step a recorded game and picture its moments from frame ``offset`` on: ``limit``
    frames at most, and none more once their JSON passed :data:`PAGE_BYTES`.

    Args:
        rules: The rules.
        first: The first hand as dealt (B = 1).
        hands: The action names of each hand.
        names: Seat names.
        agents: Each seat's agent label (``None`` where unknown or human).
        advisors: Seat -> ``action_probs`` of the learned agent in that seat.
        where: What the record is, for messages.
        notes: What a language model wrote at each of its decisions (``model`` of the
            frame's decision).
        offset: The first frame pictured (0: the first deal).
        limit: The most frames pictured.

    Raises:
        Invalid: naming the hand and the move that does not replay.
    """
    advisors = advisors or {}
    narrator = Table(
        names=list(names), listener=names.index("you") if "you" in names else None, colour=False
    )
    everyone = set(range(rules.num_players))
    frames: list[dict[str, Any]] = []
    size = 0
    at = 0  # the index of the frame about to be reached

    def wanted() -> bool:
        return offset <= at < offset + limit

    def add(frame: dict[str, Any]) -> bool:
        """Keep a frame of the page; whether the page is full."""
        nonlocal size
        frames.append(frame)
        size += len(json.dumps(frame))
        return len(frames) >= limit or size >= PAGE_BYTES

    state = first
    for h, actions in enumerate(hands):
        if h > 0:
            if bool(state.live[0]) or bool(state.match_over[0]):
                raise Invalid(f"{where}: hand {h + 1} is listed, but hand {h} ended the match")
            state = core.next_hand(rules, state)
        lines = describe_deal(rules, state, narrator) if wanted() else []
        for turn, name in enumerate(actions, start=1):
            move = f"{where}: hand {h + 1}, move {turn} ({name!r})"
            if not bool(state.live[0]):
                raise Invalid(f"{move}: the hand was already over")
            try:
                action = C.parse_action(str(name))
            except ValueError as err:
                raise Invalid(f"{move}: {err}") from None
            mask = core.legal_action_mask(rules, state)[0]
            if not mask[action]:
                raise Invalid(f"{move} is not legal there; the record does not replay")
            seat = int(state.current[0])
            # Every note is taken, pictured or not: a model's notes are taken in order.
            note = notes(h, turn - 1, state) if notes is not None else None
            if wanted():
                decision: dict[str, Any] = {
                    "seat": seat,
                    "action": C.action_name(action),
                    "moves": legal_moves(rules, state, narrator, seat),
                    "probs": _probabilities(rules, state, advisors.get(seat)),
                }
                if note is not None:
                    decision["model"] = dict(note)
                frame = {
                    "table": table_picture(rules, state, names, agents, everyone),
                    "lines": lines,
                    "decision": decision,
                    "end": None,
                }
                if add(frame):
                    return frames
            at += 1
            after = core.step(rules, state, np.array([action]))
            lines = describe_step(rules, state, after, seat, action, narrator) if wanted() else []
            state = after
        if wanted():
            if not bool(state.live[0]):
                lines = lines + describe_hand_end(rules, state, narrator, state.hands[0])
            else:
                lines = [*lines, f"(The record stops here, in the middle of hand {h + 1}.)"]
            last: dict[str, Any] = {
                "table": table_picture(rules, state, names, agents, everyone),
                "lines": lines,
                "decision": None,
                "end": "cut" if bool(state.live[0]) else "hand",
            }
            if add(last):
                return frames
        at += 1
    return frames


def frame_count(hands: Sequence[Sequence[object]]) -> int:
    """How many frames a record of ``hands`` replays as: one per move, one per hand's end."""
    return sum(len(actions) + 1 for actions in hands)


def frame_page(total: int, offset: int, frames: list[dict[str, Any]]) -> dict[str, Any]:
    """The page keys of a replay's answer: ``total`` frames, this page's ``offset`` and
    ``frames``, and ``next``, the offset of the next page (``None`` after the last)."""
    end = offset + len(frames)
    return {
        "total": total,
        "offset": offset,
        "next": end if end < total else None,
        "frames": frames,
    }


def check_offset(total: int, offset: int, where: str) -> None:
    """Refuse a page that starts past the last frame.

    Raises:
        NotFound: naming the frames there are.
    """
    if offset >= total:
        raise NotFound(f"{where} has frames 0..{total - 1}, not {offset}")


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
    most: :func:`unolab.web.replay.records.build_frames`).

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
