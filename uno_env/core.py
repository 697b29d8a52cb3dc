"""The batched UNO game core: pure rules over state arrays.

All rules of the game live in this module. Every function takes a :class:`~uno_env.rules.Rules`
and a :class:`UnoState` whose arrays have a leading batch axis B (1 to tens of thousands of
games), and returns new arrays: nothing is mutated in place and no global random state is
used, so a game replays exactly from its key (see :mod:`uno_env.rng`).

The exact semantics (action ids, phases, the order of effects, who may catch an UNO) are the
contract in ``docs/engine.md``; the tests check this module against an independent scalar
reference engine under random play.

Functions:
    init: deal a batch of new matches.
    legal_action_mask: the (B, 80) boolean mask of legal actions.
    step: apply one action per game; an illegal action raises :class:`IllegalActionError`.
    next_hand: deal the next hand of each match, the deal passing to the left.
    reset_games: replace some games of a batch with fresh matches (for autoreset).
    hand_rewards: win/loss rewards of finished hands.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.rng import derive_keys, keyed_bits, keyed_permutation, keyed_randint
from uno_env.rules import Rules

__all__ = [
    "AFTER_DRAW",
    "CHALLENGE_PHASE",
    "CHOOSE_COLOUR",
    "OVER",
    "PHASE_NAMES",
    "PLAY",
    "IllegalActionError",
    "UnoState",
    "card_totals",
    "hand_rewards",
    "init",
    "legal_action_mask",
    "next_hand",
    "reset_games",
    "step",
]

# Phases (what the acting seat is deciding).
PLAY = 0
AFTER_DRAW = 1
CHALLENGE_PHASE = 2
CHOOSE_COLOUR = 3
OVER = 4
PHASE_NAMES = ("play", "after_draw", "challenge", "choose_colour", "over")

STREAM_STRIDE = 2**20
"""Random streams per hand: the deal uses ``hand * STREAM_STRIDE``, reshuffles the next ones."""
DEALER_STREAM = 2**40 - 1

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in its game's state.

    The state passed to :func:`step` is left untouched.
    """


