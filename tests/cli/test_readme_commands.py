"""The README's command lines, run with small budgets (make test runs them in CI)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

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
    assert main(args) == 0


def test_make_run_main_job(tmp_path: Path) -> None:
    """The job of `make run`, with a tiny training budget."""
    assert main_job.main(["--steps", "1024", "--deal-sets", "2", "--runs-dir", str(tmp_path)]) == 0
    assert (tmp_path / "tournaments" / "main_job" / "leaderboard.csv").is_file()
    assert (tmp_path / "quick" / "best_policy.safetensors").is_file()
