"""Stepping: validate one action per game, apply it, and pass the turn."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core import effects
from uno_env.core.mask import legal_action_mask
from uno_env.core.scoring import finish_hands, winner_takes_points
from uno_env.core.seats import seats_ahead
from uno_env.core.state import (
    OVER,
    PHASE_NAMES,
    PLAY,
    STACK,
    IllegalActionError,
    IntArray,
    UnoState,
)
from uno_env.rules import Rules

__all__ = ["step"]


def step(rules: Rules, state: UnoState, actions: npt.ArrayLike) -> UnoState:
    """Apply one action per game and return the new state.

    Args:
        rules: The rules of the batch.
        state: The current state (not modified).
        actions: Action ids, shape (B,). Games that are over ignore theirs.

    Returns:
        The state after the actions.

    Raises:
        IllegalActionError: if a live game's action is out of range or illegal. The message
            names the game, the action and the legal actions; ``state`` is untouched.
    """
    acts = _validated_actions(rules, state, actions)
    new = state.copy()
    _apply(rules, new, acts)
    return new


def _validated_actions(rules: Rules, state: UnoState, actions: npt.ArrayLike) -> IntArray:
    acts = np.asarray(actions)
    if acts.ndim == 0:
        acts = acts.reshape(1)
    if acts.shape != (state.batch_size,):
        raise IllegalActionError(
            f"expected one action per game, shape ({state.batch_size},), got {acts.shape}"
        )
    if not np.issubdtype(acts.dtype, np.integer):
        if np.issubdtype(acts.dtype, np.floating) and np.all(acts == np.round(acts)):
            acts = acts.astype(np.int64)
        else:
            raise IllegalActionError(f"actions must be integers, got dtype {acts.dtype}")
    acts = acts.astype(np.int64)
    live = state.live
    out_of_range = live & ((acts < 0) | (acts >= C.NUM_ACTIONS))
    if out_of_range.any():
        g = int(np.flatnonzero(out_of_range)[0])
        raise IllegalActionError(
            f"game {g}: action {int(acts[g])} is out of range 0..{C.NUM_ACTIONS - 1}; "
            f"legal actions: {_legal_names(rules, state, g)}"
        )
    mask = legal_action_mask(rules, state)
    games = np.arange(state.batch_size)
    illegal = live & ~mask[games, np.where(live, acts, 0)]
    if illegal.any():
        g = int(np.flatnonzero(illegal)[0])
        raise IllegalActionError(
            f"game {g} (seat {int(state.current[g])}, phase {PHASE_NAMES[state.phase[g]]}): "
            f"action {int(acts[g])} {C.action_name(int(acts[g]))!r} is not legal; "
            f"legal actions: {_legal_names(rules, state, g)}"
        )
    return np.where(live, acts, -1)


def _legal_names(rules: Rules, state: UnoState, game: int) -> list[str]:
    return C.action_names(np.flatnonzero(legal_action_mask(rules, state)[game]))


def _apply(rules: Rules, s: UnoState, acts: IntArray) -> None:
    """Apply validated actions in place (-1 marks games that are over).

    Each game takes exactly one action, so each game draws at most once per decision: the
    actions record in a plan who must draw how many cards, one batched draw follows, then
    the outcomes that depend on the drawn cards (a voluntary draw, RLCard's automatic play)
    and finally the end of hands and the passing of turns.
    """
    live = acts >= 0
    phase = s.phase.copy()
    current = s.current.astype(np.int64)
    plan = effects.Plan.empty(s.batch_size)

    catch = np.flatnonzero(acts == C.CATCH)
    if catch.size:
        plan.draw(catch, s.uno_exposed[catch].astype(np.int64), rules.uno_penalty)
        s.uno_exposed[catch] = -1
    s.declared[acts == C.UNO] = True
    # Any other action means the next seat has begun its decision: the exposure ends.
    s.uno_exposed[live & (acts != C.CATCH) & (acts != C.UNO)] = -1

    name = (acts >= C.NAME_COLOUR) & (acts < C.NAME_COLOUR + 4)
    if name.any():
        s.colour[name] = acts[name] - C.NAME_COLOUR
        s.phase[name] = PLAY
    plan.ahead[acts == C.KEEP] = 1
    accept = np.flatnonzero(acts == C.ACCEPT)
    plan.draw(accept, current[accept], s.pending[accept].astype(np.int64))
    plan.ahead[accept] = 1
    challenge = np.flatnonzero(acts == C.CHALLENGE)
    if challenge.size:
        effects.resolve_challenge(rules, s, plan, challenge)
    take_penalty = np.flatnonzero((acts == C.DRAW) & (phase == STACK))
    plan.draw(take_penalty, current[take_penalty], s.pending[take_penalty].astype(np.int64))
    plan.ahead[take_penalty] = 1
    voluntary = np.flatnonzero((acts == C.DRAW) & (phase == PLAY))
    plan.draw(voluntary, current[voluntary], 1)
    passing = np.flatnonzero(acts == C.PASS)
    if passing.size:
        effects.pass_window(rules, s, plan, passing)
    swap = np.flatnonzero(acts >= C.SWAP)
    if swap.size:
        effects.swap_hands(rules, s, plan, swap, acts[swap] - C.SWAP + 1)
    play = np.flatnonzero((acts >= 0) & (acts < C.NUM_PLAY_ACTIONS))
    if play.size:
        stacking = phase[play] == STACK
        plain = np.zeros(play.size, dtype=bool)
        effects.play(rules, s, plan, play, current[play], acts[play], stacking, plain)

    drawn = plan.execute_draws(rules, s)
    if voluntary.size:
        effects.after_voluntary_draw(rules, s, plan, voluntary, drawn[voluntary])
        if rules.after_draw == "rlcard":
            plan.execute_draws(rules, s)  # penalties of RLCard's automatic plays

    first_out = np.flatnonzero(plan.first_out)
    if first_out.size:
        # play_to_last: the first seat out scores what is left at that moment.
        s.hand_points[first_out] = winner_takes_points(rules, s, first_out)
    ended = np.flatnonzero(plan.ended)
    if ended.size:
        finish_hands(rules, s, ended)
    plan.ahead[ended] = -1
    moving = np.flatnonzero(plan.ahead >= 0)
    if moving.size:
        _end_turn(rules, s, moving, plan.ahead[moving])

    s.turn[live] += 1
    truncate = live & (s.phase != OVER) & (s.turn >= rules.max_turns)
    if truncate.any():
        s.truncated[truncate] = True
        s.phase[truncate] = OVER
        # Nobody acts in a finished hand: clear the decision it stopped in.
        s.uno_exposed[truncate] = -1
        s.drawn[truncate] = -1
        s.pending[truncate] = 0
        s.penalty_kind[truncate] = 0
        s.wd4_seat[truncate] = -1
        s.declared[truncate] = False
        s.effect_face[truncate] = -1
        s.effect_seat[truncate] = -1
    s._mask_cache = None


def _end_turn(rules: Rules, s: UnoState, games: IntArray, seats_on: IntArray) -> None:
    """Pass the turn ``seats_on`` active seats in the direction of play; a new turn starts."""
    base = s.current[games].astype(np.int64)
    s.current[games] = seats_ahead(rules, s, games, base, seats_on)
    s.phase[games] = PLAY
    s.declared[games] = False
    s.drawn[games] = -1
    s.pending[games] = 0
    s.penalty_kind[games] = 0
    s.wd4_seat[games] = -1
    s.effect_face[games] = -1
    s.effect_seat[games] = -1
