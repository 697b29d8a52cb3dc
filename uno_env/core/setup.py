"""Setting up games: dealing a batch of matches, the starter card, the next hand, resets."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.config_values import check_switch
from uno_env.core.checks import (
    MAX_BATCH_SIZE,
    check_rules,
    check_table,
    game_indices,
    int_values,
    is_int,
)
from uno_env.core.events import EVENT_DIRECTION, EVENT_RESHUFFLED
from uno_env.core.history import NO_CHOICE, NO_MARK
from uno_env.core.params import (
    RuleParams,
    Scratch,
    StateArrays,
    arrays_of,
    rule_params,
    scratch,
)
from uno_env.core.piles import draw_cards, keyed_order, reshuffle_order
from uno_env.core.state import (
    CHOOSE_COLOUR,
    DEALER_STREAM,
    PLAY,
    STREAM_STRIDE,
    TURN_STREAM_OFFSET,
    BoolArray,
    IntArray,
    UnoState,
)
from uno_env.core.tables import SORTED_DECK
from uno_env.files import shown
from uno_env.jit import jit
from uno_env.rng import derive_keys, game_word, keyed_permutation, keyed_randint
from uno_env.rules import Rules

__all__ = ["game_keys", "init", "next_hand", "reset_games"]

_STRIDE = np.uint64(STREAM_STRIDE)
_STARTER_STREAM = np.uint64(TURN_STREAM_OFFSET - 1)
"""RLCard's random colour of a Wild starter: the stream before the first turn's."""
_DEALER_STREAM = np.uint64(DEALER_STREAM)
_CANONICAL_DECK = C.CANONICAL_DECK.copy()


def game_keys(keys: npt.ArrayLike, what: str = "key") -> npt.NDArray[np.uint64]:
    """Game keys as uint64, of the shape given, refusing anything but integers in [0, 2**64).

    A plain cast would wrap -1 into 2**64-1, overflow at 2**64 and take True or 1.5 as keys.

    Args:
        keys: The keys.
        what: The argument's name, as the message names it.

    Raises:
        ValueError: naming ``what`` and the first value that is not such an integer.
    """
    arr = np.asarray(keys)
    if isinstance(keys, (np.ndarray, np.integer)):  # numpy integers: checked as a whole
        if arr.dtype.kind == "u":
            return arr.astype(np.uint64)
        if arr.dtype.kind == "i" and not (arr < 0).any():
            return arr.astype(np.uint64)
    # The values as given (numpy would turn [3, True] into ints, [3, "7"] into strings).
    values = np.asarray(keys, dtype=object).ravel().tolist()
    if arr.dtype != object and not isinstance(keys, np.ndarray):
        arr = np.asarray(keys, dtype=object)
    if arr.dtype == object and all(_is_key(value) for value in values):
        return np.array([int(value) for value in values], dtype=np.uint64).reshape(arr.shape)
    bad = next((value for value in values if not _is_key(value)), keys)
    raise ValueError(f"{what} must be an integer in [0, 2**64), got {shown(bad)}")


def _is_key(value: object) -> bool:
    return (
        isinstance(value, (int, np.integer))
        and not isinstance(value, bool)
        and 0 <= int(value) < 2**64
    )


def init(
    rules: Rules,
    batch_size: int = 1,
    seed: int | np.random.Generator | None = None,
    *,
    keys: npt.ArrayLike | None = None,
    dealer: int | npt.ArrayLike | None = None,
    decks: npt.ArrayLike | None = None,
) -> UnoState:
    """Deal the first hand of ``batch_size`` new matches.

    Args:
        rules: The rules shared by the batch.
        batch_size: Number of games B.
        seed: An int seed or a numpy Generator from which the per-game keys are derived.
            Ignored when ``keys`` is given.
        keys: Explicit per-game 64-bit keys, shape (B,).
        dealer: Dealer seat for every game (int) or per game (B,). ``None`` draws it from the
            game's key, as the official rules choose the first dealer at random.
        decks: Stacked decks, shape (B, 108) or (108,), top card first. Each row must hold
            exactly the 108 cards. ``None`` shuffles the deck with the game's key.

    Returns:
        The dealt state. Starter-card effects (docs/rules.md §3) are already applied.

    Raises:
        ValueError: for a bad batch size, key array, dealer seat or deck.
    """
    check_rules(rules)
    if keys is None:
        if not is_int(batch_size) or not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(
                f"batch_size must be a positive int, at most {MAX_BATCH_SIZE:,} (the "
                f"batch's memory), got {shown(batch_size)}"
            )
        key_arr = derive_keys(seed, int(batch_size))
    else:
        key_arr = np.atleast_1d(game_keys(keys, "keys"))
        if key_arr.ndim != 1 or not 1 <= key_arr.shape[0] <= MAX_BATCH_SIZE:
            raise ValueError(
                f"keys must have shape (B,) with 1 <= B <= {MAX_BATCH_SIZE:,}, got "
                f"{shown(keys)} of shape {key_arr.shape}"
            )
    n_games = key_arr.shape[0]
    hand_no = np.zeros(n_games, dtype=np.int32)
    dealer_arr = _dealer_array(rules, key_arr, dealer)
    deck_arr = _deck_array(key_arr, hand_no, decks)
    scores = np.zeros((n_games, rules.num_players), dtype=np.int32)
    return _deal(rules, key_arr, hand_no, dealer_arr, deck_arr, scores)


def _dealer_array(
    rules: Rules, keys: npt.NDArray[np.uint64], dealer: int | npt.ArrayLike | None
) -> IntArray:
    n_players = rules.num_players
    if dealer is None:
        return keyed_randint(keys, DEALER_STREAM, n_players)
    seats = int_values("dealer", dealer)
    if seats.shape not in ((), (1,), keys.shape):
        raise ValueError(
            f"dealer: expected one seat or one per game, shape {keys.shape}, got "
            f"{'an array' if isinstance(dealer, np.ndarray) else shown(dealer)} of shape "
            f"{seats.shape}"
        )
    arr = np.broadcast_to(seats, keys.shape)
    outside = np.flatnonzero((arr < 0) | (arr >= n_players))
    if outside.size:
        given = np.broadcast_to(np.asarray(dealer, dtype=object), keys.shape)[outside[0]]
        raise ValueError(f"dealer must be a seat in 0..{n_players - 1}, got {shown(given)}")
    return arr.astype(np.int64)


def _deck_array(
    keys: npt.NDArray[np.uint64], hand_no: npt.NDArray[np.int32], decks: npt.ArrayLike | None
) -> npt.NDArray[np.int8]:
    if decks is None:
        streams = hand_no.astype(np.uint64) * np.uint64(STREAM_STRIDE)
        return C.CANONICAL_DECK[keyed_permutation(keys, streams, C.DECK_SIZE)]
    arr = np.asarray(decks)
    if arr.ndim == 1:
        arr = np.broadcast_to(arr, (keys.shape[0], arr.shape[0]))
    if arr.shape != (keys.shape[0], C.DECK_SIZE):
        raise ValueError(f"decks must have shape ({keys.shape[0]}, 108), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        raise ValueError(f"decks must hold card face ids (integers), got dtype {arr.dtype}")
    outside = np.flatnonzero((arr < 0) | (arr >= C.NUM_FACES))
    if outside.size:
        given = arr.ravel()[outside[0]].item()
        raise ValueError(
            f"decks: {shown(given)} is not a card face id (0..{C.NUM_FACES - 1}, "
            "uno_env.cards.parse_card)"
        )
    bad = np.flatnonzero((np.sort(arr, axis=1) != SORTED_DECK).any(axis=1))
    if bad.size:
        counts = np.bincount(arr[bad[0]].astype(np.int64), minlength=C.NUM_FACES)
        wrong = [
            f"{C.FACE_NAMES[f]}: {counts[f]} (expected {C.FACE_COUNTS[f]})"
            for f in range(C.NUM_FACES)
            if counts[f] != C.FACE_COUNTS[f]
        ]
        raise ValueError(f"deck of game {bad[0]} is not the 108-card UNO deck: {wrong}")
    return arr.astype(np.int8)


def _deal(
    rules: Rules,
    keys: npt.NDArray[np.uint64],
    hand_no: npt.NDArray[np.int32],
    dealer: IntArray,
    decks: npt.NDArray[np.int8],
    scores: npt.NDArray[np.int32],
) -> UnoState:
    n_games, n_players = keys.shape[0], rules.num_players
    games = np.arange(n_games)
    n_dealt = n_players * rules.hand_size
    # One card at a time, starting at the dealer's left.
    seat_of = (dealer[:, None] + 1 + np.arange(n_dealt)[None, :]) % n_players
    flat = (games[:, None] * n_players + seat_of) * C.NUM_FACES + decks[:, :n_dealt]
    hands = np.bincount(flat.ravel(), minlength=n_games * n_players * C.NUM_FACES)
    # Built here with the right dtypes and shapes: no need for the checks of a hand-built state.
    state = UnoState._trusted(
        dict(
            key=np.array(keys, dtype=np.uint64, order="C"),
            hand_no=hand_no.astype(np.int32),
            deck=np.array(decks, dtype=np.int8, order="C"),
            draw_pos=np.full(n_games, n_dealt, dtype=np.int16),
            discard=np.zeros((n_games, C.DECK_SIZE), dtype=np.int8),
            discard_len=np.zeros(n_games, dtype=np.int16),
            hands=hands.reshape(n_games, n_players, C.NUM_FACES).astype(np.int8),
            hand_size=np.full((n_games, n_players), rules.hand_size, dtype=np.int16),
            top=np.zeros(n_games, dtype=np.int8),
            colour=np.zeros(n_games, dtype=np.int8),
            direction=np.ones(n_games, dtype=np.int8),
            current=((dealer + 1) % n_players).astype(np.int8),
            phase=np.full(n_games, PLAY, dtype=np.int8),
            drawn=np.full(n_games, -1, dtype=np.int8),
            pending=np.zeros(n_games, dtype=np.int16),
            penalty_kind=np.zeros(n_games, dtype=np.int8),
            wd4_seat=np.full(n_games, -1, dtype=np.int8),
            wd4_illegal=np.zeros(n_games, dtype=bool),
            declared=np.zeros(n_games, dtype=bool),
            uno_exposed=np.full(n_games, -1, dtype=np.int8),
            effect_face=np.full(n_games, -1, dtype=np.int8),
            effect_seat=np.full(n_games, -1, dtype=np.int8),
            shuffles=np.zeros(n_games, dtype=np.int32),
            dealer=dealer.astype(np.int8),
            turn=np.zeros(n_games, dtype=np.int32),
            done=np.zeros(n_games, dtype=bool),
            truncated=np.zeros(n_games, dtype=bool),
            winner=np.full(n_games, -1, dtype=np.int8),
            seat_draws=np.zeros((n_games, n_players), dtype=np.int32),
            shown_lacks=np.zeros((n_games, n_players, C.NUM_COLOURS), dtype=bool),
            lack_marks=np.full((n_games, n_players, C.NUM_LACK_FACTS), NO_MARK, dtype=np.int32),
            choice_colour=np.full((n_games, n_players), -1, dtype=np.int8),
            choice_top=np.full((n_games, n_players), -1, dtype=np.int8),
            choice_draws=np.full((n_games, n_players), NO_CHOICE, dtype=np.int32),
            last_played=np.full((n_games, n_players), -1, dtype=np.int8),
            last_named=np.full((n_games, n_players), -1, dtype=np.int8),
            pile_faces=np.zeros((n_games, C.NUM_FACES), dtype=np.int8),
            shown_holds=np.zeros((n_games, n_players, C.NUM_COLOURS), dtype=bool),
            finish_rank=np.full((n_games, n_players), -1, dtype=np.int8),
            hand_points=np.zeros((n_games, n_players), dtype=np.int32),
            scores=np.array(scores, dtype=np.int32, order="C"),
            match_over=np.zeros(n_games, dtype=bool),
            step_drawn=np.zeros((n_games, n_players), dtype=np.int16),
            step_skipped=np.full(n_games, -1, dtype=np.int8),
            step_events=np.zeros(n_games, dtype=np.int16),
        )
    )
    _turn_starters(rule_params(rules), arrays_of(state), scratch())
    return state


@jit
def _turn_starters(r: RuleParams, s: StateArrays, w: Scratch) -> None:
    """Turn the first discard of every game and apply the starter-card rules (docs/rules.md §3)."""
    for g in range(s.key.shape[0]):
        _turn_starter(r, s, w, g)


@jit
def _turn_starter(r: RuleParams, s: StateArrays, w: Scratch, g: int) -> None:
    """Turn game ``g``'s starter (redrawing a barred wild) and apply its effect."""
    n_players = r.num_players
    while True:
        pos = int(s.draw_pos[g])
        starter = int(s.deck[g, pos])
        if not (starter == C.WILD_DRAW_FOUR or (r.starter_redraw_wilds and starter == C.WILD)):
            break
        # The card goes back into the draw pile, which is reshuffled; a new card is turned.
        n = C.DECK_SIZE - pos
        reshuffle_order(s, w, g, n)
        s.step_events[g] |= EVENT_RESHUFFLED
        for i in range(n):
            w.cards[i] = s.deck[g, pos + i]
        for i in range(n):
            s.deck[g, pos + i] = w.cards[w.order[i]]
    s.draw_pos[g] += 1
    s.discard[g, 0] = starter
    s.discard_len[g] = 1
    s.top[g] = starter
    s.colour[g] = C.FACE_COLOUR[starter]
    dealer = int(s.dealer[g])
    rank = int(C.FACE_RANK[starter])
    if starter == C.WILD:
        if r.starter_wild_colour_random:
            stream = np.uint64(s.hand_no[g]) * _STRIDE + _STARTER_STREAM
            s.colour[g] = game_word(s.key[g], stream, np.uint64(0)) % np.uint64(C.NUM_COLOURS)
        else:
            s.phase[g] = CHOOSE_COLOUR
    if rank == C.REVERSE:
        s.direction[g] = -1
        s.current[g] = dealer
        s.step_events[g] |= EVENT_DIRECTION
    if rank == C.SKIP or (r.starter_draw_two_skips and rank == C.DRAW_TWO):
        s.current[g] = (dealer + 2) % n_players
        s.step_skipped[g] = (dealer + 1) % n_players
    if rank == C.DRAW_TWO:
        draw_cards(r, s, w, g, (dealer + 1) % n_players, 2)


