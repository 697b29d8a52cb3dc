"""Outputs of a tournament: ``summary.json``, ``leaderboard.csv``, PNG plots, a rich table.

Plots (matplotlib, Agg backend): ``ratings.png`` (Elo with bootstrap 95% intervals),
``pairwise.png`` (heatmap of the pairwise score matrix) and ``positions.png`` (how often
each participant finished in each position).
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.text import Text

from unolab.agents.progress import PipeConsole
from unolab.tournament.run_folder import write_file

__all__ = [
    "LEADERBOARD_COLUMNS",
    "TELEMETRY_COLUMNS",
    "clean_json",
    "has_telemetry",
    "leaderboard_lines",
    "leaderboard_table",
    "print_leaderboard",
    "telemetry_line",
    "write_reports",
]

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


TELEMETRY_COLUMNS = ("decisions", "invalid", "fallbacks")
"""Columns ``leaderboard.csv`` adds when a participant reported telemetry (a language model:
its decisions, invalid answers and fallbacks), so a model that breaks shows beside its Elo."""


def has_telemetry(summary: dict[str, Any]) -> bool:
    """Whether any participant of ``summary`` reported telemetry."""
    return any(row.get("telemetry") for row in summary["leaderboard"])


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


_LEGEND = (
    "Elo: Bradley-Terry rating (mean 0) with its 95% bootstrap interval over deal sets; "
    "{skill}: openskill rating; score: share of the other seats finished ahead of (ties "
    "count half); win%: hands won; games: games played; ff: games forfeited. Full figures: "
    "leaderboard.csv and summary.json."
)
_TELEMETRY_LEGEND = (
    " bad/fb: invalid answers and fallbacks of a language model (each decision may take "
    "one retry; a second invalid answer plays the fallback)."
)
_NUMBER_COLUMNS = ("Elo", "95% CI", "skill", "score", "win%", "games", "ff")


def _cells(row: dict[str, Any], plain: bool, telemetry: bool = False) -> list[str]:
    """The number cells of a leaderboard row (``plain``: ASCII only; ``telemetry``: with
    the invalid answers and fallbacks)."""
    win = "-" if row["win_rate"] is None else f"{100 * row['win_rate']:.1f}"
    plus = "+-" if plain else "±"
    cells = [
        _fmt(float(row["elo"]), 0),
        f"[{_fmt(row['elo_low'], 0)}, {_fmt(row['elo_high'], 0)}]",
        f"{row['mu']:.1f}{plus}{row['sigma']:.1f}",
        _fmt(row["score"], 3),
        win,
        str(row["games"]),
        str(row["forfeits"]),
    ]
    if telemetry:
        report = row.get("telemetry") or {}
        cells.append(f"{report.get('invalid', 0)}/{report.get('fallbacks', 0)}" if report else "-")
    return cells


def leaderboard_lines(summary: dict[str, Any], width: int = 80, plain: bool = False) -> list[str]:
    """The leaderboard as text lines of at most ``width`` characters, names never cut.

    The wide layout is one line per participant (rank, name, figures). When a name is too
    long for that, the narrow layout puts each name on a line of its own, with the figures
    on the next line. A legend under the table explains the columns once.

    Args:
        summary: The tournament summary.
        width: The most characters a line may have.
        plain: ASCII only (for output that is not a terminal).

    Returns:
        The title, the header, the rows and the legend.
    """
    title, table, legend = _leaderboard_parts(summary, width, plain)
    return [*title, *table, *legend]


def _leaderboard_parts(
    summary: dict[str, Any], width: int, plain: bool
) -> tuple[list[str], list[str], list[str]]:
    """The title lines, the header and rows, and the legend lines of the leaderboard."""
    skill = "mu+-sd" if plain else "μ±σ"
    telemetry = has_telemetry(summary)
    headers = ["#", "name", *(skill if c == "skill" else c for c in _NUMBER_COLUMNS)]
    if telemetry:
        headers.append("bad/fb")
    rows = [
        [str(r["rank"]), r["name"], *_cells(r, plain, telemetry)] for r in summary["leaderboard"]
    ]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    gap = "  "

    def line(cells: list[str], cols: list[int]) -> str:
        parts = []
        for i in cols:
            left = headers[i] == "name"
            parts.append(cells[i].ljust(widths[i]) if left else cells[i].rjust(widths[i]))
        return gap.join(parts).rstrip()

    sched = summary["schedule"]
    title = (
        f"{summary['name']} ({summary['format']}, {summary['rules']['num_players']} players): "
        f"{sched['games_used']} games, {sched['deal_sets_played']} deal sets"
    )
    head = textwrap.wrap(title, width)
    out: list[str] = []
    every = list(range(len(headers)))
    legend = _LEGEND.format(skill=skill) + (_TELEMETRY_LEGEND if telemetry else "")
    if len(line(headers, every)) <= width and all(len(line(r, every)) <= width for r in rows):
        out.append(line(headers, every))
        out.extend(line(r, every) for r in rows)
    else:  # narrow: the name on its own line, the figures under it
        figures = [0, *range(2, len(headers))]
        out.append(line(headers, figures))
        for r in rows:
            out.extend(textwrap.wrap(r[1], width, break_long_words=True, break_on_hyphens=False))
            out.append(line(r, figures))
        legend += " Each name is on its own line, above its figures."
    return head, out, textwrap.wrap(legend, width)


def leaderboard_table(summary: dict[str, Any], width: int = 80) -> Group:
    """The leaderboard for a terminal: :func:`leaderboard_lines`, title and header in bold.

    Every line fits ``width`` columns, so the terminal never wraps or cuts a name.
    """
    title, table, legend = _leaderboard_parts(summary, width, plain=False)
    styles = ["bold"] * (len(title) + 1) + [""] * (len(table) - 1) + ["dim"] * len(legend)
    return Group(
        *(
            Text(text, style=style, no_wrap=True, overflow="ignore")
            for text, style in zip([*title, *table, *legend], styles, strict=True)
        )
    )


def _footer(summary: dict[str, Any]) -> list[str]:
    lines = []
    ends = summary["endings"]["counts"]
    lines.append(
        f"endings: {ends['won']} won, {ends['truncated']} truncated, {ends['forfeit']} forfeit"
    )
    for name, info in summary["endings"]["forfeits"].items():
        lines.append(
            f"  [red]{escape(name)} forfeited {info['games']} game(s)[/red]: "
            f"{escape(info['reasons'][0])}"
        )
    for row in summary["leaderboard"]:
        if row.get("telemetry"):
            lines.append(f"  {escape(row['name'])}: {telemetry_line(row['telemetry'])}")
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
            + (
                f"; the worker pool restarted {run['worker_restarts']} time(s) after a worker died"
                if run.get("worker_restarts")
                else ""
            )
        )
    return lines


def telemetry_line(report: dict[str, Any]) -> str:
    """A participant's telemetry in words: decisions, invalid answers, fallbacks, the
    transport's troubles, latency and tokens."""
    parts = [
        f"{report.get('decisions', 0)} decisions",
        f"{report.get('invalid', 0)} invalid answers",
        f"{report.get('retries', 0)} retried",
        f"{report.get('fallbacks', 0)} fallbacks",
    ]
    for key, what in (
        ("timeouts", "timeouts"),
        ("transport_retries", "transport retries"),
        ("failed_requests", "failed requests"),
        ("replayed", "replayed from records"),
    ):
        if report.get(key):
            parts.append(f"{report[key]} {what}")
    if report.get("latency_mean_s") is not None:
        p90 = report.get("latency_p90_s")
        parts.append(
            f"latency {report['latency_mean_s']:.3f} s mean"
            + (f", {p90:.3f} s p90" if p90 is not None else "")
        )
    if report.get("tokens_in") or report.get("tokens_out"):
        parts.append(f"tokens {report.get('tokens_in', 0)} in, {report.get('tokens_out', 0)} out")
    return ", ".join(parts)


