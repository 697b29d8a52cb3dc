"""Compiling the game engine ahead of use: ``uno-lab warmup``, and the first start of a command.

The rules, the observation encoder and the searches' rollouts are compiled by numba
(:mod:`uno_env.jit`). The wheel ships their machine code for common machines (Linux,
CPython 3.11, x86-64 with AVX2), so a first start there loads it in a second. Elsewhere, or
after the sources changed, the code compiles once per install, which takes one to three
minutes on a laptop, and is cached.

The shipped code is portable, for a CPU level rather than this very machine; ``uno-lab
warmup`` compiles code tuned for the machine (the same one to three minutes), which every
later start prefers.

That wait is never silent: before a command that plays games starts, :func:`ensure_compiled`
checks whether this install has compiled everything, and if not, says so on one line (how
long it takes, that it happens once), compiles each part with a spinner and a count in a
terminal (plain lines otherwise), and marks the cache as warm. ``uno-lab warmup`` does the
same on its own, and ``uno-lab serve`` does it in the background while its page shows the
progress (:class:`WarmupStatus`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

__all__ = [
    "GAME_PARTS",
    "PART_NAMES",
    "WARMUP_SECONDS",
    "CompileFailed",
    "WarmupStatus",
    "describe_cache",
    "ensure_compiled",
    "is_native",
    "is_warm",
    "warm_up",
    "warmup_parts",
]

_MARKER = "warm"
"""The files, in the cache directory, that say a part compiled (each holds its digests)."""


def _part_rules() -> None:
    """Deal, legal moves and every rule of a step, on a full game between random players."""
    import numpy as np

    from uno_env import core
    from uno_env.play import play_tables
    from uno_env.rules import load_rules
    from uno_env.sampling import uniform_legal_actions
    from unolab.agents.registry import make_agent

    rules = load_rules("official", num_players=2)
    policies = [make_agent("random", seed=0)]
    play_tables(rules, policies, np.zeros((2, 2), np.int64), np.arange(2, dtype=np.uint64))
    # The core's own loop, as a user writes it (docs/engine.md): the uniform legal choice.
    state = core.init(rules, batch_size=2, seed=0)
    uniform_legal_actions(core.legal_action_mask(rules, state), np.random.default_rng(0))


def _part_observation() -> None:
    """The observation encoder (networks, the PettingZoo and Gymnasium envs)."""
    import numpy as np

    from uno_env import core
    from uno_env.observation import encode
    from uno_env.rules import load_rules

    rules = load_rules("official", num_players=2)
    state = core.init(rules, batch_size=1, seed=0)
    encode(rules, state, np.zeros(1, np.int64))


def _part_searches() -> None:
    """The searches' deals of hidden cards, rollouts and trees (pimc, ismcts)."""
    import numpy as np

    from uno_env.play import play_tables
    from uno_env.rules import load_rules
    from unolab.agents.registry import make_agent

    rules = load_rules("official", num_players=2)
    policies = [make_agent("pimc:rollouts=2", seed=0), make_agent("ismcts:iterations=4", seed=0)]
    lineups = np.array([[0, 1]], np.int64)
    play_tables(rules, policies, lineups, np.arange(1, dtype=np.uint64))


@dataclass(frozen=True)
class _Part:
    label: str
    run: Callable[[], None]
    seconds: int  # about how long it compiles on a 2-core machine


_PARTS: dict[str, _Part] = {
    # Measured on a 2-core machine with a second job running: 55 s for the first two, 285
    # s for all three.
    "rules": _Part("the rules", _part_rules, 60),
    "observation": _Part("the observation encoder", _part_observation, 5),
    "searches": _Part("the searches", _part_searches, 200),
}

PART_NAMES: tuple[str, ...] = tuple(_PARTS)
"""The parts a command may need compiled: ``rules``, ``observation``, ``searches``."""

GAME_PARTS: tuple[str, ...] = ("rules", "observation")
"""What a game between bots or networks needs (the searches are for ``pimc``, ``ismcts``)."""


def warmup_parts(names: Sequence[str] = PART_NAMES) -> list[tuple[str, Callable[[], None]]]:
    """What is compiled, in order: (what it is, the function that compiles it).

    Args:
        names: The parts wanted (see :data:`PART_NAMES`).
    """
    return [(_PARTS[name].label, _PARTS[name].run) for name in PART_NAMES if name in names]


def _estimate(names: Sequence[str]) -> int:
    return sum(_PARTS[name].seconds for name in PART_NAMES if name in names)


WARMUP_SECONDS = _estimate(PART_NAMES)
"""About how long compiling every part takes on a 2-core machine, for the announcements."""


def _caller_digests() -> list[str]:
    """The digests that key the searches' compiled code (see :mod:`uno_env.jit_sources`)."""
    from pathlib import Path

    import unolab
    from uno_env.jit_sources import caller_digest

    agents = Path(unolab.__file__).parent / "agents"  # not imported: this check stays cheap
    digests = [
        caller_digest(str(agents / f"{name}.py"), f"unolab.agents.{name}")
        for name in ("rollout", "ismcts")
    ]
    return [digest or "" for digest in digests]


def _marker(label: str) -> tuple[str, str]:
    """The file that says a part compiled, and what it holds: the digests of its sources."""
    from uno_env import jit_cache

    sources = [os.path.basename(jit_cache.CACHE_DIR)]
    if label == _PARTS["searches"].label:
        sources += _caller_digests()
    name = hashlib.sha256(label.encode()).hexdigest()[:12]
    text = hashlib.sha256("\n".join(sources).encode()).hexdigest()
    return os.path.join(jit_cache.CACHE_DIR, f"{_MARKER}-{name}"), text


