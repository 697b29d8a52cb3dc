"""Determinization: the games one seat cannot tell apart, sampled for search.

A seat sees its own hand, the discard pile, every seat's card count and the decision being
taken; it does not see the other hands, the order of the draw pile, the card another seat
has just drawn, nor whether a Wild Draw Four it faces was a bluff. :func:`determinize`
replaces all of that by a uniform sample of the *unseen cards* (the deck minus the own hand
minus the discards), so that anything a search does afterwards cannot depend on hidden
information: two states of one information set give the same determinizations for the
same keys (the unseen cards are listed in face order before they are shuffled).

What is kept (public, or the seat's own): its hand, both piles' sizes, the discard pile, every
seat's ``hand_size``, the phase and every decision field, scores, turn counters. What is
resampled, per determinization:

* the other seats' hands and the draw pile ``deck[draw_pos:]`` (uniformly: every deal of the
  unseen cards into those slots is equally likely). After a reshuffle the pile can hold only
  the faces the reshuffle put into it (``pile_faces``: they were public discards), so its
  faces are drawn first, exactly by counting the piles that fit (each face at most its
  ``pile_faces`` count, the copies of a face told apart), and the rest go to the hands; the
  dealt part of the deck,
  ``deck[:draw_pos]``, which no rule reads, is blanked to -1 (it recorded the real deal);
* in ``after_draw`` of another seat, the card it drew (``drawn``): one of its cards, which
  must be playable (the phase says so), so deals are drawn again until it is (rejection:
  exactly uniform over the consistent deals);
* in a jump-in window of another seat (house rules), that seat holds the identical card
  (deals are drawn again until it does; after :data:`MAX_TRIES` the card is swapped in);
* a pending Wild Draw Four seen by another seat (``wd4_seat`` set, not the observer):
  ``wd4_illegal`` is recomputed from the sampled hand of its player, against the colour
  current before it (the colour of its player's choice, ``choice_colour``, when it chose the
  card in a normal turn; else the colour of the card under it; where that card is a wild,
  whose named colour the state does not keep, a colour drawn uniformly per determinization);
* the game's random key, renewed, so reshuffles and random rules differ between
  determinizations.

Public history constraints. A seat that drew on its turn unable to play held no card of
the colour to be matched, none of the top card's rank (and, for a player who draws only
when stuck, no wild); only the cards it has drawn since may break such a fact (the state's
``lack_marks``, see :mod:`uno_env.core.history`). Each other hand is dealt as a sequence,
latest card first, and a card that breaks a fact may only sit among the seat's cards drawn
since. A seat that a challenge found bluffing holds a card of the colour it was judged
against until it plays that colour (``shown_holds``): deals without one are drawn again. A
``lacks`` mask given per seat and colour is a hard constraint on every card instead (and the
history is then not used). Deals that break a constraint are drawn again (exact), up to
:data:`MAX_TRIES` times; after that each offending card is swapped with a card of the draw pile allowed in
its place (close to uniform, not exact), and a row where even that fails is reported in
:attr:`Determinizations.relaxed`. Other public
facts a seat may know are not used yet: the cards it handed over in a seven-zero swap, the
seats passed over by a jump-in window, the cards drawn before the playable one under
``until_playable``.

Cost: one compiled loop over the B x K determinizations, about a microsecond each (a
Fisher-Yates shuffle of at most 108 cards with the core's counter-based generator).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.checks import MAX_BATCH_SIZE, check_table
from uno_env.core.history import verdict_colour
from uno_env.core.mask import holds_colour, playable
from uno_env.core.params import RuleParams, StateArrays, arrays_of, rule_params
from uno_env.core.setup import game_keys
from uno_env.core.state import AFTER_DRAW, JUMP_IN, NO_SEAT, OVER, UnoState
from uno_env.files import shown
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.rng import game_word, uniform_of
from uno_env.rules import Rules

__all__ = ["MAX_TRIES", "Determinizations", "determinize", "determinize_with_report"]

MAX_TRIES = 64
"""Deals drawn per determinization before a constraint is given up (see the module)."""

_KEY_STREAM = np.uint64(2**41 + 1)
"""Stream of the renewed game key (beyond every stream the rules use)."""
_COLOUR_STREAM = np.uint64(2**41 + 2)
"""Stream of the colour before a Wild Draw Four when the state cannot tell it."""
_REPAIR_STREAM = np.uint64(2**41 + 3)
"""Stream of the choices of a repair (see :func:`_repair_lacks`)."""
_PILE_STREAM = np.uint64(2**41 + 64)
"""First stream of the draw pile's faces after a reshuffle (one per attempt)."""
_PILE_WORDS = np.uint64(1 << 12)
"""Word offset of the pile's own shuffle within an attempt's stream."""
_FACE_COUNTS = C.FACE_COUNTS.astype(np.int64)
FREE = 1 << 20
"""An allowance that constrains nothing (more cards than a hand can hold)."""


