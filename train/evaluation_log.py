"""A training run's evaluation log, ``evaluations.jsonl``, read with every number checked.

A training run appends one JSON line per evaluation
(:func:`unolab.train.run_callback.record_evaluation`)::

    {"steps": 20000, "results": {"random": {"win_rate": 0.61, "ci_low": 0.58,
                                            "ci_high": 0.64, "games": 1000, ...}}}

Every reader of the log reads it here: the Lab tab of ``uno-lab serve`` (the run's page and
its ``curve.png``), ``uno-lab exploit`` and the docs' learning curves. The file may have been
edited by hand or copied from elsewhere, so each number is checked for its type and its
bounds (steps from 0 to :data:`~unolab.train.config_limits.MAX_STEPS`, rates from 0 to 1
with the win rate inside its interval, games from 1 to
:data:`~unolab.train.config_limits.MAX_EVAL_GAMES`); a line that is not an evaluation is one
:class:`EvaluationLogError` naming the file and the line, never a traceback in a reader. The
checkpoints' metadata (``latest.json``, ``best.json``) holds the same results, checked by
:func:`evaluation_points` as well.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.config_values import check_float, check_int
from uno_env.files import UnreadableFileError, read_regular_file, shown
from unolab.train.config_limits import MAX_EVAL_GAMES, MAX_STEPS

__all__ = [
    "EVALUATIONS_FILE",
    "MAX_LOG_BYTES",
    "EvaluationLogError",
    "EvaluationPoint",
    "checked_steps",
    "evaluation_points",
    "parse_evaluation_log",
    "read_evaluation_log",
]

EVALUATIONS_FILE = "evaluations.jsonl"
"""The run's evaluation history: one JSON line per evaluation (the learning curve)."""

MAX_LOG_BYTES = 64 * 2**20
"""The largest evaluation log read (a line per evaluation is under a kilobyte)."""

_SLACK = 1e-9
"""How far a win rate may lie outside its interval (the interval's rounding) and still count."""

_RATES = ("win_rate", "ci_low", "ci_high")


class EvaluationLogError(ValueError):
    """An evaluation log (or a checkpoint's evaluations) holding something that is not an
    evaluation; the message is one line naming the file, the line and the value."""


@dataclass(frozen=True)
class EvaluationPoint:
    """One bot's result at one evaluation.

    Attributes:
        steps: The learner steps at the evaluation, ``0..MAX_STEPS``.
        opponent: The bot evaluated against.
        win_rate: The learner's win rate, ``0..1``.
        ci_low: The low end of its Wilson 95% interval, ``0..win_rate``.
        ci_high: The high end of that interval, ``win_rate..1``.
        games: The hands played, or ``None`` where the line does not say.
    """

    steps: int
    opponent: str
    win_rate: float
    ci_low: float
    ci_high: float
    games: int | None


def checked_steps(value: Any, where: str) -> int:
    """A step count read from a run's file, checked.

    Args:
        value: The value read.
        where: The file and line (or key), for the message.

    Raises:
        EvaluationLogError: for anything but a whole number from 0 to ``MAX_STEPS``.
    """
    try:
        return check_int(f"{where}: steps", value, 0, MAX_STEPS, "learner steps")
    except ValueError as err:
        raise EvaluationLogError(str(err)) from None