def next_hand(rules: Rules, state: UnoState) -> UnoState:
    """Deal the next hand of every match: the deal passes to the left, scores are kept.

    Raises:
        ValueError: if a hand is still live or a match is already over.
    """
    check_table(rules, state)
    if state.live.any():
        raise ValueError(
            f"games {np.flatnonzero(state.live)[:10].tolist()} are still being played; "
            "next_hand needs every hand finished"
        )
    if state.match_over.any():
        raise ValueError(
            f"the matches of games {np.flatnonzero(state.match_over)[:10].tolist()} are over; "
            "start new ones with init or reset_games"
        )
    hand_no = state.hand_no + 1
    dealer = (state.dealer.astype(np.int64) + 1) % rules.num_players
    decks = _deck_array(state.key, hand_no, None)
    return _deal(rules, state.key, hand_no, dealer, decks, state.scores)


def reset_games(
    rules: Rules,
    state: UnoState,
    games: IntArray | BoolArray,
    keys: npt.ArrayLike,
    *,
    in_place: bool = False,
) -> UnoState:
    """Replace the given games with freshly dealt matches (used by autoreset).

    Args:
        rules: The rules of the batch.
        state: The batch (not modified, unless ``in_place``).
        games: Indices or a boolean mask of the games to replace.
        keys: One new key per replaced game.
        in_place: Write the new games into ``state``'s arrays and return a new state
            object over them (for owners of the state, such as an env), saving the copy.

    Raises:
        ValueError: if the number of keys does not match the number of games, a game is
            named twice, a key is not an integer in [0, 2**64), or ``in_place`` is not a
            bool.
    """
    check_table(rules, state)
    in_place = check_switch("in_place", in_place)
    idx = game_indices("games", games, state.batch_size)
    if idx.size > 1:
        ordered = np.sort(idx, axis=None)
        twice = np.flatnonzero(ordered[1:] == ordered[:-1])
        if twice.size:  # one game, two new keys: the last would win silently
            raise ValueError(
                f"games: game {int(ordered[twice[0]])} is named twice; name each game once"
            )
    key_arr = np.atleast_1d(game_keys(keys, "keys"))
    if key_arr.shape != idx.shape:
        raise ValueError(f"need one key per reset game: {idx.size} games, {key_arr.size} keys")
    new = state.view() if in_place else state.copy()
    if idx.size:
        # Dealt where they stand, as init deals them (a test holds the two to each other).
        deal_fresh(
            rule_params(rules),
            arrays_of(new),
            scratch(),
            idx.astype(np.int64),
            key_arr.astype(np.uint64),
            rules.hand_size,
        )
        if in_place:
            state.clear_mask_cache()  # its arrays changed under the mask it may hold
    return new


