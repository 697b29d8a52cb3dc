"""Tests of ``python tools/strength.py`` rating exported agents and several opponents.

* ``--agents``: an agent is rated only at the table size it was trained for; given alone, no
  bot is rated; the JSON names the agents, the opponents and the torch threads.
* ``--opponents``: every candidate against each opponent bot, in order.
* Bad input: a missing agent file, an agent that fits none of the table sizes, an unknown
  opponent or a bad thread count end with one ``error:`` line naming the value (exit 2), and
  nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from strength import agent_table_sizes
from strength import main as strength_main
from support import ROOT

AGENT_2P = str(ROOT / "agents" / "pretrained" / "ppo_official_2p.safetensors")
AGENT_4P = str(ROOT / "agents" / "pretrained" / "ppo_official_4p.safetensors")


def test_agents_are_rated_at_their_own_table_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "agents.json"
    argv = ["--games", "40", "--players", "2", "4", "--agents", AGENT_2P, AGENT_4P]
    code = strength_main([*argv, "--opponents", "random", "mixbot", "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    rows = [(r["num_players"], r["candidate"], r["opponent"]) for r in report["results"]]
    assert rows == [
        (2, "ppo_official_2p", "random"),
        (2, "ppo_official_2p", "mixbot"),
        (4, "ppo_official_4p", "random"),
        (4, "ppo_official_4p", "mixbot"),
    ]
    assert report["opponents"] == ["random", "mixbot"] and "opponent" not in report
    assert report["agents"] == [AGENT_2P, AGENT_4P] and report["torch_threads"] == 1
    assert "| 4 | ppo_official_4p | mixbot | 40 |" in capsys.readouterr().out


def test_bots_and_agents_together(tmp_path: Path) -> None:
    out = tmp_path / "mixed.json"
    argv = ["--games", "30", "--players", "2", "--bots", "random_action", "--agents", AGENT_2P]
    assert strength_main([*argv, "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [r["candidate"] for r in report["results"]] == ["random_action", "ppo_official_2p"]
    assert report["opponent"] == "random"


def test_agent_table_sizes() -> None:
    assert agent_table_sizes(AGENT_4P, [2, 3, 4]) == [4]
    with pytest.raises(ValueError, match="fits none of the table sizes 2, 3"):
        agent_table_sizes(AGENT_4P, [2, 3])


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--agents", "{tmp}/nobody.safetensors"], ["nobody.safetensors"]),
        (["--agents", AGENT_2P, "--players", "3", "4"], ["ppo_official_2p", "3, 4"]),
        (["--agents", "{tmp}"], ["{tmp}", "directory"]),
        (["--opponents", "nobody"], ["--opponents", "'nobody'"]),
        (["--agents", AGENT_2P, "--threads", "0"], ["--threads", "'0'"]),
    ],
    ids=["missing", "table_size", "folder", "unknown_opponent", "threads"],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], names: list[str]
) -> None:
    out = tmp_path / "never.json"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    with pytest.raises(SystemExit) as info:
        strength_main([*argv, "--games", "10", "--out", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    message = err.strip().splitlines()[-1]
    assert message.startswith("python tools/strength.py: error:")
    for name in names:
        assert name.replace("{tmp}", str(tmp_path)) in message, message
    assert not out.exists()
