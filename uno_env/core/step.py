"""Stepping: validate one action per game, apply it, and pass the turn."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.config_values import check_switch
from uno_env.core import effects as E
from uno_env.core.checks import is_int
from uno_env.core.effects import seat_ahead
from uno_env.core.events import clear_events
from uno_env.core.history import (
    NO_CHOICE,
    record_choice,
    record_draw_on_turn,
    record_named_colour,
    record_stuck,
)
from uno_env.core.mask import fill_mask, legal_action_mask
from uno_env.core.params import (
    RuleParams,
    Scratch,
    StateArrays,
    arrays_of,
    rule_params,
    scratch,
)
from uno_env.core.piles import draw_cards
from uno_env.core.plan import (
    AHEAD,
    DRAW_COUNT,
    DRAW_SEAT,
    ENDED,
    FIRST_OUT,
    NOBODY,
    TURN_STAYS,
    clear_plan,
    plan_draw,
)
from uno_env.core.scoring import finish_hand, winner_takes_points
from uno_env.core.state import (
    AFTER_DRAW,
    NO_FACE,
    NO_SEAT,
    OVER,
    PHASE_NAMES,
    PLAY,
    STACK,
    IllegalActionError,
    IntArray,
    UnoState,
    clear_decision,
)
from uno_env.files import shown
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.rules import Rules

__all__ = ["apply_one", "step"]


def step(
    rules: Rules, state: UnoState, actions: npt.ArrayLike, *, in_place: bool = False
) -> UnoState:
    """Apply one action per game and return the new state.

    Args:
        rules: The rules of the batch.
        state: The current state (not modified, unless ``in_place``).
        actions: Action ids, shape (B,). Games that are over ignore theirs.
        in_place: Update ``state`` itself and return it, saving the copy. For owners of a
            state that nobody else holds (an env's private game); the actions are still
            validated first, so an illegal one leaves the state untouched.

    Returns:
        The state after the actions.

    Raises:
        IllegalActionError: if a live game's action is out of range or illegal. The message
            names the game, the action and the legal actions; ``state`` is untouched.
        ValueError: naming ``in_place`` if it is not a bool.
    """
    mask = legal_action_mask(rules, state)  # checks the rules and the state first
    acts = _as_actions(state, actions)
    new = state if check_switch("in_place", in_place) else state.copy()
    # One compiled call checks every game's action, applies them all (or none), and fills
    # the masks of the new state, which nearly every caller asks for next.
    next_mask = np.empty_like(mask)
    params = rule_params(rules)
    bad = _CHECK_AND_APPLY(params, arrays_of(new), scratch(), mask, acts, next_mask)
    if bad >= 0:
        _raise_illegal(state, mask, acts, bad)
    next_mask.flags.writeable = False
    object.__setattr__(new, "_mask_cache", (rules, next_mask))
    return new


def _as_actions(state: UnoState, actions: npt.ArrayLike) -> IntArray:
    """The actions as a C-contiguous int64 array of shape (B,), or IllegalActionError."""
    if isinstance(actions, list | tuple):  # NumPy would turn a huge int into a float
        for given in actions:
            if isinstance(given, int) and not -(2**63) <= given < 2**63:
                _refuse_action(given)
    acts = np.asarray(actions)
    if acts.dtype == np.int64 and acts.shape == (state.batch_size,) and acts.flags.c_contiguous:
        return acts  # the common case, checked cheaply
    shape = acts.shape
    if acts.ndim == 0:
        acts = acts.reshape(1)
    if acts.shape != (state.batch_size,):
        raise IllegalActionError(
            f"actions: expected one action per game, shape ({state.batch_size},), got "
            f"{shown(actions)} of shape {shape}"
        )
    if acts.dtype != np.int64:
        if np.issubdtype(acts.dtype, np.integer) or np.issubdtype(acts.dtype, np.floating):
            # A cast would wrap what int64 cannot hold (2**64 - 1 becomes -1) and cut a
            # fraction: such a value is refused as given, before it turns into another.
            if acts.dtype.kind == "f":
                fits = np.isfinite(acts) & (acts == np.round(acts)) & (np.abs(acts) < 2.0**63)
            else:  # only an unsigned 64-bit integer can pass int64's maximum
                fits = acts <= np.iinfo(np.int64).max
            if not np.all(fits):
                _refuse_action(acts[np.flatnonzero(~fits)[0]].item())
            acts = acts.astype(np.int64)
        else:  # bools, text, None, objects: each integer among them as the int it is
            values = acts.tolist()
            for given in values:
                if not is_int(given) or not -(2**63) <= given < 2**63:
                    _refuse_action(given)
            acts = np.array(values, dtype=np.int64)
    return np.ascontiguousarray(acts)


def _refuse_action(given: object) -> None:
    raise IllegalActionError(
        f"action {shown(given)} is not an action id (whole numbers 0..{C.NUM_ACTIONS - 1})"
    )


def _raise_illegal(state: UnoState, mask: npt.NDArray[np.bool_], acts: IntArray, bad: int) -> None:
    act = int(acts[bad])
    legal = C.action_names(np.flatnonzero(mask[bad]))
    if not 0 <= act < C.NUM_ACTIONS:
        raise IllegalActionError(
            f"game {bad}: action {act} is out of range 0..{C.NUM_ACTIONS - 1}; "
            f"legal actions: {legal}"
        )
    raise IllegalActionError(
        f"game {bad} (seat {int(state.current[bad])}, phase "
        f"{PHASE_NAMES[state.phase[bad]]}): action {act} {C.action_name(act)!r} is not "
        f"legal; legal actions: {legal}"
    )


@jit
def _first_illegal(phase: np.ndarray, mask: np.ndarray, acts: np.ndarray) -> int:
    """The first live game whose action is out of range or illegal (-1: none)."""
    for g in range(acts.shape[0]):
        if phase[g] != OVER:
            act = acts[g]
            if act < 0 or act >= C.NUM_ACTIONS or not mask[g, act]:
                return g
    return -1


@jit
def _check_and_apply(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    mask: np.ndarray,
    acts: np.ndarray,
    next_mask: np.ndarray,
) -> int:
    """Apply the actions in place if all are legal, and fill ``next_mask`` with the new
    state's legal actions; else change nothing and return the first bad game."""
    bad = _first_illegal(s.phase, mask, acts)
    if bad < 0:
        _apply(r, s, w, acts)
        for g in range(acts.shape[0]):
            fill_mask(r, s, g, next_mask[g])
    return bad


_CHECK_AND_APPLY = Kernel(_check_and_apply)


@jit
def _apply(r: RuleParams, s: StateArrays, w: Scratch, acts: np.ndarray) -> None:
    """Apply validated actions in place; games that are over ignore theirs."""
    for g in range(acts.shape[0]):
        if s.phase[g] != OVER:
            apply_one(r, s, w, g, int(acts[g]))


@jit_inline
def apply_one(r: RuleParams, s: StateArrays, w: Scratch, g: int, act: int) -> None:
    """One game's decision (docs/engine.md, "A step"), compiled: no check of the action.

    The per-game step of :func:`step`, public for compiled callers that choose legal actions
    themselves (the search's rollouts, :mod:`unolab.agents.rollout`); ``act`` must be legal.

    The action records in the plan who must draw how many cards; the draw follows, then
    the outcomes that depend on the drawn cards (a voluntary draw, RLCard's automatic play)
    and finally the end of the hand or the passing of the turn.
    """
    plan = w.plan
    clear_plan(plan)
    clear_events(s, g)
    phase = s.phase[g]
    current = int(s.current[g])

    if act == C.CATCH:
        plan_draw(plan, int(s.uno_exposed[g]), r.uno_penalty)
        s.uno_exposed[g] = NO_SEAT
    elif act == C.UNO:
        s.declared[g] = True
    else:
        s.uno_exposed[g] = NO_SEAT  # the next seat has begun its decision: the exposure ends

    voluntary = False
    stuck_colour = stuck_top = -1
    if C.NAME_COLOUR <= act < C.NAME_COLOUR + C.NUM_COLOURS:
        s.colour[g] = act - C.NAME_COLOUR
        record_named_colour(s, g, current, act - C.NAME_COLOUR)
        s.phase[g] = PLAY
    elif act == C.KEEP:
        plan[AHEAD] = 1
    elif act == C.ACCEPT or (act == C.DRAW and phase == STACK):
        plan_draw(plan, current, int(s.pending[g]))
        plan[AHEAD] = 1
    elif act == C.CHALLENGE:
        E.resolve_challenge(r, s, plan, g)
    elif act == C.DRAW:
        record_draw_on_turn(s, g, current)
        stuck_colour, stuck_top = int(s.colour[g]), int(s.top[g])
        plan_draw(plan, current, 1)
        voluntary = True
    elif act == C.PASS:
        E.pass_window(r, s, w, plan, g)
    elif act >= C.SWAP:
        E.swap_hands(r, s, plan, g, act - C.SWAP + 1)
    elif act < C.NUM_PLAY_ACTIONS:
        if phase == PLAY:
            record_choice(s, g, current)
        else:  # a drawn card, a stacked penalty, a jump-in: not a choice in a normal turn
            s.choice_draws[g, current] = NO_CHOICE
        E.play(r, s, w, plan, g, current, act, stacking=phase == STACK, plain_wild=False)

    drawn = _execute_draw(r, s, w, g)
    if voluntary:
        E.after_voluntary_draw(r, s, w, plan, g, drawn)
        _execute_draw(r, s, w, g)  # the penalty of RLCard's automatic play, if any
        record_stuck(s, g, current, stuck_colour, stuck_top, s.phase[g] == AFTER_DRAW)

    if plan[FIRST_OUT]:
        # play_to_last: the first seat out scores what is left at that moment.
        winner_takes_points(r, s, g)
    if plan[ENDED]:
        s.step_skipped[g] = NO_SEAT  # nobody loses a turn in a hand that is over
        finish_hand(r, s, g)
    elif plan[AHEAD] != TURN_STAYS:
        _end_turn(r, s, g, int(plan[AHEAD]))

    s.turn[g] += 1
    if s.phase[g] != OVER and s.turn[g] >= r.max_turns:
        _truncate(s, g)


@jit_inline
def _execute_draw(r: RuleParams, s: StateArrays, w: Scratch, g: int) -> int:
    """Draw the cards the plan records; return the last face drawn (``NO_FACE``: none)."""
    plan = w.plan
    if plan[DRAW_COUNT] <= 0:
        return NO_FACE
    drawn = draw_cards(r, s, w, g, int(plan[DRAW_SEAT]), int(plan[DRAW_COUNT]))
    plan[DRAW_SEAT] = NOBODY
    plan[DRAW_COUNT] = 0
    return drawn


@jit_inline
def _end_turn(r: RuleParams, s: StateArrays, g: int, seats_on: int) -> None:
    """Pass the turn ``seats_on`` active seats in the direction of play; a new turn starts."""
    s.current[g] = seat_ahead(r, s, g, int(s.current[g]), seats_on)
    clear_decision(s, g, PLAY)


@jit_inline
def _truncate(s: StateArrays, g: int) -> None:
    """Stop a hand at ``max_turns``. Nobody acts in it: clear the decision it stopped in."""
    s.truncated[g] = True
    s.uno_exposed[g] = NO_SEAT
    clear_decision(s, g, OVER)
