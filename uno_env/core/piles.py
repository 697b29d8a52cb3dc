"""The draw pile and the discard pile: drawing, reshuffling, seeded shuffles."""

from __future__ import annotations

import numpy as np

from uno_env import cards as C
from uno_env.core.events import EVENT_RESHUFFLED
from uno_env.core.params import RuleParams, Scratch, StateArrays
from uno_env.core.state import NO_FACE, SEAT_STREAM_OFFSET, STREAM_STRIDE
from uno_env.jit import jit, jit_inline
from uno_env.rng import game_word, uniform_of

__all__ = ["draw_cards", "keyed_order", "reshuffle_order"]

_STRIDE = np.uint64(STREAM_STRIDE)
_SEAT_OFFSET = np.uint64(SEAT_STREAM_OFFSET)
_ONE = np.uint64(1)


@jit
def keyed_order(key: np.uint64, stream: np.uint64, w: Scratch, n: int) -> None:
    """Write ``keyed_permutation(key, stream, n)`` of :mod:`uno_env.rng` to ``w.order[:n]``:
    the stable argsort of the first ``n`` words of the stream."""
    words, order = w.words, w.order
    for i in range(n):
        words[i] = game_word(key, stream, np.uint64(i))
        # Insertion sort: stable, allocation-free, and a pile has at most 108 cards.
        j = i
        while j > 0 and words[order[j - 1]] > words[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i


@jit
def reshuffle_order(s: StateArrays, w: Scratch, g: int, n: int) -> None:
    """Write the permutation of game ``g``'s next reshuffle to ``w.order[:n]``
    (:func:`keyed_order` of stream ``hand * 2**20 + shuffles + 1``), and count the
    reshuffle."""
    stream = np.uint64(s.hand_no[g]) * _STRIDE + np.uint64(s.shuffles[g]) + _ONE
    s.shuffles[g] += 1
    keyed_order(s.key[g], stream, w, n)


@jit
def _reshuffle_discards(r: RuleParams, s: StateArrays, w: Scratch, g: int) -> None:
    """Shuffle the discard pile of game ``g`` into a new draw pile.

    The top card stays on the table, unless ``reshuffle_top`` (RLCard) takes it too; then
    ``top`` and ``colour`` still say what to match. The faces that go into the pile were
    discards, seen by everyone: ``pile_faces`` records them (public history), so a seat
    knows the draw pile holds none but these until the next reshuffle.
    """
    keep = 0 if r.reshuffle_top else 1
    n = int(s.discard_len[g]) - keep
    if n <= 0:
        return
    reshuffle_order(s, w, g, n)
    s.step_events[g] |= EVENT_RESHUFFLED
    start = C.DECK_SIZE - n
    for face in range(C.NUM_FACES):
        s.pile_faces[g, face] = 0
    for i in range(n):
        face = int(s.discard[g, w.order[i]])
        s.deck[g, start + i] = face
        s.pile_faces[g, face] += 1
    s.draw_pos[g] = start
    if keep:
        s.discard[g, 0] = s.discard[g, n]
    s.discard_len[g] = keep


@jit
def _pick_for_seat(s: StateArrays, g: int, seat: int) -> None:
    """Per-seat draw streams: bring a uniform pick from the stock to the top of the pile.

    A seat's k-th draw of the hand (``seat_draws``, counted by :func:`draw_cards`) is driven
    by the k-th number of its own stream, so that
    replays of a deal under another seating stay correlated while the draw distribution
    stays exact (a uniform pick from the remaining stock).
    """
    pos = int(s.draw_pos[g])
    stream = np.uint64(s.hand_no[g]) * _STRIDE + _SEAT_OFFSET + np.uint64(seat)
    u = uniform_of(game_word(s.key[g], stream, np.uint64(s.seat_draws[g, seat])))
    pick = pos + int(u * (C.DECK_SIZE - pos))
    top = s.deck[g, pos]
    s.deck[g, pos] = s.deck[g, pick]
    s.deck[g, pick] = top


@jit_inline
def draw_cards(r: RuleParams, s: StateArrays, w: Scratch, g: int, seat: int, count: int) -> int:
    """Move ``count`` cards from the draw pile to ``seat``'s hand, one at a time.

    When the pile runs out the discards are reshuffled into it. Returns the last face drawn
    (``NO_FACE`` if none could be: both piles empty).
    """
    last = NO_FACE
    for _ in range(count):
        if s.draw_pos[g] >= C.DECK_SIZE:
            _reshuffle_discards(r, s, w, g)
            if s.draw_pos[g] >= C.DECK_SIZE:
                break  # both piles are empty: the rest of the draw is forgiven
        if r.seat_draw_streams:
            _pick_for_seat(s, g, seat)
        face = int(s.deck[g, s.draw_pos[g]])
        s.hands[g, seat, face] += 1
        s.hand_size[g, seat] += 1
        s.draw_pos[g] += 1
        s.seat_draws[g, seat] += 1  # public: the table sees every card drawn
        s.step_drawn[g, seat] += 1
        last = face
    return last
