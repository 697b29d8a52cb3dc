"""Tests of running tournaments (``unolab.tournament.runner``, ``unolab.tournament.results``, the CLI).

* Determinism: the same config gives the same log (byte for byte) and summary with 1 or 2
  workers.
* Resume after ``kill -9``: a real CLI subprocess is killed mid-run; restarting it loses no
  finished game, duplicates none, and ends with the very log of an uninterrupted run.
* The game log: a torn last line is dropped and the file repaired; corruption elsewhere
  raises; lines of another run (another seed's log, one foreign line, a second result for
  one game) are refused and the files left as they were.
* A full disk: a failed append is taken back whole and ends the run in one line; the resume
  (as the resume of a log holding part of a chunk) plays exactly the games of an
  uninterrupted run.
* One run per folder: a second run on a held folder is refused, naming the holder's pid.
* A run folder of another config is refused (``--fresh`` starts over); ``deal_sets`` may grow.
* The SPRT stops an A/B run by itself, and a resumed run does not play on.
* Outputs: summary.json, leaderboard.csv, PNG plots, the terminal table; config errors.
* Exported agents by path; SB3 zips need ``--allow-pickle``.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from support.agents import write_tiny_agent

from uno_env.config_values import ConfigError
from uno_env.files import FolderInUseError, FolderLock
from unolab.tournament import results
from unolab.tournament.cli import main as cli_main
from unolab.tournament.config import load_config
from unolab.tournament.results import GameRecord, ResultStore
from unolab.tournament.runner import run_tournament


def _config(tmp: Path, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "t",
        "participants": ["random", "greedy_points", "mixbot"],
        "deal_sets": 40,
        "games_per_chunk": 30,
        "bootstrap": 50,
        "seed": 11,
        "output_dir": str(tmp),
    }
    base.update(changes)
    return base


def _run(data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return run_tournament(
        load_config(data), progress=False, plots=False, print_table=False, **kwargs
    )


def _sorted_lines(path: Path) -> list[str]:
    return sorted(path.read_text().splitlines())


def _without_run(summary: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(summary))
    for key in ("run", "config"):
        out.pop(key)
    return out


def test_same_config_same_results_with_any_number_of_workers(tmp_path: Path) -> None:
    one = _run(_config(tmp_path / "a", workers=1, deal_sets=30, games_per_chunk=40))
    two = _run(_config(tmp_path / "b", workers=2, deal_sets=30, games_per_chunk=40))
    assert one["schedule"]["games_used"] == 3 * 30 * 2
    assert _without_run(one) == _without_run(two)
    lines_a = _sorted_lines(tmp_path / "a" / "t" / "games.jsonl")
    # The chunks are written in plan order whatever order they finish in: the same bytes.
    log_a = (tmp_path / "a" / "t" / "games.jsonl").read_bytes()
    assert log_a == (tmp_path / "b" / "t" / "games.jsonl").read_bytes()
    _run(_config(tmp_path / "c", deal_sets=30, games_per_chunk=40, seed=12))
    assert lines_a != _sorted_lines(tmp_path / "c" / "t" / "games.jsonl")


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_resume_after_kill_minus_nine(tmp_path: Path) -> None:
    args = [
        sys.executable,
        "-m",
        "tournament",
        "--name",
        "killed",
        "--participants",
        "random",
        "greedy_points",
        "card_ranking",
        "--deal-sets",
        "150",
        "--games-per-chunk",
        "60",
        "--workers",
        "2",
        "--bootstrap",
        "0",
        "--no-progress",
        "--no-plots",
        "--output-dir",
    ]
    total = 3 * 150 * 2
    log = tmp_path / "run" / "killed" / "games.jsonl"
    proc = subprocess.Popen(
        [*args, str(tmp_path / "run")], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and log.stat().st_size > 0:
            break
        time.sleep(0.002)
    time.sleep(0.2)  # a few more chunks land; the kill comes in the middle of the run
    workers = _children(proc.pid)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _whole_chunks(log.read_text().splitlines(keepends=True), 60)
    assert 0 < len(before) < total, "killed in the middle"
    assert workers, "the run used worker processes"
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "workers exit when the main process dies"
    # Restart: it resumes, and the result is exactly an uninterrupted run's.
    done = subprocess.run([*args, str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = log.read_text().splitlines(keepends=True)
    units = [tuple(json.loads(x)[k] for k in ("deal", "seating", "variant")) for x in after]
    assert len(units) == len(set(units)) == total, "no game lost, none duplicated"
    assert after[: len(before)] == before, "finished games are kept as they were"
    summary = json.loads((tmp_path / "run" / "killed" / "summary.json").read_text())
    assert summary["run"]["games_resumed"] == len(before)
    assert summary["run"]["games_played"] == total - len(before)
    reference = run_tournament(
        load_config(
            {
                "name": "killed",
                "participants": ["random", "greedy_points", "card_ranking"],
                "deal_sets": 150,
                "games_per_chunk": 60,
                "bootstrap": 0,
                "output_dir": str(tmp_path / "ref"),
            }
        ),
        progress=False,
        plots=False,
        print_table=False,
    )
    assert "".join(after) == (tmp_path / "ref" / "killed" / "games.jsonl").read_text()
    assert _without_run(reference) == _without_run(summary)


def _whole_chunks(lines: list[str], per_chunk: int) -> list[str]:
    """The lines of the chunks a log holds whole (a kill inside a write may leave part of
    one, with a torn last line: the resume drops those and plays that chunk again)."""
    lines = [x for x in lines if x.endswith("\n")]
    deals_per_chunk = per_chunk // 2  # two seatings per deal set
    count: dict[int, int] = {}
    for line in lines:
        chunk = json.loads(line)["deal"] // deals_per_chunk
        count[chunk] = count.get(chunk, 0) + 1
    return [x for x in lines if count[json.loads(x)["deal"] // deals_per_chunk] == per_chunk]


def _record(deal: int) -> GameRecord:
    return GameRecord(deal, 0, 0, 7, ("a", "b"), (0, 1), (12, 0), (0, 3), 40, "won")


def test_store_repairs_a_torn_last_line(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "games.jsonl")
    assert store.load() == {}
    store.append([_record(0), _record(1)])
    with store.path.open("a") as f:
        f.write(_record(2).to_json()[:25])  # a write cut short by a crash
    loaded = store.load()
    assert sorted(loaded) == [(0, 0, 0), (1, 0, 0)]
    assert store.dropped_tail == 25
    assert store.path.read_text().endswith("\n")
    store.append([_record(2)])
    assert sorted(ResultStore(store.path).load()) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    assert ResultStore(store.path).load()[(1, 0, 0)] == _record(1)


def test_store_refuses_corruption_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(_record(0).to_json() + "\n{garbage\n" + _record(1).to_json() + "\n")
    with pytest.raises(ValueError, match="line 2"):
        ResultStore(path).load()


def test_store_ignores_duplicates(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "games.jsonl")
    store.append([_record(0), _record(0)])
    assert len(store.load()) == 1 and store.duplicates == 1


def test_another_config_is_refused_and_runs_can_grow(tmp_path: Path) -> None:
    first = _run(_config(tmp_path, deal_sets=10))
    assert first["run"]["games_played"] == 60
    with pytest.raises(ConfigError, match="another config"):
        _run(_config(tmp_path, deal_sets=10, seed=3))
    again = _run(_config(tmp_path, deal_sets=10))
    assert again["run"]["games_played"] == 0 and again["run"]["games_resumed"] == 60
    grown = _run(_config(tmp_path, deal_sets=15))
    assert grown["run"]["games_played"] == 30
    assert grown["schedule"]["games_used"] == 90
    restarted = _run(_config(tmp_path, deal_sets=10, seed=3), fresh=True)
    assert restarted["run"]["games_played"] == 60 and restarted["run"]["games_resumed"] == 0


def test_sprt_stops_an_ab_run_by_itself(tmp_path: Path) -> None:
    data = _config(
        tmp_path,
        name="ab",
        format="ab",
        candidate="mixbot",
        incumbent="random_any",
        participants=["greedy_points"],
        deal_sets=2000,
        games_per_chunk=40,
        workers=2,
        sprt={"elo0": 0, "elo1": 30},
    )
    summary = _run(data)
    sprt = summary["sprt"]
    assert sprt["decision"] == "H1"
    assert sprt["n"] < 200
    assert summary["schedule"]["deal_sets_played"] == sprt["n"]
    assert summary["run"]["games_played"] < 2000 * 4
    assert summary["ab"]["score"] > 0.6 and summary["ab"]["variance"] is not None
    resumed = _run(data)
    assert resumed["run"]["games_played"] == 0
    assert resumed["sprt"] == sprt


def test_cli_writes_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "gauntlet.yaml"
    config.write_text(
        "name: g\nformat: gauntlet\ncandidate: mixbot\n"
        "participants: [random, greedy_points, card_ranking]\nnum_players: 3\n"
        f"deal_sets: 6\nbootstrap: 30\noutput_dir: {tmp_path}\n"
    )
    assert cli_main(["--config", str(config), "--no-progress", "--set", "seed=5"]) == 0
    out = capsys.readouterr().out
    assert "mixbot" in out and "Elo" in out and "endings" in out
    folder = tmp_path / "g"
    for name in ("summary.json", "leaderboard.csv", "ratings.png", "pairwise.png", "games.jsonl"):
        assert (folder / name).stat().st_size > 0, name
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["config"]["seed"] == 5
    assert summary["schedule"]["tables"] == 3 and summary["schedule"]["seatings"] == [
        list(r) for r in summary["schedule"]["seatings"]
    ]
    assert summary["candidate"] == "mixbot"
    header = (folder / "leaderboard.csv").read_text().splitlines()[0]
    assert header.startswith("rank,name,elo,elo_low,elo_high")
    assert len(summary["seats"]) == 3 and len(summary["leaderboard"]) == 4
    lines = (folder / "games.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert {"deal", "key", "seating", "seats", "ranks", "points", "turns", "end"} <= set(first)
    assert all(GameRecord.from_json(line).to_json() == line for line in lines)


def test_set_changes_one_switch_of_the_rules_preset(tmp_path: Path) -> None:
    """``--rules street --set rules.jump_in=false`` plays street without jump-in."""
    import dataclasses

    from uno_env import load_rules
    from unolab.tournament.cli import build_parser, config_from_args

    args = build_parser().parse_args(
        [
            "--name",
            "x",
            "--participants",
            "random",
            "mixbot",
            "--rules",
            "street",
            "--set",
            "rules.jump_in=false",
            "--output-dir",
            str(tmp_path),
        ]
    )
    rules = config_from_args(args).game_rules()
    street = load_rules("street", num_players=rules.num_players)
    assert rules.jump_in is False and street.jump_in is True
    # (a tournament deals each seat its own draw stream)
    assert dataclasses.replace(rules, jump_in=True, seat_draw_streams=False) == street


def test_cli_reports_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in (
        (["--name", "x", "--participants", "random", "nobot"], "unknown agent 'nobot'"),
        (["--name", "x", "--participants", "random", "a.txt"], "is not an agent file"),
        (["--name", "x", "--participants", "random"], "at least 2 participants"),
        (["--deal-sets", "3"], "give --config, or --participants"),
    ):
        assert cli_main([*argv, "--output-dir", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_sb3_zips_need_allow_pickle(tmp_path: Path) -> None:
    data = _config(tmp_path, participants=["random", str(tmp_path / "model.zip")])
    with pytest.raises(ConfigError, match="allow-pickle"):
        load_config(data)
    with pytest.raises(ConfigError, match="does not exist"):
        _run({**data, "allow_pickle": True})


def test_only_the_flag_allows_pickle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config file or a --set item cannot switch unpickling on: a handed-over file could."""
    zip_path = tmp_path / "model.zip"
    config = tmp_path / "t.yaml"
    config.write_text(f"name: t\nparticipants: [random, {zip_path}]\nallow_pickle: true\n")
    with pytest.raises(ConfigError, match="allow_pickle cannot be set here") as caught:
        load_config(config)
    assert str(config) in str(caught.value)
    with pytest.raises(ConfigError, match="--set: allow_pickle cannot be set here"):
        load_config({"name": "t", "participants": ["random"]}, ["allow_pickle=true"])
    for argv in (
        ["--config", str(config)],
        ["--name", "t", "--participants", "random", str(zip_path), "--set", "allow_pickle=true"],
    ):
        assert cli_main([*argv, "--output-dir", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert "allow_pickle cannot be set here" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_sb3_zip_plays_with_allow_pickle(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from uno_env.envs.gym_env import UnoGymEnv

    env = UnoGymEnv(rules="official", num_players=2)
    model = MaskablePPO(
        "MlpPolicy", env, policy_kwargs={"net_arch": [8]}, n_steps=16, batch_size=16, device="cpu"
    )
    model.save(tmp_path / "tiny_ppo.zip")
    data = _config(tmp_path, participants=["random", str(tmp_path / "tiny_ppo.zip")], deal_sets=5)
    summary = _run({**data, "allow_pickle": True})
    assert {r["name"] for r in summary["leaderboard"]} == {"random", "tiny_ppo"}
    assert summary["endings"]["counts"]["forfeit"] == 0


def test_exported_agents_play_by_path(tmp_path: Path) -> None:
    path = write_tiny_agent(tmp_path / "agents")
    summary = _run(_config(tmp_path, participants=["random", str(path)], deal_sets=5))
    names = {r["name"] for r in summary["leaderboard"]}
    assert names == {"random", "tiny"}
    assert summary["endings"]["counts"]["forfeit"] == 0
    with pytest.raises(ConfigError, match="other rules"):
        _run(
            _config(
                tmp_path, name="u", participants=["random", str(path)], rules={"uno_call": False}
            )
        )


def test_bench_smoke() -> None:
    from unolab.benchmarks.tournament import bench_tournament, rlcard_cpu_games_per_second

    for mask_only in (False, True):
        result = bench_tournament(2, 200, 1, ("random",), games_per_chunk=100, mask_only=mask_only)
        assert result["games"] == result["games_logged"] == 200
        assert result["games_per_s"] > 0 and result["games_per_cpu_s"] > 0
    rlcard = rlcard_cpu_games_per_second(seconds=0.2)
    assert rlcard["games"] >= 20 and rlcard["games_per_cpu_s"] > 0


def test_log_lines_are_the_json_of_their_records() -> None:
    """The hand-written games.jsonl lines equal json.dumps of the record, odd names included."""
    import numpy as np

    from uno_env.outcomes import TableResults
    from unolab.tournament.results import END_KINDS

    units = [(0, 1, 0), (3, 0, 1)]
    res = TableResults(
        winners=np.array([0, -1]),
        ranks=np.array([[0, 1], [1, 0]]),
        points=np.array([[20, 0], [0, 35]]),
        rewards=np.array([[1, -1], [0, 0]], dtype=np.float32),
        cards_left=np.array([[0, 3], [2, 0]]),
        turns=np.array([40, 51]),
        end=np.array([0, 2]),
        forfeit_seat=np.array([-1, 1]),
        reasons={1: 'raised "ValueError"\nx é'},
    )
    keys = [2**63 + 5, 7]
    seats = [['a"b', "c"], ["c", 'a"b']]
    lines = results.encode_lines(units, keys, seats, res).splitlines()
    for i, (deal, seating, variant) in enumerate(units):
        record = {
            "deal": deal,
            "seating": seating,
            "variant": variant,
            "key": keys[i],
            "seats": seats[i],
            "ranks": res.ranks[i].tolist(),
            "points": res.points[i].tolist(),
            "cards_left": res.cards_left[i].tolist(),
            "turns": int(res.turns[i]),
            "end": END_KINDS[res.end[i]],
            "forfeit_seat": None if res.forfeit_seat[i] < 0 else int(res.forfeit_seat[i]),
            "reason": res.reasons.get(i, ""),
        }
        assert lines[i] == json.dumps(record, separators=(",", ":"))


def test_a_deleted_config_json_does_not_let_another_config_reuse_the_games(
    tmp_path: Path,
) -> None:
    """Delete config.json, rerun with other rules or seed -> refused: games.meta.json decides."""
    first = _run(_config(tmp_path, deal_sets=6))
    folder = tmp_path / "t"
    log = (folder / "games.jsonl").read_bytes()
    (folder / "config.json").unlink()
    for change, named in (({"seed": 12}, "seed 11 -> 12"), ({"rules": "street"}, "rules.")):
        with pytest.raises(ConfigError, match=r"games\.meta\.json differs") as err:
            _run(_config(tmp_path, deal_sets=6, **change))
        assert named in str(err.value)
        assert (folder / "games.jsonl").read_bytes() == log
        assert not (folder / "config.json").exists(), "nothing rewritten by a refused run"
    # The same config resumes, and may still grow.
    again = _run(_config(tmp_path, deal_sets=8))
    assert again["run"]["games_resumed"] == first["schedule"]["games_used"]
    assert again["run"]["games_played"] == 3 * 2 * 2
    assert json.loads((folder / "config.json").read_text())["fingerprint"] == first["fingerprint"]


def test_a_log_without_its_record_is_refused_unless_config_json_matches(tmp_path: Path) -> None:
    """Logs from before games.meta.json: config.json must vouch for them."""
    _run(_config(tmp_path, deal_sets=4))
    folder = tmp_path / "t"
    (folder / "games.meta.json").unlink()
    resumed = _run(_config(tmp_path, deal_sets=4))  # config.json matches: accepted
    assert resumed["run"]["games_resumed"] == 24 and (folder / "games.meta.json").is_file()
    (folder / "games.meta.json").unlink()
    (folder / "config.json").unlink()
    with pytest.raises(ConfigError, match="--fresh"):
        _run(_config(tmp_path, deal_sets=4))
    fresh = _run(_config(tmp_path, deal_sets=4), fresh=True)
    assert fresh["run"]["games_played"] == 24 and fresh["run"]["games_resumed"] == 0


def test_a_torn_last_line_is_repaired_only_after_the_checks(tmp_path: Path) -> None:
    _run(_config(tmp_path, deal_sets=4))
    log = tmp_path / "t" / "games.jsonl"
    with log.open("a") as f:
        f.write('{"deal": 3, "sea')  # a write cut short by a crash
    torn = log.read_bytes()
    with pytest.raises(ConfigError, match="seed"):
        _run(_config(tmp_path, deal_sets=4, seed=1))
    assert log.read_bytes() == torn, "a refused run leaves the log as it was"
    resumed = _run(_config(tmp_path, deal_sets=4))
    assert resumed["run"]["games_resumed"] == 24 and log.read_text().endswith("}\n")


# --- games of another run ---------------------------------------------------------------------


def _other_seeds_log(tmp: Path) -> list[str]:
    _run(_config(tmp / "other", deal_sets=4, seed=12))
    return (tmp / "other" / "t" / "games.jsonl").read_text().splitlines(keepends=True)


def test_games_of_another_run_are_refused_and_the_files_left_as_they_were(
    tmp_path: Path,
) -> None:
    _run(_config(tmp_path, deal_sets=4))
    folder = tmp_path / "t"
    own = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    foreign = _other_seeds_log(tmp_path)
    changed = json.loads(own[1])
    changed["turns"] += 1
    second_result = json.dumps(changed, separators=(",", ":")) + "\n"
    for lines, named in (
        (foreign, "line 1"),  # the whole log of another seed
        ([*own[:5], foreign[5], *own[6:]], "line 6"),  # one line of it
        ([*own, second_result], f"line {len(own) + 1} gives game"),  # two results for one game
    ):
        (folder / "games.jsonl").write_text("".join(lines))
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != ".lock"}
        with pytest.raises(ConfigError, match="another r") as err:
            _run(_config(tmp_path, deal_sets=4))
        assert named in str(err.value) and "--fresh" in str(err.value)
        assert "\n" not in str(err.value)
        after = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != ".lock"}
        assert after == before, "a refused run changes nothing"
    # An exact copy of a line is the same game: it is counted and ignored.
    (folder / "games.jsonl").write_text("".join([*own, own[3]]))
    again = _run(_config(tmp_path, deal_sets=4))
    assert again["run"]["games_resumed"] == len(own) and again["run"]["games_played"] == 0


# --- a full disk, a chunk written in part -------------------------------------------------------


def _disk_full_after(appends: int, kept: int) -> Any:
    """``results._write_all`` on a disk that fills during append number ``appends``: the
    first ``kept`` bytes of that chunk are written, then the write fails."""
    real = results._write_all
    calls: list[int] = []

    def write_all(fd: int, data: bytes) -> None:
        calls.append(1)
        if len(calls) < appends:
            real(fd, data)
            return
        os.write(fd, data[:kept])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write_all


def test_a_full_disk_keeps_whole_chunks_and_the_resume_plays_an_uninterrupted_runs_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = _run(_config(tmp_path / "ref", deal_sets=20, games_per_chunk=30))
    expected = _sorted_lines(tmp_path / "ref" / "t" / "games.jsonl")
    log = tmp_path / "run" / "t" / "games.jsonl"

    monkeypatch.setattr(results, "_write_all", _disk_full_after(3, 2500))
    with pytest.raises(OSError, match="no space left on device") as err:
        _run(_config(tmp_path / "run", deal_sets=20, games_per_chunk=30))
    assert str(log) in str(err.value) and "rerun the same command" in str(err.value)
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) == 2 * 30 and lines[-1].endswith("\n"), "two whole chunks, no part"

    # Through the command line: one line, exit status 1, nothing more on disk.
    monkeypatch.setattr(results, "_write_all", _disk_full_after(1, 100))
    argv = ["--name", "t", "--participants", "random", "greedy_points", "mixbot"]
    argv += ["--deal-sets", "20", "--games-per-chunk", "30", "--bootstrap", "50", "--seed", "11"]
    argv += ["--no-progress", "--no-plots", "--output-dir", str(tmp_path / "run")]
    assert cli_main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.out + captured.err
    assert captured.err.startswith("error: no space left on device: cannot append games to ")
    assert log.read_text().splitlines(keepends=True) == lines

    monkeypatch.undo()
    resumed = _run(_config(tmp_path / "run", deal_sets=20, games_per_chunk=30))
    assert resumed["run"]["games_resumed"] == 60
    assert _sorted_lines(log) == expected
    assert _without_run(resumed) == _without_run(reference)


