"""The public history of a hand: what every seat at the table has seen each seat do.

A careful player tracks more than the table shows at one moment. These facts come only
from public events, are kept per absolute seat in the state and start afresh with every
hand (``uno_env.core.setup``):

* ``shown_lacks`` (B,N,4) bool: the colours a seat has shown it lacks. A seat that draws
  on its own turn (the ``draw`` action in a normal turn, whether it then plays or keeps the
  card) while a colour is to be matched shows it held no card it wanted to play of that
  colour; the fact holds until the seat next plays a card of that colour. In a seven-zero
  exchange the facts travel with the hands they describe.
* ``lack_marks`` (B,N,18) int32: sharper facts of the same events, for determinization. A
  seat that draws on its own turn because it cannot play holds no card of the colour to be
  matched, none of the top card's rank, and no wild; and the card it drew and kept does not
  play either. Those facts describe the cards it held at that moment, not the ones it draws
  later. ``lack_marks[g, k, f]`` is the seat's ``seat_draws`` count when fact ``f`` (colour c
  < 4, rank ``cards.LACK_RANK0 + r``, ``cards.LACK_WILD``) was last shown (:data:`NO_MARK`:
  never this hand): of the seat's hand, at most ``seat_draws - lack_marks`` cards (the ones
  drawn since) can break the fact. A later play of the colour does not end the fact (the
  card played was one drawn since); a later draw widens the allowance instead. A playable
  card drawn and kept (``after_draw``) is drawn after the mark. A Wild Draw Four found legal
  by a challenge shows the same of the colour that was to be matched (its player held none).
  In a seven-zero exchange the marks travel with the hands, re-based to the receiver's draw
  count.
* ``choice_colour``, ``choice_top`` (B,N) int8 and ``choice_draws`` (B,N) int32: the
  context of the seat's last play in a normal turn, a choice among the cards that played:
  the colour to be matched, the top card, and the seat's ``seat_draws`` count then
  (:data:`NO_CHOICE`: none this hand, or its hand has moved in a seven-zero exchange since).
  While the seat has drawn nothing since, its hand then was its hand now plus the card it
  played, so a search can weigh a sampled hand by how likely it made that choice.
* ``last_played`` (B,N) int8: the face each seat played last (-1: none yet this hand).
* ``last_named`` (B,N) int8: the colour each seat last named with a wild (-1: none).
* ``seat_draws`` (B,N) int32: the cards each seat has drawn this hand, penalties included
  (counted by :func:`uno_env.core.piles.draw_cards`; per-seat draw streams number their
  draws by it).
* ``shown_holds`` (B,N,4) bool: the colours a seat has shown it holds: a challenge found its
  Wild Draw Four a bluff against that colour. The card stays in its hand until it plays a
  card of the colour (it may be that one); a seven-zero exchange clears the facts of the
  hands that move.
* ``pile_faces`` (B,54) int8: the faces the hand's last reshuffle put into the draw pile
  (written by the reshuffle in :mod:`uno_env.core.piles`; all 0 before the first): public
  discards, so the pile holds nothing else until the next reshuffle.

The observation (version 4) encodes them relative to the observer, and
:func:`uno_env.core.determinize` deals no card of a colour to a seat that has shown it
lacks it. Drawing is not proof: under ``voluntary_draw`` a seat may draw while holding the
colour, and the card it draws may be of that colour. The facts are evidence a player reads,
not certainties; determinization treats them as constraints (see its module).
"""

from __future__ import annotations

from uno_env import cards as C
from uno_env.core.params import StateArrays
from uno_env.jit import jit_inline

__all__ = [
    "NO_CHOICE",
    "NO_COLOUR_NAMED",
    "NO_MARK",
    "record_choice",
    "record_draw_on_turn",
    "record_guilty",
    "record_innocent",
    "record_named_colour",
    "record_play",
    "record_stuck",
    "verdict_colour",
]