class Determinizations(NamedTuple):
    """What :func:`determinize_with_report` returns.

    Attributes:
        states: The B x K determinizations, game-major: row ``b * K + k`` is game ``b``'s
            k-th.
        relaxed: Rows whose ``lacks`` constraints could not be met in :data:`MAX_TRIES`
            deals (their last deal was kept), (B x K,) bool.
    """

    states: UnoState
    relaxed: npt.NDArray[np.bool_]


def determinize(
    rules: Rules,
    state: UnoState,
    seat: int | npt.ArrayLike,
    keys: npt.ArrayLike,
    *,
    lacks: npt.ArrayLike | None = None,
    wild_facts: bool = False,
) -> UnoState:
    """Sample games consistent with what ``seat`` knows (see the module docstring).

    Args:
        rules: The rules of the batch.
        state: B live games (not modified).
        seat: The observing seat: one for every game, or one per game, shape (B,).
        keys: The random keys of the determinizations: (K,) for one game (B = 1) or (B, K),
            K >= 1, with B x K at most :data:`~uno_env.core.checks.MAX_BATCH_SIZE` (the
            determinizations are one batch of states). The same keys give the same
            determinizations.
        lacks: Public constraints, (N, 4) or (B, N, 4) bool: ``lacks[.., k, c]`` means
            seat ``k`` is known to hold no card of colour ``c`` (wilds are not coloured).
            Ignored for the observing seat, whose hand is known. ``None`` (the default)
            takes the state's public history, ``state.lack_marks``
            (:mod:`uno_env.core.history`); an all-False array uses no constraint.
        wild_facts: With the public history: also "a seat that drew unable to play held
            no wild", true of players who draw only when stuck (the random player) but
            not of one that holds wilds back (``mixbot``).

    Returns:
        The B x K determinizations, game-major (row ``b * K + k``), each a complete state
        that :func:`uno_env.testing.check_invariants` accepts.

    Raises:
        ValueError: naming the value, for a finished game, a seat outside the table, keys or
            ``lacks`` of the wrong shape, more than ``MAX_BATCH_SIZE`` determinizations in
            all, or rules of another table size.
    """
    return determinize_with_report(
        rules, state, seat, keys, lacks=lacks, wild_facts=wild_facts
    ).states


