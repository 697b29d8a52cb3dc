"""What ``uno-lab --help`` and ``--version`` load: nothing of the engine, numba or torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_LOADED = """
import json, sys
from unolab.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = ("torch", "numba", "uno_env.core", "stable_baselines3", "unolab.agents")
print(json.dumps([name for name in heavy if name in sys.modules]))
"""


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], [], ["play", "--help"], ["rules", "--help"]]
)
def test_help_and_version_load_nothing_heavy(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_every_command_is_listed_in_the_short_help() -> None:
    """The light parser still lists the commands whose options are built only when run."""
    done = subprocess.run(
        [sys.executable, "-m", "unolab", "--help"], capture_output=True, text=True, timeout=60
    )
    for command in ("tournament", "exploit", "warmup", "play", "serve", "train"):
        assert f"    {command}" in done.stdout, command


def test_the_tournament_and_exploit_help_show_their_real_options() -> None:
    for command, option in (("tournament", "--deal-sets"), ("exploit", "--init-from")):
        done = subprocess.run(
            [sys.executable, "-m", "unolab", command, "--help"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and option in done.stdout, done.stderr
