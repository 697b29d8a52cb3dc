"""What the search agents share: they act on the game state, not on observations.

:class:`~unolab.agents.search.PimcAgent` and :class:`~unolab.agents.ismcts.IsmctsAgent` search from the
state (through :func:`uno_env.core.determinize`, which re-deals everything the acting seat
cannot see), so :func:`uno_env.play.choose_actions` calls their ``act_from_state`` instead
of ``act``. :class:`StateSearchAgent` holds that protocol and the checks of a call, and
:func:`root_candidates` the actions a decision searches.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.files import shown
from uno_env.jit import jit
from uno_env.policy import ActArray, MaskArray, StateOnlyPolicy
from uno_env.rules import Rules

__all__ = [
    "SeatArray",
    "StateSearchAgent",
    "ValueArray",
    "check_count",
    "check_flag",
    "check_number",
    "root_candidates",
]

SeatArray = npt.NDArray[np.int64]
"""The acting seat of each game, (B,) int64."""

ValueArray = npt.NDArray[np.float32]
"""A search's estimate of each action of each game, (B, 80) float32; NaN where not searched."""


def _described(value: object) -> str:
    """A value for a one-line message: an array by its kind (its rows would span lines)."""
    return "an array" if isinstance(value, np.ndarray) else shown(value)