def is_native(names: Sequence[str] = PART_NAMES) -> bool:
    """Whether these parts were compiled for this very machine (by a warm-up) and cached.

    Args:
        names: The parts (see :data:`PART_NAMES`; all by default).
    """
    for label, _ in warmup_parts(names):
        path, text = _marker(label)
        try:
            with open(path, encoding="utf-8") as file:
                if file.read().strip() != text:
                    return False
        except (OSError, UnicodeDecodeError):
            return False
    return True


def is_warm(names: Sequence[str] = PART_NAMES) -> bool:
    """Whether the compiled code of these parts loads without compiling (shipped or cached).

    Args:
        names: The parts (see :data:`PART_NAMES`; all by default).
    """
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return True
    from uno_env import jit_cache

    shipped = jit_cache.precompiled()
    if shipped is not None and all(
        os.path.isdir(os.path.join(shipped.folder, f"caller-{digest}"))
        for digest in _caller_digests()
    ):
        return True
    return is_native(names)


def describe_cache() -> str:
    """Where this install's compiled code comes from, in one line."""
    from uno_env import jit_cache

    if is_native():
        return f"compiled for this machine, in {jit_cache.CACHE_DIR}"
    shipped = jit_cache.precompiled()
    if shipped is not None:
        return (
            f"the portable machine code shipped for {shipped.level} ({shipped.folder}); "
            "uno-lab warmup compiles code tuned for this machine, faster on many"
        )
    return f"the compile cache in {jit_cache.CACHE_DIR}"


def _mark_warm(label: str) -> None:
    from uno_env import jit_cache

    if jit_cache.precompiled() is not None:
        return  # the shipped code may have served it: nothing was compiled for this machine
    path, text = _marker(label)
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as file:
            file.write(text + "\n")
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # a cache that cannot be written costs the next start the check, nothing more


class CompileFailed(RuntimeError):
    """Compiling a part of the engine failed (the message says which, in one line)."""


@dataclass
class WarmupStatus:
    """Where a warm-up stands, for a page or a terminal (thread-safe to read).

    Attributes:
        done: Parts compiled so far.
        total: Parts in all.
        current: What is compiling now ("" once finished).
        started: ``time.monotonic()`` at the start.
        finished: Whether everything is compiled.
        error: One line, if compiling failed.
    """

    done: int = 0
    total: int = 0
    current: str = ""
    started: float = field(default_factory=time.monotonic)
    finished: bool = False
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        """The status as JSON-ready values, with the seconds elapsed and the estimate."""
        return {
            "ready": self.finished and not self.error,
            "done": self.done,
            "total": self.total,
            "current": self.current,
            "elapsed_s": round(time.monotonic() - self.started, 1),
            "estimate_s": WARMUP_SECONDS,
            "error": self.error,
        }


def warm_up(status: WarmupStatus | None = None, names: Sequence[str] = PART_NAMES) -> WarmupStatus:
    """Compile (or load) the parts, recording progress in ``status``, and mark the cache.

    Args:
        status: Updated as parts finish (a new one if not given).
        names: The parts (see :data:`PART_NAMES`; all by default).

    Returns:
        The status, finished.
    """
    status = status if status is not None else WarmupStatus()
    parts = warmup_parts(names)
    status.total = len(parts)
    try:
        for label, run in parts:
            status.current = label
            run()
            _mark_warm(label)
            status.done += 1
    except Exception as exc:  # reported by the caller in one line
        status.error = f"compiling {status.current} failed: {type(exc).__name__}: {exc}"
        raise
    finally:
        status.current = ""
        status.finished = True
    return status


def _minutes(seconds: float) -> str:
    return f"about {round(seconds / 60)} minutes" if seconds >= 90 else f"about {seconds:.0f} s"


def ensure_compiled(
    stream: TextIO | None = None, force: bool = False, names: Sequence[str] = PART_NAMES
) -> bool:
    """Compile what a command needs before it starts, saying so, unless it is there already.

    In a terminal a spinner shows the part being compiled, the count and the seconds; in a
    log a line per part. Nothing is printed when the compiled code is shipped or cached.

    Args:
        stream: Where to report (standard error by default).
        force: Compile (or load) and report even when the cache says it is warm.
        names: The parts the command needs (see :data:`PART_NAMES`; all by default).

    Returns:
        Whether anything had to be compiled.
    """
    if not force and is_warm(names):
        return False
    stream = stream if stream is not None else sys.stderr
    print(
        f"uno-lab: compiling the game engine once for this install: {_minutes(_estimate(names))}"
        " (later starts take seconds)",
        file=stream,
        flush=True,
    )
    status = WarmupStatus()
    worker = threading.Thread(target=_run_quietly, args=(status, names), daemon=True)
    worker.start()
    if stream.isatty():
        from rich.console import Console

        console = Console(file=stream, stderr=stream is sys.stderr)
        with console.status("") as spinner:
            while worker.is_alive():
                spinner.update(_progress_line(status))
                worker.join(0.2)
    else:
        said = -1
        while worker.is_alive():
            if status.done != said and status.current:
                said = status.done
                print(f"uno-lab: {_progress_line(status)}", file=stream, flush=True)
            worker.join(0.5)
    worker.join()
    if status.error:
        raise CompileFailed(status.error)
    elapsed = time.monotonic() - status.started
    print(f"uno-lab: compiled in {elapsed:.0f} s", file=stream, flush=True)
    return True


def _progress_line(status: WarmupStatus) -> str:
    elapsed = time.monotonic() - status.started
    step = min(status.done + 1, status.total)
    return f"compiling {status.current} ({step}/{status.total}), {elapsed:.0f} s"


def _run_quietly(status: WarmupStatus, names: Sequence[str]) -> None:
    with contextlib.suppress(Exception):  # status.error holds it; the caller raises
        warm_up(status, names)
