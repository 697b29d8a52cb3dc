"""The batched game state, its phases and the error raised for illegal actions."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from uno_env.cards import DECK_SIZE, NUM_COLOURS, NUM_FACES, NUM_LACK_FACTS
from uno_env.jit import jit_inline
from uno_env.rules import Rules

if TYPE_CHECKING:
    from uno_env.core.params import StateArrays

__all__ = [
    "AFTER_DRAW",
    "ARRAY_FIELDS",
    "CHALLENGE_PHASE",
    "CHOOSE_COLOUR",
    "DRAW_FOUR_PENALTY",
    "DRAW_TWO_PENALTY",
    "JUMP_IN",
    "NO_FACE",
    "NO_PENALTY",
    "NO_SEAT",
    "NUM_PHASES",
    "OVER",
    "PHASE_NAMES",
    "PLAY",
    "STACK",
    "SWAP_TARGET",
    "BoolArray",
    "IllegalActionError",
    "IntArray",
    "UnoState",
    "clear_decision",
]

# Phases: what the seat that must act is deciding.
PLAY = 0  # a normal turn
AFTER_DRAW = 1  # play the card just drawn, or keep it
CHALLENGE_PHASE = 2  # facing a Wild Draw Four: challenge or accept
CHOOSE_COLOUR = 3  # name the colour of a Wild starter
OVER = 4  # the hand is finished (won or truncated)
STACK = 5  # facing a draw penalty that may be stacked or deflected (house rules)
JUMP_IN = 6  # an out-of-turn window to play an identical card (house rules)
SWAP_TARGET = 7  # seven-zero: choose whom to swap hands with (house rules)
PHASE_NAMES = (
    "play",
    "after_draw",
    "challenge",
    "choose_colour",
    "over",
    "stack",
    "jump_in",
    "swap_target",
)
NUM_PHASES = len(PHASE_NAMES)

# Draw penalties. ``penalty_kind`` (in STACK) holds the penalty of the card that started the
# penalty being faced, so the same numbers are both the cards drawn and the kind's code.
NO_PENALTY = 0  # no penalty is being faced (also a Wild Draw Four facing a challenge)
DRAW_TWO_PENALTY = 2  # a Draw Two's penalty
DRAW_FOUR_PENALTY = 4  # a Wild Draw Four's penalty (and what a guilty bluffer draws)

# "None" in the seat and face fields (``winner``, ``wd4_seat``, ``drawn``, ``effect_face`` ...).
NO_SEAT = -1
NO_FACE = -1

STREAM_STRIDE = 2**20
"""Random streams per hand: the deal uses ``hand * STREAM_STRIDE``, reshuffles the next ones."""
TURN_STREAM_OFFSET = 2**19
"""Per-turn random draws (RLCard's random wild colour) use ``hand*STRIDE + OFFSET + turn``."""
SEAT_STREAM_OFFSET = 2**18
"""Per-seat draw streams use ``hand*STRIDE + OFFSET + seat``, numbered by the seat's draws."""
DEALER_STREAM = 2**40 - 1

_OVER_CODE = np.array(OVER, dtype=np.int8)
"""``OVER`` as a 0-d array of the phase's dtype: comparing with it skips numpy's promotion of
a Python int, a third of the cost of ``live`` at small batches."""

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@jit_inline
def clear_decision(s: StateArrays, g: int, phase: int) -> None:
    """Clear game ``g``'s decision fields and enter ``phase``: a new turn, or the hand's end.

    The fields of a decision in progress (a declared UNO, a drawn card, a penalty faced, a
    Wild Draw Four to judge, an effect waiting to resolve) are reset. ``uno_exposed`` is
    not: a new turn may still catch it; the callers that end the hand clear it themselves.
    """
    s.phase[g] = phase
    s.declared[g] = False
    s.drawn[g] = NO_FACE
    s.pending[g] = 0
    s.penalty_kind[g] = NO_PENALTY
    s.wd4_seat[g] = NO_SEAT
    s.effect_face[g] = NO_FACE
    s.effect_seat[g] = NO_SEAT


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in its game's state.

    The state passed to :func:`uno_env.core.step` is left untouched.
    """


@dataclass(frozen=True, eq=False)
class UnoState:
    """The state of B games. See ``docs/engine.md`` for every field.

    States are values: :func:`uno_env.core.step` returns a new one. Treat the arrays as
    read-only (the legal-action mask is cached on the state). The fields cannot be
    reassigned, and a state built by hand is checked: every array must have its dtype
    and shape, be C-contiguous and writeable, because the compiled rules rely on it.

    Raises:
        ValueError: naming the first array that does not fit.
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
    penalty_kind: npt.NDArray[np.int8]
    wd4_seat: npt.NDArray[np.int8]
    wd4_illegal: npt.NDArray[np.bool_]
    declared: npt.NDArray[np.bool_]
    uno_exposed: npt.NDArray[np.int8]
    effect_face: npt.NDArray[np.int8]
    effect_seat: npt.NDArray[np.int8]
    shuffles: npt.NDArray[np.int32]
    dealer: npt.NDArray[np.int8]
    turn: npt.NDArray[np.int32]
    done: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    winner: npt.NDArray[np.int8]
    seat_draws: npt.NDArray[np.int32]
    shown_lacks: npt.NDArray[np.bool_]
    lack_marks: npt.NDArray[np.int32]
    choice_colour: npt.NDArray[np.int8]
    choice_top: npt.NDArray[np.int8]
    choice_draws: npt.NDArray[np.int32]
    last_played: npt.NDArray[np.int8]
    last_named: npt.NDArray[np.int8]
    pile_faces: npt.NDArray[np.int8]
    shown_holds: npt.NDArray[np.bool_]
    finish_rank: npt.NDArray[np.int8]
    hand_points: npt.NDArray[np.int32]
    scores: npt.NDArray[np.int32]
    match_over: npt.NDArray[np.bool_]
    step_drawn: npt.NDArray[np.int16]
    step_skipped: npt.NDArray[np.int8]
    step_events: npt.NDArray[np.int16]
    _mask_cache: tuple[Rules, BoolArray] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The legal-action mask last computed for these arrays, with its rules."""
    _arrays: StateArrays | None = field(default=None, init=False, repr=False, compare=False)
    """The arrays as one tuple for compiled code (:func:`uno_env.core.params.arrays_of`)."""

    def __post_init__(self) -> None:
        n_games, n_players = self.key.shape[0] if self.key.ndim else -1, None
        for name in ARRAY_FIELDS:
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray):
                raise ValueError(f"UnoState.{name} must be a numpy array, got {type(arr)}")
            if n_players is None and name == "hands" and arr.ndim == 3:
                n_players = arr.shape[1]
            tail = tuple(n_players or -1 if d == "N" else d for d in _TRAILING.get(name, ()))
            expected = (n_games, *tail)
            if arr.dtype != _DTYPES[name] or arr.shape != expected:
                raise ValueError(
                    f"UnoState.{name} must be {np.dtype(_DTYPES[name]).name} of shape "
                    f"{expected} (B={n_games}, N={n_players}), got {arr.dtype.name} {arr.shape}"
                )
            if not (arr.flags.c_contiguous and arr.flags.writeable):
                raise ValueError(f"UnoState.{name} must be a C-contiguous, writeable array")

    @classmethod
    def _trusted(cls, arrays: dict[str, np.ndarray]) -> UnoState:
        """Build a state from arrays known to fit (copies of a state's), skipping the checks."""
        state = object.__new__(cls)
        state.__dict__.update(arrays)
        state.__dict__["_mask_cache"] = None
        state.__dict__["_arrays"] = None
        return state

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
        live: BoolArray = self.phase != _OVER_CODE
        return live

    def array_fields(self) -> dict[str, np.ndarray]:
        """Return the state arrays by name (no copies)."""
        return {name: getattr(self, name) for name in ARRAY_FIELDS}

    def copy(self) -> UnoState:
        """Return a deep copy of the arrays."""
        fields = self.__dict__
        return UnoState._trusted({name: fields[name].copy() for name in ARRAY_FIELDS})

    def select(self, games: IntArray | BoolArray) -> UnoState:
        """Return the sub-batch of the given game indices (or boolean mask), as copies."""
        index = np.asarray(games)
        if index.dtype != np.bool_:
            index = np.atleast_1d(index).astype(np.intp)
        # Fancy indexing already copies (and gives C-contiguous arrays).
        fields = self.__dict__
        return UnoState._trusted({name: fields[name][index] for name in ARRAY_FIELDS})

    def view(self) -> UnoState:
        """Return a new state object over the same arrays (without the cached mask).

        For owners that changed the arrays in place (an env writing a sub-batch back).
        """
        return UnoState._trusted({name: self.__dict__[name] for name in ARRAY_FIELDS})

    def clear_mask_cache(self) -> None:
        """Forget the cached legal-action mask, after the arrays were changed in place.

        The core caches a state's mask; compiled callers that step games in place through
        :mod:`uno_env.core.kernel` call this before handing the state back to the Python API.
        """
        self.__dict__["_mask_cache"] = None

    def with_fields(self, **arrays: np.ndarray) -> UnoState:
        """Return a state with some arrays replaced (checked like a new state)."""
        return UnoState(**{**self.array_fields(), **arrays})


ARRAY_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(UnoState) if not f.name.startswith("_")
)
"""Names of the state's arrays, in declaration order (looked up once, used on every step)."""

_DTYPES: dict[str, np.dtype] = {
    f.name: np.dtype(getattr(np, re.fullmatch(r"npt\.NDArray\[np\.(\w+)\]", str(f.type)).group(1)))  # type: ignore[union-attr]
    for f in dataclasses.fields(UnoState)
    if f.name in ARRAY_FIELDS
}
"""Each array's dtype, read from the annotations above (one source)."""

_TRAILING: dict[str, tuple[int | str, ...]] = {
    "deck": (DECK_SIZE,),
    "discard": (DECK_SIZE,),
    "hands": ("N", NUM_FACES),
    "hand_size": ("N",),
    "seat_draws": ("N",),
    "shown_lacks": ("N", NUM_COLOURS),
    "lack_marks": ("N", NUM_LACK_FACTS),
    "choice_colour": ("N",),
    "choice_top": ("N",),
    "choice_draws": ("N",),
    "last_played": ("N",),
    "last_named": ("N",),
    "finish_rank": ("N",),
    "hand_points": ("N",),
    "scores": ("N",),
    "pile_faces": (NUM_FACES,),
    "shown_holds": ("N", NUM_COLOURS),
    "step_drawn": ("N",),
}
"""The dimensions after the batch axis of the per-seat and per-card arrays (N: seats)."""
