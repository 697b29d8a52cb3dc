"""The table as JSON: what the page draws (cards, counts, the top card, the legal moves)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.narrate import Table, move_label
from uno_env.rules import Rules

__all__ = ["hand_cards", "legal_moves", "table_picture"]

_KINDS = {
    C.DRAW: "draw",
    C.KEEP: "keep",
    C.CHALLENGE: "challenge",
    C.ACCEPT: "accept",
    C.UNO: "uno",
    C.CATCH: "catch",
    C.PASS: "pass",
}


def hand_cards(counts: np.ndarray) -> list[str]:
    """Card names of a hand's count vector, sorted by face, with repeats."""
    return [C.FACE_NAMES[f] for f in range(C.NUM_FACES) for _ in range(int(counts[f]))]


def _colour_letter(colour: int) -> str | None:
    return C.COLOURS[colour] if 0 <= colour < C.NUM_COLOURS else None


def legal_moves(
    rules: Rules, state: core.UnoState, table: Table, seat: int
) -> list[dict[str, Any]]:
    """The legal actions of one game's acting seat, each with what the page needs.

    Each move has ``action`` (its name, what the API takes), ``label`` (in words), ``kind``
    (``play``, ``draw``, ``keep``, ``challenge``, ``accept``, ``uno``, ``catch``, ``pass``,
    ``colour`` or ``swap``), ``card`` (the card a play puts down) and ``colour`` (the colour
    a play or a naming makes current).
    """
    mask = core.legal_action_mask(rules, state)[0]
    moves = []
    for action in np.flatnonzero(mask).tolist():
        face = int(C.ACTION_FACE[action])
        if face >= 0:
            kind = "play"
        elif C.NAME_COLOUR <= action < C.SWAP:
            kind = "colour"
        elif action >= C.SWAP:
            kind = "swap"
        else:
            kind = _KINDS[action]
        moves.append(
            {
                "action": C.action_name(action),
                "label": move_label(action, table, seat, rules.num_players),
                "kind": kind,
                "card": C.FACE_NAMES[face] if face >= 0 else None,
                "colour": _colour_letter(int(C.ACTION_COLOUR[action])),
            }
        )
    return moves


def table_picture(
    rules: Rules,
    state: core.UnoState,
    names: Sequence[str],
    agents: Sequence[str | None],
    shown: Collection[int],
) -> dict[str, Any]:
    """One game (B = 1) as the page draws it; only the seats in ``shown`` show their cards.

    Args:
        rules: The rules.
        state: The game.
        names: Each seat's display name.
        agents: Each seat's agent label (``None`` for a human).
        shown: The seats whose cards are shown (the human's own, or all in a replay).
    """
    live = bool(state.live[0])
    current = int(state.current[0])
    exposed = int(state.uno_exposed[0])
    drawn = int(state.drawn[0])
    seats = []
    for seat, name in enumerate(names):
        seats.append(
            {
                "seat": seat,
                "name": name,
                "agent": agents[seat],
                "count": int(state.hand_size[0, seat]),
                "cards": hand_cards(state.hands[0, seat]) if seat in shown else None,
                "score": int(state.scores[0, seat]),
                "current": live and seat == current,
                "out": int(state.finish_rank[0, seat]) >= 0,
                "catchable": seat == exposed,
            }
        )
    return {
        "hand": int(state.hand_no[0]) + 1,
        "turn": int(state.turn[0]),
        "top": C.FACE_NAMES[int(state.top[0])],
        "colour": _colour_letter(int(state.colour[0])),
        "direction": int(state.direction[0]),
        "draw_pile": C.DECK_SIZE - int(state.draw_pos[0]),
        "discards": int(state.discard_len[0]),
        "phase": core.PHASE_NAMES[int(state.phase[0])],
        "current": current if live else None,
        "pending": int(state.pending[0]),
        "drawn": C.FACE_NAMES[drawn] if drawn >= 0 and current in shown else None,
        "seats": seats,
        "target_score": rules.target_score,
    }
