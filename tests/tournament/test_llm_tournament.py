"""A language model in a tournament, against a real chat-completions server on 127.0.0.1.

* Telemetry: the summary's counts of a model (decisions, invalid answers, retries,
  fallbacks, transport retries, tokens) are exactly what the scripted server served, over
  several chunks, with one worker or two; the leaderboard shows invalid answers and
  fallbacks beside the Elo (terminal and ``leaderboard.csv``), and a bots-only run does not.
* Decision records: one file per participant and chunk; a run killed with ``kill -9`` in
  the middle and rerun asks the model nothing it had recorded, and its summary holds the
  telemetry of the whole run; ``--fresh`` discards the records and the telemetry.
* An endpoint that refuses (nothing listening, an unknown model, a refused key) stops the
  run at its first chunk with one line naming the participant, before any game is written.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from support.optional import require

from uno_env.config_values import ConfigError
from unolab.benchmarks.chat_server import ChatServer, Script, chat_server, silent_port
from unolab.tournament.backends import shipped_entrants
from unolab.tournament.cli import default_name
from unolab.tournament.cli import main as cli_main
from unolab.tournament.config import load_config
from unolab.tournament.participants import entrants_for
from unolab.tournament.runner import run_tournament
from unolab.tournament.telemetry import TELEMETRY_FILE, decisions_file

require("openai", "language-model agents (pip install -e .[llm])")

COUNTS = ("decisions", "requests", "invalid", "retries", "fallbacks", "transport_retries")


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with chat_server(models=("test-model", "org/model:7b")) as running:
        yield running


def _spec(folder: Path, server: ChatServer, name: str = "my_model", **keys: Any) -> Path:
    values = {"model": "test-model", "base_url": server.base_url, "backoff_s": 0, **keys}
    path = folder / f"{name}.yaml"
    path.write_text("llm:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in values.items()))
    return path


def _config(out: Path, spec: Path, **keys: Any) -> Any:
    data = {
        "name": "llm",
        "participants": [str(spec), "random"],
        "num_players": 2,
        "deal_sets": 4,
        "games_per_chunk": 4,
        "bootstrap": 0,
        "output_dir": str(out),
        **keys,
    }
    return load_config(data)


def _run(config: Any, **kwargs: Any) -> dict[str, Any]:
    return run_tournament(config, progress=False, plots=False, print_table=False, **kwargs)


def _row(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in summary["leaderboard"] if r["name"] == name)


FAULTY = Script(invalid_every=4, rate_limit_every=9, error_every=11)
"""Invalid answers, 429s and 500s, each decided by the prompt's text."""


def test_the_summary_counts_what_the_server_served(tmp_path: Path, server: ChatServer) -> None:
    served = server.play(FAULTY)
    summary = _run(_config(tmp_path, _spec(tmp_path, server)))
    report = _row(summary, "my_model")["telemetry"]
    assert report["requests"] == served.answers
    assert report["invalid"] == served.invalid > 0
    assert report["transport_retries"] == served.rate_limited + served.errors > 0
    assert report["tokens_in"] == served.tokens_in
    assert report["tokens_out"] == served.tokens_out
    # An invalid answer is retried once; a second invalid answer plays the fallback.
    assert report["retries"] + report["decisions"] == report["requests"]
    assert report["invalid"] == report["retries"] + report["fallbacks"]
    assert report["fallbacks"] > 0
    assert 0 < report["latency_mean_s"] <= report["latency_p90_s"] * 10
    assert "telemetry" not in _row(summary, "random")  # a bot reports nothing
    # One telemetry line per chunk; the decisions, one record each, in the chunks' files.
    folder = tmp_path / "llm"
    lines = (folder / TELEMETRY_FILE).read_text().splitlines()
    assert len(lines) == summary["schedule"]["games_planned"] // 4 == 2
    recorded = [
        json.loads(line)
        for chunk in range(2)
        for line in decisions_file(folder, "my_model", chunk).read_text().splitlines()
    ]
    assert len(recorded) == report["decisions"]
    assert sum(r["invalid"] for r in recorded) == served.invalid
    assert sum(r["fallback"] for r in recorded) == report["fallbacks"]


def test_two_workers_give_the_same_counts(tmp_path: Path, server: ChatServer) -> None:
    server.play(FAULTY)
    one = _row(_run(_config(tmp_path / "one", _spec(tmp_path, server))), "my_model")
    served = server.play(FAULTY)
    two = _row(_run(_config(tmp_path / "two", _spec(tmp_path, server), workers=2)), "my_model")
    assert {k: two["telemetry"][k] for k in COUNTS} == {k: one["telemetry"][k] for k in COUNTS}
    assert two["telemetry"]["invalid"] == served.invalid
    assert (two["elo"], two["games"]) == (one["elo"], one["games"])


