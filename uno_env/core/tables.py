"""Lookup tables computed once, so that matching and masking are single gathers."""

from __future__ import annotations

import functools

import numpy as np

from uno_env import cards as C
from uno_env.rules import Rules

__all__ = [
    "FACE_MATCH",
    "FACING_DRAW_FOUR",
    "FACING_DRAW_TWO",
    "PLAYABLE",
    "SORTED_DECK",
    "stack_responses",
]


def _playable_table() -> np.ndarray:
    table = np.zeros((C.NUM_FACES, C.NUM_COLOURS + 1, C.NUM_COLOURED_FACES), dtype=bool)
    face_colour = C.FACE_COLOUR[: C.NUM_COLOURED_FACES]
    face_rank = C.FACE_RANK[: C.NUM_COLOURED_FACES]
    for top in range(C.NUM_FACES):
        for colour in range(C.NUM_COLOURS):  # colour 4 (unnamed) matches nothing
            same_rank = face_rank == C.FACE_RANK[top] if top < C.NUM_COLOURED_FACES else False
            table[top, colour] = (face_colour == colour) | same_rank
    return table


PLAYABLE = _playable_table()
"""PLAYABLE[top, colour, f]: coloured face f matches ``top`` with ``colour`` current."""

FACE_MATCH = np.ones((C.NUM_FACES * (C.NUM_COLOURS + 1), C.NUM_FACES), dtype=bool)
"""FACE_MATCH[top * 5 + colour] marks the faces that may be played on them (wilds always)."""
FACE_MATCH[:, : C.NUM_COLOURED_FACES] = PLAYABLE.reshape(-1, C.NUM_COLOURED_FACES)

SORTED_DECK = np.sort(C.CANONICAL_DECK)

# The rows of the table of :func:`stack_responses`: the card whose penalty is faced.
FACING_DRAW_TWO = 0
FACING_DRAW_FOUR = 1


@functools.lru_cache(maxsize=64)
def stack_responses(rules: Rules) -> np.ndarray:
    """Faces that answer a draw penalty in phase STACK, by the rules in force.

    Returns:
        Boolean table (2, 5, 54): [:data:`FACING_DRAW_TWO` / :data:`FACING_DRAW_FOUR`,
        current colour, face].
    """
    table = np.zeros((2, C.NUM_COLOURS + 1, C.NUM_FACES), dtype=bool)
    draw_twos = C.FACE_RANK == C.DRAW_TWO
    for colour in range(C.NUM_COLOURS):
        same_colour = colour == C.FACE_COLOUR
        reverse_here = (C.FACE_RANK == C.REVERSE) & same_colour & rules.reverse_deflects
        table[FACING_DRAW_TWO, colour] = (draw_twos & rules.stack_draw_two) | reverse_here
        table[FACING_DRAW_TWO, colour, C.WILD_DRAW_FOUR] = rules.stack_draw_four_on_two
        table[FACING_DRAW_FOUR, colour] = (
            draw_twos & same_colour & rules.stack_draw_two_on_four
        ) | reverse_here
        table[FACING_DRAW_FOUR, colour, C.WILD_DRAW_FOUR] = rules.stack_draw_four
    return table
