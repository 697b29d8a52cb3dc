"""The repository speaks to its users: no development history in code, docs, configs or tests.

What changed is told in CHANGELOG.md, by version; nothing else refers to the project's own
tickets or work sessions, or to how the code was before a change.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from support import ROOT

# Built from parts, so that this file does not match itself.
_NUMBERED = (
    r"\b(?:" + "iss" + "ues?|" + "sess" + r"ions?)\s+\d+"
)  # another project's "#155" is a citation
_BEFORE = r"\bbefore the (?:\w+ )?" + "refac" + "tor"
HISTORY = re.compile(f"{_NUMBERED}|{_BEFORE}", re.IGNORECASE)
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".yaml",
    ".yml",
    ".json",
    ".ipynb",
    ".toml",
    ".txt",
    ".cfg",
    ".js",
    ".html",
    ".css",
}


def _tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [
        name
        for name in out.splitlines()
        if name.rsplit(".", 1)[-1] and f".{name.rsplit('.', 1)[-1]}" in TEXT_SUFFIXES
    ]


def test_the_pattern_finds_what_it_is_meant_to() -> None:
    for text in (
        "see " + "iss" + "ue 13",
        "Sess" + "ion 7 ran",
        "recorded before the layering " + "refac" + "tor",
    ):
        assert HISTORY.search(text), text
    for text in ("an issue with the deck", "a session of play", "10 sessions", "refactored"):
        assert not HISTORY.search(text), text


def test_no_file_tells_the_projects_history() -> None:
    files = _tracked_files()
    if not files:
        pytest.fail("git ls-files listed nothing: run the tests from a checkout")
    found = []
    for name in files:
        path = ROOT / name
        if not path.is_file():
            continue
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if HISTORY.search(line):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "history belongs in CHANGELOG.md by version:\n" + "\n".join(found[:40])
