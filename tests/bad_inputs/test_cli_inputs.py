"""Bad input to the command lines: one clear line, exit 2, no traceback, nothing lost.

Each case runs one command line with one bad input: ``uno-lab`` (``unolab.cli.main``, in
process), ``python tools/strength.py``, ``python -m unolab.benchmarks.core`` and
``python -m unolab.benchmarks.rlcard`` (their ``main``), or a real ``uno-lab`` process where the
exit path itself is under test. For every case the test checks that

(a) it exits with status 2 (argparse's ``SystemExit(2)`` or ``main``'s return value), never
    with an exception of its own (a ``KeyError`` or a library's error would escape here);
(b) the message on stderr names the bad input (the value, the option or the file);
(c) neither stdout nor stderr holds a traceback;
(d) nothing was written, changed or lost: the scratch folder, the working directory (a fresh
    one per case) and the tracked ``docs/bot_strength.json`` are byte for byte as before, and
    ``uno-lab`` still works afterwards in the same process.

``{tmp}`` in a case stands for its scratch folder (holding a folder ``a_dir``, a folder named
``dir.yaml``, a file ``a_file.txt``, two bad rules files and ``bad_syntax.py``, no valid
Python), ``{root}`` for the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import strength
from support import ROOT

from unolab import cli
from unolab.benchmarks import core as bench_core
from unolab.benchmarks import rlcard as bench_rlcard


@dataclass(frozen=True)
class Case:
    """One bad command line.

    Attributes:
        id: The test id.
        argv: The arguments, ``{tmp}`` and ``{root}`` filled in at run time.
        names: What the error message must contain (the bad value, option or file).
        run: Which command: ``uno-lab``, ``strength``, ``bench-core``, ``bench-rlcard`` (in
            process) or ``process`` (``python -m unolab.cli`` in a real subprocess).
        absent: What the error message must not contain (advice that does not fit).
    """

    id: str
    argv: tuple[str, ...]
    names: tuple[str, ...]
    run: str = "uno-lab"
    absent: tuple[str, ...] = ()


TOURNAMENT_CONFIG = "{root}/configs/tournament/bots_round_robin.yaml"
PPO_CONFIG = "{root}/configs/ppo/quick.yaml"

CASES: list[Case] = [
    # empty values (Path("") would be the current folder)
    Case("rules_preset_empty", ("rules", "--preset", ""), ("empty rules preset",)),
    Case("replay_empty_path", ("replay", ""), ("''", "empty path")),
    Case("replay_blank_path", ("replay", "  "), ("'  '", "empty path")),
    Case("exploit_out_empty", ("exploit", "mixbot", "--out", ""), ("--out", "''", "empty path")),
    # uno-lab itself
    Case("unknown_command", ("nope",), ("'nope'",)),
    Case("unknown_top_level_option", ("--fast", "rules"), ("--fast",)),
    # uno-lab bench engine: every numeric option
    Case("bench_unknown_benchmark", ("bench", "speed"), ("'speed'",)),
    Case("bench_engine_repeats_zero", ("bench", "engine", "--repeats", "0"), ("--repeats", "'0'")),
    Case("bench_engine_repeats_text", ("bench", "engine", "--repeats", "many"), ("'many'",)),
    Case("bench_engine_seconds_negative", ("bench", "engine", "--seconds", "-1"), ("'-1'",)),
    Case("bench_engine_seconds_zero", ("bench", "engine", "--seconds", "0"), ("--seconds", "'0'")),
    Case("bench_engine_seconds_nan", ("bench", "engine", "--seconds", "nan"), ("'nan'",)),
    Case("bench_engine_seconds_inf", ("bench", "engine", "--seconds", "inf"), ("'inf'",)),
    Case(
        "bench_engine_batch_size_zero",
        ("bench", "engine", "--batch-sizes", "64", "0"),
        ("--batch-sizes", "'0'"),
    ),
    Case(
        "bench_engine_batch_size_huge",
        ("bench", "engine", "--batch-sizes", "99999999"),
        ("'99999999'",),
    ),
    Case("bench_engine_players_one", ("bench", "engine", "--players", "1"), ("--players", "'1'")),
    Case("bench_engine_players_eleven", ("bench", "engine", "--players", "11"), ("'11'",)),
    Case("bench_engine_seed_negative", ("bench", "engine", "--seed", "-3"), ("--seed", "'-3'")),
    Case("bench_engine_unknown_rules", ("bench", "engine", "--rules", "nope"), ("'nope'",)),
    Case("bench_engine_unknown_option", ("bench", "engine", "--fast"), ("--fast",)),
    # uno-lab bench envs / tournament / all
    Case("bench_envs_vec_size_zero", ("bench", "envs", "--vec-sizes", "0"), ("--vec-sizes",)),
    Case("bench_envs_repeats_zero", ("bench", "envs", "--repeats", "0"), ("--repeats", "'0'")),
    Case("bench_envs_ppo_batch_one", ("bench", "envs", "--ppo-batch", "1"), ("--ppo-batch",)),
    Case("bench_envs_ppo_epochs_zero", ("bench", "envs", "--ppo-epochs", "0"), ("--ppo-epochs",)),
    Case(
        "bench_envs_ppo_iterations_zero",
        ("bench", "envs", "--ppo-iterations", "0"),
        ("--ppo-iterations",),
    ),
    Case("bench_tournament_games_zero", ("bench", "tournament", "--games", "0"), ("--games",)),
    Case(
        "bench_tournament_workers_zero", ("bench", "tournament", "--workers", "0"), ("--workers",)
    ),
    Case("bench_tournament_chunk_zero", ("bench", "tournament", "--chunk", "0"), ("--chunk",)),
    Case(
        "bench_tournament_seconds_negative",
        ("bench", "tournament", "--seconds", "-2.5"),
        ("--seconds", "'-2.5'"),
    ),
    Case(
        "bench_tournament_out_is_a_folder",
        ("bench", "tournament", "--out", "{tmp}/a_dir"),
        ("--out", "{tmp}/a_dir"),
    ),
    Case(
        "bench_tournament_out_under_a_file",
        ("bench", "tournament", "--out", "{tmp}/a_file.txt/figures.json"),
        ("{tmp}/a_file.txt",),
    ),
    Case("bench_all_option_of_one", ("bench", "all", "--repeats", "1"), ("--repeats",)),
    # uno-lab rules
    Case("rules_unknown_preset", ("rules", "--preset", "nope"), ("'nope'",)),
    Case("rules_missing_file", ("rules", "--preset", "{tmp}/missing.yaml"), ("missing.yaml",)),
    Case("rules_folder", ("rules", "--preset", "{tmp}/a_dir"), ("{tmp}/a_dir",)),
    Case("rules_folder_named_yaml", ("rules", "--preset", "{tmp}/dir.yaml"), ("dir.yaml",)),
    Case("rules_unknown_switch", ("rules", "--preset", "{tmp}/bad_key.yaml"), ("not_a_switch",)),
    Case("rules_bad_value", ("rules", "--preset", "{tmp}/bad_value.yaml"), ("num_players",)),
    Case("rules_extra_argument", ("rules", "--preset", "street", "extra"), ("extra",)),
    # uno-lab tournament
    Case(
        "tournament_missing_config",
        ("tournament", "--config", "{tmp}/missing.yaml"),
        ("{tmp}/missing.yaml",),
    ),
    Case("tournament_config_is_a_folder", ("tournament", "--config", "{tmp}/a_dir"), ("a_dir",)),
    Case("tournament_no_config_no_name", ("tournament",), ("--config",)),
    Case(
        "tournament_players_not_a_number",
        ("tournament", "--config", TOURNAMENT_CONFIG, "--players", "many"),
        ("--players", "'many'"),
    ),
    Case(
        "tournament_players_out_of_range",
        ("tournament", "--name", "t", "--participants", "random", "mixbot", "--players", "11"),
        ("num_players", "11"),
    ),
    Case(
        "tournament_unknown_participant",
        (
            "tournament",
            "--name",
            "t",
            "--participants",
            "random",
            "nobody",
            "--output-dir",
            "{tmp}/out",
            "--no-progress",
            "--no-plots",
        ),
        ("'nobody'",),
    ),
    Case(
        "tournament_bad_set_value",
        ("tournament", "--config", TOURNAMENT_CONFIG, "--set", "deal_sets=zero"),
        ("deal_sets", "'zero'"),
    ),
    Case("tournament_unknown_format", ("tournament", "--format", "swiss"), ("'swiss'",)),
    Case("tournament_unknown_option", ("tournament", "--fast"), ("--fast",)),
    # uno-lab train
    Case("train_unknown_algorithm", ("train", "a2c"), ("'a2c'",)),
    Case("train_no_algorithm", ("train",), ("algorithm",)),
    Case(
        "train_missing_config",
        ("train", "ppo", "--config", "{tmp}/missing.yaml"),
        ("{tmp}/missing.yaml",),
    ),
    Case(
        "train_config_without_an_algorithm",
        ("train", "--config", "{root}/configs/rules/official.yaml"),
        ("official.yaml", "names no algorithm"),
    ),
    Case(
        "train_config_of_an_unknown_algorithm",
        ("train", "--config", "{tmp}/a2c.yaml"),
        ("a2c.yaml", "'a2c'"),
    ),
    Case(
        "train_missing_config_without_an_algorithm",
        ("train", "--config", "{tmp}/missing.yaml"),
        ("{tmp}/missing.yaml",),
    ),
    Case(
        "train_resume_without_a_run",
        ("train", "--resume", "{tmp}/a_dir"),
        ("a_dir/config.yaml", "--resume runs/<name>"),
    ),
    Case(
        "train_config_of_another_algorithm",
        ("train", "dqn", "--config", PPO_CONFIG),
        ("quick.yaml", "ppo"),
    ),
    Case(  # only the parser's error: no word of a shipped config used instead
        "train_config_without_its_value",
        ("train", "ppo", "--config"),
        ("--config", "expected one argument"),
        absent=("shipped config",),
    ),
    Case(
        "train_bad_set_value",
        ("train", "ppo", "--config", PPO_CONFIG, "--set", "total_steps=lots"),
        ("total_steps", "'lots'"),
    ),
    # uno-lab sweep: an option's value named as the option, not as the file it overrides
    Case(
        "sweep_num_samples_zero",
        ("sweep", "--config", "{root}/configs/sweep/quick_lr_ent.yaml", "--num-samples", "0"),
        ("--num-samples 0: 0 is out of range",),
        absent=("quick_lr_ent.yaml",),
    ),
    Case(
        "sweep_max_concurrent_zero",
        ("sweep", "--config", "{root}/configs/sweep/quick_lr_ent.yaml", "--max-concurrent", "0"),
        ("--max-concurrent 0: 0 is out of range",),
        absent=("quick_lr_ent.yaml",),
    ),
    # uno-lab serve: an address it cannot listen on (each bind checked for real)
    Case(
        "serve_unknown_host",
        ("serve", "--host", "no-such-host.invalid"),
        ("--host", "'no-such-host.invalid'", "no such host", "127.0.0.1"),
        absent=("--port",),
    ),
    Case(
        "serve_host_not_on_this_machine",
        ("serve", "--host", "192.0.2.1"),  # TEST-NET-1: documentation only, never assigned
        ("--host", "192.0.2.1", "not an address of this machine"),
        absent=("--port",),
    ),
    Case(
        "serve_host_with_a_port",
        ("serve", "--host", "127.0.0.1:8000"),
        ("'127.0.0.1:8000'", "--port 8000"),
    ),
    Case(
        "serve_host_name_too_long",
        ("serve", "--host", "a" * 64 + ".example"),
        ("no such host",),
        absent=("--port",),
    ),
    Case(
        "process_serve_unknown_host",
        ("serve", "--host", "no-such-host.invalid"),
        ("no-such-host.invalid",),
        run="process",
        absent=("--port",),
    ),
    # uno-lab serve: folders and code it could not use, refused before it starts
    Case(
        "serve_games_dir_under_a_file",
        ("serve", "--games-dir", "{tmp}/a_file.txt/games"),
        ("--games-dir", "{tmp}/a_file.txt/games", "a_file.txt is not a folder"),
    ),
    Case(
        "serve_runs_dir_is_a_file",
        ("serve", "--runs-dir", "{tmp}/a_file.txt"),
        ("--runs-dir", "{tmp}/a_file.txt", "not a folder"),
    ),
    Case(
        "serve_trust_code_not_python",
        ("serve", "--trust-code", "{tmp}/bad_syntax.py"),
        ("--trust-code", "{tmp}/bad_syntax.py", "not valid Python", "line 2"),
    ),
    Case(
        "serve_trust_code_no_such_module",
        ("serve", "--trust-code", "no_such_module_xyz.bots"),
        ("--trust-code", "no_such_module_xyz.bots", "no module named"),
    ),
    Case("serve_port_zero", ("serve", "--port", "0"), ("--port", "0", "1..65535")),
    Case("serve_max_games_zero", ("serve", "--max-games", "0"), ("--max-games", "0")),
    Case(
        "serve_max_games_per_client_negative",
        ("serve", "--max-games-per-client", "-3"),
        ("--max-games-per-client", "-3"),
    ),
    Case("serve_max_body_bytes_zero", ("serve", "--max-body-bytes", "0"), ("--max-body-bytes",)),
    Case("serve_idle_minutes_zero", ("serve", "--idle-minutes", "0"), ("--idle-minutes", "0")),
    Case("serve_host_empty", ("serve", "--host", ""), ("--host", "''")),
    # python tools/strength.py
    Case("strength_games_zero", ("--games", "0"), ("--games", "'0'"), run="strength"),
    Case(
        "strength_out_is_a_device",
        ("--out", "/dev/null", "--games", "10"),
        ("/dev/null", "character device"),
        run="strength",
    ),
    Case("strength_games_text", ("--games", "ten"), ("'ten'",), run="strength"),
    Case("strength_players_one", ("--players", "1"), ("--players", "'1'"), run="strength"),
    Case("strength_batch_size_zero", ("--batch-size", "0"), ("--batch-size",), run="strength"),
    Case("strength_seed_negative", ("--seed", "-1"), ("--seed", "'-1'"), run="strength"),
    Case("strength_unknown_bot", ("--bots", "nobody"), ("'nobody'",), run="strength"),
    Case("strength_unknown_preset", ("--preset", "nope"), ("'nope'",), run="strength"),
    Case("strength_out_is_a_folder", ("--out", "{tmp}/a_dir"), ("{tmp}/a_dir",), run="strength"),
    Case(
        "strength_out_under_a_file",
        ("--out", "{tmp}/a_file.txt/strength.json"),
        ("a_file.txt",),
        run="strength",
    ),
    Case(
        "strength_out_is_not_json",
        ("--out", "{tmp}/a_file.txt", "--games", "10"),
        ("'{tmp}/a_file.txt' is not JSON", "not replaced"),
        run="strength",
    ),
    Case(
        "strength_out_is_another_record",
        ("--out", "{tmp}/other_record.json", "--games", "10"),
        ("'{tmp}/other_record.json' is not a strength record", "not replaced"),
        run="strength",
    ),
    # python -m unolab.benchmarks.core / unolab.benchmarks.rlcard
    Case("bench_core_module_repeats_zero", ("--repeats", "0"), ("--repeats",), run="bench-core"),
    Case(
        "bench_rlcard_module_seconds_zero", ("--seconds", "0"), ("--seconds",), run="bench-rlcard"
    ),
    # real processes: the exit status and the streams as a shell sees them
    Case(
        "process_bench_repeats_zero",
        ("bench", "engine", "--repeats", "0"),
        ("--repeats",),
        run="process",
    ),
    Case(
        "process_tournament_missing_config",
        ("tournament", "--config", "{tmp}/missing.yaml"),
        ("missing.yaml",),
        run="process",
    ),
    Case("process_unknown_command", ("nope",), ("'nope'",), run="process"),
]

IN_PROCESS: dict[str, Callable[[Sequence[str]], Any]] = {
    "uno-lab": cli.main,
    "strength": strength.main,
    "bench-core": bench_core.main,
    "bench-rlcard": bench_rlcard.main,
}


def _scratch(tmp_path: Path) -> Path:
    """The case's scratch folder with the files and folders the cases name."""
    scratch = tmp_path / "scratch"
    (scratch / "a_dir").mkdir(parents=True)
    (scratch / "a_dir" / "keep.txt").write_text("kept\n")
    (scratch / "dir.yaml").mkdir()
    (scratch / "a_file.txt").write_text("not a folder\n")
    (scratch / "other_record.json").write_text('{"description": "", "results": []}\n')
    (scratch / "bad_key.yaml").write_text("stack_draw_two: true\nnot_a_switch: 1\n")
    (scratch / "bad_value.yaml").write_text("num_players: 99\n")
    (scratch / "a2c.yaml").write_text("name: a2c_run\nalgorithm: a2c\n")
    (scratch / "bad_syntax.py").write_text("class Bot:\n    def act(self:\n")
    return scratch


