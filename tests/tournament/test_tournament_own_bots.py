"""Tournaments of bots named by their Python class, and what a run records of each seat.

* A ``file.py:ClassName`` participant plays (in worker processes too), under its class's
  name, and the run records the file by its absolute path: the run resumes from another
  working folder.
* A class that cannot be built is refused before any game, in one line.
* Seats taken by policies given in code (``overrides``) are recorded by name in
  ``config.json`` and ``games.meta.json``, and stay recorded when the run is resumed
  without them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.bot_files import write_bot_file

from uno_env.config_values import ConfigError
from unolab.agents import make_agent
from unolab.tournament.cli import main as cli_main
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament


def _config(tmp: Path, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "own",
        "participants": ["random", "mixbot", "my_bots.py:RandomLegal"],
        "deal_sets": 6,
        "games_per_chunk": 8,
        "bootstrap": 10,
        "seed": 5,
        "output_dir": str(tmp / "runs"),
    }
    base.update(changes)
    return base


def _run(data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return run_tournament(
        load_config(data), progress=False, plots=False, print_table=False, **kwargs
    )


def _games(tmp: Path, name: str = "own") -> list[dict[str, Any]]:
    lines = (tmp / "runs" / name / "games.jsonl").read_text().splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda g: (g["deal"], g["seating"]))


def test_a_class_plays_under_its_name_and_is_recorded_by_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bot_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    summary = _run(_config(tmp_path))
    names = {row["name"] for row in summary["leaderboard"]}
    assert names == {"random", "mixbot", "RandomLegal"}
    games = _games(tmp_path)
    assert len(games) == 3 * 6 * 2 and sum("RandomLegal" in g["seats"] for g in games) == 24
    stored = json.loads((tmp_path / "runs" / "own" / "config.json").read_text())
    spec = stored["config"]["participants"][2]["bot"]
    assert spec == f"{(tmp_path / 'my_bots.py').resolve()}:RandomLegal"
    assert stored["overrides"] == []
    # The record rebuilds the seat from anywhere: resumed from another folder, the run
    # finds its own games (same fingerprint) and plays only the new deal sets.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chdir(elsewhere)
    data = _config(tmp_path, deal_sets=8)
    data["participants"] = ["random", "mixbot", spec]
    summary = _run(data)
    assert summary["run"]["games_resumed"] == 36 and summary["run"]["games_played"] == 12


def test_a_class_plays_the_same_games_in_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bot_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    _run(_config(tmp_path, name="one"))
    _run(_config(tmp_path, name="two", workers=2))
    assert _games(tmp_path, "one") == _games(tmp_path, "two")


def test_a_class_that_cannot_be_built_is_refused_before_any_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_bot_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"class NoReset is not an agent: it lacks reset\(\)"):
        load_config(_config(tmp_path, participants=["random", "my_bots.py:NoReset"]))
    argv = ["--name", "bad", "--participants", "random", "gone.py:Bot", "--output-dir", "r"]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: tournament.participants[1]: "), err
    assert err[0].endswith("agent 'gone.py:Bot': the bot file 'gone.py' does not exist"), err
    assert not (tmp_path / "r").exists()


def test_overridden_seats_are_recorded_and_stay_recorded(tmp_path: Path) -> None:
    data = _config(tmp_path, participants=["random", "mixbot", {"name": "mine", "bot": "random"}])
    _run(data, overrides={"mine": lambda seed: make_agent("greedy_points", seed)})
    folder = tmp_path / "runs" / "own"
    for record in ("config.json", "games.meta.json"):
        assert json.loads((folder / record).read_text())["overrides"] == ["mine"], record
    _run({**data, "deal_sets": 8})  # resumed without the override: its games are still there
    for record in ("config.json", "games.meta.json"):
        assert json.loads((folder / record).read_text())["overrides"] == ["mine"], record
    run_tournament(load_config(data), fresh=True, progress=False, plots=False, print_table=False)
    assert json.loads((folder / "config.json").read_text())["overrides"] == []


def test_a_malformed_overrides_record_is_refused_naming_the_file(tmp_path: Path) -> None:
    data = _config(tmp_path, participants=["random", "mixbot"])
    _run(data)
    meta = tmp_path / "runs" / "own" / "games.meta.json"
    record = json.loads(meta.read_text())
    meta.write_text(json.dumps({**record, "overrides": "mine"}))
    with pytest.raises(ConfigError, match=r"games\.meta\.json: .overrides. must be a list"):
        _run({**data, "deal_sets": 8})
