"""Where a tournament's chunks are played: the local worker pool or a Ray cluster.

Both backends run :func:`unolab.tournament.chunks.play_chunk` on each chunk and hand the
finished chunks on in plan order (:class:`~unolab.tournament.chunks.ChunkOrder`), so the same
config gives the same games, and the same log bytes, on either.

**The local backend's worker pool.** The pool uses ``fork`` where the platform has it, else ``spawn``; at most two chunks per
worker are in flight, so a run stopped by the SPRT wastes little. Workers exit by themselves
if the main process dies (``kill -9``), so a killed run leaves no orphans behind.

A worker that dies (killed with ``kill -9``, or by the kernel when memory runs out) breaks
the pool and loses every chunk in flight. The pool is then replaced by a fresh one and the
lost chunks are played again: a chunk is seeded by its index, so its replay gives the very
games it would have given, and the finished chunks are handed on in plan order
(:class:`~unolab.tournament.chunks.ChunkOrder`), so the log is the same bytes as an
uninterrupted run's. A chunk lost once is played again alone (nothing else in flight), so
a chunk that kills its worker each time is told from the chunks that were lost beside it;
a chunk lost more than :data:`MAX_RESTARTS` times ends the run with
:class:`WorkerLostError`, one line naming the chunk; the chunks written before it are kept
and rerunning the command resumes.

**The ``ray`` backend: chunks as Ray tasks.** Each chunk (a fixed shard of deal sets, ``games_per_chunk`` games) is one Ray task running
:func:`unolab.tournament.chunks.play_chunk`, the function the local backend runs, so the same
config gives the same games on either backend. The rules, the schedule and the entrants go
to the object store once. Entrants travel as data: bots by name, exported agents as the
bytes of their files (:class:`unolab.agents.ray_backend.AgentFiles`), written once per machine and
loaded there by the ordinary loader; SB3 ``.zip`` files travel the same way, only with
``allow_pickle``. A policy factory given in code (``overrides``) cannot travel and is refused.

The driver keeps two tasks per cluster CPU in flight and hands each finished chunk to the
runner in plan order (as the local backend does, so the log is the same bytes), which
appends it to ``games.jsonl`` at once: a driver killed with ``kill -9`` loses
only the chunks in flight, and the rerun plays only the missing ones. A worker process that
dies mid-chunk (killed, out of memory, its node lost) makes Ray run the task again
(:data:`TASK_RETRIES`); the chunk is deterministic and written only when complete, so no
game is lost or written twice.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents.llm.spec import spec_suffix
from unolab.agents.ray_backend import AgentFiles, RayBackendError, cluster_cpus, connect
from unolab.tournament.chunks import ChunkOrder, ChunkResult, PlayChunk
from unolab.tournament.config import ParticipantSpec, TournamentConfig
from unolab.tournament.design import Schedule
from unolab.tournament.participants import Entrant, SpecFactory
from unolab.tournament.results import Unit

__all__ = [
    "MAX_RESTARTS",
    "TASK_RETRIES",
    "WorkerLostError",
    "WorkerPool",
    "ray_cluster",
    "run_chunks_on_ray",
    "shipped_entrants",
    "worker_pool",
]


MAX_RESTARTS = 3
"""Times a chunk lost with a dying worker is played again on a fresh pool; one more loss
ends the run (a chunk that kills its worker every time would otherwise loop forever)."""

IN_FLIGHT_PER_WORKER = 2
"""Chunks submitted per worker: enough to keep every worker busy between two results,
few enough that a stopped run (SPRT) wastes little."""

AHEAD_PER_WORKER = 4
"""How far (in chunks per worker) submission may run ahead of the first chunk not yet
handed on: bounds the finished chunks held back for plan order behind a slow one."""

_WORKER: dict[str, Any] = {}


class WorkerLostError(RuntimeError):
    """A chunk was lost with a dying worker process more than :data:`MAX_RESTARTS` times.

    The message is one line naming the chunk(s) and what to do; the chunks handed on before
    it are written, so rerunning the same command resumes.
    """


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


def _chunk_list(chunks: Sequence[int]) -> str:
    return f"chunk {chunks[0]}" if len(chunks) == 1 else f"chunks {', '.join(map(str, chunks))}"


class WorkerPool:
    """Worker processes playing chunks; a pool broken by a dying worker is replaced.

    Args:
        workers: How many processes.
        play: Plays one chunk in a worker (handed over at the workers' start, so a forked
            worker runs the very function the main process would).
        rules: The rules of every game.
        schedule: The tournament's schedule.
        entrants: The participants.
        say: Where to report a restart (one line); ``None``: say nothing.
    """

    def __init__(
        self,
        workers: int,
        play: PlayChunk,
        rules: Rules,
        schedule: Schedule,
        entrants: Sequence[Entrant],
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.workers = workers
        self.say = say
        self.restarts = 0
        """Times the pool was replaced after a worker died."""
        self._initargs = (play, rules, schedule, list(entrants), os.getpid())
        self._pool: ProcessPoolExecutor | None = None
        self._idle_losses = 0

    def start(self) -> None:
        """Start the processes now (before any other thread of the main process starts).

        Raises:
            WorkerLostError: the processes died as they started.
        """
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=self._initargs,
        )
        try:
            self._pool.submit(_ready).result()  # forks the workers now
        except BrokenProcessPool:
            self.close()
            raise WorkerLostError(
                "the worker processes died as they started (killed, or out of memory: see "
                "dmesg); rerun the same command to resume, with fewer --workers if memory is "
                "short"
            ) from None

    def close(self) -> None:
        """Stop the processes (chunks not started are cancelled)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(
        self,
        todo: list[tuple[int, list[Unit]]],
        stopped: Callable[[], bool],
        handle: Callable[[ChunkResult], None],
    ) -> None:
        """Play chunks, at most two per worker in flight, until done or stopped.

        Args:
            todo: ``(chunk, units)`` still to play, in order.
            stopped: Whether to submit no more chunks (the SPRT decided).
            handle: Called with each finished chunk's result, in the order of ``todo``.

        Raises:
            WorkerLostError: a chunk was lost with its worker more than
                :data:`MAX_RESTARTS` times.
        """
        if self._pool is None:
            self.start()
        order = ChunkOrder(len(todo), handle)
        queue = list(range(len(todo)))  # indices into todo still to submit, in order
        in_flight: dict[Future[ChunkResult], int] = {}
        losses = [0] * len(todo)
        limit = IN_FLIGHT_PER_WORKER * self.workers
        ahead = AHEAD_PER_WORKER * self.workers
        try:
            while True:
                broken = False
                while (
                    queue
                    and len(in_flight) < limit
                    and queue[0] - order.delivered < ahead
                    and not stopped()
                ):
                    index = queue[0]
                    # A chunk lost before plays alone, so that a loss is its own for sure.
                    if in_flight and (losses[index] or any(losses[i] for i in in_flight.values())):
                        break
                    try:
                        future = self._submit(*todo[index])
                    except BrokenProcessPool:
                        broken = True
                        break
                    queue.pop(0)
                    in_flight[future] = index
                if not in_flight and not broken:
                    break
                if not broken:
                    finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in sorted(finished, key=lambda f: in_flight[f]):
                        if isinstance(future.exception(), BrokenProcessPool):
                            broken = True
                            continue
                        order.put(in_flight.pop(future), future.result())
                if broken:
                    lost = self._collect(in_flight, order)
                    in_flight.clear()
                    self._restart(todo, lost, losses)
                    queue = sorted({*queue, *lost})
        except BaseException:
            for future in in_flight:
                future.cancel()
            raise

    def _submit(self, chunk: int, units: list[Unit]) -> Future[ChunkResult]:
        assert self._pool is not None
        return self._pool.submit(_worker_chunk, chunk, units)

    @staticmethod
    def _collect(in_flight: dict[Future[ChunkResult], int], order: ChunkOrder) -> list[int]:
        """After a break: keep what finished, return the indices of the chunks lost."""
        wait(in_flight)  # a broken pool fails every pending chunk at once
        lost = []
        for future, index in sorted(in_flight.items(), key=lambda item: item[1]):
            error = future.exception()
            if error is None:
                order.put(index, future.result())
            elif isinstance(error, BrokenProcessPool):
                lost.append(index)
            else:
                raise error
        return lost

    def _restart(
        self, todo: list[tuple[int, list[Unit]]], lost: list[int], losses: list[int]
    ) -> None:
        """Replace the broken pool, or give up on a chunk lost too often."""
        for index in lost:
            losses[index] += 1
        if not lost:  # died between chunks: charged to the run, not to a chunk
            self._idle_losses += 1
        chunks = [todo[i][0] for i in lost]
        worst = [todo[i][0] for i in lost if losses[i] > MAX_RESTARTS]
        if self._idle_losses > MAX_RESTARTS:
            raise WorkerLostError(
                f"worker processes died {self._idle_losses} times between chunks (killed, or "
                "out of memory: see dmesg); the chunks finished so far are kept: rerun the "
                "same command to resume, with fewer --workers if memory is short"
            )
        if worst:
            raise WorkerLostError(
                f"{_chunk_list(worst)} lost {MAX_RESTARTS + 1} times with a dying worker "
                "process (killed, or out of memory: see dmesg); the chunks finished before it "
                "are kept: rerun the same command to resume, with fewer --workers if memory "
                "is short"
            )
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self.restarts += 1
        if self.say is not None:
            if chunks:
                self.say(
                    f"a worker process died; {_chunk_list(chunks)} lost with it played again "
                    f"on a fresh pool (restart {self.restarts})"
                )
            else:
                self.say(
                    f"a worker process died between chunks; a fresh pool goes on (restart "
                    f"{self.restarts})"
                )
        self.start()


