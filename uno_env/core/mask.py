"""Legal actions: the one place that decides what may be played."""

from __future__ import annotations

import numpy as np

from uno_env import cards as C
from uno_env.core.checks import check_table
from uno_env.core.params import RuleParams, StateArrays, arrays_of, rule_params
from uno_env.core.state import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    CHOOSE_COLOUR,
    DRAW_FOUR_PENALTY,
    JUMP_IN,
    OVER,
    PLAY,
    STACK,
    SWAP_TARGET,
    BoolArray,
    UnoState,
)
from uno_env.core.tables import FACE_MATCH, FACING_DRAW_FOUR, FACING_DRAW_TWO
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.rules import Rules

__all__ = ["fill_mask", "holds_colour", "legal_action_mask", "playable"]


def legal_action_mask(rules: Rules, state: UnoState) -> BoolArray:
    """Return the (B, 80) mask of legal actions of the seat that must act in each game.

    Games that are over have an all-False row. The mask is cached on the state, which is
    why states must be treated as read-only.

    Raises:
        TypeError: if ``rules`` or ``state`` is not a Rules or an UnoState.
        ValueError: if the rules are for another table size than the state.
    """
    cache = state._mask_cache if isinstance(state, UnoState) else None
    if cache is not None and cache[0] is rules:
        return cache[1]
    check_table(rules, state)
    mask = np.empty((state.batch_size, C.NUM_ACTIONS), dtype=np.bool_)
    _FILL_MASKS(rule_params(rules), arrays_of(state), mask)
    mask.flags.writeable = False
    object.__setattr__(state, "_mask_cache", (rules, mask))  # a cache, not a field
    return mask


@jit
def _fill_masks(r: RuleParams, s: StateArrays, out: np.ndarray) -> None:
    """Write every game's mask of legal actions into the rows of ``out``."""
    for g in range(out.shape[0]):
        fill_mask(r, s, g, out[g])


_FILL_MASKS = Kernel(_fill_masks)


@jit_inline
def holds_colour(s: StateArrays, g: int, seat: int, colour: int) -> bool:
    """Whether ``seat`` holds a card of ``colour`` (never for colour 4, "not named yet")."""
    if colour >= C.NUM_COLOURS:
        return False
    for face in range(colour * C.NUM_RANKS, (colour + 1) * C.NUM_RANKS):
        if s.hands[g, seat, face] > 0:
            return True
    return False


@jit_inline
def _wd4_colour_rule(r: RuleParams, s: StateArrays, g: int, seat: int) -> bool:
    """Whether a held Wild Draw Four may be offered, by the colour rule alone.

    Without the challenge the mask enforces the rule: no card of the current colour.
    """
    if r.wd4_challenge or r.wd4_anytime or r.wd4_last_resort:
        return True
    return not holds_colour(s, g, seat, s.colour[g])


@jit_inline
def _holds_other_play(s: StateArrays, g: int, seat: int) -> bool:
    """Whether ``seat`` holds a playable card other than a Wild Draw Four."""
    match = FACE_MATCH[int(s.top[g]) * (C.NUM_COLOURS + 1) + int(s.colour[g])]
    for face in range(C.WILD_DRAW_FOUR):  # noqa: SIM110 (no generators in compiled code)
        if match[face] and s.hands[g, seat, face] > 0:
            return True
    return False


@jit_inline
def playable(r: RuleParams, s: StateArrays, g: int, seat: int, face: int) -> bool:
    """Whether ``seat`` holds ``face`` and may play it in a normal turn (wild colours aside)."""
    if face < 0 or s.hands[g, seat, face] <= 0:
        return False
    if not FACE_MATCH[int(s.top[g]) * (C.NUM_COLOURS + 1) + int(s.colour[g]), face]:
        return False
    if face == C.WILD_DRAW_FOUR:
        return _wd4_legal(r, s, g, seat, _holds_other_play(s, g, seat))
    return True


