"""Faults of the machine during a tournament: the results are those of an uninterrupted run.

* A worker process killed with ``kill -9`` in the middle of a real run (a subprocess of the
  CLI): the pool is replaced, the lost chunks are played again, the run ends normally and
  ``games.jsonl``, ``leaderboard.csv`` and ``summary.json`` (but its timing) are byte for
  byte those of an uninterrupted run with the same seed.
* The whole run killed with ``kill -9`` in the middle, then rerun: the workers exit, the
  rerun resumes, and the files are again byte for byte an uninterrupted run's.
* A chunk whose worker dies every time: after :data:`MAX_RESTARTS` replays the run ends with
  one line naming the chunk (exit 1, no traceback), the chunks before it are kept, and the
  rerun (the fault gone) resumes to the uninterrupted run's bytes.
* A worker that dies once, in process: the restart is reported and the results are the same.
* The plan order: finished chunks are handed on in the order planned, whatever order they
  finish in.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from support import ROOT

from uno_env.rules import Rules
from unolab.tournament import runner
from unolab.tournament.analysis import GameTable
from unolab.tournament.backends import MAX_RESTARTS
from unolab.tournament.chunks import ChunkOrder, ChunkResult, play_chunk
from unolab.tournament.cli import main as cli_main
from unolab.tournament.design import Schedule
from unolab.tournament.participants import Entrant
from unolab.tournament.results import Unit

NAME = "faults"

ARGV = (
    "--name", NAME,
    "--participants", "random", "greedy_points", "card_ranking",
    "--deal-sets", "150",
    "--games-per-chunk", "60",
    "--bootstrap", "0",
    "--seed", "5",
    "--no-progress",
    "--no-plots",
)  # fmt: skip
"""A cheap run: 3 bots, 900 games in 15 chunks (a few seconds with 2 workers)."""

SMALL_ARGV = (
    "--name", NAME,
    "--participants", "random", "greedy_points",
    "--deal-sets", "8",
    "--games-per-chunk", "4",
    "--bootstrap", "0",
    "--seed", "5",
    "--no-progress",
    "--no-plots",
)  # fmt: skip
"""A tiny run: 16 games in 4 chunks of 4."""

FILES = ("games.jsonl", "leaderboard.csv")
"""The files that must be byte for byte an uninterrupted run's."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run folder of :data:`ARGV` played without a fault, by one process."""
    out = tmp_path_factory.mktemp("reference")
    assert cli_main([*ARGV, "--workers", "1", "--output-dir", str(out)]) == 0
    return out / NAME


def _summary(folder: Path) -> dict[str, Any]:
    """summary.json without its ``run`` section (this invocation's timing) and config."""
    data: dict[str, Any] = json.loads((folder / "summary.json").read_text())
    data.pop("run")
    data.pop("config")
    return data


def _same_results(folder: Path, reference: Path) -> None:
    for name in FILES:
        assert (folder / name).read_bytes() == (reference / name).read_bytes(), name
    assert _summary(folder) == _summary(reference)


