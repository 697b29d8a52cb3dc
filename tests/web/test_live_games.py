"""Live games survive the server: a real ``uno-lab serve`` process, killed with SIGKILL in
the middle of a hand (and of a match's second hand), restarted on the same games folder,
answers every game as it stood, with no accepted move lost, and the game plays on to its
end. Idle games expire on the operator's schedule, the caps count the games of the file,
and a damaged or foreign file is refused at start in one line, untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient

from unolab.web.app import create_app
from unolab.web.game.live import APPLICATION_ID, LIVE_FILE

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(600)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """``uno-lab serve`` in a process of its own, over ``root``'s folders."""

    def __init__(self, root: Path, *options: str) -> None:
        self.root = root
        self.options = options
        self.port = _free_port()
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> Server:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "unolab.cli",
                "serve",
                "--port",
                str(self.port),
                "--games-dir",
                str(self.root / "games"),
                "--runs-dir",
                str(self.root / "runs"),
                *self.options,
            ],
            cwd=self.root,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 180
        while True:
            try:
                if self.call("GET", "/api/warmup")[1]["ready"]:
                    return self
            except OSError:
                pass
            assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
            assert time.monotonic() < deadline, "uno-lab serve did not answer"
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL: no shutdown code of the server runs."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["X-Seat-Token"] = token
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def ok(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> dict[str, Any]:
        for _ in range(600):
            status, data = self.call(method, path, body, token)
            if status != 503 or "compil" not in data.get("detail", ""):
                assert status in (200, 201), (status, data)
                return data
            time.sleep(0.5)  # the engine still compiles
        raise AssertionError("the engine never got ready")

    def view(self, game_id: str) -> dict[str, Any]:
        return self.ok("GET", f"/api/games/{game_id}?log_from=0&events_after=0")


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        if server.proc is not None and server.proc.poll() is None:
            server.kill()


def _restart(old: Server, started: list[Server], *options: str) -> Server:
    old.kill()
    new = Server(old.root, *(options or old.options))
    started.append(new)
    return new.start()


def _step(server: Server, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One request of play: the next hand, or a random legal move."""
    if view["hand_over"]:
        return server.ok("POST", f"/api/games/{view['id']}/next-hand", {"seq": view["seq"]})
    move = rng.choice(view["moves"])["action"]
    return server.ok("POST", f"/api/games/{view['id']}/moves", {"action": move, "seq": view["seq"]})


def _play_on(
    server: Server, view: dict[str, Any], rng: random.Random, whole_match: bool
) -> dict[str, Any]:
    for _ in range(5000):
        if view["match_over"] or (view["hand_over"] and not whole_match):
            return view
        view = _step(server, view, rng)
    raise AssertionError("the game does not end")


def test_a_killed_server_restarts_with_the_game_mid_hand(
    tmp_path: Path, serving: list[Server]
) -> None:
    server = Server(tmp_path).start()
    serving.append(server)
    rng = random.Random(3)
    view = server.ok("POST", "/api/games", {"opponents": ["mixbot"], "seed": 21})
    for _ in range(4):
        view = _step(server, view, rng)
    assert not view["hand_over"]
    last = view["seq"]  # the move just answered: killed right after it
    before = server.view(view["id"])
    server = _restart(server, serving)
    after = server.view(view["id"])
    assert after == before  # the same hand, seat to act, cards, log, steps: nothing lost
    assert after["seq"] == last and after["your_turn"]
    assert after["table"]["seats"][0]["cards"] == before["table"]["seats"][0]["cards"]

    # A move in flight when the server is killed: answered means kept.
    answered: list[dict[str, Any]] = []
    move = rng.choice(after["moves"])["action"]
    body = {"action": move, "seq": after["seq"]}

    def send() -> None:
        with contextlib.suppress(OSError, AssertionError):  # killed before the answer
            answered.append(server.ok("POST", f"/api/games/{after['id']}/moves", body))

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(0.05)
    server = _restart(server, serving)
    sender.join(timeout=60)
    now = server.view(after["id"])
    if answered:
        assert now["seq"] == answered[0]["seq"] and now["table"] == answered[0]["table"]
    else:
        assert now["seq"] == after["seq"] or now["log"][: len(after["log"])] == after["log"]
    end = _play_on(server, now, rng, whole_match=False)
    assert end["hand_over"] and end["seq"] > last


def test_a_killed_server_restarts_with_the_match_in_its_second_hand(
    tmp_path: Path, serving: list[Server]
) -> None:
    server = Server(tmp_path).start()
    serving.append(server)
    rng = random.Random(8)
    body = {"opponents": ["mixbot", "random"], "num_players": 3, "seed": 5}
    body["switches"] = {"target_score": 150}
    view = server.ok("POST", "/api/games", body)
    view = _play_on(server, view, rng, whole_match=False)
    assert view["hand_over"] and not view["match_over"]
    view = _step(server, view, rng)  # the second hand dealt
    while view["hand_over"] or not view["your_turn"] or view["table"]["turn"] < 2:
        view = _step(server, view, rng)
    assert view["table"]["hand"] == 2
    before = server.view(view["id"])
    server = _restart(server, serving)
    after = server.view(view["id"])
    assert after == before
    assert after["table"]["hand"] == 2 and after["table"]["current"] == 0
    end = _play_on(server, after, rng, whole_match=True)
    assert end["match_over"] and max(end["reveal"]["scores"]) >= 150
    replay = server.ok("GET", f"/api/replays/{view['id']}")
    hands = {frame["table"]["hand"] for frame in replay["frames"]}
    assert {1, 2} <= hands


def test_idle_games_expire_on_schedule_and_the_caps_count_the_file(
    tmp_path: Path, serving: list[Server]
) -> None:
    options = ("--idle-minutes", "5", "--expire-every-seconds", "1", "--max-games-per-client", "2")
    server = Server(tmp_path, *options).start()
    serving.append(server)
    old = server.ok("POST", "/api/games", {"opponents": ["mixbot"], "seed": 1})
    fresh = server.ok("POST", "/api/games", {"opponents": ["mixbot"], "seed": 2})
    status, refused = server.call("POST", "/api/games", {"opponents": ["mixbot"], "seed": 3})
    assert status == 429 and "--max-games-per-client" in refused["detail"]
    server.kill()
    # The cap holds across a restart: the games are in the file, not in a process's memory.
    server = _restart(server, serving)
    status, refused = server.call("POST", "/api/games", {"opponents": ["mixbot"], "seed": 3})
    assert status == 429
    server.kill()
    with sqlite3.connect(tmp_path / "games" / LIVE_FILE) as db:  # left idle for an hour
        db.execute("UPDATE games SET touched = touched - 3600 WHERE id = ?", (old["id"],))
    db.close()
    server = _restart(server, serving)
    time.sleep(3)  # the schedule runs at the start and every second
    status, gone = server.call("GET", f"/api/games/{old['id']}")
    assert status == 410 and "expired" in gone["detail"] and "--idle-minutes" in gone["detail"]
    assert "\n" not in gone["detail"]
    assert server.view(fresh["id"])["seq"] == fresh["seq"]  # a game in use stays
    # The expired game no longer counts: the client may start another.
    assert server.ok("POST", "/api/games", {"opponents": ["mixbot"], "seed": 3})["id"]


@pytest.mark.parametrize("kind", ["garbage", "foreign", "newer"])
def test_a_damaged_or_foreign_file_is_refused_at_start_untouched(tmp_path: Path, kind: str) -> None:
    games = tmp_path / "games"
    games.mkdir()
    path = games / LIVE_FILE
    if kind == "garbage":
        path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE notes (text TEXT)")
            if kind == "newer":
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute("PRAGMA user_version = 99")
        db.close()
    before = path.read_bytes()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "unolab.cli", "serve", "--port", str(_free_port())),
            *("--games-dir", str(games), "--runs-dir", str(tmp_path / "runs")),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in done.stderr, lines
    assert {"garbage": "damaged", "foreign": "another program", "newer": "newer"}[kind] in lines[0]
    assert path.read_bytes() == before
    assert not (games / f"{LIVE_FILE}-wal").exists()


def test_a_game_against_a_language_model_goes_on_after_a_restart(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from test_models import model_folder, play_game

    from unolab.benchmarks.chat_server import Script, chat_server

    with chat_server(models=("test-model",)) as chat:
        served = chat.play(Script())
        folder = model_folder(tmp_path / "agents", chat)
        config = make_config(tmp_path, folder)
        with TestClient(create_app(config)) as client:
            view = client.post("/api/games", json={"opponents": ["folder:my_model"], "seed": 9})
            view = view.json()
            for _ in range(50):
                if view["thinking"] is not None and view["seq"] > 2:
                    break
                if view["thinking"] is not None:
                    path = f"/api/games/{view['id']}/agent-move"
                    view = client.post(path, json={"seq": view["seq"]}).json()
                else:
                    move = view["moves"][0]["action"]
                    path = f"/api/games/{view['id']}/moves"
                    view = client.post(path, json={"action": move, "seq": view["seq"]}).json()
            before = client.get(f"/api/games/{view['id']}?log_from=0&events_after=0").json()
        asked = served.answers
        decisions = tmp_path / "games" / f"{view['id']}.decisions.jsonl"
        recorded = decisions.read_text().splitlines()
        with TestClient(create_app(config)) as client:  # a new server on the same folder
            after = client.get(f"/api/games/{view['id']}?log_from=0&events_after=0").json()
            assert after == before and after["models"] == {"1": "test-model"}
            end = play_game(client, after)
            assert end["hand_over"] and served.answers > asked
        # The model's decisions go on in the same file, after those made before.
        assert decisions.read_text().splitlines()[: len(recorded)] == recorded
        assert len(decisions.read_text().splitlines()) == served.answers


def test_idle_games_expire_on_the_schedule_in_the_server(tmp_path: Path) -> None:
    app = create_app(make_config(tmp_path, idle_minutes=1, expire_every_seconds=1))
    with TestClient(app) as client:
        view = client.post("/api/games", json={"opponents": ["mixbot"], "seed": 1}).json()
        app.app.state.games.get(view["id"]).touched -= 120
        deadline = time.monotonic() + 10
        while len(app.app.state.games) and time.monotonic() < deadline:
            time.sleep(0.2)
        answer = client.get(f"/api/games/{view['id']}")
        assert answer.status_code == 410 and "expired" in answer.json()["detail"]
        answer = client.post(
            f"/api/games/{view['id']}/moves", json={"action": "draw", "seq": view["seq"]}
        )
        assert answer.status_code == 410


def _long_record(moves: int) -> dict[str, Any]:
    """A legal match of at least ``moves`` actions (drawing whenever it may: long hands)."""
    from uno_env.game import UnoGame
    from uno_env.rules import Rules

    rules = Rules(num_players=4, target_score=5000)
    game, rng = UnoGame(rules, seed=3), random.Random(4)
    hands: list[list[str]] = [[]]
    while sum(map(len, hands)) < moves:
        if game.over:
            game.next_hand()
            hands.append([])
            continue
        legal = game.legal_actions()
        action = "draw" if "draw" in legal and rng.random() < 0.7 else rng.choice(legal)
        game.step(action)
        hands[-1].append(action)
    names = ["you", "player_1", "player_2", "player_3"]
    return {"rules": rules.to_dict(), "seed": 3, "names": names, "hands": hands}


def test_a_long_record_replays_in_bounded_pages(tmp_path: Path) -> None:
    from unolab.web.replay.records import PAGE_BYTES, PAGE_FRAMES

    record = _long_record(6000)
    text = json.dumps(record)
    total = sum(len(h) + 1 for h in record["hands"])
    games = tmp_path / "games"
    games.mkdir()
    (games / ("L" * 22 + ".json")).write_text(text)
    with TestClient(create_app(make_config(tmp_path))) as client:
        offset, frames, largest = 0, [], 0
        while offset is not None:
            answer = client.get(f"/api/replays/{'L' * 22}?offset={offset}")
            assert answer.status_code == 200, answer.text
            page = answer.json()
            largest = max(largest, len(answer.content))
            assert page["total"] == total and page["offset"] == offset
            assert 0 < len(page["frames"]) <= PAGE_FRAMES
            frames += page["frames"]
            offset = page["next"]
        # Each page is bounded (one frame past the size at most), and together they are
        # the whole game, in order.
        assert largest <= PAGE_BYTES + 64 * 1024, largest
        assert len(frames) == total
        assert [f["end"] for f in frames].count("hand") >= len(record["hands"]) - 1
        # A frame is the same whichever page it comes in (its sentences too).
        for at in (1, 499, 500, 501, total - 1):
            alone = client.get(f"/api/replays/{'L' * 22}?offset={at}&limit=1").json()
            assert alone["frames"] == [frames[at]], at
        upload = client.post(f"/api/replay-file?offset={total - 2}", content=text).json()
        assert upload["frames"] == frames[-2:] and upload["next"] is None
        past = client.get(f"/api/replays/{'L' * 22}?offset={total}")
        assert past.status_code == 404 and str(total - 1) in past.json()["detail"]
        too_many = client.get(f"/api/replays/{'L' * 22}?limit={PAGE_FRAMES + 1}")
        assert too_many.status_code == 422
    print(f"\n{total} frames from {len(text)} bytes: pages of at most {largest} bytes")


def _table_turn(server: Server, table_id: str, tokens: dict[int, str], rng: random.Random) -> int:
    """One move of whichever person must act (or the next hand); returns the new ``seq``."""
    path = f"/api/tables/{table_id}"
    view = server.ok("GET", path, token=tokens[0])
    if view["hand_over"]:
        view = server.ok("POST", path + "/next-hand", {"seq": view["seq"]}, tokens[0])
        return int(view["seq"])
    seat = view["table"]["current"]
    mine = server.ok("GET", path, token=tokens[seat])
    move = rng.choice(mine["moves"])["action"]
    view = server.ok("POST", path + "/moves", {"action": move, "seq": mine["seq"]}, tokens[seat])
    return int(view["seq"])


def test_a_killed_server_restarts_with_every_seat_of_a_table(
    tmp_path: Path, serving: list[Server]
) -> None:
    server = Server(tmp_path).start()
    serving.append(server)
    rng = random.Random(8)
    host = server.ok(
        "POST",
        "/api/tables",
        {
            "num_players": 3,
            "opponents": ["person", "mixbot"],
            "name": "Ann",
            "stand_in": "random",
            "away_seconds": 600,
            "turn_seconds": 300,
            "seed": 4,
        },
    )
    table_id = host["id"]
    path = f"/api/tables/{table_id}"
    friend = server.ok("POST", path + "/join", {"name": "Bob"})
    tokens = {0: host["token"], 1: friend["token"]}
    server.ok("POST", path + "/start", token=tokens[0])
    for _ in range(6):
        _table_turn(server, table_id, tokens, rng)
    before = {seat: server.ok("GET", path, token=token) for seat, token in tokens.items()}
    watcher = server.ok("GET", path)

    server = _restart(server, serving)
    for seat, token in tokens.items():
        after = server.ok("GET", path, token=token)
        for key in ("seq", "table", "log", "moves", "your_turn"):
            assert after[key] == before[seat][key], key
        assert after["shared"]["seat"] == seat
        assert [p["name"] for p in after["shared"]["people"]] == ["Ann", "Bob"]
        assert after["shared"]["stand_in"] == "random"
        assert (after["shared"]["away_seconds"], after["shared"]["turn_seconds"]) == (600, 300)
    again = server.ok("GET", path)
    assert again["table"] == watcher["table"] and again["log"] == watcher["log"]
    status, refused = server.call("POST", path + "/join", {"name": "Cy"})
    assert status == 409 and "full" in refused["detail"]
    status, refused = server.call("GET", path, token="a-guess")
    assert status == 403 and "token" in refused["detail"]
    seq = before[0]["seq"]
    for _ in range(4):
        seq = _table_turn(server, table_id, tokens, rng)
    assert seq > before[0]["seq"]
