"""The local backend's worker pool: processes that play a tournament's chunks in parallel.

The pool uses ``fork`` where the platform has it, else ``spawn``; at most two chunks per
worker are in flight, so a run stopped by the SPRT wastes little. Workers exit by themselves
if the main process dies (``kill -9``), so a killed run leaves no orphans behind.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from uno_env.rules import Rules
from unolab.tournament.chunks import ChunkResult, PlayChunk
from unolab.tournament.design import Schedule
from unolab.tournament.participants import Entrant
from unolab.tournament.results import Unit

__all__ = ["run_pool", "worker_pool"]

_WORKER: dict[str, Any] = {}


def _watch_parent(parent: int) -> None:
    """Exit this worker as soon as the main process is gone (e.g. killed with -9)."""
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.2)


def _init_worker(
    play: PlayChunk, rules: Rules, schedule: Schedule, entrants: Sequence[Entrant], parent: int
) -> None:
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    _WORKER.update(play=play, rules=rules, schedule=schedule, entrants=entrants)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _worker_chunk(chunk: int, units: list[Unit]) -> ChunkResult:
    play: PlayChunk = _WORKER["play"]
    return play(_WORKER["rules"], _WORKER["schedule"], _WORKER["entrants"], chunk, units)


def _pool_context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _ready() -> bool:
    return True


@contextmanager
def worker_pool(
    workers: int,
    play: PlayChunk,
    rules: Rules,
    schedule: Schedule,
    entrants: Sequence[Entrant],
    enabled: bool,
) -> Iterator[ProcessPoolExecutor | None]:
    """The worker pool, its processes started before any other thread (the progress bar's).

    Args:
        workers: How many processes.
        play: Plays one chunk in a worker (handed over at the workers' start, so a forked
            worker runs the very function the main process would).
        rules: The rules of every game.
        schedule: The tournament's schedule.
        entrants: The participants.
        enabled: Whether to start a pool at all (``None`` is yielded when not).
    """
    if not enabled:
        yield None
        return
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_pool_context(),
        initializer=_init_worker,
        initargs=(play, rules, schedule, list(entrants), os.getpid()),
    ) as pool:
        pool.submit(_ready).result()  # forks the workers now
        yield pool


def run_pool(
    pool: ProcessPoolExecutor,
    workers: int,
    todo: list[tuple[int, list[Unit]]],
    stopped: Callable[[], bool],
    handle: Callable[[ChunkResult], None],
) -> None:
    """Play chunks in the pool, at most two per worker in flight, until done or stopped.

    Args:
        pool: The pool of :func:`worker_pool`.
        workers: Its number of processes.
        todo: ``(chunk, units)`` still to play, in order.
        stopped: Whether to submit no more chunks (the SPRT decided).
        handle: Called with each finished chunk's result, in chunk order among those that
            finish together.
    """
    queue = list(reversed(todo))
    in_flight: dict[Future[ChunkResult], int] = {}
    try:
        while queue or in_flight:
            while queue and len(in_flight) < 2 * workers and not stopped():
                chunk, units = queue.pop()
                in_flight[pool.submit(_worker_chunk, chunk, units)] = chunk
            if not in_flight:
                break
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: in_flight[f]):
                in_flight.pop(future)
                handle(future.result())
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise
