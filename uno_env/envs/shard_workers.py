"""The worker side of :class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv`: the shards a
worker steps, what runs inside each worker process, and the parent's handle on those processes.

A :class:`ShardGroup` (built from a :class:`WorkerSpec`) holds one worker's shards, each a
:class:`~uno_env.envs.learner_tables.LearnerTables` of its own, and answers the commands of
the shared block (:class:`SharedLayout`): :data:`STEP` plays the actions in the block and
writes back the observations, masks, rewards, ends of hands and final observations;
:data:`CALL` answers a message (a reset with new seeds, a function run on the opponents). The
parent steps the first group itself; each other group lives in a worker process
(:func:`worker_main`), which waits on its semaphore: each release is one command read from
the block (:data:`EXIT` leaves). It then writes :data:`OK` or :data:`FAILED` as its status
(an error's type and message go on its pipe) and releases its own semaphore. A worker
ignores Ctrl-C (the parent handles it) and leaves when the parent is gone.

:class:`Workers` holds the processes, their semaphores and pipes and the shared block: what
the env's ``close()`` (or exit) frees.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import signal
import time
from dataclasses import dataclass, field
from multiprocessing.shared_memory import SharedMemory
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from uno_env.envs.common import RewardFn, action_space
from uno_env.envs.learner_tables import LearnerTables
from uno_env.rules import Rules

__all__ = [
    "CALL",
    "EXIT",
    "FAILED",
    "OK",
    "STEP",
    "ShardGroup",
    "SharedLayout",
    "WorkerSpec",
    "Workers",
    "worker_main",
]

_NUM_ACTIONS = int(action_space().n)

STEP, CALL, EXIT = 1, 2, 3
"""The commands a worker reads from the shared block when its semaphore is released: play
the actions, answer the message on its pipe, leave."""

OK, FAILED = 0, 1
"""A worker's status after a command (an error's report is on its pipe)."""


@dataclass(frozen=True)
class SharedLayout:
    """Where each array lies in the shared block (byte offsets), for ``n`` tables of
    observations of size ``dim`` and ``workers`` workers."""

    n: int
    dim: int
    workers: int
    offsets: dict[str, int] = field(default_factory=dict)
    size: int = 0

    @staticmethod
    def build(n: int, dim: int, workers: int) -> SharedLayout:
        """The layout of a block for ``n`` tables, observations of size ``dim``, ``workers``
        workers: each array on its own cache lines."""
        offsets: dict[str, int] = {}
        size = 0
        for name, shape, dtype in _fields(n, dim, workers):
            offsets[name] = size
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            size += (nbytes + 63) // 64 * 64  # each array on its own cache lines
        return SharedLayout(n, dim, workers, offsets, max(size, 64))

    def views(self, buf: memoryview | None) -> dict[str, npt.NDArray[Any]]:
        """Each array of the block, by name, as a NumPy view of ``buf``.

        Raises:
            ValueError: if the block is closed (``buf`` is None).
        """
        if buf is None:
            raise ValueError("the shared block is closed")
        return {
            name: np.ndarray(shape, dtype=dtype, buffer=buf, offset=self.offsets[name])
            for name, shape, dtype in _fields(self.n, self.dim, self.workers)
        }


def _fields(n: int, dim: int, workers: int) -> list[tuple[str, tuple[int, ...], Any]]:
    return [
        ("obs", (2, n, dim), np.float32),
        ("terminal", (n, dim), np.float32),
        ("masks", (n, _NUM_ACTIONS), np.bool_),
        ("actions", (n,), np.int64),
        ("rewards", (n,), np.float32),
        ("dones", (n,), np.bool_),
        ("truncated", (n,), np.bool_),
        ("finished", (n,), np.bool_),
        ("command", (workers,), np.int32),
        ("status", (workers,), np.int32),
        ("buffer", (1,), np.int32),
    ]


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build its shards (all picklable).

    Attributes:
        index: The worker's number (its slot in the block's ``command`` and ``status``).
        first_shard: The global index of its first shard.
        shm_name: The shared block's name.
        layout: Where the arrays lie in the block.
        shards: Its shards' ``(start, end)`` table ranges, global.
        seeds: Its shards' seeds.
        rules: The rules of every game.
        opponents: The opponents spec each shard copies, or a recipe each shard calls.
        build_opponents: Whether ``opponents`` is a recipe to call (an
            :class:`~uno_env.envs.shared_vec_env.OpponentsRecipe`) rather than a spec to copy.
        learner_seat: A fixed seat, or ``"random"``.
        reward: The reward scheme or function.
    """

    index: int
    first_shard: int
    shm_name: str
    layout: SharedLayout
    shards: tuple[tuple[int, int], ...]
    seeds: tuple[int, ...]
    rules: Rules
    opponents: object
    build_opponents: bool
    learner_seat: int | Literal["random"]
    reward: str | RewardFn


def _error_payload(err: BaseException) -> tuple[type[BaseException], str]:
    return type(err), str(err)


