"""Builders shared by the bad-input catalogues of ``tests/bad_inputs/``.

A case's command line and its set-up are functions of the scratch folder the case runs in,
so a table of cases can name files inside it before the folder exists.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["args", "nothing", "snapshot", "train_args", "write_file"]


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