def determinize_with_report(
    rules: Rules,
    state: UnoState,
    seat: int | npt.ArrayLike,
    keys: npt.ArrayLike,
    *,
    lacks: npt.ArrayLike | None = None,
    wild_facts: bool = False,
) -> Determinizations:
    """:func:`determinize`, also saying which rows had to relax the ``lacks`` constraints."""
    check_table(rules, state)
    n_games, n_players = state.batch_size, state.num_players
    if not isinstance(wild_facts, (bool, np.bool_)):
        raise ValueError(f"wild_facts: expected true or false, got {shown(wild_facts)}")
    seats = _seats(seat, n_games, n_players)
    key_arr = _keys(keys, n_games)
    n_det = key_arr.shape[1]
    over = np.flatnonzero(state.phase == OVER)
    if over.size:
        raise ValueError(
            f"game {int(over[0])} is finished (phase over): only a live game can be determinized"
        )
    if lacks is None:
        allow = _allowances_of(state, wild_facts)
    else:
        allow = np.where(_lacks(lacks, n_games, n_players), 0, FREE).astype(np.int32)
        allow = np.concatenate(
            [
                allow,
                np.full((n_games, n_players, C.NUM_LACK_FACTS - C.NUM_COLOURS), FREE, np.int32),
            ],
            axis=2,
        )
    allow = _known_holdings_exempt(state, seats, allow)
    others = np.ones((n_games, n_players), dtype=np.bool_)
    others[np.arange(n_games), seats] = False
    use_lacks = bool((allow[others] < FREE).any())
    # "Holds a colour" facts (a Wild Draw Four found a bluff) come with the public history.
    use_holds = lacks is None and bool(state.shown_holds[others].any())
    rows = np.repeat(np.arange(n_games), n_det)
    out = state.select(rows)
    relaxed = np.zeros(rows.size, dtype=np.bool_)
    cards = np.empty(C.DECK_SIZE, dtype=np.int8)
    dealt = np.empty(C.DECK_SIZE, dtype=np.int8)
    starts = np.empty(C.MAX_PLAYERS + 1, dtype=np.int64)
    ways = np.empty((C.NUM_FACES + 1, C.DECK_SIZE + 1), dtype=np.float64)
    bad = _DETERMINIZE(
        rule_params(rules),
        arrays_of(out),
        np.repeat(seats, n_det),
        np.ascontiguousarray(key_arr.ravel()),
        np.ascontiguousarray(allow),
        use_lacks,
        use_holds,
        n_det,
        cards,
        dealt,
        starts,
        ways,
        relaxed,
    )
    if bad >= 0:  # the counts do not add up: a state built by hand, not a dealt game
        game = int(rows[bad])
        raise ValueError(
            f"game {game}: its cards do not add up (unseen cards of seat {int(seats[game])} "
            "!= other hands + draw pile); check the state with uno_env.testing.check_invariants"
        )
    return Determinizations(out, relaxed)


def _seats(seat: int | npt.ArrayLike, n_games: int, n_players: int) -> npt.NDArray[np.int64]:
    arr = np.asarray(seat)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"seat must be an integer seat in 0..{n_players - 1}, got {seat!r}")
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n_games):
        raise ValueError(
            f"seat must be one int or one per game, shape ({n_games},), got {arr.shape}"
        )
    arr = np.broadcast_to(arr, (n_games,))
    outside = np.flatnonzero((arr < 0) | (arr >= n_players))  # before a cast could wrap it
    if outside.size:
        raise ValueError(
            f"seat {arr[outside[0]].item()} is outside the table: seats are 0..{n_players - 1}"
        )
    return arr.astype(np.int64)


def _keys(keys: npt.ArrayLike, n_games: int) -> npt.NDArray[np.uint64]:
    arr = game_keys(keys, "keys")
    if arr.ndim == 1 and n_games == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] != n_games or arr.shape[1] < 1:
        raise ValueError(
            f"keys must have shape (K,) for one game or ({n_games}, K) with K >= 1, got "
            f"{np.shape(keys)}"
        )
    if arr.size > MAX_BATCH_SIZE:  # every determinization is a state of the batch returned
        raise ValueError(
            f"keys: shape {np.shape(keys)} asks for {arr.size:,} determinizations; at most "
            f"{MAX_BATCH_SIZE:,} (B x K) fit in one batch"
        )
    return arr


def _allowances_of(state: UnoState, wild_facts: bool) -> npt.NDArray[np.int32]:
    """Per seat and lack fact, how many of its latest cards may break the fact, (B, N, 18)."""
    since = state.seat_draws[:, :, None].astype(np.int64) - state.lack_marks
    allow = np.minimum(since, FREE).astype(np.int32)
    if not wild_facts:
        allow[:, :, C.LACK_WILD] = FREE
    return allow


