"""The OpenSpiel benchmarks: the speed comparison and the ISMCTS cross-check, at tiny sizes.

Skips without OpenSpiel on a user's machine; in CI (``UNO_LAB_CI=1``) a missing OpenSpiel
fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.optional import require

pyspiel: Any = require("pyspiel", "the OpenSpiel benchmarks run on OpenSpiel")

from unolab.benchmarks import openspiel_crosscheck, openspiel_speed  # noqa: E402


def test_speed_measures_every_game_and_the_ratio() -> None:
    out = openspiel_speed.measure(seconds=0.6, seed=1, players=3)
    assert set(out) == {*openspiel_speed.GAMES, "ratio"}
    assert all(rate > 0 for rate in out.values())
    assert out["ratio"] == pytest.approx(out["python_uno"] / out["python_kuhn_poker"])


def test_crosscheck_rows_are_written_after_each_and_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "crosscheck.json"
    args = ["--hands", "4", "--seed", "5", "--out", str(out)]
    assert openspiel_crosscheck.main([*args, "--budgets", "2", "--searchers", "lab"]) == 0
    assert (
        openspiel_crosscheck.main(["--budgets", "2", "--searchers", "openspiel-fast", *args]) == 0
    )
    printed = capsys.readouterr().out
    assert "lab" in printed and "openspiel-fast" in printed
    record = json.loads(out.read_text())
    assert record["seed"] == 5
    rows = {(row["iterations"], row["searcher"]): row for row in record["results"]}
    assert set(rows) == {(2, "lab"), (2, "openspiel-fast")}
    assert {row["rules"] for row in rows.values()} == {"official"}
    for row in rows.values():
        assert row["games"] == 4 and 0 <= row["wins"] <= 4
        assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]
        assert row["median_ms_per_decision"] > 0
    # The same searcher under the house rule is a row of its own.
    assert (
        openspiel_crosscheck.main(
            [*args, "--budgets", "2", "--searchers", "lab", "--no-voluntary-draw"]
        )
        == 0
    )
    record = json.loads(out.read_text())
    assert [(row["rules"], row["searcher"]) for row in record["results"]] == [
        ("official", "lab"),
        ("official", "openspiel-fast"),
        ("official, voluntary_draw off", "lab"),
    ]
    # The baseline: uniform over the legal actions, as 0 iterations.
    assert (
        openspiel_crosscheck.main([*args, "--budgets", "2", "--searchers", "lab", "--baseline"])
        == 0
    )
    record = json.loads(out.read_text())
    assert [(row["iterations"], row["searcher"]) for row in record["results"]][:2] == [
        (0, "random_any"),
        (2, "lab"),
    ]
    # Another seed starts the record afresh: rows on other deals are not mixed in.
    assert (
        openspiel_crosscheck.main(
            [
                "--budgets",
                "2",
                "--searchers",
                "lab",
                "--hands",
                "2",
                "--seed",
                "6",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    record = json.loads(out.read_text())
    assert [(row["iterations"], row["searcher"]) for row in record["results"]] == [(2, "lab")]


def test_openspiel_bot_with_random_rollouts_plays_whole_hands() -> None:
    keys = openspiel_crosscheck.derive_keys(9, 2)
    result = openspiel_crosscheck.openspiel_ismcts(keys, 2, seed=9, progress=False)
    assert result["games"] == 2 and result["median_ms_per_decision"] > 0


def test_crosscheck_refuses_an_unknown_searcher(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        openspiel_crosscheck.main(["--searchers", "alphazero"])
    assert exit_info.value.code == 2
    assert "alphazero" in capsys.readouterr().err


def test_without_openspiel_both_say_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now fails
    assert openspiel_crosscheck.main(["--searchers", "openspiel-fast", "--hands", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'uno-lab[openspiel]'" in err
    with pytest.raises(SystemExit) as exit_info:
        openspiel_speed.main(["--seconds", "0.1"])
    assert exit_info.value.code == 2
    assert "pip install 'uno-lab[openspiel]'" in capsys.readouterr().err
