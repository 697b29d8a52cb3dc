"""The table as JSON: what the page draws (cards, counts, the top card, the legal moves),
and a live game as a seat sees it (:func:`game_view`; a table for several people:
:func:`table_view`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.game import UnoGame
from uno_env.narrate import Table, describe_situation, move_label
from uno_env.rules import Rules
from unolab.web.game.seats import SPECTATOR

if TYPE_CHECKING:
    from unolab.web.catalogue import Catalogue
    from unolab.web.game.table import WebGame

__all__ = [
    "game_view",
    "hand_cards",
    "legal_moves",
    "match_winners",
    "reveal_picture",
    "step_picture",
    "table_picture",
    "table_view",
]

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


def step_picture(
    state: core.UnoState, seq: int, seat: int, action: int, lines: Mapping[int, list[str]]
) -> dict[str, Any]:
    """One step as the page replays it between two answers: who acted, the card put down
    (if any), the sentences, and the public table just after it (the top card, the colour,
    the direction and every seat's card count), so that the page can show the bots' moves
    one at a time without asking the server again.

    Args:
        state: The game just after the step.
        seq: The step's move number in the match.
        seat: Who acted.
        action: The action taken.
        lines: The step's sentences, by listener.
    """
    face = int(C.ACTION_FACE[action])
    return {
        "seq": seq,
        "hand": int(state.hand_no[0]) + 1,
        "seat": seat,
        "action": C.action_name(action),
        "card": C.FACE_NAMES[face] if face >= 0 else None,
        "lines": dict(lines),
        "top": C.FACE_NAMES[int(state.top[0])],
        "colour": _colour_letter(int(state.colour[0])),
        "direction": int(state.direction[0]),
        "counts": [int(n) for n in state.hand_size[0]],
    }


def match_winners(rules: Rules, game: UnoGame) -> list[int]:
    """The seats that won the match (the best total: the highest, or the lowest under
    ``penalty_points``; ties share it), or ``[]`` while the match goes on."""
    if not (game.over and game.match_over):
        return []
    scores = game.match_scores
    best = min(scores) if rules.scoring == "penalty_points" else max(scores)
    return [seat for seat, score in enumerate(scores) if score == best]


def reveal_picture(rules: Rules, game: UnoGame) -> dict[str, Any]:
    """The end of a hand: the winner, the points of the hand and those each seat still
    held, the match's scores and its winners (once it is over)."""
    state = game.state
    return {
        "winner": game.winner,
        "hand_points": game.hand_scores,
        "held_points": [
            int(np.dot(state.hands[0, seat], C.FACE_POINTS[: C.NUM_FACES]))
            for seat in range(rules.num_players)
        ],
        "scores": game.match_scores,
        "target_score": rules.target_score,
        "scoring": rules.scoring,
        "match_winners": match_winners(rules, game),
    }


def game_view(
    game: WebGame, seat: int, log_from: int = 0, events_after: int | None = None
) -> dict[str, Any]:
    """A live game as the player in ``seat`` sees it (their own cards only, until a hand
    ends; :data:`unolab.web.game.seats.SPECTATOR`: nobody's).

    Args:
        game: The game.
        seat: Whose view: the human's seat, a seat for people, or the spectators.
        log_from: ``log`` holds the sentences from this one on.
        events_after: ``events`` holds the steps taken after this ``seq`` (the latest
            :data:`unolab.web.game.table.KEPT_EVENTS` at most); ``None``: no steps.
    """
    rules, uno, state = game.rules, game.game, game.game.state
    over = uno.over
    mine = set() if seat == SPECTATOR else {seat}
    shown = set(range(rules.num_players)) if over else mine
    your_turn = not over and uno.current_seat == seat
    if game.shared is not None and not game.shared.started:
        your_turn = False  # nobody moves before the host starts the game
    narrator = game.narrator_for(seat)
    events = (
        []
        if events_after is None
        else [
            {**e, "lines": e["lines"].get(seat, [])} for e in game.events if e["seq"] > events_after
        ]
    )
    log = game.log_of(seat)
    return {
        "id": game.id,
        # A string: a seed may exceed what a JavaScript number holds exactly.
        "seed": str(game.seed),
        "seq": game.seq,
        "setup": game.setup,
        "table": table_picture(rules, state, game.seat_names(seat), game.labels, shown),
        "your_turn": your_turn,
        "situation": describe_situation(rules, state, narrator) if your_turn else "",
        "moves": legal_moves(rules, state, narrator, seat) if your_turn else [],
        "hand_over": over,
        "match_over": game.match_over,
        "reveal": reveal_picture(rules, uno) if over else None,
        "log_from": log_from,
        "log": log[log_from:],
        "events": events,
        "last_cards": list(game.last_cards),
        "save_error": game.save_error,
        "thinking": game.thinking,
        "models": {str(seat): model for seat, model in sorted(game.model_names.items())},
        "agent_error": game.agent_error,
    }


def table_view(
    game: WebGame,
    seat: int,
    log_from: int,
    events_after: int | None,
    catalogue: Catalogue,
) -> dict[str, Any]:
    """A table for several people as ``seat`` sees it (:func:`game_view`), with its
    ``version``, who sits where and the turn timer
    (:meth:`unolab.web.game.seats.SharedTable.view`).

    Args:
        game: A table for several people.
        seat: A seat for people, or :data:`unolab.web.game.seats.SPECTATOR`.
        log_from: ``log`` holds the sentences from this one on.
        events_after: ``events`` holds the steps taken after this ``seq`` (``None``: none).
        catalogue: The agents on offer (the stand-in's label).
    """
    shared = game.shared
    assert shared is not None
    current = None if game.game.over else game.game.current_seat
    return {
        **game_view(game, seat, log_from, events_after),
        "version": shared.version(game.seq, len(game.hands)),
        "shared": shared.view(seat, current, catalogue.entry(shared.stand_in).label),
    }