def _known_holdings_exempt(
    state: UnoState, seats: npt.NDArray[np.int64], allow: npt.NDArray[np.int32]
) -> npt.NDArray[np.int32]:
    """Lift the constraints that a card the acting seat is known to hold contradicts.

    In ``after_draw`` another seat's drawn card is playable: its latest slot is free. In a
    jump-in window it holds the card just played: that card's colour and rank are free.
    """
    acting = state.current.astype(np.int64)
    other = acting != seats
    after_draw = np.flatnonzero(other & (state.phase == AFTER_DRAW))
    jump_in = np.flatnonzero(other & (state.phase == JUMP_IN) & (state.effect_face >= 0))
    if after_draw.size == 0 and jump_in.size == 0:
        return allow
    allow = np.array(allow, copy=True)
    allow[after_draw, acting[after_draw], :] = np.maximum(
        allow[after_draw, acting[after_draw], :], 1
    )
    faces = state.effect_face[jump_in].astype(np.int64)
    coloured = faces < C.NUM_COLOURED_FACES
    games = jump_in[coloured]
    allow[games, acting[games], C.FACE_COLOUR[faces[coloured]]] = FREE
    allow[games, acting[games], C.LACK_RANK0 + C.FACE_RANK[faces[coloured]]] = FREE
    wild_games = jump_in[~coloured]
    allow[wild_games, acting[wild_games], C.LACK_WILD] = FREE
    return allow


def _lacks(lacks: npt.ArrayLike, n_games: int, n_players: int) -> npt.NDArray[np.bool_]:
    arr = np.asarray(lacks)
    if arr.dtype != np.bool_:
        raise ValueError(f"lacks must be a boolean array, got dtype {arr.dtype}")
    if arr.shape == (n_players, C.NUM_COLOURS):
        arr = np.broadcast_to(arr, (n_games, n_players, C.NUM_COLOURS))
    if arr.shape != (n_games, n_players, C.NUM_COLOURS):
        raise ValueError(
            f"lacks must have shape ({n_players}, 4) or ({n_games}, {n_players}, 4), got "
            f"{arr.shape}"
        )
    return np.ascontiguousarray(arr)


@jit
def _determinize_all(
    r: RuleParams,
    s: StateArrays,
    seats: np.ndarray,
    keys: np.ndarray,
    allow: np.ndarray,
    use_lacks: bool,
    use_holds: bool,
    per_game: int,
    cards: np.ndarray,
    dealt: np.ndarray,
    starts: np.ndarray,
    ways: np.ndarray,
    relaxed: np.ndarray,
) -> int:
    """Resample every row in place; return the first row whose cards do not add up, or -1."""
    for g in range(seats.shape[0]):
        ok = _determinize_one(
            r,
            s,
            g,
            int(seats[g]),
            keys[g],
            allow,
            use_lacks,
            use_holds,
            g // per_game,
            cards,
            dealt,
            starts,
            ways,
            g % per_game == 0,
        )
        if ok < 0:
            return g
        relaxed[g] = ok == 0
    return -1


