"""Sampling actions from batched legal-action masks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["uniform_legal_actions"]


def uniform_legal_actions(
    mask: npt.NDArray[np.bool_], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Pick one legal action per row, uniformly at random.

    Rows with no legal action (finished games) get action 0, which the engine ignores.

    Args:
        mask: Legal-action mask, shape (B, A).
        rng: The generator that drives the choice.

    Returns:
        Action ids, shape (B,).
    """
    n_games, n_actions = mask.shape
    legal = np.flatnonzero(mask)  # row-major, so each row's legal actions are contiguous
    rows, actions = np.divmod(legal, n_actions)
    counts = np.bincount(rows, minlength=n_games)
    starts = np.cumsum(counts) - counts
    pick = (rng.random(n_games) * counts).astype(np.int64)
    chosen = np.zeros(n_games, dtype=np.int64)
    has_legal = counts > 0
    chosen[has_legal] = actions[starts[has_legal] + pick[has_legal]]
    return chosen
