"""Argparse types of the benchmarks' numeric options: a bad value is one clear line, exit 2.

A benchmark runs for minutes; a zero repeat count or a negative duration must be refused
before it starts, by argparse, with a message that names the option and the value
(``argument --repeats: expected an integer >= 1, got '0'``) instead of a
``ZeroDivisionError`` or a loop that never ends.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["MAX_BATCH", "int_in_range", "positive_seconds"]

MAX_BATCH = 1 << 20
"""The largest batch or env count a benchmark accepts (about a gigabyte of state arrays)."""


def int_in_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[minimum, maximum]`` (no upper bound if None).

    Args:
        minimum: The smallest value allowed.
        maximum: The largest value allowed, or None for no upper bound.

    Returns:
        A function that parses the text or raises :class:`argparse.ArgumentTypeError`.
    """
    wanted = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer {wanted}, got {text!r}"
            ) from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected an integer {wanted}, got {text!r}")
        return value

    parse.__name__ = f"integer {wanted}"
    return parse


def positive_seconds(text: str) -> float:
    """An argparse ``type`` for a duration: a finite number of seconds above zero.

    Raises:
        argparse.ArgumentTypeError: naming the value.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds > 0, got {text!r}"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value
