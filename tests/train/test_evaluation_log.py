"""A training run's ``evaluations.jsonl`` as every reader reads it: each number checked for
its type and bounds, a bad line one error naming the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from unolab.train.config_limits import MAX_EVAL_GAMES, MAX_STEPS
from unolab.train.evaluation_log import (
    EVALUATIONS_FILE,
    EvaluationLogError,
    EvaluationPoint,
    evaluation_points,
    parse_evaluation_log,
    read_evaluation_log,
)
from unolab.train.run_callback import read_curve, record_evaluation


def _result(rate: float = 0.5, games: int = 200) -> dict[str, Any]:
    return {"win_rate": rate, "ci_low": rate - 0.05, "ci_high": rate + 0.05, "games": games}


GOOD = json.dumps({"steps": 1000, "results": {"random": _result(0.4)}})

BAD_LINES: dict[str, tuple[str, str]] = {
    # id: (line 2 of the log, what the message names)
    "steps_401_digits": ('{"steps": 1%s, "results": {}}' % ("0" * 400), "steps"),
    "steps_past_the_json_digit_limit": ('{"steps": 1%s, "results": {}}' % ("0" * 5000), "JSON"),
    "steps_negative": ('{"steps": -5, "results": {}}', "-5"),
    "steps_over_the_bound": (json.dumps({"steps": MAX_STEPS + 1, "results": {}}), "steps"),
    "steps_fractional": ('{"steps": 1.5, "results": {}}', "1.5"),
    "steps_true": ('{"steps": true, "results": {}}', "True"),
    "steps_text": ('{"steps": "100", "results": {}}', "'100'"),
    "steps_missing": ('{"results": {}}', "'steps'"),
    "not_a_mapping": ("[1, 2]", "not an evaluation"),
    "results_a_list": ('{"steps": 5, "results": []}', "results"),
    "result_not_a_mapping": ('{"steps": 5, "results": {"random": 0.5}}', "'random'"),
    "rate_missing": ('{"steps": 5, "results": {"random": {"win_rate": 0.5}}}', "ci_low"),
    "rate_nan": (
        '{"steps": 5, "results": {"random": {"win_rate": NaN, "ci_low": 0, "ci_high": 1}}}',
        "win_rate",
    ),
    "rate_infinite": (
        '{"steps": 5, "results": {"random": {"win_rate": 0.5, "ci_low": 0, "ci_high": 1e400}}}',
        "ci_high",
    ),
    "rate_over_one": (json.dumps({"steps": 5, "results": {"random": _result(7.0)}}), "win_rate"),
    "rate_negative": (
        json.dumps({"steps": 5, "results": {"random": _result(0.01)}}),
        "ci_low",
    ),
    "rate_as_text": (
        '{"steps": 5, "results": {"random": {"win_rate": "0.5", "ci_low": 0, "ci_high": 1}}}',
        "'0.5'",
    ),
    "rate_outside_its_interval": (
        '{"steps": 5, "results": {"random": {"win_rate": 0.9, "ci_low": 0.1, "ci_high": 0.2}}}',
        "outside its interval",
    ),
    "games_zero": (json.dumps({"steps": 5, "results": {"random": _result(games=0)}}), "games"),
    "games_huge": (
        json.dumps({"steps": 5, "results": {"random": _result(games=MAX_EVAL_GAMES + 1)}}),
        "games",
    ),
    "not_json": ("{oops", "not valid JSON"),
    "nested_too_deeply": ("[" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", BAD_LINES, ids=list(BAD_LINES))
def test_a_bad_line_is_one_error_naming_the_file_and_line(case: str) -> None:
    line, names = BAD_LINES[case]
    raw = (GOOD + "\n" + line + "\n" + GOOD + "\n").encode()
    with pytest.raises(EvaluationLogError) as raised:
        parse_evaluation_log(raw, "runs/x/evaluations.jsonl")
    message = str(raised.value)
    assert message.startswith("runs/x/evaluations.jsonl line 2: "), message
    assert names in message and "\n" not in message and len(message) < 600, message


def test_the_last_line_of_a_step_counts_and_a_torn_tail_waits() -> None:
    lines = [
        {"steps": 2000, "results": {"random": _result(0.45), "mixbot": _result(0.2)}},
        {"steps": 1000, "results": {"random": _result(0.4)}},
        {"steps": 2000, "results": {"random": _result(0.5), "mixbot": _result(0.3)}},
    ]
    raw = ("\n".join(json.dumps(line) for line in lines) + '\n\n{"steps": 30').encode()
    points = parse_evaluation_log(raw, "log")
    assert [(p.steps, p.opponent, p.win_rate) for p in points] == [
        (1000, "random", 0.4),
        (2000, "random", 0.5),
        (2000, "mixbot", 0.3),
    ]
    low, high = _result(0.4)["ci_low"], _result(0.4)["ci_high"]
    assert points[0] == EvaluationPoint(1000, "random", 0.4, low, high, 200)


def test_a_whole_tail_is_read_and_checked() -> None:
    with pytest.raises(EvaluationLogError, match="line 2: steps"):
        parse_evaluation_log((GOOD + '\n{"steps": -1, "results": {}}').encode(), "log")


def test_checkpoint_results_are_checked_the_same_way() -> None:
    assert evaluation_points(7, {"random": _result(0.5)}, "latest.json")[0].steps == 7
    with pytest.raises(EvaluationLogError, match=r"^latest.json: 'random' win_rate"):
        evaluation_points(7, {"random": {"win_rate": 2, "ci_low": 0, "ci_high": 1}}, "latest.json")


def test_read_curve_reads_through_the_checks(tmp_path: Path) -> None:
    assert read_curve(tmp_path, "random") == []  # no log yet
    record_evaluation(tmp_path, 1000, {"random": _result(0.4), "mixbot": _result(0.3)})
    assert read_curve(tmp_path, "random") == [{"steps": 1000, **_result(0.4)}]
    with open(tmp_path / EVALUATIONS_FILE, "a") as log:
        log.write('{"steps": 1%s, "results": {}}\n' % ("0" * 400))
    with pytest.raises(EvaluationLogError) as raised:
        read_curve(tmp_path, "random")
    assert str(raised.value).startswith(f"{tmp_path / EVALUATIONS_FILE} line 2: steps")


def test_a_log_that_is_no_regular_file_is_one_error(tmp_path: Path) -> None:
    (tmp_path / EVALUATIONS_FILE).mkdir()
    with pytest.raises(EvaluationLogError, match="folder"):
        read_evaluation_log(tmp_path / EVALUATIONS_FILE, "runs/x/evaluations.jsonl")
