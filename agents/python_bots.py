"""Bots written as Python classes, named ``path/to/file.py:ClassName`` or ``package.module:ClassName``.

Wherever the lab takes an agent's name (``uno-lab tournament --participants``, ``uno-lab play
--opponents``, ``uno-lab exploit``, :func:`unolab.agents.make_agent`,
:func:`unolab.agents.resolve_policy`), it also takes a class:

* ``my_bots.py:MyBot`` loads the file by its path (the part before the last colon ends in
  ``.py``) as a module of its own, whose ``__name__`` is not ``"__main__"``;
* ``my_package.bots:MyBot`` imports an installed (or ``PYTHONPATH``) module.

The class must have ``act(observations, masks)`` and ``reset(games=None)`` (the
:class:`~uno_env.policy.Policy` protocol) and its objects a ``name``; it is built as
``MyBot(seed=seed)`` when its constructor takes a ``seed``, else as ``MyBot()``. Loading a
file or a module runs its code: it is the user's own bot, named by the user. Nothing is
unpickled. A file is loaded once per process (again when it changes).

Every failure is a :class:`ValueError` of one line naming the spec: a module or file that
is not found or does not load, no such class, a class that is no agent (saying what it
lacks), a constructor that fails.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import keyword
import sys
from pathlib import Path
from types import ModuleType
from typing import cast

from uno_env.policy import Policy, Seed

__all__ = [
    "CLASS_FORMS",
    "agent_protocol_gaps",
    "canonical_class_spec",
    "class_spec_name",
    "is_class_spec",
    "load_bot_class",
    "make_class_agent",
]

CLASS_FORMS = "a Python class (path/to/file.py:ClassName or package.module:ClassName)"
"""How the forms of a class spec are named in messages."""

PROTOCOL = "a name (str), act(observations, masks) and reset(games=None)"
"""What an agent has, as messages say it."""

_FILES: dict[tuple[str, int, int], ModuleType] = {}
"""The modules loaded from files, by (resolved path, modification time, size)."""


def _split(spec: str) -> tuple[str, str]:
    source, _, name = str(spec).rpartition(":")  # rpartition: a Windows path has a colon
    return source, name


def _is_file_source(source: str) -> bool:
    return source.lower().endswith(".py")


def is_class_spec(spec: str) -> bool:
    """Whether ``spec`` has the form of a class: ``file.py:ClassName`` or ``module:ClassName``.

    Only the form is checked (nothing is imported). A search's options (``pimc:2048``) are
    no class name; a registered agent's name comes first wherever both could apply.
    """
    source, name = _split(spec)
    if not source or not name.isidentifier() or keyword.iskeyword(name):
        return False
    return _is_file_source(source) or all(
        part.isidentifier() and not keyword.iskeyword(part) for part in source.split(".")
    )


def class_spec_name(spec: str) -> str:
    """The class's name in a class spec (``MyBot`` of ``my_bots.py:MyBot``)."""
    return _split(spec)[1]


def canonical_class_spec(spec: str) -> str:
    """The spec that rebuilds the same class from any working folder: a file's path made
    absolute (``~`` expanded, links resolved); any other spec (a module's class, a bot's
    name) unchanged."""
    source, name = _split(spec)
    if not is_class_spec(spec) or not _is_file_source(source):
        return str(spec)
    return f"{Path(source).expanduser().resolve()}:{name}"