@contextmanager
def worker_pool(
    workers: int,
    play: PlayChunk,
    rules: Rules,
    schedule: Schedule,
    entrants: Sequence[Entrant],
    enabled: bool,
    say: Callable[[str], None] | None = None,
) -> Iterator[WorkerPool | None]:
    """The worker pool, its processes started before any other thread (the progress bar's).

    Args:
        workers: How many processes.
        play: Plays one chunk in a worker.
        rules: The rules of every game.
        schedule: The tournament's schedule.
        entrants: The participants.
        enabled: Whether to start a pool at all (``None`` is yielded when not).
        say: Where to report a restart after a worker died.
    """
    if not enabled:
        yield None
        return
    pool = WorkerPool(workers, play, rules, schedule, entrants, say)
    try:
        pool.start()
        yield pool
    finally:
        pool.close()


TASK_RETRIES = 3
"""Times Ray reruns a chunk whose worker process died (Ray's default, stated here)."""

IN_FLIGHT_PER_CPU = 2
"""Chunks submitted per cluster CPU: enough to keep every worker busy between two results,
few enough that a stopped run (SPRT) wastes little."""


@dataclass(frozen=True)
class _ShippedAgent:
    """Builds a file participant on a worker: the files are written there, then loaded."""

    spec: ParticipantSpec
    rules: Rules
    files: AgentFiles

    def __call__(self, seed: int) -> Policy:
        local = dataclasses.replace(self.spec, path=str(self.files.materialise()))
        return SpecFactory(local, self.rules)(seed)


