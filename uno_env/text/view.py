"""One seat's view of a game as a JSON-able dict: exactly what that seat may know.

:func:`seat_view` reads the state the way :func:`uno_env.observation.encode` does: the
seat's own hand, the public table (top card, colour, direction, pile sizes, every seat's
card count, UNO calls, last card played and colour named, scores) and, for the seat that
must act, its decision and legal moves. It never reads another seat's cards, the order of
the draw pile, the card another seat has just drawn, whether a Wild Draw Four was a
bluff, nor the game's random key: two states that differ only there give the same view.

:func:`changes_between` says in plain sentences what changed between two views of one
seat, for callers that do not see each step (a model that is asked only at its own
decisions).

Keys of a view (cards and moves in the notation of :mod:`uno_env.cards`, colours as the
letters ``R``, ``Y``, ``G``, ``B``):

* ``seat``, ``players``, ``hand_number`` (from 1), ``turn`` (decisions taken in the hand);
* ``hand``: own cards, sorted; ``top_card``; ``colour`` (``None`` before a Wild starter's
  colour is named); ``direction`` (``"clockwise"`` or ``"counter-clockwise"``);
  ``draw_pile``, ``discard_pile`` (card counts);
* ``you``: own ``score``, ``catchable`` (one card, UNO not called), ``out``;
* ``others``: one entry per other seat in the order of play from this seat, each with
  ``seat`` (absolute), ``position`` (``"next"``, ``"2nd"``, ..., ``"previous"``),
  ``cards``, ``uno`` (``"called"``, ``"catchable"`` or ``None``), ``last_played``,
  ``last_named``, ``score``, ``out`` and ``partner`` (teams);
* ``decision``: what this seat is asked, ``None`` when it is not its move: ``"play"``
  (a turn), ``"drawn_card"`` (play or keep the card just drawn), ``"challenge"`` (a Wild
  Draw Four to challenge or accept), ``"colour"`` (name a Wild starter's colour),
  ``"stack"`` (a draw penalty to stack on or take), ``"jump_in"`` (play an identical card
  out of turn, or pass) or ``"swap"`` (choose whose hand to take after a 7). Calling UNO
  and catching a player who did not are extra legal moves within any decision;
* ``drawn_card``, ``pending_penalty``, ``uno_declared``, ``wild_draw_four_from``,
  ``jump_in_card``, ``catchable_seat``: details of the decision (empty for a seat that does
  not act);
* ``legal_moves``: the legal actions' names, in action-id order (empty when not acting);
* ``match``: ``scores`` (per absolute seat), ``target_score``, ``lowest_wins``, ``over``;
  ``hand_over``, ``winner`` (a seat or ``None``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.rules import Rules

__all__ = ["DECISIONS", "changes_between", "colour_word", "position_name", "seat_view"]

DECISIONS: dict[int, str] = {
    core.PLAY: "play",
    core.AFTER_DRAW: "drawn_card",
    core.CHALLENGE_PHASE: "challenge",
    core.CHOOSE_COLOUR: "colour",
    core.STACK: "stack",
    core.JUMP_IN: "jump_in",
    core.SWAP_TARGET: "swap",
}
"""The decision a view names for each live phase of :data:`uno_env.core.PHASE_NAMES`."""

_COLOUR_WORDS = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}
_ORDINALS = ("", "next", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th")
_FACE_NAMES = C.FACE_NAMES
_ACTION_NAMES = C.ACTION_NAMES
_FACES = np.arange(C.NUM_FACES)


def colour_word(letter: str | None) -> str:
    """``"red"`` for ``"R"`` and so on; ``"not named yet"`` for ``None``."""
    return _COLOUR_WORDS.get(letter or "", "not named yet")


def position_name(steps: int, players: int) -> str:
    """The place of a seat ``steps`` moves ahead in the order of play: ``"next"``,
    ``"2nd"``, ..., and ``"previous"`` for the seat that plays just before (3+ players)."""
    if steps == players - 1 and players > 2:
        return "previous"
    return _ORDINALS[steps]


def _colour_letter(colour: int) -> str | None:
    return C.COLOURS[colour] if 0 <= colour < C.NUM_COLOURS else None


def _card(face: int) -> str | None:
    return _FACE_NAMES[face] if face >= 0 else None


def seat_view(rules: Rules, state: UnoState, seat: int, game: int = 0) -> dict[str, Any]:
    """What ``seat`` may know of game ``game`` of ``state``, as a JSON-able dict.

    Args:
        rules: The rules of the batch.
        state: The batch of games.
        seat: The seat whose view this is (absolute, ``0..players - 1``).
        game: The row of the batch.

    Returns:
        The view (see the module docstring for its keys). Only the seat that must act gets
        a decision, its details and legal moves.

    Raises:
        ValueError: naming ``seat`` or ``game`` when it is outside the table or the batch.
    """
    n = rules.num_players
    if not 0 <= game < state.batch_size:
        raise ValueError(f"game must be in 0..{state.batch_size - 1}, got {game!r}")
    if not 0 <= seat < n or n != state.num_players:
        raise ValueError(f"seat must be in 0..{state.num_players - 1}, got {seat!r}")
    g = game
    phase = int(state.phase[g])
    live = phase != core.OVER
    acting = live and int(state.current[g]) == seat
    direction = int(state.direction[g])
    exposed = int(state.uno_exposed[g])
    sizes = state.hand_size[g].tolist()
    scores = state.scores[g].tolist()
    finish = state.finish_rank[g].tolist()
    last_played = state.last_played[g].tolist()
    last_named = state.last_named[g].tolist()
    hand = [_FACE_NAMES[f] for f in np.repeat(_FACES, state.hands[g, seat]).tolist()]
    others = []
    for steps in range(1, n):
        other = (seat + steps * direction) % n
        uno = None
        if other == exposed:
            uno = "catchable"
        elif sizes[other] == 1 and rules.uno_call and finish[other] < 0:
            uno = "called"
        others.append(
            {
                "seat": other,
                "position": position_name(steps, n),
                "cards": sizes[other],
                "uno": uno,
                "last_played": _card(last_played[other]),
                "last_named": _colour_letter(last_named[other]),
                "score": scores[other],
                "out": finish[other] >= 0,
                "partner": rules.teams and (other - seat) % n == 2,
            }
        )
    legal: list[str] = []
    decision = None
    if acting:
        decision = DECISIONS[phase]
        mask = core.legal_action_mask(rules, state)[g]
        legal = [_ACTION_NAMES[a] for a in np.flatnonzero(mask).tolist()]
    wd4 = int(state.wd4_seat[g])
    winner = int(state.winner[g])
    return {
        "seat": seat,
        "players": n,
        "hand_number": int(state.hand_no[g]) + 1,
        "turn": int(state.turn[g]),
        "hand": hand,
        "top_card": _FACE_NAMES[int(state.top[g])],
        "colour": _colour_letter(int(state.colour[g])),
        "direction": "clockwise" if direction > 0 else "counter-clockwise",
        "draw_pile": C.DECK_SIZE - int(state.draw_pos[g]),
        "discard_pile": int(state.discard_len[g]),
        "you": {
            "score": scores[seat],
            "catchable": exposed == seat,
            "out": finish[seat] >= 0,
        },
        "others": others,
        "decision": decision,
        "drawn_card": _card(int(state.drawn[g])) if acting else None,
        "pending_penalty": int(state.pending[g]) if acting else 0,
        "uno_declared": bool(state.declared[g]) if acting else False,
        "wild_draw_four_from": wd4 if acting and phase == core.CHALLENGE_PHASE else None,
        "jump_in_card": _card(int(state.effect_face[g]))
        if acting and phase == core.JUMP_IN
        else None,
        "catchable_seat": exposed if acting and exposed >= 0 and exposed != seat else None,
        "legal_moves": legal,
        "match": {
            "scores": scores,
            "target_score": rules.target_score,
            "lowest_wins": rules.scoring == "penalty_points",
            "over": bool(state.match_over[g]),
        },
        "hand_over": not live,
        "winner": winner if winner >= 0 and not live else None,
    }


def _count(n: int, what: str = "card") -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _multiset_minus(a: list[str], b: list[str]) -> list[str]:
    """The cards of ``a`` not matched by a card of ``b`` (with repeats)."""
    left = list(b)
    out = []
    for card in a:
        if card in left:
            left.remove(card)
        else:
            out.append(card)
    return out


def changes_between(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What changed between two views of one seat, in plain sentences.

    For a caller that sees a seat only at its own decisions. The sentences are inferred
    from the two views alone: a seat that played several cards in between is told by its
    last card and its card count.

    Args:
        before: An earlier :func:`seat_view` of the seat.
        after: A later one of the same seat.

    Returns:
        The sentences, in the order: a new hand, your cards, each other seat in the order
        of play, the table, the scores. Empty when nothing visible changed.

    Raises:
        ValueError: for views of different seats or table sizes.
    """
    if before.get("seat") != after.get("seat") or before.get("players") != after.get("players"):
        raise ValueError("changes_between compares two views of the same seat at one table")
    lines: list[str] = []
    new_hand = after["hand_number"] != before["hand_number"]
    if new_hand:
        lines.append(
            f"Hand {after['hand_number']} was dealt: you hold {_count(len(after['hand']))}; "
            f"the starter card is {after['top_card']}."
        )
    else:
        gone = _multiset_minus(before["hand"], after["hand"])
        new = _multiset_minus(after["hand"], before["hand"])
        if gone:
            lines.append(f"You played or gave away {', '.join(gone)}.")
        if new:
            lines.append(f"You received {', '.join(new)}.")
        earlier = {o["seat"]: o for o in before["others"]}
        for o in after["others"]:
            was = earlier.get(o["seat"])
            if was is None:
                continue
            who = f"Seat {o['seat']}"
            played = o["last_played"] is not None and (
                o["last_played"] != was["last_played"] or o["cards"] < was["cards"]
            )
            if played:
                named = o["last_named"]
                what = o["last_played"]
                if what in ("W", "W+4") and named is not None:
                    what += f" naming {colour_word(named)}"
                lines.append(f"{who} played {what}; it now has {_count(o['cards'])}.")
            elif o["cards"] > was["cards"]:
                lines.append(f"{who} drew {_count(o['cards'] - was['cards'])}.")
            elif o["cards"] != was["cards"]:
                lines.append(f"{who} now has {_count(o['cards'])}.")
            if o["uno"] != was["uno"] and o["uno"] == "called":
                lines.append(f"{who} called UNO.")
            elif o["uno"] != was["uno"] and o["uno"] == "catchable":
                lines.append(f"{who} is down to one card and did not call UNO.")
            if o["out"] and not was["out"]:
                lines.append(f"{who} went out.")
        if after["direction"] != before["direction"] and after["players"] > 2:
            lines.append(f"Play now goes {after['direction']}.")
    if not new_hand and after["top_card"] != before["top_card"]:
        lines.append(f"The top card is now {after['top_card']}.")
    if after["colour"] != before["colour"] or new_hand:
        lines.append(f"The colour to match is {colour_word(after['colour'])}.")
    if after["match"]["scores"] != before["match"]["scores"]:
        scores = ", ".join(
            ("you" if seat == after["seat"] else f"seat {seat}") + f" {score}"
            for seat, score in enumerate(after["match"]["scores"])
        )
        lines.append(f"Match scores: {scores}.")
    return lines
