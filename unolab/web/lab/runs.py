"""The runs as the Lab tab shows them, read only: tournaments and training runs.

**A tournament run**: its ``summary.json`` and its plots. The summary is the one :mod:`unolab.tournament.report` writes; only the keys the tab shows
are read (a language model's row carries its ``telemetry``: invalid answers, fallbacks,
timeouts, retries, latency, tokens), each checked for its type (a hand-edited or foreign file gets one line naming
the file and the key, never a traceback). The plots are the PNG files of the run folder.

**A training run**: what it is, and its learning curve. The curve is the run's ``evaluations.jsonl`` (one line per evaluation: the learner step and
each bot's win rate with its Wilson interval; a resumed run repeats a step, and the last
line of a step counts), read by :mod:`unolab.train.evaluation_log`, which checks every
number for its type and bounds. A run written before that file existed has only its
checkpoints' metadata (``latest.json``, ``best.json``): their evaluations are the curve's
points, checked the same way. The PNG of the curve is drawn on request from those files
(:mod:`unolab.curves`, through a figure of its own: no pyplot state is shared between
requests).
"""

from __future__ import annotations

import contextlib
from typing import Any

from uno_env.files import shown
from unolab.curves import Series, curves_png
from unolab.train.evaluation_log import (
    EVALUATIONS_FILE,
    MAX_LOG_BYTES,
    EvaluationLogError,
    EvaluationPoint,
    checked_steps,
    evaluation_points,
    parse_evaluation_log,
)
from unolab.web.guard import Invalid, NotFound, one_line
from unolab.web.lab.files import (
    TOURNAMENT_FILE,
    TRAINING_CONFIG,
    RunFiles,
    integer,
    rate,
    real,
    rules_name,
)

__all__ = [
    "MAX_PLOTS",
    "MAX_PLOT_BYTES",
    "MAX_SUMMARY_BYTES",
    "TELEMETRY_KEYS",
    "curve_png",
    "tournament_detail",
    "tournament_entry",
    "tournament_plot",
    "training_detail",
    "training_entry",
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


CHECKPOINTS = ("latest.json", "best.json")
"""The checkpoints' metadata, newest first: name, algorithm, rules, steps, evaluations."""

MAX_META_BYTES = 4 * 2**20
"""The largest checkpoint metadata or ``config.yaml`` read (real ones are a few kB)."""

MAX_LINES = 12
"""Most opponents drawn in the curve's PNG (the table shows every one)."""

_Point = dict[str, Any]


def _metas(run: RunFiles, strict: bool) -> list[tuple[str, dict[str, Any]]]:
    """The checkpoints' metadata that exist, newest first, each with its file's name.

    Raises:
        Invalid: (only with ``strict``) naming a file that cannot be read or is no mapping.
    """
    found = []
    for name in CHECKPOINTS:
        if not run.has(name):
            continue
        try:
            data = run.json(name, "checkpoint metadata", MAX_META_BYTES)
            if not isinstance(data, dict):
                raise Invalid(f"{run.shown(name)}: holds no mapping; it is not checkpoint metadata")
        except Invalid:
            if strict:
                raise
            continue
        found.append((name, data))
    return found


def _config(run: RunFiles, strict: bool) -> dict[str, Any]:
    """The run's ``config.yaml`` (an empty mapping if it is not one and not ``strict``).

    Raises:
        Invalid: (only with ``strict``) naming the file, for one that is not a YAML mapping.
    """
    import yaml

    try:
        text = run.read(TRAINING_CONFIG, "training config", MAX_META_BYTES)
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError):
            # The parser's message quotes the file; say only where.
            raise Invalid(f"{run.shown(TRAINING_CONFIG)} is not valid YAML") from None
        if not isinstance(data, dict):
            raise Invalid(f"{run.shown(TRAINING_CONFIG)} holds no mapping; it is not a config")
    except Invalid:
        if strict:
            raise
        return {}
    return data


def _point(point: EvaluationPoint) -> _Point:
    """A point as the API shows it."""
    return {
        "steps": point.steps,
        "opponent": one_line(point.opponent, 120),
        "win_rate": point.win_rate,
        "ci_low": point.ci_low,
        "ci_high": point.ci_high,
    }


def _log_curve(run: RunFiles) -> list[_Point]:
    """The curve of ``evaluations.jsonl``, by step (the last line of a step counts).

    Raises:
        Invalid: naming the file and the line, for a line that is not an evaluation or a
            number out of its bounds.
    """
    raw = run.read(EVALUATIONS_FILE, "evaluation log", MAX_LOG_BYTES)
    try:
        points = parse_evaluation_log(raw, run.shown(EVALUATIONS_FILE))
    except EvaluationLogError as err:
        raise Invalid(one_line(str(err), 400)) from None
    return [_point(point) for point in points]