def _snapshot(*folders: Path) -> dict[str, bytes | None]:
    """Every file under the folders (and each folder itself), with its bytes."""
    files: dict[str, bytes | None] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            files[str(path)] = path.read_bytes() if path.is_file() else None
    return files


def _run_in_process(case: Case, argv: list[str]) -> int:
    try:
        code = IN_PROCESS[case.run](argv)
    except SystemExit as exit_:
        code = exit_.code
    return code if isinstance(code, int) else 0


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_command_line(
    case: Case,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scratch = _scratch(tmp_path)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # anything written to a default path would show up here

    def fill(text: str) -> str:
        return text.replace("{tmp}", str(scratch)).replace("{root}", str(ROOT))

    argv = [fill(a) for a in case.argv]
    tracked = ROOT / "docs" / "bot_strength.json"
    before = _snapshot(scratch, workdir)
    tracked_before = tracked.read_bytes()

    if case.run == "process":
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "unolab.cli", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code = _run_in_process(case, argv)
        out, err = capsys.readouterr()

    assert code == 2, f"exit status {code}; stderr: {err}"
    for name in case.names:
        assert fill(name) in err, f"{fill(name)!r} not named in: {err}"
    for advice in case.absent:
        assert advice not in err, f"{advice!r} does not fit: {err}"
    assert "Traceback" not in out + err
    assert _snapshot(scratch, workdir) == before
    assert tracked.read_bytes() == tracked_before
    # The same process still runs uno-lab.
    assert cli.main(["rules", "--preset", "street"]) == 0
    assert "Preset 'street'" in capsys.readouterr().out


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 15
    assert len({case.id for case in CASES}) == len(CASES)
