"""States reached by random legal play, for the text layer's tests."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from uno_env import core
from uno_env.core import UnoState
from uno_env.rules import Rules, load_rules
from uno_env.sampling import uniform_legal_actions

RULE_SETS: dict[str, Rules] = {
    "official": load_rules("official"),
    "official_4": load_rules("official", num_players=4),
    "street_3": load_rules("street", num_players=3),
    "seven_zero_4": load_rules("seven_zero", num_players=4),
    "rlcard": load_rules("rlcard"),
    "house_3": load_rules(
        "official",
        num_players=3,
        stack_draw_two=True,
        stack_draw_two_on_four=True,
        reverse_deflects=True,
        jump_in=True,
        uno_penalty=4,
        play_to_last=True,
    ),
}
"""Presets and house-rule mixes at several table sizes: every decision phase occurs."""


def decisions(rules: Rules, seed: int, games: int = 32, steps: int = 400) -> Iterator[UnoState]:
    """One-game states (B = 1) at live decisions of random legal play, finished hands redealt."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    for step in range(steps):
        over = np.flatnonzero(~state.live)
        if over.size:
            keys = np.arange(over.size, dtype=np.uint64) + np.uint64(seed * 100_003 + step * 97)
            state = core.reset_games(rules, state, over, keys)
        for g in range(games):
            yield state.select(np.array([g]))
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
