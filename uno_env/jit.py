"""The compiler of the core's per-game rules.

The rules are written once, as plain Python functions over one game of the state arrays,
and compiled with numba: a batch is a compiled loop over its games, so stepping costs about
the same per game at B=1 as at B=4096 and no rule needs a vectorised twin.

Three choices keep the compiled code fast and honest:

* **No allocation, no reference counting.** The rule functions get the state arrays from
  Python and any scratch space as a :class:`~uno_env.core.params.Scratch` tuple, so they run
  without numba's reference counting (``_nrt=False``), which would otherwise count a
  reference to each of the state's 33 arrays at every call.
* **Inlining on the hot path.** A numba call passes a tuple argument field by field (some 400
  values for the state, the rules and the scratch space), so helpers on the path of every
  step are inlined (:func:`jit_inline`); rare ones (reshuffles, hand swaps) are calls.
* **A cache keyed by the sources.** Compiling the rules takes about a minute, so the machine
  code is cached on disk. numba only checks a function's own file for changes, not the
  files of the functions it inlines nor of the module-level constants it freezes into the
  machine code (``cards.FACE_RANK``, ``tables.FACE_MATCH``, the phase and plan codes), so
  the cache lives in a directory named by a hash of every source file of the compiled code:
  editing any rule starts a fresh cache. Which files those are is worked out from their
  imports, not kept by hand (:mod:`uno_env.jit_sources`), and compiled code of another
  package (the searches of ``unolab.agents``) is cached in a folder of its own inside that
  directory, named by a hash of every source it can reach: editing a search's helper in
  another file gives fresh machine code too.

* **A damaged cache is dropped, never fatal.** The functions are compiled without numba's
  own cache and given a stricter one (:class:`~uno_env.jit_cache.CheckedCache`): every
  index and data file carries a checksum of its contents, since a flipped bit that still unpickles would run as
  broken machine code. A file that cannot be read back whole (truncated, emptied, garbled,
  a flipped bit, a FIFO, a folder or a link in its place) is removed with the function's
  other cache files, one line on stderr says so, and the function compiles again and saves
  a fresh entry. Files are opened without blocking and refused unless they are regular
  files, so nothing in the cache can hang a start; a cache that cannot be written costs
  the next start a compile, nothing more. Old caches are pruned by name (only folders
  named like a digest), so a cache directory shared with other files is safe.

* **Machine code ships with the wheel.** A first start would otherwise spend one to two
  minutes compiling. The wheel carries the compiled code of its own sources for a portable
  CPU level (``precompiled/<level>/``, built by ``tools/precompile.py`` for ``x86-64-v4``,
  the AVX-512 machines, and ``x86-64-v3``, the AVX2 machines of the last decade, on Linux and
  CPython 3.11; the highest level the CPU has is used): where the
  host has that level's features, the triple and the Python and numba versions match, and
  the sources are the ones it was built from (the same digest), a function missing from the
  user's cache is loaded from there, read-only. Everywhere else the code compiles once, as
  before. Cache folders are named by module, not by path, so the same sources share entries
  wherever they are installed. ``UNO_LAB_NO_PRECOMPILED=1`` ignores the shipped code.

Set ``NUMBA_DISABLE_JIT=1`` to run the same functions as plain Python (slow, but
debuggable with pdb and measurable by coverage). ``UNO_LAB_CACHE_DIR`` moves the cache
(default: ``~/.cache/uno-lab/numba``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numba

from uno_env.jit_cache import cache_for, cached

__all__ = ["Kernel", "jit", "jit_inline", "vectorize"]

F = TypeVar("F", bound=Callable[..., Any])


_OPTIONS: dict[str, Any] = {"nogil": True, "_nrt": False}


def jit(fn: F) -> F:
    """Compile a rule function: cached, without reference counting, releasing the GIL."""
    compiled: F = cached(numba.njit(**_OPTIONS)(fn))
    return compiled


def jit_inline(fn: F) -> F:
    """Compile a rule helper on the hot path: it is inlined where it is called."""
    compiled: F = cached(numba.njit(**_OPTIONS, inline="always")(fn))
    return compiled


def vectorize(signatures: list[str]) -> Callable[[F], F]:
    """Make a numpy ufunc of a scalar function (cached); compiled rules call it on scalars."""

    def decorate(fn: F) -> F:
        ufunc: Any = numba.vectorize()(fn)  # no signatures yet: give it the cache first
        if not hasattr(ufunc, "_dispatcher"):  # NUMBA_DISABLE_JIT: numba's own ufunc
            ufunc = numba.vectorize(signatures)(fn)
        else:
            ufunc._dispatcher.cache = cache_for(ufunc._dispatcher.py_func)
            for signature in signatures:
                ufunc.add(signature)
            ufunc.disable_compile()
        built: F = ufunc
        return built

    return decorate


class Kernel:
    """A compiled function, called without numba's per-call type dispatch.

    numba's dispatcher works out the types of the arguments at every call; for the state's
    tuple of 33 arrays that costs several microseconds, more than stepping one game. The
    core always calls its kernels with the same types (:class:`~uno_env.core.UnoState` checks
    its arrays, the rules and scratch tuples are built by the core), so a kernel looks up
    the compiled code once, for the types of its first call, and calls it directly after.

    Args:
        dispatcher: A function compiled with :func:`jit`.
    """

    def __init__(self, dispatcher: Callable[..., Any]) -> None:
        self._dispatcher = dispatcher
        self._entry: Callable[..., Any] | None = None
        self.__doc__ = dispatcher.__doc__

    def __call__(self, *args: Any) -> Any:
        """Run the compiled code (the first call fixes the argument types)."""
        entry = self._entry
        if entry is None:
            entry = self._entry = self._entry_point(args)
        return entry(*args)

    def compiled(self, *args: Any) -> Callable[..., Any]:
        """The compiled code itself, for arguments of the types of ``args`` (which fix them
        as a first call does): a caller on the hottest path calls it without this wrapper.
        """
        entry = self._entry
        if entry is None:
            entry = self._entry = self._entry_point(args)
        return entry

    def _entry_point(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        dispatcher: Any = self._dispatcher
        if not hasattr(dispatcher, "overloads"):  # NUMBA_DISABLE_JIT: a plain function
            return self._dispatcher
        signature = tuple(numba.typeof(arg) for arg in args)
        dispatcher.compile(signature)  # from the disk cache when it is there
        entry: Callable[..., Any] = dispatcher.overloads[signature].entry_point
        return entry
