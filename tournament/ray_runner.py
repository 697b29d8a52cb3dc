"""The ``ray`` backend of :func:`unolab.tournament.runner.run_tournament`: chunks as Ray tasks.

Each chunk (a fixed shard of deal sets, ``games_per_chunk`` games) is one Ray task running
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
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents.llm.spec import spec_suffix
from unolab.agents.ray_backend import AgentFiles, RayBackendError, cluster_cpus, connect
from unolab.tournament.chunks import ChunkOrder, PlayChunk
from unolab.tournament.config import ParticipantSpec, TournamentConfig
from unolab.tournament.design import Schedule
from unolab.tournament.participants import Entrant, SpecFactory
from unolab.tournament.results import Unit

__all__ = ["TASK_RETRIES", "ray_cluster", "run_chunks_on_ray", "shipped_entrants"]

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
