"""Sampling actions from batched legal-action masks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env.jit import Kernel, jit

__all__ = ["uniform_legal_actions"]


def uniform_legal_actions(
    mask: npt.NDArray[np.bool_], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Pick one legal action per row, uniformly at random.

    Row i takes its ``floor(u_i * n_i)``-th legal action (in id order), where ``n_i`` counts
    its legal actions and ``u_i`` is the i-th of ``rng.random(B)``. Rows with no legal action
    (finished games) get action 0, which the engine ignores.

    Args:
        mask: Legal-action mask, shape (B, A).
        rng: The generator that drives the choice.

    Returns:
        Action ids, shape (B,).
    """
    legal = mask
    if not (mask.dtype == np.bool_ and mask.flags.c_contiguous):  # the engine's masks are
        legal = np.ascontiguousarray(mask, dtype=np.bool_)
    if legal.ndim != 2:
        raise ValueError(f"mask must have shape (B, A), got {legal.shape}")
    chosen = np.zeros(legal.shape[0], dtype=np.int64)
    # Always read-only, as the engine's cached masks are: one type for every caller, so the
    # kernel's one compiled entry (and the shipped machine code) fits each call.
    flags = legal.view(np.uint8)
    flags.flags.writeable = False
    _PICK(flags, rng.random(legal.shape[0]), chosen)
    return chosen


@jit
def _pick(mask: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for row in range(mask.shape[0]):
        legal = mask[row]
        count = 0
        for action in range(legal.shape[0]):
            count += int(legal[action])
        if count == 0:
            continue
        target = int(uniforms[row] * count)
        for action in range(legal.shape[0]):
            target -= int(legal[action])
            if target < 0:
                out[row] = action
                break


_PICK = Kernel(_pick)
