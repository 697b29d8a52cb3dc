"""Tables for several people: a host opens one, friends take seats by the link, each seat
sees its own cards and public information only (as the engine's observation of that seat
does), spectators see public information only, an away player's seat is played by the
stand-in until they are back, a person's turn runs out into the seat's default move, and
everything (seats, hashed tokens, the host's settings) survives a restart.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient

from uno_env.text.view import seat_view
from unolab.web.app import create_app
from unolab.web.game import seats as seating
from unolab.web.game.live import LIVE_FILE, LiveStore
from unolab.web.game.seats import hash_token

pytestmark = pytest.mark.timeout(600)

FOUR = {
    "preset": "official",
    "num_players": 4,
    "opponents": ["person", "mixbot", "random"],
    "name": "Ann",
    "seed": 7,
}


class Clock:
    """The tables' clock, moved by hand."""

    def __init__(self) -> None:
        self.at = 1_000_000.0

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The presence and turn timers' clock, moved by the test."""
    fake = Clock()
    monkeypatch.setattr(seating, "now", fake)
    return fake


@pytest.fixture
def server(tmp_path: Path, agents_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_config(tmp_path, agents_dir))) as test_client:
        yield test_client


def _open(client: TestClient, **changes: Any) -> dict[str, Any]:
    answer = client.post("/api/tables", json={**FOUR, **changes})
    assert answer.status_code == 201, answer.text
    table: dict[str, Any] = answer.json()
    return table


def _join(client: TestClient, table_id: str, name: str, **more: Any) -> dict[str, Any]:
    answer = client.post(f"/api/tables/{table_id}/join", json={"name": name, **more})
    assert answer.status_code == 200, answer.text
    seat: dict[str, Any] = answer.json()
    return seat


def _as(token: str | None) -> dict[str, str]:
    return {} if token is None else {"X-Seat-Token": token}


def _look(client: TestClient, table_id: str, token: str | None, **query: Any) -> dict[str, Any]:
    answer = client.get(f"/api/tables/{table_id}", params=query, headers=_as(token))
    assert answer.status_code == 200, answer.text
    view: dict[str, Any] = answer.json()
    return view


def _post(
    client: TestClient, path: str, token: str | None, body: Any = None, status: int = 200
) -> dict[str, Any]:
    answer = client.post(path, json=body, headers=_as(token))
    assert answer.status_code == status, answer.text
    data: dict[str, Any] = answer.json()
    return data


def _refused(client: TestClient, method: str, path: str, status: int, **kw: Any) -> str:
    answer = client.request(method, path, **kw)
    assert answer.status_code == status, answer.text
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and "Traceback" not in detail
    return detail


def _cards_drawn_by_others(line: str, seat: int | None) -> bool:
    """A sentence naming the cards another seat drew (``Bob draws 2: G5 R1``); a seat hears
    its own (``you draw 2: G5 R1``), a spectator nobody's."""
    if re.search(r"\bdraws \d+: ", line):
        return True
    return seat is None and re.search(r"\bdraw \d+: ", line) is not None


def _check_private(client: TestClient, view: dict[str, Any], seat: int | None) -> None:
    """The JSON ``seat`` received holds its own hand and public information only: the same
    as the engine's own observation of that seat."""
    game = _games(client).get(view["id"])
    state = game.game.state
    over = view["hand_over"]
    text = json.dumps(view)
    for shown in view["table"]["seats"]:
        if over:
            continue
        if seat is not None and shown["seat"] == seat:
            expected = seat_view(game.rules, state, seat)
            assert shown["cards"] == expected["hand"]
            legal = expected["legal_moves"] if view["your_turn"] else []
            assert [m["action"] for m in view["moves"]] == legal
        else:
            assert shown["cards"] is None, (seat, shown)
    if seat is None:
        assert view["moves"] == [] and not view["your_turn"]
        assert view["table"]["drawn"] is None
    lines = list(view["log"]) + [line for e in view["events"] for line in e["lines"]]
    for line in lines:
        assert not _cards_drawn_by_others(line, seat), (seat, line)
    # No other seat's hand, as the engine holds it, is in the answer (a hand of 3+ cards
    # written out in order would be a leak).
    if not over:
        for other in range(game.rules.num_players):
            if other == seat:
                continue
            hand = seat_view(game.rules, state, other)["hand"]
            if len(hand) >= 3:
                assert json.dumps(hand) not in text


@pytest.fixture
def client(server: TestClient) -> TestClient:
    return server


def _games(client: TestClient) -> Any:
    """The server's games in play (to ask the engine's own view of a seat)."""
    return client.app.app.state.games  # type: ignore[attr-defined]


