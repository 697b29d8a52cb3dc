"""Replaying tournament games whose seats are the user's own: Python classes, policies given
in code, and exported agents kept elsewhere under the runs folder.

* A class seat is rebuilt when the server trusts its file (``--trust-code``) and the game
  replays exactly; otherwise the replay names the seat and says how, and no code runs.
* A seat that a policy given in code took is never shown as its placeholder's game.
* Exported agents anywhere under the runs folder replay without copying them; the runs
  folder stays the limit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient
from support.bot_files import write_bot_file

from unolab.agents import make_agent
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament
from unolab.web.app import create_app
from unolab.web.settings import ServeConfig


def _tournament(tmp: Path, participants: list[Any], **kwargs: Any) -> None:
    config = {
        "name": "own",
        "participants": participants,
        "deal_sets": 3,
        "games_per_chunk": 6,
        "bootstrap": 10,
        "seed": 9,
        "output_dir": str(tmp / "runs" / "tournaments"),
    }
    run_tournament(load_config(config), progress=False, plots=False, print_table=False, **kwargs)


def _replays(client: TestClient) -> list[Any]:
    """Every game of the run ``tournaments/own``: its seats, and the replay's answer."""
    listing = client.get("/api/runs/games", params={"run": "tournaments/own", "limit": 1000})
    assert listing.status_code == 200, listing.text
    return [
        (
            game["seats"],
            client.get("/api/runs/replay", params={"run": "tournaments/own", "game": i}),
        )
        for i, game in enumerate(listing.json()["games"])
    ]


def _one_line(detail: Any, tmp: Path) -> str:
    assert isinstance(detail, str) and "\n" not in detail and str(tmp) not in detail, detail
    return detail


