"""The rules text lives in the repository: docs/rules.md is complete and self-contained, every
citation of it points at a real section, and ``uno-lab rules`` reads well at 80 columns."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
from support import ROOT

from uno_env.rules import PRESETS, Rules, rules_table
from unolab.cli import main

RULES_DOC = ROOT / "docs" / "rules.md"
FIELDS = [f.name for f in dataclasses.fields(Rules)]
WIDTH = 80
SECTION = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", flags=re.M)
CITATION = re.compile(r"rules\.md §(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
# Spelled in two parts so that this file does not match its own search.
OUTSIDE_SPEC = "shared/" + "RULES"
# The one over-long line left in ``uno-lab rules``, printed by unolab/cli.py (not by
# rules_table); tolerated as an expected failure until that line is split.


def _tracked_texts() -> dict[str, str]:
    """Every file git tracks (this one excepted), as text; binary files are left out."""
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    texts = {}
    for name in filter(None, listing.split("\0")):
        path = ROOT / name
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            texts[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def _prose() -> str:
    """docs/rules.md before the generated tables of §18."""
    text = RULES_DOC.read_text()
    return text[: text.index("## 18. ")]


def test_sections_are_numbered_in_order() -> None:
    top = [n for n in SECTION.findall(RULES_DOC.read_text()) if "." not in n]
    assert top == [str(i) for i in range(1, len(top) + 1)] and len(top) >= 15, top


@pytest.mark.parametrize("name", FIELDS)
def test_every_switch_is_explained_and_tabled(name: str) -> None:
    assert re.search(rf"`{name}(`|: )", _prose()), f"docs/rules.md §1-17 never explains {name}"
    assert f"| `{name}` |" in RULES_DOC.read_text(), f"the §18 table lacks {name}"


def test_both_switch_tables_are_up_to_date() -> None:
    text = RULES_DOC.read_text()
    assert rules_table(markdown=True) in text, "regenerate §18 from rules_table(markdown=True)"
    assert rules_table() in text, "regenerate §18.1 from rules_table()"


@pytest.mark.parametrize(
    "topic",
    [
        "108 cards",
        "starter",
        "matches",
        "draw",
        "keep",
        "Skip",
        "Reverse",
        "Draw Two",
        "challenge",
        "UNO",
        "catch",
        "two players",
        "reshuffle",
        "Both piles empty",
        "going out",
        "target_score",
        "winner_takes",
    ],
)
def test_the_official_rules_are_covered(topic: str) -> None:
    assert topic.lower() in _prose().lower(), f"docs/rules.md says nothing about {topic!r}"


def test_every_rules_citation_names_a_real_section() -> None:
    sections = set(SECTION.findall(RULES_DOC.read_text()))
    cited = 0
    for name, text in _tracked_texts().items():
        for first, last in CITATION.findall(text):
            cited += 1
            missing = {first, last or first} - sections
            assert not missing, f"{name} cites docs/rules.md §{sorted(missing)}, which is absent"
    assert cited >= 5


def test_nothing_refers_to_the_outside_specification() -> None:
    offenders = [name for name, text in _tracked_texts().items() if OUTSIDE_SPEC in text]
    assert offenders == [], f"files that cite the spec outside the repository: {offenders}"


def _markdown_of(name: str, text: str) -> str:
    """The Markdown of a tracked file: a .md file itself, a notebook's markdown cells."""
    if name.endswith(".ipynb"):
        cells = json.loads(text).get("cells", [])
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return text


def test_markdown_links_stay_inside_the_repository() -> None:
    root = ROOT.resolve()
    for name, text in _tracked_texts().items():
        if not name.endswith((".md", ".ipynb")):
            continue
        for target in MARKDOWN_LINK.findall(_markdown_of(name, text)):
            if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL or an anchor on the page
                continue
            path = (root / name).parent / target.split("#")[0]
            assert path.resolve().is_relative_to(root), f"{name} links outside: {target}"
            assert path.exists(), f"{name} links to a missing file: {target}"


@pytest.mark.parametrize("argv", [["rules"], *(["rules", "--preset", p] for p in PRESETS)])
def test_uno_lab_rules_reads_well_at_80_columns(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if len(line) > WIDTH]
    assert long == [], f"uno-lab {' '.join(argv)}: lines over {WIDTH} columns: {long}"
    assert "``" not in out and ":class:" not in out
    if argv == ["rules"]:
        assert all(f"{name}: " in out for name in FIELDS)


@pytest.mark.parametrize("width", [60, 80, 100])
def test_plain_table_wraps_to_the_width(width: int) -> None:
    text = rules_table(width=width)
    assert max(map(len, text.splitlines())) <= width
    assert "`" not in text and "|" not in text
    assert [line.split(":")[0] for line in text.splitlines() if line[:1].isalpha()] == FIELDS
