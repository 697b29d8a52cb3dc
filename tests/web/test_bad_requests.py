"""Bad run files and bad requests against the real HTTP server (uvicorn on a free port).

* A training run's files with numbers of the wrong type or out of bounds (a step count of
  401 digits, a win rate of NaN or 7) get one 422 line naming the file and the line, for
  the run's page and its ``curve.png`` alike, never a 500.
* The Lab's list and its pages agree: every run the list shows opens (its page, or one
  422 line saying what is wrong with its files), and a folder it does not show does not
  open, whatever the folder is called (spaces, Unicode, dots, 1,000 characters, names
  that look like a plot's or a curve's path, bytes that are no text).
* Every route answers hostile query strings, ids, methods, content types and bodies with
  a 4xx and a one-line JSON ``detail``: never a 5xx, a traceback or a path of the server.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import make_config
from support.optional import require

require("uvicorn", "the server is served for real (pip install -e .[web])")

import uvicorn  # noqa: E402

from unolab.curves import Series  # noqa: E402
from unolab.web.app import create_app  # noqa: E402
from unolab.web.lab.files import MAX_ID_CHARS  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _result(rate: float = 0.5) -> dict[str, Any]:
    return {"win_rate": rate, "ci_low": rate - 0.05, "ci_high": rate + 0.05, "games": 200}


GOOD_LINE = json.dumps({"steps": 1000, "results": {"random": _result(0.4)}})
META = json.dumps(
    {"name": "r", "algorithm": "ppo", "steps": 1000, "evaluations": {"random": _result(0.4)}}
)
BIG = "1" + "0" * 400
"""A number of 401 digits: more than a float holds."""

BAD_LOG_LINES: dict[str, tuple[str, str]] = {
    # case: (line 2 of evaluations.jsonl, what the message names)
    "steps_401_digits": (f'{{"steps": {BIG}, "results": {{}}}}', "steps"),
    "steps_5000_digits": ('{"steps": 1%s, "results": {}}' % ("0" * 5000), "not valid JSON"),
    "steps_negative": ('{"steps": -5, "results": {}}', "-5"),
    "steps_fraction": ('{"steps": 2.5, "results": {}}', "2.5"),
    "win_rate_nan": (
        '{"steps": 5, "results": {"random": {"win_rate": NaN, "ci_low": 0, "ci_high": 1}}}',
        "win_rate",
    ),
    "win_rate_seven": (json.dumps({"steps": 5, "results": {"random": _result(7)}}), "win_rate"),
    "ci_high_401_digits": (
        '{"steps": 5, "results": {"random": {"win_rate": 0.5, "ci_low": 0, "ci_high": '
        + BIG
        + "}}}",
        "ci_high",
    ),
    "games_401_digits": (
        '{"steps": 5, "results": {"random": {"win_rate": 0.5, "ci_low": 0, "ci_high": 1, '
        f'"games": {BIG}}}}}}}',
        "games",
    ),
    "results_a_list": ('{"steps": 5, "results": [0.5]}', "results"),
}

BAD_METAS: dict[str, tuple[str, str]] = {
    # case: (latest.json of a run without a log, what the message names)
    "meta_steps_401_digits": (f'{{"name": "r", "steps": {BIG}, "evaluations": {{}}}}', "steps"),
    "meta_win_rate_seven": (
        json.dumps({"name": "r", "steps": 5, "evaluations": {"random": _result(7)}}),
        "win_rate",
    ),
}


BAD_SUMMARIES: dict[str, tuple[str, str]] = {
    # case: (the row of a tournament's leaderboard, what the message names)
    "elo_401_digits": (f'{{"name": "x", "elo": {BIG}, "games": 3}}', "'elo'"),
    "elo_low_401_digits": (f'{{"name": "x", "elo": 1, "elo_low": {BIG}, "games": 3}}', "'elo_low'"),
    "win_rate_seven": ('{"name": "x", "elo": 1, "win_rate": 7, "games": 3}', "'win_rate'"),
    "win_rate_text": ('{"name": "x", "elo": 1, "win_rate": "half", "games": 3}', "'win_rate'"),
    "games_401_digits": (f'{{"name": "x", "elo": 1, "games": {BIG}}}', "'games'"),
    "games_negative": ('{"name": "x", "elo": 1, "games": -3}', "'games'"),
}


def _training(folder: Path, log: str | None = GOOD_LINE + "\n", meta: str | None = META) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("name: r\nalgorithm: ppo\n")
    if log is not None:
        (folder / "evaluations.jsonl").write_text(log)
    if meta is not None:
        (folder / "latest.json").write_text(meta)


def _tournament(folder: Path, summary: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    board = [{"name": "random", "elo": 1000.0, "games": 4, "win_rate": 0.5}]
    (folder / "summary.json").write_text(
        summary if summary is not None else json.dumps({"name": folder.name, "leaderboard": board})
    )
    (folder / "ratings.png").write_bytes(PNG + b"picture")


LONG_ID = "/".join(["L" * 250, "M" * 250, "N" * 250])
"""A run three folders of 250 characters deep (beyond what the old 500-character id took)."""

LISTED_AND_OPEN = {
    "training": [
        "plain",
        "with space",
        "ünïcødé 🙂",
        "dots...",
        "a.b",
        "hash#q?x%20y&z=1",
        "back\\slash",
        LONG_ID,
        "named/curve.png",  # a run folder named like the path of a curve
        "sweep/runs/trial_1",
        "exploit",
        "both",
    ],
    "tournaments": ["tour", "plotted/plots/x.png", "plotted/plots/plots", "both", "tour ünï"],
}
"""Run ids the list shows and whose pages open with 200."""

LISTED_AND_REFUSED = {
    "training": {
        "empty_latest": "empty_latest/latest.json",
        "damaged_latest": "damaged_latest/latest.json",
        "bad_yaml_only_log": "bad_yaml_only_log/config.yaml",
        "huge_steps": "huge_steps/evaluations.jsonl line 2",
    },
    "tournaments": {"damaged_summary": "damaged_summary/summary.json"},
}
"""Run ids the list shows whose pages are one 422 line naming the file that is wrong."""

NOT_LISTED = ["only_config", "imitation", "linked", "control\x07name", "plotted", "named"]
"""Folders that are no run the list shows: they do not open either."""


def _build_kinds(runs: Path) -> None:
    """A run folder of every kind the Lab meets (see the constants above)."""
    for run_id in LISTED_AND_OPEN["training"]:
        _training(runs / run_id)
    for run_id in LISTED_AND_OPEN["tournaments"]:
        _tournament(runs / run_id)
    (runs / "exploit" / "exploit.json").write_text("{}")
    _training(runs / "empty_latest", log=None, meta="")
    _training(runs / "damaged_latest", meta="{oops")
    _training(runs / "bad_yaml_only_log", meta=None)
    (runs / "bad_yaml_only_log" / "config.yaml").write_text("a: [")
    _training(runs / "huge_steps", log=GOOD_LINE + "\n" + BAD_LOG_LINES["steps_401_digits"][0])
    _tournament(runs / "damaged_summary", summary="")
    (runs / "only_config").mkdir()
    (runs / "only_config" / "config.yaml").write_text("name: only\n")
    (runs / "imitation").mkdir()
    (runs / "imitation" / "config.yaml").write_text("name: imitation\n")
    (runs / "imitation" / "clone.safetensors").write_bytes(b"")
    (runs / "linked").symlink_to(runs / "plain", target_is_directory=True)
    _training(runs / "control\x07name")
    _training(runs / os.fsdecode(b"no\xfftext"))  # bytes that are no UTF-8 text


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """The table served by uvicorn over runs of every kind; yields its port and its root."""
    root = tmp_path_factory.mktemp("served")
    runs = root / "runs"
    for case, (line, _) in BAD_LOG_LINES.items():
        _training(runs / "logs" / case, log=f"{GOOD_LINE}\n{line}\n{GOOD_LINE}\n")
    for case, (meta, _) in BAD_METAS.items():
        _training(runs / "metas" / case, log=None, meta=meta)
    for case, (row, _) in BAD_SUMMARIES.items():
        _tournament(runs / "summaries" / case, summary=f'{{"leaderboard": [{row}]}}')
    _build_kinds(runs / "kinds")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(make_config(root)), host="127.0.0.1", port=port, log_level="critical"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield port, root
    server.should_exit = True
    thread.join(timeout=10)


def _request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """One request over a real connection; the path is sent as the browser would quote it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.putrequest(method, quote(path, safe="/?&=%:~!*'();,+$@"), skip_host=True)
        connection.putheader("Host", f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def _id_path(run_id: str) -> str:
    """A run id in a URL, each folder quoted as the page quotes it (encodeURIComponent)."""
    return "/".join(quote(part, safe="-_.!~*'()") for part in run_id.split("/"))


def _one_line(status: int, body: bytes, root: Path) -> str:
    """The ``detail`` of a refusal, checked to be one line without the server's paths."""
    detail = json.loads(body)["detail"]
    assert isinstance(detail, str) and detail.strip() and "\n" not in detail, detail
    assert "Traceback" not in detail and str(root) not in detail, detail
    return detail


# ---- numbers in a training run's files -----------------------------------------------


@pytest.mark.parametrize("case", BAD_LOG_LINES, ids=list(BAD_LOG_LINES))
def test_a_bad_number_in_the_log_is_one_line_naming_file_and_line(
    served: tuple[int, Path], case: str
) -> None:
    port, root = served
    run_id = f"logs/{case}"
    for path in (f"/api/lab/training/{run_id}", f"/api/lab/training/{run_id}/curve.png"):
        status, body = _request(port, "GET", path)
        assert status == 422, (path, status, body[:300])
        detail = _one_line(status, body, root)
        assert detail.startswith(f"{run_id}/evaluations.jsonl line 2: "), detail
        assert BAD_LOG_LINES[case][1] in detail and len(detail) < 600, detail
    status, body = _request(port, "GET", "/api/lab/runs")
    assert status == 200
    listed = {run["id"]: run for run in json.loads(body)["training"]}
    assert listed[run_id]["steps"] == 1000  # latest.json: the run is listed as it is


@pytest.mark.parametrize("case", BAD_METAS, ids=list(BAD_METAS))
def test_a_bad_number_in_a_checkpoint_is_one_line_naming_it(
    served: tuple[int, Path], case: str
) -> None:
    port, root = served
    run_id = f"metas/{case}"
    for path in (f"/api/lab/training/{run_id}", f"/api/lab/training/{run_id}/curve.png"):
        status, body = _request(port, "GET", path)
        assert status == 422, (path, status, body[:300])
        detail = _one_line(status, body, root)
        assert detail.startswith(f"{run_id}/latest.json: "), detail
        assert BAD_METAS[case][1] in detail, detail
    listed = {
        run["id"]: run for run in json.loads(_request(port, "GET", "/api/lab/runs")[1])["training"]
    }
    assert 0 <= listed[run_id]["steps"] <= 2**53  # never a count the page cannot hold


@pytest.mark.parametrize("case", BAD_SUMMARIES, ids=list(BAD_SUMMARIES))
def test_a_bad_number_in_a_tournament_summary_is_one_line_naming_it(
    served: tuple[int, Path], case: str
) -> None:
    port, root = served
    run_id = f"summaries/{case}"
    status, body = _request(port, "GET", f"/api/lab/tournaments/{run_id}")
    assert status == 422, (status, body[:300])
    detail = _one_line(status, body, root)
    assert detail.startswith(f"{run_id}/summary.json: leaderboard row 1"), detail
    assert BAD_SUMMARIES[case][1] in detail, detail
    listed = [t["id"] for t in _listing(port)["tournaments"]]
    assert run_id in listed  # listed, and opening it says what is wrong


def test_saved_games_of_a_foreign_shape_are_not_listed(served: tuple[int, Path]) -> None:
    port, root = served
    games = root / "games"
    games.mkdir(exist_ok=True)
    shapes = {
        "A": '{"names": ["you", "mixbot"], "hands": [[]], "saved": "today", "match_over": "no"}',
        "B": '{"names": [1, null, {"a": NaN}], "hands": [], "saved": "x"}',
        "C": '{"names": "text", "hands": []}',
        "D": '{"names": ["a"], "hands": {}, "saved": NaN}',
        "E": '{"names": ["a"], "hands": [], "saved": ' + BIG + "}",
        "F": "[1, 2]",
    }
    try:
        for letter, text in shapes.items():
            (games / f"{'A' * 21}{letter}.json").write_text(text)
        status, body = _request(port, "GET", "/api/replays")
        assert status == 200, body[:300]
        listed = {game["id"][-1]: game for game in json.loads(body)}
        assert set(listed) == {"A", "E"}
        assert listed["A"] == {
            "id": "A" * 22,
            "names": ["you", "mixbot"],
            "hands": 1,
            "saved": "today",
            "finished": False,  # only true is true
        }
        assert listed["E"]["saved"] == ""
    finally:
        shutil.rmtree(games)


def test_a_curve_checks_its_numbers() -> None:
    Series("fine", [0, 10], [0.5, 0.6], [0.4, 0.5], [0.6, 0.7])
    for bad in (
        {"steps": [int(BIG)]},
        {"steps": [-1]},
        {"win_rate": [float("nan")]},
        {"ci_high": [7.0]},
        {"ci_low": [0.1, 0.2]},
    ):
        columns: dict[str, Any] = {"steps": [1], "win_rate": [0.5], "ci_low": [0.4]} | {
            "ci_high": [0.6]
        }
        with pytest.raises(ValueError, match="curve 'x'"):
            Series("x", **(columns | bad))


# ---- the list and the pages agree ------------------------------------------------------


def _listing(port: int) -> dict[str, list[dict[str, Any]]]:
    status, body = _request(port, "GET", "/api/lab/runs")
    assert status == 200, body[:300]
    listing: dict[str, list[dict[str, Any]]] = json.loads(body)
    return listing


def test_every_listed_run_opens_and_every_other_folder_does_not(served: tuple[int, Path]) -> None:
    port, root = served
    listing = _listing(port)
    listed = {kind: {r["id"] for r in listing[kind]} for kind in ("tournaments", "training")}
    for kind in ("tournaments", "training"):
        expected_open = {f"kinds/{i}" for i in LISTED_AND_OPEN[kind]}
        expected_refused = {f"kinds/{i}" for i in LISTED_AND_REFUSED[kind]}
        shown = {i for i in listed[kind] if i.startswith("kinds/")}
        assert shown == expected_open | expected_refused, kind
        for run_id in sorted(shown):
            status, body = _request(port, "GET", f"/api/lab/{kind}/{_id_path(run_id)}")
            if run_id in expected_refused:
                assert status == 422, (run_id, status, body[:300])
                named = "kinds/" + LISTED_AND_REFUSED[kind][run_id.removeprefix("kinds/")]
                assert _one_line(status, body, root).startswith(named)
                continue
            assert status == 200, (run_id, status, body[:300])
            shown_run = json.loads(body)
            assert shown_run["id"] == run_id
            if kind == "training":
                picture = f"/api/lab/training/{_id_path(run_id)}/curve.png"
            else:
                assert shown_run["plots"] == ["ratings.png"]
                picture = f"/api/lab/tournaments/{_id_path(run_id)}/plots/ratings.png"
            status, body = _request(port, "GET", picture)
            assert status == 200 and body.startswith(PNG), (run_id, status, body[:300])
    assert LONG_ID in {i.removeprefix("kinds/") for i in listed["training"]}
    assert len(f"kinds/{LONG_ID}") > 500 and MAX_ID_CHARS >= 4 * 255 + 3
    for name in NOT_LISTED:
        for kind in ("tournaments", "training"):
            assert f"kinds/{name}" not in listed[kind]
            status, body = _request(port, "GET", f"/api/lab/{kind}/kinds/{_id_path(name)}")
            assert status == 404, (name, status, body[:300])
            _one_line(status, body, root)
    status, body = _request(port, "GET", "/api/lab/training/kinds/no%FFtext")
    assert status == 404, body[:300]


def test_the_replay_tab_lists_only_runs_it_can_name(served: tuple[int, Path]) -> None:
    port, root = served
    runs = root / "runs" / "replays"
    deep = "x" * 250 + "/" + "y" * 250  # an id over the 300 characters once accepted
    for name in ("fine run", os.fsdecode(b"no\xfftext"), "control\x07name", deep):
        (runs / name).mkdir(parents=True)
        (runs / name / "games.jsonl").write_text("")
        (runs / name / "config.json").write_text("{}")
    try:
        status, body = _request(port, "GET", "/api/runs")
        assert status == 200, body[:300]
        listed = [i for i in json.loads(body) if i.startswith("replays/")]
        assert sorted(listed) == ["replays/fine run", f"replays/{deep}"]
        for run_id in listed:
            status, body = _request(port, "GET", f"/api/runs/games?run={quote(run_id)}")
            assert status == 200 and json.loads(body)["total"] == 0, body[:300]
    finally:
        shutil.rmtree(runs)


# ---- hostile requests on every route -----------------------------------------------------

UNKNOWN_GAME = "AAAAAAAAAAAAAAAAAAAAAA"

ROUTES = [
    "/",
    "/api/warmup",
    "/api/options",
    f"/api/games/{UNKNOWN_GAME}",
    f"/api/tables/{UNKNOWN_GAME}",
    f"/api/tables/{UNKNOWN_GAME}?version=1.1.1.1.h",
    "/api/replays",
    f"/api/replays/{UNKNOWN_GAME}",
    "/api/runs",
    "/api/runs/games?run=kinds/plain",
    "/api/runs/replay?run=kinds/plain&game=0",
    "/api/lab/runs",
    "/api/lab/agents",
    "/api/lab/humans",
    "/api/lab/tournaments/kinds/tour",
    "/api/lab/tournaments/kinds/tour/plots/ratings.png",
    "/api/lab/training/kinds/plain",
    "/api/lab/training/kinds/plain/curve.png",
    "/static/js/main.js",
]
"""Every route the server answers (GET), with a valid or unknown id."""

POSTS = [
    "/api/games",
    f"/api/games/{UNKNOWN_GAME}/moves",
    f"/api/games/{UNKNOWN_GAME}/next-hand",
    f"/api/games/{UNKNOWN_GAME}/agent-move",
    "/api/tables",
    f"/api/tables/{UNKNOWN_GAME}/join",
    f"/api/tables/{UNKNOWN_GAME}/start",
    f"/api/tables/{UNKNOWN_GAME}/moves",
    f"/api/tables/{UNKNOWN_GAME}/next-hand",
    "/api/replay-file",
]
"""Every route that takes a body."""

NUMBERS = [BIG, "9" * 5000, "-1", "NaN", "inf", "1e400", "1.5", "0x10", "١٢", "", "true", "%00"]
"""Query values where a whole number is asked for."""

IDS = [
    "..",
    "%2e%2e",
    "..%2f..%2fetc%2fpasswd",
    "%2Fetc%2Fpasswd",
    "a" * 5000,
    "%00",
    "%FF%FE",
    "é" * 300,
    "🙂" * 100,
    "%E2%80%AE",
    "a/../../b",
    "%0d%0aX-Injected:%20yes",
]
"""Ids, run ids and names with traversal, NUL, bytes that are no text, huge lengths."""

BODIES = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"text"',
    b"[" * 100_000,
    b"\xff\xfe",
    b'{"seed": ' + BIG.encode() + b"}",
    b'{"seed": NaN}',
    b'{"seed": 1e400}',
    b'{"num_players": ' + BIG.encode() + b"}",
    b'{"num_players": 2.0}',
    b'{"opponents": "mixbot"}',
    b'{"opponents": ["' + "é".encode() * 5000 + b'"]}',
    b'{"switches": {"target_score": ' + BIG.encode() + b"}}",
    b'{"switches": {"target_score": NaN}}',
    b'{"switches": {"' + b"x" * 10_000 + b'": 1}}',
    b'{"action": "draw", "seq": ' + BIG.encode() + b"}",
    b'{"action": "draw", "seq": -1}',
    b'{"action": "' + b"x" * 100_000 + b'", "seq": 0}',
    b'{"seq": NaN}',
    b'{"seed": "\\ud800"}',
    b'{"rules": {"num_players": ' + BIG.encode() + b'}, "seed": 1, "hands": [[]]}',
    b'{"rules": {"num_players": 2}, "seed": -1, "hands": [[]]}',
    b'{"rules": {"num_players": 2}, "seed": 1, "hands": [["' + BIG.encode() + b'"]]}',
]
"""Bodies that are no JSON, JSON of the wrong shape, numbers no field holds, huge strings."""


