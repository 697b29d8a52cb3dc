"""Builders shared by the bad-input catalogues of ``tests/bad_inputs/``.

A case's command line and its set-up are functions of the scratch folder the case runs in,
so a table of cases can name files inside it before the folder exists.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["args", "nothing", "run_entry", "snapshot", "train_args", "write_file"]


def nothing(folder: Path) -> None:
    """No preparation."""


def train_args(config: Path, *overrides: str) -> Callable[[Path], list[str]]:
    """``--config CONFIG`` into ``<folder>/runs`` with a tiny budget, plus ``--set`` items."""

    def argv(folder: Path) -> list[str]:
        line = ["--config", str(config), "--no-progress", "--set", f"runs_dir={folder / 'runs'}"]
        line += ["--set", "total_steps=64"]
        for item in overrides:
            line += ["--set", item.format(folder=folder)]
        return line

    return argv


def args(*items: str) -> Callable[[Path], list[str]]:
    """A command line with ``{folder}`` filled in."""
    return lambda folder: [item.format(folder=folder) for item in items]


def write_file(relative: str, content: bytes) -> Callable[[Path], None]:
    """A set-up that writes ``content`` to ``<folder>/<relative>``."""

    def setup(folder: Path) -> None:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)

    return setup


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under ``folder``."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def run_entry(
    module: str,
    entry: Callable[[list[str]], Any],
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    *,
    in_subprocess: bool = False,
) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of a command that must exit: ``entry(argv)`` in this
    process, or ``python -m module argv`` in a subprocess (real exits, real streams)."""
    if in_subprocess:
        root = Path(__file__).resolve().parents[2]
        done = subprocess.run(
            [sys.executable, "-m", module, *argv],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return done.returncode, done.stdout, done.stderr
    with pytest.raises(SystemExit) as exit_info:
        entry(argv)
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err
