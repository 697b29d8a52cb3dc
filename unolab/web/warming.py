"""The game engine's first compile behind the table: the page loads at once and says so.

Where this install has no machine code of the engine yet (neither shipped with the wheel
nor cached by an earlier start), the engine compiles on first use, which takes one to three
minutes (:mod:`unolab.warmup`). ``uno-lab serve`` does not make the page wait for it:
:func:`start_warmup` compiles in a background thread while the server already answers, the
page polls ``GET /api/warmup`` and shows the progress, and the routes that run the engine
(a deal, a move, a replay) answer 503 with one line until what they need is compiled
(:data:`NEEDS_ENGINE`). The page never sends them before then: *Deal* clicked early waits
in the browser and deals the moment it can.

The searches (``pimc``, ``ismcts``) compile last and take the longest, and only a game
against them runs them: every other game is dealt as soon as the parts before them are
compiled (:func:`playable`), while they go on compiling.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from fastapi import Depends, Request

from unolab.warmup import WARMUP_SECONDS, WarmupStatus, is_warm, warm_up, warmup_parts
from unolab.web.guard import NotReady

__all__ = [
    "NEEDS_ENGINE",
    "NEEDS_SEARCHES",
    "SEARCH_PART",
    "engine_ready",
    "playable",
    "progress_words",
    "ready_status",
    "require_searches",
    "searches_ready",
    "start_warmup",
    "warmup_state",
]

SEARCH_PART = "the searches"
"""The part of the warm-up (:func:`unolab.warmup.warmup_parts`) that only the search agents
run; the parts before it are all that any other game needs."""


def ready_status() -> WarmupStatus:
    """The status of an engine with nothing to compile (its code is shipped or cached)."""
    return WarmupStatus(finished=True)


def playable(status: WarmupStatus) -> bool:
    """Whether a game without search agents can be dealt: the warm-up has ended, or every
    part before the searches is compiled."""
    if status.finished:
        return True
    labels = [label for label, _ in warmup_parts()]
    needed = labels.index(SEARCH_PART) if SEARCH_PART in labels else len(labels)
    return status.total > 0 and status.done >= needed


def warmup_state(status: WarmupStatus) -> dict[str, object]:
    """What ``GET /api/warmup`` answers: :meth:`WarmupStatus.as_dict` and ``playable``."""
    return {**status.as_dict(), "playable": playable(status)}


def progress_words(status: WarmupStatus) -> str:
    """Where a running warm-up stands, in words: the step, what compiles, the seconds."""
    elapsed = time.monotonic() - status.started
    step = min(status.done + 1, status.total) if status.total else 1
    what = f": {status.current}" if status.current else ""
    return (
        f"step {step} of {status.total or '?'}{what}, {elapsed:.0f} s of about {WARMUP_SECONDS} s"
    )


def start_warmup(say: Callable[[str], None]) -> WarmupStatus:
    """Compile the engine in a background thread unless its machine code is already there.

    Args:
        say: Takes the lines for the server's terminal: one when the compile starts (what
            it is and about how long it takes), one when games without a search can be
            dealt, one when it ends (or why it failed).

    Returns:
        The status the thread fills in (finished at once when nothing is to compile); the
        app keeps it (:func:`unolab.web.app.create_app`).
    """
    if is_warm():
        return ready_status()
    status = WarmupStatus()
    say(
        "compiling the game engine once for this install: about "
        f"{WARMUP_SECONDS / 60:.1f} minutes (later starts take seconds); the page shows "
        "the progress and deals as soon as it can"
    )

    def compile_all() -> None:
        with contextlib.suppress(Exception):  # status.error holds it, in one line
            warm_up(status)

    def report() -> None:
        worker = threading.Thread(target=compile_all, name="uno-lab engine warm-up", daemon=True)
        worker.start()
        told = False
        while worker.is_alive():
            if not told and not status.finished and playable(status):
                told = True
                say(
                    "the game engine is ready to play; the searches (pimc, ismcts) are "
                    "still compiling"
                )
            worker.join(0.25)
        if status.error:
            say(f"error: {status.error}; games that need it may fail")
        else:
            say(f"the game engine is compiled ({time.monotonic() - status.started:.0f} s)")

    threading.Thread(target=report, name="uno-lab engine warm-up report", daemon=True).start()
    return status


async def engine_ready(request: Request) -> None:
    """Refuse a request that runs the engine while the parts it needs compile (503).

    A coroutine, so that checking it costs the request no trip to a worker thread.

    Once the warm-up has ended, requests pass even if it failed: the parts that compiled
    work, and a part that did not fails on its own request with one line.

    Raises:
        NotReady: until the engine is :func:`playable`.
    """
    status: WarmupStatus = request.app.state.warmup
    if not playable(status):
        raise NotReady(
            "the game engine is being compiled (once for this install): "
            f"{progress_words(status)}; try again when GET /api/warmup says playable"
        )


def require_searches(status: WarmupStatus, who: str) -> None:
    """Refuse a request that runs a search agent while the searches compile (503).

    Args:
        status: The warm-up.
        who: What needs the searches, for the message (``"pimc"``).

    Raises:
        NotReady: until the warm-up has ended.
    """
    if not status.finished:
        raise NotReady(
            f"{who} needs the searches, which are being compiled (once for this install): "
            f"{progress_words(status)}; the other agents play already, or try again when "
            "GET /api/warmup says ready"
        )


async def searches_ready(request: Request) -> None:
    """Refuse a request that may run any agent, a search included, until the warm-up has
    ended (503; see :func:`require_searches`)."""
    require_searches(
        request.app.state.warmup, "replaying a tournament game (its agents may include one)"
    )


NEEDS_ENGINE = Depends(engine_ready)
"""The dependency of the routes that run the engine: 503 until it is :func:`playable`."""

NEEDS_SEARCHES = Depends(searches_ready)
"""The dependency of the routes that may run any agent: 503 until the warm-up has ended."""
