"""Legal actions: the one place that decides what may be played."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.state import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    CHOOSE_COLOUR,
    JUMP_IN,
    OVER,
    PLAY,
    STACK,
    SWAP_TARGET,
    BoolArray,
    IntArray,
    UnoState,
)
from uno_env.core.tables import CIRCLE_WILD_COLOURS, COLOUR_MEMBERS, FACE_MATCH, stack_responses
from uno_env.rules import Rules

__all__ = ["legal_action_mask", "playable_faces", "wd4_allowed"]

# The mask is assembled from per-game "parts": one per face (held and playable now), then
# one per non-play action in action order (60..79), so that the mask is four slice copies.
_OTHER_ACTIONS = C.NUM_FACES - C.NUM_PLAY_ACTIONS  # part index = action id + this, from 60
_PART_DRAW = C.DRAW + _OTHER_ACTIONS
_PART_KEEP = C.KEEP + _OTHER_ACTIONS
_PART_CHALLENGE = C.CHALLENGE + _OTHER_ACTIONS
_PART_ACCEPT = C.ACCEPT + _OTHER_ACTIONS
_PART_UNO = C.UNO + _OTHER_ACTIONS
_PART_CATCH = C.CATCH + _OTHER_ACTIONS
_PART_PASS = C.PASS + _OTHER_ACTIONS
_PARTS_NAME_COLOUR = slice(C.NAME_COLOUR + _OTHER_ACTIONS, C.NAME_COLOUR + _OTHER_ACTIONS + 4)
_PART_SWAP = C.SWAP + _OTHER_ACTIONS  # one part per swap target k = 1..9
_NUM_PARTS = C.NUM_ACTIONS + _OTHER_ACTIONS
_UNO_PHASES = np.array([p in (PLAY, AFTER_DRAW, STACK, JUMP_IN) for p in range(8)])


def legal_action_mask(rules: Rules, state: UnoState) -> BoolArray:
    """Return the (B, 80) mask of legal actions of the seat that must act in each game.

    Games that are over have an all-False row. The mask is cached on the state, which is
    why states must be treated as read-only.
    """
    cache = state._mask_cache
    if cache is not None and cache[0] is rules:
        return cache[1]
    mask = _compute_mask(rules, state)
    mask.flags.writeable = False
    state._mask_cache = (rules, mask)
    return mask


def wd4_allowed(rules: Rules, have: BoolArray, colour: npt.NDArray[np.int8]) -> BoolArray:
    """Whether a held Wild Draw Four may be offered, by the colour rule alone."""
    if rules.wd4_challenge or rules.wd4_anytime or rules.wd4_last_resort:
        return np.ones(have.shape[0], dtype=bool)
    # Without the challenge the mask enforces the rule: no card of the current colour.
    return np.asarray(~(have & COLOUR_MEMBERS[colour]).any(axis=1))


def playable_faces(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray
) -> npt.NDArray[np.bool_]:
    """(k, 54): faces the seats hold and may play in a normal turn (wild colours aside)."""
    have = s.hands[games, seats] > 0
    faces = have & FACE_MATCH[s.top[games].astype(np.intp) * (C.NUM_COLOURS + 1) + s.colour[games]]
    _restrict_wd4(rules, faces, have, s.colour[games])
    return faces


def _restrict_wd4(
    rules: Rules, faces: BoolArray, have: BoolArray, colour: npt.NDArray[np.int8]
) -> None:
    """Apply the Wild Draw Four rule in force to rows of playable faces, in place."""
    if rules.wd4_last_resort:
        faces[:, C.WILD_DRAW_FOUR] &= ~faces[:, : C.WILD_DRAW_FOUR].any(axis=1)
    elif not (rules.wd4_challenge or rules.wd4_anytime):
        faces[:, C.WILD_DRAW_FOUR] &= wd4_allowed(rules, have, colour)


def _compute_mask(rules: Rules, s: UnoState) -> BoolArray:
    n_games = s.batch_size
    games = np.arange(n_games)
    current = s.current.astype(np.intp)
    phase = s.phase
    in_play = phase == PLAY
    parts = np.zeros((n_games, _NUM_PARTS), dtype=bool)
    # A card held that matches the top card and the colour (wilds always match).
    held = np.greater(s.hands[games, current], 0, out=parts[:, : C.NUM_FACES])
    held &= FACE_MATCH[s.top.astype(np.intp) * (C.NUM_COLOURS + 1) + s.colour]
    if rules.wd4_last_resort or not (rules.wd4_challenge or rules.wd4_anytime):
        _restrict_wd4(rules, held, s.hands[games, current] > 0, s.colour)
    if rules.voluntary_draw:
        parts[:, _PART_DRAW] = in_play
    else:
        parts[:, _PART_DRAW] = in_play & ~held.any(axis=1)
    if rules.uno_call:
        exposed = s.uno_exposed
        parts[:, _PART_UNO] = _UNO_PHASES[phase] & (s.hand_size[games, current] == 2) & ~s.declared
        parts[:, _PART_CATCH] = (phase != OVER) & (exposed >= 0) & (exposed != s.current)
    special = np.flatnonzero(~in_play)  # few games: after a draw, a challenge, over...
    if special.size:
        parts[special] = _special_parts(rules, s, special, parts[special])
    mask = np.empty((n_games, C.NUM_ACTIONS), dtype=bool)
    mask[:, : C.NUM_COLOURED_FACES] = parts[:, : C.NUM_COLOURED_FACES]
    mask[:, C.PLAY_WILD : C.PLAY_WILD + 4] = parts[:, C.WILD, None]
    mask[:, C.PLAY_WILD_DRAW_FOUR : C.NUM_PLAY_ACTIONS] = parts[:, C.WILD_DRAW_FOUR, None]
    mask[:, C.NUM_PLAY_ACTIONS :] = parts[:, C.NUM_FACES :]
    if rules.colours_in_circle:
        wilds = slice(C.PLAY_WILD, C.NUM_PLAY_ACTIONS)
        mask[:, wilds] &= CIRCLE_WILD_COLOURS[s.colour]
    return mask


def _special_parts(rules: Rules, s: UnoState, games: IntArray, sub: BoolArray) -> BoolArray:
    """The parts of games that are not in a normal turn."""
    sub[:, : C.NUM_FACES] = False
    phase = s.phase[games]
    rows = np.arange(games.size)

    after = phase == AFTER_DRAW
    # Only the card just drawn may be played (it was playable when drawn).
    sub[rows[after], s.drawn[games[after]]] = True
    sub[:, _PART_KEEP] = after

    challenge = phase == CHALLENGE_PHASE
    sub[:, _PART_CHALLENGE] = challenge
    sub[:, _PART_ACCEPT] = challenge
    sub[:, _PARTS_NAME_COLOUR] = (phase == CHOOSE_COLOUR)[:, None]

    stack = np.flatnonzero(phase == STACK)
    if stack.size:
        g = games[stack]
        kind = (s.penalty_kind[g] == 4).astype(np.intp)
        have = s.hands[g, s.current[g].astype(np.intp)] > 0
        answers = have & stack_responses(rules)[kind, s.colour[g]]
        answers[:, C.WILD_DRAW_FOUR] &= wd4_allowed(rules, have, s.colour[g])
        sub[stack, : C.NUM_FACES] = answers
        sub[stack, _PART_DRAW] = True
        sub[stack, _PART_CHALLENGE] = (
            rules.wd4_challenge & (kind == 1) & (s.top[g] == C.WILD_DRAW_FOUR)
        )

    window = np.flatnonzero(phase == JUMP_IN)
    sub[window, s.effect_face[games[window]]] = True  # the window's seat holds it
    sub[window, _PART_PASS] = True

    swap = np.flatnonzero(phase == SWAP_TARGET)
    if swap.size:
        g = games[swap]
        n_players = rules.num_players
        k = np.arange(1, n_players)
        targets = (s.current[g].astype(np.int64)[:, None] + k[None, :]) % n_players
        active = s.finish_rank[g[:, None], targets] < 0
        sub[swap[:, None], _PART_SWAP + k[None, :] - 1] = active
    return sub