def test_a_table_is_opened_joined_and_watched(client: TestClient) -> None:
    host = _open(client)
    table_id, host_token = host["id"], host["token"]
    assert host["shared"]["seat"] == 0 and host["shared"]["host"]
    assert [p["state"] for p in host["shared"]["people"]] == ["here", "open"]
    assert not host["shared"]["started"] and host["moves"] == []
    friend = _join(client, table_id, "Bob")
    assert friend["shared"]["seat"] == 1 and not friend["shared"]["host"]
    assert friend["token"] != host_token and len(friend["token"]) >= 32
    full = _refused(client, "POST", f"/api/tables/{table_id}/join", 409, json={"name": "Cy"})
    assert "full" in full
    # Only the host starts it.
    assert "host" in _refused(
        client, "POST", f"/api/tables/{table_id}/start", 403, headers=_as(friend["token"])
    )
    _post(client, f"/api/tables/{table_id}/start", host_token)
    spectator = _look(client, table_id, None)
    assert spectator["shared"]["seat"] is None
    _check_private(client, spectator, None)
    names = [s["name"] for s in spectator["table"]["seats"]]
    assert names[:2] == ["Ann", "Bob"] and names[2].startswith("player_2")
    for view, seat in ((_look(client, table_id, host_token), 0), (friend, 1)):
        _check_private(client, view, seat)
    mine = _look(client, table_id, friend["token"])
    assert mine["table"]["seats"][1]["name"] == "you"


def test_bad_requests_get_one_line(client: TestClient) -> None:
    host = _open(client)
    table_id, token = host["id"], host["token"]
    path = f"/api/tables/{table_id}"
    assert "token" in _refused(client, "GET", path, 403, headers=_as("not-a-token"))
    assert "token" in _refused(
        client, "POST", path + "/moves", 403, json={"action": "draw", "seq": 0}
    )
    assert "started" in _refused(
        client, "POST", path + "/moves", 409, json={"action": "draw", "seq": 0}, headers=_as(token)
    )
    assert "taken" in _refused(client, "POST", path + "/join", 409, json={"seat": 0})
    assert "not a seat for people" in _refused(
        client, "POST", path + "/join", 422, json={"seat": 2}
    )
    assert "'you'" in _refused(client, "POST", path + "/join", 422, json={"name": "You"})
    assert "already" in _refused(client, "POST", path + "/join", 422, json={"name": "ann"})
    assert "already" in _refused(client, "POST", path + "/join", 409, headers=_as(token), json={})
    # The game-for-one routes never show a table (they would show seat 0's cards).
    assert "several people" in _refused(client, "GET", f"/api/games/{table_id}", 403)
    assert "several people" in _refused(
        client, "POST", f"/api/games/{table_id}/moves", 403, json={"action": "draw", "seq": 0}
    )
    assert "no game" in _refused(client, "GET", "/api/tables/nosuchtable", 404)
    one = client.post("/api/games", json={"opponents": ["mixbot"], "num_players": 2}).json()
    assert "no table" in _refused(client, "GET", f"/api/tables/{one['id']}", 404)
    # Opening a table: a seat for a person, a stand-in that is an agent, timeouts in range.
    alone = {**FOUR, "opponents": ["mixbot", "mixbot", "random"]}
    assert "person" in _refused(client, "POST", "/api/tables", 422, json=alone)
    assert "stand_in" in _refused(
        client, "POST", "/api/tables", 422, json={**FOUR, "stand_in": "nobody"}
    )
    assert "away_seconds" in _refused(
        client, "POST", "/api/tables", 422, json={**FOUR, "away_seconds": 5}
    )
    assert "turn_seconds" in _refused(
        client, "POST", "/api/tables", 422, json={**FOUR, "turn_seconds": 100000}
    )


def _play(
    client: TestClient, table_id: str, tokens: dict[int, str], rng: random.Random, moves: int
) -> dict[str, Any]:
    """Play ``moves`` random moves of whichever seat must act, checking every answer."""
    view = _look(client, table_id, tokens[0])
    for _ in range(moves):
        if view["match_over"]:
            break
        if view["hand_over"]:
            view = _post(
                client, f"/api/tables/{table_id}/next-hand", tokens[0], {"seq": view["seq"]}
            )
            continue
        current = view["table"]["current"]
        assert current in tokens, view["table"]
        mine = _look(client, table_id, tokens[current])
        _check_private(client, mine, current)
        move = rng.choice(mine["moves"])
        view = _post(
            client,
            f"/api/tables/{table_id}/moves",
            tokens[current],
            {"action": move["action"], "seq": mine["seq"]},
        )
        _check_private(client, view, current)
        # The other seats and a spectator see the move without their own request changing
        # anything, and still see no one else's cards.
        for seat, token in tokens.items():
            _check_private(client, _look(client, table_id, token, events_after=0), seat)
        _check_private(client, _look(client, table_id, None, events_after=0), None)
    return view


