"""What the compiled rules receive: the state arrays and the rules as plain tuples.

The compiled functions (see :mod:`uno_env.jit`) cannot take the :class:`UnoState`
dataclass or the :class:`~uno_env.rules.Rules` config, so the step passes a
:data:`StateArrays` named tuple of the same arrays (no copies), a :data:`RuleParams` named
tuple of the switches, derived once per rules object, and a :class:`Scratch` tuple of work
space (the compiled rules never allocate, see :mod:`uno_env.jit`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from uno_env import cards as C
from uno_env.core.plan import PLAN_SIZE
from uno_env.core.state import ARRAY_FIELDS, UnoState
from uno_env.core.tables import stack_responses
from uno_env.rules import Rules

__all__ = [
    "RuleParams",
    "Scratch",
    "StateArrays",
    "arrays_of",
    "new_scratch",
    "rule_params",
    "scratch",
]


class RuleParams(NamedTuple):
    """The rules, as the compiled step reads them (see :class:`uno_env.rules.Rules`)."""

    num_players: int
    uno_call: bool
    uno_penalty: int
    voluntary_draw: bool
    rlcard_after_draw: bool
    until_playable: bool
    draw_cap: int
    wd4_challenge: bool
    wd4_anytime: bool
    wd4_last_resort: bool
    two_player: bool
    respond_to_two: bool  # a Draw Two penalty may be answered (stacked or deflected)
    respond_to_four: bool  # a Wild Draw Four penalty may be answered
    stack_cumulative: bool
    jump_in: bool
    seven_zero: bool
    colours_in_circle: bool
    play_to_last: bool
    teams: bool
    penalty_points: bool
    zero_scores_fifty: bool
    target_score: int
    max_turns: int
    reshuffle_top: bool
    seat_draw_streams: bool
    starter_redraw_wilds: bool
    starter_draw_two_skips: bool
    starter_wild_colour_random: bool
    stack_table: np.ndarray  # (2, 5, 54) bool: see tables.stack_responses


if TYPE_CHECKING:
    # For the type checker the compiled view has the state's own fields and types.
    StateArrays = UnoState
else:
    StateArrays = NamedTuple("StateArrays", [(name, np.ndarray) for name in ARRAY_FIELDS])
    StateArrays.__doc__ = """The arrays of an :class:`UnoState`, by the same names, as one tuple
    for compiled code (built from :data:`ARRAY_FIELDS`: the field list exists once)."""


class Scratch(NamedTuple):
    """Work space of one call into the compiled rules (one game at a time uses it)."""

    words: np.ndarray  # (108,) uint64: the hashes a reshuffle sorts
    order: np.ndarray  # (108,) int64: the permutation they give
    cards: np.ndarray  # (108,) int8: cards being moved
    hands: np.ndarray  # (10, 54) int8: hands being passed on (seven-zero)
    lacks: np.ndarray  # (10, 4) bool: the colours those hands were shown to lack
    marks: np.ndarray  # (10, 18) int32: the draw counts of those hands' lack facts
    sizes: np.ndarray  # (10,) int16: their sizes
    seats: np.ndarray  # (10,) int64: seats still playing
    plan: np.ndarray  # (PLAN_SIZE,) int64: the plan of a step, see uno_env.core.plan


_LOCAL = threading.local()


def scratch() -> Scratch:
    """This thread's work space (the compiled rules release the GIL: threads may overlap)."""
    space: Scratch | None = getattr(_LOCAL, "scratch", None)
    if space is None:
        space = _LOCAL.scratch = new_scratch()
    return space


def new_scratch() -> Scratch:
    """Fresh work space for one call into the compiled rules."""
    return Scratch(
        words=np.empty(C.DECK_SIZE, dtype=np.uint64),
        order=np.empty(C.DECK_SIZE, dtype=np.int64),
        cards=np.empty(C.DECK_SIZE, dtype=np.int8),
        hands=np.empty((C.MAX_PLAYERS, C.NUM_FACES), dtype=np.int8),
        lacks=np.empty((C.MAX_PLAYERS, C.NUM_COLOURS), dtype=np.bool_),
        marks=np.empty((C.MAX_PLAYERS, C.NUM_LACK_FACTS), dtype=np.int32),
        sizes=np.empty(C.MAX_PLAYERS, dtype=np.int16),
        seats=np.empty(C.MAX_PLAYERS, dtype=np.int64),
        plan=np.empty(PLAN_SIZE, dtype=np.int64),
    )


_PARAMS: dict[int, tuple[Rules, RuleParams]] = {}
"""Params by ``id(rules)``, with the rules kept so that a reused id is detected."""


def rule_params(rules: Rules) -> RuleParams:
    """The compiled step's view of ``rules`` (cached per rules object: rules are frozen)."""
    # By identity: hashing a frozen dataclass of 30 fields costs microseconds per step.
    hit = _PARAMS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    if len(_PARAMS) >= 256:
        _PARAMS.clear()
    # Plain ints and bools: the compiled code is called with one fixed signature.
    params = RuleParams(
        num_players=int(rules.num_players),
        uno_call=bool(rules.uno_call),
        uno_penalty=int(rules.uno_penalty),
        voluntary_draw=bool(rules.voluntary_draw),
        rlcard_after_draw=bool(rules.after_draw == "rlcard"),
        until_playable=bool(rules.draw_rule == "until_playable"),
        draw_cap=int(rules.draw_cap),
        wd4_challenge=bool(rules.wd4_challenge),
        wd4_anytime=bool(rules.wd4_anytime),
        wd4_last_resort=bool(rules.wd4_last_resort),
        two_player=bool(rules.two_player),
        respond_to_two=bool(
            rules.stack_draw_two or rules.stack_draw_four_on_two or rules.reverse_deflects
        ),
        respond_to_four=bool(
            rules.stack_draw_four or rules.stack_draw_two_on_four or rules.reverse_deflects
        ),
        stack_cumulative=bool(rules.stack_cumulative),
        jump_in=bool(rules.jump_in),
        seven_zero=bool(rules.seven_zero),
        colours_in_circle=bool(rules.colours_in_circle),
        play_to_last=bool(rules.play_to_last),
        teams=bool(rules.teams),
        penalty_points=bool(rules.scoring == "penalty_points"),
        zero_scores_fifty=bool(rules.zero_scores_fifty),
        target_score=int(rules.target_score),
        max_turns=int(rules.max_turns),
        reshuffle_top=bool(rules.reshuffle_top),
        seat_draw_streams=bool(rules.seat_draw_streams),
        starter_redraw_wilds=bool(rules.starter_redraw_wilds),
        starter_draw_two_skips=bool(rules.starter_draw_two_skips),
        starter_wild_colour_random=bool(rules.starter_wild_colour == "random"),
        stack_table=stack_responses(rules),
    )
    _PARAMS[id(rules)] = (rules, params)
    return params


def arrays_of(state: UnoState) -> StateArrays:
    """The state's arrays as a :data:`StateArrays` tuple (the same arrays, not copies).

    The tuple is kept on the state (its declared ``_arrays`` cache): its fields cannot be
    reassigned (UnoState is frozen), and copies and sub-batches are new states.
    """
    fields = state.__dict__
    arrays: StateArrays | None = fields.get("_arrays")
    if arrays is None:
        arrays = fields["_arrays"] = StateArrays(*[fields[name] for name in ARRAY_FIELDS])
    return arrays
