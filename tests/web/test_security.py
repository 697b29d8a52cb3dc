"""What the server trusts: run folders, saved games and uploads are data; requests must be
addressed to this server; every answer carries the security headers and every error is JSON.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import pickle
import random
import re
import shutil
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import starlette.responses
from conftest import make_config, play_to_end
from fastapi.testclient import TestClient

from unolab.web.app import STATIC, create_app

LOG_LINE = {
    "deal": 0,
    "seating": 0,
    "variant": 0,
    "key": 1,
    "seats": ["random", "evil"],
    "ranks": [0, 1],
    "points": [10, 0],
    "cards_left": [0, 3],
    "turns": 20,
    "end": "won",
    "forfeit_seat": None,
    "reason": "",
}


class _Touch:
    """Unpickling this creates a file: proof that a file's code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (open, (self.marker, "w"))


def _evil_zip(path: Path, marker: Path) -> None:
    """An SB3-style zip whose ``data`` holds a pickled call that creates ``marker``."""
    blob = base64.b64encode(pickle.dumps(_Touch(marker))).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": blob}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))


def _run(root: Path, name: str, config: dict[str, Any]) -> Path:
    """A run folder ``runs/<name>`` with ``config`` and one logged game."""
    run = root / "runs" / name
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps({"fingerprint": "x", "config": config}))
    (run / "games.jsonl").write_text(json.dumps(LOG_LINE) + "\n")
    return run


@pytest.fixture
def app_client(tmp_path: Path, agents_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_config(tmp_path, agents_dir))) as client:
        yield client


def _replay(client: TestClient, run: str) -> Any:
    return client.get("/api/runs/replay", params={"run": run, "game": 0})


def _one_line_without(detail: Any, *secrets: str) -> None:
    assert isinstance(detail, str) and detail.strip() and "\n" not in detail, detail
    for secret in secrets:
        assert secret not in detail, (secret, detail)


# ---- a run folder is data, never code --------------------------------------------------


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_a_stored_allow_pickle_and_a_zip_never_unpickle(
    tmp_path: Path, app_client: TestClient, where: str
) -> None:
    marker = tmp_path / "marker"
    run = tmp_path / "runs" / "evil"
    run.mkdir(parents=True)
    _evil_zip(run / "evil.zip", marker)
    path = str(run / "evil.zip") if where == "absolute" else "evil.zip"
    _run(
        tmp_path,
        "evil",
        {
            "name": "evil",
            "participants": ["random", {"path": path, "name": "evil"}],
            "allow_pickle": True,
        },
    )
    answer = _replay(app_client, "evil")
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    _one_line_without(detail, str(tmp_path))
    assert ".zip" in detail and "evil" in detail
    assert not marker.exists()


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_rules_outside_the_run_folder_are_refused_without_showing_them(
    tmp_path: Path, app_client: TestClient, where: str
) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("SECRET-LINE: the server's own file\n")
    rules = str(secret) if where == "absolute" else "../../secret.yaml"
    _run(tmp_path, "peek", {"name": "peek", "participants": ["random", "mixbot"], "rules": rules})
    answer = _replay(app_client, "peek")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path), "SECRET", "/secret")
    # A preset that names the file is refused just the same.
    (tmp_path / "runs" / "peek" / "config.json").write_text(
        json.dumps(
            {
                "config": {
                    "name": "p",
                    "participants": ["random", "mixbot"],
                    "rules": {"preset": rules},
                }
            }
        )
    )
    answer = _replay(app_client, "peek")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path), "SECRET")


def test_a_rules_file_that_links_outside_is_refused(tmp_path: Path, app_client: TestClient) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("SECRET-LINE: 1\n")
    run = _run(
        tmp_path, "link", {"name": "l", "participants": ["random", "mixbot"], "rules": "r.yaml"}
    )
    (run / "r.yaml").symlink_to(secret)
    answer = _replay(app_client, "link")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path), "SECRET")


def test_an_agent_outside_the_allowed_folders_is_refused(
    tmp_path: Path, agents_dir: Path, app_client: TestClient
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for suffix in (".safetensors", ".json"):
        shutil.copy(agents_dir / f"tiny{suffix}", elsewhere / f"tiny{suffix}")
    for name, path in (
        ("abs", str(elsewhere / "tiny.safetensors")),
        ("rel", "../../elsewhere/tiny"),
    ):
        _run(tmp_path, name, {"name": name, "participants": ["random", path]})
        answer = _replay(app_client, name)
        assert answer.status_code == 422, answer.text
        detail = answer.json()["detail"]
        _one_line_without(detail, str(tmp_path))
        assert "--agents-dir" in detail


def test_a_bad_config_names_no_server_path(tmp_path: Path, app_client: TestClient) -> None:
    _run(tmp_path, "bad", {"name": "bad", "participants": ["random", "no_such_bot_or_file"]})
    answer = _replay(app_client, "bad")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path), str(Path.cwd()))