def _write_csv(path: Path, summary: dict[str, Any]) -> None:
    text = io.StringIO(newline="")
    extra = list(TELEMETRY_COLUMNS) if has_telemetry(summary) else []
    writer = csv.DictWriter(text, fieldnames=[*LEADERBOARD_COLUMNS, "positions", *extra])
    writer.writeheader()
    for row in summary["leaderboard"]:
        out = {k: row[k] for k in LEADERBOARD_COLUMNS}
        out["positions"] = " ".join(str(p) for p in row["positions"])
        report = row.get("telemetry") or {}
        for key in extra:  # empty for a participant that reports nothing (a bot)
            out[key] = report.get(key, "")
        writer.writerow(out)
    write_file(path, text.getvalue())


def _save_figure(fig: Any, path: Path, written: list[Path]) -> None:
    """Lay out and render a figure in memory, write it atomically (a full disk leaves no torn
    PNG), close it whatever happens, and add its path to ``written``."""
    import matplotlib.pyplot as plt

    try:
        fig.tight_layout()
        data = io.BytesIO()
        fig.savefig(data, format="png", dpi=100)
        write_file(path, data.getvalue())
    finally:
        plt.close(fig)
    written.append(path)


def _plot(folder: Path, summary: dict[str, Any]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written: list[Path] = []
    rows = summary["leaderboard"]
    names = [r["name"] for r in rows]
    elo = np.array([r["elo"] for r in rows], dtype=float)
    low = np.array([np.nan if r["elo_low"] is None else r["elo_low"] for r in rows], dtype=float)
    high = np.array([np.nan if r["elo_high"] is None else r["elo_high"] for r in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    # A percentile bootstrap over few deal sets can leave the estimate outside its interval;
    # the bar then reaches from the estimate to the interval's far end (never a negative error).
    err = np.clip(np.vstack([np.nan_to_num(elo - low), np.nan_to_num(high - elo)]), 0.0, None)
    ax.errorbar(elo, y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, names)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("Elo (Bradley-Terry, mean 0), 95% bootstrap interval over deal sets")
    ax.set_title(summary["name"])
    _save_figure(fig, folder / "ratings.png", written)

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
    _save_figure(fig, folder / "pairwise.png", written)

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
    _save_figure(fig, folder / "positions.png", written)
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

    Each file is written atomically: a failure leaves the previous file whole.

    Returns:
        The files written.

    Raises:
        OSError: one line naming the file that cannot be written.
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    text = json.dumps(clean_json(summary), indent=2, allow_nan=False)
    write_file(path / "summary.json", text + "\n")
    _write_csv(path / "leaderboard.csv", summary)
    written = [path / "summary.json", path / "leaderboard.csv"]
    if plots and summary["leaderboard"]:
        written += _plot(path, summary)
    if print_table:
        print_leaderboard(summary, console or PipeConsole())
    return written


def print_leaderboard(summary: dict[str, Any], console: Console) -> None:
    """Print the leaderboard and the notes under it, every line within the console's width.

    A terminal gets the styled table (:func:`leaderboard_table`); other output (a file, a
    pipe, a CI log) gets plain ASCII lines of at most 80 characters.
    """
    if console.is_terminal:
        width = max(console.width, 40)
        console.print(leaderboard_table(summary, width))
        for text in _footer(summary):
            console.print(text, width=width)
        return
    width = min(console.width, 80)
    for text in leaderboard_lines(summary, width, plain=True):
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    for text in _footer(summary):
        plain = Text.from_markup(text).plain
        for part in textwrap.wrap(plain, width, subsequent_indent="  ") or [""]:
            console.print(part, markup=False, highlight=False, soft_wrap=True)
