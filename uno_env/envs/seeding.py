"""One key schedule for every env: from a seed to the deals of successive hands."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_seed
from uno_env.rng import derive_keys, keyed_bits

__all__ = ["base_key", "checked_seed", "episode_words"]

_SLOT_STRIDE = 2**32


def checked_seed(seed: object, what: str = "seed") -> int | None:
    """An env's seed checked: ``None``, or an integer (Python's or NumPy's, not a bool) in
    ``0 <= seed < 2**63``, as every seed of the lab (:func:`uno_env.config_values.check_seed`).

    Returns:
        The seed as a Python int (which Gymnasium's own seeding requires), or None.

    Raises:
        ValueError: naming ``what`` and the seed as given.
    """
    return None if seed is None else check_seed(what, seed)


def base_key(seed: int | np.integer | np.random.Generator | None) -> np.uint64:
    """The 64-bit base key of a seed (``None``: fresh OS entropy; a Generator: drawn from it).

    Raises:
        ValueError: for a seed that :func:`checked_seed` refuses.
    """
    if isinstance(seed, np.random.Generator):
        return np.uint64(derive_keys(seed, 1)[0])
    return np.uint64(derive_keys(checked_seed(seed), 1)[0])


def episode_words(
    base: np.uint64,
    slots: npt.NDArray[np.integer],
    episodes: npt.NDArray[np.integer],
    n_words: int,
) -> npt.NDArray[np.uint64]:
    """Random words of episode ``episodes[i]`` of slot ``slots[i]``, shape (k, n_words).

    Word 0 is the game key of the deal (see :func:`uno_env.core.init`); the learner envs use
    word 1 for a random learner seat and words 2.. to sample opponents from a pool. A slot is
    one game of a batch (the Gymnasium env and the AEC env are slot 0), so the same seed
    deals the same hands in every env.
    """
    slots_u = np.asarray(slots).astype(np.uint64)
    streams = slots_u * np.uint64(_SLOT_STRIDE) + np.asarray(episodes).astype(np.uint64)
    return keyed_bits(np.full(slots_u.shape, base, dtype=np.uint64), streams, n_words)
