"""Human games as data: the serve option, the player's choice per game, the record's data
fields and the Lab's results of people against each agent."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config, play_to_end
from fastapi.testclient import TestClient
from support.kept_games import kept_record, write_kept_games

from uno_env.rules import load_rules
from unolab.agents.arena import wilson_interval
from unolab.human_games import human_results, kept_games
from unolab.records import RecordError, load_record, load_record_data
from unolab.web.app import create_app
from unolab.web.server import build_parser
from unolab.web.settings import ServeConfig


@pytest.fixture
def collecting(tmp_path: Path) -> Iterator[TestClient]:
    """A server that offers each player to keep their game as data."""
    config = make_config(tmp_path, collect_human_games=True)
    with TestClient(create_app(config)) as test_client:
        yield test_client


def _played(client: TestClient, tmp_path: Path, **settings: Any) -> dict[str, Any]:
    """Deal a one-hand match against mixbot, play it out, and return its saved record."""
    answer = client.post(
        "/api/games",
        json={"opponents": ["mixbot"], "seed": 3, "switches": {"target_score": 1}, **settings},
    )
    assert answer.status_code == 201, answer.text
    view = play_to_end(client, answer.json(), random.Random(2))
    assert view["match_over"]
    path = tmp_path / "games" / f"{view['id']}.json"
    load_record(path)  # the saved game is a record that loads
    return dict(json.loads(path.read_text()))


def test_collection_is_off_by_default(client: TestClient, tmp_path: Path) -> None:
    assert ServeConfig().collect_human_games is False
    assert build_parser().parse_args([]).collect_human_games is False
    assert client.get("/api/options").json()["collect_human_games"] is False
    refused = client.post("/api/games", json={"opponents": ["mixbot"], "keep_as_data": True})
    assert refused.status_code == 422
    assert "--collect-human-games" in refused.json()["detail"]
    record = _played(client, tmp_path)
    assert not {"keep_as_data", "think_ms", "agent_names"} & set(record)
    assert kept_games(tmp_path / "games") == []


def test_the_serve_option_turns_it_on(collecting: TestClient) -> None:
    assert build_parser().parse_args(["--collect-human-games"]).collect_human_games is True
    assert collecting.get("/api/options").json()["collect_human_games"] is True
    with pytest.raises(ValueError, match="--collect-human-games 'yes'"):
        ServeConfig(collect_human_games="yes")  # type: ignore[arg-type]


def test_a_kept_game_records_the_decisions_and_their_times(
    collecting: TestClient, tmp_path: Path
) -> None:
    record = _played(collecting, tmp_path, keep_as_data=True)
    assert record["keep_as_data"] is True
    assert record["agents"] == [None, "mixbot"] and record["agent_names"] == [None, "mixbot"]
    think, hands = record["think_ms"], record["hands"]
    assert [len(t) for t in think] == [len(h) for h in hands]
    timed = [ms for times in think for ms in times if ms is not None]
    assert timed and all(isinstance(ms, int) and ms >= 0 for ms in timed)
    assert any(ms is None for times in think for ms in times)  # mixbot's moves: untimed
    assert not any(key in json.dumps(record) for key in ("testclient", "client"))  # no address
    [game] = kept_games(tmp_path / "games")
    assert game.agent_names == [None, "mixbot"]


@pytest.mark.parametrize("choice", [{"keep_as_data": False}, {}])
def test_a_declined_game_is_not_kept_as_data(
    collecting: TestClient, tmp_path: Path, choice: dict[str, Any]
) -> None:
    """Not ticking the box (or unticking it) declines: the choice is recorded, no times."""
    record = _played(collecting, tmp_path, **choice)
    assert record["keep_as_data"] is False
    assert "think_ms" not in record and "agent_names" not in record
    assert kept_games(tmp_path / "games") == []


def test_a_table_for_several_people_is_never_kept(collecting: TestClient) -> None:
    answer = collecting.post(
        "/api/tables", json={"opponents": ["person"], "keep_as_data": True, "name": "ann"}
    )
    assert answer.status_code == 201, answer.text
    assert "keep_as_data" not in answer.json().get("setup", {})


def test_old_records_load_and_bad_data_fields_are_named(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2)
    record, _ = kept_record(rules, 4, ["mixbot"], keep=None, match=False)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(record))
    assert load_record_data(old)[4].get("think_ms") is None
    record, _ = kept_record(rules, 4, ["mixbot"], match=False)
    for key, value, named in [
        ("keep_as_data", "yes", "'keep_as_data' must be true or false"),
        ("think_ms", [[1]], "'think_ms' must hold, for each hand, one entry per action"),
        ("think_ms", [[-1] * len(record["hands"][0])], "think_ms hand 1 action 1"),
        ("agent_names", ["x"], "'agent_names' must be a list of 2 agent names"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**record, key: value}))
        with pytest.raises(RecordError, match=named):
            load_record(bad)


def test_the_lab_shows_people_against_each_agent(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2, target_score=60)
    three = load_rules("official", num_players=3, target_score=60)
    made = [kept_record(rules, seed, ["mixbot"]) for seed in range(6)]
    made += [kept_record(three, seed, ["mixbot", "randombot"]) for seed in range(6, 9)]
    made.append(kept_record(three, 9, ["mixbot", "mixbot"]))  # counts once for mixbot
    unfinished = kept_record(rules, 20, ["mixbot"], match=False)[0]
    unfinished["match_over"] = False
    declined = kept_record(rules, 21, ["mixbot"], keep=False)[0]
    write_kept_games(tmp_path / "games", [r for r, _ in made] + [unfinished, declined])
    mix_wins = sum(won for _, won in made)
    random_wins = sum(won for _, won in made[6:9])
    assert 0 < mix_wins < 10  # the set holds wins and losses
    expected = {
        "mixbot": (10, mix_wins, *wilson_interval(mix_wins, 10)),
        "randombot": (3, random_wins, *wilson_interval(random_wins, 3)),
    }
    with TestClient(create_app(make_config(tmp_path))) as client:
        shown = client.get("/api/lab/humans").json()
    assert [row["agent"] for row in shown] == ["mixbot", "randombot"]
    for row in shown:
        games, wins, low, high = expected[row["agent"]]
        assert (row["games"], row["human_wins"]) == (games, wins)
        assert row["win_rate"] == pytest.approx(wins / games)
        assert (row["low"], row["high"]) == pytest.approx((low, high))
    assert human_results(tmp_path / "nowhere") == []
