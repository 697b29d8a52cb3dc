"""Run a tournament: schedule, resume, play chunks (in parallel), stop early, summarise.

The run folder ``<output_dir>/<name>/`` holds ``config.json`` (the config and its
fingerprint), ``games.jsonl`` (one line per finished game, see :mod:`unolab.tournament.results`),
``summary.json``, ``leaderboard.csv`` and the plots; with a participant that reports on its
own play (a language model), ``telemetry.jsonl`` (a line per chunk, appended just before the
chunk's games) and ``decisions/`` (its decision records, a file per chunk), see
:mod:`unolab.tournament.telemetry`. A resumed run reads back the telemetry of the chunks it
keeps, so its summary covers the whole run, and a chunk played again answers the decisions
recorded for it without asking the model; ``fresh`` discards both with the games.

Language models. A chunk in which a participant's endpoint refused it (nothing listens at
its address, an unknown model, a refused key: every later request would fail alike) ends the
run with one line naming the participant, before that chunk's games are written, instead of
a forfeit per game.

One run at a time. The run holds the folder's lock (:class:`uno_env.files.FolderLock`, the
file ``.lock``) from its start to its end; a second run started on the same folder is
refused, naming the pid of the first. The operating system drops the lock when the process
ends, however it ends, so a killed run never blocks its resume; a run that ends removes the
file.

Resuming. Starting a run whose folder already holds games resumes it: the games on disk are
read (a torn last line is dropped), and only the missing ``(deal, seating, variant)`` units
are played. Every line must be a game of this run: its ``key`` must be the deal key of its
deal under the config's seed, and two lines may not give one game different results;
otherwise the run refuses to start, naming the file and the line. A chunk found only in
part (a crash in the middle of its write) is dropped and played again whole, so a resume
plays exactly the games of an uninterrupted run; a chunk that ends where an earlier run of
fewer ``deal_sets`` ended is whole (``games.meta.json`` records those counts). The config must have the same fingerprint (``deal_sets`` may grow, to extend a
run); otherwise the run refuses to start, naming the keys that differ, unless ``fresh`` is
set, which discards the games. Two files vouch for the games: ``config.json`` and
``games.meta.json``, which records the fingerprint and the game-deciding keys of the config
that played ``games.jsonl`` and lives only as long as the log (it is written before the first
game and deleted with the log by ``fresh``). Deleting ``config.json`` therefore does not let
another config reuse the games: ``games.meta.json`` decides. A log without
``games.meta.json`` (written before it existed) is accepted only when ``config.json`` holds
the same fingerprint; otherwise the run refuses and suggests ``fresh``. A corrupt
``config.json``, ``games.meta.json`` or log line is refused with the file (and line) named;
nothing is rewritten before every check has passed.

Faulty agents. A participant whose policy cannot be built for a chunk (its factory raises)
or whose ``reset`` raises forfeits every game of that chunk where it sits, with the reason
recorded; one whose ``act`` fails forfeits the games it fails in (:mod:`uno_env.play`).

Determinism. Chunks are fixed by the config (``games_per_chunk``), every chunk builds fresh
policies seeded from ``(seed, chunk, participant)``, and the summary is computed from the
games sorted by unit, so the same config gives the same games and the same summary with any
number of workers. A chunk is written with one durable append when it is complete; a failed
append (a full disk) is taken back whole and ends the run with one line naming the file.

Parallelism. With ``workers > 1`` chunks are played in a process pool
(:mod:`unolab.tournament.backends`: ``fork`` where the platform has it, else ``spawn``); at most
two chunks per worker are in flight, so a run stopped by the SPRT wastes little. Workers
exit by themselves if the main process dies (``kill -9``), so a killed run leaves no orphans
behind. A worker that dies (``kill -9``, out of memory) loses the chunks in flight: they are
played again on a fresh pool (at most :data:`~unolab.tournament.backends.MAX_RESTARTS` times
each, then :class:`~unolab.tournament.backends.WorkerLostError`, one line naming the chunk;
rerunning resumes). Finished chunks are written in plan order whatever order they finish
in, so ``games.jsonl`` is the same bytes with any number of workers, after a worker's
death, and after a ``kill -9`` of the whole run and its resume.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from uno_env.config_values import ConfigError
from unolab.agents.progress import Bar, PipeConsole, progress_bar
from unolab.tournament.analysis import GameTable, deal_set_scores
from unolab.tournament.backends import ray_cluster, run_chunks_on_ray, shipped_entrants, worker_pool
from unolab.tournament.chunks import (
    ChunkResult,
    check_records,
    partial_chunks,
    play_chunk,
    schedule_for,
)
from unolab.tournament.config import TournamentConfig
from unolab.tournament.design import Schedule
from unolab.tournament.participants import PolicyFactory, entrants_for
from unolab.tournament.report import write_reports
from unolab.tournament.results import ResultStore, Unit
from unolab.tournament.run_folder import TournamentFolder
from unolab.tournament.stats import SprtResult, sequential_sprt
from unolab.tournament.summary import build_summary
from unolab.tournament.telemetry import TELEMETRY_FILE, TelemetryLog, merge_telemetry

__all__ = [
    "cpu_seconds",
    "run_tournament",
]


def cpu_seconds() -> float:
    """CPU time of this process and of its finished (reaped) child processes."""
    try:
        import resource
    except ImportError:  # not on this platform
        return time.process_time()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class _Progress:
    """Deal-set completeness and the SPRT, run on the complete prefix of deal sets."""

    def __init__(self, config: TournamentConfig, schedule: Schedule) -> None:
        self.config = config
        self.schedule = schedule
        self.per_deal = np.zeros(schedule.num_deal_sets, dtype=np.int64)
        self.prefix = 0
        """Deal sets ``0 .. prefix-1`` are complete."""
        self.waiting: list[GameTable] = []
        self.scores: list[float] = []
        self.sprt: SprtResult | None = None

    @property
    def stopped(self) -> bool:
        """The SPRT has decided."""
        return self.sprt is not None and self.sprt.decided

    def feed(self, table: GameTable) -> None:
        """Count new games; extend the complete prefix; rerun the SPRT on it."""
        testing = self.config.sprt is not None and not self.stopped
        inside = table.deal < self.per_deal.size
        np.add.at(self.per_deal, table.deal[inside], 1)
        if testing:
            self.waiting.append(table.subset(inside & (table.deal >= self.prefix)))
        start = self.prefix
        full = self.schedule.games_per_deal_set
        while self.prefix < self.per_deal.size and self.per_deal[self.prefix] >= full:
            self.prefix += 1
        if not testing or self.prefix == start:
            return
        waiting = GameTable.concat(self.waiting)
        ready = waiting.deal < self.prefix
        self.waiting = [waiting.subset(~ready)]
        _, x = deal_set_scores(waiting.subset(ready), 0, 1 if self.config.format == "ab" else None)
        self.scores.extend(x.tolist())
        s = self.config.sprt
        assert s is not None
        self.sprt = sequential_sprt(self.scores, s.elo0, s.elo1, s.alpha, s.beta)


def run_tournament(
    config: TournamentConfig,
    *,
    overrides: Mapping[str, PolicyFactory] | None = None,
    fresh: bool = False,
    progress: bool = True,
    console: Console | None = None,
    plots: bool = True,
    print_table: bool = True,
) -> dict[str, Any]:
    """Play (or resume) a tournament and write its results.

    With ``config.backend == "ray"`` the chunks are Ray tasks (:mod:`unolab.tournament.backends`)
    on the cluster of ``config.address``; the games and the summary are the same.

    Args:
        config: The tournament.
        overrides: Policy factories replacing configured participants by name (local
            backend only: they cannot travel to Ray workers).
        fresh: Discard games already in the run folder.
        progress: Show a progress bar.
        console: Where to print (default: a :class:`~unolab.agents.progress.PipeConsole`
            on stdout).
        plots: Write the PNG plots.
        print_table: Print the leaderboard.

    Returns:
        The summary (also written to ``summary.json``).

    Raises:
        ConfigError: for a bad participant, a run folder of another config, or a log that
            holds games of another run.
        FolderInUseError: another run holds the run folder; the message names its pid.
        OSError: a write failed (a full disk); the message names the file, and rerunning the
            same command resumes.
        RayBackendError: (a ValueError) Ray is missing or its cluster cannot be reached.
        BrokenPipeError: the reader of the output went away (``| head``).
        WorkerLostError: a chunk was lost with a dying worker process more than
            :data:`~unolab.tournament.backends.MAX_RESTARTS` times; the chunks written before
            it are kept, and rerunning the same command resumes.
    """
    folder = TournamentFolder(config)
    run = functools.partial(
        _run,
        folder=folder,
        fresh=fresh,
        progress=progress,
        console=console or PipeConsole(),
        plots=plots,
        print_table=print_table,
    )
    try:
        if folder.path.is_dir():
            # A second run on this folder is refused now, before Ray or a pool starts.
            folder.hold()
        if config.backend != "ray":
            return run(config, None, overrides)
        if overrides:
            raise ConfigError(
                f"overrides {sorted(overrides)} are policy factories given in code; the ray "
                "backend sends agents to its workers as files or bot names: use the local "
                "backend"
            )
        # The driver holds the lock; the workers only play chunks and never touch the folder.
        with ray_cluster(config) as ray:
            return run(config, ray, None)
    finally:
        folder.release()


def _run(
    config: TournamentConfig,
    ray: Any,
    overrides: Mapping[str, PolicyFactory] | None,
    *,
    folder: TournamentFolder,
    fresh: bool,
    progress: bool,
    console: Console,
    plots: bool,
    print_table: bool,
) -> dict[str, Any]:
    """:func:`run_tournament` on this machine's processes, or on Ray (``ray`` connected)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    entrants = entrants_for(config, overrides)
    folder.hold()
    folder.prepare(fresh)
    store = ResultStore(folder.games)
    loaded = store.load(repair=False)  # the log stays as it is until every check passed
    meta = folder.check(config, has_games=bool(loaded))
    schedule = schedule_for(config, entrants)
    rules = config.game_rules()
    check_records(schedule, rules, loaded, store)
    counts = folder.deal_set_counts(meta) if loaded else set()
    # Seats taken by policies given in code, now or by an earlier run of the log: the
    # config names only their placeholders, so a replay must not rebuild them from it.
    overridden = set(overrides or ()) | (folder.overridden(meta) if loaded else set())
    partial, whole_ends = partial_chunks(schedule, loaded, counts)
    drop = {unit for unit in loaded if schedule.chunk_of(unit[0]) in partial}
    torn = store.dropped_tail
    removed = store.repair(drop)
    for unit in drop:
        del loaded[unit]
    # An older log does not say where its runs ended: the chunks it holds whole say it.
    ends = (whole_ends if counts is None else counts) | {schedule.num_deal_sets}
    folder.write(config, ends, overridden)
    if torn:
        console.print(f"[yellow]dropped a torn last line ({torn} bytes)")
    if removed:
        console.print(
            f"[yellow]dropped {removed} games of {len(partial)} chunk(s) written only in "
            "part; they are played again whole"
        )
    resumed = len(loaded)
    done: set[Unit] = set(loaded)
    telemetry_log = TelemetryLog(folder.path / TELEMETRY_FILE)

    def kept(chunk: int, first: int, end: int) -> bool:
        return chunk not in partial and all(
            unit in done for unit in schedule.units(chunk) if first <= unit[0] < end
        )

    # Lines of deal sets past this run's end (an earlier, longer run) stay, unused, as
    # their games do.
    reports = [
        piece["telemetry"]
        for piece in telemetry_log.load(kept)
        if piece["deals"][0] < schedule.num_deal_sets
    ]
    tables = [GameTable.from_records(loaded.values(), schedule.names, schedule.num_players)]
    del loaded
    state = _Progress(config, schedule)
    state.feed(tables[0])
    todo: list[tuple[int, list[Unit]]] = []
    for chunk in range(schedule.num_chunks):
        missing = [u for u in schedule.units(chunk) if u not in done]
        if missing:
            todo.append((chunk, missing))
    played = 0
    start, cpu_start = time.perf_counter(), cpu_seconds()
    total = schedule.num_games

    def handle(result: ChunkResult, bar: Bar) -> None:
        nonlocal played
        if result.stop:  # a misconfigured endpoint: every later game would forfeit alike
            raise ConfigError(
                f"{result.stop}; the run stopped before writing these games: fix it and "
                "rerun the same command to resume"
            )
        if result.telemetry:
            # Before the games: a stop between the two leaves a line that the resume drops
            # (its games are missing), never games without their telemetry.
            deals = result.table.deal
            first = int(deals.min())
            telemetry_log.append(
                {
                    "chunk": schedule.chunk_of(first),
                    "deals": [first, int(deals.max()) + 1],
                    "telemetry": result.telemetry,
                }
            )
            reports.append(result.telemetry)
        store.append_text(result.text)
        tables.append(result.table)
        done.update(result.table.units())
        played += result.table.num_games
        state.feed(result.table)
        bar.advance(result.table.num_games)

    if ray is not None:
        entrants = shipped_entrants(entrants)
    parallel = ray is None and config.workers > 1 and len(todo) > 1 and not state.stopped
    if ray is None:  # decision records live in the run folder: this machine's processes only
        entrants = [dataclasses.replace(e, records=folder.path) for e in entrants]

    def say(line: str) -> None:
        console.print(f"[yellow]{escape(line)}")

    with (
        worker_pool(config.workers, play_chunk, rules, schedule, entrants, parallel, say) as pool,
        progress_bar(
            f"tournament {config.name}",
            total,
            unit="games",
            completed=resumed,
            enabled=progress,
            console=console,
        ) as bar,
    ):

        def stopped() -> bool:
            return state.stopped

        def handle_one(result: ChunkResult) -> None:
            handle(result, bar)

        if ray is not None:
            run_chunks_on_ray(ray, play_chunk, rules, schedule, entrants, todo, stopped, handle_one)
        elif pool is not None:
            pool.run(todo, stopped, handle_one)
        else:
            for chunk, units in todo:
                if state.stopped:
                    break
                handle(play_chunk(rules, schedule, entrants, chunk, units), bar)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    run_info = {
        "games_played": played,
        "games_resumed": resumed,
        "elapsed_s": elapsed,
        "games_per_s": played / elapsed if played and elapsed > 0 else None,
        "cpu_s": cpu,
        "games_per_cpu_s": played / cpu if played and cpu > 0 else None,
        "workers": config.workers,
        "worker_restarts": pool.restarts if pool is not None else 0,
        "backend": config.backend,
    }
    stop = state.sprt.n if state.stopped and state.sprt is not None else None
    games = GameTable.concat(tables).sorted_by_unit()
    summary = build_summary(
        config, schedule, games, state.sprt, stop, run_info, merge_telemetry(reports)
    )
    write_reports(folder.path, summary, console=console, plots=plots, print_table=print_table)
    return summary
