"""Random baselines: ``random`` (the standard of UNO papers) and ``random_any``."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.sampling import uniform_legal_actions

__all__ = ["RandomAnyBot", "RandomBot"]


class RandomAnyBot:
    """Uniform over all legal actions, voluntary draws and declines included."""

    name = "random_any"
    uses_observations = False
    """Reads only the masks: batched players may skip encoding observations for it."""

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose uniformly among the legal actions of each row."""
        return uniform_legal_actions(masks, self.rng)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless: nothing to forget."""


class RandomBot(RandomAnyBot):
    """A random legal play; draws only when it cannot play (the "random" of UNO papers).

    After a draw it plays the drawn card if it can. It always declares UNO, always catches,
    and challenges or accepts a Wild Draw Four at random.
    """

    name = "random"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose uniformly among the plays, drawing or keeping only when nothing plays."""
        preferred = masks.copy()
        can_play = masks[:, : C.NUM_PLAY_ACTIONS].any(axis=1)
        preferred[can_play, C.DRAW] = False
        preferred[can_play, C.KEEP] = False
        # Declaring and catching are free: do them whenever they are offered (catch first).
        for forced in (C.UNO, C.CATCH):
            rows = masks[:, forced]
            preferred[rows] = False
            preferred[rows, forced] = True
        return uniform_legal_actions(preferred, self.rng)
