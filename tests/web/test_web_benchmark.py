"""The browser table's load benchmark (``uno-lab bench web``), run tiny: a real server under
two clients, killed with SIGKILL once under the load, loses no answered move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import unolab.benchmarks.web as bench
from unolab.cli_tools import BENCHMARKS

pytestmark = pytest.mark.timeout(900)

ROUND_KEYS = {"moves", "median_ms", "p99_ms", "moves_per_s", "failed_requests", "round_medians_ms"}
CRASH_KEYS = {"kills", "games", "answered_moves", "accepted_moves_lost", "games_unreadable"}


def test_a_tiny_run_measures_every_round_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures" / "web.json"
    argv = [
        "--clients",
        "2",
        "--moves",
        "3",
        "--kills",
        "1",
        "--repeats",
        "1",
        "--seed",
        "4",
        "--out",
        str(out),
    ]
    assert bench.main(argv) == 0
    figures = json.loads(out.read_text())
    printed = capsys.readouterr().out.strip().splitlines()
    assert json.loads(printed[-1]) == figures  # the JSON line is the file
    assert (figures["clients"], figures["moves"], figures["seed"]) == (2, 3, 4)
    assert {"disk", "commit", "crash", "load_before", "load_after"} <= set(figures)
    rounds = [figures["disk"]] + ([figures["memory"]] if bench.SHM.is_dir() else [])
    for figure in rounds:
        assert set(figure) >= ROUND_KEYS
        assert figure["moves"] == 6 and figure["failed_requests"] == 0
        assert 0 < figure["median_ms"] <= figure["p99_ms"] and figure["moves_per_s"] > 0
    assert 0 < figures["commit"]["median_ms"] <= figures["commit"]["p99_ms"]
    crash = figures["crash"]
    assert set(crash) >= CRASH_KEYS
    assert crash["kills"] == 1 and crash["games"] >= 2 and crash["answered_moves"] >= 6
    assert crash["accepted_moves_lost"] == 0 and crash["games_unreadable"] == 0
    assert "persistence on" in "\n".join(printed)


def test_it_is_a_bench_command_with_checked_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert BENCHMARKS["web"] == "unolab.benchmarks.web"
    with pytest.raises(SystemExit) as exit_:
        bench.build_parser().parse_args(["--clients", "0"])
    assert exit_.value.code == 2
    assert (
        "argument --clients: expected an integer from 1 to 1000, got '0'" in capsys.readouterr().err
    )