# ---- files that are no regular files, JSON too deep ------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("which", ["games.jsonl", "config.json"])
def test_a_run_with_a_fifo_is_not_listed_and_does_not_hang(
    tmp_path: Path, app_client: TestClient, which: str
) -> None:
    run = _run(tmp_path, "fifo", {"name": "f", "participants": ["random", "mixbot"]})
    (run / which).unlink()
    os.mkfifo(run / which)
    start = time.monotonic()
    assert app_client.get("/api/runs").json() == []
    for path in ("/api/runs/games", "/api/runs/replay"):
        answer = app_client.get(path, params={"run": "fifo", "game": 0})
        assert answer.status_code in (404, 422), answer.text
        _one_line_without(answer.json()["detail"], str(tmp_path))
    assert time.monotonic() - start < 30


@pytest.mark.timeout(60)
def test_a_saved_game_that_is_a_fifo_is_skipped_and_refused(
    tmp_path: Path, app_client: TestClient
) -> None:
    games = tmp_path / "games"
    games.mkdir(exist_ok=True)
    game_id = "A" * 22
    os.mkfifo(games / f"{game_id}.json")
    assert app_client.get("/api/replays").json() == []
    answer = app_client.get(f"/api/replays/{game_id}")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path))


def test_deeply_nested_json_is_refused_with_one_line(
    tmp_path: Path, app_client: TestClient
) -> None:
    deep = b"[" * 100_000
    answer = app_client.post("/api/replay-file", content=deep)
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"])
    (tmp_path / "games").mkdir(exist_ok=True)
    (tmp_path / "games" / ("B" * 22 + ".json")).write_bytes(deep)
    answer = app_client.get(f"/api/replays/{'B' * 22}")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path))
    run = _run(tmp_path, "deep", {"name": "d", "participants": ["random", "mixbot"]})
    (run / "config.json").write_bytes(deep)
    answer = _replay(app_client, "deep")
    assert answer.status_code == 422, answer.text
    _one_line_without(answer.json()["detail"], str(tmp_path))
    (run / "games.jsonl").write_bytes(deep + b"\n" + json.dumps(LOG_LINE).encode() + b"\n")
    answer = app_client.get("/api/runs/games", params={"run": "deep"})
    assert answer.status_code == 422, answer.text


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"\xef\xbb\xbf" + json.dumps({"opponents": ["random"]}).encode(), "byte order mark"),
        (json.dumps({"opponents": ["random"]}).encode("utf-16"), "byte order mark"),
        (json.dumps({"opponents": ["random"]}).encode("utf-16-be"), "NUL bytes"),
        (b'{"opponents": ["r\xe4ndom"]}', "not UTF-8 text"),
    ],
    ids=["utf8_bom", "utf16", "utf16_without_bom", "latin1"],
)
@pytest.mark.parametrize("route", ["/api/games", "/api/replay-file"])
def test_a_body_that_is_not_utf8_json_is_refused(
    app_client: TestClient, route: str, body: bytes, says: str
) -> None:
    # JSON is exchanged as UTF-8 (RFC 8259); the terminal's readers refuse the rest as well.
    answer = app_client.post(route, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    _one_line_without(detail)
    assert says in detail, detail
    assert app_client.post(route.replace("replay-file", "games"), json={}).status_code == 201


RECORD = {
    "format": "uno-lab game record",
    "rules": {"num_players": 2},
    "seed": 7,
    "names": ["you", "bot"],
    "hands": [[]],
    "agents": [None, "random"],
    "match_over": False,
    "saved": "2024-01-31T12:00:00+00:00",
}
"""A record as the web table saves it (a hand just dealt)."""


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("format", 2**64),
        ("format", [[[]]]),
        ("agents", 2**64),
        ("agents", [[[]]]),
        ("agents", ["random"]),
        ("match_over", 2**64),
        ("match_over", [[[]]]),
        ("saved", 2**64),
        ("saved", [[[]]]),
    ],
)
def test_a_record_with_a_key_of_the_wrong_type_is_refused(
    tmp_path: Path, app_client: TestClient, key: str, value: Any
) -> None:
    assert app_client.post("/api/replay-file", json=RECORD).status_code == 200
    bad = json.dumps({**RECORD, key: value}).encode()
    answer = app_client.post("/api/replay-file", content=bad)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    _one_line_without(detail, str(tmp_path))
    assert f"'{key}'" in detail and str(value).replace("'", "") in detail.replace("'", ""), detail
    (tmp_path / "games").mkdir(exist_ok=True)
    (tmp_path / "games" / ("C" * 22 + ".json")).write_bytes(bad)
    saved = app_client.get(f"/api/replays/{'C' * 22}")
    assert saved.status_code == 422 and saved.json()["detail"] == detail.replace(
        "the uploaded file", f"saved game {'C' * 22}"
    )


