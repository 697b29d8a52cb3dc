"""``ShardedUnoVecEnv``: the tables of a :class:`~uno_env.envs.vec_env.UnoVecEnv` spread over
your process and worker processes, one shared-memory block between them.

The ``num_envs`` tables are cut into ``num_shards`` contiguous shards (as even as possible),
and the shards into ``num_workers`` contiguous groups, one per worker. Worker 0 is the
parent process itself, which steps its group while the others do theirs (so ``num_workers``
counts the cores a step uses, and 2 workers start one more process); each other worker is a
process of its own. Each shard is the tables of a
:class:`~uno_env.envs.vec_env.UnoVecEnv` of its own, seeded from the env's seed and the
global index of its first table (:func:`shard_seed`; a single shard takes the seed itself,
so one shard plays exactly the hands of ``UnoVecEnv`` with that seed).

**What decides the games.** The seed, the actions and the shard layout, never the worker
count: the same ``num_shards`` gives the same trajectories with 1, 2 or 3 workers. The shard
layout matters because an opponent policy draws its random numbers for the whole batch of
its shard, and a shard's deals follow its own key schedule. ``num_shards`` defaults to
``num_workers`` (each worker then steps one large batch, the fastest layout); give it
explicitly to compare runs across worker counts.

**How they talk.** The learners' actions, the observations (two buffers, used in turn), the
legal-action masks, the rewards, the ends of hands and the final observations of finished
hands live in one :class:`multiprocessing.shared_memory.SharedMemory` block seen through
NumPy views. A step writes the actions, releases one semaphore per worker process, steps
the parent's own group, and waits on one semaphore per worker process: no pipe carries a
step. Each worker process also has a pipe for the rare commands (a reset with new seeds, a
change of the opponents, an error's report). What a worker runs, and the parent's handle on
the processes, is :mod:`uno_env.envs.shard_workers`.

**Opponents** are built inside each worker (yours too): give them as something that pickles (a
:class:`~uno_env.policy.PolicyFactory` of a bot, ``None`` for the random bot, a pool of
factories) or as an :class:`OpponentsRecipe`, a picklable function and its arguments (names,
paths) that builds them there. Each shard builds its own. :meth:`ShardedUnoVecEnv.update_opponents`
runs a picklable function on every shard's opponents (a league refilling a snapshot slot).

**Failures.** A worker that raises (an opponent's error) stops the env until ``reset()``,
and its error is raised in the parent once (the first worker's, in worker order), with its
type when it can be rebuilt (the parent's own group raises the error itself). A worker
that dies, or a wait longer than ``timeout`` seconds, closes the env and raises
:class:`WorkerError` naming the worker and its tables. Workers ignore Ctrl-C (the parent
handles it) and leave when the parent is gone. ``close()`` (also run at exit) stops them
and frees the block. Everything works under the ``spawn`` start method (the default).
"""

from __future__ import annotations

import multiprocessing
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from uno_env.core import IllegalActionError
from uno_env.envs.common import RewardFn, action_space, checked_seed, observation_space
from uno_env.envs.opponents import OpponentsSpec
from uno_env.envs.shard_workers import (
    CALL,
    FAILED,
    OK,
    STEP,
    ShardGroup,
    SharedLayout,
    Workers,
    WorkerSpec,
)
from uno_env.envs.table_inputs import ResetNeededError, check_num_games
from uno_env.envs.vec_env import MaskedVecEnv
from uno_env.files import shown
from uno_env.rules import Rules, load_rules

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_WORKERS",
    "OpponentsRecipe",
    "ShardedUnoVecEnv",
    "WorkerError",
    "shard_bounds",
    "shard_seed",
]

MAX_WORKERS = 256
"""Most worker processes of one env: far more than any machine's cores."""

DEFAULT_TIMEOUT = 600.0
"""Seconds a step, reset or command may take before the env gives up on its workers."""

_POLL = 0.2
"""Seconds between two looks at the workers' health while waiting for them."""


class WorkerError(RuntimeError):
    """A worker process died, did not answer in time, or could not start."""


