"""Lookup tables computed once, so that matching and masking are single gathers."""

from __future__ import annotations

import functools

import numpy as np

from uno_env import cards as C
from uno_env.rules import Rules

__all__ = [
    "FACE_MATCH",
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


@functools.lru_cache(maxsize=64)
def stack_responses(rules: Rules) -> np.ndarray:
    """Faces that answer a draw penalty in phase STACK, by the rules in force.

    Returns:
        Boolean table (2, 5, 54): [0 facing a Draw Two / 1 facing a Wild Draw Four,
        current colour, face].
    """
    table = np.zeros((2, C.NUM_COLOURS + 1, C.NUM_FACES), dtype=bool)
    draw_twos = C.FACE_RANK == C.DRAW_TWO
    for colour in range(C.NUM_COLOURS):
        same_colour = colour == C.FACE_COLOUR
        reverse_here = (C.FACE_RANK == C.REVERSE) & same_colour & rules.reverse_deflects
        # Facing a Draw Two.
        table[0, colour] = (draw_twos & rules.stack_draw_two) | reverse_here
        table[0, colour, C.WILD_DRAW_FOUR] = rules.stack_draw_four_on_two
        # Facing a Wild Draw Four.
        table[1, colour] = (draw_twos & same_colour & rules.stack_draw_two_on_four) | reverse_here
        table[1, colour, C.WILD_DRAW_FOUR] = rules.stack_draw_four
    return table
