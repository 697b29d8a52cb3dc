"""The Lab tab's read-only API: tournament and training runs under the runs folder, their
plots and curves, the shipped agents, and every hostile id, name and file refused in one
line that shows no path of the server."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import quote

import matplotlib.image
import pytest
from conftest import make_config
from fastapi.testclient import TestClient

from uno_env.rules import PRESETS
from unolab.agents.registry import SHIPPED_DIR, shipped_agent_names
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament
from unolab.web.app import create_app
from unolab.web.lab.files import MAX_ID_CHARS
from unolab.web.lab.runs import MAX_PLOT_BYTES, MAX_SUMMARY_BYTES

PNG = b"\x89PNG\r\n\x1a\n"

TOURNAMENT = "tournaments/bots"
TRAINING = "train/ppo_street"
OLD_TRAINING = "old_run"


def _result(rate: float, games: int = 200) -> dict[str, Any]:
    """One bot's evaluation as a training run records it."""
    return {"win_rate": rate, "ci_low": rate - 0.05, "ci_high": rate + 0.05, "games": games}


EVALUATIONS = [
    {"steps": 1000, "results": {"random": _result(0.40), "mixbot": _result(0.20)}},
    {"steps": 2000, "results": {"random": _result(0.45), "mixbot": _result(0.25)}},
    # A resumed run evaluates step 2000 again: the last line of a step counts.
    {"steps": 2000, "results": {"random": _result(0.50), "mixbot": _result(0.30)}},
    {"steps": 3000, "results": {"random": _result(0.55), "mixbot": _result(0.35)}},
]
"""The ``evaluations.jsonl`` of the training run, line by line."""


def _meta(name: str, steps: int, evaluations: dict[str, Any], rules: dict[str, Any]) -> str:
    """A checkpoint's metadata (``latest.json`` / ``best.json``) as a training run writes it."""
    return json.dumps(
        {
            "name": name,
            "algorithm": "ppo",
            "rules": rules,
            "obs_version": 4,
            "steps": steps,
            "evaluations": evaluations,
            "seed": 0,
            "git_commit": None,
            "config": {"name": name, "algorithm": "ppo"},
        }
    )


def _build_runs(root: Path) -> None:
    """A real tournament with plots, a training run with its log, one without."""
    config = {
        "name": "bots",
        "participants": ["random", "mixbot", "card_ranking"],
        "deal_sets": 2,
        "games_per_chunk": 6,
        "bootstrap": 10,
        "seed": 5,
        "output_dir": str(root / "tournaments"),
    }
    run_tournament(load_config(config), progress=False, plots=True, print_table=False)

    street = PRESETS["street"].replace(num_players=3).to_dict()
    training = root / TRAINING
    training.mkdir(parents=True)
    (training / "config.yaml").write_text(
        "name: ppo_street\nalgorithm: ppo\nrules: street\nnum_players: 3\n"
    )
    lines = [json.dumps(e) for e in EVALUATIONS]
    # The run is writing its next line: the torn tail is not read.
    (training / "evaluations.jsonl").write_text("\n".join(lines) + '\n{"steps": 40')
    last = EVALUATIONS[-1]
    (training / "latest.json").write_text(_meta("ppo_street", 3500, last["results"], street))
    (training / "best.json").write_text(_meta("ppo_street", 3000, last["results"], street))

    old = root / OLD_TRAINING
    old.mkdir()
    official = PRESETS["official"].to_dict()
    (old / "config.yaml").write_text("name: old_run\nalgorithm: dqn\n")
    (old / "latest.json").write_text(_meta("old_run", 900, {"random": _result(0.6)}, official))
    (old / "best.json").write_text(_meta("old_run", 600, {"random": _result(0.7)}, official))
    # Not a training run: an imitation run writes config.yaml and none of the checkpoints.
    (root / "imitation").mkdir()
    (root / "imitation" / "config.yaml").write_text("name: imitation\n")
    # Oldest first: the training run, the old run, the tournament.
    now = time.time()
    for age, (folder, name) in enumerate(
        [
            ("tournaments/bots", "summary.json"),
            (OLD_TRAINING, "latest.json"),
            (OLD_TRAINING, "best.json"),
            (OLD_TRAINING, "config.yaml"),
        ]
    ):
        os.utime(root / folder / name, (now - 100 * (age + 1),) * 2)