def test_a_class_seat_replays_when_its_file_is_trusted(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    bot = write_bot_file(tmp_path / "code")
    _tournament(tmp_path, ["mixbot", "random", f"{bot}:RandomLegal"])
    with TestClient(create_app(make_config(tmp_path, trusted_code=(str(bot),)))) as client:
        replays = _replays(client)
    assert len(replays) == 3 * 3 * 2
    for seats, answer in replays:
        assert answer.status_code == 200, answer.text
        replay = answer.json()
        assert replay["matches_log"], (seats, replay["logged"])
        assert replay["names"] == [f"seat {s}: {name}" for s, name in enumerate(seats)]


def test_an_untrusted_class_seat_is_named_and_its_code_never_runs(tmp_path: Path) -> None:
    bot = write_bot_file(tmp_path)
    _tournament(tmp_path, ["mixbot", "random", f"{bot}:RandomLegal"])
    # The same run, naming a file whose code would leave a mark if it ever ran.
    marker = tmp_path / "ran"
    evil = tmp_path / "runs" / "tournaments" / "own" / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\n" + bot.read_text())
    stored_path = tmp_path / "runs" / "tournaments" / "own" / "config.json"
    stored = json.loads(stored_path.read_text())
    stored["config"]["participants"][2] = {"bot": "evil.py:RandomLegal", "name": "RandomLegal"}
    stored_path.write_text(json.dumps(stored))
    with TestClient(create_app(make_config(tmp_path, trusted_code=(str(bot),)))) as client:
        replays = _replays(client)
    for seats, answer in replays:
        assert answer.status_code == 422, answer.text
        detail = _one_line(answer.json()["detail"], tmp_path)
        assert "is the Python class evil.py:RandomLegal" in detail
        assert "--trust-code" in detail
        if "RandomLegal" in seats:
            assert f"seat {seats.index('RandomLegal')} ('RandomLegal') is" in detail
        else:
            assert "participant 'RandomLegal' is" in detail
    assert not marker.exists()
    # A module's class is code too: refused unless its module is trusted.
    stored["config"]["participants"][2] = {"bot": "os:PathLike", "name": "RandomLegal"}
    stored_path.write_text(json.dumps(stored))
    with TestClient(create_app(make_config(tmp_path))) as client:
        answer = client.get("/api/runs/replay", params={"run": "tournaments/own", "game": 0})
    assert answer.status_code == 422
    assert "is the Python class os:PathLike" in _one_line(answer.json()["detail"], tmp_path)


def test_a_seat_played_by_a_policy_given_in_code_is_never_shown_as_its_placeholder(
    tmp_path: Path,
) -> None:
    mine = {"name": "mine", "bot": "random"}
    _tournament(
        tmp_path,
        ["mixbot", "greedy_points", mine],
        overrides={"mine": lambda seed: make_agent("card_ranking", seed)},
    )
    with TestClient(create_app(make_config(tmp_path))) as client:
        replays = _replays(client)
    shown = 0
    for seats, answer in replays:
        if "mine" in seats:
            assert answer.status_code == 422, answer.text
            detail = _one_line(answer.json()["detail"], tmp_path)
            assert f"seat {seats.index('mine')} ('mine') was played by a policy given in" in detail
        else:
            assert answer.status_code == 200, answer.text
            assert answer.json()["matches_log"]  # mixbot and greedy_points draw no random
            shown += 1
    assert shown == 3 * 2


@pytest.mark.parametrize("written", ["absolute", "relative"])
def test_agent_files_elsewhere_under_the_runs_folder_replay_in_place(
    tmp_path: Path, agents_dir: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """A tournament of agents exported into a training run's folder, run from the folder
    above the runs folder (paths as ``runs/...``) or with absolute paths."""
    trained = tmp_path / "runs" / "ppo_tiny"
    trained.mkdir(parents=True)
    for suffix in (".safetensors", ".json"):
        shutil.copy(agents_dir / f"tiny{suffix}", trained / f"tiny{suffix}")
    monkeypatch.chdir(tmp_path)
    agent = str(trained / "tiny.safetensors") if written == "absolute" else "runs/ppo_tiny/tiny"
    _tournament(tmp_path, ["random", "mixbot", agent])
    monkeypatch.chdir(tmp_path / "runs")  # the server's own working folder plays no part
    with TestClient(create_app(make_config(tmp_path))) as client:  # no --agents-dir
        replays = _replays(client)
    for seats, answer in replays[:6]:
        assert answer.status_code == 200, answer.text
        assert answer.json()["matches_log"], seats


def test_trusted_code_is_checked_when_the_server_starts(tmp_path: Path) -> None:
    bot = write_bot_file(tmp_path)
    config = ServeConfig(runs_dir=tmp_path, trusted_code=(str(bot), "json.decoder"))
    assert config.trusted_code == (str(bot.resolve()), "json.decoder")
    with pytest.raises(ValueError, match=r"--trust-code .*gone\.py: no such Python file"):
        ServeConfig(trusted_code=(str(tmp_path / "gone.py"),))
    with pytest.raises(ValueError, match=r"give a Python file .* or a module.s name"):
        ServeConfig(trusted_code=("not a module",))
    broken = tmp_path / "broken.py"
    broken.write_text("class Bot:\n    def act(self:\n")
    with pytest.raises(ValueError, match=r"--trust-code .*broken\.py: not valid Python \(line 2"):
        ServeConfig(trusted_code=(str(broken),))
    with pytest.raises(ValueError, match=r"--trust-code no_such_package\.bots: no module named"):
        ServeConfig(trusted_code=("no_such_package.bots",))
    with pytest.raises(ValueError, match=r"--trust-code json\.no_such_module: no module named"):
        ServeConfig(trusted_code=("json.no_such_module",))


def test_a_trusted_module_is_found_without_running_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "noisy_package"
    package.mkdir()
    (package / "__init__.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    (package / "bots.py").write_text("class Bot:\n    pass\n")
    (package / "broken.py").write_text("def (\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert ServeConfig(trusted_code=("noisy_package.bots",)).trusted_code == ("noisy_package.bots",)
    with pytest.raises(ValueError, match=r"noisy_package\.broken: not valid Python"):
        ServeConfig(trusted_code=("noisy_package.broken",))
    assert not (tmp_path / "ran").exists()
