"""The plan of a step: what one game's decision leaves for the step to carry out.

A decision (:func:`uno_env.core.step`) is taken in two halves. First the action is applied
(:mod:`uno_env.core.effects`): it changes the state directly where nothing random is
involved, and records in a small int64 ``plan`` array (``Scratch.plan``) who must draw how
many cards, whether the hand ends and how far the turn moves. Then the step carries the
plan out in a fixed order: the draw, then the end of the hand or the passing of the turn.

The slots of the plan and their special values are named here; numba reads these
module-level ints as compile-time constants.
"""

from __future__ import annotations

import numpy as np

from uno_env.jit import jit_inline

__all__ = [
    "AHEAD",
    "DRAW_COUNT",
    "DRAW_SEAT",
    "ENDED",
    "FIRST_OUT",
    "NOBODY",
    "PLAN_SIZE",
    "TURN_STAYS",
    "clear_plan",
    "plan_draw",
]

# The slots of the plan (int64).
DRAW_SEAT = 0
"""The seat that must draw (:data:`NOBODY`: none)."""
DRAW_COUNT = 1
"""How many cards it draws."""
AHEAD = 2
"""How many active seats the turn moves on (0: the same seat again), or :data:`TURN_STAYS`."""
ENDED = 3
"""1 if the hand ends in this step."""
FIRST_OUT = 4
"""1 if the first seat went out in this step (``play_to_last``: it scores at once)."""
PLAN_SIZE = 5
"""Slots of a plan."""

# Special values of the slots.
NOBODY = -1
"""``DRAW_SEAT``: nobody draws."""
TURN_STAYS = -1
"""``AHEAD``: the turn does not pass; the action already chose who acts next and in which
phase (a penalty faced, a window opened, a colour or a swap target to choose)."""


@jit_inline
def clear_plan(plan: np.ndarray) -> None:
    """Reset a plan: nobody draws, the turn does not move, the hand goes on."""
    plan[DRAW_SEAT] = NOBODY
    plan[DRAW_COUNT] = 0
    plan[AHEAD] = TURN_STAYS
    plan[ENDED] = 0
    plan[FIRST_OUT] = 0


@jit_inline
def plan_draw(plan: np.ndarray, seat: int, count: int) -> None:
    """Record that ``seat`` must draw ``count`` cards."""
    plan[DRAW_SEAT] = seat
    plan[DRAW_COUNT] = count
