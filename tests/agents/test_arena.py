"""Tests of the arena (``unolab.agents.arena``), the Wilson interval and the strength script.

* ``play_games``: reproducible from its seed; with deterministic bots each game's result
  does not depend on the batch size (so shrinking the batch as games end keeps every result
  with its game); results are consistent (winners, rewards, points, truncation); each
  policy is called only on the rows where its seat acts; bad arguments and illegal actions
  are refused.
* ``evaluate_vs``: the candidate's seat is rotated evenly over the table and it plays from
  every seat; opponents by name or factory; reproducible.
* ``wilson_interval``: known values and scipy's implementation; edge cases.
* ``python tools/strength.py``: a tiny run writes the JSON and prints the table.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from strength import main as strength_main

from uno_env import cards as C
from uno_env.core import IllegalActionError
from uno_env.observation import OBS_LAYOUT
from uno_env.outcomes import TableResults
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents import MixBot, RandomBot, make_agent
from unolab.agents.arena import evaluate_vs, play_games, wilson_interval


def _same(a: TableResults, b: TableResults) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("winners", "turns", "truncated", "rewards", "points")
    )


class SpyPolicy:
    """Wraps a policy and records the relative seat count and batch sizes it is given."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = f"spy({inner.name})"
        self.calls: list[int] = []
        self.resets = 0
        self.seen_hands: list[npt.NDArray[np.float32]] = []

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        self.calls.append(observations.shape[0])
        assert masks.any(axis=1).all(), "only live games are passed to a policy"
        self.seen_hands.append(observations[:, OBS_LAYOUT["hand"]].sum(axis=1))
        return self.inner.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        self.resets += 1
        self.inner.reset(games)


class AlwaysDraw:
    """Breaks the rules: always answers ``draw``."""

    name = "always_draw"

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        return np.full(observations.shape[0], C.DRAW, dtype=np.int64)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


# ----------------------------------------------------------------------------------------
# play_games
# ----------------------------------------------------------------------------------------


def test_same_seed_same_results() -> None:
    rules = Rules(num_players=3)

    def run(seed: int) -> TableResults:
        bots = [make_agent("random", 1), make_agent("random", 2), make_agent("mixbot")]
        return play_games(rules, bots, 300, seed=seed, batch_size=128, progress=False)

    first = run(5)
    assert _same(first, run(5))
    other = run(6)
    assert not np.array_equal(first.winners, other.winners)


def test_results_do_not_depend_on_batch_size() -> None:
    """Deterministic bots: game i depends only on its key, whatever the batching."""
    rules = Rules(num_players=4)
    bots = [make_agent(n) for n in ("mixbot", "card_ranking", "greedy_points", "mixbot")]
    whole = play_games(rules, bots, 120, seed=3, batch_size=120, progress=False)
    part = play_games(rules, bots, 120, seed=3, batch_size=25, progress=False)
    assert _same(whole, part)
    # ... and the first games of a longer run are the same games.
    longer = play_games(rules, bots, 200, seed=3, batch_size=200, progress=False)
    np.testing.assert_array_equal(longer.winners[:120], whole.winners)


def test_results_are_consistent() -> None:
    rules = Rules(num_players=4)
    bots = [make_agent("random", s) for s in range(4)]
    res = play_games(rules, bots, 500, seed=1, batch_size=100, progress=False)
    assert res.num_games == 500 and res.num_players == 4
    assert not res.truncated.any()
    assert ((res.winners >= 0) & (res.winners < 4)).all()
    assert (res.turns > 0).all()
    np.testing.assert_allclose(res.rewards.sum(axis=1), 0.0, atol=1e-5)
    assert (res.rewards[np.arange(500), res.winners] == 1.0).all()
    # Only the winner scores, and it scores something (the others hold cards).
    assert (res.points.argmax(axis=1) == res.winners).all()
    assert (res.points.sum(axis=1) == res.points.max(axis=1)).all()
    assert res.wins().sum() == 500
    # Seats are symmetric up to the random dealer: every seat wins sometimes.
    assert (res.wins() > 60).all()


def test_truncated_hands_have_no_winner() -> None:
    rules = Rules(num_players=2, max_turns=40)
    res = play_games(rules, [make_agent("random", 1)] * 2, 100, seed=2, progress=False)
    assert 10 < res.truncated.sum() < 90
    assert (res.winners[res.truncated] == -1).all()
    assert (res.rewards[res.truncated] == 0).all()
    assert (res.points[res.truncated] == 0).all()
    assert (res.turns[res.truncated] == 40).all()
    assert (res.winners[~res.truncated] >= 0).all()


def test_each_policy_acts_only_for_its_seats() -> None:
    rules = Rules(num_players=3)
    spies = [SpyPolicy(make_agent("random", s)) for s in range(3)]
    res = play_games(rules, spies, 90, seed=4, batch_size=30, progress=False)
    calls = [sum(spy.calls) for spy in spies]
    # Every decision of every game was taken by exactly one policy.
    assert sum(calls) == int(res.turns.sum())
    assert all(c > 0 for c in calls)
    assert all(spy.resets == 3 for spy in spies)  # once per batch