def test_a_record_without_its_optional_keys_replays(app_client: TestClient) -> None:
    # Older records have no format; a terminal record has no agents, match_over or saved.
    for key in ("format", "agents", "match_over", "saved"):
        lacking = {k: v for k, v in RECORD.items() if k != key}
        assert app_client.post("/api/replay-file", json=lacking).status_code == 200, key
        assert app_client.post("/api/replay-file", json={**RECORD, key: None}).status_code == 200


# ---- the Host header, the headers, the docs --------------------------------------------


def test_a_foreign_host_is_refused(tmp_path: Path) -> None:
    with TestClient(create_app(make_config(tmp_path, allowed_hosts=()))) as client:
        for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.evil.example", ""):
            answer = client.get("/api/replays", headers={"Host": host})
            assert answer.status_code == 400, (host, answer.text)
            assert "host" in answer.json()["detail"]
            assert answer.headers["X-Frame-Options"] == "DENY"
        for host in ("127.0.0.1:8000", "localhost", "LOCALHOST:80", "[::1]:8000", "[::1]"):
            assert client.get("/api/options", headers={"Host": host}).status_code == 200, host


def test_a_server_on_every_address_answers_ip_addresses_and_allowed_names(tmp_path: Path) -> None:
    config = make_config(tmp_path, host="0.0.0.0", allowed_hosts=("table.example.org",))
    with TestClient(create_app(config)) as client:
        for host in ("192.168.1.20:8000", "[fe80::1]:8000", "table.example.org:8000"):
            assert client.get("/api/options", headers={"Host": host}).status_code == 200, host
        assert client.get("/api/options", headers={"Host": "attacker.example"}).status_code == 400


def test_every_answer_carries_the_security_headers(app_client: TestClient) -> None:
    for path in ("/", "/static/js/main.js", "/api/options", "/api/games/nope", "/openapi.json"):
        answer = app_client.get(path)
        headers = answer.headers
        policy = headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert "unsafe-inline" not in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "no-referrer"
        if not path.startswith("/static/"):
            assert headers["Cache-Control"] == "no-store", path


def test_the_page_has_no_inline_code_and_no_cdn(app_client: TestClient) -> None:
    page = app_client.get("/").text
    assert '<script type="module" src=' in page and "<script>" not in page
    assert "style=" not in page
    assert "http://" not in page and "https://" not in page
    assert app_client.get("/docs").status_code == 404
    assert app_client.get("/redoc").status_code == 404
    assert app_client.get("/openapi.json").json()["paths"]


