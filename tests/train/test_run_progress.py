"""A training run's progress: the steps it really runs, and clean lines off a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import ROOT

from unolab.agents import progress
from unolab.train import algorithms, run_cli
from unolab.train.config import load_config

CONFIGS = {
    "ppo": ROOT / "configs" / "ppo" / "tiny.yaml",
    "dqn": ROOT / "configs" / "dqn" / "tiny.yaml",
}


@pytest.mark.parametrize(
    ("algorithm", "total", "per_collect"), [("ppo", 1500, 1024), ("dqn", 2000, 32)]
)
def test_a_run_shows_the_steps_it_really_runs_and_plain_lines_off_a_terminal(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    algorithm: str,
    total: int,
    per_collect: int,
) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    overrides = [f"runs_dir={tmp_path}", f"total_steps={total}"]
    config = load_config(CONFIGS[algorithm], overrides)
    end = algorithms.final_steps(config)
    assert end % per_collect == 0 and total < end < total + per_collect
    args = ["--config", str(CONFIGS[algorithm])]
    result = run_cli.main(algorithm, [*args, *(f for o in overrides for f in ("--set", o))])
    assert result.steps == end

    err = capsys.readouterr().err
    # Off a terminal: no escape codes, no carriage returns, no cursor-up fragments.
    assert "\x1b" not in err and "\r" not in err and "[A" not in err
    lines = err.splitlines()
    name = config.name
    assert lines[0].startswith(
        f"[{name}] training {algorithm} to {end:,} steps (total_steps {total:,} rounded up "
        f"to whole rollouts of {per_collect:,} steps)"
    )
    counts = [
        (int(done.replace(",", "")), int(of.replace(",", "")))
        for done, of in re.findall(rf"^training {name}: ([\d,]+)/([\d,]+) steps", err, re.M)
    ]
    assert counts and all(of == end and done <= end for done, of in counts)
    assert counts[-1] == (end, end)
    # Each status line whole, on its own line; the evaluations' bars say nothing.
    status = [line for line in lines if line.startswith(f"[{name}]")]
    assert any(re.fullmatch(rf"\[{name}\] step [\d,]+: win rate vs random .*", s) for s in status)
    assert all(line.startswith((f"[{name}]", f"training {name}: ")) for line in lines)


def test_a_log_file_holds_the_status_lines_each_on_its_own_line(tmp_path: Path) -> None:
    from unolab.train.run import train

    config = load_config(CONFIGS["ppo"], [f"runs_dir={tmp_path}"])
    log = tmp_path / "run.log"
    with log.open("w", encoding="utf-8") as file:
        train(config, log=file)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines and all(re.fullmatch(r"\[ppo_tiny\] [^\r\x1b]+", line) for line in lines)
    assert sum("evaluating vs random" in line for line in lines) == 2
