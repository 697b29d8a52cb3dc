"""The batched UNO game core: pure rules over state arrays.

All rules of the game live in this package. Every function takes a
:class:`~uno_env.rules.Rules` and an :class:`UnoState` whose arrays have a leading batch axis
B (1 to tens of thousands of games), and returns new arrays: nothing passed in is mutated
unless the caller asks for it (``step(..., in_place=True)`` and ``reset_games(...,
in_place=True)`` work on a state the caller owns), and no global random state is used, so a
game replays exactly from its key (see :mod:`uno_env.rng`).

Every step also reports what it did (:mod:`uno_env.core.events`): the cards each seat drew,
the seat a card skipped, and flags for a reshuffle, a change of direction, hands moved, a
challenge's verdict and an UNO left undeclared.

The exact semantics (action ids, phases, the order of effects, who may catch an UNO, every
house rule) are the contract in ``docs/engine.md``; the tests check this package against an
independent scalar reference engine under random play.

Modules, in pipeline order: ``state`` (the arrays and phases), ``tables`` (lookup tables),
``setup`` (dealing, the starter card, next hand, resets), ``piles`` (drawing, reshuffles),
``seats`` (who is k seats ahead), ``mask`` (legal actions), ``events`` (what a step did),
``effects`` (what actions do),
``plan`` (what an action leaves for the step to carry out), ``step`` (one decision per game)
and ``scoring`` (end of hand, rewards). ``docs/engine.md`` ("Follow one card") traces a Wild
Draw Four through them.

Functions:
    init: deal a batch of new matches.
    legal_action_mask: the (B, 80) boolean mask of legal actions.
    determinize: sample the games one seat cannot tell apart (for search).
    step: apply one action per game; an illegal action raises :class:`IllegalActionError`.
    next_hand: deal the next hand of each match, the deal passing to the left.
    reset_games: replace some games of a batch with fresh matches (for autoreset).
    hand_rewards, place_rewards, winner_rewards: rewards of finished hands.
"""

from uno_env.core.determinize import determinize
from uno_env.core.effects import seat_ahead_of
from uno_env.core.events import (
    EVENT_BLUFF_CAUGHT,
    EVENT_BLUFF_CLEARED,
    EVENT_DIRECTION,
    EVENT_HANDS_MOVED,
    EVENT_NAMES,
    EVENT_RESHUFFLED,
    EVENT_UNO_EXPOSED,
    event_names,
)
from uno_env.core.mask import legal_action_mask
from uno_env.core.scoring import (
    card_totals,
    hand_rewards,
    place_rewards,
    points_left,
    winner_rewards,
)
from uno_env.core.setup import init, next_hand, reset_games
from uno_env.core.state import (
    AFTER_DRAW,
    ARRAY_FIELDS,
    CHALLENGE_PHASE,
    CHOOSE_COLOUR,
    JUMP_IN,
    NUM_PHASES,
    OVER,
    PHASE_NAMES,
    PLAY,
    STACK,
    SWAP_TARGET,
    IllegalActionError,
    UnoState,
)
from uno_env.core.step import step

__all__ = [
    "AFTER_DRAW",
    "ARRAY_FIELDS",
    "CHALLENGE_PHASE",
    "CHOOSE_COLOUR",
    "EVENT_BLUFF_CAUGHT",
    "EVENT_BLUFF_CLEARED",
    "EVENT_DIRECTION",
    "EVENT_HANDS_MOVED",
    "EVENT_NAMES",
    "EVENT_RESHUFFLED",
    "EVENT_UNO_EXPOSED",
    "JUMP_IN",
    "NUM_PHASES",
    "OVER",
    "PHASE_NAMES",
    "PLAY",
    "STACK",
    "SWAP_TARGET",
    "IllegalActionError",
    "UnoState",
    "card_totals",
    "determinize",
    "event_names",
    "hand_rewards",
    "init",
    "legal_action_mask",
    "next_hand",
    "place_rewards",
    "points_left",
    "reset_games",
    "seat_ahead_of",
    "step",
    "winner_rewards",
]