@jit
def _determinize_one(
    r: RuleParams,
    s: StateArrays,
    g: int,
    seat: int,
    key: np.uint64,
    allow: np.ndarray,
    use_lacks: bool,
    use_holds: bool,
    game: int,
    cards: np.ndarray,
    dealt: np.ndarray,
    starts: np.ndarray,
    ways: np.ndarray,
    fresh: bool,
) -> int:
    """Resample row ``g`` for ``seat``: 1 done, 0 done with ``lacks`` relaxed, -1 bad counts.

    ``fresh``: the first row of its game (the later ones reuse what it computed in ``ways``).
    """
    n_players = r.num_players
    # The unseen cards, in face order: nothing about their real places is used.
    n_unseen = 0
    for face in range(C.NUM_FACES):
        left = _FACE_COUNTS[face] - int(s.hands[g, seat, face])
        for i in range(int(s.discard_len[g])):
            if s.discard[g, i] == face:
                left -= 1
        for _ in range(left):
            cards[n_unseen] = face
            n_unseen += 1
    # The slots: each other seat's hand (seat order), then the draw pile, top first.
    pos = 0
    for p in range(n_players):
        starts[p] = pos
        if p != seat:
            pos += int(s.hand_size[g, p])
    starts[n_players] = pos
    draw_pos = int(s.draw_pos[g])
    if pos + C.DECK_SIZE - draw_pos != n_unseen:
        return -1
    current = int(s.current[g])
    hidden_drawn = s.phase[g] == AFTER_DRAW and current != seat and s.hand_size[g, current] > 0
    # A jump-in window is open to a seat holding the identical card.
    jump_face = int(s.effect_face[g]) if s.phase[g] == JUMP_IN and current != seat else -1
    wd4_seat = int(s.wd4_seat[g])
    hidden_wd4 = wd4_seat != NO_SEAT and wd4_seat != seat
    # After a reshuffle the draw pile holds only faces that went into it (public): count
    # the ways to fill it under those caps, or give the fact up if the counts cannot meet it
    # (a state built by hand).
    capped = _pile_ways(s, g, cards, n_unseen, pos, ways, fresh)
    met = False
    for attempt in range(MAX_TRIES):
        stream = np.uint64(attempt)
        if capped:
            _deal_capped(s, g, key, stream, cards, n_unseen, pos, ways, dealt)
        else:
            # Fisher-Yates over a fresh copy, driven by (key, attempt, i).
            for i in range(n_unseen):
                dealt[i] = cards[i]
            _shuffle(key, stream, dealt, 0, n_unseen, np.uint64(0))
        if use_lacks and _breaks_lacks(r, seat, dealt, starts, s.hand_size[g], allow, game):
            continue
        if use_holds and _breaks_holds(r, s, g, seat, dealt, starts):
            continue
        _write_deal(r, s, g, seat, dealt, starts)
        met = True
        if hidden_drawn:
            # The drawn card is one of its cards (the first slot: a uniform one), and it
            # was playable, else the seat would not be deciding whether to play it.
            face = int(dealt[starts[current]])
            s.drawn[g] = face
            met = playable(r, s, g, current, face)
        if met and jump_face >= 0:
            met = s.hands[g, current, jump_face] > 0
        if met:
            break
    if not met:
        if use_lacks:
            _repair_lacks(
                r, s, g, seat, dealt, starts, s.hand_size[g], allow, game, n_unseen, key, capped
            )
        if use_holds:
            _repair_holds(r, s, g, seat, dealt, starts, allow, game, n_unseen, capped)
        _write_deal(r, s, g, seat, dealt, starts)
        if hidden_drawn:
            s.drawn[g] = dealt[starts[current]]
        if jump_face >= 0 and s.hands[g, current, jump_face] == 0:
            _bring_face(r, s, g, seat, current, jump_face, key)
        met = not (use_lacks and _breaks_lacks(r, seat, dealt, starts, s.hand_size[g], allow, game))
        met = met and not (use_holds and _breaks_holds(r, s, g, seat, dealt, starts))
    if hidden_drawn and not playable(r, s, g, current, int(s.drawn[g])):
        # Only reachable when the constraints could not be met: keep the hand, pick a card
        # of it that plays (one always does in a consistent state).
        for face in range(C.NUM_FACES):
            if playable(r, s, g, current, face):
                s.drawn[g] = face
                break
    if hidden_wd4:
        below = int(s.discard[g, s.discard_len[g] - 2]) if s.discard_len[g] >= 2 else -1
        before = verdict_colour(s, g, wd4_seat)  # the colour it was chosen on, if known
        if before < 0 and 0 <= below < C.NUM_COLOURED_FACES:
            before = int(C.FACE_COLOUR[below])
        elif before < 0:  # a wild's named colour is not kept in the state: draw one
            before = int(game_word(key, _COLOUR_STREAM, np.uint64(0)) % np.uint64(C.NUM_COLOURS))
        s.wd4_illegal[g] = holds_colour(s, g, wd4_seat, before)
    for k in range(draw_pos):
        s.deck[g, k] = -1  # the real deal: no rule reads it, and it must not leak
    s.key[g] = game_word(key, _KEY_STREAM, np.uint64(0))
    return 1 if met else 0