@dataclass
class UnoState:
    """The state of B games. See ``docs/engine.md`` for every field.

    States are values: :func:`step` returns a new one. Treat the arrays as read-only.
    """

    key: npt.NDArray[np.uint64]
    hand_no: npt.NDArray[np.int32]
    deck: npt.NDArray[np.int8]
    draw_pos: npt.NDArray[np.int16]
    discard: npt.NDArray[np.int8]
    discard_len: npt.NDArray[np.int16]
    hands: npt.NDArray[np.int8]
    hand_size: npt.NDArray[np.int16]
    top: npt.NDArray[np.int8]
    colour: npt.NDArray[np.int8]
    direction: npt.NDArray[np.int8]
    current: npt.NDArray[np.int8]
    phase: npt.NDArray[np.int8]
    drawn: npt.NDArray[np.int8]
    pending: npt.NDArray[np.int16]
    wd4_seat: npt.NDArray[np.int8]
    wd4_illegal: npt.NDArray[np.bool_]
    declared: npt.NDArray[np.bool_]
    uno_exposed: npt.NDArray[np.int8]
    shuffles: npt.NDArray[np.int32]
    dealer: npt.NDArray[np.int8]
    turn: npt.NDArray[np.int32]
    done: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    winner: npt.NDArray[np.int8]
    hand_points: npt.NDArray[np.int32]
    scores: npt.NDArray[np.int32]
    match_over: npt.NDArray[np.bool_]
    _mask_cache: tuple[Rules, BoolArray] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def batch_size(self) -> int:
        """Number of games B."""
        return int(self.key.shape[0])

    @property
    def num_players(self) -> int:
        """Seats per table N."""
        return int(self.hands.shape[1])

    @property
    def live(self) -> BoolArray:
        """Games whose hand is still being played."""
        return np.asarray(self.phase != OVER)

    def array_fields(self) -> dict[str, np.ndarray]:
        """Return the state arrays by name (no copies)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name[0] != "_"}

    def copy(self) -> UnoState:
        """Return a deep copy of the arrays."""
        return UnoState(**{k: v.copy() for k, v in self.array_fields().items()})

    def select(self, games: IntArray | BoolArray) -> UnoState:
        """Return the sub-batch of the given game indices (or boolean mask)."""
        return UnoState(**{k: v[games].copy() for k, v in self.array_fields().items()})


# ----------------------------------------------------------------------------------------
# Tables computed once. PLAYABLE[top, colour] is the set of coloured faces that may be
# played on ``top`` when ``colour`` is current: this turns matching into one gather.
# ----------------------------------------------------------------------------------------


def _playable_table() -> BoolArray:
    table = np.zeros((C.NUM_FACES, C.NUM_COLOURS + 1, C.NUM_COLOURED_FACES), dtype=bool)
    face_colour = C.FACE_COLOUR[: C.NUM_COLOURED_FACES]
    face_rank = C.FACE_RANK[: C.NUM_COLOURED_FACES]
    for top in range(C.NUM_FACES):
        for colour in range(C.NUM_COLOURS):  # colour 4 (unnamed) matches nothing
            same_rank = face_rank == C.FACE_RANK[top] if top < C.NUM_COLOURED_FACES else False
            table[top, colour] = (face_colour == colour) | same_rank
    return table


PLAYABLE = _playable_table()
COLOUR_MEMBERS = np.zeros((C.NUM_COLOURS + 1, C.NUM_FACES), dtype=bool)
for _c in range(C.NUM_COLOURS):
    COLOUR_MEMBERS[_c, : C.NUM_COLOURED_FACES] = C.FACE_COLOUR[: C.NUM_COLOURED_FACES] == _c
FACE_PLAY_ACTIONS = np.zeros((C.NUM_FACES, C.NUM_PLAY_ACTIONS), dtype=bool)
"""FACE_PLAY_ACTIONS[f] marks the play actions that play face f (a wild has four)."""
for _a in range(C.NUM_PLAY_ACTIONS):
    FACE_PLAY_ACTIONS[C.ACTION_FACE[_a], _a] = True
SORTED_DECK = np.sort(C.CANONICAL_DECK)
FACE_MATCH = np.ones((C.NUM_FACES * (C.NUM_COLOURS + 1), C.NUM_FACES), dtype=bool)
"""FACE_MATCH[top * 5 + colour] marks the faces that may be played on them (wilds always)."""
FACE_MATCH[:, : C.NUM_COLOURED_FACES] = PLAYABLE.reshape(-1, C.NUM_COLOURED_FACES)

# The mask is gathered from per-game "parts": one per face (held and playable), then one per
# other decision. _ACTION_PART[a] is the part that makes action a legal.
_PART_DRAW, _PART_KEEP, _PART_CHALLENGE, _PART_UNO, _PART_CATCH, _PART_NAME_COLOUR = range(
    C.NUM_FACES, C.NUM_FACES + 6
)
_PART_NEVER = C.NUM_FACES + 6  # always False (actions of house rules not yet in play)
_NUM_PARTS = C.NUM_FACES + 7
_ACTION_PART = np.full(C.NUM_ACTIONS, _PART_NEVER, dtype=np.intp)
_ACTION_PART[: C.NUM_PLAY_ACTIONS] = C.ACTION_FACE[: C.NUM_PLAY_ACTIONS]
_ACTION_PART[C.DRAW] = _PART_DRAW
_ACTION_PART[C.KEEP] = _PART_KEEP
_ACTION_PART[C.CHALLENGE] = _PART_CHALLENGE
_ACTION_PART[C.ACCEPT] = _PART_CHALLENGE
_ACTION_PART[C.UNO] = _PART_UNO
_ACTION_PART[C.CATCH] = _PART_CATCH
_ACTION_PART[C.NAME_COLOUR : C.NAME_COLOUR + 4] = _PART_NAME_COLOUR


# ----------------------------------------------------------------------------------------
# Setting up games
# ----------------------------------------------------------------------------------------


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
        The dealt state. Starter-card effects (RULES.md §2) are already applied.

    Raises:
        ValueError: for a bad batch size, key array, dealer seat or deck.
    """
    if keys is None:
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        key_arr = derive_keys(seed, int(batch_size))
    else:
        key_arr = np.atleast_1d(np.asarray(keys)).astype(np.uint64)
        if key_arr.ndim != 1:
            raise ValueError(f"keys must have shape (B,), got {key_arr.shape}")
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
    arr = np.broadcast_to(np.asarray(dealer), keys.shape)
    if not np.issubdtype(arr.dtype, np.integer) or ((arr < 0) | (arr >= n_players)).any():
        raise ValueError(f"dealer must be a seat in 0..{n_players - 1}, got {dealer!r}")
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
    state = UnoState(
        key=keys.copy(),
        hand_no=hand_no.astype(np.int32),
        deck=decks.astype(np.int8, copy=True),
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
        wd4_seat=np.full(n_games, -1, dtype=np.int8),
        wd4_illegal=np.zeros(n_games, dtype=bool),
        declared=np.zeros(n_games, dtype=bool),
        uno_exposed=np.full(n_games, -1, dtype=np.int8),
        shuffles=np.zeros(n_games, dtype=np.int32),
        dealer=dealer.astype(np.int8),
        turn=np.zeros(n_games, dtype=np.int32),
        done=np.zeros(n_games, dtype=bool),
        truncated=np.zeros(n_games, dtype=bool),
        winner=np.full(n_games, -1, dtype=np.int8),
        hand_points=np.zeros((n_games, n_players), dtype=np.int32),
        scores=scores.astype(np.int32, copy=True),
        match_over=np.zeros(n_games, dtype=bool),
    )
    _turn_starter(rules, state)
    return state


