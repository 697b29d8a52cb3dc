"""Small statistics helpers for measuring bots."""

from __future__ import annotations

import math

__all__ = ["wilson_interval"]


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials.
        z: Standard normal quantile (1.96 for a 95% interval).

    Returns:
        ``(low, high)`` within [0, 1]. With ``n == 0`` nothing is known: ``(0.0, 1.0)``.

    Raises:
        ValueError: for a negative ``n``, ``successes`` outside ``0..n`` or ``z <= 0``.

    Example:
        >>> [round(x, 4) for x in wilson_interval(50, 100)]
        [0.4038, 0.5962]
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if z <= 0:
        raise ValueError(f"z must be positive, got {z}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
