"""Rollouts for search: play batches of games to the end of the hand.

Two ways to play the rest of a hand, both over one batch of core states:

* :data:`FAST_ROLLOUT` (``"fast"``): a cheap heuristic compiled together with the core's
  rules, acting on the state arrays directly (no observation is encoded, no Python runs
  per step): one compiled call plays every game of the batch to its end. It declares UNO and
  catches whenever it may; when the next seat holds one card it attacks (Draw Two, then
  Wild Draw Four, Skip, Reverse); otherwise it plays a coloured card before a wild (the
  coloured card whose colour it holds most, then the one worth most points), names the
  colour it holds most,
  plays a card it has just drawn, draws only when nothing plays, challenges a Wild Draw
  Four when its player still holds 4 cards or more, and otherwise takes the first legal
  action. It is deterministic.
* any :class:`~uno_env.policy.Policy` (a bot, a learned agent): played in every seat by the
  lab's one play loop (:func:`uno_env.play.play_tables`), which drops finished games from
  the batch.

:func:`rollout_values` returns each game's reward for a seat at the end of its hand
(:func:`uno_env.core.hand_rewards`: +1 for a win, -1/(N-1) for a loss, 0 when truncated).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core.kernel import (
    AFTER_DRAW,
    CHALLENGE_PHASE,
    NO_SEAT,
    OVER,
    RuleParams,
    Scratch,
    StateArrays,
    UnoState,
    apply_one,
    arrays_of,
    fill_mask,
    rule_params,
    scratch,
    seat_ahead,
)
from uno_env.jit import Kernel, jit
from uno_env.play import play_tables
from uno_env.policy import Policy
from uno_env.rules import Rules

__all__ = ["FAST_ROLLOUT", "fast_action", "fast_actions", "play_out", "rollout_values"]

FAST_ROLLOUT = "fast"
"""Name of the compiled rollout policy (the default of the search agent)."""

_CHALLENGE_MIN_CARDS = 4
"""Challenge a Wild Draw Four when its player holds at least this many cards (as the bots)."""
_ATTACK_RANK = np.zeros(C.NUM_RANKS, dtype=np.int64)
"""Preference of a coloured card's rank when the next seat holds one card (see below)."""
_ATTACK_RANK[C.DRAW_TWO] = 3
_ATTACK_RANK[C.SKIP] = 2
_ATTACK_RANK[C.REVERSE] = 1
_WILD_DRAW_FOUR_ATTACK = 3
"""A Wild Draw Four attacks after a Draw Two and before a Skip (ranks of ``_ATTACK_RANK``)."""


def play_out(rules: Rules, state: UnoState, policy: Policy | str = FAST_ROLLOUT) -> UnoState:
    """Play every game of ``state`` to the end of its hand, in place; return it.

    Args:
        rules: The rules of the batch.
        state: The games (changed in place: the caller owns them, e.g. fresh
            determinizations).
        policy: :data:`FAST_ROLLOUT`, or a policy that plays every seat.

    Returns:
        ``state`` itself, every game finished (won, or truncated at ``max_turns``).
    """
    if isinstance(policy, str):
        if policy != FAST_ROLLOUT:
            raise ValueError(f"unknown compiled rollout {policy!r}; the one there is is 'fast'")
        mask = np.empty(C.NUM_ACTIONS, dtype=np.bool_)
        _PLAY_OUT(rule_params(rules), arrays_of(state), scratch(), mask)
        state.clear_mask_cache()
        return state
    return _play_out_python(rules, state, policy)


def fast_actions(rules: Rules, state: UnoState) -> npt.NDArray[np.int64]:
    """The fast heuristic's action in every game of ``state`` (live games only), (B,).

    The same compiled decision that :func:`play_out` takes at every step of a rollout, for
    inspection and tests; the state is not changed.

    Raises:
        ValueError: naming the first finished game of the batch.
    """
    over = np.flatnonzero(~state.live)
    if over.size:
        raise ValueError(f"game {int(over[0])} is finished (phase over): no action to choose")
    out = np.empty(state.batch_size, dtype=np.int64)
    mask = np.empty(C.NUM_ACTIONS, dtype=np.bool_)
    _FAST_ACTIONS(rule_params(rules), arrays_of(state), mask, out)
    return out


def _play_out_python(rules: Rules, state: UnoState, policy: Policy) -> UnoState:
    """Play the games out through the lab's play loop, writing each final state back."""

    def write_back(
        now: UnoState, rows: npt.NDArray[np.int64], games: npt.NDArray[np.int64]
    ) -> None:
        if now is not state:  # the loop compacted the batch into new arrays
            for name, arr in now.array_fields().items():
                getattr(state, name)[games] = arr[rows]

    lineups = np.zeros((state.batch_size, rules.num_players), dtype=np.int64)
    play_tables(rules, [policy], lineups, state=state, on_error="raise", on_ended=write_back)
    state.clear_mask_cache()
    return state