def test_each_seat_sees_only_its_own_cards_through_a_hand(client: TestClient) -> None:
    host = _open(client, turn_seconds=600)
    table_id = host["id"]
    friend = _join(client, table_id, "Bob")
    tokens = {0: host["token"], 1: friend["token"]}
    _post(client, f"/api/tables/{table_id}/start", tokens[0])
    view = _play(client, table_id, tokens, random.Random(3), 60)
    assert view["seq"] > 10


def test_the_version_says_when_anything_changed(client: TestClient) -> None:
    host = _open(client)
    table_id, token = host["id"], host["token"]
    unchanged = _look(client, table_id, token, version=host["version"])
    assert unchanged == {"version": host["version"], "changed": False, "turn_left": None}
    _join(client, table_id, "Bob")
    after = _look(client, table_id, token, version=host["version"])
    assert after["version"] != host["version"] and after["shared"]["people"][1]["name"] == "Bob"


def test_an_away_player_is_replaced_by_the_stand_in_and_comes_back(
    client: TestClient, clock: Clock
) -> None:
    host = _open(client, away_seconds=60, turn_seconds=600, stand_in="mixbot")
    table_id = host["id"]
    friend = _join(client, table_id, "Bob")
    _post(client, f"/api/tables/{table_id}/start", host["token"])
    seq = _look(client, table_id, host["token"])["seq"]
    # Bob stops asking; Ann goes on asking (her page polls).
    for _ in range(4):
        clock.at += 20
        view = _look(client, table_id, host["token"])
    assert view["shared"]["people"][1]["state"] == "away"
    assert view["shared"]["stand_in"] == "mixbot"
    # Bob's turns are played by the stand-in: the game never waits for him.
    assert view["table"]["current"] != 1 or view["hand_over"]
    if view["your_turn"]:
        view = _post(
            client,
            f"/api/tables/{table_id}/moves",
            host["token"],
            {"action": view["moves"][0]["action"], "seq": view["seq"]},
        )
    assert view["seq"] > seq
    # Bob's next request takes his seat back.
    back = _look(client, table_id, friend["token"])
    assert back["shared"]["people"][1]["state"] == "here"
    assert back["shared"]["seat"] == 1


def test_a_turn_that_runs_out_plays_the_default_move(client: TestClient, clock: Clock) -> None:
    host = _open(client, away_seconds=3600, turn_seconds=30)
    table_id = host["id"]
    friend = _join(client, table_id, "Bob")
    tokens = {0: host["token"], 1: friend["token"]}
    start = _post(client, f"/api/tables/{table_id}/start", tokens[0])
    current = start["table"]["current"]
    assert current in tokens
    waiting = _look(client, table_id, tokens[current])
    assert 0 < waiting["shared"]["turn_left"] <= 30
    legal = seat_view_of(client, table_id, current)["legal_moves"]
    clock.at += 31
    other = 1 - current
    after = _look(client, table_id, tokens[other], events_after=waiting["seq"])
    assert after["seq"] > waiting["seq"]
    first = after["events"][0]
    assert first["seat"] == current
    assert first["action"] == (
        "draw" if "draw" in legal else "keep" if "keep" in legal else legal[0]
    )
    # The late move is refused in one line.
    late = _refused(
        client,
        "POST",
        f"/api/tables/{table_id}/moves",
        409,
        json={"action": waiting["moves"][0]["action"], "seq": waiting["seq"]},
        headers=_as(tokens[current]),
    )
    assert "time ran out" in late


def seat_view_of(client: TestClient, table_id: str, seat: int) -> dict[str, Any]:
    game = _games(client).get(table_id)
    view: dict[str, Any] = seat_view(game.rules, game.game.state, seat)
    return view


def test_one_person_at_a_table_has_no_turn_timer(client: TestClient, clock: Clock) -> None:
    host = _open(client, turn_seconds=10)
    start = _post(client, f"/api/tables/{host['id']}/start", host["token"])
    assert start["shared"]["turn_left"] is None
    clock.at += 100
    view = _look(client, host["id"], host["token"])
    assert view["seq"] == start["seq"]


