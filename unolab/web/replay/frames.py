"""A recorded game as replay frames: the table before each decision, and what was decided.

Frame 0 of each hand is the deal; every decision adds a frame. A frame holds the full table
(every hand: a record is no secret), the sentences that led to it, and the decision taken
next: who, what, the legal alternatives and, for a learned agent, the probability its
network gave each of them (``action_probs``); for a language model, what it wrote
(``model``: the prompt, its raw answers, the move read, the flags, the latency and the
tokens of its decision record, :func:`unolab.web.replay.decisions.decision_note`). The last frame of each hand has no decision and
says how the record ends there: ``end`` is ``"hand"`` (the hand was played out) or ``"cut"``
(the record stops in the middle of the hand); every other frame's ``end`` is ``None``.

A replay is answered a page of frames at a time (:func:`frame_page`): at most
:data:`PAGE_FRAMES` frames, and no more once the page's JSON passed :data:`PAGE_BYTES`,
so that a small record of thousands of moves never becomes one answer of megabytes. Only
the frames of the page are pictured; the moves before it are stepped (and checked) only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.narrate import Table, describe_deal, describe_hand_end, describe_step
from uno_env.observation import encode
from uno_env.rules import Rules
from unolab.web.errors import Invalid, NotFound
from unolab.web.game.picture import legal_moves, table_picture

__all__ = [
    "PAGE_BYTES",
    "PAGE_FRAMES",
    "Advisor",
    "Notes",
    "build_frames",
    "check_offset",
    "frame_count",
    "frame_page",
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