def _load_file(spec: str, source: str) -> ModuleType:
    path = Path(source).expanduser()
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise ValueError(f"agent {spec!r}: the bot file {source!r} {what}")
    resolved = path.resolve()
    info = resolved.stat()
    key = (str(resolved), info.st_mtime_ns, info.st_size)
    if key in _FILES:
        return _FILES[key]
    # A module name of its own per file, registered while it runs: dataclasses and
    # typing look their module up in sys.modules.
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    module_name = f"unolab_bot_file_{digest}"
    found = importlib.util.spec_from_file_location(module_name, resolved)
    if found is None or found.loader is None:
        raise ValueError(f"agent {spec!r}: {source!r} cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(found)
    sys.modules[module_name] = module
    try:
        found.loader.exec_module(module)
    except (Exception, SystemExit) as err:  # the file's own error, shown in one line
        sys.modules.pop(module_name, None)
        raise ValueError(f"agent {spec!r}: loading {source!r} failed: {_said(err)}") from None
    _FILES[key] = module
    return module


def _import_module(spec: str, source: str) -> ModuleType:
    try:
        return importlib.import_module(source)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if missing and (source == missing or source.startswith(missing + ".")):
            as_file = source.replace(".", "/") + ".py"
            hint = (
                f"to load the file {as_file} give its path: {as_file}:{class_spec_name(spec)}"
                if Path(as_file).is_file()
                else "install it or add its folder to PYTHONPATH, or name a file by its "
                f"path: path/to/file.py:{class_spec_name(spec)}"
            )
            raise ValueError(f"agent {spec!r}: no module named {source!r}; {hint}") from None
        raise ValueError(f"agent {spec!r}: importing {source!r} failed: {_said(err)}") from None
    except (Exception, SystemExit) as err:  # the module's own error, shown in one line
        raise ValueError(f"agent {spec!r}: importing {source!r} failed: {_said(err)}") from None


def _said(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def agent_protocol_gaps(cls: type) -> list[str]:
    """The methods a class lacks to be an agent (``["reset()"]``): ``act`` and ``reset``, and
    ``act_from_state`` when it says ``needs_state = True`` (``name`` is checked on its
    objects, which may set it in ``__init__``)."""
    gaps = [
        f"{method}()" for method in ("act", "reset") if not callable(getattr(cls, method, None))
    ]
    if getattr(cls, "needs_state", False) is True and not callable(
        getattr(cls, "act_from_state", None)
    ):
        gaps.append("act_from_state() (it says needs_state = True)")
    return gaps


def load_bot_class(spec: str) -> type:
    """The class a class spec names, loaded and checked against the agent protocol.

    Raises:
        ValueError: one line naming ``spec``: the file or module is not found or fails to
            load, it has no such class, or the class is no agent (what it lacks is said).
    """
    source, name = _split(spec)
    if not is_class_spec(spec):
        raise ValueError(f"agent {spec!r} is not {CLASS_FORMS}")
    module = _load_file(spec, source) if _is_file_source(source) else _import_module(spec, source)
    found = getattr(module, name, None)
    if found is None:
        classes = sorted(
            key
            for key, value in vars(module).items()
            if inspect.isclass(value) and value.__module__ == module.__name__
        )
        listed = f"; its classes: {', '.join(classes)}" if classes else "; it defines no class"
        raise ValueError(f"agent {spec!r}: {source!r} has no class {name!r}{listed}")
    if not inspect.isclass(found):
        raise ValueError(
            f"agent {spec!r}: {name!r} in {source!r} is a {type(found).__name__}, not a class"
        )
    gaps = agent_protocol_gaps(found)
    if gaps:
        raise ValueError(
            f"agent {spec!r}: class {name} is not an agent: it lacks {' and '.join(gaps)}; "
            f"an agent has {PROTOCOL}"
        )
    return found


def _takes_seed(cls: type, spec: str) -> bool:
    """Whether the constructor takes a seed (else it must take no argument at all)."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):  # a signature Python cannot tell: try without a seed
        return False
    if any(p.name == "seed" or p.kind is p.VAR_KEYWORD for p in parameters):
        return True
    required = [
        p.name
        for p in parameters
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if required:
        raise ValueError(
            f"agent {spec!r}: {cls.__name__}() requires {', '.join(required)}; an agent is "
            f"built as {cls.__name__}(seed=...) or {cls.__name__}(): give "
            f"{'it' if len(required) == 1 else 'them'} a default"
        )
    return False


def make_class_agent(spec: str, seed: Seed = None) -> Policy:
    """A fresh agent of the class ``spec`` names, built with ``seed`` when it takes one.

    Args:
        spec: ``path/to/file.py:ClassName`` or ``package.module:ClassName``.
        seed: Passed as ``seed=`` when the constructor takes a ``seed`` (an int, a NumPy
            Generator or ``None``: ``numpy.random.default_rng`` takes all three).

    Raises:
        ValueError: one line naming ``spec`` (see :func:`load_bot_class`), or when the
            constructor fails or the object has no ``name``.
    """
    cls = load_bot_class(spec)
    with_seed = _takes_seed(cls, spec)
    try:
        agent = cls(seed=seed) if with_seed else cls()
    except Exception as err:  # the bot's own error, shown in one line
        call = f"{cls.__name__}(seed={seed!r})" if with_seed else f"{cls.__name__}()"
        raise ValueError(f"agent {spec!r}: {call} failed: {_said(err)}") from None
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"agent {spec!r}: class {cls.__name__} is not an agent: its objects have no name "
            f"(give the class a str attribute name = ...); an agent has {PROTOCOL}"
        )
    return cast(Policy, agent)
