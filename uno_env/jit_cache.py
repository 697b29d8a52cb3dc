"""The disk cache of the compiled rules: where it lives, the machine code shipped with the
package, and the checked files that a damaged entry cannot break.

Compiling the rules takes about a minute, so :mod:`uno_env.jit` gives every compiled
function this cache instead of numba's own:

* **Keyed by the sources.** The cache directory (:data:`CACHE_DIR`, default
  ``~/.cache/uno-lab/numba/<digest>``, moved by ``UNO_LAB_CACHE_DIR``; a read-only home
  falls back to the temporary directory) is named by a hash of every source the compiled
  code can reach (:mod:`uno_env.jit_sources`); compiled code of another package (the
  searches of ``unolab.agents``) has a folder of its own inside it, named by a hash of
  every source it can reach. Old directories are pruned by name only, so a cache directory
  shared with other files is safe.
* **A damaged entry is dropped, never fatal** (:class:`CheckedCache`): every index and data
  file carries a checksum of its contents, since a flipped bit that still unpickles would
  run as broken machine code. A file that cannot be read back whole (truncated, garbled, a
  FIFO, a folder or a link in its place) is removed with the function's other files, one
  line on stderr says so, and the function compiles again. Files are opened without
  blocking and refused unless they are regular files, so nothing here can hang a start.
* **Shipped machine code** (:func:`precompiled`): where the host has a shipped CPU level's
  features and the sources are the ones it was built from, a function missing from the
  user's cache is loaded from ``precompiled/<level>/``, read-only.
  ``UNO_LAB_NO_PRECOMPILED=1`` ignores it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numba
from numba.core import caching, serialize

from uno_env.jit_sources import caller_digest, source_digest

__all__ = [
    "CACHE_DIR",
    "PRECOMPILED_ROOT",
    "CheckedCache",
    "Precompiled",
    "cache_for",
    "cache_subpath",
    "cached",
    "precompiled",
]

_CACHES_KEPT = 4
"""Cache directories kept (one per version of the sources), the one in use among them."""

_DIGEST_NAME = re.compile(r"[0-9a-f]{16}")
"""The name of a cache directory (see :func:`~uno_env.jit_sources.source_digest`): the only
entries pruned."""

_CALLER_PREFIX = "caller-"
_CALLER_NAME = re.compile(r"caller-[0-9a-f]{16}")
"""The folders, inside a cache directory, of compiled code outside this package."""
_CALLER_CACHES_KEPT = 16


def _remove(path: str) -> None:
    """Remove a file, a link or a folder at ``path``, whatever it is (gone already is fine)."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def _prune(
    base: str, keep: str, pattern: re.Pattern[str] | None = None, kept: int = _CACHES_KEPT
) -> None:
    """Keep the few most recently used caches under ``base`` (one per version of the sources).

    Only entries named like a cache are touched (the folder may be shared with other files),
    an entry that cannot be read is left alone, and a stray file of such a name is removed.
    """
    try:
        names = os.listdir(base)
    except OSError:
        return
    entries: list[tuple[float, str]] = []
    for name in names:
        path = os.path.join(base, name)
        if (pattern or _DIGEST_NAME).fullmatch(name) and path != keep:
            with contextlib.suppress(OSError):
                entries.append((os.lstat(path).st_mtime, path))
    for _, stale in sorted(entries, reverse=True)[kept - 1 :]:
        _remove(stale)


def _cache_dir() -> str:
    """The writable cache directory of these sources, made if needed (old ones pruned)."""
    root = os.environ.get("UNO_LAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "uno-lab", "numba"
    )
    digest = source_digest()
    for base in (root, os.path.join(tempfile.gettempdir(), f"uno-lab-numba-{os.getuid()}")):
        here = os.path.join(base, digest)
        if os.path.lexists(here) and not os.path.isdir(here):
            _remove(here)  # a stray file (or a dangling link) where the cache belongs
        try:
            os.makedirs(here, exist_ok=True)
            os.utime(here)
            with tempfile.NamedTemporaryFile(dir=here):  # numba must be able to write here
                pass
        except OSError:
            continue  # a read-only home: fall back to the temporary directory
        _prune(base, keep=here)
        return here
    raise RuntimeError(
        f"no writable directory for the compiled rules: tried {root} and the temporary "
        "directory; set UNO_LAB_CACHE_DIR to a writable path"
    )