def check_count(agent: str, name: str, value: object, limit: int) -> int:
    """``value`` as an int in 1..``limit``.

    Raises:
        ValueError: ``"<agent>: <name> must be ..."``, naming the value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{agent}: {name} must be an integer >= 1, got {shown(value)}")
    if not 1 <= value <= limit:
        raise ValueError(f"{agent}: {name} must be in 1..{limit}, got {shown(value)}")
    return int(value)


def check_flag(agent: str, name: str, value: object) -> bool:
    """``value`` as a bool: ``True`` or ``False`` (NumPy's too), never a number or a word
    that Python would read as true.

    Raises:
        ValueError: ``"<agent>: <name> must be true or false ..."``, naming the value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{agent}: {name} must be true or false, got {shown(value)}")
    return bool(value)


def check_number(
    agent: str, name: str, value: object, *, allow_zero: bool, unit: str = ""
) -> float:
    """``value`` as a finite float, > 0 (or >= 0 with ``allow_zero``).

    Raises:
        ValueError: ``"<agent>: <name> must be a number > 0 ..."``, naming the value.
    """
    bound = ">= 0" if allow_zero else "> 0"
    number = math.nan
    if not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        try:
            number = float(value)
        except OverflowError:  # an int past any float: no budget or weight is that large
            number = math.inf
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        raise ValueError(f"{agent}: {name} must be a number {bound}{unit}, got {shown(value)}")
    return number


@jit
def drop_voluntary_draw(mask: np.ndarray) -> None:
    """Prune ``mask`` in place: no voluntary draw when a card plays (noisy estimates would
    otherwise pick it). The searches' one pruning rule, at the root and in ISMCTS's tree."""
    if mask[C.DRAW]:
        for a in range(C.NUM_PLAY_ACTIONS):
            if mask[a]:
                mask[C.DRAW] = False
                return


_drop_voluntary_draw = getattr(drop_voluntary_draw, "py_func", drop_voluntary_draw)
"""The same rule run as Python, for one mask at a time (no compiled call from Python)."""


def root_candidates(mask: npt.NDArray[np.bool_], prune_draws: bool = True) -> npt.NDArray[np.int64]:
    """The actions worth searching in one game (one of them: no search).

    Declaring UNO and catching are taken at once (as by every bot); with ``prune_draws`` a
    voluntary draw is not considered when a card plays (:func:`drop_voluntary_draw`).
    """
    for forced in (C.CATCH, C.UNO):
        if mask[forced]:
            return np.array([forced], dtype=np.int64)
    if prune_draws:
        mask = mask.copy()
        _drop_voluntary_draw(mask)
    return np.flatnonzero(mask).astype(np.int64)


class StateSearchAgent(StateOnlyPolicy, ABC):
    """The part of the :class:`~uno_env.policy.Policy` protocol a search agent keeps.

    Subclasses set :attr:`name`, :attr:`decisions` and :attr:`last_values`, and implement
    :meth:`_decide`, which :meth:`act_from_state` calls once the call is checked.
    """

    name = "search"
    decisions: int
    """Decisions searched so far (forced ones excluded); set by the subclass."""
    last_values: npt.NDArray[np.float32] | None
    """The estimates behind the last :meth:`act_from_state` call, (B, NUM_ACTIONS): each
    searched action's value for the acting seat, NaN for the actions not searched."""

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless between decisions: nothing to forget."""
        del games

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """Choose one action per game by searching from the seat's information set.

        Args:
            rules: The rules of the games.
            state: B live games; only what ``seats`` may know is used (everything else is
                re-dealt by :func:`uno_env.core.determinize` before the search reads it).
            seats: The acting seat of each game, (B,) (it must be the seat to act).
            masks: The legal-action masks, when the caller has them: (B, 80) bool (or 0/1
                integers), each row the legal actions of its game or some of them (at
                least one).

        Returns:
            One legal action per game, (B,) int64.

        Raises:
            TypeError: for rules or a state of the wrong type (:meth:`_checked_call`).
            ValueError: for rules of another table size, seats that are not integers, a
                finished game, a seat outside the table or not to act, or masks that are
                not boolean, of the wrong shape, allow an illegal action or none
                (:meth:`_checked_call`).
        """
        seat_arr, legal = self._checked_call(rules, state, seats, masks)
        values = np.full((state.batch_size, C.NUM_ACTIONS), np.nan, dtype=np.float32)
        self.last_values = values
        return self._decide(rules, state, seat_arr, legal, values)

    @abstractmethod
    def _decide(
        self, rules: Rules, state: UnoState, seats: SeatArray, masks: MaskArray, values: ValueArray
    ) -> ActArray:
        """The search itself, on a checked call: one action per game, each searched action's
        estimate written into ``values`` (B, NUM_ACTIONS; NaN elsewhere)."""

    def _checked_call(
        self,
        rules: Rules,
        state: UnoState,
        seats: npt.ArrayLike,
        masks: npt.NDArray[np.bool_] | None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """The acting seat of each game and the legal masks, after checking the call.

        Raises:
            TypeError: for rules that are no Rules or a state that is no UnoState.
            ValueError: for rules of another table size than the state's, seats that are
                not integers (one per game, or one for all), masks of the wrong shape or
                not boolean, a mask that allows an illegal action or none, a finished game,
                or a seat outside the table or not to act.
        """
        if not isinstance(rules, Rules):
            raise TypeError(
                f"{self.name}: rules must be Rules (uno_env.load_rules), got {shown(rules)}"
            )
        if not isinstance(state, UnoState):
            raise TypeError(
                f"{self.name}: state must be an UnoState (uno_env.core), got {shown(state)}"
            )
        games, seats_at_table = state.hands.shape[:2]
        if rules.num_players != seats_at_table:
            raise ValueError(
                f"{self.name}: rules for num_players={rules.num_players}, but the state has "
                f"{seats_at_table} seats"
            )
        given = np.asarray(seats)
        if given.dtype.kind not in "iu" or given.shape not in ((), (games,)):
            raise ValueError(
                f"{self.name}: seats must be integers, one per game ({games}) or one for "
                f"all, got {shown(seats)}"
            )
        outside = np.flatnonzero(np.broadcast_to((given < 0) | (given >= seats_at_table), games))
        if outside.size:
            value = np.broadcast_to(given, games)[outside[0]].item()
            raise ValueError(
                f"game {int(outside[0])}: seat {value} is outside the table "
                f"(0..{seats_at_table - 1})"
            )
        seat_arr = np.broadcast_to(given, (games,)).astype(np.int64)
        if masks is not None and np.shape(masks) != (games, C.NUM_ACTIONS):
            raise ValueError(
                f"{self.name}: masks must have shape ({games}, {C.NUM_ACTIONS}), got "
                f"{_described(masks)} of shape {np.shape(masks)}"
            )
        over = np.flatnonzero(~state.live)
        if over.size:
            raise ValueError(
                f"game {int(over[0])} is finished (phase over): {self.name} has nothing to "
                "decide there"
            )
        not_acting = np.flatnonzero(seat_arr != state.current)
        if not_acting.size:
            g = int(not_acting[0])
            raise ValueError(
                f"game {g}: seat {int(seat_arr[g])} is not the seat to act "
                f"(seat {int(state.current[g])} is)"
            )
        legal = core.legal_action_mask(rules, state)  # cached on a state fresh from a step
        return seat_arr, legal if masks is None else self._checked_masks(masks, legal)

    def _checked_masks(self, masks: object, legal: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """``masks`` as given to :meth:`act_from_state`, checked against the legal masks: the
        search picks among what a mask allows, so a mask that allows an illegal action (or
        none) would make it return one."""
        arr = np.asarray(masks)
        if arr.dtype.kind in "iu" and ((arr == 0) | (arr == 1)).all():
            arr = arr.astype(np.bool_)
        if arr.dtype != np.bool_:
            raise ValueError(
                f"{self.name}: masks must be boolean (True where an action is allowed) or "
                f"0/1 integers, got {_described(masks)} of dtype {arr.dtype}"
            )
        illegal = np.argwhere(arr & ~legal)
        if illegal.size:
            game, action = (int(v) for v in illegal[0])
            raise ValueError(
                f"{self.name}: masks: game {game} allows action {action} "
                f"({C.ACTION_NAMES[action]}), which is not legal there; legal: "
                f"{np.flatnonzero(legal[game]).tolist()}"
            )
        empty = np.flatnonzero(~arr.any(axis=1))
        if empty.size:
            raise ValueError(
                f"{self.name}: masks: game {int(empty[0])} allows no action (all False); "
                "a live game always has a legal one"
            )
        return arr
