"""``greedy_points``: dump the highest-scoring playable card."""

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

__all__ = ["GreedyPointsBot"]

_PLAY_POINTS: IntArray = C.FACE_POINTS[ACTION_FACE_OF_PLAY].astype(np.int64)
"""Points of the card each play action plays (wilds 50, actions 20, numbers face value)."""


class GreedyPointsBot(HeuristicBot):
    """Plays the playable card worth the most points, so that a lost hand costs least.

    Ties (e.g. two 20-point action cards) go to the card whose colour is the most common in
    the hand (it keeps that colour current), then to the lowest action id (so a Wild goes
    before a Wild Draw Four). A wild names the most common colour in the hand. It draws only
    when it cannot play and always plays a playable drawn card. Declaring, catching,
    challenging and the starter colour are the shared rules of :mod:`unolab.agents._common`.
    """

    name = "greedy_points"

    def play_keys(self, view: ObsView) -> tuple[IntArray, BoolArray | None]:
        """Points first, then the preference for the colour the play makes current."""
        points = np.broadcast_to(_PLAY_POINTS, (view.batch_size, C.NUM_PLAY_ACTIONS))
        colour = rank_of_actions_colour(view.colour_ranks)
        return lexicographic([points, colour], [64, 4]), None
