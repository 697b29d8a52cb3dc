"""A recorded game as replay frames: the table before each decision, and what was decided.

Frame 0 of each hand is the deal; every decision adds a frame. A frame holds the full table
(every hand: a record is no secret), the sentences that led to it, and the decision taken
next: who, what, the legal alternatives and, for a learned agent, the probability its
network gave each of them (``action_probs``); for a language model, what it wrote
(``model``: the prompt, its raw answers, the move read, the flags, the latency and the
tokens of its decision record, :func:`unolab.web.replay.decisions.decision_note`). The last frame of each hand has no decision and
says how the record ends there: ``end`` is ``"hand"`` (the hand was played out) or ``"cut"``
(the record stops in the middle of the hand); every other frame's ``end`` is ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.narrate import Table, describe_deal, describe_hand_end, describe_step
from uno_env.observation import encode
from uno_env.rules import Rules
from unolab.web.errors import Invalid
from unolab.web.game.picture import legal_moves, table_picture

__all__ = ["Advisor", "Notes", "build_frames"]

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
) -> list[dict[str, Any]]:
    """Step a recorded game and picture every moment.

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

    Raises:
        Invalid: naming the hand and the move that does not replay.
    """
    advisors = advisors or {}
    narrator = Table(
        names=list(names), listener=names.index("you") if "you" in names else None, colour=False
    )
    everyone = set(range(rules.num_players))
    frames: list[dict[str, Any]] = []
    state = first
    for h, actions in enumerate(hands):
        if h > 0:
            if bool(state.live[0]) or bool(state.match_over[0]):
                raise Invalid(f"{where}: hand {h + 1} is listed, but hand {h} ended the match")
            state = core.next_hand(rules, state)
        lines = describe_deal(rules, state, narrator)
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
            decision: dict[str, Any] = {
                "seat": seat,
                "action": C.action_name(action),
                "moves": legal_moves(rules, state, narrator, seat),
                "probs": _probabilities(rules, state, advisors.get(seat)),
            }
            note = notes(h, turn - 1, state) if notes is not None else None
            if note is not None:
                decision["model"] = dict(note)
            frames.append(
                {
                    "table": table_picture(rules, state, names, agents, everyone),
                    "lines": lines,
                    "decision": decision,
                    "end": None,
                }
            )
            after = core.step(rules, state, np.array([action]))
            lines = describe_step(rules, state, after, seat, action, narrator)
            state = after
        finished = not bool(state.live[0])
        if finished:
            lines = lines + describe_hand_end(rules, state, narrator, state.hands[0])
        else:
            lines = [*lines, f"(The record stops here, in the middle of hand {h + 1}.)"]
        frames.append(
            {
                "table": table_picture(rules, state, names, agents, everyone),
                "lines": lines,
                "decision": None,
                "end": "hand" if finished else "cut",
            }
        )
    return frames
