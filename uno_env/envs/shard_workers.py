"""The worker side of :class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv`: what runs
inside each worker process, and the parent's handle on those processes.

A worker (:func:`worker_main`, started with a :class:`WorkerSpec`) builds its shards, each a
:class:`~uno_env.envs.vec_env.UnoVecEnv`, then waits on its semaphore: each release is one
command read from the shared block (:class:`SharedLayout`): :data:`STEP` plays the actions
in the block and writes back the observations, masks, rewards and ends of hands; :data:`CALL`
reads a message from its pipe (a reset with new seeds, a function run on the opponents) and
answers on it; :data:`EXIT` leaves. It then writes :data:`OK` or :data:`FAILED` as its
status (an error's type and message go on the pipe) and releases its own semaphore. A worker
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
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.rules import Rules

__all__ = [
    "CALL",
    "EXIT",
    "FAILED",
    "OK",
    "STEP",
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


def _build_shards(spec: WorkerSpec) -> tuple[list[Any], list[object]]:
    envs, opponents = [], []
    for (start, end), seed in zip(spec.shards, spec.seeds, strict=True):
        # Each shard its own opponents: their random draws must not depend on which shards
        # share a worker.
        recipe: Any = spec.opponents
        opp = recipe() if spec.build_opponents else copy.deepcopy(recipe)
        opponents.append(opp)
        envs.append(
            UnoVecEnv(
                end - start,
                spec.rules,
                opponents=opp,
                seed=seed,
                learner_seat=spec.learner_seat,
                reward=spec.reward,
            )
        )
    return envs, opponents


def _serve(spec: WorkerSpec, shm: SharedMemory, go: Any, done: Any, conn: Any) -> None:
    try:
        envs, opponents = _build_shards(spec)
    except BaseException as err:
        conn.send(("error", _error_payload(err)))
        return
    conn.send(("ready", None))
    views = spec.layout.views(shm.buf)
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
                    _step_shards(spec, envs, views)
                else:
                    reply = _command(spec, envs, opponents, views, conn.recv())
                    conn.send(("ok", reply))
                views["status"][me] = OK
            except Exception as err:
                views["status"][me] = FAILED
                conn.send(("error", _error_payload(err)))
            done.release()
    finally:
        del views  # the block's buffer must have no view left when it is closed


def _write(
    views: dict[str, npt.NDArray[Any]], start: int, end: int, obs: npt.NDArray[np.float32]
) -> None:
    views["obs"][int(views["buffer"][0]), start:end] = obs


def _step_shards(spec: WorkerSpec, envs: list[Any], views: dict[str, npt.NDArray[Any]]) -> None:
    for env, (start, end) in zip(envs, spec.shards, strict=True):
        obs, rewards, dones, infos = env.step(views["actions"][start:end])
        _write(views, start, end, obs)
        views["rewards"][start:end] = rewards
        views["dones"][start:end] = dones
        views["finished"][start:end] = False
        views["masks"][start:end] = env.action_masks()
        for row in np.flatnonzero(dones).tolist():
            info = infos[row]
            views["finished"][start + row] = True
            views["terminal"][start + row] = info["terminal_observation"]
            views["truncated"][start + row] = bool(info["TimeLimit.truncated"])


def _command(
    spec: WorkerSpec,
    envs: list[Any],
    opponents: list[object],
    views: dict[str, npt.NDArray[Any]],
    message: tuple[Any, ...],
) -> object:
    what = message[0]
    if what == "reset":
        seeds = message[1]
        for i, (env, (start, end)) in enumerate(zip(envs, spec.shards, strict=True)):
            if seeds is not None:
                env.seed(seeds[spec.first_shard + i])
            _write(views, start, end, env.reset())
            views["masks"][start:end] = env.action_masks()
        return None
    if what == "opponents":
        fn, args = message[1], message[2]
        return [fn(opp, *args) for opp in opponents]
    raise ValueError(f"unknown command {what!r}")


class Workers:
    """The processes, their signals and pipes, and the shared block: what ``close`` frees.

    Kept apart from the env so that :func:`weakref.finalize` can free them at exit without
    holding the env alive.
    """

    def __init__(self, shm: SharedMemory) -> None:
        self.shm = shm
        self.processes: list[Any] = []
        self.go: list[Any] = []
        self.done: list[Any] = []
        self.conns: list[Any] = []
        self.views: dict[str, npt.NDArray[Any]] | None = None
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
        self.go.append(go)
        self.done.append(done)
        self.conns.append(parent_end)
        process.start()
        child_end.close()
        self.processes.append(process)

    def shutdown(self) -> None:
        """Tell each worker to exit, wait briefly, then end the ones still running; free
        the block. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        if self.views is not None:
            self.views["command"][:] = EXIT
            for go in self.go:
                go.release()
        deadline = time.monotonic() + 5.0
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(2.0)
            if process.is_alive():
                process.kill()
                process.join(2.0)
        for conn in self.conns:
            conn.close()
        self.views = None
        with contextlib.suppress(BufferError):  # observations still held as views
            self.shm.close()  # (then the memory goes with the last of them)
        with contextlib.suppress(FileNotFoundError):
            self.shm.unlink()