def _requests() -> Iterator[tuple[str, str, bytes | None, dict[str, str]]]:
    json_type = {"Content-Type": "application/json"}
    for route in ROUTES:
        yield "GET", route, None, {}
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"):
            yield method, route, b"{}", json_type
    for value in NUMBERS:
        for template in (
            "/api/runs/games?run=kinds/plain&offset={}",
            "/api/runs/games?run=kinds/plain&limit={}",
            "/api/runs/replay?run=kinds/plain&game={}",
            f"/api/games/{UNKNOWN_GAME}?log_from={{}}",
            f"/api/games/{UNKNOWN_GAME}?events_after={{}}",
        ):
            yield "GET", template.format(value), None, {}
    for value in IDS:
        for template in (
            "/api/games/{}",
            "/api/replays/{}",
            "/api/runs/games?run={}",
            "/api/runs/replay?run={}&game=0",
            "/api/lab/tournaments/{}",
            "/api/lab/tournaments/kinds/tour/plots/{}",
            "/api/lab/tournaments/{}/plots/ratings.png",
            "/api/lab/training/{}",
            "/api/lab/training/{}/curve.png",
            "/static/{}",
        ):
            yield "GET", template.format(value), None, {}
    for route in POSTS:
        for body in BODIES:
            yield "POST", route, body, json_type
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "", "image/png"):
            yield "POST", route, b'{"num_players": 1}', {"Content-Type": content_type}
        yield "POST", route, b"x" * (2**20 + 1), json_type  # over the body limit


