"""``uno-lab bench llm`` at a small size: both figures are measured, printed as a table and
a JSON line, and written with ``--out``; a bad option is one line (exit 2). The targets
(overhead <= 1 ms, throughput >= 0.8 of the bound) are measured by the full run, not here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.optional import require

from unolab.benchmarks import llm as bench
from unolab.cli import main as cli_main

require("openai", "language-model agents (pip install -e .[llm])")
require("uvicorn", "the scripted chat server (pip install -e .[web])")


def test_a_small_run_measures_both_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures" / "llm.json"
    figures = bench.main(
        ["--decisions", "40", "--games", "4", "--delay", "0.02", "--concurrency", "4",
         "--out", str(out)]
    )  # fmt: skip
    overhead, throughput = figures["overhead"], figures["throughput"]
    assert overhead["decisions"] == 40 and 0 < overhead["median_ms"] <= overhead["p90_ms"]
    assert overhead["fallbacks"] == 0  # the instant model answers a legal move every time
    assert throughput["games"] == 4
    assert throughput["requests"] == throughput["decisions"] > 0
    assert throughput["bound_per_s"] == pytest.approx(4 / 0.02)
    assert throughput["ratio_to_bound"] == pytest.approx(
        throughput["requests"] / throughput["elapsed_s"] / throughput["bound_per_s"]
    )
    assert throughput["latency_mean_s"] >= 0.02  # the server's delay
    # No run beats the rounds its steps need.
    assert 0 < throughput["ratio_to_bound"] <= throughput["lockstep_ceiling"] <= 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[:2] == ["figure", "measured"]
    assert json.loads(printed[-1]) == figures == json.loads(out.read_text())


def test_the_lockstep_ceiling_counts_the_rounds_of_each_step(tmp_path: Path) -> None:
    def record(turn: int, replayed: bool = False) -> str:
        return json.dumps({"turn": turn, "requests": [{"replayed": replayed}]}) + "\n"

    folder = tmp_path / "decisions" / "m"
    folder.mkdir(parents=True)
    # Step 0 asks 8 times (2 rounds of 4), step 5 asks 3 times (1 round); a replayed
    # answer asks nothing.
    (folder / "chunk-0.jsonl").write_text(record(0) * 5 + record(5) * 3 + record(7, True))
    (folder / "chunk-1.jsonl").write_text(record(0) * 3)
    assert bench.lockstep_ceiling(tmp_path / "decisions", 4) == pytest.approx(11 / 12)
    assert bench.lockstep_ceiling(tmp_path / "nothing", 4) is None


def test_the_instant_model_answers_the_first_listed_move() -> None:
    completer = bench.InstantCompleter()
    prompt = "Your turn.\nLegal moves: A) G7 (green 7), B) draw (draw a card)\nAnswer."
    assert completer.complete([{"role": "user", "content": prompt}]).text == "A"
    plain = "Legal moves: W:B (wild, name blue), draw (draw a card)"
    assert completer.complete([{"role": "user", "content": plain}]).text == "W:B"


def test_uno_lab_bench_lists_it_and_refuses_a_bad_option_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        cli_main(["bench", "llm", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert "usage: uno-lab bench llm" in shown and "--concurrency" in shown
    with pytest.raises(SystemExit) as done:
        cli_main(["bench", "llm", "--games", "1"])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1]
        == "uno-lab bench llm: error: argument --games: expected an integer from 2 to 100000, got '1'"
    )