@pytest.fixture(scope="module")
def made_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runs of :func:`_build_runs`, made once (the tournament takes seconds)."""
    root = tmp_path_factory.mktemp("made") / "runs"
    _build_runs(root)
    return root


@pytest.fixture
def runs(tmp_path: Path, made_runs: Path) -> Path:
    """A copy of the made runs as ``tmp_path/runs``, for a test to spoil."""
    shutil.copytree(made_runs, tmp_path / "runs")
    return tmp_path / "runs"


@pytest.fixture
def client(tmp_path: Path, runs: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_config(tmp_path))) as test_client:
        yield test_client


def _refused(answer: Any, status: int, *secrets: str) -> str:
    """Check a refusal: its status and one line of ``detail`` without any of ``secrets``."""
    assert answer.status_code == status, answer.text
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and detail.strip() and "\n" not in detail, detail
    for secret in secrets:
        assert secret not in detail, (secret, detail)
    return detail


def _summary(runs: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((runs / TOURNAMENT / "summary.json").read_text())
    return data


# ---- what the tab shows ------------------------------------------------------------------


def test_the_runs_are_listed_newest_first(client: TestClient, runs: Path) -> None:
    listed = client.get("/api/lab/runs").json()
    summary = _summary(runs)
    assert listed["tournaments"] == [
        {
            "id": TOURNAMENT,
            "name": "bots",
            "games": summary["schedule"]["games_used"],
            "format": "round_robin",
            "num_players": 2,
            "modified": (runs / TOURNAMENT / "summary.json").stat().st_mtime,
        }
    ]
    assert summary["schedule"]["games_used"] == 12
    training = listed["training"]
    assert [t["id"] for t in training] == [TRAINING, OLD_TRAINING]  # newest first
    assert training[0] == {
        "id": TRAINING,
        "name": "ppo_street",
        "algorithm": "ppo",
        "steps": 3500,  # latest.json: the run went on after its last evaluation
        "modified": max(
            (runs / TRAINING / name).stat().st_mtime
            for name in ("config.yaml", "evaluations.jsonl", "latest.json", "best.json")
        ),
    }
    assert training[1]["algorithm"] == "ppo" and training[1]["steps"] == 900
    assert training[0]["modified"] > training[1]["modified"]


def test_a_tournament_shows_its_summary_and_plots(client: TestClient, runs: Path) -> None:
    answer = client.get(f"/api/lab/tournaments/{TOURNAMENT}")
    assert answer.status_code == 200, answer.text
    shown = answer.json()
    summary = _summary(runs)
    assert shown["id"] == TOURNAMENT and shown["name"] == "bots"
    assert shown["format"] == "round_robin" and shown["num_players"] == 2
    assert shown["rules"] == "official" and shown["games"] == 12
    assert [r["name"] for r in shown["leaderboard"]] == [r["name"] for r in summary["leaderboard"]]
    for row, written in zip(shown["leaderboard"], summary["leaderboard"], strict=True):
        assert set(row) == {"name", "elo", "elo_low", "elo_high", "win_rate", "games"}
        assert row == {key: written[key] for key in row}
    assert shown["plots"] == ["pairwise.png", "positions.png", "ratings.png"]
    for name in shown["plots"]:
        plot = client.get(f"/api/lab/tournaments/{TOURNAMENT}/plots/{name}")
        assert plot.status_code == 200, plot.text
        assert plot.headers["content-type"] == "image/png"
        assert plot.content.startswith(PNG)
        assert plot.content == (runs / TOURNAMENT / name).read_bytes()


def test_a_training_run_shows_the_points_of_its_log(client: TestClient) -> None:
    answer = client.get(f"/api/lab/training/{TRAINING}")
    assert answer.status_code == 200, answer.text
    shown = answer.json()
    assert {k: v for k, v in shown.items() if k != "curve"} == {
        "id": TRAINING,
        "name": "ppo_street",
        "algorithm": "ppo",
        "rules": "street",
        "num_players": 3,
        "steps": 3500,
    }
    kept = [EVALUATIONS[0], EVALUATIONS[2], EVALUATIONS[3]]
    assert shown["curve"] == [
        {"steps": e["steps"], "opponent": bot}
        | {k: r[k] for k in ("win_rate", "ci_low", "ci_high")}
        for e in kept
        for bot, r in e["results"].items()
    ]


def test_a_run_without_a_log_shows_its_checkpoints(client: TestClient) -> None:
    shown = client.get(f"/api/lab/training/{OLD_TRAINING}").json()
    assert shown["rules"] == "official" and shown["num_players"] == 2 and shown["steps"] == 900
    assert [(p["steps"], p["opponent"], p["win_rate"]) for p in shown["curve"]] == [
        (600, "random", 0.7),
        (900, "random", 0.6),
    ]


def test_a_run_without_evaluations_has_an_empty_curve(client: TestClient, runs: Path) -> None:
    for name in ("latest.json", "best.json"):
        meta = json.loads((runs / OLD_TRAINING / name).read_text())
        meta["evaluations"] = {}
        (runs / OLD_TRAINING / name).write_text(json.dumps(meta))
    assert client.get(f"/api/lab/training/{OLD_TRAINING}").json()["curve"] == []
    picture = client.get(f"/api/lab/training/{OLD_TRAINING}/curve.png")
    assert picture.status_code == 200 and picture.content.startswith(PNG)


def test_the_curve_is_drawn_as_a_png(client: TestClient) -> None:
    answer = client.get(f"/api/lab/training/{TRAINING}/curve.png")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/png"
    assert answer.content.startswith(PNG)
    pixels = matplotlib.image.imread(BytesIO(answer.content), format="png")
    assert pixels.shape[:2] == (400, 700)
    # Two coloured lines with their shaded intervals: far more than a blank axes.
    colourful = (abs(pixels[..., 0] - pixels[..., 2]) > 0.2).sum()
    assert colourful > 2000


def test_the_shipped_agents_are_described_from_their_files(client: TestClient) -> None:
    agents = client.get("/api/lab/agents").json()
    assert [a["name"] for a in agents] == list(shipped_agent_names())
    assert agents
    keys = {"name", "title", "rules", "num_players", "observation_version", "algorithm"}
    keys |= {"recipe", "training_steps", "strength"}
    for agent in agents:
        meta = json.loads((SHIPPED_DIR / f"{agent['name']}.json").read_text())
        assert set(agent) == keys
        assert agent["algorithm"] == meta["algorithm"]
        assert agent["num_players"] == meta["rules"]["num_players"]
        assert agent["observation_version"] == meta["obs_version"]
        assert agent["training_steps"] == meta["extra"].get("steps")
        assert agent["rules"] == "official" and isinstance(agent["title"], str)
        assert isinstance(agent["recipe"], str) and "`" not in agent["recipe"]
        measured = meta["extra"]["strength"]
        assert {row["opponent"]: row["win_rate"] for row in agent["strength"]} == {
            bot: row["win_rate"] for bot, row in measured.items() if isinstance(row, dict)
        }
        assert all(row["seed"] == measured["seed"] for row in agent["strength"])


def test_an_empty_or_missing_runs_folder_lists_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(make_config(tmp_path))) as client:
        assert client.get("/api/lab/runs").json() == {"tournaments": [], "training": []}
        _refused(client.get(f"/api/lab/tournaments/{TOURNAMENT}"), 404, str(tmp_path))


def test_a_run_deeper_than_the_walk_goes_is_not_listed(client: TestClient, runs: Path) -> None:
    deep = runs / "a" / "b" / "c" / "d" / "e"
    shutil.copytree(runs / TOURNAMENT, deep)
    shutil.copytree(runs / TOURNAMENT, runs / "a" / "b" / "c" / "d2")
    ids = {t["id"] for t in client.get("/api/lab/runs").json()["tournaments"]}
    assert ids == {TOURNAMENT, "a/b/c/d2"}
    _refused(client.get("/api/lab/tournaments/a/b/c/d/e"), 404)


# ---- hostile ids, names and files --------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/lab/tournaments/%2e%2e/%2e%2e/etc",
        "/api/lab/tournaments/tournaments/%2e%2e/tournaments/bots",
        "/api/lab/tournaments/%2Fetc%2Fpasswd",
        "/api/lab/training/%2e%2e",
        "/api/lab/training/%2Fetc",
        "/api/lab/training/train/ppo_street/%2e%2e/%2e%2e/old_run/curve.png",
        "/api/lab/tournaments/tournaments/bots/plots/%2e%2e%2fsummary.json",
        "/api/lab/tournaments/tournaments/bots/plots/summary.json",
        "/api/lab/tournaments/tournaments/bots/plots/leaderboard.csv",
        "/api/lab/tournaments/tournaments/bots/plots/nothing.png",
        "/api/lab/tournaments/imitation",
        "/api/lab/training/imitation",
        "/api/lab/training/tournaments/bots",
        "/api/lab/tournaments/train/ppo_street",
    ],
)
def test_ids_and_names_that_are_no_run_are_unknown(
    client: TestClient, tmp_path: Path, path: str
) -> None:
    _refused(client.get(path), 404, str(tmp_path), "Traceback")


def test_an_absolute_path_to_a_run_is_unknown(client: TestClient, runs: Path) -> None:
    absolute = quote(str(runs / TOURNAMENT), safe="")
    _refused(client.get(f"/api/lab/tournaments/{absolute}"), 404)
    _refused(client.get(f"/api/lab/training/{quote(str(runs / TRAINING))}"), 404)


def test_an_id_too_long_is_refused(client: TestClient) -> None:
    _refused(client.get("/api/lab/tournaments/" + "a/" * (MAX_ID_CHARS // 2 + 1)), 422)


def test_links_out_of_the_runs_folder_are_not_followed(
    client: TestClient, tmp_path: Path, runs: Path
) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(runs / TOURNAMENT, outside / "bots")
    shutil.copytree(runs / TRAINING, outside / "train")
    (outside / "secret.png").write_bytes(PNG + b"secret")
    (runs / "linked").symlink_to(outside / "bots", target_is_directory=True)
    (runs / "linked_training").symlink_to(outside / "train", target_is_directory=True)
    (runs / "file_linked").mkdir()
    (runs / "file_linked" / "summary.json").symlink_to(outside / "bots" / "summary.json")
    (runs / TOURNAMENT / "secret.png").symlink_to(outside / "secret.png")
    (runs / TRAINING / "evaluations.jsonl").unlink()
    (runs / TRAINING / "evaluations.jsonl").symlink_to(outside / "train" / "evaluations.jsonl")

    listed = client.get("/api/lab/runs").json()
    assert [t["id"] for t in listed["tournaments"]] == [TOURNAMENT]
    assert {t["id"] for t in listed["training"]} == {TRAINING, OLD_TRAINING}
    for path in (
        "/api/lab/tournaments/linked",
        "/api/lab/tournaments/file_linked",
        "/api/lab/training/linked_training",
        f"/api/lab/tournaments/{TOURNAMENT}/plots/secret.png",
    ):
        _refused(client.get(path), 404, str(tmp_path))
    assert "secret.png" not in client.get(f"/api/lab/tournaments/{TOURNAMENT}").json()["plots"]
    # The replay tab walks the runs folder the same way: the linked run is no run there.
    assert client.get("/api/runs").json() == [TOURNAMENT]
    _refused(client.get("/api/runs/games", params={"run": "linked"}), 404, str(tmp_path))
    # The log is a link out: the curve falls back to the checkpoints inside the folder.
    curve = client.get(f"/api/lab/training/{TRAINING}").json()["curve"]
    assert {p["steps"] for p in curve} == {3000, 3500}


def test_a_run_inside_a_run_is_none_in_either_tab(client: TestClient, runs: Path) -> None:
    # Runs do not nest: a copy of the run inside it (named like a plot's path) is not one,
    # and both tabs say so alike.
    shutil.copytree(runs / TOURNAMENT, runs / TOURNAMENT / "plots" / "y")
    assert [t["id"] for t in client.get("/api/lab/runs").json()["tournaments"]] == [TOURNAMENT]
    assert client.get("/api/runs").json() == [TOURNAMENT]
    detail = _refused(client.get(f"/api/lab/tournaments/{TOURNAMENT}/plots/y"), 404)
    assert "has no plot 'y'" in detail
    nested = {"run": f"{TOURNAMENT}/plots/y"}
    _refused(client.get("/api/runs/games", params=nested), 404)


def test_a_plot_whose_name_is_no_text_is_not_listed(client: TestClient, runs: Path) -> None:
    # Bytes that are not UTF-8 cannot be sent in the detail's JSON nor asked for by name.
    (runs / TOURNAMENT / os.fsdecode(b"bad\xffname.png")).write_bytes(PNG + b"x")
    (runs / TOURNAMENT / "line\nbreak.png").write_bytes(PNG + b"x")
    snowman = "uni\u2603 code.png"
    (runs / TOURNAMENT / snowman).write_bytes(PNG + b"x")
    answer = client.get(f"/api/lab/tournaments/{TOURNAMENT}")
    assert answer.status_code == 200, answer.text
    plots = answer.json()["plots"]
    assert snowman in plots
    assert not [p for p in plots if "bad" in p or "break" in p], plots
    picture = client.get(f"/api/lab/tournaments/{TOURNAMENT}/plots/{quote(snowman)}")
    assert picture.status_code == 200 and picture.content == PNG + b"x"


@pytest.mark.timeout(60)
def test_a_fifo_is_no_run_and_does_not_hang(client: TestClient, runs: Path) -> None:
    (runs / "piped").mkdir()
    os.mkfifo(runs / "piped" / "summary.json")
    os.mkfifo(runs / TOURNAMENT / "piped.png")
    assert [t["id"] for t in client.get("/api/lab/runs").json()["tournaments"]] == [TOURNAMENT]
    _refused(client.get("/api/lab/tournaments/piped"), 404)
    _refused(client.get(f"/api/lab/tournaments/{TOURNAMENT}/plots/piped.png"), 404)


def test_a_huge_summary_is_refused_and_still_listed(
    client: TestClient, tmp_path: Path, runs: Path
) -> None:
    with open(runs / TOURNAMENT / "summary.json", "r+b") as summary:
        summary.truncate(MAX_SUMMARY_BYTES + 1)  # sparse: no disk is spent on it
    detail = _refused(client.get(f"/api/lab/tournaments/{TOURNAMENT}"), 422, str(tmp_path))
    assert f"{TOURNAMENT}/summary.json" in detail
    listed = client.get("/api/lab/runs").json()["tournaments"]
    assert [(t["id"], t["name"], t["games"]) for t in listed] == [(TOURNAMENT, "bots", 0)]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000, "nested too deeply"),
        ('["a list"]', "leaderboard"),
        ('{"leaderboard": [{"name": "x", "games": 3}]}', "row 1"),
        ('{"leaderboard": [{"name": "x", "elo": true, "games": 3}]}', "row 1"),
        (b'{"name": "\xff"}', "UTF-8"),
    ],
)
def test_a_malformed_summary_is_one_line_naming_the_file(
    client: TestClient, tmp_path: Path, runs: Path, text: str | bytes, says: str
) -> None:
    path = runs / TOURNAMENT / "summary.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    detail = _refused(client.get(f"/api/lab/tournaments/{TOURNAMENT}"), 422, str(tmp_path))
    assert detail.startswith(f"{TOURNAMENT}/summary.json") and says in detail, detail
    assert client.get("/api/lab/runs").status_code == 200


@pytest.mark.parametrize(
    ("file", "text", "says"),
    [
        ("evaluations.jsonl", '{"steps": 1, "results": {}}\n{oops\n{"steps": 2}\n', "line 2"),
        ("evaluations.jsonl", '{"steps": "many", "results": {}}\n', "line 1"),
        ("evaluations.jsonl", '{"steps": 5, "results": {"random": {"win_rate": 1}}}\n', "random"),
        ("latest.json", "{", "not valid JSON"),
        ("best.json", "[1, 2]", "no mapping"),
    ],
)
def test_a_malformed_training_file_is_one_line_naming_it(
    client: TestClient, tmp_path: Path, runs: Path, file: str, text: str, says: str
) -> None:
    (runs / TRAINING / file).write_text(text)
    for path in (f"/api/lab/training/{TRAINING}", f"/api/lab/training/{TRAINING}/curve.png"):
        detail = _refused(client.get(path), 422, str(tmp_path), "Traceback")
        assert detail.startswith(f"{TRAINING}/{file}") and says in detail, detail
    assert client.get("/api/lab/runs").status_code == 200


def test_a_plot_that_is_too_large_or_no_png_is_refused(
    client: TestClient, tmp_path: Path, runs: Path
) -> None:
    (runs / TOURNAMENT / "fake.png").write_text("<script>alert(1)</script>")
    with open(runs / TOURNAMENT / "huge.png", "wb") as huge:
        huge.write(PNG)
        huge.truncate(MAX_PLOT_BYTES + 1)
    assert {"fake.png", "huge.png"} <= set(
        client.get(f"/api/lab/tournaments/{TOURNAMENT}").json()["plots"]
    )
    for name in ("fake.png", "huge.png"):
        detail = _refused(
            client.get(f"/api/lab/tournaments/{TOURNAMENT}/plots/{name}"), 422, str(tmp_path)
        )
        assert f"{TOURNAMENT}/{name}" in detail


def test_names_with_dollars_draw_as_text(client: TestClient, runs: Path) -> None:
    bad = {"steps": 10, "results": {"$\\frac{$": _result(0.5), "_hidden": _result(0.4)}}
    (runs / TRAINING / "evaluations.jsonl").write_text(json.dumps(bad) + "\n")
    answer = client.get(f"/api/lab/training/{TRAINING}/curve.png")
    assert answer.status_code == 200, answer.text
    assert answer.content.startswith(PNG)