def worker_main(spec: WorkerSpec, go: Any, done: Any, conn: Any) -> None:
    """A worker: build the shards, then serve steps and commands until told to exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        shm = SharedMemory(name=spec.shm_name)
    except BaseException as err:
        conn.send(("error", _error_payload(err)))
        return
    try:
        _serve(spec, shm, go, done, conn)
    finally:
        shm.close()


class ShardGroup:
    """One worker's shards: built from its spec, stepped and commanded through the block.

    Args:
        spec: The worker's spec.
        views: The shared block's arrays (:meth:`SharedLayout.views`).

    Raises:
        Whatever building the shards raises (a bad seat, reward or opponent).
    """

    def __init__(self, spec: WorkerSpec, views: dict[str, npt.NDArray[Any]]) -> None:
        self.spec = spec
        self.views = views
        self.tables: list[LearnerTables] = []
        self.opponents: list[object] = []
        for (start, end), seed in zip(spec.shards, spec.seeds, strict=True):
            # Each shard its own opponents: their random draws must not depend on which
            # shards share a worker.
            recipe: Any = spec.opponents
            opponents = recipe() if spec.build_opponents else copy.deepcopy(recipe)
            self.opponents.append(opponents)
            self.tables.append(
                LearnerTables(
                    spec.rules,
                    end - start,
                    opponents,
                    learner_seat=spec.learner_seat,
                    reward=spec.reward,
                    autoreset=True,
                    seed=seed,
                )
            )

    def step(self, observations: npt.NDArray[np.float32] | None = None) -> None:
        """Play the block's actions in every shard and write back what the learners see.

        Args:
            observations: Where the learners' observations go, (num_envs, dim) float32, by
                global table (the parent's own result); None: the block's current buffer.
        """
        views = self.views
        if observations is None:
            observations = views["obs"][int(views["buffer"][0])]
        for tables, (start, end) in zip(self.tables, self.spec.shards, strict=True):
            # Encoded where the parent reads them: no copy.
            into = (observations[start:end], views["masks"][start:end])
            out = tables.step(views["actions"][start:end], out=into)
            views["rewards"][start:end] = out.rewards
            np.logical_or(out.terminated, out.truncated, out=views["dones"][start:end])
            views["finished"][start:end] = False
            if out.finished.size:
                rows = start + out.finished
                views["finished"][rows] = True
                views["terminal"][rows] = out.terminal_observations
                views["truncated"][rows] = out.truncated[out.finished]

    def command(self, message: tuple[Any, ...]) -> object:
        """Answer a rare command: ``("reset", seeds or None)`` deals new hands (restarting
        each shard's key schedule from its seed of ``seeds``, indexed by global shard);
        ``("opponents", fn, args)`` returns ``fn(opponents, *args)`` for each shard.

        Raises:
            ValueError: for an unknown command.
        """
        views = self.views
        what = message[0]
        if what == "reset":
            seeds = message[1]
            buffer = int(views["buffer"][0])
            for i, (tables, (start, end)) in enumerate(
                zip(self.tables, self.spec.shards, strict=True)
            ):
                if seeds is not None:
                    tables.seed(seeds[self.spec.first_shard + i])
                views["obs"][buffer, start:end] = tables.reset()
                views["masks"][start:end] = tables.action_masks()
            return None
        if what == "opponents":
            fn, args = message[1], message[2]
            return [fn(opponents, *args) for opponents in self.opponents]
        raise ValueError(f"unknown command {what!r}")


def _serve(spec: WorkerSpec, shm: SharedMemory, go: Any, done: Any, conn: Any) -> None:
    views = spec.layout.views(shm.buf)
    try:
        group = ShardGroup(spec, views)
    except BaseException as err:
        del views
        conn.send(("error", _error_payload(err)))
        return
    conn.send(("ready", None))
    parent = multiprocessing.parent_process()
    me = spec.index
    try:
        while True:
            if not go.acquire(timeout=1.0):
                if parent is not None and not parent.is_alive():
                    return
                continue
            command = int(views["command"][me])
            if command == EXIT:
                return
            try:
                if command == STEP:
                    group.step()
                else:
                    conn.send(("ok", group.command(conn.recv())))
                views["status"][me] = OK
            except Exception as err:
                views["status"][me] = FAILED
                conn.send(("error", _error_payload(err)))
            done.release()
    finally:
        del views, group  # the block's buffer must have no view left when it is closed


class Workers:
    """The processes, their signals and pipes, and the shared block: what ``close`` frees.

    Kept apart from the env so that :func:`weakref.finalize` can free them at exit without
    holding the env alive.
    """

    def __init__(self, shm: SharedMemory) -> None:
        self.shm = shm
        # By worker index: the parent steps worker 0's shards itself.
        self.processes: dict[int, Any] = {}
        self.go: dict[int, Any] = {}
        self.done: dict[int, Any] = {}
        self.conns: dict[int, Any] = {}
        self.views: dict[str, npt.NDArray[Any]] | None = None
        self.local: ShardGroup | None = None
        self.closed = False

    def start(self, ctx: Any, spec: WorkerSpec) -> None:
        """Start the worker of ``spec`` in ``ctx`` (a start method's context), with its two
        semaphores and its pipe; it reports on the pipe once its shards are built."""
        parent_end, child_end = ctx.Pipe()
        go, done = ctx.Semaphore(0), ctx.Semaphore(0)
        process = ctx.Process(
            target=worker_main,
            args=(spec, go, done, child_end),
            name=f"uno-shards-{spec.index}",
            daemon=True,
        )
        self.go[spec.index] = go
        self.done[spec.index] = done
        self.conns[spec.index] = parent_end
        process.start()
        child_end.close()
        self.processes[spec.index] = process

    def shutdown(self) -> None:
        """Tell each worker to exit, wait briefly, then end the ones still running; free
        the block. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        if self.views is not None:
            self.views["command"][:] = EXIT
            for go in self.go.values():
                go.release()
        deadline = time.monotonic() + 5.0
        for process in self.processes.values():
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes.values():
            if process.is_alive():
                process.terminate()
                process.join(2.0)
            if process.is_alive():
                process.kill()
                process.join(2.0)
        for conn in self.conns.values():
            conn.close()
        self.views = self.local = None
        with contextlib.suppress(BufferError):  # observations still held as views
            self.shm.close()  # (then the memory goes with the last of them)
        with contextlib.suppress(FileNotFoundError):
            self.shm.unlink()
