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
  editing any rule starts a fresh cache.

  Which files those are is worked out, not kept by hand (see :func:`_compiled_sources`):
  every module of the package that imports ``uno_env.jit`` (it may compile something), all
  of ``uno_env/core/`` and this file, and then every module of the package that any of
  these imports, transitively (its functions or constants may be compiled in). The imports
  are read from the source with :mod:`ast` (nothing is imported), so a new compiled module,
  or a new module of constants that compiled code uses, is covered as soon as it is imported;
  modules the compiled code cannot reach (the envs, the game wrapper) are left out, so
  editing them keeps the cache. Only this package is scanned: compiled code belongs here.

Set ``NUMBA_DISABLE_JIT=1`` to run the same functions as plain Python (slow, but
debuggable with pdb and measurable by coverage). ``UNO_LAB_CACHE_DIR`` moves the cache
(default: ``~/.cache/uno-lab/numba``).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numba

__all__ = ["CACHE_DIR", "Kernel", "jit", "jit_inline", "vectorize"]

F = TypeVar("F", bound=Callable[..., Any])

_PACKAGE = Path(__file__).resolve().parent
_NAME = __name__.partition(".")[0]  # the package's import name, "uno_env"
_ALWAYS_COMPILED = ("jit.py", "core")
"""Sources hashed whatever they import: this file and the whole core folder."""
_CACHES_KEPT = 4


def _module_file(package: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` (``uno_env.x.y``) under ``package``, if it is one of ours."""
    parts = dotted.split(".")
    if parts[0] != _NAME:
        return None
    base = package.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _imports(package: Path, file: Path) -> set[Path]:
    """The package's files that ``file`` imports, anywhere in it (functions included)."""
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (SyntaxError, ValueError):
        return set()  # a file that cannot be imported compiles nothing
    # The file's own package: "uno_env.core" for core/effects.py and core/__init__.py.
    here = [_NAME, *file.relative_to(package).parts[:-1]]
    found: set[Path] = set()
    for node in ast.walk(tree):
        targets: list[Path | None] = []
        if isinstance(node, ast.Import):
            targets = [_module_file(package, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the file's package (.) or above (..)
                base = ".".join([*here[: len(here) - node.level + 1], *filter(None, [node.module])])
            else:
                base = node.module or ""
            for alias in node.names:
                # "from a import b" takes module a.b if there is one, else a name of a.
                targets.append(
                    _module_file(package, f"{base}.{alias.name}") or _module_file(package, base)
                )
        found.update(target for target in targets if target is not None)
    return found


def _compiled_sources(package: Path = _PACKAGE) -> list[Path]:
    """The source files that compiled code may depend on (see the module's docstring)."""
    imports: dict[Path, set[Path]] = {}  # each file is parsed once (this runs at every start)

    def imported_by(file: Path) -> set[Path]:
        if file not in imports:
            imports[file] = _imports(package, file)
        return imports[file]

    jit_module = package / "jit.py"
    todo = [
        file
        for file in sorted(package.rglob("*.py"))
        # Any import of the module names it: skip parsing the files that never say "jit".
        if b"jit" in file.read_bytes() and jit_module in imported_by(file)
    ]
    for name in _ALWAYS_COMPILED:
        path = package / name
        todo += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    seen: set[Path] = set()
    while todo:
        file = todo.pop()
        if file not in seen:
            seen.add(file)
            todo += imported_by(file)
    return sorted(seen)


def _source_digest(package: Path = _PACKAGE) -> str:
    """A hash of numba's version and of every compiled source: the cache's directory name."""
    digest = hashlib.sha256(numba.__version__.encode())
    for file in _compiled_sources(package):
        digest.update(file.relative_to(package).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _cache_dir() -> str:
    root = os.environ.get("UNO_LAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "uno-lab", "numba"
    )
    digest = _source_digest()
    for base in (root, os.path.join(tempfile.gettempdir(), f"uno-lab-numba-{os.getuid()}")):
        here = os.path.join(base, digest)
        try:
            os.makedirs(here, exist_ok=True)
            os.utime(here)
            with tempfile.NamedTemporaryFile(dir=here):  # numba must be able to write here
                pass
        except OSError:
            continue  # a read-only home: fall back to the temporary directory
        # Keep the few most recently used caches (one per version of the sources).
        with contextlib.suppress(OSError):
            others = sorted(Path(base).iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in others[_CACHES_KEPT:]:
                shutil.rmtree(stale, ignore_errors=True)
        return here
    raise RuntimeError(
        f"no writable directory for the compiled rules: tried {root} and the temporary "
        "directory; set UNO_LAB_CACHE_DIR to a writable path"
    )


CACHE_DIR = _cache_dir()
"""Where the compiled rules of these sources are cached."""


@contextlib.contextmanager
def _our_cache() -> Iterator[None]:
    # numba picks a function's cache directory when it is decorated.
    config: Any = numba.config
    saved = config.CACHE_DIR
    config.CACHE_DIR = CACHE_DIR
    try:
        yield
    finally:
        config.CACHE_DIR = saved


_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}


def jit(fn: F) -> F:
    """Compile a rule function: cached, without reference counting, releasing the GIL."""
    with _our_cache():
        compiled: F = numba.njit(**_OPTIONS)(fn)
    return compiled


def jit_inline(fn: F) -> F:
    """Compile a rule helper on the hot path: it is inlined where it is called."""
    with _our_cache():
        compiled: F = numba.njit(**_OPTIONS, inline="always")(fn)
    return compiled


def vectorize(signatures: list[str]) -> Callable[[F], F]:
    """Make a numpy ufunc of a scalar function (cached); compiled rules call it on scalars."""

    def decorate(fn: F) -> F:
        with _our_cache():
            ufunc: F = numba.vectorize(signatures, cache=True)(fn)
        return ufunc

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

    def _entry_point(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        dispatcher: Any = self._dispatcher
        if not hasattr(dispatcher, "overloads"):  # NUMBA_DISABLE_JIT: a plain function
            return self._dispatcher
        signature = tuple(numba.typeof(arg) for arg in args)
        dispatcher.compile(signature)  # from the disk cache when it is there
        entry: Callable[..., Any] = dispatcher.overloads[signature].entry_point
        return entry