def _meta_steps(meta: dict[str, Any], name: str, run: RunFiles, strict: bool) -> int | None:
    """A checkpoint's step count, ``None`` where it has none or (unless ``strict``) a bad one.

    Raises:
        Invalid: (only with ``strict``) naming the file, for steps of the wrong type or
            out of bounds.
    """
    if meta.get("steps") is None:
        return None
    try:
        return checked_steps(meta["steps"], run.shown(name))
    except EvaluationLogError as err:
        if strict:
            raise Invalid(one_line(str(err), 400)) from None
        return None


def _meta_curve(run: RunFiles, metas: list[tuple[str, dict[str, Any]]]) -> list[_Point]:
    """The checkpoints' evaluations as points (a run without ``evaluations.jsonl``).

    Raises:
        Invalid: naming the file, for evaluations that are malformed or out of bounds.
    """
    by_step: dict[int, list[_Point]] = {}
    for name, meta in metas:
        steps, results = _meta_steps(meta, name, run, True), meta.get("evaluations")
        if steps is not None and isinstance(results, dict) and results and steps not in by_step:
            try:
                points = evaluation_points(steps, results, f"{run.shown(name)}: evaluations")
            except EvaluationLogError as err:
                raise Invalid(one_line(str(err), 400)) from None
            by_step[steps] = [_point(point) for point in points]
    return [point for step in sorted(by_step) for point in by_step[step]]


def _first(sources: list[dict[str, Any]], key: str) -> Any:
    """The first value of ``key`` among the sources that hold one."""
    return next((s[key] for s in sources if s.get(key) is not None), None)


def _describe(
    run: RunFiles, strict: bool
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """What the listing and the detail share, and the checkpoints' metadata.

    Raises:
        Invalid: (only with ``strict``) naming the file, for one that cannot be read or
            holds a step count of the wrong type or out of bounds.
    """
    metas = _metas(run, strict)
    sources = [meta for _, meta in metas]
    if not metas:  # a run before its first checkpoint: only its config says what it is
        sources.append(_config(run, strict))
    name, algorithm = _first(sources, "name"), _first(sources, "algorithm")
    rules = _first(sources, "rules")
    players = integer(rules.get("num_players")) if isinstance(rules, dict) else None
    players = players or integer(_first(sources, "num_players"))
    steps = [s for s in (_meta_steps(m, name, run, strict) for name, m in metas) if s is not None]
    head = {
        "id": run.run_id,
        "name": one_line(name, 200) if isinstance(name, str) else run.folder.name,
        "algorithm": algorithm if isinstance(algorithm, str) else "",
        "rules": rules_name(rules),
        "num_players": players or 0,
        "steps": max(steps, default=0),
    }
    return head, metas


def _curve(run: RunFiles, metas: list[tuple[str, dict[str, Any]]]) -> list[_Point]:
    if run.has(EVALUATIONS_FILE):
        return _log_curve(run)
    return _meta_curve(run, metas)


def training_entry(run: RunFiles) -> dict[str, Any]:
    """The run as the listing shows it (files that cannot be read are passed over)."""
    head, metas = _describe(run, strict=False)
    if not head["steps"]:
        # A log that cannot be read leaves 0: opening the run says what is wrong with it.
        with contextlib.suppress(Invalid):
            head["steps"] = max((p["steps"] for p in _curve(run, metas)), default=0)
    modified = max(run.modified(name) for name in (TRAINING_CONFIG, EVALUATIONS_FILE, *CHECKPOINTS))
    return {key: head[key] for key in ("id", "name", "algorithm", "steps")} | {"modified": modified}


def training_detail(run: RunFiles) -> dict[str, Any]:
    """The run and its learning curve.

    Raises:
        Invalid: naming the file, for metadata or an evaluation log that is malformed.
    """
    head, metas = _describe(run, strict=True)
    curve = _curve(run, metas)
    head["steps"] = max([head["steps"], *(p["steps"] for p in curve)])
    return head | {"curve": curve}


def curve_png(run: RunFiles) -> bytes:
    """The run's learning curve drawn as a PNG: win rate against steps, one line per bot
    with its 95% interval shaded.

    Raises:
        Invalid: as :func:`training_detail`.
    """
    detail = training_detail(run)
    curve: list[_Point] = detail["curve"]
    opponents = list(dict.fromkeys(p["opponent"] for p in curve))[:MAX_LINES]
    series = []
    for opponent in opponents:
        points = [p for p in curve if p["opponent"] == opponent]
        series.append(
            Series(
                label=_plain(opponent),
                steps=[p["steps"] for p in points],
                win_rate=[p["win_rate"] for p in points],
                ci_low=[p["ci_low"] for p in points],
                ci_high=[p["ci_high"] for p in points],
            )
        )
    title = _plain(f"{detail['name']} ({detail['algorithm'] or 'training run'})")
    return curves_png(title, series)


def _plain(text: str) -> str:
    """Text from a file on one line, at most 80 characters (the drawing shows it literally)."""
    return one_line(text, 80) or "?"
