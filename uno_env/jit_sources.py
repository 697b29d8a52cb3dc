"""The sources compiled code can reach, and the digests of them that key the compile cache.

numba only checks a compiled function's own file for changes, not the files of the functions
it inlines nor of the module-level constants it freezes into the machine code, so the cache
of :mod:`uno_env.jit` is keyed by every file the compiled code can reach. Which files those
are is worked out here, not kept by hand, by one mechanism (:class:`_Finder`) that reads the
imports of a source with :mod:`ast` (nothing is imported) and follows them transitively:

* **The engine's own code** (:func:`compiled_sources`): every module of the package that
  imports ``uno_env.jit`` (it may compile something), all of ``uno_env/core/`` and
  ``jit.py``, and then every module of the package that any of these imports (its functions
  or constants may be compiled in). A new compiled module, or a new module of constants that
  compiled code uses, is covered as soon as it is imported; modules the compiled code cannot
  reach (the envs, the game wrapper) are left out, so editing them keeps the cache. Their
  digest (:func:`source_digest`) names the cache directory.
* **Compiled code of another package** (:func:`caller_sources`): the searches of
  ``unolab.agents``, which call the core through :mod:`uno_env.core.kernel`. Every source
  they can reach, their own package's and this one's, keys a folder of their own inside
  that directory (:func:`caller_digest`): editing a search's helper in another file gives
  fresh machine code too.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numba

__all__ = ["PACKAGE", "caller_digest", "caller_sources", "compiled_sources", "source_digest"]

PACKAGE = Path(__file__).resolve().parent
"""The folder of this package, whose compiled sources name the cache directory."""
_NAME = __name__.partition(".")[0]  # the package's import name, "uno_env"
_ALWAYS_COMPILED = ("jit.py", "core")
"""Sources hashed whatever they import: the compiler and the whole core folder."""


def _package_folders(top: str) -> list[Path]:
    """The folders of top-level package ``top``, found without importing it."""
    module = sys.modules.get(top)
    paths = list(getattr(module, "__path__", None) or [])
    if not paths:
        spec = importlib.machinery.PathFinder.find_spec(top)
        paths = list(spec.submodule_search_locations or []) if spec is not None else []
    return [Path(p) for p in paths]


class _Finder:
    """Finds the source files of modules in some top-level packages, and what they import.

    It knows the dotted package of each file it found, or that lies in one of the packages'
    folders, for that file's relative imports.

    Args:
        folders: The folders of each top-level package followed, by its import name.
    """

    def __init__(self, folders: Mapping[str, Sequence[Path]]) -> None:
        self.folders = {top: list(paths) for top, paths in folders.items()}
        self._package_of: dict[Path, list[str]] = {}
        self._imports: dict[Path, set[Path]] = {}  # each file is parsed once

    @classmethod
    def installed(cls, tops: Iterable[str]) -> _Finder:
        """A finder of the packages ``tops`` where they are installed (none is imported)."""
        return cls({top: _package_folders(top) for top in tops})

    def __call__(self, dotted: str) -> Path | None:
        """The file of module ``dotted``, or None for a module not followed."""
        parts = dotted.split(".")
        for folder in self.folders.get(parts[0], ()):
            base = folder.joinpath(*parts[1:])
            if len(parts) > 1 and base.with_suffix(".py").is_file():
                self._package_of.setdefault(base.with_suffix(".py"), parts[:-1])
                return base.with_suffix(".py")
            if (base / "__init__.py").is_file():
                self._package_of.setdefault(base / "__init__.py", parts)
                return base / "__init__.py"
        return None

    def place(self, file: Path, module: str) -> None:
        """Take ``file`` as module ``module`` (for a file given by its path, not found)."""
        parts = module.split(".")
        self._package_of[file] = parts if file.name == "__init__.py" else parts[:-1]

    def package_of(self, file: Path) -> list[str]:
        """The dotted package of ``file``, split ("uno_env.core" for core/step.py)."""
        if file not in self._package_of:
            self._package_of[file] = next(
                (
                    [top, *file.relative_to(folder).parts[:-1]]
                    for top, folders in self.folders.items()
                    for folder in folders
                    if file.is_relative_to(folder)
                ),
                [],
            )
        return self._package_of[file]

    def imports(self, file: Path) -> set[Path]:
        """The files of the followed packages that ``file`` imports, anywhere in it."""
        if file not in self._imports:
            self._imports[file] = self._read_imports(file)
        return self._imports[file]

    def _read_imports(self, file: Path) -> set[Path]:
        try:
            tree = ast.parse(file.read_bytes(), filename=str(file))
        except (SyntaxError, ValueError, OSError):
            return set()  # a file that cannot be imported compiles nothing
        here = self.package_of(file)
        found: set[Path] = set()
        for node in ast.walk(tree):
            targets: list[Path | None] = []
            if isinstance(node, ast.Import):
                targets = [self(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the file's package (.) or above (..)
                    module = filter(None, [node.module])
                    base = ".".join([*here[: len(here) - node.level + 1], *module])
                else:
                    base = node.module or ""
                for alias in node.names:
                    # "from a import b" takes module a.b if there is one, else a name of a.
                    targets.append(self(f"{base}.{alias.name}") or self(base))
            found.update(target for target in targets if target is not None)
        return found

    def reached(self, files: Iterable[Path]) -> set[Path]:
        """``files`` and every file of the followed packages they import, transitively."""
        seen: set[Path] = set()
        todo = list(files)
        while todo:
            file = todo.pop()
            if file not in seen:
                seen.add(file)
                todo += self.imports(file)
        return seen


def compiled_sources(package: Path = PACKAGE) -> list[Path]:
    """The source files of ``package`` that its compiled code may depend on.

    Args:
        package: The folder of this package (a copy of it, in the tests).
    """
    find = _Finder({_NAME: [package]})
    jit_module = package / "jit.py"
    roots = [
        file
        for file in sorted(package.rglob("*.py"))
        # Any import of the module names it: skip parsing the files that never say "jit".
        if b"jit" in file.read_bytes() and jit_module in find.imports(file)
    ]
    for name in _ALWAYS_COMPILED:
        path = package / name
        roots += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sorted(find.reached(roots))


def source_digest(package: Path = PACKAGE) -> str:
    """A hash of numba's version and of every compiled source: the cache's directory name."""
    digest = hashlib.sha256(numba.__version__.encode())
    for file in compiled_sources(package):
        digest.update(file.relative_to(package).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def caller_sources(py_file: str, module: str) -> dict[Path, str]:
    """Every source that compiled code in ``py_file`` (module ``module``) can reach: the files
    of its own top-level package and of this one that it imports, transitively, each with
    its dotted package name."""
    path = Path(py_file)
    find = _Finder.installed({module.partition(".")[0], _NAME})
    find.place(path, module)
    return {file: ".".join(find.package_of(file)) for file in sorted(find.reached([path]))}


_CALLER_DIGESTS: dict[str, str | None] = {}


def caller_digest(py_file: str, module: str) -> str | None:
    """For compiled code outside this package: a hash of every source it can reach.

    numba checks only a function's own file, but a search compiled in ``unolab.agents``
    also compiles in helpers from its other files and from the core. Its cache is keyed by
    all of them (:func:`caller_sources`), so an edit to any of them gives fresh machine
    code. None for this package's own files, which the cache directory's name covers.
    """
    if py_file not in _CALLER_DIGESTS:
        digest = None
        if module and not Path(py_file).resolve().is_relative_to(PACKAGE):
            hasher = hashlib.sha256(numba.__version__.encode())
            for file, package in caller_sources(py_file, module).items():
                hasher.update(f"{package}/{file.name}".encode())
                hasher.update(file.read_bytes())
            digest = hasher.hexdigest()[:16]
        _CALLER_DIGESTS[py_file] = digest
    return _CALLER_DIGESTS[py_file]