def _turn_starter(rules: Rules, s: UnoState) -> None:
    """Turn the first discard and apply the starter-card rules of RULES.md §2."""
    redraw_faces = [C.WILD_DRAW_FOUR] + ([C.WILD] if rules.starter_redraw_wilds else [])
    games = np.arange(s.batch_size)
    while True:
        starter = s.deck[games, s.draw_pos.astype(np.int64)]
        redraw = np.flatnonzero(np.isin(starter, redraw_faces))
        if not redraw.size:
            break
        # The card goes back into the draw pile, which is reshuffled; a new card is turned.
        start = s.draw_pos[redraw].astype(np.int64)
        n = C.DECK_SIZE - start
        order = _shuffle_orders(s, redraw, n)
        _place_shuffled(s.deck, redraw, start, s.deck, redraw, start, order, n)
    s.draw_pos += 1
    s.discard[:, 0] = starter
    s.discard_len[:] = 1
    s.top[:] = starter
    s.colour[:] = C.FACE_COLOUR[starter]
    n_players = rules.num_players
    dealer = s.dealer.astype(np.int64)
    rank = C.FACE_RANK[starter]
    s.phase[starter == C.WILD] = CHOOSE_COLOUR
    reverse = rank == C.REVERSE
    s.direction[reverse] = -1
    s.current[reverse] = s.dealer[reverse]
    skipped = (rank == C.SKIP) | (rank == C.DRAW_TWO)
    s.current[skipped] = (dealer[skipped] + 2) % n_players
    draw_two = np.flatnonzero(rank == C.DRAW_TWO)
    if draw_two.size:
        victims = (dealer[draw_two] + 1) % n_players
        _draw_cards(s, draw_two, victims, np.full(draw_two.size, 2, dtype=np.int64))


_SORT_LAST = np.uint64(2**64 - 1)


