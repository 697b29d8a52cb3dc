"""What the last step did in each game: the events a table would see.

The step writes them as it applies the rules, so that a narrator, a replay or a log says
what happened without working it out again from two states:

* ``step_drawn`` (B,N) int16: the cards each seat drew in the step (penalties, a catch, a
  challenge, a voluntary draw; both piles empty draw fewer). A fresh deal records the
  starter Draw Two's draw.
* ``step_skipped`` (B,) int8: the seat that lost its turn to the card played (a Skip, a
  Draw Two or Wild Draw Four whose penalty is drawn at once, a Reverse with two players),
  else ``NO_SEAT``. A card whose effect waits for a jump-in window skips in the step that
  closes the window.
* ``step_events`` (B,) int16: flags, below.

They describe the step that produced the state; stepping again replaces them. Games that
are over keep the events of their last step.
"""

from __future__ import annotations

from uno_env.config_values import check_int
from uno_env.core.params import StateArrays
from uno_env.core.state import NO_SEAT
from uno_env.jit import jit_inline

__all__ = [
    "EVENT_BLUFF_CAUGHT",
    "EVENT_BLUFF_CLEARED",
    "EVENT_DIRECTION",
    "EVENT_HANDS_MOVED",
    "EVENT_NAMES",
    "EVENT_RESHUFFLED",
    "EVENT_UNO_EXPOSED",
    "clear_events",
    "event_names",
]

EVENT_RESHUFFLED = 1
"""A pile was reshuffled: the discards became the draw pile (or a barred starter went back)."""
EVENT_DIRECTION = 2
"""A Reverse changed the direction of play."""
EVENT_HANDS_MOVED = 4
"""Seven-zero: hands were exchanged (a 7's swap) or passed on (a 0)."""
EVENT_BLUFF_CAUGHT = 8
"""A challenge found the Wild Draw Four illegal: its player drew the penalty."""
EVENT_BLUFF_CLEARED = 16
"""A challenge found the Wild Draw Four legal: the challenger drew the penalty and two."""
EVENT_UNO_EXPOSED = 32
"""A seat went down to one card without declaring UNO: it may be caught (``uno_exposed``)."""

EVENT_NAMES: dict[int, str] = {
    EVENT_RESHUFFLED: "reshuffled",
    EVENT_DIRECTION: "direction",
    EVENT_HANDS_MOVED: "hands_moved",
    EVENT_BLUFF_CAUGHT: "bluff_caught",
    EVENT_BLUFF_CLEARED: "bluff_cleared",
    EVENT_UNO_EXPOSED: "uno_exposed",
}
"""Each flag's name, for logs and tests."""


_ALL_EVENTS = sum(EVENT_NAMES)


def event_names(flags: int) -> list[str]:
    """The names of the flags set in ``flags`` (one game's ``step_events``).

    Raises:
        ValueError: naming ``flags`` as given, if it is no integer in ``0..63`` (the six
            flags above; NumPy's integers too).
    """
    value = check_int("flags", flags, 0, _ALL_EVENTS, "a sum of the EVENT_* flags")
    return [name for flag, name in EVENT_NAMES.items() if value & flag]


@jit_inline
def clear_events(s: StateArrays, g: int) -> None:
    """Forget game ``g``'s events: a new step (or a new deal) begins."""
    for seat in range(s.step_drawn.shape[1]):
        s.step_drawn[g, seat] = 0
    s.step_skipped[g] = NO_SEAT
    s.step_events[g] = 0
