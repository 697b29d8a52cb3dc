"""The observation encoding: one flat float32 vector per player, with named slices.

This module is the one place where the layout is defined. Every env adapter, bot and
checkpoint uses :data:`OBS_LAYOUT` to find a field, and :data:`OBS_VERSION` changes
whenever the encoding changes (checkpoints record it and refuse a mismatch).

An observation holds only what the observing seat could know at the table: its own hand,
the top card and colour, the direction and phase, the card it just drew, the pending
penalty, every seat's card count, the scores, the discard pile (public), the draw pile
size, who may be caught for a missing UNO, and the public history of the hand that a
careful player tracks (version 4): the colours each seat has shown it lacks, the last card
each seat played and the colour it last named with a wild, the cards each seat has drawn,
and how many cards of each colour the observer has not seen. Seats are relative to the observer: slot 0 is
the observer, slot k the seat k places further in seat order (clockwise); slots past the
table size are zero.

The fields are listed once, in :data:`OBS_FIELDS`: each with its name, size, bounds and
meaning. Everything else (:data:`OBS_LAYOUT`, :data:`OBS_DIM`, the env spaces'
:func:`observation_bounds`, the docs' table from :func:`fields_table`) is derived from it.

The legal actions repeat the mask as features (version 2): they are derived only from the
observer's own hand and public information, and they spare a network from learning the
matching rules before it can learn strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core import UnoState, legal_action_mask
from uno_env.core.checks import check_rules, check_table, int_values
from uno_env.core.params import StateArrays, arrays_of
from uno_env.files import shown
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.rules import Rules

__all__ = [
    "NUM_PHASE_SLOTS",
    "OBS_DIM",
    "OBS_FIELDS",
    "OBS_LAYOUT",
    "OBS_VERSION",
    "ObsField",
    "encode",
    "encode_one",
    "field_bounds",
    "fields_table",
    "get_field",
    "observation_bounds",
]

OBS_VERSION = 4
"""Bump whenever the layout or the meaning of a field changes.

