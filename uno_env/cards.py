"""Cards, actions and their canonical text notation.

Faces: ``c*13 + r`` for colour ``c`` (R, Y, G, B) and rank ``r`` (0-9, 10 Skip, 11 Reverse,
12 Draw Two); 52 is Wild, 53 Wild Draw Four. Actions are the 80 ids documented in
``docs/engine.md``. Names: ``R0``..``B9``, ``RS``, ``RR``, ``R+2``, ``W``, ``W+4``; wild plays
name their colour (``W:G``, ``W+4:B``); other actions are ``draw``, ``keep``, ``challenge``,
``accept``, ``uno``, ``catch``, ``pass``, ``colour:R`` and ``swap:k``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from uno_env.files import shown

COLOURS = "RYGB"
NUM_COLOURS = 4
NUM_RANKS = 13
RANK_NAMES = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2")
SKIP, REVERSE, DRAW_TWO = 10, 11, 12
NUM_COLOURED_FACES = NUM_COLOURS * NUM_RANKS  # 52
WILD = 52
WILD_DRAW_FOUR = 53
NUM_FACES = 54
DECK_SIZE = 108
NO_COLOUR = 4  # colour of a Wild starter before it is named

# Lack facts (``UnoState.lack_marks``): what a seat that draws when it cannot play shows it
# lacks. Fact c < 4: colour c; 4 + r: rank r (any colour); the last: wild cards.
LACK_RANK0 = NUM_COLOURS
LACK_WILD = NUM_COLOURS + NUM_RANKS
NUM_LACK_FACTS = LACK_WILD + 1  # 18

# Actions.
PLAY_WILD = 52  # 52..55: W naming colour c
PLAY_WILD_DRAW_FOUR = 56  # 56..59: W+4 naming colour c
DRAW = 60
KEEP = 61
CHALLENGE = 62
ACCEPT = 63
UNO = 64
CATCH = 65
PASS = 66
NAME_COLOUR = 67  # 67..70: name the Wild starter's colour
SWAP = 71  # 71..79: swap hands with the seat k = 1..9 places ahead
NUM_PLAY_ACTIONS = 60
NUM_ACTIONS = 80
MAX_PLAYERS = 10

FACE_COLOUR: npt.NDArray[np.int8] = np.array(
    [f // NUM_RANKS for f in range(NUM_COLOURED_FACES)] + [NO_COLOUR, NO_COLOUR], dtype=np.int8
)
"""Colour of each face; wilds have ``NO_COLOUR``."""
FACE_RANK: npt.NDArray[np.int8] = np.array(
    [f % NUM_RANKS for f in range(NUM_COLOURED_FACES)] + [-1, -2], dtype=np.int8
)
"""Rank of each face; Wild is -1 and Wild Draw Four -2 so that no two wilds 'match by rank'."""
FACE_POINTS: npt.NDArray[np.int32] = np.array(
    [r if r < 10 else 20 for r in FACE_RANK[:NUM_COLOURED_FACES]] + [50, 50], dtype=np.int32
)
"""Points a face is worth when left in a hand."""
FACE_NAMES: tuple[str, ...] = tuple(
    [COLOURS[f // NUM_RANKS] + RANK_NAMES[f % NUM_RANKS] for f in range(NUM_COLOURED_FACES)]
    + ["W", "W+4"]
)

ACTION_FACE: npt.NDArray[np.int8] = np.array(
    list(range(NUM_COLOURED_FACES)) + [WILD] * 4 + [WILD_DRAW_FOUR] * 4 + [-1] * 20, dtype=np.int8
)
"""Face played by each action, -1 for non-play actions."""
ACTION_COLOUR: npt.NDArray[np.int8] = np.array(
    [f // NUM_RANKS for f in range(NUM_COLOURED_FACES)]
    + [0, 1, 2, 3, 0, 1, 2, 3]
    + [-1] * 7
    + [0, 1, 2, 3]
    + [-1] * 9,
    dtype=np.int8,
)
"""Colour that each play (or colour-naming) action makes current, -1 otherwise."""

ACTION_NAMES: tuple[str, ...] = (
    FACE_NAMES[:NUM_COLOURED_FACES]
    + tuple(f"W:{c}" for c in COLOURS)
    + tuple(f"W+4:{c}" for c in COLOURS)
    + ("draw", "keep", "challenge", "accept", "uno", "catch", "pass")
    + tuple(f"colour:{c}" for c in COLOURS)
    + tuple(f"swap:{k}" for k in range(1, MAX_PLAYERS))
)
assert len(ACTION_NAMES) == NUM_ACTIONS

_FACE_IDS = {name: i for i, name in enumerate(FACE_NAMES)}
_ACTION_IDS = {name: i for i, name in enumerate(ACTION_NAMES)}


def _canonical_deck() -> npt.NDArray[np.int8]:
    deck: list[int] = []
    for c in range(NUM_COLOURS):
        deck.append(c * NUM_RANKS)
        for r in range(1, NUM_RANKS):
            deck += [c * NUM_RANKS + r] * 2
    deck += [WILD] * 4 + [WILD_DRAW_FOUR] * 4
    return np.array(deck, dtype=np.int8)


CANONICAL_DECK: npt.NDArray[np.int8] = _canonical_deck()
"""The 108 cards in a fixed order (colour by colour, then the wilds)."""
FACE_COUNTS: npt.NDArray[np.int16] = np.bincount(CANONICAL_DECK, minlength=NUM_FACES).astype(
    np.int16
)
"""How many copies of each face the deck holds."""


def _is_id(value: object, count: int) -> bool:
    """Whether ``value`` is an id in ``0..count - 1``: an integer, Python's or NumPy's, not a
    bool (``True`` is an int to Python, never a card) nor a float."""
    return bool(
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and 0 <= value < count
    )


def _name_of(value: int, names: tuple[str, ...], what: str) -> str:
    """The notation ``names[value]``; a ``ValueError`` naming ``what`` for any other value."""
    if not _is_id(value, len(names)):
        raise ValueError(f"{what} must be an integer in 0..{len(names) - 1}, got {shown(value)}")
    return names[int(value)]


def card_name(face: int) -> str:
    """Return the notation of a card face, e.g. ``G7``, ``RS``, ``W+4``.

    Raises:
        ValueError: naming ``face`` as given, if it is no integer in ``0..53``.
    """
    return _name_of(face, FACE_NAMES, "card face id")


def parse_card(name: str) -> int:
    """Parse a card name (case-insensitive) into its face id.

    Raises:
        ValueError: naming the bad text and the valid forms.
    """
    if not isinstance(name, str):
        raise ValueError(f"card name must be text like 'G7' or 'W+4', got {shown(name)}")
    key = name.strip().upper()
    if key not in _FACE_IDS:
        raise ValueError(
            f"unknown card {name!r}: expected a colour R/Y/G/B followed by 0-9, S, R or +2 "
            "(e.g. 'G7', 'RS', 'B+2'), or 'W' / 'W+4'"
        )
    return _FACE_IDS[key]


def parse_cards(names: Iterable[str]) -> list[int]:
    """Parse a sequence of card names into face ids.

    Raises:
        TypeError: naming ``names`` if it is not a sequence (an iterable) of names.
        ValueError: naming the first name that is no card (as :func:`parse_card`).
    """
    if isinstance(names, (bytes, bytearray)) or not isinstance(names, Iterable):
        raise TypeError(f"names: expected card names such as ['R1', 'WD4'], got {shown(names)}")
    return [parse_card(n) for n in names]


def action_name(action: int) -> str:
    """Return the notation of an action id, e.g. ``G7``, ``W:B``, ``draw``, ``swap:2``.

    Raises:
        ValueError: naming ``action`` as given, if it is no integer in ``0..79``.
    """
    return _name_of(action, ACTION_NAMES, "action id")


def parse_action(name: str) -> int:
    """Parse an action name (case-insensitive) into its id.

    Raises:
        ValueError: naming the bad text and the valid forms.
    """
    if not isinstance(name, str):
        raise ValueError(f"action name must be text like 'G7' or 'W:B', got {shown(name)}")
    text = name.strip()
    low = text.lower()
    if low in _ACTION_IDS:
        return _ACTION_IDS[low]
    if ":" in text:
        head, _, tail = text.partition(":")
        if head.lower() in ("colour", "color"):
            candidate = "colour:" + tail.strip().upper()
        elif head.lower() == "swap":
            candidate = "swap:" + tail.strip()
        else:
            candidate = head.strip().upper() + ":" + tail.strip().upper()
    else:
        candidate = text.upper()
    if candidate in _ACTION_IDS:
        return _ACTION_IDS[candidate]
    raise ValueError(
        f"unknown action {name!r}: expected a card like 'G7' or 'R+2', a wild naming its colour "
        "like 'W:G' or 'W+4:B', or one of draw, keep, challenge, accept, uno, catch, pass, "
        "colour:R, swap:1"
    )


def action_names(actions: Sequence[int] | npt.NDArray[np.integer]) -> list[str]:
    """Return the names of several action ids.

    Raises:
        ValueError: naming ``actions`` as given, if it is not a flat sequence of action ids.
    """
    if isinstance(actions, (str, bytes)) or np.ndim(actions) != 1:
        raise ValueError(f"action ids must be a flat sequence of integers, got {shown(actions)}")
    return [action_name(a) for a in actions]