def evaluation_points(steps: int, results: Any, where: str) -> list[EvaluationPoint]:
    """The points of one evaluation, one per bot in the file's order, each number checked.

    Args:
        steps: The evaluation's step count (checked by :func:`checked_steps`).
        results: What the file holds as the evaluation's results: a mapping of each bot to
            its ``win_rate``, ``ci_low``, ``ci_high`` (and ``games``).
        where: The file and line (or key), for the message.

    Raises:
        EvaluationLogError: for results that are not such a mapping, or a number of the
            wrong type or out of its bounds.
    """
    if not isinstance(results, dict):
        raise EvaluationLogError(
            f"{where}: 'results' is not a mapping of bots to their win rates, got {shown(results)}"
        )
    points = []
    for bot, result in results.items():
        if not isinstance(result, dict):
            raise EvaluationLogError(
                f"{where}: {shown(bot)}: expected a mapping of {', '.join(_RATES)}, "
                f"got {shown(result)}"
            )
        missing = [key for key in _RATES if key not in result]
        if missing:
            raise EvaluationLogError(
                f"{where}: {shown(bot)}: needs the numbers {', '.join(_RATES)} "
                f"(missing {', '.join(missing)})"
            )
        try:
            rate, low, high = (
                check_float(f"{where}: {shown(bot)} {key}", result[key], 0.0, 1.0, why="a rate")
                for key in _RATES
            )
            games = result.get("games")
            if games is not None:
                games = check_int(f"{where}: {shown(bot)} games", games, 1, MAX_EVAL_GAMES)
        except ValueError as err:
            raise EvaluationLogError(str(err)) from None
        if not low - _SLACK <= rate <= high + _SLACK:
            raise EvaluationLogError(
                f"{where}: {shown(bot)}: the win rate {rate:g} lies outside its interval "
                f"[{low:g}, {high:g}]"
            )
        points.append(EvaluationPoint(steps, str(bot), rate, low, high, games))
    return points


def _line(text: bytes, where: str) -> Any:
    """One line's JSON value.

    Raises:
        EvaluationLogError: naming ``where``, for text that is not UTF-8 JSON.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise EvaluationLogError(f"{where}: the JSON is nested too deeply to read") from None
    except UnicodeDecodeError:
        raise EvaluationLogError(f"{where}: not UTF-8 text") from None
    except ValueError as err:  # also a number of more digits than Python reads
        detail = " ".join(str(err).split())[:160]
        raise EvaluationLogError(f"{where}: not valid JSON ({detail})") from None


def parse_evaluation_log(raw: bytes, shown_as: str) -> list[EvaluationPoint]:
    """The points of an evaluation log, by step, each step's bots in the file's order.

    Blank lines are passed over. A resumed run may evaluate a step again: the last line of
    each step counts. Text after the last line break that is not yet whole JSON is a line
    the run is writing now: it is read once it is whole.

    Args:
        raw: The file's bytes.
        shown_as: How messages name the file.

    Raises:
        EvaluationLogError: naming the file and the line, for the first line that is not an
            evaluation (see the module's docstring for the bounds).
    """
    lines = raw.split(b"\n")  # the last one is empty unless the run is writing it now
    by_step: dict[int, list[EvaluationPoint]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{shown_as} line {number}"
        try:
            record = _line(line, where)
        except EvaluationLogError:
            if number == len(lines):
                break  # the line being written
            raise
        if not isinstance(record, dict) or "steps" not in record or "results" not in record:
            raise EvaluationLogError(
                f"{where}: not an evaluation (needs 'steps' and 'results'), got {shown(record)}"
            )
        steps = checked_steps(record["steps"], where)
        by_step[steps] = evaluation_points(steps, record["results"], where)
    return [point for step in sorted(by_step) for point in by_step[step]]


def read_evaluation_log(path: Path, shown_as: str | None = None) -> list[EvaluationPoint]:
    """The points of the evaluation log at ``path`` (see :func:`parse_evaluation_log`); none
    if there is no such file.

    Args:
        path: The log (a run folder's :data:`EVALUATIONS_FILE`).
        shown_as: How messages name the file (default: ``path``).

    Raises:
        EvaluationLogError: naming the file (and the line), for a log that is not a regular
            file, is larger than :data:`MAX_LOG_BYTES`, or holds a line that is not an
            evaluation.
    """
    name = str(path) if shown_as is None else shown_as
    if not Path(path).exists():
        return []
    try:
        raw = read_regular_file(path, MAX_LOG_BYTES, "evaluation log")
    except UnreadableFileError as err:
        raise EvaluationLogError(str(err).replace(str(path), name)) from None
    return parse_evaluation_log(raw, name)
