"""The JSON API of ``uno-lab serve``, through the ASGI test client."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import make_config, play_to_end
from fastapi.testclient import TestClient

from uno_env.rules import Rules
from unolab.play import play_session
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament
from unolab.web.app import create_app


def _new(client: TestClient, **settings: object) -> dict:
    answer = client.post("/api/games", json={"opponents": ["mixbot"], **settings})
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_options_list_presets_switches_and_agents(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert set(options["presets"]) >= {"official", "street", "seven_zero", "rlcard"}
    names = {s["name"] for s in options["switches"]}
    assert {"jump_in", "seven_zero", "stack_draw_two", "target_score"} <= names
    assert "num_players" not in names
    ids = {a["id"] for a in options["agents"]}
    assert {"mixbot", "random", "folder:tiny"} <= ids
    assert all("path" not in a for a in options["agents"])
    assert client.get("/openapi.json").json()["paths"]["/api/games/{game_id}/moves"]


def test_a_hand_is_played_to_its_end_and_saved(client: TestClient, tmp_path: Path) -> None:
    view = _new(client, seed=12, switches={"target_score": 1})
    assert view["seed"] == "12" and view["table"]["seats"][0]["cards"]
    assert all(s["cards"] is None for s in view["table"]["seats"][1:])
    assert view["log"][0].startswith("Hand 1:")
    end = play_to_end(client, view, random.Random(1))
    assert end["match_over"] and end["reveal"]["winner"] is not None
    assert all(s["cards"] is not None for s in end["table"]["seats"])  # every hand revealed
    saved = json.loads((tmp_path / "games" / f"{view['id']}.json").read_text())
    assert saved["seed"] == 12 and saved["agents"] == [None, "mixbot"]
    full = client.get(f"/api/games/{view['id']}").json()["log"]
    assert any("over:" in line for line in full)
    # A new server over the same folder still has it.
    with TestClient(create_app(make_config(tmp_path))) as again:
        listed = again.get("/api/replays").json()
        assert [g["id"] for g in listed] == [view["id"]]
        replayed = again.get(f"/api/replays/{view['id']}").json()
        frames = replayed["frames"]
        assert replayed["seed"] == view["seed"]  # digits, as the game view gives it
    assert len(frames) == len(saved["hands"][0]) + 1
    assert frames[-1]["decision"] is None


def test_the_seed_is_random_by_default_and_replays(client: TestClient) -> None:
    first, second = _new(client), _new(client)
    assert first["seed"] != second["seed"]
    again = _new(client, seed=first["seed"])
    assert again["table"]["top"] == first["table"]["top"]
    assert again["table"]["seats"][0]["cards"] == first["table"]["seats"][0]["cards"]


def test_a_match_runs_hand_after_hand_to_the_target(client: TestClient) -> None:
    view = _new(client, seed=3, switches={"target_score": 60})
    end = play_to_end(client, view, random.Random(2), whole_match=True)
    assert end["match_over"]
    assert max(end["reveal"]["scores"]) >= 60


def test_house_rules_and_four_players(client: TestClient) -> None:
    view = _new(
        client,
        preset="street",
        num_players=4,
        opponents=["mixbot", "random", "card_ranking"],
        switches={"seven_zero": True, "target_score": 1},
    )
    assert view["setup"]["switches"] == {"seven_zero": True, "target_score": 1}
    assert len(view["table"]["seats"]) == 4
    end = play_to_end(client, view, random.Random(4))
    assert end["hand_over"]


def test_a_learned_agent_shows_its_probabilities_in_replay(client: TestClient) -> None:
    view = _new(client, opponents=["folder:tiny"], seed=8)
    end = play_to_end(client, view, random.Random(3))
    frames = client.get(f"/api/replays/{end['id']}").json()["frames"]
    agent_turns = [f["decision"] for f in frames if f["decision"] and f["decision"]["seat"] == 1]
    assert agent_turns
    for decision in agent_turns:
        probs = decision["probs"]
        assert set(probs) == {m["action"] for m in decision["moves"]}
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-3)
        assert probs[decision["action"]] == max(probs.values())  # it plays its argmax
    human_turns = [f["decision"] for f in frames if f["decision"] and f["decision"]["seat"] == 0]
    assert all(d["probs"] is None for d in human_turns)


def test_an_uploaded_terminal_record_replays(client: TestClient, tmp_path: Path) -> None:
    from unolab.agents import make_agent

    answers = iter(["1"] * 400)
    record = tmp_path / "game.json"
    play_session(
        Rules(num_players=2, target_score=1),
        [make_agent("mixbot")],
        seed=5,
        ask=lambda prompt: next(answers),
        say=lambda line: None,
        record=record,
        opponent_names=["mixbot"],
    )
    answer = client.post("/api/replay-file", content=record.read_bytes())
    assert answer.status_code == 200, answer.text
    data = answer.json()
    moves = json.loads(record.read_text())["hands"][0]
    assert [f["decision"]["action"] for f in data["frames"][:-1]] == moves
    assert data["frames"][0]["table"]["seats"][1]["agent"] == "mixbot"


def test_a_tournament_game_replays_exactly(tmp_path: Path, agents_dir: Path) -> None:
    tiny = str(agents_dir / "tiny.safetensors")
    config = {
        "name": "bots",
        "participants": ["random", "mixbot", tiny],
        "deal_sets": 4,
        "games_per_chunk": 6,
        "bootstrap": 10,
        "seed": 5,
        "output_dir": str(tmp_path / "runs" / "tournaments"),
    }
    run_tournament(load_config(config), progress=False, plots=False, print_table=False)
    with TestClient(create_app(make_config(tmp_path, agents_dir))) as client:
        assert client.get("/api/runs").json() == ["tournaments/bots"]
        listing = client.get("/api/runs/games", params={"run": "tournaments/bots"}).json()
        assert listing["total"] == 24
        for game in (0, 7, 23):
            data = client.get("/api/runs/replay", params={"run": "tournaments/bots", "game": game})
            assert data.status_code == 200, data.text
            replay = data.json()
            assert replay["matches_log"], (game, replay["logged"])
            # A tournament's 64-bit key, as digits (a JSON number would lose its last ones).
            assert replay["seed"] == listing["games"][game]["seed"] and replay["seed"].isdigit()
            assert len(replay["frames"]) == listing["games"][game]["turns"] + 1
        learned = [
            f["decision"]["probs"]
            for f in replay["frames"]
            if f["decision"] and "tiny" in replay["names"][f["decision"]["seat"]]
        ]
        assert learned and all(p is not None for p in learned)


def test_serve_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    from unolab.web import server

    with pytest.raises(SystemExit) as shown:
        server.main(["--help"])
    assert shown.value.code == 0
    assert "--agents-dir" in capsys.readouterr().out
    with pytest.raises(ValueError, match="--agents-dir"):
        server.main(["--agents-dir", "/no/such/folder"])


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--port", "0", "--port: 0 is out of range"),
        ("--max-games", "0", "--max-games: 0 is out of range"),
        ("--max-games-per-client", "-3", "--max-games-per-client: -3 is out of range"),
        ("--max-body-bytes", "0", "--max-body-bytes: 0 is out of range"),
        ("--idle-minutes", "0", "--idle-minutes: 0 is out of range"),
        ("--host", " ", "--host ' ': give an address"),
        ("--games-dir", "{file}/games", "--games-dir {file}/games: cannot be created: {file} is"),
        ("--games-dir", "{file}", "--games-dir {file}: is not a folder"),
        ("--runs-dir", "{file}", "--runs-dir {file}: not a folder"),
    ],
)
def test_a_bad_serve_option_is_named_before_the_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, value: str, says: str
) -> None:
    from unolab.web import server

    file = tmp_path / "a_file"
    file.write_text("")
    monkeypatch.setattr(server, "bind_problem", _never_bound)
    with pytest.raises(ValueError) as refused:
        server.main([option, value.format(file=file)])
    assert str(refused.value).startswith(says.format(file=file)), refused.value


def _never_bound(host: str, port: int) -> str | None:
    raise AssertionError("the options are checked before the server binds")


def test_seeds_are_strings_and_may_be_sent_as_digits(client: TestClient) -> None:
    big = str(2**63 - 1)  # beyond what a JavaScript number holds exactly
    view = _new(client, seed=big)
    assert view["seed"] == big and view["setup"]["seed"] == big
    again = _new(client, seed=int(big))
    assert again["seed"] == big
    assert again["table"]["seats"][0]["cards"] == view["table"]["seats"][0]["cards"]
    assert isinstance(_new(client)["seed"], str)
    for bad in (str(2**63), "-1", "12a", "", -1, 1.5, True):
        answer = client.post("/api/games", json={"opponents": ["mixbot"], "seed": bad})
        assert answer.status_code == 422, bad
        assert "\n" not in answer.json()["detail"]


def test_a_held_game_is_taken_up_again_by_its_id(client: TestClient) -> None:
    view = _new(client, seed=4, num_players=3, opponents=["mixbot", "random"])
    rng = random.Random(5)
    for _ in range(3):
        if view["hand_over"]:
            break
        move = rng.choice(view["moves"])
        view = client.post(
            f"/api/games/{view['id']}/moves", json={"action": move["action"], "seq": view["seq"]}
        ).json()
    again = client.get(f"/api/games/{view['id']}").json()
    for key in ("seq", "seed", "table", "moves", "situation", "your_turn", "last_cards"):
        assert again[key] == view[key], key
    assert again["events"] == []  # steps only when asked for
    assert again["log"][0].startswith("Hand 1:")
    stepped = client.get(f"/api/games/{view['id']}", params={"events_after": 0}).json()
    assert [e["seq"] for e in stepped["events"]] == list(range(1, view["seq"] + 1))
    missing = client.get("/api/games/no-such-game")
    assert missing.status_code == 404 and "\n" not in missing.json()["detail"]
    bad = client.get(f"/api/games/{view['id']}", params={"events_after": -1})
    assert bad.status_code == 422 and "\n" not in bad.json()["detail"]


def test_a_move_shows_every_step_and_each_seats_last_card(client: TestClient) -> None:
    view = _new(client, seed=9, num_players=4, opponents=["mixbot"] * 3)
    assert all(e["seat"] != 0 for e in view["events"])
    assert [e["seq"] for e in view["events"]] == list(range(1, view["seq"] + 1))
    before = view["seq"]
    move = next((m for m in view["moves"] if m["kind"] == "play"), view["moves"][0])
    after = client.post(
        f"/api/games/{view['id']}/moves", json={"action": move["action"], "seq": before}
    ).json()
    events = after["events"]
    assert events[0]["seat"] == 0 and events[0]["action"] == move["action"]
    assert [e["seq"] for e in events] == list(range(before + 1, after["seq"] + 1))
    for event in events:
        assert len(event["counts"]) == 4 and event["lines"]
        if event["card"] is not None:
            assert event["top"] == event["card"]
    assert events[-1]["counts"] == [s["count"] for s in after["table"]["seats"]]
    played = {e["seat"]: e["card"] for e in events if e["card"]}
    for seat, name in played.items():
        assert after["last_cards"][seat] == name


def test_the_result_says_who_won_and_the_points_held(client: TestClient) -> None:
    view = _new(client, seed=12, switches={"target_score": 1})
    end = play_to_end(client, view, random.Random(1))
    reveal = end["reveal"]
    winner = reveal["winner"]
    assert reveal["match_winners"] == [winner] and reveal["target_score"] == 1
    assert reveal["held_points"][winner] == 0
    loser = 1 - winner
    assert reveal["held_points"][loser] > 0
    assert reveal["hand_points"][winner] == reveal["held_points"][loser]  # winner takes


def test_a_cut_record_says_so_in_its_last_frame(client: TestClient, tmp_path: Path) -> None:
    view = _new(client, seed=12, switches={"target_score": 1})
    end = play_to_end(client, view, random.Random(1))
    record = json.loads((tmp_path / "games" / f"{end['id']}.json").read_text())
    full = client.post("/api/replay-file", content=json.dumps(record)).json()["frames"]
    assert full[-1]["end"] == "hand" and all(f["end"] is None for f in full[:-1])
    record["hands"] = [record["hands"][0][:5]]
    cut = client.post("/api/replay-file", content=json.dumps(record)).json()["frames"]
    assert len(cut) == 6 and cut[-1]["end"] == "cut" and cut[-1]["decision"] is None


def test_agents_on_offer_say_what_they_are(client: TestClient) -> None:
    agents = {a["id"]: a for a in client.get("/api/options").json()["agents"]}
    for name in ("random_any", "pimc_strong", "ismcts", "mixbot"):
        assert agents[name]["about"], name
    assert "vs random" in agents["mixbot"]["strength"]
    shipped = [a for a in agents.values() if a["kind"] == "shipped"]
    assert shipped and all(a["about"] and a["strength"] for a in shipped)


def test_the_favicon_is_served(client: TestClient) -> None:
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200 and answer.content[:4] == b"\x00\x00\x01\x00"
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_serve_on_a_busy_port_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    from unolab.web import server

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert server.main(["--port", str(port)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and f"port {port}" in out.err and "in use" in out.err
    assert "another with --port" in out.err and "Traceback" not in out.err


def _privileged_port() -> int | None:
    """A port below the first one this user may listen on, if there is one."""
    import os

    start = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
    first_free = int(start.read_text()) if start.is_file() else 1024
    if os.geteuid() == 0 or first_free <= 1:
        return None  # every port is open to this user: there is no refusal to provoke
    return first_free - 1


def test_serve_on_a_port_without_the_rights_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import socket

    from unolab.web import server

    port = _privileged_port()
    if port is None:
        # Root (or a machine without privileged ports) may listen anywhere: the refusal a
        # user gets elsewhere is made here by the socket itself.
        port = 80

        def refuse(self: socket.socket, address: object) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(socket.socket, "bind", refuse)
    assert server.main(["--port", str(port)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1, out
    assert f"--port {port}" in out.err and "below 1024" in out.err and "1024 up" in out.err
    assert "in use" not in out.err