def test_one_policy_in_several_seats_is_called_once_per_step() -> None:
    rules = Rules(num_players=4)
    spy = SpyPolicy(make_agent("mixbot"))
    res = play_games(rules, [spy] * 4, 40, seed=5, batch_size=40, progress=False)
    assert sum(spy.calls) == int(res.turns.sum())
    assert len(spy.calls) <= int(res.turns.max())


def test_bad_arguments_and_illegal_actions() -> None:
    rules = Rules(num_players=2)
    bot = make_agent("random", 0)
    with pytest.raises(ValueError, match="one policy per seat"):
        play_games(rules, [bot], 10, progress=False)
    with pytest.raises(ValueError, match="num_games"):
        play_games(rules, [bot, bot], -1, progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        play_games(rules, [bot, bot], 10, batch_size=0, progress=False)
    assert play_games(rules, [bot, bot], 0, progress=False).num_games == 0
    with pytest.raises(IllegalActionError, match="always_draw"):
        play_games(rules, [bot, AlwaysDraw()], 20, seed=1, progress=False)


# ----------------------------------------------------------------------------------------
# evaluate_vs
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("games", "expected"), [(8, (2, 2, 2, 2)), (10, (3, 3, 2, 2))])
def test_seat_rotation_is_balanced(games: int, expected: tuple[int, ...]) -> None:
    result = evaluate_vs(Rules(num_players=4), MixBot(), "random", games, seed=1, progress=False)
    assert result.seat_games == expected
    assert result.games == games == sum(result.seat_games)
    assert result.wins == sum(result.seat_wins)


def test_candidate_plays_from_every_seat() -> None:
    # random_any loses nearly every hand, so mixbot's wins come from the seat it sits in.
    result = evaluate_vs(Rules(num_players=3), MixBot(), "random_any", 300, seed=2, progress=False)
    assert result.seat_games == (100, 100, 100)
    assert all(w > 80 for w in result.seat_wins)
    assert result.win_rate > 0.9
    assert result.fair_share == pytest.approx(1 / 3)
    assert result.opponent == "random_any" and result.candidate == "mixbot"


def test_evaluate_vs_with_a_factory_is_reproducible() -> None:
    def factory(seed: int) -> Policy:
        return RandomBot(seed)

    rules = Rules(num_players=2)
    a = evaluate_vs(rules, RandomBot(9), factory, 400, seed=3, progress=False)
    b = evaluate_vs(rules, RandomBot(9), factory, 400, seed=3, progress=False)
    assert a == b
    assert a.opponent == "random"
    assert (a.ci_low, a.ci_high) == wilson_interval(a.wins, 400)
    assert a.ci_low < a.win_rate < a.ci_high
    c = evaluate_vs(rules, RandomBot(9), factory, 400, seed=4, progress=False)
    assert c.seat_wins != a.seat_wins


def test_evaluate_vs_rejects_unknown_opponents() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nobody': give a bot name"):
        evaluate_vs(Rules(num_players=2), MixBot(), "nobody", 10, progress=False)


# ----------------------------------------------------------------------------------------
# Wilson interval
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (50, 100, 0.4038, 0.5962),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 20, 0.0089, 0.2361),
        (6880, 10000, 0.6789, 0.6970),
    ],
)
def test_wilson_known_values(successes: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(successes, n)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_matches_scipy() -> None:
    from scipy import stats  # a dev dependency

    for successes, n in [(3, 7), (81, 263), (999, 1000), (5000, 10000), (1, 2)]:
        ci = stats.binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson_interval(successes, n, z=1.959963984540054) == pytest.approx(
            (ci.low, ci.high), abs=1e-12
        )


def test_wilson_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    wide, narrow = wilson_interval(30, 100, z=2.58), wilson_interval(30, 100, z=1.0)
    assert wide[0] < narrow[0] < 0.3 < narrow[1] < wide[1]
    for bad in [(-1, 10), (11, 10), (0, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, z=0)


# ----------------------------------------------------------------------------------------
# The strength script
# ----------------------------------------------------------------------------------------


def test_strength_script_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "strength.json"
    code = strength_main(
        ["--games", "60", "--players", "2", "3", "--bots", "random", "mixbot", "--out", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["games_per_pairing"] == 60 and report["opponent"] == "random"
    rows = [(r["num_players"], r["candidate"], r["games"]) for r in report["results"]]
    assert rows == [(2, "random", 60), (2, "mixbot", 60), (3, "random", 60), (3, "mixbot", 60)]
    table = capsys.readouterr().out
    assert "| 3 | mixbot | random | 60 |" in table


def test_the_optional_capabilities_are_protocols() -> None:
    """Search agents and learned agents are recognised by what they can do, typed."""
    from uno_env.policy import (
        ActionProbabilities,
        RandomBot,
        StateSearcher,
        searches_from_state,
    )
    from unolab.agents import load_policy, make_agent

    search, learned, bot = make_agent("pimc"), load_policy("ppo_official_2p"), RandomBot()
    assert isinstance(search, StateSearcher) and searches_from_state(search)
    assert not searches_from_state(learned) and not searches_from_state(bot)
    assert isinstance(learned, ActionProbabilities)
    assert not isinstance(bot, ActionProbabilities) and not isinstance(search, ActionProbabilities)

    class Claims:  # says it needs the state, but cannot act from it
        name = "claims"
        needs_state = True

        def act(self, observations: object, masks: object) -> None: ...

    assert not searches_from_state(Claims())
