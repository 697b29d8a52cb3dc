"""The search's inference (``unolab.agents.inference.sample_deals``) and its benchmark
(``unolab.benchmarks.inference``): the scores are right, and the public facts inform."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import unolab.benchmarks.inference as bench
from uno_env import load_rules
from uno_env.core.state import PLAY
from unolab.agents.inference import sample_deals
from unolab.agents.pimc import PimcAgent
from unolab.benchmarks.search import decision_states

RULES4 = load_rules("official", num_players=4)


def test_sample_deals_is_what_the_search_samples() -> None:
    """The agent's decisions are those of its deals: the same keys, the same deals."""
    state = decision_states(RULES4, 6, seed=3)
    seats = state.current.astype(np.int64)
    keys = np.random.default_rng(0).integers(0, 2**63, size=(6, 16), dtype=np.uint64)
    dets, weights = sample_deals(RULES4, state, seats, keys)
    again, weights_again = sample_deals(RULES4, state, seats, keys)
    assert np.array_equal(dets.hands, again.hands) and np.array_equal(weights, weights_again)
    assert weights.shape == (6, 16)
    assert np.allclose(weights.mean(axis=1), 1.0)
    # The observing seat keeps its hand.
    for game, seat in enumerate(seats):
        assert (dets.hands[game * 16 : (game + 1) * 16, seat] == state.hands[game, seat]).all()
    plain, ones = sample_deals(RULES4, state, seats, keys, weigh_choices=False)
    assert np.array_equal(plain.hands, dets.hands) and (ones == 1).all()
    with pytest.raises(ValueError, match=r"lack_facts must be one of .*'everything'"):
        sample_deals(RULES4, state, seats, keys, lack_facts="everything")
    # The agent searches on these deals: its default inference is this one.
    agent = PimcAgent(seed=0, rollouts=4)
    assert (agent.lack_facts, agent.weigh_choices) == ("drawn", True)


def test_a_posterior_that_knows_the_hands_scores_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scoring itself: deals that are the real game score Brier 0; a wrong one does not."""

    def real_game(rules, state, seats, keys, **_):  # type: ignore[no-untyped-def]
        rows = np.repeat(np.arange(state.batch_size), keys.shape[1])
        return state.select(rows), np.ones(keys.shape)

    monkeypatch.setattr(bench, "sample_deals", real_game)
    (score,) = bench.inference_scores(RULES4, "random", 20, 4, seed=1, variants=[("none", False)])
    assert score.brier == 0.0
    assert score.log_loss < 1e-3
    assert all(p == o for p, o, _ in score.reliability)

    def wrong_game(rules, state, seats, keys, **_):  # type: ignore[no-untyped-def]
        deals, weights = real_game(rules, state, seats, keys)
        deals.hands[:] = np.roll(deals.hands, 1, axis=1)  # every seat gets its neighbour's
        return deals, weights

    monkeypatch.setattr(bench, "sample_deals", wrong_game)
    (wrong,) = bench.inference_scores(RULES4, "random", 20, 4, seed=1, variants=[("none", False)])
    assert wrong.brier > 0.05


def test_the_public_facts_inform_and_the_shares_are_calibrated() -> None:
    """Against random players the facts from the draws lower the error of hand sizes alone."""
    scores = {s.label: s for s in bench.inference_scores(RULES4, "random", 300, 64, seed=2)}
    assert set(scores) == {
        "none",
        "drawn",
        "drawn+weights",
        "drawn_wild",
        "drawn_wild+weights",
    }
    for score in scores.values():
        assert sum(n for _, _, n in score.reliability) == score.predictions > 10_000
        assert 0 < score.brier < 0.25 and score.log_loss > 0
    # Calibrated where most predictions lie (below 0.2, ~85% of them). Higher up the shares
    # run 3-7 points above the truth (docs/search.md: earlier choices are not weighed).
    for predicted, observed, n in scores["drawn+weights"].reliability:
        if predicted < 0.2 and n > 2000:
            assert abs(predicted - observed) < 0.02, (predicted, observed)
    assert scores["drawn"].brier < scores["none"].brier
    # "No wild" holds for the random player, so it informs further.
    assert scores["drawn_wild"].brier < scores["drawn"].brier


def test_the_command_line_prints_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "inference.json"
    code = bench.main(["--players", "2", "--games", "10", "--deals", "8", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "drawn+weights" in printed and "Brier" in printed
    data = json.loads(out.read_text())
    assert data["players"] == 2 and len(data["scores"]) == len(bench.VARIANTS)
    with pytest.raises(SystemExit):
        bench.main(["--deals", "0"])
    with pytest.raises(SystemExit):
        bench.main(["--bot", "nobody"])


def test_positions_are_live_and_about_to_play() -> None:
    seen = 0
    for state in bench.positions(RULES4, "random", 10, seed=4):
        assert state.live.all() and (state.phase == PLAY).all()
        seen += state.batch_size
    assert seen > 0