@jit
def deal_fresh(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    games: np.ndarray,
    keys: np.ndarray,
    hand_size: int,
) -> None:
    """Deal a new match into each game of ``games`` (its key from ``keys``), in place: the
    dealer and the deck drawn from the key as :func:`init` draws them (:func:`keyed_randint`
    and :func:`keyed_permutation` of the same streams), the cards dealt one at a time from
    the dealer's left, the starter turned."""
    n_players = r.num_players
    for i in range(games.shape[0]):
        g = games[i]
        key = keys[i]
        dealer = int(game_word(key, _DEALER_STREAM, np.uint64(0)) % np.uint64(n_players))
        s.key[g] = key
        s.hand_no[g] = 0
        keyed_order(key, np.uint64(0), w, C.DECK_SIZE)  # hand 0's stream
        for j in range(C.DECK_SIZE):
            s.deck[g, j] = _CANONICAL_DECK[w.order[j]]
        s.hands[g, :, :] = 0
        for j in range(n_players * hand_size):
            s.hands[g, (dealer + 1 + j) % n_players, s.deck[g, j]] += 1
        s.draw_pos[g] = n_players * hand_size
        s.discard[g, :] = 0
        s.discard_len[g] = 0
        s.hand_size[g, :] = hand_size
        s.top[g] = 0
        s.colour[g] = 0
        s.direction[g] = 1
        s.current[g] = (dealer + 1) % n_players
        s.phase[g] = PLAY
        s.drawn[g] = -1
        s.pending[g] = 0
        s.penalty_kind[g] = 0
        s.wd4_seat[g] = -1
        s.wd4_illegal[g] = False
        s.declared[g] = False
        s.uno_exposed[g] = -1
        s.effect_face[g] = -1
        s.effect_seat[g] = -1
        s.shuffles[g] = 0
        s.dealer[g] = dealer
        s.turn[g] = 0
        s.done[g] = False
        s.truncated[g] = False
        s.winner[g] = -1
        s.seat_draws[g, :] = 0
        s.shown_lacks[g, :, :] = False
        s.lack_marks[g, :, :] = NO_MARK
        s.choice_colour[g, :] = -1
        s.choice_top[g, :] = -1
        s.choice_draws[g, :] = NO_CHOICE
        s.last_played[g, :] = -1
        s.last_named[g, :] = -1
        s.pile_faces[g, :] = 0
        s.shown_holds[g, :, :] = False
        s.finish_rank[g, :] = -1
        s.hand_points[g, :] = 0
        s.scores[g, :] = 0
        s.match_over[g] = False
        s.step_drawn[g, :] = 0
        s.step_skipped[g] = -1
        s.step_events[g] = 0
        _turn_starter(r, s, w, g)
