"""Language models at the browser table, against a real chat-completions server on 127.0.0.1.

* The spec files of ``--agents-dir`` are offered by id (``folder:<name>``), with the model
  and the endpoint's host, never the key; one that does not load is listed as unavailable
  with its reason in one line.
* A request that carries an address, a path or a spec is refused, and no request reaches
  any host but the one the operator's spec file names.
* A game against a model is played to its end; the model's move is asked apart
  (``agent-move``), and a slow model does not hold up the other tables' bots.
* An endpoint that refuses (nothing listening, an unknown model, a refused key) is one
  line on the page, the seat plays its fallback move and the game goes on.
* The replay of a web game and of a tournament game shows what the model wrote; a
  tournament replay asks no model.
* The Lab shows a model's telemetry.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config, play_to_end
from fastapi.testclient import TestClient
from support.optional import require

from unolab.benchmarks.chat_server import ChatServer, Script, chat_server, legal_moves, silent_port
from unolab.web.app import create_app

require("openai", "language-model agents (pip install -e .[llm])")

SCRIPT_ANSWER = "<script>window.pwned = 1</script><b>bold</b>\nFinal answer: "
"""What a hostile model writes before its move: the page must show it as text."""


def hostile(text: str) -> str:
    """The first legal move, after markup."""
    return SCRIPT_ANSWER + legal_moves(text)[0][1]


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with chat_server(models=("test-model",)) as running:
        yield running


@pytest.fixture(scope="module")
def intruder() -> Iterator[ChatServer]:
    """A second server, which no request may reach: no spec file names it."""
    with chat_server(models=("test-model",)) as running:
        yield running


def write_spec(folder: Path, name: str, **keys: Any) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text("llm:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in keys.items()))
    return path


def model_folder(folder: Path, server: ChatServer) -> Path:
    """An agents folder: a working model, a broken spec, a key variable that is not set,
    and a YAML file that is no spec."""
    folder.mkdir(parents=True, exist_ok=True)
    write_spec(folder, "my_model", model="test-model", base_url=server.base_url, backoff_s=0)
    write_spec(folder, "too_hot", model="test-model", base_url=server.base_url, temperature=9)
    write_spec(
        folder,
        "keyless",
        model="test-model",
        base_url=server.base_url,
        api_key_env="NO_SUCH_KEY_VAR",
    )
    (folder / "rules.yaml").write_text("preset: official\n")
    return folder


@pytest.fixture
def client(tmp_path: Path, server: ChatServer) -> Iterator[TestClient]:
    folder = model_folder(tmp_path / "agents", server)
    with TestClient(create_app(make_config(tmp_path, folder))) as test_client:
        yield test_client


def play_game(client: TestClient, view: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    """Play random legal moves, and ask the model for its moves, until the hand ends."""
    return play_to_end(client, view, random.Random(seed))


def new_game(
    client: TestClient, opponent: str = "folder:my_model", seed: int = 7
) -> dict[str, Any]:
    answer = client.post("/api/games", json={"opponents": [opponent], "seed": seed})
    assert answer.status_code == 201, answer.text
    view: dict[str, Any] = answer.json()
    return view


def test_the_spec_files_are_offered_with_model_and_host(
    client: TestClient, server: ChatServer, tmp_path: Path
) -> None:
    text = client.get("/api/options").text
    agents = {a["id"]: a for a in json.loads(text)["agents"]}
    model = agents["folder:my_model"]
    host = server.base_url.split("//")[1].split("/")[0]
    assert model["kind"] == "llm" and model["model"] == "test-model"
    assert model["endpoint"] == host and model["unavailable"] is None
    assert host in model["about"]
    assert "folder:rules" not in agents  # a YAML file that is no spec
    hot = agents["folder:too_hot"]["unavailable"]
    assert "temperature" in hot and "too_hot.yaml" in hot and "\n" not in hot
    assert "NO_SUCH_KEY_VAR" in agents["folder:keyless"]["unavailable"]
    assert str(tmp_path) not in text and "/v1" not in text  # no path of the server, no address
    refused = client.post("/api/games", json={"opponents": ["folder:too_hot"]})
    assert refused.status_code == 422 and "temperature" in refused.json()["detail"]


def test_a_game_against_a_model_is_played_and_replayed_with_its_text(
    client: TestClient, server: ChatServer, tmp_path: Path
) -> None:
    served = server.play(Script())
    view = play_game(client, new_game(client))
    assert served.answers > 0
    assert view["models"] == {"1": "test-model"}
    records = (tmp_path / "games" / f"{view['id']}.decisions.jsonl").read_text().splitlines()
    assert len(records) == served.answers
    replay = client.get(f"/api/replays/{view['id']}").json()
    seen = [f["decision"] for f in replay["frames"] if f["decision"]]
    model_moves = [d for d in seen if d["seat"] == 1]
    assert model_moves and all("model" in d for d in model_moves)
    assert not any("model" in d for d in seen if d["seat"] == 0)
    note = model_moves[0]["model"]
    assert note["responses"] and note["action"] == model_moves[0]["action"]
    assert "Legal moves: " in note["prompt"] and note["tokens_in"] > 0
    assert {"invalid", "retried", "fallback", "latency_s", "tokens_out", "form"} <= set(note)


def test_model_text_reaches_the_replay_as_text(
    client: TestClient, server: ChatServer, tmp_path: Path
) -> None:
    server.play(Script(answer=hostile))
    view = play_game(client, new_game(client))
    replay = client.get(f"/api/replays/{view['id']}").json()
    notes = [
        f["decision"]["model"]
        for f in replay["frames"]
        if f["decision"] and "model" in f["decision"]
    ]
    assert notes and all(n["responses"][0].startswith(SCRIPT_ANSWER) for n in notes)
    assert all(n["form"] == "final_answer" and not n["invalid"] for n in notes)


def test_requests_carrying_an_address_a_path_or_a_spec_are_refused(
    client: TestClient, server: ChatServer, intruder: ChatServer, tmp_path: Path
) -> None:
    served = intruder.play(Script())
    spec = write_spec(tmp_path, "evil", model="test-model", base_url=intruder.base_url)
    bodies: list[dict[str, Any]] = [
        {"opponents": ["folder:my_model"], "base_url": intruder.base_url},
        {"opponents": [str(spec)]},
        {"opponents": ["evil.yaml"]},
        {"opponents": ["folder:evil"]},
        {"opponents": [{"llm": {"model": "test-model", "base_url": intruder.base_url}}]},
        {"opponents": ["folder:my_model"], "spec": {"llm": {"base_url": intruder.base_url}}},
        {"opponents": [f"llm:\n  model: test-model\n  base_url: {intruder.base_url}\n"]},
    ]
    for body in bodies:
        answer = client.post("/api/games", json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert "\n" not in answer.json()["detail"]
    view = new_game(client)
    for body in (
        {"seq": view["seq"], "base_url": intruder.base_url},
        {"seq": view["seq"], "model": "test-model"},
    ):
        answer = client.post(f"/api/games/{view['id']}/agent-move", json=body)
        assert answer.status_code == 422, answer.text
    play_game(client, view)
    assert served.requests == 0


def test_a_slow_model_does_not_hold_up_the_other_tables(
    client: TestClient, server: ChatServer
) -> None:
    server.play(Script(delay_s=3.0))
    slow = new_game(client, seed=11)
    while slow["thinking"] is None:  # your turn first: play until the model's is due
        move = slow["moves"][0]
        slow = client.post(
            f"/api/games/{slow['id']}/moves", json={"action": move["action"], "seq": slow["seq"]}
        ).json()
    done: dict[str, Any] = {}

    def ask() -> None:
        done["view"] = client.post(
            f"/api/games/{slow['id']}/agent-move", json={"seq": slow["seq"]}
        ).json()

    asking = threading.Thread(target=ask)
    start = time.monotonic()
    asking.start()
    time.sleep(0.3)
    bots = new_game(client, opponent="mixbot", seed=12)
    moves = 0
    rng = random.Random(3)
    while not bots["hand_over"] and moves < 10:
        move = rng.choice(bots["moves"])
        answer = client.post(
            f"/api/games/{bots['id']}/moves", json={"action": move["action"], "seq": bots["seq"]}
        )
        bots = answer.json()
        moves += 1
    bots_done = time.monotonic() - start
    assert "view" not in done, "the model answered before the bots had played"
    assert bots_done < 2.5, bots_done
    asking.join(timeout=30)
    assert done["view"]["seq"] > slow["seq"]


@pytest.mark.parametrize("fault", ["refused", "unknown model", "refused key"])
def test_an_endpoint_that_fails_is_one_line_and_the_game_goes_on(
    tmp_path: Path, server: ChatServer, fault: str
) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    with silent_port() as port, chat_server(api_key="sk-right-key-123") as locked:
        keys: dict[str, Any] = {"model": "test-model", "base_url": server.base_url}
        if fault == "refused":
            keys["base_url"] = f"http://127.0.0.1:{port}/v1"
        elif fault == "unknown model":
            keys["model"] = "no-such-model"
        else:
            keys["base_url"] = locked.base_url
        write_spec(folder, "failing", **keys, max_retries=0)
        with TestClient(create_app(make_config(tmp_path, folder))) as test_client:
            view = new_game(test_client, "folder:failing")
            errors: list[str | None] = []
            rng = random.Random(2)
            while len(errors) < 30:  # the seat only draws now: the hand is long
                if view["hand_over"]:
                    break
                if view["thinking"] is not None:
                    answer = test_client.post(
                        f"/api/games/{view['id']}/agent-move", json={"seq": view["seq"]}
                    )
                    assert answer.status_code == 200, answer.text
                    view = answer.json()
                    errors.append(view["agent_error"])
                else:
                    move = rng.choice(view["moves"])
                    view = test_client.post(
                        f"/api/games/{view['id']}/moves",
                        json={"action": move["action"], "seq": view["seq"]},
                    ).json()
            assert len(errors) == 30 or view["hand_over"]
            line = errors[0]
            assert line is not None and "\n" not in line and "fallback move" in line
            reason = line.partition("; it played")[0]
            assert all(e is not None and e.startswith(reason) for e in errors)
            assert {"refused": "cannot connect", "unknown model": "404", "refused key": "401"}[
                fault
            ] in line
            assert "sk-right-key" not in line
            saved = tmp_path / "games" / f"{view['id']}.decisions.jsonl"
            notes = [json.loads(line) for line in saved.read_text().splitlines()]
            assert len(notes) == len(errors)
            assert all(n["fallback"] and n["endpoint_error"] in line for n in notes)


def _run_tournament(root: Path, spec: Path) -> dict[str, Any]:
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    config = load_config(
        {
            "name": "llm",
            "participants": [str(spec), "random"],
            "num_players": 2,
            "deal_sets": 2,
            "games_per_chunk": 4,
            "bootstrap": 0,
            "output_dir": str(root / "runs" / "tournaments"),
        }
    )
    summary: dict[str, Any] = run_tournament(config, progress=False, plots=False, print_table=False)
    return summary


def test_a_tournament_game_of_a_model_replays_from_its_records_asking_no_one(
    tmp_path: Path, server: ChatServer, intruder: ChatServer
) -> None:
    server.play(Script(invalid_every=5))
    spec = write_spec(
        tmp_path, "my_model", model="test-model", base_url=server.base_url, backoff_s=0
    )
    _run_tournament(tmp_path, spec)
    # The spec now names another host: a replay must not read it, nor ask anyone.
    write_spec(tmp_path, "my_model", model="test-model", base_url=intruder.base_url)
    asked, intruded = server.play(Script()), intruder.play(Script())
    with TestClient(create_app(make_config(tmp_path))) as client:
        games = client.get("/api/runs/games", params={"run": "tournaments/llm"}).json()
        for game in range(games["total"]):
            answer = client.get("/api/runs/replay", params={"run": "tournaments/llm", "game": game})
            assert answer.status_code == 200, answer.text
            replay = answer.json()
            assert replay["matches_log"]
            seat = next(i for i, n in enumerate(replay["names"]) if n.endswith("my_model"))
            ours = [f["decision"] for f in replay["frames"] if f["decision"]]
            assert all(("model" in d) == (d["seat"] == seat) for d in ours)
            assert all(d["model"]["action"] == d["action"] for d in ours if "model" in d)
        tel = client.get("/api/lab/tournaments/tournaments/llm").json()
    assert asked.requests == 0 and intruded.requests == 0
    row = next(r for r in tel["leaderboard"] if r["name"] == "my_model")
    assert row["telemetry"]["decisions"] > 0 and row["telemetry"]["invalid"] > 0
    assert row["telemetry"]["latency_p90_s"] is not None
    assert "telemetry" not in next(r for r in tel["leaderboard"] if r["name"] == "random")


def test_a_tournament_replay_without_the_records_says_so(
    tmp_path: Path, server: ChatServer
) -> None:
    server.play(Script())
    spec = write_spec(tmp_path, "my_model", model="test-model", base_url=server.base_url)
    _run_tournament(tmp_path, spec)
    for chunk in (tmp_path / "runs" / "tournaments" / "llm" / "decisions" / "my_model").iterdir():
        chunk.unlink()
    with TestClient(create_app(make_config(tmp_path))) as client:
        answer = client.get("/api/runs/replay", params={"run": "tournaments/llm", "game": 0})
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert "were not recorded" in detail and "my_model" in detail and str(tmp_path) not in detail