@jit_inline
def _shuffle(
    key: np.uint64, stream: np.uint64, dealt: np.ndarray, lo: int, hi: int, words: np.uint64
) -> None:
    """Fisher-Yates over ``dealt[lo:hi]``, driven by (key, stream, words + i)."""
    n = hi - lo
    for i in range(n - 1, 0, -1):
        j = int(uniform_of(game_word(key, stream, words + np.uint64(i))) * (i + 1))
        tmp = dealt[lo + i]
        dealt[lo + i] = dealt[lo + j]
        dealt[lo + j] = tmp


@jit_inline
def _pile_known(s: StateArrays, g: int) -> bool:
    """Whether game ``g``'s draw pile came from a reshuffle (``pile_faces`` says what it holds)."""
    for face in range(C.NUM_FACES):  # noqa: SIM110 (no generators in compiled code)
        if s.pile_faces[g, face] > 0:
            return True
    return False


@jit
def _pile_ways(
    s: StateArrays,
    g: int,
    cards: np.ndarray,
    n_unseen: int,
    pile: int,
    ways: np.ndarray,
    fresh: bool,
) -> bool:
    """Count the draw piles that respect ``pile_faces`` into ``ways``; False: no such cap.

    ``ways[f, k]`` is the number of ways to choose ``k`` of the unseen cards of faces ``f``
    and above for the pile, each face at most its ``pile_faces`` count, counting copies as
    distinct cards: sampling the pile's faces by it is uniform over the consistent deals.
    ``pile`` is the first slot of the pile in the deal (the other hands' cards before it).
    Unless ``fresh``, the table of the previous row (the same game, seat and unseen cards)
    is still in ``ways`` and is reused.
    """
    n_pile = n_unseen - pile
    if not _pile_known(s, g) or n_pile <= 0:
        return False
    if not fresh:
        return ways[0, n_pile] > 0.0
    for k in range(n_pile + 1):
        ways[C.NUM_FACES, k] = 1.0 if k == 0 else 0.0
    i = n_unseen
    for face in range(C.NUM_FACES - 1, -1, -1):
        held = 0
        while i > 0 and cards[i - 1] == face:
            held += 1
            i -= 1
        cap = min(held, int(s.pile_faces[g, face]))
        for k in range(n_pile + 1):
            total = 0.0
            choose = 1.0
            for c in range(min(cap, k) + 1):
                total += choose * ways[face + 1, k - c]
                choose = choose * (held - c) / (c + 1)
            ways[face, k] = total
    return ways[0, n_pile] > 0.0


@jit
def _deal_capped(
    s: StateArrays,
    g: int,
    key: np.uint64,
    stream: np.uint64,
    cards: np.ndarray,
    n_unseen: int,
    pile: int,
    ways: np.ndarray,
    dealt: np.ndarray,
) -> None:
    """A uniform deal whose draw pile (``dealt[pile:]``) keeps to ``pile_faces``.

    The pile's faces are drawn by :func:`_pile_ways`'s counts (its copies are the first of
    each face in ``cards``, which copies are alike), then both the pile and the hands' cards
    are shuffled.
    """
    pile_stream = _PILE_STREAM + stream
    k = n_unseen - pile
    at_hand, at_pile = 0, pile
    i = 0
    for face in range(C.NUM_FACES):
        held = 0
        while i + held < n_unseen and cards[i + held] == face:
            held += 1
        cap = min(held, int(s.pile_faces[g, face]))
        u = uniform_of(game_word(key, pile_stream, np.uint64(face))) * ways[face, k]
        take = 0
        choose = 1.0
        for c in range(min(cap, k) + 1):
            part = choose * ways[face + 1, k - c]
            if u < part or c == min(cap, k):
                take = c
                break
            u -= part
            choose = choose * (held - c) / (c + 1)
        for j in range(held):
            if j < take:
                dealt[at_pile] = face
                at_pile += 1
            else:
                dealt[at_hand] = face
                at_hand += 1
        k -= take
        i += held
    _shuffle(key, stream, dealt, 0, pile, np.uint64(0))
    _shuffle(key, stream, dealt, pile, n_unseen, _PILE_WORDS)


