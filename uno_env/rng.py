"""Counter-based randomness for the engine.

Every game carries a 64-bit key. A shuffle is a pure function of ``(key, stream)``: a
SplitMix64 hash of ``(key, stream, index)`` is argsorted. This is the approach of JAX and pgx
keys: a game replays exactly whatever else is in its batch, games never share a generator, and
the whole batch shuffles in one vectorised call. The engine never touches global ``np.random``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env.files import shown
from uno_env.jit import vectorize

__all__ = [
    "KEY_SEED_LIMIT",
    "MAX_KEYS",
    "derive_keys",
    "game_word",
    "keyed_bits",
    "keyed_permutation",
    "keyed_randint",
    "keyed_uniform",
]

MAX_KEYS = 2**30
"""Most keys one :func:`derive_keys` call gives: 1,073,741,824 keys take 8 GiB."""

KEY_SEED_LIMIT = 2**64
"""An integer seed of :func:`derive_keys` is in ``0 <= seed < 2**64`` (any 64-bit word), the range
that ``uno-lab play --seed`` and game records take; configs keep the narrower ``SEED_LIMIT``."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_STREAM_SALT = np.uint64(0xD1B54A32D192ED03)
_ONE = np.uint64(1)
_SHIFT_30 = np.uint64(30)
_SHIFT_27 = np.uint64(27)
_SHIFT_31 = np.uint64(31)
_SHIFT_11 = np.uint64(11)


# Each function is a numba ufunc: numpy broadcasts it over arrays of keys and streams, and
# the compiled rules call it on scalars (a card drawn, a reshuffle). One definition serves
# both.
@vectorize(["uint64(uint64)"])
def _mix(z):  # type: ignore[no-untyped-def]
    """The SplitMix64 finaliser (uint64 arithmetic wraps by design)."""
    z = (z ^ (z >> _SHIFT_30)) * _MUL1
    z = (z ^ (z >> _SHIFT_27)) * _MUL2
    return z ^ (z >> _SHIFT_31)


@vectorize(["uint64(uint64, uint64, uint64)"])
def game_word(key, stream, index):  # type: ignore[no-untyped-def]
    """The ``index``-th 64-bit word of stream ``stream`` of the game keyed ``key``."""
    base = _mix(key ^ _mix(stream * _STREAM_SALT + _GOLDEN))
    return _mix(base + (index + _ONE) * _GOLDEN)


@vectorize(["float64(uint64)"])
def uniform_of(word):  # type: ignore[no-untyped-def]
    """A uniform number in ``[0, 1)`` from the top 53 bits of a word."""
    return (word >> _SHIFT_11) * 2.0**-53


def _as_words(values: npt.ArrayLike, shape: tuple[int, ...]) -> npt.NDArray[np.uint64]:
    return np.broadcast_to(np.asarray(values, dtype=np.uint64), shape)


def keyed_bits(keys: npt.ArrayLike, streams: npt.ArrayLike, size: int) -> npt.NDArray[np.uint64]:
    """Return ``size`` pseudo-random 64-bit words for each (key, stream) pair.

    Args:
        keys: Game keys, shape (n,), convertible to uint64.
        streams: Stream numbers, shape (n,) or scalar, non-negative.
        size: Number of words per pair.

    Returns:
        Array of shape (n, size), dtype uint64.
    """
    k = np.atleast_1d(np.asarray(keys, dtype=np.uint64))
    s = _as_words(streams, k.shape)
    index = np.arange(size, dtype=np.uint64)
    words: npt.NDArray[np.uint64] = game_word(k[:, None], s[:, None], index[None, :])
    return words


def keyed_uniform(
    keys: npt.ArrayLike, streams: npt.ArrayLike, index: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """The ``index``-th uniform number in ``[0, 1)`` of each (key, stream) pair.

    The same word as ``keyed_bits(keys, streams, index + 1)[:, index]``, computed alone (53
    bits of it).
    """
    k = np.atleast_1d(np.asarray(keys, dtype=np.uint64))
    word = game_word(k, _as_words(streams, k.shape), _as_words(index, k.shape))
    return np.asarray(uniform_of(word), dtype=np.float64)


def keyed_permutation(keys: npt.ArrayLike, streams: npt.ArrayLike, n: int) -> npt.NDArray[np.intp]:
    """Return one permutation of ``range(n)`` per (key, stream) pair, shape (len(keys), n)."""
    return np.argsort(keyed_bits(keys, streams, n), axis=1, kind="stable")


def keyed_randint(keys: npt.ArrayLike, streams: npt.ArrayLike, high: int) -> npt.NDArray[np.int64]:
    """Return one integer in ``[0, high)`` per (key, stream) pair, shape (len(keys),)."""
    bits = keyed_bits(keys, streams, 1)[:, 0]
    return (bits % np.uint64(high)).astype(np.int64)


def derive_keys(seed: int | np.random.Generator | None, count: int) -> npt.NDArray[np.uint64]:
    """Derive ``count`` game keys from an integer seed or a numpy Generator.

    Args:
        seed: An integer seed in ``0 <= seed < 2**64`` (the same seed always gives the same
            keys), a Generator (keys are drawn from it, advancing it), or None for fresh OS
            entropy.
        count: Number of keys.

    Returns:
        Array of shape (count,), dtype uint64.

    Raises:
        ValueError: naming ``seed`` or ``count`` as given, for a seed of another kind or out of
            range, or a count that is no integer in ``0..MAX_KEYS``.
    """
    if (
        not isinstance(count, (int, np.integer))
        or isinstance(count, (bool, np.bool_))
        or not 0 <= count <= MAX_KEYS
    ):
        raise ValueError(f"count must be an integer in 0..{MAX_KEYS:,}, got {shown(count)}")
    if isinstance(seed, np.random.Generator):
        drawn = seed.integers(0, 2**64 - 1, size=count, dtype=np.uint64, endpoint=True)
        return np.asarray(drawn, dtype=np.uint64)
    if seed is not None and (
        not isinstance(seed, (int, np.integer))
        or isinstance(seed, (bool, np.bool_))
        or not 0 <= seed < KEY_SEED_LIMIT
    ):
        raise ValueError(
            "seed must be an int with 0 <= seed < 2**64, a numpy Generator or None, got "
            f"{shown(seed)}"
        )
    state = np.random.SeedSequence(seed).generate_state(count, dtype=np.uint64)
    return np.asarray(state, dtype=np.uint64)
