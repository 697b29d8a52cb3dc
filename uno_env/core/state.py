"""The batched game state, its phases and the error raised for illegal actions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from uno_env.rules import Rules

__all__ = [
    "AFTER_DRAW",
    "ARRAY_FIELDS",
    "CHALLENGE_PHASE",
    "CHOOSE_COLOUR",
    "JUMP_IN",
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

STREAM_STRIDE = 2**20
"""Random streams per hand: the deal uses ``hand * STREAM_STRIDE``, reshuffles the next ones."""
TURN_STREAM_OFFSET = 2**19
"""Per-turn random draws (RLCard's random wild colour) use ``hand*STRIDE + OFFSET + turn``."""
SEAT_STREAM_OFFSET = 2**18
"""Per-seat draw streams use ``hand*STRIDE + OFFSET + seat``, numbered by the seat's draws."""
DEALER_STREAM = 2**40 - 1

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in its game's state.

    The state passed to :func:`uno_env.core.step` is left untouched.
    """


@dataclass
class UnoState:
    """The state of B games. See ``docs/engine.md`` for every field.

    States are values: :func:`uno_env.core.step` returns a new one. Treat the arrays as
    read-only (the legal-action mask is cached on the state).
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
    finish_rank: npt.NDArray[np.int8]
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
        return {name: getattr(self, name) for name in ARRAY_FIELDS}

    def copy(self) -> UnoState:
        """Return a deep copy of the arrays."""
        return UnoState(**{name: getattr(self, name).copy() for name in ARRAY_FIELDS})

    def select(self, games: IntArray | BoolArray) -> UnoState:
        """Return the sub-batch of the given game indices (or boolean mask), as copies."""
        # Fancy indexing already copies.
        return UnoState(**{name: getattr(self, name)[games] for name in ARRAY_FIELDS})


ARRAY_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(UnoState) if not f.name.startswith("_")
)
"""Names of the state's arrays, in declaration order (looked up once, used on every step)."""
