"""Bad input to the arena and to the bots' ``act``: one clear error naming the argument and
the value as given.

The cases: :func:`unolab.agents.arena.play_games` and
:func:`unolab.agents.arena.evaluate_vs` given rules, policies, opponents, counts or switches
of the wrong kind; a policy returning actions past int64; a heuristic bot given observations
or masks of the wrong shape. Each case checks the error's type (``ValueError`` or its
subclasses, ``TypeError`` for an argument of the wrong kind, ``PolicyError`` for a policy's
own fault) and that its one-line message names the value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest

from uno_env import load_rules
from uno_env.observation import OBS_DIM
from uno_env.play import PolicyError
from unolab.agents import make_agent
from unolab.agents.arena import evaluate_vs, play_games

RULES2 = load_rules("official", num_players=2)
RANDOM = make_agent("random", 0)


class _HugeActions:
    """Answers every decision with 2**64 - 1 as an unsigned integer."""

    name = "huge"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.uint64]:
        return np.full(observations.shape[0], 2**64 - 1, dtype=np.uint64)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        del games


@dataclass(frozen=True)
class Case:
    """One bad input: what to run, the error expected, a text its message must contain."""

    id: str
    run: Callable[[], object]
    error: type[Exception]
    names: str


def _play(*args: object, **kwargs: object) -> Callable[[], object]:
    return lambda: play_games(*args, **{"progress": False, **kwargs})  # type: ignore[arg-type]


def _vs(*args: object, **kwargs: object) -> Callable[[], object]:
    return lambda: evaluate_vs(*args, **{"progress": False, **kwargs})  # type: ignore[arg-type]


CASES: list[Case] = [
    # -- play_games ---------------------------------------------------------------------
    Case("play_rules_none", _play(None, [RANDOM] * 2, 2), TypeError, "None"),
    Case("play_rules_name", _play("official", [RANDOM] * 2, 2), TypeError, "'official'"),
    Case("play_policy_name", _play(RULES2, ["random", RANDOM], 2), TypeError, "'random'"),
    Case("play_policy_none", _play(RULES2, [RANDOM, None], 2), TypeError, "policies[1]"),
    Case("play_policies_none", _play(RULES2, None, 2), TypeError, "None"),
    Case("play_policies_text", _play(RULES2, "random", 2), TypeError, "'random'"),
    Case("play_progress_word", _play(RULES2, [RANDOM] * 2, 2, progress="yes"), TypeError, "'yes'"),
    Case("play_progress_number", _play(RULES2, [RANDOM] * 2, 2, progress=1), TypeError, "got 1"),
    Case(
        "play_action_past_int64",
        _play(RULES2, [_HugeActions(), RANDOM], 2),
        PolicyError,
        "18446744073709551615",
    ),
    # -- evaluate_vs ----------------------------------------------------------------------
    Case("vs_zero_games", _vs(RULES2, RANDOM, "random", 0), ValueError, "num_games: 0"),
    Case("vs_rules_name", _vs("official", RANDOM, "random", 2), TypeError, "'official'"),
    Case("vs_factory_number", _vs(RULES2, RANDOM, 5, 2), TypeError, "got 5"),
    Case(
        "vs_factory_returns_none",
        _vs(RULES2, RANDOM, lambda seed: None, 2),
        TypeError,
        "got a NoneType: None",
    ),
    Case(
        "vs_decisions_nan",
        _vs(RULES2, RANDOM, "random", 2, decisions_per_hand=float("nan")),
        ValueError,
        "decisions_per_hand: nan",
    ),
    Case(
        "vs_decisions_zero",
        _vs(RULES2, RANDOM, "random", 2, decisions_per_hand=0),
        ValueError,
        "decisions_per_hand: 0",
    ),
    Case("vs_progress_word", _vs(RULES2, RANDOM, "random", 2, progress="no"), TypeError, "'no'"),
    # -- a heuristic bot's act --------------------------------------------------------------
    Case(
        "bot_observations_too_narrow",
        lambda: make_agent("mixbot").act(np.zeros((2, 10), np.float32), np.ones((2, 80), bool)),
        ValueError,
        "(2, 10)",
    ),
    Case(
        "bot_masks_none",
        lambda: make_agent("greedy_points").act(np.zeros((2, OBS_DIM), np.float32), None),  # type: ignore[arg-type]
        ValueError,
        "got None",
    ),
    Case(
        "bot_masks_other_batch",
        lambda: make_agent("card_ranking").act(
            np.zeros((3, OBS_DIM), np.float32), np.ones((2, 80), bool)
        ),
        ValueError,
        "(2, 80)",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gets_one_clear_error(case: Case) -> None:
    with pytest.raises(case.error) as info:
        case.run()
    message = str(info.value)
    assert case.names in message, message
    assert "\n" not in message.strip(), message


def test_play_games_of_no_hands_is_empty_and_a_finished_row_gets_any_action() -> None:
    """Documented, not refused: zero hands give empty results, and a row without a legal
    action (a finished game) may get any action (the Policy protocol)."""
    assert play_games(RULES2, [RANDOM] * 2, 0, progress=False).num_games == 0
    chosen = make_agent("random", 0).act(
        np.zeros((1, OBS_DIM), np.float32), np.zeros((1, 80), bool)
    )
    assert chosen.shape == (1,)