def _start(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "unolab.tournament", *ARGV, *extra, "--output-dir", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_games(proc: subprocess.Popen[str], log: Path) -> None:
    """Wait until the first chunk is written (the run is under way; a cold start may compile
    the engine first)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and log.stat().st_size > 0:
            return
        time.sleep(0.002)
    raise AssertionError(f"no game was written (exit {proc.poll()})")


def _workers(pid: int) -> list[psutil.Process]:
    """The run's worker processes: its children forked from it (the same command line)."""
    main = psutil.Process(pid)
    command = main.cmdline()
    return [child for child in main.children() if child.cmdline() == command]


def test_a_worker_killed_mid_run_is_replaced_and_the_results_are_unchanged(
    tmp_path: Path, reference: Path
) -> None:
    proc = _start(tmp_path, "--workers", "2")
    log = tmp_path / NAME / "games.jsonl"
    _wait_for_games(proc, log)
    workers = _workers(proc.pid)
    assert len(workers) == 2
    assert proc.poll() is None, "the run ended before a worker could be killed"
    os.kill(workers[0].pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    said = " ".join(out.split())
    assert "a worker process died;" in said and "played again on a fresh pool" in said
    assert "(restart 1)" in said
    assert "Traceback" not in out + err
    assert not workers[0].is_running() or workers[0].status() == psutil.STATUS_ZOMBIE
    summary = json.loads((tmp_path / NAME / "summary.json").read_text())
    assert summary["run"]["worker_restarts"] == 1
    assert "the worker pool restarted 1 time(s)" in said
    _same_results(tmp_path / NAME, reference)


def test_a_run_killed_mid_run_resumes_to_the_same_results(tmp_path: Path, reference: Path) -> None:
    proc = _start(tmp_path, "--workers", "2")
    log = tmp_path / NAME / "games.jsonl"
    _wait_for_games(proc, log)
    workers = _workers(proc.pid)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=600)
    written = log.read_bytes()
    assert 0 < written.count(b"\n") < 900, "killed in the middle of the run"
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, "the workers exit when the run is killed"
    resumed = _start(tmp_path, "--workers", "2")
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert "Traceback" not in out + err
    summary = json.loads((tmp_path / NAME / "summary.json").read_text())
    assert 0 < summary["run"]["games_resumed"] < 900
    _same_results(tmp_path / NAME, reference)


# --- faults injected in process: the worker kills itself ----------------------------------

_PARENT = os.getpid()


def _play_and_die(
    rules: Rules, schedule: Schedule, entrants: Sequence[Entrant], chunk: int, units: list[Unit]
) -> ChunkResult:
    """play_chunk, except that a worker given chunk 1 kills itself (as ``kill -9`` would)."""
    if chunk == 1 and os.getpid() != _PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return play_chunk(rules, schedule, entrants, chunk, units)


def _play_and_die_once(
    rules: Rules, schedule: Schedule, entrants: Sequence[Entrant], chunk: int, units: list[Unit]
) -> ChunkResult:
    """play_chunk, except that the first worker given chunk 2 kills itself."""
    marker = Path(os.environ["UNO_LAB_TEST_MARKER"])
    if chunk == 2 and os.getpid() != _PARENT and not marker.exists():
        marker.write_text("died once")
        os.kill(os.getpid(), signal.SIGKILL)
    return play_chunk(rules, schedule, entrants, chunk, units)


def test_a_chunk_that_kills_its_worker_every_time_ends_the_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    assert cli_main([*SMALL_ARGV, "--output-dir", str(plain)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(runner, "play_chunk", _play_and_die)
    argv = [*SMALL_ARGV, "--workers", "2", "--output-dir", str(tmp_path / "run")]
    assert cli_main(argv) == 1
    out, err = capsys.readouterr()
    said = " ".join(out.split())
    assert said.count("a worker process died;") == MAX_RESTARTS
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert lines[0].startswith(f"error: chunk 1 lost {MAX_RESTARTS + 1} times with a dying")
    assert "rerun the same command to resume" in lines[0]
    assert "Traceback" not in out + err
    log = tmp_path / "run" / NAME / "games.jsonl"
    reference = (plain / NAME / "games.jsonl").read_bytes()
    kept = log.read_bytes()
    assert kept == reference[: len(kept)], "the games kept are the first chunk's, unchanged"
    assert kept.count(b"\n") == 4, "chunk 0 was written; nothing after the lost chunk"
    assert not (tmp_path / "run" / NAME / ".lock").exists()
    # The fault gone, the same command resumes to an uninterrupted run's results.
    monkeypatch.undo()
    assert cli_main(argv) == 0
    _same_results(tmp_path / "run" / NAME, plain / NAME)


def test_a_worker_that_dies_once_costs_a_restart_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    assert cli_main([*SMALL_ARGV, "--output-dir", str(plain)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("UNO_LAB_TEST_MARKER", str(tmp_path / "marker"))
    monkeypatch.setattr(runner, "play_chunk", _play_and_die_once)
    argv = [*SMALL_ARGV, "--workers", "2", "--output-dir", str(tmp_path / "run")]
    assert cli_main(argv) == 0
    out, err = capsys.readouterr()
    assert (tmp_path / "marker").exists(), "the fault happened"
    said = " ".join(out.split())
    assert said.count("a worker process died;") == 1 and "chunk" in said
    assert err == ""
    summary = json.loads((tmp_path / "run" / NAME / "summary.json").read_text())
    assert summary["run"]["worker_restarts"] == 1
    _same_results(tmp_path / "run" / NAME, plain / NAME)


def _result(tag: int) -> ChunkResult:
    return ChunkResult(f"{tag}\n", GameTable.empty(("a", "b"), 2))


def test_finished_chunks_are_handed_on_in_plan_order() -> None:
    handed: list[str] = []
    order = ChunkOrder(4, lambda result: handed.append(result.text))
    order.put(2, _result(2))
    order.put(1, _result(1))
    assert handed == [] and order.delivered == 0 and not order.complete
    order.put(0, _result(0))
    assert handed == ["0\n", "1\n", "2\n"] and order.delivered == 3
    order.put(3, _result(3))
    assert handed == ["0\n", "1\n", "2\n", "3\n"] and order.complete
    assert np.array_equal(np.arange(4), [int(x) for x in handed])
