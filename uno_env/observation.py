"""The observation encoding: one flat float32 vector per player, with named slices.

This module is the one place where the layout is defined. Every env adapter, bot and
checkpoint uses :data:`OBS_LAYOUT` to find a field, and :data:`OBS_VERSION` changes
whenever the encoding changes (checkpoints record it and refuse a mismatch).

An observation holds only what the observing seat could know at the table: its own hand,
the top card and colour, the direction and phase, the card it just drew, the pending
penalty, every seat's card count, the scores, the discard pile (public), the draw pile
size and who may be caught for a missing UNO. Seats are relative to the observer: slot 0 is
the observer, slot k the seat k places further in seat order (clockwise); slots past the
table size are zero.

===================  =====  ===========================================================
name                 size   meaning
===================  =====  ===========================================================
hand                 54     own cards, count per face
top_card             54     one-hot face of the top discard
colour               5      one-hot current colour R, Y, G, B, or "not named yet"
direction            1      +1 clockwise, -1 counter-clockwise
phase                8      one-hot decision phase (see ``uno_env.core.PHASE_NAMES``)
drawn_card           54     one-hot face just drawn (phase after_draw), else zeros
pending_penalty      1      cards the observer draws if it accepts (e.g. 4 for a W+4)
hand_sizes           10     card count of each seat, relative to the observer
scores               10     match scores / target_score, relative to the observer
discard_counts       54     count per face in the discard pile (public information)
draw_pile_size       1      cards left in the draw pile / 108
declared             1      the observer has declared UNO this turn
uno_exposed          10     one-hot relative seat that may be caught for not declaring
num_players          10     one-hot table size (slot k means k+1 players)
legal_actions        80     the observer's legal-action mask (zeros for a non-acting seat)
===================  =====  ===========================================================

The legal actions repeat the mask as features (version 2): they are derived only from the
observer's own hand and public information, and they spare a network from learning the
matching rules before it can learn strategy.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core import UnoState, legal_action_mask
from uno_env.rules import Rules

__all__ = ["NUM_PHASE_SLOTS", "OBS_DIM", "OBS_LAYOUT", "OBS_VERSION", "encode", "get_field"]

OBS_VERSION = 2
"""Bump whenever the layout or the meaning of a field changes."""
NUM_PHASE_SLOTS = 8
"""Room for the official phases and those the house rules add."""

_SIZES: tuple[tuple[str, int], ...] = (
    ("hand", C.NUM_FACES),
    ("top_card", C.NUM_FACES),
    ("colour", C.NUM_COLOURS + 1),
    ("direction", 1),
    ("phase", NUM_PHASE_SLOTS),
    ("drawn_card", C.NUM_FACES),
    ("pending_penalty", 1),
    ("hand_sizes", C.MAX_PLAYERS),
    ("scores", C.MAX_PLAYERS),
    ("discard_counts", C.NUM_FACES),
    ("draw_pile_size", 1),
    ("declared", 1),
    ("uno_exposed", C.MAX_PLAYERS),
    ("num_players", C.MAX_PLAYERS),
    ("legal_actions", C.NUM_ACTIONS),
)


def _layout() -> dict[str, slice]:
    out: dict[str, slice] = {}
    start = 0
    for name, size in _SIZES:
        out[name] = slice(start, start + size)
        start += size
    return out


OBS_LAYOUT: dict[str, slice] = _layout()
"""Named slices into the flat observation vector."""
OBS_DIM: int = sum(size for _, size in _SIZES)
"""Length of the observation vector."""


def get_field(observations: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
    """Return the named slice of a batch of observations, shape (B, size).

    Raises:
        KeyError: naming the unknown field and the known ones.
    """
    if name not in OBS_LAYOUT:
        raise KeyError(f"unknown observation field {name!r}; fields are {list(OBS_LAYOUT)}")
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
    """
    n_games, n_players = state.batch_size, rules.num_players
    games = np.arange(n_games)
    acting = state.current.astype(np.int64)
    seat = acting if seats is None else np.asarray(seats, dtype=np.int64)
    if seat.shape != (n_games,) or ((seat < 0) | (seat >= n_players)).any():
        raise ValueError(f"seats must be (B,) = ({n_games},) seats in 0..{n_players - 1}")
    is_acting = seat == acting
    obs = np.zeros((n_games, OBS_DIM), dtype=np.float32)
    L = OBS_LAYOUT

    obs[:, L["hand"]] = state.hands[games, seat]
    obs[games, L["top_card"].start + state.top] = 1.0
    obs[games, L["colour"].start + state.colour] = 1.0
    obs[:, L["direction"].start] = state.direction
    obs[games, L["phase"].start + state.phase] = 1.0
    drew = np.flatnonzero(is_acting & (state.drawn >= 0))
    obs[drew, L["drawn_card"].start + state.drawn[drew]] = 1.0
    obs[:, L["pending_penalty"].start] = np.where(is_acting, state.pending, 0)

    # Seats relative to the observer: slot k is seat (seat + k) % N.
    relative = (seat[:, None] + np.arange(n_players)[None, :]) % n_players
    sizes = L["hand_sizes"].start
    obs[:, sizes : sizes + n_players] = np.take_along_axis(state.hand_size, relative, axis=1)
    scores = L["scores"].start
    obs[:, scores : scores + n_players] = (
        np.take_along_axis(state.scores, relative, axis=1) / rules.target_score
    )

    # The discard pile is public: count its faces.
    in_pile = np.arange(C.DECK_SIZE)[None, :] < state.discard_len[:, None]
    flat = games[:, None] * C.NUM_FACES + state.discard
    counts = np.bincount(flat[in_pile], minlength=n_games * C.NUM_FACES)
    obs[:, L["discard_counts"]] = counts.reshape(n_games, C.NUM_FACES)
    obs[:, L["draw_pile_size"].start] = (C.DECK_SIZE - state.draw_pos) / C.DECK_SIZE
    obs[:, L["declared"].start] = is_acting & state.declared
    exposed = np.flatnonzero(state.uno_exposed >= 0)
    rel_exposed = (state.uno_exposed[exposed] - seat[exposed]) % n_players
    obs[exposed, L["uno_exposed"].start + rel_exposed] = 1.0
    obs[:, L["num_players"].start + n_players - 1] = 1.0
    mask = legal_action_mask(rules, state)
    obs[:, L["legal_actions"]] = mask & is_acting[:, None]
    return obs
