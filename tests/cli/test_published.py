"""The pages generated from data (model cards) match their data, and a stale one is named."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from docs_records import CURVES
from published import DIGEST_KEY, curve_picture, main, png_text
from support import ROOT

from unolab.agents.model_card import card_markdown, model_cards
from unolab.agents.registry import shipped_agent_names


def test_the_committed_pages_match_their_data() -> None:
    assert main(["--check"]) == 0


def test_a_stale_page_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "docs" / "agents", tmp_path / "docs" / "agents")
    for record in (ROOT / "docs").glob("*.json"):
        shutil.copy(record, tmp_path / "docs" / record.name)
    _copy_curves(tmp_path)
    shutil.copy(ROOT / "docs" / "results.md", tmp_path / "docs" / "results.md")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copy(ROOT / "docs" / "index.md", tmp_path / "docs" / "index.md")
    (tmp_path / "pyproject.toml").write_text("")
    page = tmp_path / "docs" / "agents" / "ppo_official_2p.md"
    page.write_text(page.read_text().replace("70.2%", "71.2%"))
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert "docs/agents/ppo_official_2p.md" in capsys.readouterr().err
    assert main(["--root", str(tmp_path)]) == 0  # regenerated
    assert main(["--check", "--root", str(tmp_path)]) == 0
    # A record changes: its table is stale until the pages are regenerated.
    bench = tmp_path / "docs" / "benchmarks.json"
    bench.write_text(bench.read_text().replace('"ratio": 2.', '"ratio": 3.', 1))
    assert main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "docs/results.md" in err and "README.md" in err and "docs/index.md" in err
    assert main(["--root", str(tmp_path)]) == 0
    # The same figures on both pages, each linking to results.md from where it is.
    readme, home = (
        (tmp_path / "README.md").read_text(),
        (tmp_path / "docs" / "index.md").read_text(),
    )
    row = "| core random play, B = 1 (steps/s) | 3.61x"
    assert row in readme and row in home
    assert "](docs/results.md#speed)" in readme and "](docs/results.md" not in home
    assert "](results.md#speed)" in home


def _copy_curves(root: Path) -> None:
    shutil.copytree(ROOT / "docs" / "data", root / "docs" / "data")
    shutil.copytree(ROOT / "docs" / "img" / "curves", root / "docs" / "img" / "curves")


def test_curve_pictures_carry_their_data_and_a_changed_curve_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads((ROOT / "docs" / CURVES).read_text())
    assert record["figures"], "no learning curve is published"
    for name, figure in record["figures"].items():
        picture = ROOT / "docs" / "img" / "curves" / f"{name}.png"
        assert f"img/curves/{name}.png" in (ROOT / "docs" / "training.md").read_text()
        committed = png_text(picture.read_bytes())[DIGEST_KEY]
        assert committed == png_text(curve_picture(figure))[DIGEST_KEY]
        for line in figure["lines"]:
            for point in line["points"]:
                assert point["ci_low"] <= point["win_rate"] <= point["ci_high"]
    # A point of a curve changes: its picture and results.md are stale.
    (tmp_path / "docs").mkdir()
    shutil.copytree(ROOT / "docs" / "agents", tmp_path / "docs" / "agents")
    for name in ("results.md", *[p.name for p in (ROOT / "docs").glob("*.json")]):
        shutil.copy(ROOT / "docs" / name, tmp_path / "docs" / name)
    _copy_curves(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    assert main(["--check", "--root", str(tmp_path)]) == 0
    name = next(iter(record["figures"]))
    record["figures"][name]["lines"][0]["points"][0]["win_rate"] += 0.001
    (tmp_path / "docs" / CURVES).write_text(json.dumps(record))
    assert main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"docs/img/curves/{name}.png" in err and "docs/results.md" in err
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert png_text(b"not a png") == {}


def test_a_page_without_its_markers_is_refused(tmp_path: Path) -> None:
    from docs_tables import with_headline

    with pytest.raises(ValueError, match=r"README\.md has no .* headline table"):
        with_headline("# a README without the results block\n")
    with pytest.raises(ValueError, match=r"docs/index\.md has no"):
        with_headline("# a home page without it\n", Path("docs") / "index.md")


def test_outside_a_checkout_it_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--root", str(tmp_path)]) == 2
    assert "not a checkout" in capsys.readouterr().err


def test_every_shipped_agent_has_a_card_with_its_measured_strength() -> None:
    cards = {card.name: card for card in model_cards()}
    assert set(cards) == set(shipped_agent_names())
    for card in cards.values():
        text = card_markdown(card)
        assert card.stages and card.strength and card.seed is not None, card.name
        assert f"{card.num_players} players" in text and "## Known limits" in text
        random_row = {row.opponent: row for row in card.strength}["random"]
        assert random_row.ci_low <= random_row.win_rate <= random_row.ci_high
        assert f"{random_row.win_rate:.1%}" in text


def test_uno_lab_agents_lists_the_cards_and_prints_one(capsys: pytest.CaptureFixture[str]) -> None:
    from unolab.cli import main as uno_lab

    assert uno_lab(["agents"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in shipped_agent_names())
    assert uno_lab(["agents", "ppo_official_2p"]) == 0
    card = capsys.readouterr().out
    assert card.startswith("# ppo_official_2p") and "## Known limits" in card
    assert uno_lab(["agents", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown agent 'nobody'" in err and "ppo_official_2p" in err


def test_marked_tables_are_generated_from_their_record() -> None:
    from docs_tables import with_tables

    page = "intro\n<!-- table: agents pretrained_strength.json -->\nstale\n<!-- end of table -->\nend\n"
    text = with_tables(page)
    assert text.startswith("intro\n<!-- table: agents pretrained_strength.json -->\n| agent |")
    assert "stale" not in text and text.endswith("<!-- end of table -->\nend\n")
    assert "| `ppo_official_2p` | 2 | 70.2% [69.3, 71.0] |" in text
    assert with_tables(text) == text
    bots = (ROOT / "docs" / "bots.md").read_text()
    assert bots.count("<!-- table: ") == 3 and with_tables(bots) == bots
    with pytest.raises(ValueError, match="unknown table kind 'pie'"):
        with_tables("<!-- table: pie bot_strength.json -->\n<!-- end of table -->")
    with pytest.raises(ValueError, match="has no"):
        with_tables("<!-- table: strength bot_strength.json -->\n| a |\n")


def test_a_broken_marker_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    (tmp_path / "pyproject.toml").write_text("")
    bots = tmp_path / "docs" / "bots.md"
    bots.write_text(
        bots.read_text().replace("table: strength bot_strength", "table: pie bot_strength")
    )
    before = bots.read_text()
    assert main(["--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown table kind 'pie'" in err
    assert bots.read_text() == before  # nothing written


MEASURED = re.compile(r"\d\.\d+ ?%|\d\.\d+ ?[x×]|\d% (?:fewer|more|less)|/s\b|\d ms\b|\d s\b")
"""What a measured figure in a table cell looks like: a rate, a ratio, a speed, a time."""


def _typed_tables(text: str) -> list[tuple[str, str]]:
    """Each Markdown table outside the generated blocks: its header and its body."""
    tables, header, body, generated = [], None, [], False
    for line in [*text.splitlines(), ""]:
        if line.startswith(("<!-- table: ", "<!-- results: ", "<!-- exploit-table: gen")):
            generated = True
        elif line.startswith(
            ("<!-- end of table", "<!-- end of results", "<!-- exploit-table: end")
        ):
            generated = False
        elif line.startswith("|") and not generated:
            if header is None:
                header, body = line, []
            else:
                body.append(line)
            continue
        if header is not None:
            tables.append((header, "\n".join(body)))
            header = None
    return tables


def test_no_page_types_a_measured_table() -> None:
    """A measured table is generated from its record (or the page links results.md): a
    typed copy drifts from the record, as the speed table of docs/envs.md once did. Typed
    tables of options, modules or keys stay typed."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        name = page.relative_to(ROOT).as_posix()
        if name in ("docs/results.md",) or name.startswith("docs/agents/"):
            continue  # generated whole
        for header, body in _typed_tables(page.read_text()):
            assert not MEASURED.search(f"{header}\n{body}"), (
                f"{name}: a typed table of measured figures: {header}; keep it in a record "
                "under docs/data/ and mark it <!-- table: measured data/NAME.json -->"
            )
    assert "results.md#speed" in (ROOT / "docs" / "envs.md").read_text()
    # What the check looks for is found in a typed table and missed in a generated one.
    typed = "| what | steps/s |\n|---|---|\n| core | 58,200 |\n"
    assert MEASURED.search("\n".join(_typed_tables(typed)[0]))
    assert not _typed_tables(f"<!-- table: measured data/x.json -->\n{typed}<!-- end of table -->")


