"""Tournaments and strength evaluations on a local Ray (``ray.init(num_cpus=2)``).

* The Ray backend plays the same games as the local one (``games.jsonl`` line for line,
  order aside; the same leaderboard), exported agents travelling as files.
* A Ray worker process killed mid-chunk: Ray reruns the chunk, no game is lost or written
  twice.
* A driver killed with ``kill -9`` (a subprocess joined to this Ray by ``--address``): the
  rerun plays only the missing chunks.
* ``python tools/strength.py`` on Ray gives the local results.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest
from strength import measure
from support import ROOT
from support.agents import write_tiny_agent

from uno_env.config_values import ConfigError
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament


def _config(tmp: Path, name: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "participants": ["random", "greedy_points", "mixbot"],
        "deal_sets": 40,
        "games_per_chunk": 30,
        "bootstrap": 50,
        "seed": 5,
        "output_dir": str(tmp),
    }
    return {**base, **changes}


def _run(data: dict[str, Any]) -> dict[str, Any]:
    return run_tournament(load_config(data), progress=False, plots=False, print_table=False)


def _games(folder: Path) -> list[str]:
    return (folder / "games.jsonl").read_text().splitlines()


def _units(lines: list[str]) -> list[tuple[int, int, int]]:
    return [tuple(json.loads(x)[k] for k in ("deal", "seating", "variant")) for x in lines]


def _without_run(summary: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(summary))
    out.pop("run")
    out.pop("config")
    return out


def test_ray_backend_plays_the_local_games(ray_cluster: ModuleType, tmp_path: Path) -> None:
    agent = write_tiny_agent(tmp_path / "agents")
    field = ["random", "mixbot", str(agent)]
    local = _run(_config(tmp_path / "local", "t", participants=field))
    on_ray = _run(_config(tmp_path / "ray", "t", participants=field, backend="ray"))
    local_lines = _games(tmp_path / "local" / "t")
    ray_lines = _games(tmp_path / "ray" / "t")
    assert len(ray_lines) == len(set(ray_lines)) == 3 * 40 * 2
    assert sorted(ray_lines) == sorted(local_lines)
    assert on_ray["run"]["backend"] == "ray" and local["run"]["backend"] == "local"
    assert _without_run(on_ray) == _without_run(local)
    board = (tmp_path / "ray" / "t" / "leaderboard.csv").read_text()
    assert board == (tmp_path / "local" / "t" / "leaderboard.csv").read_text()
    assert "tiny" in board


def test_overrides_cannot_travel_to_ray(ray_cluster: ModuleType, tmp_path: Path) -> None:
    from unolab.agents import make_agent

    config = load_config(_config(tmp_path, "o", backend="ray"))
    with pytest.raises(ConfigError, match="files or bot names"):
        run_tournament(config, overrides={"random": lambda seed: make_agent("random", seed)})


def _chunk_workers() -> list[psutil.Process]:
    """This test's Ray workers now playing a chunk (Ray titles them ``ray::_play_task``)."""
    out = []
    for process in psutil.Process().children(recursive=True):
        try:
            if process.cmdline()[:1] == ["ray::_play_task"]:
                out.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, IndexError):
            continue
    return out


def test_killed_worker_loses_and_duplicates_no_game(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    # Chunks of heuristic bots that take a good fraction of a second each.
    data = _config(
        tmp_path / "ray",
        "k",
        participants=["mixbot", "card_ranking", "greedy_points"],
        deal_sets=1200,
        games_per_chunk=1200,
        bootstrap=0,
        backend="ray",
    )
    outcome: dict[str, Any] = {}

    def play() -> None:
        try:
            outcome["summary"] = _run(data)
        except BaseException as err:  # reported by the assertion below
            outcome["error"] = err

    runner = threading.Thread(target=play)
    runner.start()
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and runner.is_alive() and time.monotonic() < deadline:
        busy = _chunk_workers()
        if busy:
            time.sleep(0.2)  # well inside the chunk
            killed = busy[0].pid
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.02)
    runner.join(120)
    assert killed is not None, "a worker was killed in the middle of a chunk"
    assert "error" not in outcome, outcome.get("error")
    lines = _games(tmp_path / "ray" / "k")
    total = 3 * 1200 * 2
    assert len(lines) == len(set(_units(lines))) == total, "no game lost, none written twice"
    assert outcome["summary"]["run"]["games_played"] == total
    reference = _run({**data, "backend": "local", "workers": 2, "output_dir": str(tmp_path)})
    assert sorted(lines) == sorted(_games(tmp_path / "k"))
    assert _without_run(reference) == _without_run(outcome["summary"])


def test_killed_driver_resumes(ray_cluster: ModuleType, tmp_path: Path) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    args = [
        sys.executable,
        "-m",
        "tournament",
        "--name",
        "d",
        "--participants",
        "mixbot",
        "card_ranking",
        "greedy_points",
        "--deal-sets",
        "600",
        "--games-per-chunk",
        "300",
        "--bootstrap",
        "0",
        "--backend",
        "ray",
        "--address",
        address,
        "--no-progress",
        "--no-plots",
        "--output-dir",
        str(tmp_path / "run"),
    ]
    total = 3 * 600 * 2
    log = tmp_path / "run" / "d" / "games.jsonl"
    driver = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and driver.poll() is None:
        if log.is_file() and log.stat().st_size > 0:
            break
        time.sleep(0.005)
    assert driver.poll() is None, "the run ended before it could be killed"
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    before = log.read_text().splitlines()
    assert 0 < len(before) < total, "killed in the middle"
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = log.read_text().splitlines()
    assert len(after) == len(set(_units(after))) == total, "no game lost, none duplicated"
    assert after[: len(before)] == before, "finished games are kept as they were"
    summary = json.loads((tmp_path / "run" / "d" / "summary.json").read_text())
    assert summary["run"]["games_resumed"] == len(before)
    assert summary["run"]["games_played"] == total - len(before)


def test_strength_on_ray_equals_local(ray_cluster: ModuleType, tmp_path: Path) -> None:
    agent = write_tiny_agent(tmp_path)
    options: dict[str, Any] = {
        "bots": ["random", "mixbot"],
        "players": [2],
        "num_games": 300,
        "seed": 3,
        "progress": False,
        "agents": [str(agent)],
        "opponents": ["random", "card_ranking"],
    }
    local = measure(**options)
    on_ray = measure(**options, backend="ray")
    assert [r.to_dict() for r in on_ray] == [r.to_dict() for r in local]
    assert [r.candidate for r in on_ray][::2] == ["random", "mixbot", "tiny"]


def test_strength_on_ray_reports_each_pairing_off_a_terminal(
    ray_cluster: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under pytest stderr is no terminal, so no bar is drawn: a line per pairing says
    what finished (a 68-minute run used to be silent until its end)."""
    results = measure(["random"], [2], 20, seed=1, opponents=["random", "mixbot"], backend="ray")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pairing")]
    assert len(lines) == 2
    assert lines[-1].startswith("pairing 2/2 done after ")
    assert any("random vs mixbot (2 players)" in line for line in lines)
    assert any(f"{100 * results[1].win_rate:.1f}%" in line for line in lines)