@dataclass(frozen=True)
class OpponentsRecipe:
    """Opponents built inside each worker: ``build(*args)`` returns an opponents spec.

    ``build`` must be a module-level function and ``args`` plain data (names, paths,
    numbers, rules), so that both pickle under the ``spawn`` start method. It is called
    once per shard.

    Attributes:
        build: The function that builds the opponents.
        args: Its arguments.
    """

    build: Callable[..., OpponentsSpec]
    args: tuple[Any, ...] = ()

    def __call__(self) -> OpponentsSpec:
        """Build the opponents."""
        return self.build(*self.args)


def shard_bounds(count: int, parts: int) -> list[tuple[int, int]]:
    """Cut ``range(count)`` into ``parts`` contiguous ``(start, end)`` ranges, as even as
    possible (the first ``count % parts`` are one longer)."""
    base, extra = divmod(count, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def shard_seed(seed: int, first_table: int) -> int:
    """The seed of the shard whose first table has global index ``first_table``.

    The shard of table 0 takes ``seed`` itself (so a single shard is ``UnoVecEnv(seed)``);
    the others a seed derived from both numbers, in ``0 <= s < 2**63``.
    """
    if first_table == 0:
        return seed
    word = np.random.SeedSequence([seed, first_table]).generate_state(1, np.uint64)[0]
    return int(word) >> 1


def _rebuilt(payload: tuple[type[BaseException], str], where: str) -> BaseException:
    """The worker's error as the parent raises it: its own type when that takes a message."""
    kind, message = payload
    try:
        err = kind(message)
        if str(err) == message:
            return err
    except Exception:  # an exception class with other arguments: say what it was
        pass
    return WorkerError(f"{where}: {kind.__name__}: {message}")


class ShardedUnoVecEnv(MaskedVecEnv):
    """``num_envs`` UNO games stepped by ``num_workers`` workers (the parent process among
    them), one learner seat in each.

    Takes the arguments of :class:`~uno_env.envs.vec_env.UnoVecEnv` (opponents in a form
    that pickles, or an :class:`OpponentsRecipe`; see the module docstring) and:

    Args:
        num_envs: Number of games in all.
        rules: Preset name, YAML path, mapping or Rules (``None``: official).
        opponents: A picklable opponents spec or an :class:`OpponentsRecipe`.
        seed: Seed of every shard's key schedule (``None``: fresh entropy).
        learner_seat: A fixed seat, or ``"random"``.
        reward: ``"win_loss"`` (default), ``"points"`` or a picklable reward function.
        num_workers: Workers, ``1..min(num_envs, MAX_WORKERS)``: the parent process and
            ``num_workers - 1`` worker processes.
        num_shards: Shards of tables (``None``: ``num_workers``); at least ``num_workers``,
            at most ``num_envs``. The games depend on it, not on ``num_workers``.
        shared_observations: Return the observations as views of the shared block instead
            of copies: a step's observations then stay valid until the step after next (the
            two buffers are used in turn), which is all Stable-Baselines3's learning loops
            keep. Saves a copy of every observation in the parent.
        start_method: ``"spawn"`` (default), ``"forkserver"`` or ``"fork"``.
        timeout: Seconds a step, reset or command may take (:data:`DEFAULT_TIMEOUT`); a
            worker's start may take as long (the engine's machine code loads there).

    Raises:
        ValueError: for a bad size, worker or shard count, seed or start method, naming it.
        WorkerError: if a worker cannot start; an error of building the shards (a bad
            seat, reward or opponent) is raised as it was raised in the worker.
    """

    def __init__(
        self,
        num_envs: int | np.integer,
        rules: str | Path | Mapping[str, Any] | Rules | None = None,
        opponents: OpponentsSpec | OpponentsRecipe = None,
        seed: int | np.integer | None = None,
        *,
        learner_seat: int | np.integer | Literal["random"] = "random",
        reward: str | RewardFn = "win_loss",
        num_workers: int = 2,
        num_shards: int | None = None,
        shared_observations: bool = False,
        start_method: str = "spawn",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        n = check_num_games(num_envs)
        workers = _count("num_workers", num_workers, 1, min(n, MAX_WORKERS))
        shards = workers if num_shards is None else _count("num_shards", num_shards, workers, n)
        if start_method not in multiprocessing.get_all_start_methods():
            raise ValueError(
                f"start_method: {shown(start_method)} is not one of "
                f"{multiprocessing.get_all_start_methods()}"
            )
        if not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout: expected a number of seconds > 0, got {shown(timeout)}")
        self.rules = load_rules(rules)
        self.num_workers = workers
        self.num_shards = shards
        self.shared_observations = bool(shared_observations)
        self.timeout = float(timeout)
        self.render_mode = None
        obs_space = observation_space(self.rules)
        self._dim = int(obs_space.shape[0])
        self._seed = self.seed_or_entropy(checked_seed(seed))
        self.shards = shard_bounds(n, shards)
        self._remote = range(1, workers)  # the workers that are processes
        self._mask_rows = np.arange(n, dtype=np.int64) * int(action_space().n)
        groups = shard_bounds(shards, workers)
        self.worker_tables = [(self.shards[a][0], self.shards[b - 1][1]) for a, b in groups]
        layout = SharedLayout.build(n, self._dim, workers)
        self._workers = Workers(SharedMemory(create=True, size=layout.size))
        self._finalizer = weakref.finalize(self, self._workers.shutdown)
        self._views = layout.views(self._workers.shm.buf)
        self._workers.views = self._views
        self._actions = None
        self._buffer = 0
        self._stopped: str | None = "not dealt yet"
        self._owed: set[int] = set()  # workers whose answer an interrupted wait left unread
        super().__init__(n, obs_space, action_space())
        try:
            self._start(layout, groups, opponents, learner_seat, reward, start_method)
        except BaseException:
            self.close()
            raise

    def _shard_seeds(self, seed: int) -> tuple[int, ...]:
        return tuple(shard_seed(seed, start) for start, _ in self.shards)

    def _start(
        self,
        layout: SharedLayout,
        groups: list[tuple[int, int]],
        opponents: object,
        learner_seat: int | np.integer | Literal["random"],
        reward: str | RewardFn,
        start_method: str,
    ) -> None:
        ctx = multiprocessing.get_context(start_method)
        seeds = self._shard_seeds(self._seed)
        seat: int | Literal["random"] = (
            int(learner_seat) if isinstance(learner_seat, (int, np.integer)) else learner_seat
        )
        local: WorkerSpec | None = None
        for index, (a, b) in enumerate(groups):
            spec = WorkerSpec(
                index=index,
                first_shard=a,
                shm_name=self._workers.shm.name,
                layout=layout,
                shards=tuple(self.shards[a:b]),
                seeds=seeds[a:b],
                rules=self.rules,
                opponents=opponents,
                build_opponents=isinstance(opponents, OpponentsRecipe),
                learner_seat=seat,
                reward=reward,
            )
            if index == 0:
                local = spec
            else:
                self._workers.start(ctx, spec)
        assert local is not None
        # Built while the worker processes start: its errors are raised here as they are.
        self._workers.local = ShardGroup(local, self._views)
        for index in self._remote:
            self._receive(index, "starting")

    # ------------------------------------------------------------------ talking to workers

    def _where(self, index: int) -> str:
        start, end = self.worker_tables[index]
        return f"worker {index} (tables {start}..{end - 1})"

    def _fail(self, message: str) -> WorkerError:
        self.close()
        return WorkerError(message + "; the env is closed: build a new one")

    def _check_alive(self, index: int, doing: str) -> None:
        process = self._workers.processes[index]
        if not process.is_alive():
            raise self._fail(
                f"{self._where(index)} exited with code {process.exitcode} while {doing}"
            )

    def _receive(self, index: int, doing: str) -> object:
        """A worker's answer on its pipe (an error is raised here, rebuilt)."""
        conn = self._workers.conns[index]
        deadline = time.monotonic() + self.timeout
        while not conn.poll(_POLL):
            self._check_alive(index, doing)
            if time.monotonic() > deadline:
                raise self._fail(f"{self._where(index)} gave no answer in {self.timeout:g} s")
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            raise self._fail(f"{self._where(index)} closed its pipe while {doing}") from None
        if kind == "error":
            err = _rebuilt(payload, self._where(index))
            if doing == "starting":
                self.close()
            raise err
        return payload

    def _wait(self, indices: Iterable[int], doing: str) -> None:
        """Wait until each worker has released its semaphore (it finished the command)."""
        deadline = time.monotonic() + self.timeout
        for index in indices:
            while not self._workers.done[index].acquire(timeout=_POLL):
                self._check_alive(index, doing)
                if time.monotonic() > deadline:
                    raise self._fail(
                        f"{self._where(index)} did not finish {doing} in {self.timeout:g} s"
                    )
            self._owed.discard(index)

    def _run(
        self,
        command: int,
        doing: str,
        message: tuple[Any, ...] | None = None,
        meanwhile: Callable[[], object] | None = None,
        observations: npt.NDArray[np.float32] | None = None,
    ) -> list[object]:
        """Give every worker ``command`` and wait for all; raise the first worker's error.

        ``meanwhile`` runs in this process once its own shards are done, before it waits for
        the worker processes (work that would otherwise wait until they are done). A step of
        this process's own shards writes their observations into ``observations`` (None: the
        block).

        Returns:
            The workers' answers to a ``CALL``, in worker order (none for a step).
        """
        if self._workers.closed:
            raise ValueError("the env is closed: build a new ShardedUnoVecEnv")
        if self._owed:  # a wait cut short by Ctrl-C: collect what those workers answered
            owed = sorted(self._owed)
            self._wait(owed, "the interrupted call")
            for index in owed:
                if self._views["status"][index] == FAILED:
                    self._workers.conns[index].recv()
        views = self._views
        views["command"][:] = command
        views["status"][:] = OK
        views["buffer"][0] = self._buffer
        for index in self._remote:
            if message is not None:
                self._workers.conns[index].send(message)
            self._owed.add(index)
            self._workers.go[index].release()
        local = self._workers.local
        assert local is not None
        first: BaseException | None = None
        answers: list[object] = []
        try:  # the parent's own group, while the processes play theirs
            if command == CALL:
                assert message is not None
                answers.append(local.command(message))
            else:
                local.step(observations)
        except Exception as err:
            first = err
        if meanwhile is not None and first is None:
            meanwhile()
        self._wait(self._remote, doing)
        for index in self._remote:
            if command == CALL or views["status"][index] == FAILED:
                try:
                    answers.append(self._receive(index, doing))
                except WorkerError:
                    raise
                except Exception as err:
                    first = first or err
        if first is not None:
            raise first
        return answers

    def _guarded(
        self,
        command: int,
        doing: str,
        message: tuple[Any, ...] | None = None,
        meanwhile: Callable[[], object] | None = None,
        observations: npt.NDArray[np.float32] | None = None,
    ) -> None:
        """:meth:`_run` a command that changes the games: a worker's error stops the env
        until ``reset()`` (some shards may have played, others not)."""
        try:
            self._run(command, doing, message, meanwhile, observations)
        except Exception as err:
            if not isinstance(err, WorkerError):
                self._stopped = f"stopped after an error ({type(err).__name__}: {err})"
            raise

    def _observations(self, own: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
        """This step's observations: a view of the block's current buffer (which the next
        step leaves alone), or a new array; ``own`` already holds this process's rows."""
        block = self._views["obs"][self._buffer]
        self._buffer ^= 1
        if self.shared_observations:
            return block
        if own is None:
            return block.copy()
        end = self.worker_tables[0][1]
        own[end:] = block[end:]  # the worker processes' rows; this process's are in place
        return own

    # ------------------------------------------------------------------ core API

    def reset(self) -> npt.NDArray[np.float32]:
        """Deal a new hand in every game; return the learners' observations (n, OBS_DIM)."""
        seeds = None
        if self._pending_seed is not None:
            seeds = self._shard_seeds(self._pending_seed)
        self._stopped = "interrupted in the middle of a reset"
        self._guarded(CALL, "resetting", ("reset", seeds))
        self._pending_seed = None
        self._stopped = None
        self._reset_seeds()
        return self._observations()

    def step_wait(self) -> VecEnvStepReturn:
        """Play the stored actions in every worker; autoreset finished games.

        Returns:
            ``(observations, rewards, dones, infos)``; a finished game's info holds
            ``terminal_observation`` and ``TimeLimit.truncated``.

        Raises:
            uno_env.IllegalActionError: if a learner action is not legal (nothing is played).
            ResetNeededError: if an earlier step failed or was interrupted, until ``reset()``.
            WorkerError: if a worker died or did not answer in time (the env is closed).
        """
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(): call step(actions)")
        actions, self._actions = self._actions, None
        if self._stopped is not None:
            raise ResetNeededError(
                f"the env is {self._stopped}: call reset() before stepping again"
            )
        views = self._views
        legal = views["masks"].reshape(-1)[self._mask_rows + actions]  # masks[env, action]
        if not legal.all():
            env = int(np.flatnonzero(~legal)[0])
            allowed = np.flatnonzero(views["masks"][env]).tolist()
            raise IllegalActionError(
                f"learner action refused: env {env}: action {int(actions[env])} is not legal "
                f"(legal: {allowed})"
            )
        views["actions"][:] = actions
        self._stopped = "interrupted in the middle of a step"
        infos: list[dict[str, Any]] = []

        def new_infos() -> None:  # while the worker processes finish their shards
            infos.extend([{} for _ in range(self.num_envs)])

        # Without shared observations this process's shards encode straight into the
        # returned array, and only the worker processes' rows are copied from the block.
        own = None if self.shared_observations else np.empty((self.num_envs, self._dim), np.float32)
        self._guarded(STEP, "stepping", meanwhile=new_infos, observations=own)
        self._stopped = None
        obs = self._observations(own)
        dones = views["dones"].copy()
        finished = np.flatnonzero(views["finished"])
        if finished.size:
            terminal = views["terminal"][finished]  # one copy; each info holds a row of it
            truncated = views["truncated"][finished].tolist()
            for row, game in enumerate(finished.tolist()):
                infos[game]["terminal_observation"] = terminal[row]
                infos[game]["TimeLimit.truncated"] = truncated[row]
        return obs, views["rewards"].copy(), dones, infos

    def mask_rows(self, indices: list[int]) -> npt.NDArray[np.bool_]:
        """The learners' legal actions in the games ``indices``, (len(indices), 80) bool."""
        return self._views["masks"][indices]

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learners' legal actions, (num_envs, 80) bool (a copy, taken whole)."""
        return self._views["masks"].copy()

    def update_opponents(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """Call ``fn(opponents, *args)`` in every worker, once per shard's opponents.

        ``fn`` must be a module-level function and ``args`` picklable; it changes the
        opponents in place (a league's snapshot slot refilled) or reads them.

        Returns:
            What ``fn`` returned for each shard, in shard order (it must pickle).

        Raises:
            Whatever ``fn`` raised in a worker (rebuilt), or WorkerError.
        """
        answers = self._run(CALL, "changing the opponents", ("opponents", fn, args))
        return [each for answer in answers for each in answer]  # type: ignore[attr-defined]

    def close(self) -> None:
        """Stop the workers and free the shared block (also done at exit)."""
        self._views = {}
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether the workers are stopped."""
        return self._workers.closed

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """Nothing: the games live in the workers (render a ``UnoVecEnv`` instead)."""
        self.check_render_mode(mode)
        gymnasium.logger.warn("ShardedUnoVecEnv does not render: its games live in the workers")
        return None

    # ------------------------------------------------------------------ attribute access

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Refused: the games live in the workers and are fixed when the env is built.

        Raises:
            ValueError: always, naming the attribute.
        """
        raise ValueError(
            f"attr_name: {shown(attr_name)} cannot be set: a ShardedUnoVecEnv's games live in "
            "its workers; build a new env instead"
        )


def _count(key: str, value: object, low: int, high: int) -> int:
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not low <= value <= high
    ):
        raise ValueError(f"{key}: expected an integer in {low}..{high}, got {shown(value)}")
    return int(value)