def rollout_values(
    rules: Rules,
    state: UnoState,
    seats: npt.NDArray[np.int64],
    policy: Policy | str = FAST_ROLLOUT,
) -> npt.NDArray[np.float64]:
    """Play the games out (in place) and return each one's reward for its seat, (B,).

    Args:
        rules: The rules of the batch.
        state: The games, owned by the caller (changed in place).
        seats: The seat whose reward each game returns, (B,).
        policy: :data:`FAST_ROLLOUT` or a policy playing every seat.
    """
    final = play_out(rules, state, policy)
    rewards = core.hand_rewards(rules, final)
    return rewards[np.arange(final.batch_size), seats].astype(np.float64)


@jit
def _play_out_all(r: RuleParams, s: StateArrays, w: Scratch, mask: np.ndarray) -> None:
    """Play every game to the end of its hand with the fast heuristic."""
    for g in range(s.key.shape[0]):
        while s.phase[g] != OVER:
            fill_mask(r, s, g, mask)
            apply_one(r, s, w, g, _fast_action(r, s, g, mask))


@jit
def _fast_actions_all(r: RuleParams, s: StateArrays, mask: np.ndarray, out: np.ndarray) -> None:
    """The fast heuristic's action in every game, into ``out``."""
    for g in range(s.key.shape[0]):
        fill_mask(r, s, g, mask)
        out[g] = _fast_action(r, s, g, mask)


@jit
def _most_held_colour(s: StateArrays, g: int, seat: int) -> int:
    """The colour of which ``seat`` holds most cards (ties: R, Y, G, B)."""
    best, best_count = 0, -1
    for c in range(C.NUM_COLOURS):
        count = 0
        for face in range(c * C.NUM_RANKS, (c + 1) * C.NUM_RANKS):
            count += s.hands[g, seat, face]
        if count > best_count:
            best, best_count = c, count
    return best


@jit
def _wild_action(mask: np.ndarray, first: int, colour: int) -> int:
    """The wild's action naming ``colour`` if legal, else its first legal colour."""
    if mask[first + colour]:
        return first + colour
    for c in range(C.NUM_COLOURS):
        if mask[first + c]:
            return first + c
    return -1


@jit
def _fast_action(r: RuleParams, s: StateArrays, g: int, mask: np.ndarray) -> int:
    """The fast heuristic's action in game ``g`` (see the module docstring)."""
    if mask[C.CATCH]:
        return C.CATCH
    if mask[C.UNO]:
        return C.UNO
    seat = int(s.current[g])
    phase = s.phase[g]
    if phase == CHALLENGE_PHASE:
        bluffer = int(s.wd4_seat[g])
        if bluffer != NO_SEAT and s.hand_size[g, bluffer] >= _CHALLENGE_MIN_CARDS:
            return C.CHALLENGE
        return C.ACCEPT
    colour = _most_held_colour(s, g, seat)
    # Attack a seat about to go out: measured +1 point for the search (docs/search.md).
    attacking = s.hand_size[g, seat_ahead(r, s, g, seat, 1)] == 1
    # A coloured card: the one of the colour held most, then the one worth most.
    best, best_key, best_attack = -1, -1, 0
    for face in range(C.NUM_COLOURED_FACES):
        if mask[face]:
            c = face // C.NUM_RANKS
            held = 0
            for f in range(c * C.NUM_RANKS, (c + 1) * C.NUM_RANKS):
                held += s.hands[g, seat, f]
            attack = _ATTACK_RANK[face % C.NUM_RANKS] if attacking else 0
            key = attack * 1_000_000 + held * 64 + int(C.FACE_POINTS[face])
            if key > best_key:
                best, best_key, best_attack = face, key, attack
    if attacking and best_attack < _WILD_DRAW_FOUR_ATTACK:
        act = _wild_action(mask, C.PLAY_WILD_DRAW_FOUR, colour)
        if act >= 0:
            return act
    if best >= 0:
        return best
    for first in (C.PLAY_WILD, C.PLAY_WILD_DRAW_FOUR):
        act = _wild_action(mask, first, colour)
        if act >= 0:
            return act
    if phase == AFTER_DRAW and mask[C.KEEP]:
        return C.KEEP
    if mask[C.NAME_COLOUR + colour]:
        return C.NAME_COLOUR + colour
    for act in range(C.NUM_ACTIONS):
        if mask[act]:
            return act
    return 0


fast_action = _fast_action
"""The fast heuristic's compiled decision in one game, ``(r, s, g, mask) -> action``: for
other compiled searches (:mod:`unolab.agents.ismcts` plays the other seats with it)."""

_PLAY_OUT = Kernel(_play_out_all)
_FAST_ACTIONS = Kernel(_fast_actions_all)
