"""A training run as the Lab tab shows it: what it is, and its learning curve, read only.

The curve is the run's ``evaluations.jsonl`` (one line per evaluation: the learner step and
each bot's win rate with its Wilson interval; a resumed run repeats a step, and the last
line of a step counts). A run written before that file existed has only its checkpoints'
metadata (``latest.json``, ``best.json``): their evaluations are the curve's points. The
PNG of the curve is drawn on request from those files (:mod:`unolab.curves`, through a
figure of its own: no pyplot state is shared between requests).
"""

from __future__ import annotations

import contextlib
from typing import Any

from unolab.curves import Series, curves_png
from unolab.web.errors import Invalid
from unolab.web.lab_files import TRAINING_CONFIG, RunFiles, integer, real, rules_name
from unolab.web.untrusted import one_line, parse_json

__all__ = [
    "EVALUATIONS_FILE",
    "MAX_EVALUATIONS_BYTES",
    "curve_png",
    "training_detail",
    "training_entry",
]

EVALUATIONS_FILE = "evaluations.jsonl"
"""The run's evaluation history, as ``unolab.train.run_callback`` appends it."""

CHECKPOINTS = ("latest.json", "best.json")
"""The checkpoints' metadata, newest first: name, algorithm, rules, steps, evaluations."""

MAX_EVALUATIONS_BYTES = 64 * 2**20
"""The largest ``evaluations.jsonl`` read (a line per evaluation is under a kilobyte)."""

MAX_META_BYTES = 4 * 2**20
"""The largest checkpoint metadata or ``config.yaml`` read (real ones are a few kB)."""

MAX_LINES = 12
"""Most opponents drawn in the curve's PNG (the table shows every one)."""

_Point = dict[str, Any]


def _metas(run: RunFiles, strict: bool) -> list[dict[str, Any]]:
    """The checkpoints' metadata that exist, newest first.

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
        found.append(data)
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


def _result(value: Any, where: str) -> dict[str, float]:
    """One bot's evaluation: its win rate and interval.

    Raises:
        Invalid: for a result without the three numbers.
    """
    numbers = {k: real(value.get(k)) if isinstance(value, dict) else None for k in _RATES}
    checked = {k: v for k, v in numbers.items() if v is not None}
    if len(checked) != len(_RATES):
        raise Invalid(f"{where}: needs the numbers {', '.join(_RATES)}")
    return checked


_RATES = ("win_rate", "ci_low", "ci_high")


def _points(steps: int, results: Any, where: str) -> list[_Point]:
    """The points of one evaluation, one per bot, in the file's order.

    Raises:
        Invalid: for results that are not a mapping of bots to win rates.
    """
    if not isinstance(results, dict):
        raise Invalid(f"{where}: 'results' is not a mapping of bots to their win rates")
    return [
        {"steps": steps, "opponent": one_line(str(bot), 120)}
        | _result(value, f"{where}: {one_line(repr(bot), 60)}")
        for bot, value in results.items()
    ]


def _log_curve(run: RunFiles) -> list[_Point]:
    """The curve of ``evaluations.jsonl``, by step (the last line of a step counts).

    Raises:
        Invalid: naming the file and the line, for a line that is not an evaluation.
    """
    raw = run.read(EVALUATIONS_FILE, "evaluation log", MAX_EVALUATIONS_BYTES)
    lines = raw.split(b"\n")
    tail = lines.pop()  # empty unless the run is writing its next line now
    by_step: dict[int, list[_Point]] = {}
    for number, line in enumerate([*lines, tail], start=1):
        if not line.strip():
            continue
        where = f"{run.shown(EVALUATIONS_FILE)} line {number}"
        try:
            record = parse_json(line, where)
        except Invalid:
            if number == len(lines) + 1:
                break  # a line being written: it is read once it is whole
            raise
        steps = integer(record.get("steps")) if isinstance(record, dict) else None
        if steps is None:
            raise Invalid(f"{where}: not an evaluation (needs 'steps' and 'results')")
        by_step[steps] = _points(steps, record.get("results"), where)
    return [point for step in sorted(by_step) for point in by_step[step]]


def _meta_curve(run: RunFiles, metas: list[dict[str, Any]]) -> list[_Point]:
    """The checkpoints' evaluations as points (a run without ``evaluations.jsonl``)."""
    by_step: dict[int, list[_Point]] = {}
    for meta, name in zip(metas, CHECKPOINTS, strict=False):
        steps, results = integer(meta.get("steps")), meta.get("evaluations")
        if steps is not None and isinstance(results, dict) and results and steps not in by_step:
            by_step[steps] = _points(steps, results, f"{run.shown(name)}: evaluations")
    return [point for step in sorted(by_step) for point in by_step[step]]


def _first(sources: list[dict[str, Any]], key: str) -> Any:
    """The first value of ``key`` among the sources that hold one."""
    return next((s[key] for s in sources if s.get(key) is not None), None)


def _describe(run: RunFiles, strict: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the listing and the detail share, and the checkpoints' metadata."""
    metas = _metas(run, strict)
    sources = [*metas]
    if not metas:  # a run before its first checkpoint: only its config says what it is
        sources.append(_config(run, strict))
    name, algorithm = _first(sources, "name"), _first(sources, "algorithm")
    rules = _first(sources, "rules")
    players = integer(rules.get("num_players")) if isinstance(rules, dict) else None
    players = players or integer(_first(sources, "num_players"))
    steps = [s for s in (integer(m.get("steps")) for m in metas) if s is not None]
    head = {
        "id": run.run_id,
        "name": one_line(name, 200) if isinstance(name, str) else run.folder.name,
        "algorithm": algorithm if isinstance(algorithm, str) else "",
        "rules": rules_name(rules),
        "num_players": players or 0,
        "steps": max(steps, default=0),
    }
    return head, metas


def _curve(run: RunFiles, metas: list[dict[str, Any]]) -> list[_Point]:
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