def shipped_entrants(entrants: Sequence[Entrant]) -> list[Entrant]:
    """The entrants as they travel to Ray workers: bots by name, agents as file bytes.

    Raises:
        ConfigError: for an entrant built in code (an override), which cannot travel.
    """
    out = []
    for entrant in entrants:
        factory = entrant.factory
        if not isinstance(factory, SpecFactory):
            raise ConfigError(
                f"participant {entrant.name!r} is a policy factory given in code; the ray "
                "backend sends agents to its workers as files or bot names: export it "
                "(python -m unolab.train.export) or use the local backend"
            )
        if factory.spec.path is not None and spec_suffix(factory.spec.path):
            raise ConfigError(
                f"participant {entrant.name!r} is a language model ({factory.spec.path}): play "
                "it on the local backend, where its decisions are recorded in the run folder "
                "(a resumed run asks the model nothing twice) and each chunk already sends its "
                "requests concurrently"
            )
        if factory.spec.path is not None:
            files = AgentFiles.read(factory.spec.path)
            factory = _ShippedAgent(factory.spec, factory.rules, files)
        out.append(dataclasses.replace(entrant, factory=factory))
    return out


@contextmanager
def ray_cluster(config: TournamentConfig) -> Iterator[Any]:
    """The cluster of ``config.address`` (a local Ray of ``workers`` CPUs when unset)."""
    with connect(config.address, num_cpus=config.workers) as ray:
        yield ray


def _play_task(
    play: PlayChunk,
    rules: Rules,
    schedule: Schedule,
    entrants: Sequence[Entrant],
    chunk: int,
    units: list[Unit],
) -> Any:
    """One chunk on a Ray worker (one torch thread: the workers share the cores)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return play(rules, schedule, entrants, chunk, units)


def run_chunks_on_ray(
    ray: Any,
    play: PlayChunk,
    rules: Rules,
    schedule: Schedule,
    entrants: Sequence[Entrant],
    todo: list[tuple[int, list[Unit]]],
    stopped: Callable[[], bool],
    handle: Callable[[Any], None],
) -> None:
    """Play ``todo`` as Ray tasks; hand each finished chunk to ``handle`` as it arrives.

    Args:
        ray: The ``ray`` module, connected.
        play: Plays one chunk (:func:`unolab.tournament.chunks.play_chunk`).
        rules: The rules of every game.
        schedule: The tournament's schedule.
        entrants: The participants, as :func:`shipped_entrants` made them travel.
        todo: ``(chunk, units)`` still to play, in order.
        stopped: Whether to submit no more chunks (the SPRT decided).
        handle: Called with each finished chunk's result, in the driver, in the order of
            ``todo`` (a chunk that finishes early waits for those before it).
    """
    task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_play_task)
    shared = [play, ray.put(rules), ray.put(schedule), ray.put(list(entrants))]
    limit = IN_FLIGHT_PER_CPU * cluster_cpus(ray)
    order = ChunkOrder(len(todo), handle)  # the log in plan order, as the local backend's
    submitted = 0
    in_flight: dict[Any, int] = {}
    try:
        while True:
            while (
                submitted < len(todo)
                and len(in_flight) < limit
                and submitted - order.delivered < 2 * limit
                and not stopped()
            ):
                chunk, units = todo[submitted]
                in_flight[task.remote(*shared, chunk, units)] = submitted
                submitted += 1
            if not in_flight:
                break
            finished, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in sorted(finished, key=lambda r: in_flight[r]):
                index = in_flight.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as err:
                    message = " ".join(str(err).split())[:400]
                    raise RayBackendError(
                        f"chunk {todo[index][0]} failed on Ray ({type(err).__name__}: "
                        f"{message}); the chunks finished so far are kept: rerun the command "
                        "to resume"
                    ) from None
                order.put(index, result)
    except BaseException:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        raise
