"""Differential test against a peer we did not write: the `rlcard` preset vs RLCard 1.2.0.

Both engines play 20,000 games of random legal play (uniform over each engine's legal
action ids, as RLCard's random agent does). The game-length distributions (steps per game,
every decision counted) must agree under a two-sample Kolmogorov-Smirnov test, and the first
mover's win rates must agree within their 99% confidence intervals.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from uno_env import core
from uno_env.rules import PRESETS
from uno_env.sampling import uniform_legal_actions
from unolab.benchmarks.rlcard import legal_action_ids, make_rlcard_uno

GAMES = 20_000


def _rlcard_games(n_games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Lengths and whether the first mover won, for ``n_games`` random RLCard games."""
    env = make_rlcard_uno(num_players=2, seed=seed)
    rng = np.random.default_rng(seed)
    lengths = np.zeros(n_games, dtype=np.int64)
    first_won = np.zeros(n_games, dtype=bool)
    for i in range(n_games):
        state, player = env.reset()
        first, steps = player, 0
        while not env.is_over():
            legal = legal_action_ids(state)
            state, player = env.step(legal[int(rng.integers(len(legal)))])
            steps += 1
        lengths[i] = steps
        first_won[i] = env.get_payoffs()[first] > 0
    return lengths, first_won


def _our_games(n_games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rules = PRESETS["rlcard"]
    state = core.init(rules, n_games, seed=seed)
    first = state.current.copy()
    rng = np.random.default_rng(seed)
    while state.live.any():
        mask = core.legal_action_mask(rules, state)
        state = core.step(rules, state, uniform_legal_actions(mask, rng))
    assert not state.truncated.any()
    return state.turn.astype(np.int64), state.winner == first


def _ci99(won: np.ndarray) -> tuple[float, float]:
    p, n = float(won.mean()), won.size
    half = 2.5758 * np.sqrt(p * (1 - p) / n)
    return p - half, p + half


@pytest.mark.slow
def test_rlcard_preset_matches_rlcard_statistically() -> None:
    ours_len, ours_first = _our_games(GAMES, seed=11)
    theirs_len, theirs_first = _rlcard_games(GAMES, seed=12)
    ks = stats.ks_2samp(ours_len, theirs_len)
    assert ks.pvalue > 0.01, (
        f"game lengths differ: KS p={ks.pvalue:.4f}; means {ours_len.mean():.2f} (uno-lab) vs "
        f"{theirs_len.mean():.2f} (RLCard), medians {np.median(ours_len)} vs {np.median(theirs_len)}"
    )
    lo_a, hi_a = _ci99(ours_first)
    lo_b, hi_b = _ci99(theirs_first)
    assert lo_a <= hi_b and lo_b <= hi_a, (
        f"first-mover win rates differ: uno-lab {ours_first.mean():.4f} [{lo_a:.4f}, {hi_a:.4f}] "
        f"vs RLCard {theirs_first.mean():.4f} [{lo_b:.4f}, {hi_b:.4f}]"
    )


def test_ks_detects_a_rule_change() -> None:
    """The statistical test has teeth: the official rules give clearly different lengths."""
    rules = PRESETS["rlcard"].replace(voluntary_draw=True)
    state = core.init(rules, 3000, seed=3)
    rng = np.random.default_rng(3)
    while state.live.any():
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    ours_len, _ = _our_games(3000, seed=4)
    assert stats.ks_2samp(ours_len, state.turn).pvalue < 0.01
