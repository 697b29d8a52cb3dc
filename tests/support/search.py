"""Positions for the search agents' tests: live decisions, and their information-set twins."""

from __future__ import annotations

import numpy as np

from uno_env import core
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions

__all__ = ["decision_states", "hidden_twin"]


def decision_states(rules: Rules, games: int, seed: int, turns: int = 12) -> core.UnoState:
    """Live games after ``turns`` random-legal rounds (finished ones dropped)."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    for _ in range(turns):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    return state.select(np.flatnonzero(state.live))


def hidden_twin(state: core.UnoState) -> core.UnoState:
    """A 2-player state of the same information set for the seat to act: another hidden deal.

    In each game the opponent's first card and the draw pile's top are swapped, the pile
    reversed and the key changed; everything the acting seat sees stays as it was.
    """
    twin = state.copy()
    for g in range(twin.batch_size):
        other = 1 - int(twin.current[g])
        held = np.flatnonzero(twin.hands[g, other])
        pos = int(twin.draw_pos[g])
        face, top = int(held[0]), int(twin.deck[g, pos])
        twin.hands[g, other, face] -= 1
        twin.hands[g, other, top] += 1
        twin.deck[g, pos] = face
        twin.deck[g, pos:] = twin.deck[g, pos:][::-1].copy()
        twin.key[g] ^= np.uint64(0xABCDEF)
    return twin