NO_COLOUR_NAMED = -1
"""``last_named`` of a seat that has named no colour this hand."""
NO_CHOICE = -1
"""``choice_draws`` of a seat whose last choice of a card is not known."""
NO_MARK = -(1 << 30)
"""``lack_marks`` of a fact a seat has not shown this hand (allows any number of cards)."""


@jit_inline
def record_play(s: StateArrays, g: int, seat: int, act: int) -> None:
    """``seat`` plays the card of action ``act``: its last card, its named colour."""
    face = int(C.ACTION_FACE[act])
    s.last_played[g, seat] = face
    if face < C.NUM_COLOURED_FACES:
        s.shown_lacks[g, seat, int(C.FACE_COLOUR[face])] = False
        # The card it was shown to hold may be this one.
        s.shown_holds[g, seat, int(C.FACE_COLOUR[face])] = False
    else:
        s.last_named[g, seat] = C.ACTION_COLOUR[act]


@jit_inline
def record_named_colour(s: StateArrays, g: int, seat: int, colour: int) -> None:
    """``seat`` names the colour of a Wild starter."""
    s.last_named[g, seat] = colour


@jit_inline
def record_draw_on_turn(s: StateArrays, g: int, seat: int) -> None:
    """``seat`` draws instead of playing: it shows it lacks the colour to be matched."""
    colour = int(s.colour[g])
    if 0 <= colour < C.NUM_COLOURS:
        s.shown_lacks[g, seat, colour] = True


@jit_inline
def record_stuck(
    s: StateArrays, g: int, seat: int, colour: int, top: int, kept_playable: bool
) -> None:
    """``seat`` drew on its turn with ``colour`` to match on ``top``, and its draw is done.

    The cards it held lack the colour, the top card's rank and wilds; so do the cards it drew
    and kept, except a playable one it is still deciding about (``kept_playable``).
    """
    mark = s.seat_draws[g, seat] - (1 if kept_playable else 0)
    if 0 <= colour < C.NUM_COLOURS:
        s.lack_marks[g, seat, colour] = mark
    if 0 <= top < C.NUM_COLOURED_FACES:
        s.lack_marks[g, seat, C.LACK_RANK0 + int(C.FACE_RANK[top])] = mark
    s.lack_marks[g, seat, C.LACK_WILD] = mark


@jit_inline
def verdict_colour(s: StateArrays, g: int, seat: int) -> int:
    """The colour a Wild Draw Four of ``seat`` is judged against, as the table knows it, or -1.

    It is the colour of the seat's last choice when that choice was the Wild Draw Four (played
    in a normal turn, no card drawn since); one played as a drawn card or stacked left no
    choice context.
    """
    colour = int(s.choice_colour[g, seat])
    chosen = s.choice_draws[g, seat] == s.seat_draws[g, seat]
    if chosen and s.last_played[g, seat] == C.WILD_DRAW_FOUR and 0 <= colour < C.NUM_COLOURS:
        return colour
    return -1


@jit_inline
def record_innocent(s: StateArrays, g: int, seat: int) -> None:
    """A challenge finds ``seat``'s Wild Draw Four legal: it held no card of the colour then.

    The table learns it from who draws (see :func:`verdict_colour` for the colour).
    """
    colour = verdict_colour(s, g, seat)
    if colour >= 0:
        s.lack_marks[g, seat, colour] = s.seat_draws[g, seat]


@jit_inline
def record_guilty(s: StateArrays, g: int, seat: int) -> None:
    """A challenge finds ``seat``'s Wild Draw Four a bluff: it holds a card of the colour.

    The card stays in its hand until it plays a card of that colour (:func:`record_play`).
    """
    colour = verdict_colour(s, g, seat)
    if colour >= 0:
        s.shown_holds[g, seat, colour] = True


@jit_inline
def record_choice(s: StateArrays, g: int, seat: int) -> None:
    """``seat`` is about to play a card in a normal turn: keep what it chose among."""
    s.choice_colour[g, seat] = s.colour[g]
    s.choice_top[g, seat] = s.top[g]
    s.choice_draws[g, seat] = s.seat_draws[g, seat]
