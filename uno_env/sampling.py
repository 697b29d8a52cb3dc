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
    n_actions = mask.shape[1]
    legal = np.flatnonzero(mask)  # row-major, so each row's legal actions are contiguous
    counts = np.count_nonzero(mask, axis=1)
    starts = np.cumsum(counts) - counts
    pick = (rng.random(mask.shape[0]) * counts).astype(np.int64)
    chosen = np.zeros(mask.shape[0], dtype=np.int64)
    rows = counts > 0
    chosen[rows] = legal[starts[rows] + pick[rows]] % n_actions
    return chosen