def test_every_route_of_every_router_is_tried(tmp_path: Path) -> None:
    """A route added to a tab's router is one that the hostile requests below try: each
    path of the API (``/openapi.json``) matches a listed GET or POST route."""
    paths = create_app(make_config(tmp_path)).app.openapi()["paths"]
    tried = {"get": ROUTES, "post": POSTS}
    for path, methods in paths.items():
        pattern = re.compile(re.sub(r"\{[^}]+\}", "[^?]+", path.replace(".", r"\.")))
        for method in methods:
            listed = tried[method]
            assert any(pattern.fullmatch(route.partition("?")[0]) for route in listed), (
                f"{method.upper()} {path} is in no list of this module (ROUTES, POSTS)"
            )


def test_no_request_gets_a_5xx_or_a_traceback(served: tuple[int, Path]) -> None:
    port, root = served
    failures = []
    count = 0
    for method, path, body, headers in _requests():
        count += 1
        status, answer = _request(port, method, path, body, headers)
        where = f"{method} {path[:80]} {str(body)[:60]}"
        if status >= 500:
            failures.append(f"{where}: {status} {answer[:200]!r}")
        elif status >= 400:
            try:
                _one_line(status, answer, root)
            except (AssertionError, ValueError, KeyError, TypeError) as err:
                failures.append(f"{where}: {status} without a one-line detail ({err})")
        assert b"Traceback" not in answer, where
    assert count > 400
    assert not failures, "\n".join(failures)


