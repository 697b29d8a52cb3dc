"""The ``uno-lab`` command line, including a real terminal session driven through pexpect."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest
from support import ROOT

from unolab.cli import main


@pytest.mark.parametrize("command", ["train", "tournament", "play", "bench", "rules", "replay"])
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: uno-lab" in capsys.readouterr().out


def test_rules_lists_every_switch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "stack_draw_two" in out and "seven_zero" in out and "Presets:" in out


def test_errors_say_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--opponents", "nobody"]) == 2
    assert "give a bot name" in capsys.readouterr().err
    assert main(["replay", "missing.json"]) == 2
    assert "record one with uno-lab play --record" in capsys.readouterr().err
    assert main(["rules", "--preset", "nope"]) == 2


def test_terminal_play_full_game_and_replay(tmp_path: Path) -> None:
    """A real session in a pseudo-terminal: bad input re-prompts, the game plays to the end."""
    record = tmp_path / "game.json"
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "unolab.cli",
            "play",
            "--players",
            "3",
            "--opponents",
            "random",
            "mixbot",
            "--seed",
            "4",
            "--no-colour",
            "--record",
            str(record),
        ],
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
    )
    child.expect("Your move")
    assert "you" in child.before and "player_1" in child.before
    child.sendline("not-a-move")
    child.expect("Sorry")
    child.expect("Your move")
    child.sendline("99")
    child.expect("Your move")
    moves = 0
    while True:
        index = child.expect(["Your move", "Game over"])
        if index == 1:
            break
        child.sendline("1")
        moves += 1
        assert moves < 2000
    child.expect(pexpect.EOF)
    assert record.is_file()
    replayed = pexpect.run(
        f"{sys.executable} -m unolab.cli replay {record}", cwd=str(ROOT), encoding="utf-8"
    )
    assert "Replay of" in replayed and ("won with" in replayed or "max_turns" not in replayed)