@jit
def _write_deal(
    r: RuleParams, s: StateArrays, g: int, seat: int, dealt: np.ndarray, starts: np.ndarray
) -> None:
    """Write a deal of the unseen cards: the other seats' hands, then the draw pile."""
    for p in range(r.num_players):
        if p != seat:
            for face in range(C.NUM_FACES):
                s.hands[g, p, face] = 0
            for i in range(starts[p], starts[p] + int(s.hand_size[g, p])):
                s.hands[g, p, dealt[i]] += 1
    i = starts[r.num_players]
    for k in range(int(s.draw_pos[g]), C.DECK_SIZE):
        s.deck[g, k] = dealt[i]
        i += 1


@jit_inline
def _allowed(face: int, slot: int, allow: np.ndarray, game: int, p: int) -> bool:
    """Whether seat ``p`` may hold ``face`` in hand slot ``slot`` (0: its latest card)."""
    if face < C.NUM_COLOURED_FACES:
        if allow[game, p, face // C.NUM_RANKS] <= slot:
            return False
        return allow[game, p, C.LACK_RANK0 + face % C.NUM_RANKS] > slot
    return allow[game, p, C.LACK_WILD] > slot


@jit
def _breaks_lacks(
    r: RuleParams,
    seat: int,
    dealt: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    allow: np.ndarray,
    game: int,
) -> bool:
    """Whether a seat other than the observer is dealt a card its lack facts forbid."""
    for p in range(r.num_players):
        if p != seat:
            for slot in range(int(sizes[p])):
                if not _allowed(int(dealt[starts[p] + slot]), slot, allow, game, p):
                    return True
    return False


@jit
def _breaks_holds(
    r: RuleParams, s: StateArrays, g: int, seat: int, dealt: np.ndarray, starts: np.ndarray
) -> bool:
    """Whether a seat shown to hold a colour (``shown_holds``) is dealt no card of it."""
    for p in range(r.num_players):
        if p == seat:
            continue
        for colour in range(C.NUM_COLOURS):
            if not s.shown_holds[g, p, colour]:
                continue
            found = False
            for i in range(starts[p], starts[p] + int(s.hand_size[g, p])):
                face = int(dealt[i])
                if face < C.NUM_COLOURED_FACES and face // C.NUM_RANKS == colour:
                    found = True
                    break
            if not found:
                return True
    return False


@jit_inline
def _pile_has_room(
    s: StateArrays, g: int, dealt: np.ndarray, pile: int, n_unseen: int, face: int
) -> bool:
    """Whether the deal's pile (``dealt[pile:n_unseen]``) may take one more ``face``."""
    in_pile = 0
    for k in range(pile, n_unseen):
        in_pile += dealt[k] == face
    return in_pile < s.pile_faces[g, face]


@jit
def _repair_holds(
    r: RuleParams,
    s: StateArrays,
    g: int,
    seat: int,
    dealt: np.ndarray,
    starts: np.ndarray,
    allow: np.ndarray,
    game: int,
    n_unseen: int,
    capped: bool,
) -> None:
    """Give each seat shown to hold a colour and dealt none a card of it from the draw pile,
    in a slot its lack facts allow, for a card of a colour it is not shown to hold."""
    pile = int(starts[r.num_players])
    for p in range(r.num_players):
        if p == seat:
            continue
        lo, hi = int(starts[p]), int(starts[p]) + int(s.hand_size[g, p])
        for colour in range(C.NUM_COLOURS):
            if not s.shown_holds[g, p, colour]:
                continue
            held = False
            for i in range(lo, hi):
                held = held or (
                    dealt[i] < C.NUM_COLOURED_FACES and dealt[i] // C.NUM_RANKS == colour
                )
            if held:
                continue
            done = False
            for k in range(pile, n_unseen):
                face = int(dealt[k])
                if done or face >= C.NUM_COLOURED_FACES or face // C.NUM_RANKS != colour:
                    continue
                for i in range(lo, hi):
                    out = int(dealt[i])
                    keep = out < C.NUM_COLOURED_FACES and s.shown_holds[g, p, out // C.NUM_RANKS]
                    if keep or not _allowed(face, i - lo, allow, game, p):
                        continue
                    if capped and not _pile_has_room(s, g, dealt, pile, n_unseen, out):
                        continue
                    dealt[k] = out
                    dealt[i] = face
                    done = True
                    break


@jit
def _bring_face(
    r: RuleParams, s: StateArrays, g: int, seat: int, holder: int, face: int, key: np.uint64
) -> None:
    """Give ``holder`` a card ``face`` from the draw pile or another hidden hand, in exchange
    for one of its cards (the first held face from a random one on)."""
    start = int(game_word(key, _REPAIR_STREAM, np.uint64(0)) % np.uint64(C.NUM_FACES))
    given = -1
    for i in range(C.NUM_FACES):
        f = (start + i) % C.NUM_FACES
        if s.hands[g, holder, f] > 0:
            given = f
            break
    if given < 0:
        return
    capped = _pile_known(s, g)
    in_pile = 0
    for k in range(int(s.draw_pos[g]), C.DECK_SIZE):
        in_pile += s.deck[g, k] == given
    for k in range(int(s.draw_pos[g]), C.DECK_SIZE):
        if s.deck[g, k] == face and not (capped and in_pile >= s.pile_faces[g, given]):
            s.deck[g, k] = given
            s.hands[g, holder, given] -= 1
            s.hands[g, holder, face] += 1
            return
    for p in range(r.num_players):
        if p != seat and p != holder and s.hands[g, p, face] > 0:
            s.hands[g, p, face] -= 1
            s.hands[g, p, given] += 1
            s.hands[g, holder, given] -= 1
            s.hands[g, holder, face] += 1
            return


@jit
def _repair_lacks(
    r: RuleParams,
    s: StateArrays,
    g: int,
    seat: int,
    dealt: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    allow: np.ndarray,
    game: int,
    n_unseen: int,
    key: np.uint64,
    capped: bool,
) -> None:
    """Swap each forbidden card of a deal with a card of the draw pile allowed in its slot.

    With ``capped`` (after a reshuffle) a card goes into the pile only while the pile holds
    fewer of its face than ``pile_faces``.
    """
    pile = int(starts[r.num_players])
    n_pile = n_unseen - pile
    if n_pile == 0:
        return
    offset = int(game_word(key, _REPAIR_STREAM, np.uint64(1)) % np.uint64(n_pile))
    for p in range(r.num_players):
        if p == seat:
            continue
        for slot in range(int(sizes[p])):
            i = starts[p] + slot
            if _allowed(int(dealt[i]), slot, allow, game, p):
                continue
            if capped and not _pile_has_room(s, g, dealt, pile, n_unseen, int(dealt[i])):
                continue
            for step in range(n_pile):
                k = pile + (offset + step) % n_pile
                if _allowed(int(dealt[k]), slot, allow, game, p):
                    tmp = dealt[i]
                    dealt[i] = dealt[k]
                    dealt[k] = tmp
                    break


_DETERMINIZE = Kernel(_determinize_all)