def _raw(port: int, request: bytes) -> int:
    """Send bytes as they are (headers no client library would send); the answer's status."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    status = answer.split(b" ", 2)[1] if answer.startswith(b"HTTP/") else b"0"
    return int(status)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST /api/replay-file HTTP/1.1\r\nHost: {host}\r\nContent-Length: -1\r\n\r\n",
        b"POST /api/replay-file HTTP/1.1\r\nHost: {host}\r\nContent-Length: "
        + b"9" * 5000
        + b"\r\n\r\n",
        b"POST /api/replay-file HTTP/1.1\r\nHost: {host}\r\nContent-Length: abc\r\n\r\n",
        b"GET /api/lab/training/%ff%fe HTTP/1.1\r\nHost: {host}\r\n\r\n",
        b"GET /api/lab/training/\xff\xfe HTTP/1.1\r\nHost: {host}\r\n\r\n",
        b"GET /api/runs/games?run=%ff HTTP/1.1\r\nHost: {host}\r\n\r\n",
        b"GET /api/options HTTP/1.1\r\nHost: " + b"a" * 10_000 + b"\r\n\r\n",
        b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1:99999999999999999999\r\n\r\n",
        b"GET /api/options HTTP/1.1\r\n\r\n",
    ],
    ids=[
        "negative_length",
        "length_of_5000_digits",
        "length_not_a_number",
        "id_of_no_text",
        "raw_bytes_in_path",
        "query_of_no_text",
        "huge_host",
        "host_port_huge",
        "no_host",
    ],
)
def test_malformed_http_is_refused_with_a_4xx(
    served: tuple[int, Path], request_bytes: bytes
) -> None:
    port, _ = served
    request = request_bytes.replace(b"{host}", f"127.0.0.1:{port}".encode())
    status = _raw(port, request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
    assert 400 <= status < 500, status
