"""The game engine's first compile behind the table: the page loads at once and says so.

Where this install has no machine code of the engine yet (neither shipped with the wheel
nor cached by an earlier start), the engine compiles on first use, which takes one to three
minutes (:mod:`unolab.warmup`). ``uno-lab serve`` does not make the page wait for it:
:func:`start_warmup` compiles in a background thread while the server already answers, the
page polls ``GET /api/warmup`` and shows the progress, and the routes that run the engine
(a deal, a move, a replay) answer 503 with one line until it is done (:data:`NEEDS_ENGINE`).
The page never sends them before then: *Deal* clicked early waits in the browser and deals
as soon as the engine is ready.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from fastapi import Depends, Request

from unolab.warmup import WARMUP_SECONDS, WarmupStatus, is_warm, warm_up
from unolab.web.errors import NotReady

__all__ = ["NEEDS_ENGINE", "engine_ready", "progress_words", "ready_status", "start_warmup"]


def ready_status() -> WarmupStatus:
    """The status of an engine with nothing to compile (its code is shipped or cached)."""
    return WarmupStatus(finished=True)


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
            it is and about how long it takes), one when it ends (or why it failed).

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
        "the progress and deals as soon as it is done"
    )

    def run() -> None:
        try:
            warm_up(status)
        except Exception:  # status.error holds it in one line; the page shows it too
            say(f"error: {status.error}; games that need it may fail")
            return
        say(f"the game engine is compiled ({time.monotonic() - status.started:.0f} s)")

    threading.Thread(target=run, name="uno-lab engine warm-up", daemon=True).start()
    return status


def engine_ready(request: Request) -> None:
    """Refuse a request that runs the engine while the engine is compiling (503).

    Once the warm-up has ended, requests pass even if it failed: the parts that compiled
    work, and a part that did not fails on its own request with one line.

    Raises:
        NotReady: while the warm-up runs.
    """
    status: WarmupStatus = request.app.state.warmup
    if not status.finished:
        raise NotReady(
            "the game engine is being compiled (once for this install): "
            f"{progress_words(status)}; try again when GET /api/warmup says ready"
        )


NEEDS_ENGINE = Depends(engine_ready)
"""The dependency of every route that runs the engine: 503 until the warm-up has ended."""
