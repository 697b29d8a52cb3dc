"""The README's command lines, run with small budgets (make test runs them in CI)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pexpect
import pytest
from support import ROOT

from unolab import main_job
from unolab.cli import main

README = (ROOT / "README.md").read_text()
COMMANDS = [
    shlex.split(line.split("#")[0])
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    for line in block.splitlines()
    if line.startswith("uno-lab ")
]

# Small budgets for the long commands; every other flag is the README's own.
BUDGETS = {
    ("train", "ppo"): [
        "--set",
        "total_steps=512",
        "--set",
        "num_envs=8",
        "--set",
        "eval.games=8",
        "--set",
        "eval.every=512",
        "--set",
        "ppo.n_steps=64",
        "--set",
        "ppo.batch_size=128",
        "--no-progress",
    ],
    ("train", "imitate"): [
        "--set",
        "samples=2000",
        "--set",
        "games_per_batch=64",
        "--set",
        "epochs=1",
        "--set",
        "net_arch=[16]",
        "--set",
        "eval_games=8",
        "--set",
        "eval_bots=[random]",
        "--no-progress",
    ],
    ("tournament",): ["--set", "deal_sets=2", "--no-progress", "--no-plots", "--fresh"],
    ("bench", "engine"): [
        "--seconds",
        "0.3",
        "--repeats",
        "1",
        "--batch-sizes",
        "8",
        "--no-rlcard",
    ],
}


def test_the_readme_shows_every_subcommand() -> None:
    shown = {cmd[1] for cmd in COMMANDS}
    assert {"train", "tournament", "play", "rules", "replay", "bench"} <= shown


@pytest.mark.parametrize(
    "cmd",
    [c for c in COMMANDS if c[1] in ("train", "tournament", "bench", "rules")],
    ids=lambda c: " ".join(c[1:3]),
)
def test_readme_command_runs(
    cmd: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = cmd[1:]
    for key, extra in BUDGETS.items():
        if tuple(args[: len(key)]) == key:
            args = [*args, *extra]
    if args[0] == "train":
        args += ["--set", f"runs_dir={tmp_path}"]
    if args[0] == "tournament":
        args += ["--output-dir", str(tmp_path)]
    if "my_model.yaml" in args:  # the README's language model: the scripted chat server
        from unolab.benchmarks.chat_server import chat_server

        with chat_server() as server:
            spec = tmp_path / "my_model.yaml"
            spec.write_text(f"llm:\n  model: test-model\n  base_url: {server.base_url}\n")
            monkeypatch.chdir(tmp_path)
            assert main(args) == 0
            assert server.served.requests > 0
        return
    assert main(args) == 0


def _drive_one_hand(args: list[str], cwd: Path) -> str:
    """Run ``uno-lab <args>`` in a pseudo-terminal: play the first hand, then stop cleanly."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "unolab.cli", *args],
        cwd=str(cwd),
        encoding="utf-8",
        timeout=120,
    )
    seen: list[str] = []
    moves = 0
    while True:
        index = child.expect(
            ["Your move", r"Deal the next hand\? \[Y/n\]", "Game over", pexpect.EOF]
        )
        seen.append(child.before or "")
        if index == 0:
            child.sendline("1")
            moves += 1
            assert moves < 2000, "the hand does not end"
        elif index == 1:
            child.sendline("n")
        else:
            break
    child.expect(pexpect.EOF)
    seen.append(child.before or "")
    child.close()
    transcript = "".join(seen)
    assert child.exitstatus == 0, transcript[-3000:]
    assert "Traceback" not in transcript and "error:" not in transcript
    return transcript


@pytest.mark.parametrize(
    "cmd", [c for c in COMMANDS if c[1] == "play"], ids=lambda c: " ".join(c[1:])
)
def test_readme_play_command_plays(cmd: list[str]) -> None:
    """Every README play line deals, plays a hand to its end against its opponents, stops."""
    transcript = _drive_one_hand([*cmd[1:], "--seed", "5", "--no-colour"], ROOT)
    assert "Hand 1 over" in transcript
    for spec in cmd[cmd.index("--opponents") + 1 :] if "--opponents" in cmd else ["mixbot"]:
        assert f"({Path(spec).stem})" in transcript  # each seat is named by its agent


@pytest.mark.parametrize(
    "cmd", [c for c in COMMANDS if c[1] == "replay"], ids=lambda c: " ".join(c[1:])
)
def test_readme_replay_command_replays(
    cmd: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's replay line, on a game saved the way its comment says."""
    saved = Path(cmd[2])
    _drive_one_hand(["play", "--seed", "5", "--no-colour", "--record", str(saved)], tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(cmd[1:]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Replay of {saved}") and "Hand 1 over" in out


def test_make_run_main_job(tmp_path: Path) -> None:
    """The job of `make run`, with a tiny training budget."""
    assert main_job.main(["--steps", "1024", "--deal-sets", "2", "--runs-dir", str(tmp_path)]) == 0
    assert (tmp_path / "tournaments" / "main_job" / "leaderboard.csv").is_file()
    assert (tmp_path / "quick" / "best_policy.safetensors").is_file()