CACHE_DIR = _cache_dir()
"""Where the compiled rules of these sources are cached."""

PRECOMPILED_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "precompiled")
"""The machine code shipped with the package: one folder per CPU level, each with a
``manifest.json`` saying what it was built for and a cache folder named by the digest."""


class Precompiled:
    """Shipped machine code for one CPU level, usable on this machine.

    Args:
        folder: The cache folder of these sources inside the level's folder.
        magic: numba's description of the code generator it was built with (the triple,
            the CPU name and its features), which is part of every entry's key.
        level: The CPU level's name (``x86-64-v3``).
    """

    def __init__(self, folder: str, magic: tuple[str, str, str], level: str) -> None:
        self.folder = folder
        self.magic = magic
        self.level = level

    def __repr__(self) -> str:
        return f"Precompiled({self.level!r}, {self.folder!r})"


def _host_features() -> set[str]:
    """The CPU features of this machine, as LLVM names them."""
    import llvmlite.binding as ll

    return {name for name, present in ll.get_host_cpu_features().items() if present}


def _find_precompiled(root: str = PRECOMPILED_ROOT) -> Precompiled | None:
    """The shipped code that runs here and was built from these very sources, if any.

    A level qualifies when its manifest names this numba, this Python (major.minor), this
    process's target triple and the digest of these sources, and the host has every CPU
    feature the level requires. A manifest that cannot be read is skipped, never fatal.
    """
    if (
        os.environ.get("NUMBA_DISABLE_JIT") == "1"
        or os.environ.get("UNO_LAB_NO_PRECOMPILED") == "1"
        or not os.path.isdir(root)
    ):
        return None
    import llvmlite.binding as ll

    digest = os.path.basename(CACHE_DIR)
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    for level in sorted(os.listdir(root), reverse=True):  # the highest level first (v4, v3)
        folder = os.path.join(root, level)
        try:
            raw = _read_regular(os.path.join(folder, "manifest.json"))
            manifest = json.loads(raw or b"null")
            if not (
                isinstance(manifest, dict)
                and manifest.get("digest") == digest
                and manifest.get("numba") == numba.__version__
                and manifest.get("python") == python
                and manifest.get("triple") == ll.get_process_triple()
                and os.path.isdir(os.path.join(folder, digest))
            ):
                continue
            required = set(manifest["requires"])
            magic = (manifest["triple"], manifest["cpu_name"], manifest["cpu_features"])
        except (_DamagedEntry, ValueError, KeyError, TypeError):
            continue
        if required <= _host_features() and all(isinstance(part, str) for part in magic):
            return Precompiled(os.path.join(folder, digest), magic, level)
    return None


_PRECOMPILED: list[Precompiled | None] = []


def precompiled() -> Precompiled | None:
    """The shipped machine code this process loads functions from, if any (looked up once)."""
    if not _PRECOMPILED:
        _PRECOMPILED.append(_find_precompiled())
    return _PRECOMPILED[0]


def _warn(message: str) -> None:
    # One plain line: warnings.warn would add a second (the source line) and can be
    # turned into an error, and a damaged cache is never worth failing for.
    print(f"uno-lab: {message}", file=sys.stderr, flush=True)


class _DamagedEntry(Exception):
    """A cache file that cannot be what numba wrote there."""


_CHECKSUM = hashlib.sha256
_CHECKSUM_SIZE = _CHECKSUM().digest_size


