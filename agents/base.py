"""The one batched policy interface that envs, tournaments and human play use."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Policy"]


@runtime_checkable
class Policy(Protocol):
    """A batched UNO player.

    ``act`` maps a batch of observations (B, OBS_DIM) float32 and legal-action masks
    (B, 80) bool to one legal action id per row (B,) int64. Rows whose mask is all False
    (finished games) may get any action: the engine ignores it. ``reset`` clears the memory
    of stateful agents between games (stateless agents do nothing).
    """

    name: str

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """Choose one legal action per row."""
        ...

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Forget per-game memory (all games, or those marked True)."""
        ...