@jit_inline
def _wd4_legal(r: RuleParams, s: StateArrays, g: int, seat: int, other_play: bool) -> bool:
    """Whether a held Wild Draw Four may be played, given whether another card may be."""
    if r.wd4_last_resort:
        return not other_play
    return _wd4_colour_rule(r, s, g, seat)


@jit_inline
def fill_mask(r: RuleParams, s: StateArrays, g: int, out: np.ndarray) -> None:
    """Write game ``g``'s (80,) mask of legal actions into ``out``."""
    for action in range(C.NUM_ACTIONS):
        out[action] = False
    phase = s.phase[g]
    if phase == OVER:
        return
    seat = int(s.current[g])
    if phase == PLAY:
        hand = s.hands[g, seat]
        match = FACE_MATCH[int(s.top[g]) * (C.NUM_COLOURS + 1) + int(s.colour[g])]
        other_play = False  # a playable card other than a Wild Draw Four
        for face in range(C.NUM_COLOURED_FACES):
            legal = hand[face] > 0 and match[face]
            out[face] = legal
            other_play |= legal
        if hand[C.WILD] > 0:
            other_play = True
            _allow_face(out, C.WILD)
        wd4 = hand[C.WILD_DRAW_FOUR] > 0 and _wd4_legal(r, s, g, seat, other_play)
        if wd4:
            _allow_face(out, C.WILD_DRAW_FOUR)
        out[C.DRAW] = r.voluntary_draw or not (other_play or wd4)
    elif phase == AFTER_DRAW:
        _allow_face(out, s.drawn[g])  # only the card just drawn (it was playable when drawn)
        out[C.KEEP] = True
    elif phase == CHALLENGE_PHASE:
        out[C.CHALLENGE] = True
        out[C.ACCEPT] = True
    elif phase == CHOOSE_COLOUR:
        for c in range(C.NUM_COLOURS):
            out[C.NAME_COLOUR + c] = True
    elif phase == STACK:
        four = s.penalty_kind[g] == DRAW_FOUR_PENALTY
        facing = FACING_DRAW_FOUR if four else FACING_DRAW_TWO
        answers = r.stack_table[facing, s.colour[g]]
        for face in range(C.NUM_FACES):
            held = answers[face] and s.hands[g, seat, face] > 0
            if held and (face != C.WILD_DRAW_FOUR or _wd4_colour_rule(r, s, g, seat)):
                _allow_face(out, face)
        out[C.DRAW] = True
        out[C.CHALLENGE] = r.wd4_challenge and four and s.top[g] == C.WILD_DRAW_FOUR
    elif phase == JUMP_IN:
        _allow_face(out, s.effect_face[g])  # the window's seat holds the identical card
        out[C.PASS] = True
    elif phase == SWAP_TARGET:
        for k in range(1, r.num_players):
            out[C.SWAP + k - 1] = s.finish_rank[g, (seat + k) % r.num_players] < 0
    if r.uno_call:
        in_turn = phase in (PLAY, AFTER_DRAW, STACK, JUMP_IN)
        if in_turn and s.hand_size[g, seat] == 2 and not s.declared[g]:
            out[C.UNO] = True
        exposed = s.uno_exposed[g]
        if exposed >= 0 and exposed != seat:
            out[C.CATCH] = True
    if r.colours_in_circle:
        # A wild names the colour after the current one in R, Y, G, B (none while unnamed).
        colour = s.colour[g]
        allowed = (colour + 1) % C.NUM_COLOURS if colour < C.NUM_COLOURS else -1
        for c in range(C.NUM_COLOURS):
            if c != allowed:
                out[C.PLAY_WILD + c] = False
                out[C.PLAY_WILD_DRAW_FOUR + c] = False


@jit_inline
def _allow_face(out: np.ndarray, face: int) -> None:
    """Make the plays of ``face`` legal: its action, or a wild's four colour choices."""
    if face < C.NUM_COLOURED_FACES:
        out[face] = True
    else:
        first = C.PLAY_WILD if face == C.WILD else C.PLAY_WILD_DRAW_FOUR
        for c in range(C.NUM_COLOURS):
            out[first + c] = True
