"""``card_ranking``: play by a fixed ranking of card kinds."""

from __future__ import annotations

import numpy as np

from uno_env import cards as C
from unolab.agents._common import (
    ACTION_FACE_OF_PLAY,
    BoolArray,
    HeuristicBot,
    IntArray,
    ObsView,
    lexicographic,
    rank_of_actions_colour,
)

__all__ = ["KIND_RANK", "CardRankingBot"]


def _kind_rank() -> IntArray:
    """Draw Two 5 > Skip 4 > number 3 > Reverse 2 > Wild Draw Four 1 > Wild 0, per play."""
    rank = C.FACE_RANK[ACTION_FACE_OF_PLAY].astype(np.int64)
    out = np.full(C.NUM_PLAY_ACTIONS, 3, dtype=np.int64)  # numbers
    out[rank == C.DRAW_TWO] = 5
    out[rank == C.SKIP] = 4
    out[rank == C.REVERSE] = 2
    out[ACTION_FACE_OF_PLAY == C.WILD_DRAW_FOUR] = 1
    out[ACTION_FACE_OF_PLAY == C.WILD] = 0
    return out


KIND_RANK: IntArray = _kind_rank()
"""Preference of each play action's card kind, higher first."""
_PLAY_POINTS: IntArray = C.FACE_POINTS[ACTION_FACE_OF_PLAY].astype(np.int64)


class CardRankingBot(HeuristicBot):
    """Plays by card kind: Draw Two > Skip > number > Reverse > Wild Draw Four > Wild.

    Within a kind it plays the higher number (more points), then the card of the colour most
    common in the hand. A wild names the most common colour in the hand. It draws only when
    it cannot play and always plays a playable drawn card; the other decisions are the shared
    rules of :mod:`unolab.agents._common`.
    """

    name = "card_ranking"

    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """Kind first, then points, then the preference for the resulting colour."""
        shape = (view.batch_size, C.NUM_PLAY_ACTIONS)
        kind = np.broadcast_to(KIND_RANK, shape)
        points = np.broadcast_to(_PLAY_POINTS, shape)
        colour = rank_of_actions_colour(view.colour_ranks)
        return lexicographic([kind, points, colour], [6, 64, 4]), None