def test_a_restarted_server_keeps_every_seat(tmp_path: Path, agents_dir: Path) -> None:
    config = make_config(tmp_path, agents_dir)
    rng = random.Random(5)
    with TestClient(create_app(config)) as first:
        host = _open(first, turn_seconds=600, stand_in="random", away_seconds=90)
        table_id = host["id"]
        friend = _join(first, table_id, "Bob")
        tokens = {0: host["token"], 1: friend["token"]}
        _post(first, f"/api/tables/{table_id}/start", tokens[0])
        before = _play(first, table_id, tokens, rng, 8)
        seen = {seat: _look(first, table_id, token) for seat, token in tokens.items()}
    # The file keeps hashes of the tokens, never the tokens.
    raw = (tmp_path / "games" / LIVE_FILE).read_bytes()
    wal = tmp_path / "games" / (LIVE_FILE + "-wal")
    raw += wal.read_bytes() if wal.exists() else b""
    for token in tokens.values():
        assert token.encode() not in raw
        assert hash_token(token).encode() in raw
    with TestClient(create_app(config)) as second:
        for seat, token in tokens.items():
            again = _look(second, table_id, token)
            assert again["seq"] == before["seq"] == seen[seat]["seq"]
            assert again["table"] == seen[seat]["table"]
            assert again["log"] == seen[seat]["log"]
            assert again["shared"]["stand_in"] == "random"
            assert again["shared"]["away_seconds"] == 90
            assert again["shared"]["started"]
        assert "full" in _refused(
            second, "POST", f"/api/tables/{table_id}/join", 409, json={"name": "Cy"}
        )
        _play(second, table_id, tokens, rng, 8)


SCHEMA_1 = """
CREATE TABLE games (
    id TEXT PRIMARY KEY, client TEXT NOT NULL, rules TEXT NOT NULL, seed TEXT NOT NULL,
    agents TEXT NOT NULL, labels TEXT NOT NULL, setup TEXT NOT NULL,
    hands INTEGER NOT NULL DEFAULT 1, match_over INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL, touched REAL NOT NULL, status TEXT NOT NULL DEFAULT 'live'
);
CREATE INDEX games_by_status ON games (status, client, touched);
CREATE TABLE moves (
    game TEXT NOT NULL, seq INTEGER NOT NULL, hand INTEGER NOT NULL, action TEXT NOT NULL,
    PRIMARY KEY (game, seq)
) WITHOUT ROWID;
"""
"""The live-games file as uno-lab wrote it before tables for several people."""


def test_a_file_of_the_older_schema_is_upgraded_and_its_games_play_on(
    tmp_path: Path, agents_dir: Path
) -> None:
    config = make_config(tmp_path, agents_dir)
    with TestClient(create_app(config)) as first:
        view = first.post("/api/games", json={"opponents": ["mixbot"], "num_players": 2}).json()
    path = tmp_path / "games" / LIVE_FILE
    # The same game in a file of schema 1.
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT * FROM games").fetchall()
        moves = db.execute("SELECT * FROM moves").fetchall()
    path.unlink()
    for extra in ("-wal", "-shm"):
        (tmp_path / "games" / (LIVE_FILE + extra)).unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_1 + "PRAGMA application_id = 1431195468; PRAGMA user_version = 1;")
        db.executemany(f"INSERT INTO games VALUES ({','.join('?' * 12)})", rows)
        db.executemany("INSERT INTO moves VALUES (?, ?, ?, ?)", moves)
    store = LiveStore(path)
    stored = store.load(view["id"])
    store.close()
    assert stored is not None and stored.shared is None
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    with TestClient(create_app(config)) as second:
        again = second.get(f"/api/games/{view['id']}").json()
        assert again["seq"] == view["seq"] and again["table"] == view["table"]


def test_a_finished_game_takes_no_one_and_no_move(client: TestClient) -> None:
    host = _open(
        client,
        num_players=3,
        opponents=["person", "person"],
        switches={"target_score": 1},
        turn_seconds=600,
    )
    table_id = host["id"]
    friend = _join(client, table_id, "Bob")
    tokens = {0: host["token"], 1: friend["token"]}
    _post(client, f"/api/tables/{table_id}/start", tokens[0])
    # Seat 2 stays open: the stand-in plays it.
    view = _play(client, table_id, tokens, random.Random(1), 2000)
    assert view["match_over"], "the match did not end"
    path = f"/api/tables/{table_id}"
    assert "over" in _refused(client, "POST", path + "/join", 409, json={"name": "Cy"})
    assert "over" in _refused(
        client,
        "POST",
        path + "/moves",
        409,
        json={"action": "draw", "seq": view["seq"]},
        headers=_as(tokens[0]),
    )
    assert "over" in _refused(
        client, "POST", path + "/next-hand", 409, json={"seq": view["seq"]}, headers=_as(tokens[1])
    )


def test_a_friend_may_start_a_table_whose_host_is_away(client: TestClient, clock: Clock) -> None:
    host = _open(client, away_seconds=60)
    table_id = host["id"]
    friend = _join(client, table_id, "Bob")
    path = f"/api/tables/{table_id}/start"
    assert "host" in _refused(client, "POST", path, 403, headers=_as(friend["token"]))
    clock.at += 61
    started = _post(client, path, friend["token"])
    assert started["shared"]["started"]
    assert started["shared"]["people"][0]["state"] == "away"
