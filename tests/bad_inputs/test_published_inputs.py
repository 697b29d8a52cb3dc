"""Damaged records and pages given to ``python tools/published.py``: one line each, exit 2.

Every case damages one file of a copy of the checkout's docs (a strength record, the speed
record, the cross-check, the learning curves, the exploitability data, a measured
experiment's table, a guide or the README):
a truncated file, an empty one, a value of the wrong type, NaN or an infinity, a number too
large (or of thousands of digits), a negative count, a missing key, a table row short of a
cell, a cell with ``|`` or an unknown number format, bytes that are not UTF-8,
a folder or a FIFO in place of the file, a link loop, a JSON value that is not an object, a
table marker naming a file outside docs/, a curve whose name would write outside docs/. For
every case the test checks that

(a) the exit status is 2 (1 when a page cannot be written), never an exception escaping
    ``main``;
(b) the message is one line on stderr naming the file and the key or the line;
(c) neither stdout nor stderr holds a traceback;
(d) nothing was written: every file of the scratch folder is byte for byte as before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from docs_tables import MARKERS
from published import main
from support import ROOT

Mutation = Callable[[Path], None]
"""Damages the checkout copy at the given root."""


@dataclass(frozen=True)
class Case:
    """One damaged file.

    Attributes:
        id: The test id.
        bad: The damage, applied to the copy's root.
        names: What the one line must contain (the file first).
        status: The exit status expected.
        process: Run ``python tools/published.py`` in a real process.
    """

    id: str
    bad: Mutation
    names: tuple[str, ...]
    status: int = 2
    process: bool = False


def edit(name: str, change: Callable[[Any], object]) -> Mutation:
    """Rewrite the JSON file ``name`` (under the root) after ``change`` edited its value in
    place (what ``change`` returns is ignored)."""

    def mutate(root: Path) -> None:
        path = root / name
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=2))

    return mutate


def raw(name: str, data: bytes) -> Mutation:
    def mutate(root: Path) -> None:
        (root / name).write_bytes(data)

    return mutate


def replace(name: str, old: bytes, new: bytes) -> Mutation:
    """Replace the first ``old`` in ``name`` by ``new`` (raw bytes: NaN, Infinity...)."""

    def mutate(root: Path) -> None:
        path = root / name
        data = path.read_bytes()
        assert old in data, (name, old)
        path.write_bytes(data.replace(old, new, 1))

    return mutate


def append(name: str, text: str, before: bool = False) -> Mutation:
    """Add ``text`` at the end of ``name`` (at its start when ``before``)."""

    def mutate(root: Path) -> None:
        path = root / name
        held = path.read_text()
        path.write_text(text + held if before else held + text)

    return mutate


def truncate(name: str) -> Mutation:
    def mutate(root: Path) -> None:
        path = root / name
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])

    return mutate


def into_folder(name: str) -> Mutation:
    def mutate(root: Path) -> None:
        path = root / name
        path.unlink()
        path.mkdir()
        (path / "inside").write_text("x")

    return mutate


def into_fifo(name: str) -> Mutation:
    def mutate(root: Path) -> None:
        (root / name).unlink()
        os.mkfifo(root / name)

    return mutate


def into_link(name: str, target: str) -> Mutation:
    """Replace ``name`` by a link to ``target`` (itself: a loop)."""

    def mutate(root: Path) -> None:
        path = root / name
        path.unlink()
        path.symlink_to(target)

    return mutate


def delete(name: str) -> Mutation:
    def mutate(root: Path) -> None:
        (root / name).unlink()

    return mutate


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return change


def _drop(path: tuple[str | int, ...]) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return change


def _rename_first_figure(new: str) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        name = next(iter(data["figures"]))
        data["figures"] = {new: data["figures"][name]}

    return change


def _marker(old: str, new: str) -> Mutation:
    return replace("docs/bots.md", old.encode(), new.encode())


BOTS = "docs/bot_strength.json"
AGENTS = "docs/pretrained_strength.json"
SEARCHES = "docs/search_strength.json"
BENCH = "docs/benchmarks.json"
CROSS = "docs/data/openspiel_crosscheck.json"
CURVES = "docs/data/training_curves.json"
EXPLOIT = "docs/data/exploitability.json"
RAY = "docs/data/ray_vs_local.json"
SWEEP = "docs/data/sweep_example.json"
DEEP = b"[" * 100_000 + b"]" * 100_000

CASES = [
    # the file as a whole
    Case("truncated", truncate(BOTS), (BOTS, "line", "not valid JSON")),
    Case("truncated_process", truncate(CURVES), (CURVES, "not valid JSON"), process=True),
    Case("empty", raw(BENCH, b""), (BENCH, "empty")),
    Case("only_spaces", raw(CROSS, b"  \n\n"), (CROSS, "empty")),
    Case("not_utf8", replace(SEARCHES, b'"', b'"\xff'), (SEARCHES, "line 2", "not UTF-8")),
    Case("not_utf8_process", raw(BENCH, b"\xfe\xff{}"), (BENCH, "not UTF-8"), process=True),
    Case("a_folder", into_folder(BENCH), (BENCH, "folder")),
    Case("a_fifo", into_fifo(AGENTS), (AGENTS, "not a regular file")),
    Case("a_link_loop", into_link(BOTS, "bot_strength.json"), (BOTS, "loop")),
    Case(
        "a_link_loop_process", into_link(CROSS, "openspiel_crosscheck.json"), (CROSS,), process=True
    ),
    Case("a_dangling_link", into_link(CURVES, "nowhere.json"), (CURVES, "does not exist")),
    Case("missing", delete(BENCH), (BENCH, "does not exist")),
    Case("a_list", raw(AGENTS, b"[1, 2]"), (AGENTS, "JSON object, found a list")),
    Case("null", raw(EXPLOIT, b"null"), (EXPLOIT, "JSON object, found a NoneType")),
    Case("a_string", raw(BENCH, b'"figures"'), (BENCH, "JSON object, found a str")),
    Case("nested_too_deeply", raw(BOTS, DEEP), (BOTS, "nested too deeply")),
    # values of the wrong type
    Case(
        "rate_is_text",
        edit(BOTS, _set(("results", 1, "win_rate"), "high")),
        (BOTS, "results[1].win_rate", "'high'"),
    ),
    Case(
        "players_is_a_float",
        edit(AGENTS, _set(("results", 0, "num_players"), 2.0)),
        (AGENTS, "results[0].num_players", "expected an integer"),
    ),
    Case(
        "games_is_a_bool",
        edit(CROSS, _set(("results", 2, "games"), True)),
        (CROSS, "results[2].games"),
    ),
    Case(
        "results_is_an_object",
        edit(SEARCHES, _set(("results",), {"a": 1})),
        (SEARCHES, "results", "expected a list"),
    ),
    Case(
        "figures_is_an_object",
        edit(BENCH, _set(("figures",), {})),
        (BENCH, "figures", "expected a list"),
    ),
    Case(
        "ms_per_decision_of_three",
        edit(SEARCHES, _set(("results", 0, "ms_per_decision"), [1, 2, 3])),
        (SEARCHES, "results[0].ms_per_decision"),
    ),
    Case(
        "headline_is_text",
        edit(BENCH, _set(("figures", 0, "headline"), "yes")),
        (BENCH, "figures[0].headline", "true or false"),
    ),
    # NaN, infinities, huge numbers
    Case("nan", replace(AGENTS, b'"win_rate": ', b'"win_rate": NaN, "was": '), (AGENTS, "NaN")),
    Case(
        "infinity",
        replace(BENCH, b'"ratio": ', b'"ratio": Infinity, "was": '),
        (BENCH, "Infinity"),
    ),
    Case(
        "nan_process",
        replace(CURVES, b'"win_rate": ', b'"win_rate": -NaN, "was": '),
        (CURVES,),
        process=True,
    ),
    Case(
        "overflowing_float",
        replace(BOTS, b'"ci_high": ', b'"ci_high": 1e400, "was": '),
        (BOTS, "results[0].ci_high", "inf"),
    ),
    Case(
        "games_of_thirty_digits",
        edit(BOTS, _set(("results", 0, "games"), 10**30)),
        (BOTS, "results[0].games", "[0, 1e+12]"),
    ),
    Case(
        "games_of_five_thousand_digits",
        replace(BOTS, b'"games": ', b'"games": ' + b"9" * 5000 + b', "was": '),
        (BOTS, "digits"),
    ),
    Case(
        "seconds_of_thirty_digits",
        edit(CURVES, lambda d: next(iter(d["figures"].values()))["lines"][0].update(seconds=1e30)),
        (CURVES, ".lines[0].seconds"),
    ),
    Case(
        "exploitability_past_one",
        edit(EXPLOIT, _set(("results", 0, "ppo", "estimate", "exploitability"), 5)),
        (EXPLOIT, "results[0].ppo.estimate.exploitability"),
    ),
    Case(
        "players_past_the_table",
        edit(EXPLOIT, _set(("results", 0, "num_players"), 10**6)),
        (EXPLOIT, "results[0].num_players"),
    ),
    # negative counts
    Case(
        "games_negative",
        edit(BOTS, _set(("results", 2, "games"), -5)),
        (BOTS, "results[2].games", "-5"),
    ),
    Case(
        "repeats_negative",
        edit(BENCH, _set(("figures", 0, "repeats"), -1)),
        (BENCH, "figures[0].repeats"),
    ),
    Case(
        "curve_steps_negative",
        edit(
            CURVES,
            lambda d: next(iter(d["figures"].values()))["lines"][0]["points"][0].update(steps=-1),
        ),
        (CURVES, ".lines[0].points[0].steps"),
    ),
    Case(
        "iterations_negative_process",
        edit(CROSS, _set(("results", 0, "iterations"), -3)),
        (CROSS, "results[0].iterations"),
        process=True,
    ),
    # missing keys
    Case(
        "row_without_opponent",
        edit(BOTS, _drop(("results", 0, "opponent"))),
        (BOTS, "results[0]", "missing key(s) opponent"),
    ),
    Case("without_figures", edit(BENCH, _drop(("figures",))), (BENCH, "missing key(s) figures")),
    Case(
        "curve_without_title",
        edit(CURVES, lambda d: next(iter(d["figures"].values())).pop("title")),
        (CURVES, "missing key(s) title"),
    ),
    Case(
        "search_without_budget",
        edit(SEARCHES, lambda d: [row.pop("budget", None) for row in d["results"]]),
        (SEARCHES, "budget or rollouts"),
    ),
    Case(
        "exploit_without_estimate",
        edit(EXPLOIT, _drop(("results", 0, "ppo", "estimate"))),
        (EXPLOIT, "results[0].ppo", "estimate"),
    ),
    Case("exploit_data_missing", delete(EXPLOIT), (EXPLOIT, "does not exist")),
    # values no measurement gives
    Case(
        "rate_outside_its_interval",
        edit(AGENTS, _set(("results", 0, "win_rate"), 0.01)),
        (AGENTS, "results[0].win_rate", "outside its interval"),
    ),
    Case(
        "candidate_breaks_the_table",
        edit(BOTS, _set(("results", 0, "candidate"), "ran|dom\n# injected")),
        (BOTS, "results[0].candidate", "one line"),
    ),
    Case(
        "candidate_with_a_pipe",
        edit(BOTS, _set(("results", 0, "candidate"), "ran|dom")),
        (BOTS, "results[0].candidate", "'|'"),
    ),
    Case(
        "candidate_empty",
        edit(BOTS, _set(("results", 0, "candidate"), "")),
        (BOTS, "results[0].candidate", "got 0"),
    ),
    Case(
        "candidate_huge",
        edit(BOTS, _set(("results", 0, "candidate"), "x" * 100_000)),
        (BOTS, "results[0].candidate", "got 100000"),
    ),
    Case(
        "wins_above_games",
        edit(BOTS, _set(("results", 0, "wins"), 20_000)),
        (BOTS, "results[0].wins", "20000 is more than"),
    ),
    Case(
        "wins_a_bool",
        edit(BOTS, _set(("results", 0, "wins"), True)),
        (BOTS, "results[0].wins", "expected an integer"),
    ),
    Case(
        "truncated_negative",
        edit(BOTS, _set(("results", 0, "truncated"), -1)),
        (BOTS, "results[0].truncated", "-1"),
    ),
    Case(
        "rate_of_no_game",
        edit(BOTS, lambda d: d["results"][0].update(games=0, wins=0)),
        (BOTS, "results[0].games", "0 games played", "at least 1 game"),
    ),
    Case(
        "crosscheck_rate_of_no_game",
        edit(CROSS, lambda d: d["results"][0].update(games=0, wins=0)),
        (CROSS, "results[0].games", "0 games played"),
    ),
    Case(
        "time_range_reversed",
        edit(SEARCHES, _set(("results", 0, "ms_per_decision"), [5.0, 1.0])),
        (SEARCHES, "results[0].ms_per_decision", "from low to high", "[5.0, 1.0]"),
    ),
    Case(
        "interval_upside_down",
        edit(BOTS, _set(("results", 0, "ci_low"), 0.9)),
        (BOTS, "results[0].ci_low", "above ci_high"),
    ),
    Case(
        "games_per_pairing_a_float",
        edit(BOTS, _set(("games_per_pairing",), 1e4)),
        (BOTS, "games_per_pairing", "expected an integer"),
    ),
    Case(
        "preset_unknown",
        edit(BOTS, _set(("preset",), "nope")),
        (BOTS, "preset", "'nope' is not a rules preset", "official"),
    ),
    Case(
        "description_a_list",
        edit(BOTS, _set(("description",), ["x"])),
        (BOTS, "description", "expected text"),
    ),
    Case("results_empty", edit(BOTS, _set(("results",), [])), (BOTS, "results", "at least 1")),
    Case(
        "agent_not_shipped",
        edit(AGENTS, _set(("results", 0, "candidate"), "no_such_agent")),
        (AGENTS, "results[0].candidate", "not a shipped agent", "ppo_official_2p"),
    ),
    Case(
        "ratio_zero",
        edit(BENCH, _set(("figures", 0, "ratio"), 0)),
        (BENCH, "figures[0].ratio", "(0, 1e+06]"),
    ),
    Case(
        "date_not_a_date",
        edit(BENCH, _set(("date",), "yesterday")),
        (BENCH, "date", "YYYY-MM-DD", "'yesterday'"),
    ),
    Case(
        "figure_name_of_two_lines",
        edit(BENCH, _set(("figures", 0, "figure"), "a\n\n# Injected")),
        (BENCH, "figures[0].figure", "one line"),
    ),
    Case(
        "curve_date_not_a_date_process",
        edit(CURVES, lambda d: next(iter(d["figures"].values())).update(date="2026-13-01")),
        (CURVES, ".date", "YYYY-MM-DD"),
        process=True,
    ),
    Case(
        "curve_named_outside_docs",
        edit(CURVES, _rename_first_figure("../../../escaped")),
        (CURVES, "figures.../../../escaped", "file name"),
    ),
    # a measured experiment's table
    Case(
        "measured_row_short_of_a_cell",
        edit(RAY, lambda data: data["rows"][1].pop()),
        (RAY, "rows[1]", "4 cell(s) in a table of 5 columns"),
    ),
    Case(
        "measured_cell_with_a_bar",
        edit(RAY, _set(("rows", 0, 0), "2 | 4 players")),
        (RAY, "rows[0][0]", "without '|'"),
    ),
    Case(
        "measured_cell_of_two_lines",
        edit(RAY, _set(("columns", 1), "local\nbackend")),
        (RAY, "columns[1]", "one line"),
    ),
    Case(
        "measured_cell_a_list",
        edit(SWEEP, _set(("rows", 2, 0), [3e-4])),
        (SWEEP, "rows[2][0]", "expected text or a number with its format"),
    ),
    Case(
        "measured_number_is_nan",
        replace(SWEEP, b'"value": 0.0', b'"value": NaN'),
        (SWEEP, "NaN"),
    ),
    Case(
        "measured_number_is_text",
        edit(SWEEP, _set(("rows", 0, 1, "value"), "zero")),
        (SWEEP, "rows[0][1].value", "'zero'"),
    ),
    Case(
        "measured_format_unknown",
        edit(SWEEP, _set(("rows", 0, 1, "format"), "{0.__class__}")),
        (SWEEP, "rows[0][1].format", "not a number format"),
    ),
    Case(
        "measured_whole_format_of_a_fraction",
        edit(SWEEP, _set(("rows", 0, 4), {"value": 2.5, "format": ",d"})),
        (SWEEP, "rows[0][4].value", "whole number"),
    ),
    Case(
        "measured_with_nothing",
        edit(RAY, _set(("measured_with",), {})),
        (RAY, "measured_with", "at least one of command"),
    ),
    Case(
        "measured_date_not_a_day",
        edit(RAY, _set(("measured_with", "date"), "last spring")),
        (RAY, "measured_with.date", "YYYY-MM-DD"),
    ),
    Case("measured_without_rows", edit(RAY, _set(("rows",), [])), (RAY, "rows", "at least 1")),
    Case("measured_without_columns", edit(RAY, _drop(("columns",))), (RAY, "columns")),
    # the pages
    Case(
        "guide_not_utf8",
        replace(
            "docs/bots.md",
            b"\n",
            b"\n\xff",
        ),
        ("docs/bots.md", "line 2", "not UTF-8"),
    ),
    Case("readme_a_folder", into_folder("README.md"), ("README.md", "folder")),
    Case(
        "marker_outside_docs",
        _marker("table: strength bot_strength.json", "table: strength ../../../etc/passwd.json"),
        ("docs/bots.md", "../../../etc/passwd.json", "under docs/"),
    ),
    Case(
        "marker_absolute",
        _marker("table: strength bot_strength.json", "table: strength /etc/x.json"),
        ("docs/bots.md", "/etc/x.json"),
    ),
    Case(
        "marker_of_a_missing_record",
        _marker("table: strength bot_strength.json", "table: strength gone.json"),
        ("docs/gone.json", "does not exist"),
    ),
    Case(
        "readme_with_two_start_markers",
        append("README.md", f"\n{MARKERS[0]}\n"),
        ("README.md", "line", "a second", "keep one headline block"),
    ),
    Case(
        "readme_end_before_start",
        append("README.md", f"\n{MARKERS[1]}\n", before=True),
        ("README.md", "line"),
    ),
    Case(
        "guide_table_without_its_end",
        replace("docs/bots.md", b"<!-- end of table -->", b""),
        ("docs/bots.md", "line", "no '<!-- end of table -->' before the next table marker"),
    ),
    Case(
        "guide_end_without_a_table",
        append("docs/bots.md", "\n<!-- end of table -->\n"),
        ("docs/bots.md", "line", "without a table marker"),
    ),
    Case(
        "generated_page_is_a_folder",
        into_folder("docs/results.md"),
        ("docs/results.md", "cannot be written"),
        status=1,
    ),
]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout's docs and README, as ``--root`` takes it."""
    root = tmp_path_factory.mktemp("checkout") / "root"
    shutil.copytree(ROOT / "docs", root / "docs", symlinks=True)
    shutil.copy(ROOT / "README.md", root / "README.md")
    (root / "pyproject.toml").write_text("")
    assert main(["--root", str(root)]) == 0, "the copy's pages are generated"
    return root


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (``None`` for what is not a regular file)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.timeout(120)  # a FIFO read would hang: refused at once instead
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_damaged_record_is_one_line(
    case: Case, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    shutil.copytree(checkout, root, symlinks=True)
    case.bad(root)
    before = _snapshot(tmp_path)
    argv = ["--root", str(root)]
    if case.process:
        done = subprocess.run(
            [sys.executable, str(ROOT / "tools" / "published.py"), *argv],
            capture_output=True,
            text=True,
            timeout=300,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code = main(argv)
        captured = capsys.readouterr()
        out, err = captured.out, captured.err
    assert code == case.status, (code, out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python tools/published.py: "), err
    for name in case.names:
        assert name in lines[0], (name, lines[0])
    assert _snapshot(tmp_path) == before, "nothing written"


def test_the_undamaged_copy_is_accepted(checkout: Path) -> None:
    assert main(["--check", "--root", str(checkout)]) == 0
