"""Per-seat draw streams: the game's distribution is unchanged, draws follow the seat."""

from __future__ import annotations

import numpy as np
from scipy import stats

from uno_env import UnoGame, core
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions


def _lengths(rules: Rules, seed: int, n: int = 4000) -> np.ndarray:
    state = core.init(rules, n, seed=seed)
    rng = np.random.default_rng(seed)
    while state.live.any():
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    return state.turn.astype(np.int64)


def test_distribution_of_games_is_unchanged() -> None:
    plain = Rules(num_players=3)
    streams = plain.replace(seat_draw_streams=True)
    assert stats.ks_2samp(_lengths(plain, 1), _lengths(streams, 2)).pvalue > 0.001


def test_a_seats_draws_do_not_depend_on_other_seats_draws() -> None:
    """Seat 1's first draw is the same card whether or not seat 0 drew before it."""
    rules = Rules(num_players=2, seat_draw_streams=True, uno_call=False)
    deck = [
        "R1",
        "G1",
        "R2",
        "G2",
        "R3",
        "G3",
        "R4",
        "G4",
        "R5",
        "G5",
        "R6",
        "G6",
        "R7",
        "G7",
        "R9",
    ]

    a = UnoGame(rules, seed=5, dealer=0, deck=deck)
    initial = a.state.hands[0, 1].astype(int).copy()
    a.step("draw")  # seat 1 draws at once
    drawn_a = a.state.hands[0, 1].astype(int) - initial

    b = UnoGame(rules, seed=5, dealer=0, deck=deck)
    b.step("R1")  # seat 1 plays, then seat 0 draws (and keeps), then seat 1 draws
    b.step("draw")
    if b.phase == "after_draw":
        b.step("keep")
    assert b.current_seat == 1
    b.step("draw")
    drawn_b = b.state.hands[0, 1].astype(int) - initial
    drawn_b[1] += 1  # R1 was played
    assert drawn_a.sum() == 1 and np.array_equal(drawn_a, drawn_b)


def test_cards_are_conserved_with_streams() -> None:
    rules = Rules(num_players=5, seat_draw_streams=True, hand_size=12)
    state = core.init(rules, 256, seed=9)
    rng = np.random.default_rng(9)
    for _ in range(200):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
        assert (core.card_totals(state) == 108).all()
    assert state.seat_draws.sum() > 0
