"""A tournament run as the Lab tab shows it: its ``summary.json`` and its plots, read only.

The summary is the one :mod:`unolab.tournament.report` writes; only the keys the tab shows
are read (a language model's row carries its ``telemetry``: invalid answers, fallbacks,
timeouts, retries, latency, tokens), each checked for its type (a hand-edited or foreign file gets one line naming
the file and the key, never a traceback). The plots are the PNG files of the run folder.
"""

from __future__ import annotations

from typing import Any

from uno_env.files import shown
from unolab.web.errors import Invalid, NotFound
from unolab.web.lab.files import TOURNAMENT_FILE, RunFiles, integer, rate, real, rules_name
from unolab.web.untrusted import one_line

__all__ = [
    "MAX_PLOTS",
    "MAX_PLOT_BYTES",
    "MAX_SUMMARY_BYTES",
    "TELEMETRY_KEYS",
    "tournament_detail",
    "tournament_entry",
    "tournament_plot",
]

MAX_SUMMARY_BYTES = 8 * 2**20
"""The largest ``summary.json`` read (a run of 50 participants writes a few hundred kB)."""

MAX_PLOT_BYTES = 8 * 2**20
"""The largest plot served (the tournament's plots are tens of kB)."""

MAX_PLOTS = 32
"""Most plots listed for one run."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
"""The first bytes of every PNG file: a file that lacks them is not served as one."""


def _summary(run: RunFiles) -> dict[str, Any]:
    """The run's summary, checked to be a mapping with a leaderboard.

    Raises:
        Invalid: naming the file, for one that cannot be read or is no tournament summary.
    """
    data = run.json(TOURNAMENT_FILE, "tournament summary", MAX_SUMMARY_BYTES)
    if not isinstance(data, dict) or not isinstance(data.get("leaderboard"), list):
        raise Invalid(
            f"{run.shown(TOURNAMENT_FILE)}: holds no 'leaderboard' list; it is not the "
            "summary of a tournament run"
        )
    return data


def _head(run: RunFiles, summary: dict[str, Any]) -> dict[str, Any]:
    """What the listing and the detail share: names, format, table size, games."""
    rules = summary.get("rules")
    schedule = summary.get("schedule")
    players = integer(rules.get("num_players")) if isinstance(rules, dict) else None
    games = integer(schedule.get("games_used")) if isinstance(schedule, dict) else None
    name, form = summary.get("name"), summary.get("format")
    return {
        "id": run.run_id,
        "name": one_line(name, 200) if isinstance(name, str) else run.folder.name,
        "format": form if isinstance(form, str) else "",
        "num_players": players or 0,
        "games": games or 0,
    }


def tournament_entry(run: RunFiles) -> dict[str, Any]:
    """The run as the listing shows it.

    A summary that cannot be read is still listed (named after its folder, with zeros), so
    that opening it says what is wrong with it.
    """
    try:
        summary = _summary(run)
    except Invalid:
        summary = {}
    head = _head(run, summary)
    return {
        "id": head["id"],
        "name": head["name"],
        "games": head["games"],
        "format": head["format"],
        "num_players": head["num_players"],
        "modified": run.modified(TOURNAMENT_FILE),
    }


def _row(row: Any, number: int, where: str) -> dict[str, Any]:
    """A leaderboard row as the tab shows it.

    Raises:
        Invalid: for a row without a name, an Elo or a game count.
    """
    if not isinstance(row, dict):
        raise Invalid(f"{where}: leaderboard row {number} is not a mapping")
    name, elo, games = row.get("name"), real(row.get("elo")), integer(row.get("games"))
    if not isinstance(name, str) or elo is None or games is None:
        raise Invalid(
            f"{where}: leaderboard row {number} needs a 'name' (text), an 'elo' (a finite "
            "number) and 'games' (a whole number from 0 to 2**53 - 1)"
        )
    # The tournament writes null where an interval or a rate does not exist (one deal set,
    # no games); so does the tab. Any other value must be a number in its bounds.
    optional = {"elo_low": real, "elo_high": real, "win_rate": rate}
    optional_values: dict[str, float | None] = {}
    for key, check in optional.items():
        value = row.get(key)
        optional_values[key] = None if value is None else check(value)
        if value is not None and optional_values[key] is None:
            bounds = "a number from 0 to 1" if check is rate else "a finite number"
            raise Invalid(
                f"{where}: leaderboard row {number}: {key!r} must be {bounds} or null, "
                f"got {shown(value)}"
            )
    out: dict[str, Any] = {"name": one_line(name, 200), "elo": elo, **optional_values}
    out["games"] = games
    telemetry = _telemetry(row.get("telemetry"))
    if telemetry is not None:
        out["telemetry"] = telemetry
    return out


TELEMETRY_KEYS = (
    "decisions",
    "requests",
    "replayed",
    "invalid",
    "retries",
    "fallbacks",
    "timeouts",
    "transport_retries",
    "failed_requests",
    "latency_mean_s",
    "latency_p90_s",
    "tokens_in",
    "tokens_out",
)
"""The figures of a participant's telemetry the tab shows (a language model's: its answers,
invalid ones, retries, fallbacks, timeouts, latency, tokens)."""


def _telemetry(found: Any) -> dict[str, float | None] | None:
    """A row's ``telemetry`` as the tab shows it: the known figures, each a finite
    non-negative number or null (anything else is left out: the figures are only shown)."""
    if not isinstance(found, dict):
        return None
    out: dict[str, float | None] = {}
    for key in TELEMETRY_KEYS:
        value = real(found.get(key))
        out[key] = value if value is not None and value >= 0 else None
    return out


def tournament_detail(run: RunFiles) -> dict[str, Any]:
    """The run's leaderboard, rules and plots.

    Raises:
        Invalid: naming the file, for a summary that cannot be read or is malformed.
    """
    summary = _summary(run)
    where = run.shown(TOURNAMENT_FILE)
    return {
        **_head(run, summary),
        "rules": rules_name(summary.get("rules")),
        "leaderboard": [
            _row(row, number, where) for number, row in enumerate(summary["leaderboard"], 1)
        ],
        "plots": run.files(".png", MAX_PLOTS),
    }


def tournament_plot(run: RunFiles, name: str) -> bytes:
    """The bytes of the run's plot ``name`` (one of those :func:`tournament_detail` lists).

    Raises:
        NotFound: for a name that is not one of the run's plots.
        Invalid: for a plot too large, or a file that is not a PNG image.
    """
    if name not in run.files(".png", MAX_PLOTS):
        raise NotFound(
            f"tournament run {run.run_id!r} has no plot {one_line(repr(name), 120)}; its plots "
            "are listed by /api/lab/tournaments/<id>"
        )
    data = run.read(name, "plot", MAX_PLOT_BYTES)
    if not data.startswith(PNG_SIGNATURE):
        raise Invalid(f"{run.shown(name)} is not a PNG image")
    return data
