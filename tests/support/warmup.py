"""A stand-in for the engine's first compile: it goes through the real parts' names, each
when the test says, so that what the table shows while it runs is tested without
compiling anything."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from unolab import warmup
from unolab.warmup import WarmupStatus
from unolab.web import warming

PARTS = tuple(label for label, _ in warmup.warmup_parts())
"""The labels of the parts, in order, as the real warm-up names them."""


class FakeWarmup:
    """A warm-up whose parts finish when :meth:`step` lets them (or fail, if told to).

    Args:
        fail: The label of the part that fails, if one does.
    """

    def __init__(self, fail: str = "") -> None:
        self.fail = fail
        self.started = 0
        self._steps = threading.Semaphore(0)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make the table's warm-up find the engine not compiled and run this instead."""
        monkeypatch.setattr(warming, "is_warm", lambda: False)
        monkeypatch.setattr(warming, "warm_up", self.warm_up)

    def step(self, parts: int = 1) -> None:
        """Let the next ``parts`` parts finish."""
        for _ in range(parts):
            self._steps.release()

    def warm_up(self, status: WarmupStatus | None = None) -> WarmupStatus:
        """What :func:`unolab.warmup.warm_up` does to the status, with nothing compiled."""
        self.started += 1
        status = status if status is not None else WarmupStatus()
        status.total = len(PARTS)
        try:
            for label in PARTS:
                status.current = label
                if not self._steps.acquire(timeout=120):
                    raise TimeoutError("the test never let this part finish")
                if label == self.fail:
                    raise MemoryError("out of memory")
                status.done += 1
        except Exception as exc:
            status.error = f"compiling {status.current} failed: {type(exc).__name__}: {exc}"
            raise
        finally:
            status.current = ""
            status.finished = True
        return status


def wait_for(condition: Callable[[], object], what: str, seconds: float = 20) -> None:
    """Wait until ``condition()`` holds (a background thread makes it so)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
