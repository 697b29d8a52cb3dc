"""Fuzzing the batched core: millions of random steps, every state invariant checked.

Large batches play uniformly random legal actions under player counts 2..10 and several rule
combinations. Finished games (won or truncated) are replaced at once with fresh matches by
:func:`uno_env.core.reset_games` (fresh keys), as an autoresetting environment does. After
every batched step the full :func:`uno_env.testing.check_invariants` runs on the whole batch:
it is vectorised and costs about as much as the step itself, so nothing is sampled or skipped.

A step counts once per live game stepped; the run asserts at least 10**6 of them. Everything is
seeded, so a failure replays exactly: the message names the config, the seed and the step.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

from uno_env import cards as C
from uno_env import core
from uno_env.rules import PRESETS, Rules
from uno_env.sampling import uniform_legal_actions
from uno_env.testing import check_invariants

BATCH = 1024
STEPS_PER_CONFIG = 240
MIN_TOTAL_STEPS = 1_000_000


@dataclass(frozen=True)
class FuzzConfig:
    """One fuzz run: the rules and the seed of the keys and of the random policy."""

    name: str
    rules: Rules
    seed: int


CONFIGS = (
    FuzzConfig("2p official (two-player rules)", Rules(num_players=2), 1),
    FuzzConfig(
        "2p no two-player rules, no challenge, no uno call",
        Rules(num_players=2, two_player_rules=False, wd4_challenge=False, uno_call=False),
        2,
    ),
    # 90 cards dealt: the draw pile runs out at once, reshuffles and empty piles are common.
    FuzzConfig("2p hand 45, penalty 4", Rules(num_players=2, hand_size=45, uno_penalty=4), 3),
    FuzzConfig("3p wd4 anytime", Rules(num_players=3, wd4_anytime=True, wd4_challenge=False), 4),
    FuzzConfig("4p official", Rules(num_players=4), 5),
    FuzzConfig(
        "4p redraw wilds, penalty 0, max_turns 60",
        Rules(num_players=4, starter_redraw_wilds=True, uno_penalty=0, max_turns=60),
        6,
    ),
    FuzzConfig(
        "5p no uno call, target 100", Rules(num_players=5, uno_call=False, target_score=100), 7
    ),
    FuzzConfig("6p no challenge", Rules(num_players=6, wd4_challenge=False), 8),
    FuzzConfig("7p hand 12", Rules(num_players=7, hand_size=12), 9),
    FuzzConfig(
        "8p max_turns 100, penalty 6", Rules(num_players=8, max_turns=100, uno_penalty=6), 10
    ),
    FuzzConfig("9p redraw wilds", Rules(num_players=9, starter_redraw_wilds=True), 11),
    FuzzConfig("10p hand 9 (17-card draw pile)", Rules(num_players=10, hand_size=9), 12),
    FuzzConfig("10p official", Rules(num_players=10), 13),
)


def _fresh_keys(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.integers(0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64, endpoint=True)


def fuzz(config: FuzzConfig, batch: int, steps: int) -> Counter[str]:
    """Play ``steps`` batched random steps, checking every invariant after each one.

    Returns:
        Counts: ``steps`` (live games stepped), ``won``, ``truncated``, ``reshuffles``,
        ``empty_piles`` (a live game with an empty draw pile after a step), ``wd4_challenges``,
        ``catches`` and ``match_over``.

    Raises:
        AssertionError: naming the config, seed and step of the first violation.
    """
    rules = config.rules
    rng = np.random.default_rng(config.seed)
    state = core.init(rules, batch, seed=config.seed)
    stats: Counter[str] = Counter()
    problems = check_invariants(rules, state)
    assert not problems, f"{config.name} (seed {config.seed}) after init: {problems}"
    for t in range(steps):
        live = state.live
        mask = core.legal_action_mask(rules, state)
        actions = uniform_legal_actions(mask, rng)
        new = core.step(rules, state, actions)
        problems = check_invariants(rules, new)
        assert not problems, f"{config.name} (seed {config.seed}) at step {t}:\n" + "\n".join(
            problems
        )
        stats["steps"] += int(live.sum())
        stats["reshuffles"] += int((new.shuffles - state.shuffles).sum())
        stats["empty_piles"] += int((new.live & (new.draw_pos == C.DECK_SIZE)).sum())
        stats["wd4_challenges"] += int((live & (actions == C.CHALLENGE)).sum())
        stats["catches"] += int((live & (actions == C.CATCH)).sum())
        stats["stacks"] += int((new.phase == core.STACK).sum())
        stats["jump_ins"] += int((live & (state.phase == core.JUMP_IN) & (actions < 60)).sum())
        stats["swaps"] += int((live & (actions >= C.SWAP)).sum())
        finished = ~new.live
        stats["won"] += int(new.done.sum())
        stats["truncated"] += int(new.truncated.sum())
        stats["match_over"] += int(new.match_over.sum())
        if finished.any():
            state = core.reset_games(rules, new, finished, _fresh_keys(rng, int(finished.sum())))
            problems = check_invariants(rules, state)
            assert not problems, f"{config.name} (seed {config.seed}) reset at step {t}: {problems}"
        else:
            state = new
    return stats


@pytest.mark.slow
def test_fuzz_invariants_million_steps() -> None:
    total: Counter[str] = Counter()
    for config in CONFIGS:
        stats = fuzz(config, BATCH, STEPS_PER_CONFIG)
        assert stats["steps"] > 0, config.name
        total += stats
    assert total["steps"] >= MIN_TOTAL_STEPS, total
    # The run must have reached the rare branches, or it proves little.
    for what in ("won", "truncated", "reshuffles", "empty_piles", "wd4_challenges", "catches"):
        assert total[what] > 0, f"the fuzz run never saw {what}: {dict(total)}"
    assert total["match_over"] > 0, dict(total)


HOUSE_SWITCHES = (
    "stack_draw_two",
    "stack_draw_four",
    "stack_draw_two_on_four",
    "stack_draw_four_on_two",
    "stack_cumulative",
    "reverse_deflects",
    "jump_in",
    "seven_zero",
    "colours_in_circle",
    "play_to_last",
    "zero_scores_fifty",
    "starter_redraw_wilds",
    "reshuffle_top",
)


def random_house_rules(rng: np.random.Generator) -> Rules:
    """Draw a valid combination of house-rule switches (invalid draws are redrawn)."""
    while True:
        fields: dict[str, object] = {k: bool(rng.random() < 0.4) for k in HOUSE_SWITCHES}
        fields["num_players"] = int(rng.integers(2, 9))
        fields["draw_rule"] = str(rng.choice(["one", "until_playable"]))
        fields["voluntary_draw"] = bool(rng.random() < 0.8)
        wd4 = int(rng.integers(0, 4))
        fields["wd4_challenge"] = wd4 == 0
        fields["wd4_anytime"] = wd4 == 1
        fields["wd4_last_resort"] = wd4 == 2
        fields["scoring"] = str(rng.choice(["winner_takes", "penalty_points"]))
        fields["uno_call"] = bool(rng.random() < 0.7)
        fields["max_turns"] = 500
        if rng.random() < 0.15:
            fields.update(num_players=4, teams=True, play_to_last=False)
        try:
            return Rules.from_dict(fields)
        except ValueError:
            continue


HOUSE_CONFIGS = (
    *(
        FuzzConfig(f"preset {name}", rules, 20 + i)
        for i, (name, rules) in enumerate(sorted(PRESETS.items()))
    ),
    FuzzConfig(
        "4p street with per-seat draw streams",
        PRESETS["street"].replace(seat_draw_streams=True),
        29,
    ),
    *(
        FuzzConfig(
            f"random house rules #{i}", random_house_rules(np.random.default_rng(100 + i)), 30 + i
        )
        for i in range(8)
    ),
)


@pytest.mark.slow
def test_fuzz_house_rules_million_steps() -> None:
    total: Counter[str] = Counter()
    for config in HOUSE_CONFIGS:
        total += fuzz(config, BATCH, STEPS_PER_CONFIG)
    assert total["steps"] >= MIN_TOTAL_STEPS, total
    for what in ("won", "reshuffles", "stacks", "jump_ins", "swaps"):
        assert total[what] > 0, f"the house-rule fuzz run never saw {what}: {dict(total)}"