def test_the_page_script_is_modules_of_its_own_served_as_javascript(
    app_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page loads one module, which imports the others by relative path: every module
    it reaches is served from ``/static/js/`` as ``text/javascript`` (with ``nosniff`` a
    browser runs no module of another type), even where the machine's table of file types
    says ``text/plain`` (as some Windows registries do), and names nothing of another host."""
    monkeypatch.setattr(starlette.responses, "guess_type", lambda path: ("text/plain", None))
    page = app_client.get("/").text
    assert re.findall(r"<script[^>]*>", page) == ['<script type="module" src="/static/js/main.js">']
    seen: set[str] = set()
    waiting = ["main.js"]
    while waiting:
        name = waiting.pop()
        seen.add(name)
        answer = app_client.get(f"/static/js/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["Content-Type"] == "text/javascript; charset=utf-8", name
        assert "http://" not in answer.text and "https://" not in answer.text, name
        imported = re.findall(r'^import (?:[^"]* from )?"\./([\w-]+\.js)";$', answer.text, re.M)
        assert len(imported) == answer.text.count("\nimport "), name  # every import is relative
        waiting += [m for m in imported if m not in seen]
    shipped = {path.name for path in (STATIC / "js").glob("*.js")}
    assert seen == shipped  # every module shipped is used
    assert app_client.get("/static/table.css").headers["Content-Type"] == "text/css; charset=utf-8"


# ---- limits, failures ------------------------------------------------------------------


def test_one_client_cannot_hold_every_game(tmp_path: Path) -> None:
    app = create_app(make_config(tmp_path, max_games_per_client=2))
    body = {"opponents": ["mixbot"], "seed": 1}
    with TestClient(app) as one, TestClient(app, client=("10.0.0.2", 1234)) as other:
        first, _ = (one.post("/api/games", json=body).json() for _ in range(2))
        answer = one.post("/api/games", json=body)
        assert answer.status_code == 429, answer.text
        assert "--max-games-per-client" in answer.json()["detail"]
        assert other.post("/api/games", json=body).status_code == 201  # another client plays
        # The oldest game, once abandoned, makes room for a new one.
        app.app.state.games.get(first["id"]).touched -= 3600
        assert one.post("/api/games", json=body).status_code == 201
        gone = one.get(f"/api/games/{first['id']}")
        assert gone.status_code == 410 and "closed to make room" in gone.json()["detail"]


def test_a_failed_save_keeps_the_move_and_the_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import unolab.web.store as store

    def full(path: Any, data: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    real = store.write_atomically
    monkeypatch.setattr(store, "write_atomically", full)
    with TestClient(create_app(make_config(tmp_path))) as client:
        body = {"opponents": ["mixbot"], "seed": 4, "switches": {"target_score": 1}}
        view = client.post("/api/games", json=body).json()
        end = play_to_end(client, view, random.Random(5))  # every answer is a 200
        assert end["hand_over"] and end["save_error"]
        _one_line_without(end["save_error"], str(tmp_path))
        assert "full" in end["save_error"]
        again = client.get(f"/api/games/{view['id']}").json()
        assert (again["seq"], again["table"]) == (end["seq"], end["table"])
        assert not list((tmp_path / "games").glob("*.json"))
        monkeypatch.setattr(store, "write_atomically", real)
        saved = client.get(f"/api/games/{view['id']}").json()
        assert saved["save_error"] is None
        record = json.loads((tmp_path / "games" / f"{view['id']}.json").read_text())
        assert sum(len(hand) for hand in record["hands"]) == end["seq"]
        frames = client.get(f"/api/replays/{view['id']}").json()["frames"]
        assert len(frames) == end["seq"] + 1


def test_an_unexpected_failure_is_a_json_500_without_details(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import unolab.web.game.routes as game_routes

    def broken() -> list[dict[str, Any]]:
        raise RuntimeError(f"{tmp_path}/internal state\nTraceback (most recent call last)")

    monkeypatch.setattr(game_routes, "switch_list", broken)
    app = create_app(make_config(tmp_path))
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get("/api/options")
    assert answer.status_code == 500
    _one_line_without(answer.json()["detail"], str(tmp_path), "Traceback")
    assert answer.headers["Cache-Control"] == "no-store"


def test_a_handed_over_run_replays_from_its_own_folder(tmp_path: Path, agents_dir: Path) -> None:
    """A run folder copied from elsewhere: its agent and rules file inside it, a stored
    allow_pickle and an output_dir of another machine, all harmless."""
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    config = {
        "name": "shared",
        "participants": ["random", str(agents_dir / "tiny.safetensors")],
        "deal_sets": 2,
        "games_per_chunk": 4,
        "bootstrap": 10,
        "seed": 3,
        "output_dir": str(tmp_path / "made"),
    }
    run_tournament(load_config(config), progress=False, plots=False, print_table=False)
    run = tmp_path / "runs" / "shared"
    shutil.copytree(tmp_path / "made" / "shared", run)
    for suffix in (".safetensors", ".json"):
        shutil.copy(agents_dir / f"tiny{suffix}", run / f"tiny{suffix}")
    (run / "house.yaml").write_text("preset: official\n")
    stored = json.loads((run / "config.json").read_text())
    stored["config"].update(
        participants=["random", {"path": "tiny.safetensors"}],
        rules="house.yaml",
        allow_pickle=True,
        output_dir="/home/someone/else",
    )
    (run / "config.json").write_text(json.dumps(stored))
    with TestClient(create_app(make_config(tmp_path))) as client:  # no --agents-dir
        answer = _replay(client, "shared")
    assert answer.status_code == 200, answer.text
    assert answer.json()["matches_log"]
