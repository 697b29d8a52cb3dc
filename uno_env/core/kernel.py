"""The core's kernel API: what compiled code outside the core may call.

A search compiles its own loops over copies of games (``unolab.agents.rollout``,
``unolab.agents.ismcts``) and calls the rules inside them, one game at a time. This module
is the one door into the core for such code; the layer test refuses any other
``uno_env.core.<module>`` import from outside ``uno_env``. The contract (``docs/engine.md``,
"The kernel API"):

* :func:`arrays_of` gives a state's arrays as one :class:`StateArrays` tuple (the same
  arrays, not copies), :func:`rule_params` the rules as a :class:`RuleParams` tuple and
  :func:`scratch` this thread's :class:`Scratch` work space (:func:`new_scratch` one of a
  caller's own, for a caller that keeps its arguments between calls). Compiled code takes these three
  tuples and a game index ``g``.
* :func:`fill_mask` writes game ``g``'s legal actions into an ``(80,)`` boolean row.
* :func:`apply_one` applies one decision to game ``g`` without checking it: the caller
  passes an action :func:`fill_mask` allows. It writes the state's arrays in place, so a
  caller works on a copy (``state.copy()``) and calls :meth:`UnoState.clear_mask_cache`
  before handing the state to the Python API again.
* :func:`seat_ahead` is the seat ``k`` active seats ahead in the direction of play.
* :func:`deal_fresh` deals new matches into the games it names, in place, from their keys,
  exactly as :func:`uno_env.core.init` deals them (the learner tables' compiled autoreset).
* The phase codes (``PLAY``, ``AFTER_DRAW``, ``CHALLENGE_PHASE``, ...), ``OVER`` and
  ``NO_SEAT`` are the values of ``StateArrays.phase`` and of the seat arrays.
* ``FACE_MATCH`` is the table of which faces match which (the rules' matching).

The compile cache is keyed by every source a compiled caller can reach (``uno_env.jit``),
so an edit to the core or to the caller's own helpers gives fresh machine code.
"""

from __future__ import annotations

from uno_env.core.effects import seat_ahead
from uno_env.core.mask import fill_mask
from uno_env.core.params import (
    RuleParams,
    Scratch,
    StateArrays,
    arrays_of,
    new_scratch,
    rule_params,
    scratch,
)
from uno_env.core.setup import deal_fresh
from uno_env.core.state import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    CHOOSE_COLOUR,
    NO_SEAT,
    OVER,
    PLAY,
    UnoState,
)
from uno_env.core.step import apply_one
from uno_env.core.tables import FACE_MATCH

__all__ = [
    "AFTER_DRAW",
    "CHALLENGE_PHASE",
    "CHOOSE_COLOUR",
    "FACE_MATCH",
    "NO_SEAT",
    "OVER",
    "PLAY",
    "RuleParams",
    "Scratch",
    "StateArrays",
    "UnoState",
    "apply_one",
    "arrays_of",
    "deal_fresh",
    "fill_mask",
    "new_scratch",
    "rule_params",
    "scratch",
    "seat_ahead",
]