def _read_regular(path: str) -> bytes | None:
    """The bytes of the regular file at ``path``, or None where there is none.

    The file is opened without following a link and without blocking (a FIFO would
    otherwise wait for a writer forever), and refused unless it is a regular file.

    Raises:
        _DamagedEntry: Something other than a regular file is there, or it cannot be read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _DamagedEntry(f"cannot be opened ({exc.strerror})") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _DamagedEntry("is not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read()
    except OSError as exc:
        raise _DamagedEntry(f"cannot be read ({exc.strerror})") from exc
    finally:
        os.close(fd)


def _unseal(sealed: bytes) -> bytes:
    """The payload of ``sealed`` (payload and its checksum), checked.

    numba stores machine code: a flipped bit that still unpickles would run as broken
    code, so every file carries a checksum of its contents.
    """
    payload, checksum = sealed[:-_CHECKSUM_SIZE], sealed[-_CHECKSUM_SIZE:]
    if len(sealed) < _CHECKSUM_SIZE or _CHECKSUM(payload).digest() != checksum:
        raise _DamagedEntry("is truncated or corrupt (its checksum does not match)")
    return payload


class _CheckedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files of one function, sealed with a checksum and read safely.

    An index or data file that cannot be read back whole is dropped with the function's
    other files, and the function compiles again (and saves a fresh entry).
    """

    def _dump(self, obj: Any) -> bytes:
        payload: bytes = serialize.dumps(obj)
        return payload + _CHECKSUM(payload).digest()

    def _load_index(self) -> dict[Any, str]:
        try:
            raw = _read_regular(self._index_path)
            if raw is None:
                return {}
            stream = io.BytesIO(raw)
            version = pickle.load(stream)
            if version != self._version:
                return {}  # another numba's cache: overwritten at the next save
            stamp, overloads = pickle.loads(_unseal(stream.read()))
            if not isinstance(overloads, dict) or not all(
                isinstance(name, str) and os.path.basename(name) == name
                for name in overloads.values()
            ):
                raise _DamagedEntry("does not hold an index")
        except Exception as exc:
            self.drop(self._index_path, exc)
            return {}
        return overloads if self._stamp_fits(stamp) else {}

    def _stamp_fits(self, stamp: Any) -> bool:
        """Whether the index was written for these sources (numba's stamp of the file)."""
        return bool(stamp == self._source_stamp)

    def load(self, key: Any) -> Any:
        name = self._load_index().get(key)
        if name is None:
            return None
        path = self._data_path(name)
        try:
            raw = _read_regular(path)
            # A missing file is no damage: another process may be saving it right now.
            return None if raw is None else pickle.loads(_unseal(raw))
        except Exception as exc:
            self.drop(path, exc)
            return None

    def drop(self, path: str, reason: BaseException) -> None:
        """Remove the function's index and data files, ``path`` among them, and say why."""
        _warn(f"compile cache file {path} {_reason(reason)}: dropped it, compiling again")
        base = os.path.basename(self._index_path)[: -len(".nbi")]
        with contextlib.suppress(OSError):
            for name in os.listdir(self._cache_path):
                if name == f"{base}.nbi" or (name.startswith(f"{base}.") and ".nbc" in name):
                    _remove(os.path.join(self._cache_path, name))
        _remove(path)


class _ShippedCacheFile(_CheckedCacheFile):
    """The index and data files of one function in the shipped machine code: read-only.

    The files' source stamps are those of the machine that built them; the folder's digest
    stands for the sources instead. A file that cannot be read is skipped (and the function
    compiles), never removed: it belongs to the installed package.
    """

    def _stamp_fits(self, stamp: Any) -> bool:
        return True  # the stamp is the building machine's; the folder's digest was checked

    def drop(self, path: str, reason: BaseException) -> None:
        """Say that a shipped file is unusable (the function compiles instead)."""
        _warn(f"shipped machine code {path} {_reason(reason)}: compiling the function instead")

    def save(self, key: Any, data: Any) -> None:
        """Never written: the shipped code is read-only."""


def _reason(exc: BaseException) -> str:
    """Why a cache file was dropped, on one short line."""
    if isinstance(exc, _DamagedEntry):
        return str(exc)
    detail = " ".join(str(exc).split())[:160]
    return f"cannot be read back ({type(exc).__name__}{': ' if detail else ''}{detail})"