History: 1, the first layout; 2, the legal actions repeated as features; 3, the same
layout with ``drawn_card`` fixed (version 2 computed its slot in int8 arithmetic, so a
drawn face of 6 or more wrapped around and set a stray 1 in another field); 4, the public
history of the hand appended (colours each seat has shown it lacks, the last card each
seat played and the colour it last named, the cards each seat has drawn, the unseen cards
per colour; see :mod:`uno_env.core.history`).
"""
NUM_PHASE_SLOTS = 8
"""Room for the official phases and those the house rules add."""


DECK_POINTS = int((C.FACE_POINTS.astype(np.int64) * C.FACE_COUNTS).sum())
"""Points of the whole deck (1240): no hand can score more."""
_MOST_COPIES = float(C.FACE_COUNTS.max())
NUM_PLAYED_COLOURS = C.NUM_COLOURS + 1
"""Colours of a played card: R, Y, G, B, or wild."""
NUM_PLAYED_RANKS = C.NUM_RANKS + 2
"""Ranks of a played card: 0-9, Skip, Reverse, Draw Two, Wild, Wild Draw Four."""
UNSEEN_GROUPS = C.NUM_COLOURS + 1
"""Groups of the unseen-card counts: R, Y, G, B, and the wilds."""
_MOST_OF_A_COLOUR = float(C.FACE_COUNTS[: C.NUM_RANKS].sum())
"""Cards of one colour in the deck (25): no unseen-card count is larger."""


def _max_score(rules: Rules) -> float:
    # Envs deal a fresh match per episode, but a match-level score stays below the target
    # plus one hand's points; the factor 2 leaves room for house scoring rules.
    return (rules.target_score + 2 * DECK_POINTS) / rules.target_score


Bound = float | Callable[[Rules], float]
"""A bound of a field: a number, or a function of the rules."""


@dataclass(frozen=True)
class ObsField:
    """One named slice of the observation vector.

    Attributes:
        name: The field's name (the key of :data:`OBS_LAYOUT`).
        size: Its number of entries.
        low: The smallest value an entry can take.
        high: The largest value an entry can take (a number or a function of the rules).
        meaning: What the entries say, for the docs.
    """

    name: str
    size: int
    low: float
    high: Bound
    meaning: str

    def bounds(self, rules: Rules) -> tuple[float, float]:
        """The (low, high) bounds of every entry under ``rules``."""
        high = self.high(rules) if callable(self.high) else self.high
        return self.low, float(high)


OBS_FIELDS: tuple[ObsField, ...] = (
    ObsField("hand", C.NUM_FACES, 0.0, _MOST_COPIES, "own cards, count per face"),
    ObsField("top_card", C.NUM_FACES, 0.0, 1.0, "one-hot face of the top discard"),
    ObsField(
        "colour",
        C.NUM_COLOURS + 1,
        0.0,
        1.0,
        'one-hot current colour R, Y, G, B, or "not named yet"',
    ),
    ObsField("direction", 1, -1.0, 1.0, "+1 clockwise, -1 counter-clockwise"),
    ObsField(
        "phase",
        NUM_PHASE_SLOTS,
        0.0,
        1.0,
        "one-hot decision phase (see ``uno_env.core.PHASE_NAMES``)",
    ),
    ObsField(
        "drawn_card",
        C.NUM_FACES,
        0.0,
        1.0,
        "one-hot face just drawn (phase after_draw), else zeros",
    ),
    ObsField(
        "pending_penalty",
        1,
        0.0,
        float(C.DECK_SIZE),
        "cards the observer draws if it accepts (e.g. 4 for a W+4)",
    ),
    ObsField(
        "hand_sizes",
        C.MAX_PLAYERS,
        0.0,
        float(C.DECK_SIZE),
        "card count of each seat, relative to the observer",
    ),
    ObsField(
        "scores",
        C.MAX_PLAYERS,
        0.0,
        _max_score,
        "match scores / target_score, relative to the observer",
    ),
    ObsField(
        "discard_counts",
        C.NUM_FACES,
        0.0,
        _MOST_COPIES,
        "count per face in the discard pile (public information)",
    ),
    ObsField("draw_pile_size", 1, 0.0, 1.0, "cards left in the draw pile / 108"),
    ObsField("declared", 1, 0.0, 1.0, "the observer has declared UNO this turn"),
    ObsField(
        "uno_exposed",
        C.MAX_PLAYERS,
        0.0,
        1.0,
        "one-hot relative seat that may be caught for not declaring",
    ),
    ObsField(
        "num_players",
        C.MAX_PLAYERS,
        0.0,
        1.0,
        "one-hot table size (slot k means k+1 players)",
    ),
    ObsField(
        "legal_actions",
        C.NUM_ACTIONS,
        0.0,
        1.0,
        "the observer's legal-action mask (zeros for a non-acting seat)",
    ),
    ObsField(
        "shown_lacks",
        C.MAX_PLAYERS * C.NUM_COLOURS,
        0.0,
        1.0,
        "per relative seat (4 slots each, R Y G B): 1 where it drew on its turn while that "
        "colour was to be matched, and has not played that colour since",
    ),
    ObsField(
        "last_played_colour",
        C.MAX_PLAYERS * NUM_PLAYED_COLOURS,
        0.0,
        1.0,
        "per relative seat (5 slots: R Y G B wild): one-hot colour of its last card played "
        "this hand, zeros if none",
    ),
    ObsField(
        "last_played_rank",
        C.MAX_PLAYERS * NUM_PLAYED_RANKS,
        0.0,
        1.0,
        "per relative seat (15 slots: 0-9 S R +2 W W+4): one-hot rank of its last card "
        "played this hand, zeros if none",
    ),
    ObsField(
        "last_named",
        C.MAX_PLAYERS * C.NUM_COLOURS,
        0.0,
        1.0,
        "per relative seat (4 slots): one-hot colour it last named with a wild this hand",
    ),
    ObsField(
        "cards_drawn",
        C.MAX_PLAYERS,
        0.0,
        float(C.DECK_SIZE),
        "cards each relative seat has drawn this hand, penalties included (capped at 108)",
    ),
    ObsField(
        "unseen_colours",
        UNSEEN_GROUPS,
        0.0,
        _MOST_OF_A_COLOUR,
        "cards of each colour (R Y G B, then wilds) neither in the observer's hand nor in "
        "the discard pile: in other hands or the draw pile",
    ),
)
"""The observation's fields, in order: the one definition of the layout."""


def _layout() -> dict[str, slice]:
    out: dict[str, slice] = {}
    start = 0
    for field in OBS_FIELDS:
        out[field.name] = slice(start, start + field.size)
        start += field.size
    return out


OBS_LAYOUT: dict[str, slice] = _layout()
"""Named slices into the flat observation vector."""
OBS_DIM: int = sum(field.size for field in OBS_FIELDS)
"""Length of the observation vector."""


def field_bounds(rules: Rules) -> dict[str, tuple[float, float]]:
    """The (low, high) bounds of each observation field under ``rules``."""
    check_rules(rules)
    return {field.name: field.bounds(rules) for field in OBS_FIELDS}


