"""Every bad input of the browser table gets a 4xx with a message and changes no game."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient
from httpx import Response

from unolab.web.app import create_app


@pytest.fixture
def live(client: TestClient) -> dict[str, Any]:
    """A game waiting for the human's move."""
    for seed in range(50):
        view = client.post("/api/games", json={"opponents": ["mixbot"], "seed": seed}).json()
        if view["your_turn"]:
            return view
    raise AssertionError("no seed gives the human a move")


def _illegal(view: dict[str, Any]) -> str:
    legal = {m["action"] for m in view["moves"]}
    return next(a for a in ("catch", "challenge", "keep", "pass", "R0", "W:R") if a not in legal)


MOVES = "/api/games/{id}/moves"
CASES: dict[str, Callable[[TestClient, dict[str, Any]], Response]] = {
    "illegal action (forged)": lambda c, v: c.post(
        MOVES.format(**v), json={"action": _illegal(v), "seq": v["seq"]}
    ),
    "unknown action name": lambda c, v: c.post(
        MOVES.format(**v), json={"action": "G11", "seq": v["seq"]}
    ),
    "replayed or stale move number": lambda c, v: c.post(
        MOVES.format(**v), json={"action": v["moves"][0]["action"], "seq": v["seq"] + 1}
    ),
    "next hand while the hand goes on": lambda c, v: c.post(
        "/api/games/{id}/next-hand".format(**v), json={"seq": v["seq"]}
    ),
    "malformed JSON": lambda c, v: c.post(
        MOVES.format(**v), content=b"{not json", headers={"Content-Type": "application/json"}
    ),
    "action of the wrong type": lambda c, v: c.post(
        MOVES.format(**v), json={"action": 7, "seq": v["seq"]}
    ),
    "missing move number": lambda c, v: c.post(MOVES.format(**v), json={"action": "draw"}),
    "extra field": lambda c, v: c.post(
        MOVES.format(**v), json={"action": "draw", "seq": v["seq"], "seat": 1}
    ),
    "oversized body": lambda c, v: c.post(
        MOVES.format(**v), content=b" " * (2**20 + 1), headers={"Content-Type": "application/json"}
    ),
    "unknown game id": lambda c, v: c.post(
        "/api/games/AAAAAAAAAAAAAAAAAAAAAA/moves", json={"action": "draw", "seq": 0}
    ),
    "unknown agent": lambda c, v: c.post("/api/games", json={"opponents": ["../../etc/passwd"]}),
    "too few opponents": lambda c, v: c.post(
        "/api/games", json={"num_players": 3, "opponents": ["mixbot"]}
    ),
    "learned agent for other rules": lambda c, v: c.post(
        "/api/games", json={"num_players": 3, "opponents": ["folder:tiny", "mixbot"]}
    ),
    "bad switch value": lambda c, v: c.post(
        "/api/games", json={"opponents": ["mixbot"], "switches": {"target_score": 0}}
    ),
    "unknown switch": lambda c, v: c.post(
        "/api/games", json={"opponents": ["mixbot"], "switches": {"cheat": True}}
    ),
    "table size as a switch": lambda c, v: c.post(
        "/api/games", json={"opponents": ["mixbot"], "switches": {"num_players": 3}}
    ),
    "unknown preset": lambda c, v: c.post(
        "/api/games", json={"preset": "house", "opponents": ["mixbot"]}
    ),
    "too many players": lambda c, v: c.post(
        "/api/games", json={"num_players": 11, "opponents": ["mixbot"] * 10}
    ),
    "negative seed": lambda c, v: c.post("/api/games", json={"opponents": ["mixbot"], "seed": -1}),
    "replay file that is not JSON": lambda c, v: c.post("/api/replay-file", content=b"\x00\xff"),
    "replay file that is not a game": lambda c, v: c.post(
        "/api/replay-file", content=b'{"rules": {}, "seed": 1}'
    ),
    "replay file with an illegal move": lambda c, v: c.post(
        "/api/replay-file",
        content=b'{"rules": {"num_players": 2}, "seed": 1, "hands": [["W+4:Q"]]}',
    ),
    "unknown saved game": lambda c, v: c.get("/api/replays/AAAAAAAAAAAAAAAAAAAAAA"),
    "path as a saved game": lambda c, v: c.get("/api/replays/..%2F..%2Fpyproject"),
    "unknown run": lambda c, v: c.get("/api/runs/replay", params={"run": "../..", "game": 0}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_and_changes_nothing(
    client: TestClient, live: dict[str, Any], case: str
) -> None:
    before = client.get(f"/api/games/{live['id']}").json()
    answer = CASES[case](client, live)
    assert 400 <= answer.status_code < 500, (case, answer.status_code, answer.text)
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and detail.strip(), answer.text
    assert client.get(f"/api/games/{live['id']}").json() == before
    assert client.get("/api/options").status_code == 200  # the server keeps serving


def test_a_move_for_a_finished_game_is_refused(client: TestClient) -> None:
    import random

    from conftest import play_to_end

    view = client.post(
        "/api/games", json={"opponents": ["mixbot"], "switches": {"target_score": 1}}
    ).json()
    end = play_to_end(client, view, random.Random(0))
    for body in ({"action": "draw", "seq": end["seq"]}, {"action": "draw", "seq": 0}):
        answer = client.post(f"/api/games/{end['id']}/moves", json=body)
        assert answer.status_code == 409 and "over" in answer.json()["detail"]
    assert (
        client.post(f"/api/games/{end['id']}/next-hand", json={"seq": end["seq"]}).status_code
        == 409
    )
    after = client.get(f"/api/games/{end['id']}").json()
    assert (after["seq"], after["table"]) == (end["seq"], end["table"])


def test_the_game_cap_answers_429(tmp_path: Path) -> None:
    with TestClient(create_app(make_config(tmp_path, max_games=2))) as client:
        body = {"opponents": ["mixbot"]}
        assert [client.post("/api/games", json=body).status_code for _ in range(2)] == [201, 201]
        answer = client.post("/api/games", json=body)
        assert answer.status_code == 429 and "max-games" in answer.json()["detail"]


def test_a_tournament_log_that_is_not_games_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "broken"
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}")
    (run / "games.jsonl").write_text('{"deal": "x"}\n[1]\n')
    with TestClient(create_app(make_config(tmp_path))) as client:
        answer = client.get("/api/runs/replay", params={"run": "broken", "game": 0})
        assert 400 <= answer.status_code < 500 and answer.json()["detail"]
