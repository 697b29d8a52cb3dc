"""What actions do: playing a card and resolving its effect, penalties, challenges,
jump-in windows, seven-zero exchanges and draws. All functions work in place on the state
copy that :func:`uno_env.core.step` is building, for a subset of its games.

Each game takes one action per step. The functions record in a :class:`Plan` who must draw
how many cards and how far the turn moves; the step executes the draws in one batch, then
ends hands and turns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from uno_env import cards as C
from uno_env.core.mask import playable_faces
from uno_env.core.piles import draw_cards
from uno_env.core.seats import seats_ahead
from uno_env.core.state import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    JUMP_IN,
    PLAY,
    STACK,
    STREAM_STRIDE,
    SWAP_TARGET,
    TURN_STREAM_OFFSET,
    BoolArray,
    IntArray,
    UnoState,
)
from uno_env.core.tables import COLOUR_MEMBERS
from uno_env.rng import keyed_randint
from uno_env.rules import Rules

__all__ = [
    "Plan",
    "after_voluntary_draw",
    "pass_window",
    "play",
    "resolve_challenge",
    "swap_hands",
]


@dataclass
class Plan:
    """What a step still has to do once every game's action is applied.

    Attributes:
        draw_seat: Per game, the seat that must draw (-1: none).
        draw_count: Per game, how many cards it draws.
        ahead: Per game, how many active seats the turn moves on (-1: it does not end).
        ended: Games whose hand ends in this step.
        first_out: Games whose first seat went out in this step (``play_to_last``).
    """

    draw_seat: IntArray
    draw_count: IntArray
    ahead: IntArray
    ended: BoolArray
    first_out: BoolArray

    @classmethod
    def empty(cls, n_games: int) -> Plan:
        """A plan with nothing to do for ``n_games`` games."""
        return cls(
            draw_seat=np.full(n_games, -1, dtype=np.int64),
            draw_count=np.zeros(n_games, dtype=np.int64),
            ahead=np.full(n_games, -1, dtype=np.int64),
            ended=np.zeros(n_games, dtype=bool),
            first_out=np.zeros(n_games, dtype=bool),
        )

    def draw(self, games: IntArray, seats: IntArray, counts: int | IntArray) -> None:
        """Record that ``seats`` must draw ``counts`` cards in ``games``."""
        self.draw_seat[games] = seats
        self.draw_count[games] = counts

    def execute_draws(self, rules: Rules, s: UnoState) -> IntArray:
        """Draw every recorded card in one batch; return the last face drawn per game."""
        drawing = np.flatnonzero(self.draw_count > 0)
        drawn = np.full(self.draw_count.shape, -1, dtype=np.int64)
        if drawing.size:
            seats, counts = self.draw_seat[drawing], self.draw_count[drawing]
            drawn[drawing] = draw_cards(rules, s, drawing, seats, counts)
        self.draw_count[:] = 0
        self.draw_seat[:] = -1
        return drawn


def _penalty_response(rules: Rules, kind4: BoolArray) -> BoolArray:
    """Whether the rules give a victim any answer to a Draw Two / Wild Draw Four penalty."""
    to_two = rules.stack_draw_two or rules.stack_draw_four_on_two or rules.reverse_deflects
    to_four = rules.stack_draw_four or rules.stack_draw_two_on_four or rules.reverse_deflects
    return np.where(kind4, to_four, to_two)


def play(
    rules: Rules,
    s: UnoState,
    plan: Plan,
    games: IntArray,
    seats: IntArray,
    acts: IntArray,
    stacking: BoolArray,
    plain_wild: BoolArray,
) -> None:
    """Play cards (steps 1-4 of docs/engine.md, "Playing a card").

    Args:
        rules: The rules.
        s: The state being built.
        plan: The step's plan.
        games: Games where a card is played.
        seats: The seat playing in each.
        acts: The play actions.
        stacking: The card answers a penalty in phase STACK.
        plain_wild: A Wild Draw Four played without its penalty (RLCard's drawn wild).
    """
    faces = C.ACTION_FACE[acts].astype(np.int64)
    wd4 = faces == C.WILD_DRAW_FOUR
    if wd4.any():
        # Judged against the colour current before the play (RULES.md §5).
        g = games[wd4]
        held = (s.hands[g, seats[wd4]] > 0) & COLOUR_MEMBERS[s.colour[g]]
        s.wd4_illegal[g] = held.any(axis=1)
    s.hands[games, seats, faces] -= 1
    s.hand_size[games, seats] -= 1
    s.discard[games, s.discard_len[games]] = faces
    s.discard_len[games] += 1
    s.top[games] = faces
    s.colour[games] = C.ACTION_COLOUR[acts]
    s.drawn[games] = -1
    s.effect_face[games] = -1  # a jump-in cancels the effect of the card jumped on
    s.effect_seat[games] = -1
    left = s.hand_size[games, seats]
    if rules.uno_call:
        exposed = (left == 1) & ~s.declared[games]
        s.uno_exposed[games[exposed]] = seats[exposed]

    rank = C.FACE_RANK[faces]
    penalty = np.where(rank == C.DRAW_TWO, 2, np.where(wd4 & ~plain_wild, 4, 0))
    pending = s.pending[games].astype(np.int64)
    passed_on = pending + penalty if rules.stack_cumulative else pending
    pending_next = np.where(stacking, passed_on, penalty)

    out = left == 0
    resolve = ~out
    if out.any():
        deflect = stacking & (rank == C.REVERSE)
        resolve |= _go_out(rules, s, plan, games, seats, out, penalty, pending_next, deflect)
    if rules.jump_in:
        may_open = np.flatnonzero(resolve & ~out & ~wd4 & ~stacking)
        opened = _open_windows(rules, s, games[may_open], seats[may_open], faces[may_open])
        resolve[may_open[opened]] = False
    r = np.flatnonzero(resolve)
    if r.size:
        _resolve_effect(
            rules,
            s,
            plan,
            games[r],
            seats[r],
            faces[r],
            stacking[r],
            penalty[r],
            pending_next[r],
            out[r],
        )


def _go_out(
    rules: Rules,
    s: UnoState,
    plan: Plan,
    games: IntArray,
    seats: IntArray,
    out: BoolArray,
    penalty: IntArray,
    pending_next: IntArray,
    deflect: BoolArray,
) -> BoolArray:
    """Seats that emptied their hand; return which of ``games`` still resolve the effect."""
    resolve = np.zeros(games.shape, dtype=bool)
    rows = np.flatnonzero(out)
    g, seat = games[rows], seats[rows]
    if rules.play_to_last:
        n_players = rules.num_players
        rank = (s.finish_rank[g] >= 0).sum(axis=1)
        s.finish_rank[g, seat] = rank
        first = rank == 0
        s.winner[g[first]] = seat[first]
        plan.first_out[g[first]] = True
        ended = rank >= n_players - 2  # one active seat left: it takes the last place
        last = np.argmax(s.finish_rank[g] < 0, axis=1)
        s.finish_rank[g[ended], last[ended]] = n_players - 1
        resolve[rows[~ended]] = True
        rows, g, seat, last = rows[ended], g[ended], seat[ended], last[ended]
    else:
        s.winner[g] = seat
    plan.ended[g] = True
    # The hand ends, but a final Draw Two / Wild Draw Four (or a deflecting Reverse) still
    # makes its victim draw what it would have faced (RULES.md §7, docs/engine.md).
    pen = np.flatnonzero((penalty[rows] > 0) | deflect[rows])
    if pen.size:
        gp, sp = g[pen], seat[pen]
        if rules.play_to_last:
            victims = last[pen]  # the one seat still playing
        else:
            # A deflect goes back to the seat before; a penalty to the seat after.
            step = np.where(deflect[rows][pen], -1, 1) * s.direction[gp].astype(np.int64)
            victims = (sp + step) % rules.num_players
        plan.draw(gp, victims, pending_next[rows][pen])
    return resolve


def _resolve_effect(
    rules: Rules,
    s: UnoState,
    plan: Plan,
    games: IntArray,
    seats: IntArray,
    faces: IntArray,
    stacking: BoolArray,
    penalty: IntArray,
    pending_next: IntArray,
    out: BoolArray,
) -> None:
    """Step 4 of docs/engine.md: the effect of ``faces`` played by ``seats``.

    ``penalty`` is the card's own draw penalty (2, 4, or 0: none or a plain wild) and
    ``pending_next`` what the victim would face (the stack, cumulative or not).
    """
    s.current[games] = seats  # the base of every "k seats ahead"
    rank = np.where(faces < C.NUM_COLOURED_FACES, C.FACE_RANK[faces], -1)
    ahead = np.ones(games.shape, dtype=np.int64)

    if rules.seven_zero:
        zero = rank == 0
        if zero.any():
            _rotate_hands(rules, s, games[zero])
        seven = (rank == 7) & ~out
        if seven.any():
            g = games[seven]
            s.phase[g] = SWAP_TARGET
            s.effect_face[g] = faces[seven]
            s.effect_seat[g] = seats[seven]
            ahead[seven] = -1

    ahead[rank == C.SKIP] = 2

    reverse = rank == C.REVERSE
    if reverse.any():
        s.direction[games[reverse]] *= -1
        deflect = reverse & stacking
        if deflect.any():
            # The penalty goes back, in the new direction, to the seat that played it.
            g = games[deflect]
            back = seats_ahead(rules, s, g, seats[deflect], 1)
            _face_penalty(s, g, back, s.pending[g], s.penalty_kind[g], -1, STACK)
            ahead[deflect] = -1
        ahead[reverse & ~stacking] = 0 if rules.two_player else 1

    has_penalty = penalty > 0
    if has_penalty.any():
        p = np.flatnonzero(has_penalty)
        g, seat, kind4 = games[p], seats[p], penalty[p] == 4
        victims = seats_ahead(rules, s, g, seat, 1)
        respond = _penalty_response(rules, kind4)
        challenge = ~respond & kind4 & rules.wd4_challenge
        direct = ~respond & ~challenge
        if respond.any():
            r = respond
            wd4_seat = np.where(kind4, seat, -1)[r]
            _face_penalty(s, g[r], victims[r], pending_next[p][r], penalty[p][r], wd4_seat, STACK)
        if challenge.any():
            c = challenge
            _face_penalty(s, g[c], victims[c], pending_next[p][c], 0, seat[c], CHALLENGE_PHASE)
        plan.draw(g[direct], victims[direct], pending_next[p][direct])
        ahead[p[respond | challenge]] = -1
        ahead[p[direct]] = 2
    moving = ahead >= 0
    plan.ahead[games[moving]] = ahead[moving]


def _face_penalty(
    s: UnoState,
    games: IntArray,
    victims: IntArray,
    pending: int | IntArray,
    kind: int | IntArray,
    wd4_seat: int | IntArray,
    phase: int,
) -> None:
    """Make ``victims`` the seats to act, facing a draw penalty in ``phase``."""
    s.phase[games] = phase
    s.current[games] = victims
    s.pending[games] = pending
    s.penalty_kind[games] = kind
    s.wd4_seat[games] = wd4_seat
    s.declared[games] = False
    s.drawn[games] = -1


def _rotate_hands(rules: Rules, s: UnoState, games: IntArray) -> None:
    """Seven-zero: every active hand passes to the next active seat in the direction of play."""
    s.uno_exposed[games] = -1  # the one-card hand has moved on
    if not rules.play_to_last:
        for direction in (1, -1):
            g = games[s.direction[games] == direction]
            s.hands[g] = np.roll(s.hands[g], direction, axis=1)
            s.hand_size[g] = np.roll(s.hand_size[g], direction, axis=1)
        return
    for game in games:  # rare: a 0 played with finished seats at the table
        active = np.flatnonzero(s.finish_rank[game] < 0)
        receivers = np.roll(active, -int(s.direction[game]))
        s.hands[game, receivers] = s.hands[game, active].copy()
        s.hand_size[game, receivers] = s.hand_size[game, active].copy()


def swap_hands(rules: Rules, s: UnoState, plan: Plan, games: IntArray, ks: IntArray) -> None:
    """Seven-zero: the seat that played a 7 swaps hands with the seat ``k`` places ahead."""
    seats = s.current[games].astype(np.int64)
    targets = (seats + ks) % rules.num_players
    mine, theirs = s.hands[games, seats].copy(), s.hands[games, targets].copy()
    s.hands[games, seats], s.hands[games, targets] = theirs, mine
    my_size, their_size = s.hand_size[games, seats].copy(), s.hand_size[games, targets].copy()
    s.hand_size[games, seats], s.hand_size[games, targets] = their_size, my_size
    s.uno_exposed[games] = -1
    s.effect_face[games] = -1
    s.effect_seat[games] = -1
    plan.ahead[games] = 1


def _holder_after(
    rules: Rules, s: UnoState, games: IntArray, origin: IntArray, faces: IntArray, after: IntArray
) -> IntArray:
    """The first seat, in turn order from ``origin``, past position ``after``, holding the face.

    Positions count seats ahead of ``origin`` (1 .. N-1). Returns -1 where there is none.
    """
    n_players = rules.num_players
    offsets = np.arange(1, n_players)
    direction = s.direction[games].astype(np.int64)
    candidates = (origin[:, None] + offsets[None, :] * direction[:, None]) % n_players
    holds = s.hands[games[:, None], candidates, faces[:, None]] > 0
    eligible = holds & (offsets[None, :] > after[:, None])
    first = np.argmax(eligible, axis=1)
    return np.where(eligible.any(axis=1), candidates[np.arange(games.size), first], -1)


def _open_windows(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray, faces: IntArray
) -> BoolArray:
    """Open a jump-in window where another seat holds the identical card."""
    holder = _holder_after(rules, s, games, seats, faces, np.zeros_like(seats))
    opened = holder >= 0
    g = games[opened]
    s.phase[g] = JUMP_IN
    s.current[g] = holder[opened]
    s.effect_face[g] = faces[opened]
    s.effect_seat[g] = seats[opened]
    s.declared[g] = False
    return opened


def pass_window(rules: Rules, s: UnoState, plan: Plan, games: IntArray) -> None:
    """The seat in a jump-in window passes: the next holder gets it, or the window closes."""
    origin = s.effect_seat[games].astype(np.int64)
    faces = s.effect_face[games].astype(np.int64)
    direction = s.direction[games].astype(np.int64)
    position = ((s.current[games].astype(np.int64) - origin) * direction) % rules.num_players
    holder = _holder_after(rules, s, games, origin, faces, position)
    moving = holder >= 0
    s.current[games[moving]] = holder[moving]
    s.declared[games[moving]] = False
    closing = ~moving
    if closing.any():
        g = games[closing]
        s.phase[g] = PLAY
        s.declared[g] = False  # the turn goes back to the seat that played the card
        s.effect_face[g] = -1
        s.effect_seat[g] = -1
        f = faces[closing]
        penalty = np.where(C.FACE_RANK[f] == C.DRAW_TWO, 2, 0)
        none = np.zeros(g.size, dtype=bool)
        _resolve_effect(rules, s, plan, g, origin[closing], f, none, penalty, penalty, none)


def resolve_challenge(rules: Rules, s: UnoState, plan: Plan, games: IntArray) -> None:
    """A Wild Draw Four is challenged (in CHALLENGE, or in STACK when allowed)."""
    guilty = s.wd4_illegal[games]
    g = games[guilty]
    # The bluffer draws four instead; the chain ends; the challenger takes a normal turn.
    plan.draw(g, s.wd4_seat[g].astype(np.int64), 4)
    plan.ahead[g] = 0
    # A legal Wild Draw Four: the challenger draws the penalty plus two and loses the turn.
    i = games[~guilty]
    plan.draw(i, s.current[i].astype(np.int64), s.pending[i].astype(np.int64) + 2)
    plan.ahead[i] = 1
    s.wd4_illegal[games] = False


def after_voluntary_draw(
    rules: Rules, s: UnoState, plan: Plan, games: IntArray, drawn: IntArray
) -> None:
    """Decide what happens after a voluntary draw (the first card is already drawn)."""
    seats = s.current[games].astype(np.int64)
    if rules.after_draw == "rlcard":
        _rlcard_auto_play(rules, s, plan, games, seats, drawn)
        return
    playable = _playable(rules, s, games, seats, drawn)
    if rules.draw_rule == "until_playable":
        for _ in range(rules.draw_cap - 1):
            again = np.flatnonzero(~playable & (drawn >= 0))
            if not again.size:
                break
            ones = np.ones(again.size, dtype=np.int64)
            drawn[again] = draw_cards(rules, s, games[again], seats[again], ones)
            playable[again] = _playable(rules, s, games[again], seats[again], drawn[again])
    kept = games[playable]
    s.phase[kept] = AFTER_DRAW
    s.drawn[kept] = drawn[playable]
    plan.ahead[games[~playable]] = 1


def _playable(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray, faces: IntArray
) -> BoolArray:
    """Whether each drawn face (-1: none) may be played now by its seat."""
    ok = playable_faces(rules, s, games, seats)[np.arange(games.size), np.maximum(faces, 0)]
    return np.asarray(ok & (faces >= 0))


def _rlcard_auto_play(
    rules: Rules, s: UnoState, plan: Plan, games: IntArray, seats: IntArray, drawn: IntArray
) -> None:
    """RLCard: a drawn wild or current-colour card is played at once; any other is kept."""
    wild = drawn >= C.WILD
    coloured = (drawn >= 0) & (drawn < C.NUM_COLOURED_FACES)
    matching = coloured & (C.FACE_COLOUR[np.maximum(drawn, 0)] == s.colour[games])
    auto = wild | matching
    plan.ahead[games[~auto]] = 1
    if not auto.any():
        return
    g, seat, face = games[auto], seats[auto], drawn[auto]
    streams = (
        s.hand_no[g].astype(np.uint64) * np.uint64(STREAM_STRIDE)
        + np.uint64(TURN_STREAM_OFFSET)
        + s.turn[g].astype(np.uint64)
    )
    colour = keyed_randint(s.key[g], streams, C.NUM_COLOURS)
    acts = np.where(
        face == C.WILD,
        C.PLAY_WILD + colour,
        np.where(face == C.WILD_DRAW_FOUR, C.PLAY_WILD_DRAW_FOUR + colour, face),
    )
    none = np.zeros(g.size, dtype=bool)
    play(rules, s, plan, g, seat, acts, none, face == C.WILD_DRAW_FOUR)
