"""The draw pile and the discard pile: drawing, reshuffling, seeded shuffles."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.state import SEAT_STREAM_OFFSET, STREAM_STRIDE, IntArray, UnoState
from uno_env.rng import keyed_bits, keyed_uniform
from uno_env.rules import Rules

__all__ = ["draw_cards", "place_shuffled", "reshuffle_discards", "shuffle_orders"]

_SORT_LAST = np.uint64(2**64 - 1)


def shuffle_orders(s: UnoState, games: IntArray, n: IntArray) -> IntArray:
    """Permutations for the next reshuffle of each game (and count the reshuffles).

    Row i's first ``n[i]`` entries are ``keyed_permutation(key, stream, n[i])``: the hash of
    an index does not depend on how many are drawn, and the padding sorts last. The stream
    is ``hand * 2**20 + shuffles + 1``.
    """
    streams = s.hand_no[games].astype(np.uint64) * np.uint64(STREAM_STRIDE) + (
        s.shuffles[games].astype(np.uint64) + np.uint64(1)
    )
    s.shuffles[games] += 1
    bits = keyed_bits(s.key[games], streams, C.DECK_SIZE)
    bits[np.arange(C.DECK_SIZE)[None, :] >= n[:, None]] = _SORT_LAST
    return np.argsort(bits, axis=1, kind="stable")


def place_shuffled(
    dest: npt.NDArray[np.int8],
    dest_games: IntArray,
    dest_start: IntArray,
    src: npt.NDArray[np.int8],
    src_games: IntArray,
    src_start: IntArray,
    order: IntArray,
    n: IntArray,
) -> None:
    """``dest[g, dest_start + i] = src[g, src_start + order[i]]`` for ``i < n`` in each row."""
    rows, cols = np.nonzero(np.arange(C.DECK_SIZE)[None, :] < n[:, None])
    values = src[src_games[rows], src_start[rows] + order[rows, cols]]
    dest[dest_games[rows], dest_start[rows] + cols] = values


def draw_cards(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray, counts: IntArray
) -> IntArray:
    """Move cards from the draw pile to the seats' hands, reshuffling when it runs out.

    ``games`` must not repeat. Returns the last face drawn per game (-1 if none could be:
    both piles empty).
    """
    last = np.full(games.shape, -1, dtype=np.int64)
    # Most games have the cards in the pile: take them all at once (but with per-seat draw
    # streams every card is picked by its own number: one at a time).
    if rules.seat_draw_streams:
        enough = np.zeros(games.shape, dtype=bool)
    else:
        enough = s.draw_pos[games] + counts <= C.DECK_SIZE
    single = enough & (counts == 1)
    if single.any():  # the common case: one card (a voluntary draw)
        rows = np.flatnonzero(single)
        g, seat = games[rows], seats[rows]
        faces = s.deck[g, s.draw_pos[g].astype(np.int64)]
        s.hands[g, seat, faces] += 1
        s.hand_size[g, seat] += 1
        s.draw_pos[g] += 1
        last[rows] = faces
    rows = np.flatnonzero(enough & (counts > 1))
    if rows.size:
        g, n = games[rows], counts[rows]
        card_row = np.repeat(np.arange(rows.size), n)  # one entry per card drawn
        first = np.cumsum(n) - n
        pos = s.draw_pos[g].astype(np.int64)[card_row] + np.arange(card_row.size) - first[card_row]
        faces = s.deck[g[card_row], pos]
        seat_of_card = seats[rows][card_row]
        # Each game's first card by plain indexing (games are distinct); the rest, where a
        # game may draw the same face twice, need the unbuffered np.add.at.
        s.hands[g, seats[rows], faces[first]] += 1
        extra = np.ones(card_row.size, dtype=bool)
        extra[first] = False
        if extra.any():
            np.add.at(s.hands, (g[card_row[extra]], seat_of_card[extra], faces[extra]), 1)
        s.hand_size[g, seats[rows]] += n.astype(np.int16)
        s.draw_pos[g] += n.astype(np.int16)
        last[rows] = faces[first + n - 1]
    # The others draw one card at a time, reshuffling the discards when the pile runs out.
    short = np.flatnonzero(~enough)
    for k in range(int(counts[short].max(initial=0))):
        sel = short[counts[short] > k]
        g = games[sel]
        empty = s.draw_pos[g] >= C.DECK_SIZE
        if empty.any():
            reshuffle_discards(rules, s, g[empty])
            can = s.draw_pos[g] < C.DECK_SIZE  # both piles may be empty: nothing to draw
            g, sel = g[can], sel[can]
        if rules.seat_draw_streams:
            _pick_for_seats(s, g, seats[sel])
        faces = s.deck[g, s.draw_pos[g].astype(np.int64)]
        s.hands[g, seats[sel], faces] += 1
        s.hand_size[g, seats[sel]] += 1
        s.draw_pos[g] += 1
        last[sel] = faces
    return last


def _pick_for_seats(s: UnoState, games: IntArray, seats: IntArray) -> None:
    """Per-seat draw streams: bring a uniform pick from the stock to the top of the pile.

    A seat's k-th draw of the hand is driven by the k-th number of its own stream, so that
    replays of a deal under another seating stay correlated while the draw distribution
    stays exact (a uniform pick from the remaining stock).
    """
    pos = s.draw_pos[games].astype(np.int64)
    streams = (
        s.hand_no[games].astype(np.uint64) * np.uint64(STREAM_STRIDE)
        + np.uint64(SEAT_STREAM_OFFSET)
        + seats.astype(np.uint64)
    )
    u = keyed_uniform(s.key[games], streams, s.seat_draws[games, seats])
    pick = pos + (u * (C.DECK_SIZE - pos)).astype(np.int64)
    top, chosen = s.deck[games, pos].copy(), s.deck[games, pick].copy()
    s.deck[games, pos], s.deck[games, pick] = chosen, top
    s.seat_draws[games, seats] += 1


def reshuffle_discards(rules: Rules, s: UnoState, games: IntArray) -> None:
    """Shuffle each game's discard pile into a new draw pile.

    The top card stays on the table, unless ``reshuffle_top`` (RLCard) takes it too; then
    ``top`` and ``colour`` still say what to match.
    """
    keep = 0 if rules.reshuffle_top else 1
    n = s.discard_len[games].astype(np.int64) - keep
    games, n = games[n > 0], n[n > 0]
    if not games.size:
        return
    order = shuffle_orders(s, games, n)
    zero = np.zeros_like(n)
    place_shuffled(s.deck, games, C.DECK_SIZE - n, s.discard, games, zero, order, n)
    s.draw_pos[games] = C.DECK_SIZE - n
    if keep:
        s.discard[games, 0] = s.discard[games, n]
    s.discard_len[games] = keep
