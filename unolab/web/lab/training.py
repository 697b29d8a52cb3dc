"""A training run as the Lab tab shows it: what it is, and its learning curve, read only.

The curve is the run's ``evaluations.jsonl`` (one line per evaluation: the learner step and
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
from unolab.web.errors import Invalid
from unolab.web.lab.files import TRAINING_CONFIG, RunFiles, integer, rules_name
from unolab.web.untrusted import one_line

__all__ = [
    "curve_png",
    "training_detail",
    "training_entry",
]

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