def test_a_chunk_written_in_part_is_played_again_whole(tmp_path: Path) -> None:
    """What a crash inside a write leaves: part of a chunk (at the end of the log, with a
    torn line, or anywhere in it): it is dropped and played in its own batch again."""
    reference = _run(_config(tmp_path, deal_sets=20, games_per_chunk=30))
    folder = tmp_path / "t"
    full = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    expected = sorted(x.rstrip("\n") for x in full)
    for lines in (
        [*full[:30], *full[30:47], full[47][:40]],  # part of the second chunk, a torn line
        [*full[:20], *full[30:60]],  # part of the first chunk, then the second whole
        [*full[:30], *full[30:44]],  # cut at a deal set's end: still part of the chunk
    ):
        (folder / "games.jsonl").write_text("".join(lines))
        resumed = _run(_config(tmp_path, deal_sets=20, games_per_chunk=30))
        assert resumed["run"]["games_resumed"] == 30
        assert sorted(x.rstrip("\n") for x in (folder / "games.jsonl").open()) == expected
        assert _without_run(resumed) == _without_run(reference)


def test_a_grown_run_keeps_the_short_chunk_of_the_shorter_run(tmp_path: Path) -> None:
    """A chunk that ends where a shorter run ended is whole: growing the run keeps it."""
    _run(_config(tmp_path, deal_sets=6))  # 18 deal sets: chunks of 15, the second has 3
    log = (tmp_path / "t" / "games.jsonl").read_text()
    meta = json.loads((tmp_path / "t" / "games.meta.json").read_text())
    assert meta["deal_set_counts"] == [18]
    grown = _run(_config(tmp_path, deal_sets=8))
    assert grown["run"]["games_resumed"] == 36 and grown["run"]["games_played"] == 12
    assert (tmp_path / "t" / "games.jsonl").read_text().startswith(log)
    meta = json.loads((tmp_path / "t" / "games.meta.json").read_text())
    assert meta["deal_set_counts"] == [18, 24]


# --- one run per folder ---------------------------------------------------------------------


def test_a_second_run_on_a_held_folder_is_refused_naming_the_pid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(_config(tmp_path, deal_sets=4))
    folder = tmp_path / "t"
    log = (folder / "games.jsonl").read_bytes()
    with FolderLock(folder, "tournament run"):
        with pytest.raises(FolderInUseError, match=f"pid {os.getpid()}"):
            _run(_config(tmp_path, deal_sets=8))
        argv = ["--name", "t", "--participants", "random", "greedy_points", "mixbot"]
        argv += ["--seed", "11", "--fresh", "--no-progress", "--output-dir", str(tmp_path)]
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"in use by another process (pid {os.getpid()})" in err
        assert (folder / "games.jsonl").read_bytes() == log, "--fresh discarded nothing"
    assert _run(_config(tmp_path, deal_sets=8))["run"]["games_played"] == 24