def cache_subpath(module: str, py_file: str) -> str:
    """The folder, inside a cache directory, of the functions of module ``module``.

    It is named by the module's package (``uno_env.core``), not by the path of its file as
    numba's own is: the directory's name already stands for the sources' contents, so the
    same sources share their entries wherever they are installed, and the shipped machine
    code is found by the same name. A function of a module without a package name (a
    script) falls back to numba's name, which holds the path.
    """
    package = module.rpartition(".")[0] or module
    if not package or package == "__main__" or not re.fullmatch(r"[\w.]+", package):
        return str(caching.UserProvidedCacheLocator.get_suitable_cache_subpath(py_file))
    return package


class _Locator(caching.UserProvidedCacheLocator):
    """Functions of a source folder are cached in a folder of :data:`CACHE_DIR`."""

    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        folder = CACHE_DIR
        module = getattr(py_func, "__module__", "") or ""
        caller = caller_digest(py_file, module)
        if caller is not None:  # compiled code of another package: keyed by what it reaches
            folder = os.path.join(CACHE_DIR, f"{_CALLER_PREFIX}{caller}")
        self._cache_path = os.path.join(folder, cache_subpath(module, py_file))

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> _Locator | None:
        locator: _Locator | None = super(caching.UserProvidedCacheLocator, cls).from_function(
            py_func, py_file
        )
        return locator

    def ensure_cache_path(self) -> None:
        path = self.get_cache_path()
        if os.path.lexists(path) and not os.path.isdir(path):
            _remove(path)  # a stray file where the folder belongs
        super().ensure_cache_path()
        caller = os.path.dirname(path)
        if os.path.basename(caller).startswith(_CALLER_PREFIX):
            with contextlib.suppress(OSError):
                os.utime(caller)
            _prune(CACHE_DIR, keep=caller, pattern=_CALLER_NAME, kept=_CALLER_CACHES_KEPT)


class _CacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_Locator]  # noqa: RUF012 (numba's attribute)


class CheckedCache(caching.FunctionCache):
    """numba's cache of one function's compiled code, which a damaged file cannot break.

    Loading drops whatever cannot be read back (and the function compiles anew), and a
    cache that cannot be written only costs the next start a compile.
    """

    _impl_class = _CacheImpl

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        self._cache_file = _CheckedCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
        )

    def _load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            loaded = super()._load_overload(sig, target_context)
        except Exception as exc:  # checked bytes that still do not rebuild
            self._cache_file.drop(self._cache_file._index_path, exc)
            loaded = None
        return loaded if loaded is not None else self._load_shipped(sig, target_context)

    def _load_shipped(self, sig: Any, target_context: Any) -> Any:
        """The function's entry in the shipped machine code, or None."""
        shipped = precompiled()
        if shipped is None or not self._enabled:
            return None
        relative = os.path.relpath(self._cache_path, CACHE_DIR)
        if relative.startswith(os.pardir):
            return None
        key = self._index_key(sig, target_context.codegen())
        files = _ShippedCacheFile(
            cache_path=os.path.join(shipped.folder, relative),
            filename_base=self._impl.filename_base,
            source_stamp=None,
        )
        try:
            data = files.load((key[0], shipped.magic, key[2]))
            return None if data is None else self._impl.rebuild(target_context, data)
        except Exception as exc:
            files.drop(files._index_path, exc)
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)
        except Exception as exc:
            _warn(f"could not save compiled code to the cache in {self._cache_path}: {exc}")


def cache_for(py_func: Callable[..., Any]) -> Any:
    """The disk cache of a compiled function (or none, said once, where it cannot be made)."""
    try:
        return CheckedCache(py_func)
    except Exception as exc:
        _warn(f"cannot cache {py_func.__qualname__} in {CACHE_DIR} ({exc}); compiling it anew")
        return caching.NullCache()


def cached(dispatcher: Any) -> Any:
    """``dispatcher`` (compiled without numba's own cache) with our checked cache."""
    if hasattr(dispatcher, "py_func"):  # not a plain function (NUMBA_DISABLE_JIT)
        dispatcher._cache = cache_for(dispatcher.py_func)
    return dispatcher
