"""Outputs of a tournament: ``summary.json``, ``leaderboard.csv``, PNG plots, a rich table.

Plots (matplotlib, Agg backend): ``ratings.png`` (Elo with bootstrap 95% intervals),
``pairwise.png`` (heatmap of the pairwise score matrix) and ``positions.png`` (how often
each participant finished in each position).
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["LEADERBOARD_COLUMNS", "clean_json", "leaderboard_table", "write_reports"]

LEADERBOARD_COLUMNS = (
    "rank",
    "name",
    "elo",
    "elo_low",
    "elo_high",
    "mu",
    "sigma",
    "ordinal",
    "games",
    "score",
    "score_low",
    "score_high",
    "wins",
    "win_rate",
    "forfeits",
)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def clean_json(value: Any) -> Any:
    """Replace non-finite floats (NaN, infinities) by ``None``, recursively, for JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def leaderboard_table(summary: dict[str, Any]) -> Table:
    """The leaderboard as a rich table."""
    sched = summary["schedule"]
    title = (
        f"{summary['name']} ({summary['format']}, {summary['rules']['num_players']} players): "
        f"{sched['games_used']} games, {sched['deal_sets_played']} deal sets"
    )
    table = Table(title=title)
    for col, justify in (
        ("#", "right"),
        ("name", "left"),
        ("Elo", "right"),
        ("95% CI", "right"),
        ("openskill μ±σ", "right"),
        ("games", "right"),
        ("score", "right"),
        ("win %", "right"),
        ("forfeits", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for row in summary["leaderboard"]:
        ci = f"[{_fmt(row['elo_low'], 0)}, {_fmt(row['elo_high'], 0)}]"
        win = "-" if row["win_rate"] is None else f"{100 * row['win_rate']:.1f}"
        table.add_row(
            str(row["rank"]),
            row["name"],
            _fmt(float(row["elo"]), 0),
            ci,
            f"{row['mu']:.1f}±{row['sigma']:.1f}",
            str(row["games"]),
            _fmt(row["score"], 3),
            win,
            str(row["forfeits"]),
        )
    return table


def _footer(summary: dict[str, Any]) -> list[str]:
    lines = []
    ends = summary["endings"]["counts"]
    lines.append(
        f"endings: {ends['won']} won, {ends['truncated']} truncated, {ends['forfeit']} forfeit"
    )
    for name, info in summary["endings"]["forfeits"].items():
        lines.append(f"  [red]{name} forfeited {info['games']} game(s)[/red]: {info['reasons'][0]}")
    seats = ", ".join(f"seat {s['seat']}: {_fmt(s['score'], 3)}" for s in summary["seats"])
    lines.append(f"seat scores (seat 0 leads): {seats}")
    overall = summary["variance"]["overall"]
    if overall and overall["ratio"] is not None:
        lines.append(
            f"variance: duplicate deal sets need {overall['ratio']:.2f}x the games of "
            f"independent deals with balanced seats, {_fmt(overall['ratio_random_seats'], 2)}x "
            "of independent deals with random seats"
        )
    ab = summary.get("ab")
    if ab and ab["variance"] and ab["variance"]["ratio"] is not None:
        lines.append(
            f"A/B pairing needs {ab['variance']['ratio']:.2f}x the deal sets of independent "
            "deals for the B - A difference"
        )
    if ab and ab["score"] is not None:
        lines.append(
            f"A/B: {summary['candidate']} vs {summary['incumbent']}: score {ab['score']:.3f} "
            f"[{_fmt(ab['score_low'], 3)}, {_fmt(ab['score_high'], 3)}], "
            f"Elo {_fmt(ab['elo'], 0)} over {ab['deal_sets']} deal sets"
        )
    sprt = summary.get("sprt")
    if sprt:
        lines.append(
            f"SPRT [{sprt['elo0']}, {sprt['elo1']}]: {sprt['decision']} after {sprt['n']} deal "
            f"sets (LLR {sprt['llr']:.2f} in [{sprt['lower']:.2f}, {sprt['upper']:.2f}])"
        )
    run = summary["run"]
    if run.get("games_per_s"):
        lines.append(
            f"played {run['games_played']} games in {run['elapsed_s']:.1f} s "
            f"({run['games_per_s']:,.0f} games/s, {run['workers']} worker(s)); "
            f"{run['games_resumed']} resumed"
        )
    return lines


def _write_csv(path: Path, summary: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*LEADERBOARD_COLUMNS, "positions"])
        writer.writeheader()
        for row in summary["leaderboard"]:
            out = {k: row[k] for k in LEADERBOARD_COLUMNS}
            out["positions"] = " ".join(str(p) for p in row["positions"])
            writer.writerow(out)
    os.replace(tmp, path)


def _plot(folder: Path, summary: dict[str, Any]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written = []
    rows = summary["leaderboard"]
    names = [r["name"] for r in rows]
    elo = np.array([r["elo"] for r in rows], dtype=float)
    low = np.array([np.nan if r["elo_low"] is None else r["elo_low"] for r in rows], dtype=float)
    high = np.array([np.nan if r["elo_high"] is None else r["elo_high"] for r in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    err = np.vstack([np.nan_to_num(elo - low), np.nan_to_num(high - elo)])
    ax.errorbar(elo, y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, names)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("Elo (Bradley-Terry, mean 0), 95% bootstrap interval over deal sets")
    ax.set_title(summary["name"])
    fig.tight_layout()
    fig.savefig(folder / "ratings.png", dpi=100)
    plt.close(fig)
    written.append(folder / "ratings.png")

    pw = summary["pairwise"]
    order = [pw["names"].index(n) for n in names]
    score = np.array(
        [
            [np.nan if pw["score"][i][j] is None else pw["score"][i][j] for j in order]
            for i in order
        ],
        dtype=float,
    )
    fig, ax = plt.subplots(figsize=(0.7 * len(names) + 3, 0.6 * len(names) + 2))
    image = ax.imshow(score, vmin=0.0, vmax=1.0, cmap="RdBu")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(score[i, j]):
                colour = "white" if abs(score[i, j] - 0.5) > 0.3 else "black"
                ax.text(
                    j, i, f"{score[i, j]:.2f}", ha="center", va="center", fontsize=8, color=colour
                )
    fig.colorbar(image, ax=ax, label="row's score against column")
    ax.set_title("pairwise scores")
    fig.tight_layout()
    fig.savefig(folder / "pairwise.png", dpi=100)
    plt.close(fig)
    written.append(folder / "pairwise.png")

    k = len(rows[0]["positions"]) if rows else 0
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    left = np.zeros(len(rows))
    for pos in range(k):
        share = np.array(
            [r["positions"][pos] / r["games"] if r["games"] else 0.0 for r in rows], dtype=float
        )
        ax.barh(y, share, left=left, label=f"position {pos + 1}")
        left += share
    ax.set_yticks(y, names)
    ax.set_xlabel("share of games (tied seats share the best position of their group)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("finishing positions")
    fig.tight_layout()
    fig.savefig(folder / "positions.png", dpi=100)
    plt.close(fig)
    written.append(folder / "positions.png")
    return written


def write_reports(
    folder: str | Path,
    summary: dict[str, Any],
    *,
    console: Console | None = None,
    plots: bool = True,
    print_table: bool = True,
) -> list[Path]:
    """Write ``summary.json``, ``leaderboard.csv`` and the plots; print the leaderboard.

    Returns:
        The files written.
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    text = json.dumps(clean_json(summary), indent=2, allow_nan=False)
    _atomic_write(path / "summary.json", text + "\n")
    _write_csv(path / "leaderboard.csv", summary)
    written = [path / "summary.json", path / "leaderboard.csv"]
    if plots and summary["leaderboard"]:
        written += _plot(path, summary)
    if print_table:
        console = console or Console()
        console.print(leaderboard_table(summary))
        for line in _footer(summary):
            console.print(line)
    return written