def _shuffle_orders(s: UnoState, games: IntArray, n: IntArray) -> IntArray:
    """Permutations for the next reshuffle of each game (and count the reshuffles).

    Row i's first ``n[i]`` entries are ``keyed_permutation(key, stream, n[i])``: the hash of
    an index does not depend on how many are drawn, and the padding sorts last.
    """
    streams = s.hand_no[games].astype(np.uint64) * np.uint64(STREAM_STRIDE) + (
        s.shuffles[games].astype(np.uint64) + np.uint64(1)
    )
    s.shuffles[games] += 1
    bits = keyed_bits(s.key[games], streams, C.DECK_SIZE)
    bits[np.arange(C.DECK_SIZE)[None, :] >= n[:, None]] = _SORT_LAST
    return np.argsort(bits, axis=1, kind="stable")


def _place_shuffled(
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


# ----------------------------------------------------------------------------------------
# Legal actions: the one place that decides what may be played.
# ----------------------------------------------------------------------------------------


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


def _wd4_allowed(rules: Rules, have: BoolArray, colour: npt.NDArray[np.int8]) -> BoolArray:
    """Whether a Wild Draw Four may be offered, for hands that hold one."""
    if rules.wd4_challenge or rules.wd4_anytime:
        return np.ones(have.shape[0], dtype=bool)
    # Without the challenge the mask enforces the rule: no card of the current colour.
    return np.asarray(~(have & COLOUR_MEMBERS[colour]).any(axis=1))


def _compute_mask(rules: Rules, s: UnoState) -> BoolArray:
    n_games = s.batch_size
    games = np.arange(n_games)
    current = s.current.astype(np.intp)
    phase = s.phase
    in_play = phase == PLAY
    # One row of "ingredients" per game, then one gather spreads them over the 80 actions.
    parts = np.zeros((n_games, _NUM_PARTS), dtype=bool)
    have = np.greater(s.hands[games, current], 0, out=parts[:, : C.NUM_FACES])
    # A card held that matches the top card and the colour (wilds always match).
    have &= FACE_MATCH[s.top.astype(np.intp) * (C.NUM_COLOURS + 1) + s.colour]
    if not (rules.wd4_challenge or rules.wd4_anytime):
        holds = s.hands[games, current] > 0
        have[:, C.WILD_DRAW_FOUR] &= _wd4_allowed(rules, holds, s.colour)
    parts[:, _PART_DRAW] = in_play
    if rules.uno_call:
        can_play = in_play | (phase == AFTER_DRAW)
        two_cards = s.hand_size[games, current] == 2
        parts[:, _PART_UNO] = can_play & two_cards & ~s.declared
        exposed = s.uno_exposed
        parts[:, _PART_CATCH] = (phase != OVER) & (exposed >= 0) & (exposed != s.current)
    special = np.flatnonzero(~in_play)  # few games: after a draw, a challenge, over...
    if special.size:
        sub = parts[special]
        sub[:, : C.NUM_FACES] = False
        sub_phase = phase[special]
        after = sub_phase == AFTER_DRAW
        # Only the card just drawn may be played (it was playable when drawn).
        sub[np.flatnonzero(after), s.drawn[special[after]]] = True
        sub[:, _PART_KEEP] = after
        sub[:, _PART_CHALLENGE] = sub_phase == CHALLENGE_PHASE
        sub[:, _PART_NAME_COLOUR] = sub_phase == CHOOSE_COLOUR
        parts[special] = sub
    return np.take(parts, _ACTION_PART, axis=1)


# ----------------------------------------------------------------------------------------
# Stepping
# ----------------------------------------------------------------------------------------


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

    Each game takes exactly one action, so each game draws at most once per step: the
    actions first record who must draw how many cards, one batched draw follows, and then
    the outcomes that depend on the drawn cards (a voluntary draw, the end of a hand) and
    the passing of the turn are applied.
    """
    n_games = s.batch_size
    live = acts >= 0
    current = s.current.astype(np.int64)
    draw_seat = np.full(n_games, -1, dtype=np.int64)
    draw_count = np.zeros(n_games, dtype=np.int64)
    ahead = np.full(n_games, -1, dtype=np.int64)  # seats the turn moves on; -1: it does not end

    catch = acts == C.CATCH
    if catch.any():
        draw_seat[catch] = s.uno_exposed[catch]
        draw_count[catch] = rules.uno_penalty
        s.uno_exposed[catch] = -1
    s.declared[acts == C.UNO] = True
    # Any other action means the next player has begun its turn: the exposure ends.
    s.uno_exposed[live & ~catch & (acts != C.UNO)] = -1

    name = (acts >= C.NAME_COLOUR) & (acts < C.NAME_COLOUR + 4)
    if name.any():
        s.colour[name] = acts[name] - C.NAME_COLOUR
        s.phase[name] = PLAY
    ahead[acts == C.KEEP] = 1
    accept = acts == C.ACCEPT
    if accept.any():
        draw_seat[accept] = current[accept]
        draw_count[accept] = s.pending[accept]
        ahead[accept] = 1
    challenge = acts == C.CHALLENGE
    if challenge.any():
        _resolve_challenge(s, challenge, current, draw_seat, draw_count, ahead)
    draw = acts == C.DRAW
    draw_seat[draw] = current[draw]
    draw_count[draw] = 1
    play = np.flatnonzero((acts >= 0) & (acts < C.NUM_PLAY_ACTIONS))
    winners = np.zeros(0, dtype=np.int64)
    if play.size:
        winners = _play(rules, s, play, current[play], acts[play], draw_seat, draw_count, ahead)

    drawing = np.flatnonzero(draw_count > 0)
    drawn = np.full(n_games, -1, dtype=np.int64)
    if drawing.size:
        drawn[drawing] = _draw_cards(s, drawing, draw_seat[drawing], draw_count[drawing])
    if draw.any():
        voluntary = np.flatnonzero(draw)
        playable = _is_playable(rules, s, voluntary, current[voluntary], drawn[voluntary])
        kept = voluntary[playable]
        s.phase[kept] = AFTER_DRAW
        s.drawn[kept] = drawn[kept]
        ahead[voluntary[~playable]] = 1
    if winners.size:
        _end_hand(rules, s, winners, current[winners])
    ending = np.flatnonzero(ahead >= 0)
    if ending.size:
        _end_turn(rules, s, ending, ahead[ending])

    s.turn[live] += 1
    truncate = live & (s.phase != OVER) & (s.turn >= rules.max_turns)
    if truncate.any():
        s.truncated[truncate] = True
        s.phase[truncate] = OVER
        # Nobody acts in a finished hand: clear the decision it stopped in.
        s.uno_exposed[truncate] = -1
        s.drawn[truncate] = -1
        s.pending[truncate] = 0
        s.wd4_seat[truncate] = -1
        s.declared[truncate] = False
    s._mask_cache = None


def _end_turn(rules: Rules, s: UnoState, games: IntArray, seats_ahead: IntArray) -> None:
    """Pass the turn ``seats_ahead`` seats in the direction of play and start a normal turn."""
    step_size = seats_ahead * s.direction[games].astype(np.int64)
    s.current[games] = (s.current[games].astype(np.int64) + step_size) % rules.num_players
    s.phase[games] = PLAY
    s.declared[games] = False
    s.drawn[games] = -1
    s.pending[games] = 0
    s.wd4_seat[games] = -1


def _resolve_challenge(
    s: UnoState,
    challenge: BoolArray,
    current: IntArray,
    draw_seat: IntArray,
    draw_count: IntArray,
    ahead: IntArray,
) -> None:
    guilty = challenge & s.wd4_illegal
    # The bluffer draws the four instead; the challenger takes a normal turn.
    draw_seat[guilty] = s.wd4_seat[guilty]
    draw_count[guilty] = 4
    ahead[guilty] = 0
    # A legal Wild Draw Four: the challenger draws the penalty plus two and loses the turn.
    innocent = challenge & ~s.wd4_illegal
    draw_seat[innocent] = current[innocent]
    draw_count[innocent] = s.pending[innocent] + 2
    ahead[innocent] = 1
    s.wd4_illegal[challenge] = False


def _is_playable(
    rules: Rules, s: UnoState, games: IntArray, seats: IntArray, faces: IntArray
) -> BoolArray:
    """Whether ``faces`` (one per game, -1 for none) may be played by ``seats`` now."""
    coloured = (faces >= 0) & (faces < C.NUM_COLOURED_FACES)
    ok = np.zeros(games.shape, dtype=bool)
    rows = np.flatnonzero(coloured)
    ok[rows] = PLAYABLE[s.top[games[rows]], s.colour[games[rows]], faces[rows]]
    ok |= faces == C.WILD
    wd4 = faces == C.WILD_DRAW_FOUR
    if wd4.any():
        have = s.hands[games, seats] > 0
        ok |= wd4 & _wd4_allowed(rules, have, s.colour[games])
    return ok


def _play(
    rules: Rules,
    s: UnoState,
    games: IntArray,
    seats: IntArray,
    acts: IntArray,
    draw_seat: IntArray,
    draw_count: IntArray,
    ahead: IntArray,
) -> IntArray:
    """Play cards; record penalty draws and turn moves; return the games whose hand ends."""
    n_players = rules.num_players
    faces = C.ACTION_FACE[acts].astype(np.int64)
    wd4 = faces == C.WILD_DRAW_FOUR
    if wd4.any():
        # Judged against the colour current before the play (RULES.md §5).
        held = (s.hands[games[wd4], seats[wd4]] > 0) & COLOUR_MEMBERS[s.colour[games[wd4]]]
        s.wd4_illegal[games[wd4]] = held.any(axis=1)
    s.hands[games, seats, faces] -= 1
    s.hand_size[games, seats] -= 1
    s.discard[games, s.discard_len[games]] = faces
    s.discard_len[games] += 1
    s.top[games] = faces
    s.colour[games] = C.ACTION_COLOUR[acts]
    s.drawn[games] = -1
    left = s.hand_size[games, seats]
    if rules.uno_call:
        exposed = (left == 1) & ~s.declared[games]
        s.uno_exposed[games[exposed]] = seats[exposed]

    rank = C.FACE_RANK[faces]
    out = left == 0
    reverse = rank == C.REVERSE
    s.direction[games[reverse & ~out]] *= -1  # a final Reverse has no effect
    victim = (seats + s.direction[games]) % n_players
    draw_two = rank == C.DRAW_TWO

    # A final Draw Two / Wild Draw Four still makes the next player draw (RULES.md §7).
    penalty = np.where(draw_two, 2, np.where(wd4, 4, 0))
    challengeable = wd4 & ~out & rules.wd4_challenge & (not rules.wd4_anytime)
    direct = (penalty > 0) & ~challengeable
    draw_seat[games[direct]] = victim[direct]
    draw_count[games[direct]] = penalty[direct]

    if challengeable.any():
        g = games[challengeable]
        s.phase[g] = CHALLENGE_PHASE
        s.current[g] = victim[challengeable]
        s.pending[g] = 4
        s.wd4_seat[g] = seats[challengeable]
        s.declared[g] = False
    # Seats to advance: 2 past a Skip or a penalty, 0 for a two-player Reverse, else 1.
    going = ~out & ~challengeable
    skip = (rank == C.SKIP) | draw_two | wd4
    again = reverse & rules.two_player
    seats_ahead = np.where(skip, 2, np.where(again, 0, 1))
    ahead[games[going]] = seats_ahead[going]
    return games[out]


def _end_hand(rules: Rules, s: UnoState, games: IntArray, winners: IntArray) -> None:
    s.done[games] = True
    s.phase[games] = OVER
    s.winner[games] = winners
    s.uno_exposed[games] = -1
    s.declared[games] = False
    s.pending[games] = 0
    s.wd4_seat[games] = -1
    left = s.hands[games].astype(np.int32) @ C.FACE_POINTS  # (k, N) points left in each hand
    points = np.zeros_like(left)
    points[np.arange(games.size), winners] = left.sum(axis=1)
    s.hand_points[games] = points
    s.scores[games] += points
    s.match_over[games] = s.scores[games].max(axis=1) >= rules.target_score


def _draw_cards(s: UnoState, games: IntArray, seats: IntArray, counts: IntArray) -> IntArray:
    """Move cards from the draw pile to the seats' hands, reshuffling when it runs out.

    ``games`` must not repeat. Returns the last face drawn per game (-1 if none could be:
    both piles empty).
    """
    last = np.full(games.shape, -1, dtype=np.int64)
    # Most games have the cards in the pile: take them all at once.
    enough = s.draw_pos[games] + counts <= C.DECK_SIZE
    rows = np.flatnonzero(enough)
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
            _reshuffle_discards(s, g[empty])
            can = s.draw_pos[g] < C.DECK_SIZE  # both piles may be empty: nothing to draw
            g, sel = g[can], sel[can]
        faces = s.deck[g, s.draw_pos[g].astype(np.int64)]
        s.hands[g, seats[sel], faces] += 1
        s.hand_size[g, seats[sel]] += 1
        s.draw_pos[g] += 1
        last[sel] = faces
    return last


def _reshuffle_discards(s: UnoState, games: IntArray) -> None:
    """Shuffle each game's discard pile, except its top card, into a new draw pile."""
    n = s.discard_len[games].astype(np.int64) - 1
    games, n = games[n > 0], n[n > 0]
    if not games.size:
        return
    order = _shuffle_orders(s, games, n)
    zero = np.zeros_like(n)
    _place_shuffled(s.deck, games, C.DECK_SIZE - n, s.discard, games, zero, order, n)
    s.draw_pos[games] = C.DECK_SIZE - n
    s.discard[games, 0] = s.discard[games, n]
    s.discard_len[games] = 1


# ----------------------------------------------------------------------------------------
# Hands, matches and rewards
# ----------------------------------------------------------------------------------------


def next_hand(rules: Rules, state: UnoState) -> UnoState:
    """Deal the next hand of every match: the deal passes to the left, scores are kept.

    Raises:
        ValueError: if a hand is still live or a match is already over.
    """
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
    rules: Rules, state: UnoState, games: IntArray | BoolArray, keys: npt.ArrayLike
) -> UnoState:
    """Replace the given games with freshly dealt matches (used by autoreset).

    Args:
        rules: The rules of the batch.
        state: The batch (not modified).
        games: Indices or a boolean mask of the games to replace.
        keys: One new key per replaced game.
    """
    idx = np.arange(state.batch_size)[games]
    key_arr = np.atleast_1d(np.asarray(keys)).astype(np.uint64)
    if key_arr.shape != idx.shape:
        raise ValueError(f"need one key per reset game: {idx.size} games, {key_arr.size} keys")
    new = state.copy()
    if idx.size:
        fresh = init(rules, keys=key_arr)
        for name, arr in fresh.array_fields().items():
            getattr(new, name)[idx] = arr
    return new


def hand_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Win/loss rewards of finished hands, shape (B, N).

    The winner gets +1 and every other seat -1/(N-1), so rewards sum to zero. Live and
    truncated hands give zeros.
    """
    n_players = rules.num_players
    out = np.zeros((state.batch_size, n_players), dtype=np.float32)
    won = np.flatnonzero(state.done)
    out[won] = -1.0 / (n_players - 1)
    out[won, state.winner[won]] = 1.0
    return out


def card_totals(state: UnoState) -> npt.NDArray[np.int64]:
    """Cards in hands + draw pile + discard pile per game (always 108: an invariant)."""
    in_hands = state.hands.sum(axis=(1, 2), dtype=np.int64)
    in_pile = C.DECK_SIZE - state.draw_pos.astype(np.int64)
    return in_hands + in_pile + state.discard_len.astype(np.int64)
