"""What actions do: playing a card and resolving its effect, penalties, challenges,
jump-in windows, seven-zero exchanges and draws.

Every function works in place on one game ``g`` of the state copy that
:func:`uno_env.core.step` is building. Each game takes one action per step; the functions
record in a small ``plan`` array (:mod:`uno_env.core.plan`) who must draw how many cards and
how far the turn moves, and the step carries the plan out (draws first, then the end of the
hand or of the turn).

**Seat arithmetic** (:func:`seat_ahead`): who is k seats ahead, skipping seats that have finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from uno_env import cards as C
from uno_env.config_values import check_int
from uno_env.core.checks import check_game, check_table, is_int
from uno_env.core.events import (
    EVENT_BLUFF_CAUGHT,
    EVENT_BLUFF_CLEARED,
    EVENT_DIRECTION,
    EVENT_HANDS_MOVED,
    EVENT_UNO_EXPOSED,
)
from uno_env.core.history import NO_CHOICE, record_guilty, record_innocent, record_play
from uno_env.core.mask import holds_colour, playable
from uno_env.core.params import RuleParams, Scratch, StateArrays, arrays_of, rule_params
from uno_env.core.piles import draw_cards
from uno_env.core.plan import AHEAD, ENDED, FIRST_OUT, TURN_STAYS, plan_draw
from uno_env.core.state import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    DRAW_FOUR_PENALTY,
    DRAW_TWO_PENALTY,
    JUMP_IN,
    NO_FACE,
    NO_PENALTY,
    NO_SEAT,
    PLAY,
    STACK,
    STREAM_STRIDE,
    SWAP_TARGET,
    TURN_STREAM_OFFSET,
)
from uno_env.files import shown
from uno_env.jit import jit, jit_inline
from uno_env.rng import game_word

if TYPE_CHECKING:
    from uno_env.core.state import UnoState
    from uno_env.rules import Rules

__all__ = [
    "CHALLENGE_SURCHARGE",
    "after_voluntary_draw",
    "pass_window",
    "play",
    "resolve_challenge",
    "seat_ahead",
    "seat_ahead_of",
    "swap_hands",
]


@jit_inline
def seat_ahead(r: RuleParams, s: StateArrays, g: int, seat: int, k: int) -> int:
    """The seat ``k`` active seats ahead of ``seat`` in game ``g``'s direction of play.

    ``k = 0`` is the seat itself. Seats that finished (``play_to_last``) are skipped.
    """
    n_players = r.num_players
    direction = int(s.direction[g])
    if not r.play_to_last or k == 0:
        return (seat + k * direction) % n_players
    reached = 0
    for offset in range(1, 2 * n_players + 1):
        candidate = (seat + offset * direction) % n_players
        if s.finish_rank[g, candidate] < 0:
            reached += 1
            if reached >= k:
                return candidate
    return (seat + direction) % n_players  # unreachable: a live hand has an active seat


def seat_ahead_of(rules: Rules, state: UnoState, seat: int, k: int = 1, game: int = 0) -> int:
    """:func:`seat_ahead` asked from Python, for one game (a narrator, a table view).

    The compiled rule's own Python code answers, so the question costs no compile and the
    answer is the rule's.

    Raises:
        TypeError: for rules or a state of the wrong kind.
        ValueError: naming ``seat``, ``k`` or ``game`` as given, when it is no integer or
            (``seat``, ``game``) outside the table or the batch.
    """
    check_table(rules, state)
    seat = check_int("seat", seat, 0, rules.num_players - 1)
    if not is_int(k):
        raise ValueError(f"k: expected an integer, got {shown(k)}")
    game = check_game("game", game, state.batch_size)
    rule = getattr(seat_ahead, "py_func", seat_ahead)  # the plain function under NUMBA_DISABLE_JIT
    return int(rule(rule_params(rules), arrays_of(state), game, seat, int(k)))


CHALLENGE_SURCHARGE = 2
"""Cards a challenger of a legal Wild Draw Four draws on top of the penalty."""

_STRIDE = np.uint64(STREAM_STRIDE)
_TURN_OFFSET = np.uint64(TURN_STREAM_OFFSET)


@jit_inline
def play(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    plan: np.ndarray,
    g: int,
    seat: int,
    act: int,
    stacking: bool,
    plain_wild: bool,
) -> None:
    """Play a card (steps 1-4 of docs/engine.md, "Playing a card").

    Args:
        r: The rules.
        s: The state being built.
        w: Work space.
        plan: The step's plan for game ``g``.
        g: The game.
        seat: The seat playing.
        act: The play action.
        stacking: The card answers a penalty in phase STACK.
        plain_wild: A Wild Draw Four played without its penalty (RLCard's drawn wild).
    """
    face = int(C.ACTION_FACE[act])
    wd4 = face == C.WILD_DRAW_FOUR
    if wd4:
        # Judged against the colour current before the play (docs/rules.md §7).
        s.wd4_illegal[g] = holds_colour(s, g, seat, int(s.colour[g]))
    s.hands[g, seat, face] -= 1
    s.hand_size[g, seat] -= 1
    record_play(s, g, seat, act)
    s.discard[g, s.discard_len[g]] = face
    s.discard_len[g] += 1
    s.top[g] = face
    s.colour[g] = C.ACTION_COLOUR[act]
    s.drawn[g] = NO_FACE
    s.effect_face[g] = NO_FACE  # a jump-in cancels the effect of the card jumped on
    s.effect_seat[g] = NO_SEAT
    left = int(s.hand_size[g, seat])
    if r.uno_call and left == 1 and not s.declared[g]:
        s.uno_exposed[g] = seat
        s.step_events[g] |= EVENT_UNO_EXPOSED

    rank = int(C.FACE_RANK[face])
    if rank == C.DRAW_TWO:
        penalty = DRAW_TWO_PENALTY
    elif wd4 and not plain_wild:
        penalty = DRAW_FOUR_PENALTY
    else:
        penalty = NO_PENALTY
    pending = int(s.pending[g])
    passed_on = pending + penalty if r.stack_cumulative else pending
    pending_next = passed_on if stacking else penalty

    out = left == 0
    resolve = not out
    if out:
        deflect = stacking and rank == C.REVERSE
        resolve = _go_out(r, s, plan, g, seat, penalty, pending_next, deflect=deflect)
    may_jump_in = r.jump_in and resolve and not out and not wd4 and not stacking
    if may_jump_in and _open_window(r, s, g, seat, face):
        resolve = False
    if resolve:
        _resolve_effect(
            r, s, w, plan, g, seat, face, penalty, pending_next, stacking=stacking, out=out
        )


@jit
def _go_out(
    r: RuleParams,
    s: StateArrays,
    plan: np.ndarray,
    g: int,
    seat: int,
    penalty: int,
    pending_next: int,
    deflect: bool,
) -> bool:
    """``seat`` emptied its hand; return whether the card's effect still resolves."""
    n_players = r.num_players
    last = NO_SEAT
    if r.play_to_last:
        rank = 0
        for other in range(n_players):
            if s.finish_rank[g, other] >= 0:
                rank += 1
        s.finish_rank[g, seat] = rank
        if rank == 0:
            s.winner[g] = seat
            plan[FIRST_OUT] = 1
        if rank < n_players - 2:
            return True  # the others play on
        # One active seat is left: it takes the last place.
        for other in range(n_players):
            if s.finish_rank[g, other] < 0:
                last = other
                break
        s.finish_rank[g, last] = n_players - 1
    else:
        s.winner[g] = seat
    plan[ENDED] = 1
    # The hand ends, but a final Draw Two / Wild Draw Four (or a deflecting Reverse) still
    # makes its victim draw what it would have faced (docs/rules.md §11, docs/engine.md).
    if penalty != NO_PENALTY or deflect:
        if r.play_to_last:
            victim = last  # the one seat still playing
        else:
            # A deflect goes back to the seat before; a penalty to the seat after.
            step = -1 if deflect else 1
            victim = (seat + step * int(s.direction[g])) % n_players
        plan_draw(plan, victim, pending_next)
    return False


@jit_inline
def _resolve_effect(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    plan: np.ndarray,
    g: int,
    seat: int,
    face: int,
    penalty: int,
    pending_next: int,
    stacking: bool,
    out: bool,
) -> None:
    """Step 4 of docs/engine.md: the effect of ``face`` played by ``seat``.

    ``penalty`` is the card's own draw penalty (``DRAW_TWO_PENALTY``, ``DRAW_FOUR_PENALTY``,
    or ``NO_PENALTY``: none or a plain wild) and ``pending_next`` what the victim would face
    (the stack, cumulative or not). ``stacking``: the card answers a penalty (phase STACK);
    ``out``: it was the seat's last card (``play_to_last``).
    """
    s.current[g] = seat  # the base of every "k seats ahead"
    rank = int(C.FACE_RANK[face]) if face < C.NUM_COLOURED_FACES else -1
    ahead = 1
    if r.seven_zero:
        if rank == 0:
            _rotate_hands(r, s, w, g)
        elif rank == 7 and not out:
            s.phase[g] = SWAP_TARGET
            s.effect_face[g] = face
            s.effect_seat[g] = seat
            ahead = TURN_STAYS
    if rank == C.SKIP:
        ahead = 2
        s.step_skipped[g] = seat_ahead(r, s, g, seat, 1)
    elif rank == C.REVERSE:
        s.direction[g] = -s.direction[g]
        s.step_events[g] |= EVENT_DIRECTION
        if stacking:
            # The penalty goes back, in the new direction, to the seat that played it.
            back = seat_ahead(r, s, g, seat, 1)
            pending, kind = int(s.pending[g]), int(s.penalty_kind[g])
            _face_penalty(s, g, back, pending, kind, NO_SEAT, STACK)
            ahead = TURN_STAYS
        elif r.two_player:
            ahead = 0  # with two players a Reverse skips the other seat
            s.step_skipped[g] = seat_ahead(r, s, g, seat, 1)
        else:
            ahead = 1
    if penalty != NO_PENALTY:
        kind4 = penalty == DRAW_FOUR_PENALTY
        victim = seat_ahead(r, s, g, seat, 1)
        respond = r.respond_to_four if kind4 else r.respond_to_two
        if respond:
            _face_penalty(s, g, victim, pending_next, penalty, seat if kind4 else NO_SEAT, STACK)
            ahead = TURN_STAYS
        elif kind4 and r.wd4_challenge:
            _face_penalty(s, g, victim, pending_next, NO_PENALTY, seat, CHALLENGE_PHASE)
            ahead = TURN_STAYS
        else:
            plan_draw(plan, victim, pending_next)
            ahead = 2
            s.step_skipped[g] = victim
    if ahead != TURN_STAYS:
        plan[AHEAD] = ahead


@jit_inline
def _face_penalty(
    s: StateArrays, g: int, victim: int, pending: int, kind: int, wd4_seat: int, phase: int
) -> None:
    """Make ``victim`` the seat to act, facing a draw penalty in ``phase``."""
    s.phase[g] = phase
    s.current[g] = victim
    s.pending[g] = pending
    s.penalty_kind[g] = kind
    s.wd4_seat[g] = wd4_seat
    s.declared[g] = False
    s.drawn[g] = NO_FACE


@jit
def _rotate_hands(r: RuleParams, s: StateArrays, w: Scratch, g: int) -> None:
    """Seven-zero: every active hand passes to the next active seat in the direction of play."""
    s.uno_exposed[g] = NO_SEAT  # the one-card hand has moved on
    s.step_events[g] |= EVENT_HANDS_MOVED
    direction = int(s.direction[g])
    n_active = 0
    for seat in range(r.num_players):
        for face in range(C.NUM_FACES):
            w.hands[seat, face] = s.hands[g, seat, face]
        for colour in range(C.NUM_COLOURS):
            w.lacks[seat, colour] = s.shown_lacks[g, seat, colour]
            s.shown_holds[g, seat, colour] = False  # not kept across a moving hand
        for fact in range(C.NUM_LACK_FACTS):  # relative to the giver's draws
            w.marks[seat, fact] = s.lack_marks[g, seat, fact] - s.seat_draws[g, seat]
        w.sizes[seat] = s.hand_size[g, seat]
        if not r.play_to_last or s.finish_rank[g, seat] < 0:
            w.seats[n_active] = seat
            n_active += 1
    for i in range(n_active):
        giver = w.seats[i]
        receiver = w.seats[(i + direction) % n_active]
        for face in range(C.NUM_FACES):
            s.hands[g, receiver, face] = w.hands[giver, face]
        for colour in range(C.NUM_COLOURS):  # the facts travel with the hand they describe
            s.shown_lacks[g, receiver, colour] = w.lacks[giver, colour]
        for fact in range(C.NUM_LACK_FACTS):
            s.lack_marks[g, receiver, fact] = w.marks[giver, fact] + s.seat_draws[g, receiver]
        s.choice_draws[g, receiver] = NO_CHOICE  # that choice was made from another hand
        s.hand_size[g, receiver] = w.sizes[giver]


@jit
def swap_hands(r: RuleParams, s: StateArrays, plan: np.ndarray, g: int, k: int) -> None:
    """Seven-zero: the seat that played a 7 swaps hands with the seat ``k`` places ahead."""
    seat = int(s.current[g])
    target = (seat + k) % r.num_players
    for face in range(C.NUM_FACES):
        mine = s.hands[g, seat, face]
        s.hands[g, seat, face] = s.hands[g, target, face]
        s.hands[g, target, face] = mine
    for colour in range(C.NUM_COLOURS):  # the facts travel with the hand they describe
        mine_lacks = s.shown_lacks[g, seat, colour]
        s.shown_lacks[g, seat, colour] = s.shown_lacks[g, target, colour]
        s.shown_lacks[g, target, colour] = mine_lacks
        s.shown_holds[g, seat, colour] = False  # not kept across a moving hand
        s.shown_holds[g, target, colour] = False
    shift = s.seat_draws[g, target] - s.seat_draws[g, seat]
    s.choice_draws[g, seat] = NO_CHOICE  # the choices were made from the other hands
    s.choice_draws[g, target] = NO_CHOICE
    for fact in range(C.NUM_LACK_FACTS):  # re-based to the receiver's draws
        mine_mark = s.lack_marks[g, seat, fact]
        s.lack_marks[g, seat, fact] = s.lack_marks[g, target, fact] - shift
        s.lack_marks[g, target, fact] = mine_mark + shift
    my_size = s.hand_size[g, seat]
    s.hand_size[g, seat] = s.hand_size[g, target]
    s.hand_size[g, target] = my_size
    s.uno_exposed[g] = NO_SEAT
    s.step_events[g] |= EVENT_HANDS_MOVED
    s.effect_face[g] = NO_FACE
    s.effect_seat[g] = NO_SEAT
    plan[AHEAD] = 1


@jit_inline
def _holder_after(r: RuleParams, s: StateArrays, g: int, origin: int, face: int, after: int) -> int:
    """The first seat, in turn order from ``origin``, past position ``after``, holding the face.

    Positions count seats ahead of ``origin`` (1 .. N-1). Returns ``NO_SEAT`` where there is
    none.
    """
    n_players = r.num_players
    direction = int(s.direction[g])
    for offset in range(after + 1, n_players):
        candidate = (origin + offset * direction) % n_players
        if s.hands[g, candidate, face] > 0:
            return candidate
    return NO_SEAT


@jit
def _open_window(r: RuleParams, s: StateArrays, g: int, seat: int, face: int) -> bool:
    """Open a jump-in window if another seat holds the identical card."""
    holder = _holder_after(r, s, g, seat, face, 0)
    if holder == NO_SEAT:
        return False
    s.phase[g] = JUMP_IN
    s.current[g] = holder
    s.effect_face[g] = face
    s.effect_seat[g] = seat
    s.declared[g] = False
    return True


@jit
def pass_window(r: RuleParams, s: StateArrays, w: Scratch, plan: np.ndarray, g: int) -> None:
    """The seat in a jump-in window passes: the next holder gets it, or the window closes."""
    origin = int(s.effect_seat[g])
    face = int(s.effect_face[g])
    direction = int(s.direction[g])
    position = ((int(s.current[g]) - origin) * direction) % r.num_players
    holder = _holder_after(r, s, g, origin, face, position)
    if holder != NO_SEAT:
        s.current[g] = holder
        s.declared[g] = False
        return
    s.phase[g] = PLAY
    s.declared[g] = False  # the turn goes back to the seat that played the card
    s.effect_face[g] = NO_FACE
    s.effect_seat[g] = NO_SEAT
    # A Wild Draw Four never opens a window: the only penalty here is a Draw Two's.
    penalty = DRAW_TWO_PENALTY if C.FACE_RANK[face] == C.DRAW_TWO else NO_PENALTY
    _resolve_effect(r, s, w, plan, g, origin, face, penalty, penalty, stacking=False, out=False)


@jit
def resolve_challenge(r: RuleParams, s: StateArrays, plan: np.ndarray, g: int) -> None:
    """A Wild Draw Four is challenged (in CHALLENGE, or in STACK when allowed)."""
    if s.wd4_illegal[g]:
        # The bluffer draws four instead; the chain ends; the challenger takes a normal turn.
        # Everyone now knows it holds a card of the colour it was played on.
        record_guilty(s, g, int(s.wd4_seat[g]))
        plan_draw(plan, int(s.wd4_seat[g]), DRAW_FOUR_PENALTY)
        plan[AHEAD] = 0
        s.step_events[g] |= EVENT_BLUFF_CAUGHT
    else:
        # A legal Wild Draw Four: the challenger draws the penalty plus two, loses the turn.
        # Everyone now knows its player held no card of the colour it was played on.
        record_innocent(s, g, int(s.wd4_seat[g]))
        plan_draw(plan, int(s.current[g]), int(s.pending[g]) + CHALLENGE_SURCHARGE)
        plan[AHEAD] = 1
        s.step_events[g] |= EVENT_BLUFF_CLEARED
    s.wd4_illegal[g] = False


@jit_inline
def after_voluntary_draw(
    r: RuleParams, s: StateArrays, w: Scratch, plan: np.ndarray, g: int, drawn: int
) -> None:
    """Decide what happens after a voluntary draw (the first card is already drawn)."""
    seat = int(s.current[g])
    if r.rlcard_after_draw:
        _rlcard_auto_play(r, s, w, plan, g, seat, drawn)
        return
    can_play = playable(r, s, g, seat, drawn)
    if r.until_playable:
        for _ in range(r.draw_cap - 1):
            if can_play or drawn < 0:
                break
            drawn = draw_cards(r, s, w, g, seat, 1)
            can_play = playable(r, s, g, seat, drawn)
    if can_play:
        s.phase[g] = AFTER_DRAW
        s.drawn[g] = drawn
    else:
        plan[AHEAD] = 1


@jit
def _rlcard_auto_play(
    r: RuleParams, s: StateArrays, w: Scratch, plan: np.ndarray, g: int, seat: int, drawn: int
) -> None:
    """RLCard: a drawn wild or current-colour card is played at once; any other is kept."""
    wild = drawn >= C.WILD
    matching = 0 <= drawn < C.NUM_COLOURED_FACES and C.FACE_COLOUR[drawn] == s.colour[g]
    if not (wild or matching):
        plan[AHEAD] = 1
        return
    stream = np.uint64(s.hand_no[g]) * _STRIDE + _TURN_OFFSET + np.uint64(s.turn[g])
    colour = int(game_word(s.key[g], stream, np.uint64(0)) % np.uint64(C.NUM_COLOURS))
    if drawn == C.WILD:
        act = C.PLAY_WILD + colour
    elif drawn == C.WILD_DRAW_FOUR:
        act = C.PLAY_WILD_DRAW_FOUR + colour
    else:
        act = drawn
    play(r, s, w, plan, g, seat, act, stacking=False, plain_wild=drawn == C.WILD_DRAW_FOUR)
