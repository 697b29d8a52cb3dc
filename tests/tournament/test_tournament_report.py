"""Tests of the printed leaderboard (``unolab.tournament.report``): it fits 80 columns.

Long participant names are never cut (``ppo_off…``) and the intervals never wrap: the wide
layout is used when every row fits, else each name gets a line of its own. A rich terminal
console of width 80 and a plain, non-terminal stream (a pipe, a CI log) are both checked,
and the legend under the table explains the columns once.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from unolab.tournament.report import (
    LEADERBOARD_COLUMNS,
    leaderboard_lines,
    print_leaderboard,
    write_reports,
)

LONG = "ppo_official_2p_finetuned_best_policy"
SHORT = ("random", "mixbot", "best_policy", "ppo_official_2p")


def _summary(names: tuple[str, ...], forfeit_reason: str = "") -> dict[str, Any]:
    rows = []
    for i, name in enumerate(names):
        rows.append(
            {
                "rank": i + 1,
                "name": name,
                "elo": 250.0 - 123.456 * i,
                "elo_low": -1234.0 + i,
                "elo_high": 1234.5 - i,
                "mu": 31.25 - i,
                "sigma": 1.234,
                "games": 120000,
                "score": 0.6543,
                "win_rate": 0.5,
                "forfeits": 12345 if i == 0 else 0,
            }
        )
    forfeits = {names[0]: {"games": 3, "reasons": [forfeit_reason]}} if forfeit_reason else {}
    return {
        "name": "a_tournament_with_a_long_name",
        "format": "round_robin",
        "rules": {"num_players": 2},
        "schedule": {"games_used": 1234567, "deal_sets_played": 5000},
        "leaderboard": rows,
        "endings": {
            "counts": {"won": 10, "truncated": 0, "forfeit": 3 if forfeit_reason else 0},
            "forfeits": forfeits,
        },
        "seats": [{"seat": 0, "score": 0.5}, {"seat": 1, "score": 0.5}],
        "variance": {"overall": {"ratio": 0.89, "ratio_random_seats": 0.93}},
        "sprt": None,
        "run": {
            "games_played": 10,
            "games_resumed": 0,
            "elapsed_s": 1.0,
            "games_per_s": 10.0,
            "workers": 1,
        },
    }


def _terminal(summary: dict[str, Any]) -> str:
    console = Console(width=80, record=True, force_terminal=True, file=io.StringIO())
    print_leaderboard(summary, console)
    return console.export_text()


def _plain(summary: dict[str, Any]) -> str:
    stream = io.StringIO()  # not a terminal
    print_leaderboard(summary, Console(file=stream))
    return stream.getvalue()


@pytest.mark.parametrize("render", [_terminal, _plain], ids=["terminal", "plain"])
@pytest.mark.parametrize("names", [SHORT, (*SHORT, LONG), (LONG, "x" * 70)], ids=str)
def test_leaderboard_fits_80_columns_with_complete_names(
    render: Any, names: tuple[str, ...]
) -> None:
    reason = "chose action 99, which is out of range 0..79; legal actions: ['R1', 'draw'] " * 2
    text = render(_summary(names, reason))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, "\n".join(lines)
    for name in names:
        assert any(name in line for line in lines), f"{name} is cut: {text}"
    for figure in ("[-1234, 1234]", "120000", "12345", "0.654"):
        assert any(figure in line for line in lines), figure  # intervals never wrap
    legend = [line for line in lines if line.startswith("Elo: ")]
    assert len(legend) == 1 and "ff: games forfeited" in " ".join(lines).replace("\n", " ")
    assert "…" not in text


def test_wide_layout_when_names_fit_narrow_otherwise() -> None:
    wide = leaderboard_lines(_summary(SHORT), 80)
    header = next(line for line in wide if line.startswith("#"))
    assert "name" in header and any(line.startswith("1  random") for line in wide)
    narrow = leaderboard_lines(_summary((*SHORT, LONG)), 80)
    header = next(line for line in narrow if line.startswith("#"))
    assert "name" not in header and LONG in narrow, "the long name has a line of its own"
    assert "above its figures" in " ".join(narrow)


def test_plain_output_is_ascii_and_has_no_markup() -> None:
    text = _plain(_summary((*SHORT, LONG), "raised [red]oops[/red]"))
    assert text.isascii() and "mu+-sd" in text
    assert "[red]oops[/red]" in text, "reasons are printed as written, not as markup"
    assert "\x1b[" not in text


def test_an_estimate_outside_its_interval_is_still_plotted(tmp_path: Path) -> None:
    """A percentile bootstrap over few deal sets can leave the Elo outside its interval."""
    summary = _summary(("random", "mixbot"))
    for row in summary["leaderboard"]:
        row.update({column: 0 for column in LEADERBOARD_COLUMNS if column not in row})
        row["positions"] = [60000, 60000]
    summary["pairwise"] = {"names": ["random", "mixbot"], "score": [[None, 0.4], [0.6, None]]}
    summary["leaderboard"][0].update(elo=40.0, elo_low=45.0, elo_high=90.0)
    summary["leaderboard"][1].update(elo=-40.0, elo_low=-90.0, elo_high=-45.0)
    written = write_reports(tmp_path, summary, print_table=False)
    pictures = [path.name for path in written if path.suffix == ".png"]
    assert "ratings.png" in pictures and (tmp_path / "ratings.png").stat().st_size > 0