def observation_bounds(
    rules: Rules,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The (low, high) bounds of the whole observation vector, each shape (OBS_DIM,)."""
    check_rules(rules)
    low = np.empty(OBS_DIM, dtype=np.float32)
    high = np.empty(OBS_DIM, dtype=np.float32)
    for field in OBS_FIELDS:
        low[OBS_LAYOUT[field.name]], high[OBS_LAYOUT[field.name]] = field.bounds(rules)
    return low, high


def fields_table() -> str:
    """The fields as a Markdown table (name, size, bounds, meaning), for the docs."""
    lines = ["| field | size | bounds | meaning |", "|---|---|---|---|"]
    for field in OBS_FIELDS:
        high = "see rules" if callable(field.high) else f"{field.high:g}"
        lines.append(
            f"| `{field.name}` | {field.size} | [{field.low:g}, {high}] | {field.meaning} |"
        )
    return "\n".join(lines)


def get_field(observations: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
    """Return the named slice of a batch of observations, shape (B, size).

    Raises:
        ValueError: naming the unknown field and the known ones, or observations whose
            last axis is not :data:`OBS_DIM` long.
        TypeError: for observations that are no NumPy array.
    """
    if not isinstance(name, str) or name not in OBS_LAYOUT:
        raise ValueError(
            f"name: unknown observation field {shown(name)}; fields are {list(OBS_LAYOUT)}"
        )
    if not isinstance(observations, np.ndarray):  # it is sliced as an array below
        raise TypeError(
            f"observations: expected an array of shape (..., {OBS_DIM}), got {shown(observations)}"
        )
    width = np.shape(observations)[-1:]
    if width != (OBS_DIM,):
        raise ValueError(
            f"observations: expected a last axis of {OBS_DIM} values (OBS_DIM), got shape "
            f"{np.shape(observations)}"
        )
    return observations[..., OBS_LAYOUT[name]]


def encode(
    rules: Rules, state: UnoState, seats: npt.NDArray[np.integer] | None = None
) -> npt.NDArray[np.float32]:
    """Encode each game from one seat's point of view.

    Args:
        rules: The rules of the batch.
        state: The batch of games.
        seats: The observing seat per game, shape (B,). ``None`` means the seat that must
            act. Fields that only concern the acting seat (the drawn card, the pending
            penalty, the UNO declaration) are zero for any other observer.

    Returns:
        Observations, shape (B, OBS_DIM), float32.

    Raises:
        TypeError: for rules or a state of the wrong kind.
        ValueError: naming a seat (as given) that is no integer or outside the table, or
            rules for another table size.
    """
    check_table(rules, state)
    n_games, n_players = state.batch_size, rules.num_players
    if seats is None:
        seat = state.current.astype(np.int64)
    else:
        seat = seats  # type: ignore[assignment]
        if not (type(seats) is np.ndarray and seats.dtype == np.int64 and seats.flags.c_contiguous):
            seat = np.ascontiguousarray(int_values("seats", seats))
        if np.shape(seats) != (n_games,):  # a scalar too: ascontiguousarray makes it (1,)
            raise ValueError(
                f"seats must have shape (B,) = ({n_games},), got "
                f"{'an array' if isinstance(seats, np.ndarray) and seats.ndim else shown(seats)}"
                f" of shape {np.shape(seats)}"
            )
    obs = np.zeros((n_games, OBS_DIM), dtype=np.float32)
    mask = legal_action_mask(rules, state)
    bad = _ENCODE(arrays_of(state), n_players, rules.target_score, seat, mask, obs)
    if bad >= 0:
        raise ValueError(
            f"seats must be in 0..{n_players - 1}, got {int(seat[bad])} for game {bad}"
        )
    return obs


# Offsets of the fields, as plain ints for the compiled encoder.
_HAND = OBS_LAYOUT["hand"].start
_TOP = OBS_LAYOUT["top_card"].start
_COLOUR = OBS_LAYOUT["colour"].start
_DIRECTION = OBS_LAYOUT["direction"].start
_PHASE = OBS_LAYOUT["phase"].start
_DRAWN = OBS_LAYOUT["drawn_card"].start
_PENDING = OBS_LAYOUT["pending_penalty"].start
_HAND_SIZES = OBS_LAYOUT["hand_sizes"].start
_SCORES = OBS_LAYOUT["scores"].start
_DISCARDS = OBS_LAYOUT["discard_counts"].start
_PILE = OBS_LAYOUT["draw_pile_size"].start
_DECLARED = OBS_LAYOUT["declared"].start
_EXPOSED = OBS_LAYOUT["uno_exposed"].start
_PLAYERS = OBS_LAYOUT["num_players"].start
_LEGAL = OBS_LAYOUT["legal_actions"].start
_LACKS = OBS_LAYOUT["shown_lacks"].start
_LAST_COLOUR = OBS_LAYOUT["last_played_colour"].start
_LAST_RANK = OBS_LAYOUT["last_played_rank"].start
_LAST_NAMED = OBS_LAYOUT["last_named"].start
_CARDS_DRAWN = OBS_LAYOUT["cards_drawn"].start
_UNSEEN = OBS_LAYOUT["unseen_colours"].start
_COPIES = C.FACE_COUNTS.astype(np.int64)
_PLAYED_COLOUR = np.array(
    [C.FACE_COLOUR[f] for f in range(C.NUM_COLOURED_FACES)] + [C.NUM_COLOURS] * 2, dtype=np.int64
)
"""Colour slot of each face: 0-3, or 4 for the wilds (also their unseen-card group)."""
_PLAYED_RANK = np.array(
    [C.FACE_RANK[f] for f in range(C.NUM_COLOURED_FACES)] + [C.NUM_RANKS, C.NUM_RANKS + 1],
    dtype=np.int64,
)
"""Rank slot of each face: 0-12, 13 for a Wild, 14 for a Wild Draw Four."""


@jit
def _encode(
    s: StateArrays,
    n_players: int,
    target_score: int,
    seats: np.ndarray,
    mask: np.ndarray,
    obs: np.ndarray,
) -> int:
    """Fill the zeroed rows of ``obs``: game g seen from ``seats[g]``.

    Returns the first game whose seat is out of range (its row left zero), else -1.
    """
    for g in range(obs.shape[0]):
        if not 0 <= seats[g] < n_players:
            return g
    for g in range(obs.shape[0]):
        encode_one(s, n_players, target_score, g, seats[g], mask[g], obs[g])
    return -1


@jit_inline
def encode_one(
    s: StateArrays,
    n_players: int,
    target_score: int,
    g: int,
    seat: int,
    mask: np.ndarray,
    o: np.ndarray,
) -> None:
    """Fill the zeroed row ``o`` with game ``g`` seen from ``seat`` (in ``0..n_players - 1``).

    The one encoder of :func:`encode`, public for compiled callers that encode games where
    they step them (the learner tables' compiled loop); ``mask`` is the game's (80,)
    legal-action mask.

    State scalars are cast to int before any index arithmetic: compiled, int8 + int is
    int64, but run as plain Python (NUMBA_DISABLE_JIT) it is int8 and would wrap.
    """
    acting = seat == s.current[g]
    for face in range(C.NUM_FACES):
        o[_HAND + face] = s.hands[g, seat, face]
    o[_TOP + int(s.top[g])] = 1.0
    o[_COLOUR + int(s.colour[g])] = 1.0
    o[_DIRECTION] = s.direction[g]
    o[_PHASE + int(s.phase[g])] = 1.0
    if acting and s.drawn[g] >= 0:
        o[_DRAWN + int(s.drawn[g])] = 1.0
    if acting:
        o[_PENDING] = s.pending[g]
        o[_DECLARED] = s.declared[g]
        for action in range(C.NUM_ACTIONS):
            o[_LEGAL + action] = mask[action]
    # Seats relative to the observer: slot k is seat (seat + k) % N (a subtraction is
    # cheaper than a division, and both are below 2N).
    for k in range(n_players):
        other = seat + k
        if other >= n_players:
            other -= n_players
        o[_HAND_SIZES + k] = s.hand_size[g, other]
        o[_SCORES + k] = s.scores[g, other] / target_score
        # The public history of the hand (uno_env.core.history).
        for colour in range(C.NUM_COLOURS):
            o[_LACKS + k * C.NUM_COLOURS + colour] = s.shown_lacks[g, other, colour]
        last = int(s.last_played[g, other])
        if last >= 0:
            o[_LAST_COLOUR + k * NUM_PLAYED_COLOURS + _PLAYED_COLOUR[last]] = 1.0
            o[_LAST_RANK + k * NUM_PLAYED_RANKS + _PLAYED_RANK[last]] = 1.0
        named = int(s.last_named[g, other])
        if named >= 0:
            o[_LAST_NAMED + k * C.NUM_COLOURS + named] = 1.0
        o[_CARDS_DRAWN + k] = min(int(s.seat_draws[g, other]), C.DECK_SIZE)
    # The discard pile is public: count its faces.
    for i in range(s.discard_len[g]):
        o[_DISCARDS + int(s.discard[g, i])] += 1.0
    # Unseen cards: the deck minus the observer's hand minus the discard pile.
    for face in range(C.NUM_FACES):
        unseen = _COPIES[face] - s.hands[g, seat, face] - o[_DISCARDS + face]
        o[_UNSEEN + _PLAYED_COLOUR[face]] += unseen
    o[_PILE] = (C.DECK_SIZE - s.draw_pos[g]) / C.DECK_SIZE
    exposed = int(s.uno_exposed[g])
    if exposed >= 0:
        slot = exposed - seat
        if slot < 0:
            slot += n_players
        o[_EXPOSED + slot] = 1.0
    o[_PLAYERS + n_players - 1] = 1.0


_ENCODE = Kernel(_encode)
