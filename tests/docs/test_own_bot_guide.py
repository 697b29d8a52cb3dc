"""docs/own_bot.md, run as a reader would: its bot saved as ``my_bots.py``, its tests run,
its tournament command and its Python API run on that file, its error lines the lab's own."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT

from unolab.agents import resolve_policy
from unolab.tournament.cli import main as tournament_main

GUIDE = (ROOT / "docs" / "own_bot.md").read_text()
PYTHON = re.findall(r"```python\n(.*?)```", GUIDE, flags=re.S)
"""The guide's Python blocks, in order."""


def _block(first_line: str) -> str:
    """The Python block that starts with ``first_line``."""
    found = [block for block in PYTHON if block.startswith(first_line)]
    assert len(found) == 1, f"docs/own_bot.md: one block starting {first_line!r}"
    return found[0]


@pytest.fixture
def reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A reader's folder holding the guide's ``my_bots.py`` and ``test_my_bots.py``,
    importable while the test runs and forgotten after it."""
    (tmp_path / "my_bots.py").write_text(_block('"""my_bots.py:'))
    (tmp_path / "test_my_bots.py").write_text(_block('"""test_my_bots.py:'))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("my_bots", "test_my_bots"):
        sys.modules.pop(name, None)


def test_the_guides_tests_pass_on_its_bot(reader: Path) -> None:
    found = importlib.util.spec_from_file_location("test_my_bots", reader / "test_my_bots.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    tests = [getattr(module, name) for name in vars(module) if name.startswith("test_")]
    assert len(tests) == 3
    for test in tests:
        test()


def test_the_guides_tournament_command_rates_its_bot(
    reader: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (command,) = [
        line
        for block in re.findall(r"```bash\n(.*?)```", GUIDE, flags=re.S)
        for line in block.splitlines()
        if line.startswith("uno-lab tournament ")
    ]
    argv = shlex.split(command.split("#")[0])
    assert argv[:2] == ["uno-lab", "tournament"] and "my_bots.py:MyBot" in argv
    # What uno-lab tournament runs, with its options as they are (a quiet run, no plots).
    assert tournament_main([*argv[2:], "--no-progress", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\bMyBot\b", out) and "600 games" in out


def test_the_guides_python_api_rates_its_bot(
    reader: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(_block("from unolab.tournament import"), "docs/own_bot.md", "exec"), {})
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert sorted(names) == ["MyBot", "mixbot", "random"]


def test_the_guides_error_lines_are_the_labs(reader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each error line the guide shows is what the lab says (``...`` stands for the rest),
    the working folder off the import path as under the ``uno-lab`` command."""
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(reader))])
    (shown,) = re.findall(r"```text\n(.*?)```", GUIDE, flags=re.S)
    bot = (reader / "my_bots.py").read_text()
    variants = {
        "my_bots.py:MyBott": bot,
        "reset()": bot.replace("def reset(", "def unused("),
        "failed": bot.replace("self.rng = np", "raise ValueError('...'); self.rng = np"),
        "my_bots:MyBot": bot,
    }
    lines = shown.strip().splitlines()
    assert len(lines) == len(variants)
    for line, (key, source) in zip(lines, variants.items(), strict=True):
        assert key in line, line
        (reader / "my_bots.py").write_text(source)
        spec = line.split("'")[1]
        with pytest.raises(ValueError) as caught:
            resolve_policy(spec)
        assert str(caught.value) == line, (str(caught.value), line)