def test_the_leaderboard_shows_invalid_answers_and_fallbacks(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.play(FAULTY)
    spec = _spec(tmp_path, server)
    argv = [
        "--name", "llm", "--participants", str(spec), "random", "--players", "2",
        "--deal-sets", "2", "--bootstrap", "0", "--output-dir", str(tmp_path),
        "--no-progress", "--no-plots",
    ]  # fmt: skip
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    assert header.split()[-1] == "bad/fb"
    summary = json.loads((tmp_path / "llm" / "summary.json").read_text())
    report = _row(summary, "my_model")["telemetry"]
    model_line = next(line for line in out.splitlines() if " my_model " in f" {line} ")
    assert model_line.split()[-1] == f"{report['invalid']}/{report['fallbacks']}"
    assert f"my_model: {report['decisions']} decisions" in out
    with (tmp_path / "llm" / "leaderboard.csv").open() as f:
        rows = {row["name"]: row for row in csv.DictReader(f)}
    assert rows["my_model"]["invalid"] == str(report["invalid"])
    assert rows["my_model"]["fallbacks"] == str(report["fallbacks"])
    assert rows["random"]["invalid"] == ""
    # Bots alone: no such column.
    bots = [
        "--name", "bots", "--participants", "random", "greedy_points", "--deal-sets", "2",
        "--bootstrap", "0", "--output-dir", str(tmp_path), "--no-progress", "--no-plots",
    ]  # fmt: skip
    assert cli_main(bots) == 0
    assert "bad/fb" not in capsys.readouterr().out
    with (tmp_path / "bots" / "leaderboard.csv").open() as f:
        assert "invalid" not in next(csv.reader(f))


def test_a_spec_file_is_named_by_its_stem_and_its_model_may_hold_colons_and_slashes(
    tmp_path: Path, server: ChatServer
) -> None:
    server.play(Script())
    spec = _spec(tmp_path, server, name="qwen_7b", model="org/model:7b")
    summary = _run(_config(tmp_path, spec, deal_sets=1))
    assert {r["name"] for r in summary["leaderboard"]} == {"qwen_7b", "random"}
    named = load_config(
        {"name": "n", "participants": [{"name": "org/model:7b", "path": str(spec)}, "random"],
         "deal_sets": 1, "bootstrap": 0, "output_dir": str(tmp_path)}
    )  # fmt: skip
    _run(named)
    files = list((tmp_path / "n" / "decisions").iterdir())
    assert len(files) == 1 and ":" not in files[0].name and "/" not in files[0].name
    assert (files[0] / "chunk-0.jsonl").stat().st_size > 0


def test_a_yaml_file_without_llm_is_refused_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("name: not a model\n")
    config = load_config(
        {"name": "x", "participants": [str(other), "random"], "output_dir": str(tmp_path)}
    )
    with pytest.raises(ConfigError) as err:
        entrants_for(config)
    message = str(err.value)
    assert "other.yaml" in message and "llm" in message and "\n" not in message


# --- records: resume without asking again -------------------------------------------------


def _digests_asked(folder: Path) -> set[str]:
    """The digest of every user message the records say was sent to the model."""
    out = set()
    for path in (folder / "decisions").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by the kill
            for message in record["messages"]:
                if message["role"] == "user":
                    out.add(hashlib.sha256(message["content"].encode()).hexdigest())
    return out


def test_a_torn_chunk_is_played_again_from_its_records(tmp_path: Path, server: ChatServer) -> None:
    server.play(FAULTY)
    spec = _spec(tmp_path, server)
    config = _config(tmp_path, spec)
    whole = _row(_run(config), "my_model")["telemetry"]
    folder = tmp_path / "llm"
    log = folder / "games.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:5]) + lines[5][:20])  # the second chunk written in part
    served = server.play(FAULTY)
    again = _row(_run(config), "my_model")["telemetry"]
    assert served.requests == 0  # every decision of the chunk was recorded
    assert {k: again[k] for k in ("decisions", "invalid", "retries", "fallbacks")} == {
        k: whole[k] for k in ("decisions", "invalid", "retries", "fallbacks")
    }
    second = [
        json.loads(line) for line in decisions_file(folder, "my_model", 1).read_text().splitlines()
    ]
    assert again["replayed"] == sum(len(r["requests"]) for r in second) // 2
    assert len((folder / TELEMETRY_FILE).read_text().splitlines()) == 2
    # --fresh discards the records and the telemetry with the games.
    served = server.play(FAULTY)
    fresh = _row(_run(config, fresh=True), "my_model")["telemetry"]
    assert fresh["replayed"] == 0 and served.answers == fresh["requests"] == whole["requests"]
    assert len(decisions_file(folder, "my_model", 1).read_text().splitlines()) == len(second) // 2


def test_a_run_killed_mid_run_asks_nothing_it_recorded(tmp_path: Path, server: ChatServer) -> None:
    server.play(Script(delay_s=0.005))
    spec = _spec(tmp_path, server, concurrency=4)
    argv = [
        sys.executable, "-m", "unolab.tournament", "--name", "llm",
        "--participants", str(spec), "random", "--players", "2", "--deal-sets", "6",
        "--games-per-chunk", "4", "--bootstrap", "0", "--output-dir", str(tmp_path),
        "--no-progress", "--no-plots",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    folder = tmp_path / "llm"
    records = decisions_file(folder, "my_model", 1)
    deadline = time.monotonic() + 600
    while not (records.is_file() and records.stat().st_size > 2000):  # mid-way in chunk 1
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no decision of chunk 1 was recorded"
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len((folder / "games.jsonl").read_text().splitlines()) == 4  # chunk 0 only
    asked = _digests_asked(folder)
    served = server.play(Script(delay_s=0.005))
    assert cli_main(argv[3:]) == 0
    again = set(served.tries)
    assert again and not (again & asked)  # nothing recorded was asked again
    summary = json.loads((folder / "summary.json").read_text())
    report = _row(summary, "my_model")["telemetry"]
    recorded = sum(
        len(path.read_text().splitlines()) for path in (folder / "decisions").rglob("*.jsonl")
    )
    assert report["replayed"] > 0
    assert report["decisions"] <= recorded
    assert summary["run"]["games_resumed"] == 4
    assert len((folder / TELEMETRY_FILE).read_text().splitlines()) == 3


# --- an endpoint that refuses --------------------------------------------------------------


@pytest.mark.parametrize("fault", ["refused", "model", "key"])
def test_an_endpoint_that_refuses_stops_the_run_in_one_line(
    tmp_path: Path,
    server: ChatServer,
    fault: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.play(Script())
    with silent_port() as port:
        keys: dict[str, Any] = {
            "refused": {"base_url": f"http://127.0.0.1:{port}/v1"},
            "model": {"model": "no-such-model"},
            "key": {"api_key_env": "UNO_TEST_KEY"},
        }[fault]
        if fault == "key":
            with chat_server(api_key="the-right-one") as guarded:
                monkeypatch.setenv("UNO_TEST_KEY", "a-wrong-one")
                spec = _spec(tmp_path, guarded, **keys)
                code = _cli(tmp_path, spec)
        else:
            code = _cli(tmp_path, _spec(tmp_path, server, **keys))
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: participant 'my_model': ")
    assert "Traceback" not in err and "a-wrong-one" not in err
    expected = {"refused": "nothing answers there", "model": "no-such-model", "key": "HTTP 401"}
    assert expected[fault] in err
    log = tmp_path / "llm" / "games.jsonl"
    assert not log.exists() or log.stat().st_size == 0  # no forfeit was written


def _cli(out: Path, spec: Path) -> int:
    return cli_main(
        ["--name", "llm", "--participants", str(spec), "random", "--deal-sets", "50",
         "--games-per-chunk", "10", "--bootstrap", "0", "--output-dir", str(out),
         "--no-progress", "--no-plots"]
    )  # fmt: skip


def test_the_ray_backend_refuses_a_language_model_in_one_line(
    tmp_path: Path, server: ChatServer
) -> None:
    entrants = entrants_for(_config(tmp_path, _spec(tmp_path, server)))
    with pytest.raises(ConfigError) as err:
        shipped_entrants(entrants)
    message = str(err.value)
    assert message.startswith("participant 'my_model' is a language model") and "local" in message


def test_a_run_without_a_name_is_named_by_its_participants(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.play(Script())
    spec = _spec(tmp_path, server)
    argv = ["--participants", "random", str(spec), "--deal-sets", "1", "--bootstrap", "0",
            "--output-dir", str(tmp_path), "--no-progress", "--no-plots"]  # fmt: skip
    assert cli_main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"results in {tmp_path / 'random_my_model'}/"
    assert default_name(["pimc:2048", "runs/x/a.safetensors", "my_bots.py:MyBot"]) == (
        "pimc-2048_a_my_bots.py-MyBot"
    )


def test_a_resume_refuses_a_model_that_plays_otherwise_but_not_a_moved_server(
    tmp_path: Path, server: ChatServer
) -> None:
    server.play(Script())
    spec = _spec(tmp_path, server)
    _run(_config(tmp_path, spec, deal_sets=1))
    with chat_server() as moved:  # the same model served elsewhere: the run resumes
        moved.play(Script())
        _spec(tmp_path, moved)
        summary = _run(_config(tmp_path, spec, deal_sets=2))
    assert summary["run"]["games_resumed"] == 2 and summary["run"]["games_played"] == 2
    _spec(tmp_path, server, temperature=0.7)
    with pytest.raises(ConfigError) as err:
        _run(_config(tmp_path, spec, deal_sets=3))
    message = str(err.value)
    assert "language_models.my_model" in message and "0.7" in message
    assert "\n" not in message


def test_a_corrupt_records_file_stops_the_resume_in_one_line(
    tmp_path: Path, server: ChatServer
) -> None:
    server.play(Script())
    config = _config(tmp_path, _spec(tmp_path, server))
    _run(config)
    folder = tmp_path / "llm"
    log = folder / "games.jsonl"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:5]))  # chunk 1 torn
    records = decisions_file(folder, "my_model", 1)
    lines = records.read_text().splitlines(keepends=True)
    records.write_text(lines[0] + "not a record\n" + "".join(lines[1:]))
    with pytest.raises(ConfigError) as err:
        _run(config)
    message = str(err.value)
    assert str(records) in message and "line 2" in message and "\n" not in message