def test_every_page_with_marked_tables_is_regenerated() -> None:
    """A marker on a page that :data:`GUIDES_WITH_TABLES` leaves out would never be checked."""
    from docs_tables import GUIDES_WITH_TABLES, TABLE_START

    marked = {
        page.relative_to(ROOT / "docs").as_posix()
        for page in (ROOT / "docs").rglob("*.md")
        if TABLE_START in page.read_text()
    }
    assert marked <= set(GUIDES_WITH_TABLES), marked - set(GUIDES_WITH_TABLES)
    assert "distributed.md" in marked and "rlcard_uno.md" in marked


def test_a_measured_table_shows_its_record(tmp_path: Path) -> None:
    from docs_records import RecordError
    from docs_tables import with_tables

    record = {
        "description": "A made-up speed table.",
        "measured_with": {"command": "python -m unolab.benchmarks.core", "date": "2026-01-02"},
        "columns": ["what", "steps/s", "share", ""],
        "rows": [
            [
                "core, B = 1",
                {"value": 58200, "format": ",d"},
                {"value": 0.0139, "format": ".2%"},
                "",
            ],
            ["search", {"value": 0.0751, "format": ".4f"}, "**0.54x**", "-"],
        ],
    }
    (tmp_path / "docs" / "data").mkdir(parents=True)
    path = tmp_path / "docs" / "data" / "speed.json"
    path.write_text(json.dumps(record))
    page = "<!-- table: measured data/speed.json -->\nstale\n<!-- end of table -->\n"
    assert with_tables(page, tmp_path) == (
        "<!-- table: measured data/speed.json -->\n"
        "| what | steps/s | share | |\n"
        "|---|---|---|---|\n"
        "| core, B = 1 | 58,200 | 1.39% | |\n"
        "| search | 0.0751 | **0.54x** | - |\n"
        "<!-- end of table -->\n"
    )
    for key, value, names in (
        ("rows", [["only one cell"]], ("rows[0]", "1 cell(s) in a table of 4 columns")),
        ("measured_with", {}, ("measured_with", "at least one of command")),
        ("columns", ["a|b"], ("columns[0]", "without '|'")),
    ):
        path.write_text(json.dumps({**record, key: value}))
        with pytest.raises(RecordError) as raised:
            with_tables(page, tmp_path)
        message = str(raised.value)
        assert "\n" not in message and message.startswith("docs/data/speed.json: ")
        assert all(name in message for name in names), message
