"""The first start of an install: the table answers at once while the engine compiles
behind it, says how far it is, and deals only once it is ready (nothing compiles here: the
warm-up is a stand-in that the tests step through)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config
from fastapi.testclient import TestClient
from support.warmup import PARTS, FakeWarmup, wait_for

from unolab.warmup import WARMUP_SECONDS, WarmupStatus
from unolab.web import warming
from unolab.web.app import create_app
from unolab.web.warming import start_warmup

ENGINE_ROUTES = [
    ("post", "/api/games", {"opponents": ["mixbot"]}),
    ("post", "/api/games/nosuchgame/moves", {"action": "draw", "seq": 0}),
    ("post", "/api/games/nosuchgame/next-hand", {"seq": 0}),
    ("get", "/api/replays/nosuchgame", None),
    ("post", "/api/replay-file", {"hands": []}),
    ("get", "/api/runs/replay?run=tournaments/x&game=0", None),
]
"""Every route that runs the engine, with a request it would otherwise answer."""


def _ask(client: TestClient, method: str, path: str, body: object) -> Any:
    return client.post(path, json=body) if method == "post" else client.get(path)


def test_a_compiled_engine_is_ready_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeWarmup()
    monkeypatch.setattr(warming, "is_warm", lambda: True)
    monkeypatch.setattr(warming, "warm_up", fake.warm_up)
    said: list[str] = []
    status = start_warmup(said.append)
    assert status.finished and not said and fake.started == 0  # nothing to compile, no word
    for app_status in (status, None):  # None: an app made without a warm-up (tests, embedding)
        with TestClient(create_app(make_config(tmp_path), warmup=app_status)) as client:
            state = client.get("/api/warmup").json()
            assert (state["ready"], state["playable"], state["error"]) == (True, True, "")
            assert client.post("/api/games", json={"opponents": ["mixbot"]}).status_code == 201


def test_the_table_answers_while_the_engine_compiles_and_deals_when_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeWarmup()
    fake.install(monkeypatch)
    said: list[str] = []
    status = start_warmup(said.append)
    assert said == [
        f"compiling the game engine once for this install: about {WARMUP_SECONDS / 60:.1f} "
        "minutes (later starts take seconds); the page shows the progress and deals as soon "
        "as it can"
    ]
    wait_for(lambda: status.current == PARTS[0], "the first part")
    with TestClient(create_app(make_config(tmp_path), warmup=status)) as client:
        # The page and what it needs to set up a game answer at once.
        assert client.get("/").status_code == 200
        assert client.get("/api/options").status_code == 200
        assert client.get("/api/replays").json() == []
        state = client.get("/api/warmup").json()
        assert (state["ready"], state["playable"], state["error"]) == (False, False, "")
        assert (state["done"], state["total"], state["current"]) == (0, 3, PARTS[0])
        assert state["estimate_s"] == WARMUP_SECONDS and 0 <= state["elapsed_s"] < 60
        # Whatever runs the engine is refused with one line and a time to come back.
        for method, path, body in ENGINE_ROUTES:
            answer = _ask(client, method, path, body)
            assert answer.status_code == 503, (path, answer.text)
            assert answer.headers["retry-after"] == "2"
            detail = answer.json()["detail"]
            assert f"step 1 of 3: {PARTS[0]}, " in detail and "\n" not in detail, detail
        fake.step()
        wait_for(lambda: status.done == 1, "the first part to finish")
        state = client.get("/api/warmup").json()
        assert (state["playable"], state["done"], state["current"]) == (False, 1, PARTS[1])
        detail = client.post("/api/games", json={}).json()["detail"]
        assert detail.startswith("the game engine is being compiled (once for this install)")
        assert f"step 2 of 3: {PARTS[1]}" in detail
        # Once all but the searches is compiled, every game without a search is dealt ...
        fake.step()
        wait_for(lambda: len(said) == 2, "the line saying games can be dealt")
        assert said[1] == (
            "the game engine is ready to play; the searches (pimc, ismcts) are still compiling"
        )
        state = client.get("/api/warmup").json()
        assert (state["ready"], state["playable"], state["current"]) == (False, True, PARTS[2])
        answer = client.post("/api/games", json={"opponents": ["mixbot"], "seed": 3})
        assert answer.status_code == 201, answer.text
        view = answer.json()
        move = {"action": view["moves"][0]["action"], "seq": view["seq"]}
        assert client.post(f"/api/games/{view['id']}/moves", json=move).status_code == 200
        assert client.get("/api/replays/nosuchgame").status_code == 404  # past the gate
        # ... while a game against a search, and a tournament's replay, wait for them.
        for search in ("pimc", "ismcts"):
            answer = client.post("/api/games", json={"opponents": [search]})
            assert answer.status_code == 503 and answer.headers["retry-after"] == "2"
            detail = answer.json()["detail"]
            assert detail.startswith(f"{search} needs the searches, which are being compiled")
            assert f"step 3 of 3: {PARTS[2]}" in detail
        answer = client.get("/api/runs/replay?run=tournaments/x&game=0")
        assert answer.status_code == 503 and "may include one" in answer.json()["detail"]
        # A search with an agent that does not fit the table: refused for the searches
        # first, for the agent once they are compiled (so nothing compiles here).
        unfit = {"num_players": 3, "opponents": ["pimc", "shipped:ppo_official_2p"]}
        assert client.post("/api/games", json=unfit).status_code == 503
        fake.step()
        wait_for(lambda: len(said) == 3, "the line saying it is done")
        assert said[2].startswith("the game engine is compiled (") and said[2].endswith(" s)")
        state = client.get("/api/warmup").json()
        assert (state["ready"], state["done"], state["current"]) == (True, 3, "")
        answer = client.post("/api/games", json=unfit)
        assert answer.status_code == 422 and "shipped:ppo_official_2p" in answer.text
        assert client.get("/api/runs/replay?run=tournaments/x&game=0").status_code == 404
    assert fake.started == 1


def test_a_failed_compile_is_reported_and_the_table_plays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeWarmup(fail=PARTS[2])
    fake.install(monkeypatch)
    said: list[str] = []
    status = start_warmup(said.append)
    fake.step(2)
    wait_for(lambda: len(said) == 2, "the line saying games can be dealt")
    fake.step()
    wait_for(lambda: len(said) == 3, "the line saying it failed")
    expected = f"compiling {PARTS[2]} failed: MemoryError: out of memory"
    assert said[2] == f"error: {expected}; games that need it may fail"
    with TestClient(create_app(make_config(tmp_path), warmup=status)) as client:
        state = client.get("/api/warmup").json()
        assert (state["ready"], state["playable"], state["error"]) == (False, True, expected)
        assert state["done"] == 2
        # The parts that compiled still play: the deal is not refused.
        assert client.post("/api/games", json={"opponents": ["mixbot"]}).status_code == 201


def test_uno_lab_serve_starts_the_server_without_waiting_for_the_engine(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import uvicorn

    from unolab import cli
    from unolab import warmup as warmup_module

    def no_terminal_compile(*args: object, **kwargs: object) -> bool:
        raise AssertionError("uno-lab serve compiled before serving")

    fake = FakeWarmup()
    fake.install(monkeypatch)
    monkeypatch.setattr(warmup_module, "ensure_compiled", no_terminal_compile)
    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.append(app))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    assert cli.main(["serve", "--port", str(port), "--allowed-host", "testserver"]) == 0
    out, err = capsys.readouterr()
    assert f"http://127.0.0.1:{port}/" in out
    assert "uno-lab serve: compiling the game engine once for this install" in err
    (app,) = served
    with TestClient(app) as client:  # the app uvicorn was given reports the running warm-up
        assert client.get("/api/warmup").json()["ready"] is False
        fake.step(3)
        wait_for(lambda: client.get("/api/warmup").json()["ready"], "the warm-up to end")
    assert fake.started == 1


def test_the_progress_reads_in_words() -> None:
    status = WarmupStatus(total=3, done=1, current=PARTS[1])
    words = warming.progress_words(status)
    assert words.startswith(f"step 2 of 3: {PARTS[1]}, ")
    assert words.endswith(f" s of about {WARMUP_SECONDS} s")


def test_only_the_searches_come_after_what_every_game_needs() -> None:
    """The searches are the last part: a game without them is dealt before they compile."""
    assert PARTS[-1] == warming.SEARCH_PART
    assert not warming.playable(WarmupStatus())  # nothing is known yet
    assert not warming.playable(WarmupStatus(total=3, done=len(PARTS) - 2))
    assert warming.playable(WarmupStatus(total=3, done=len(PARTS) - 1))
    assert warming.playable(WarmupStatus(finished=True, error="compiling the rules failed"))
