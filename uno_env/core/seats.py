"""Seat arithmetic: who is k seats ahead, skipping seats that have finished."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uno_env.config_values import check_int
from uno_env.core.checks import check_game, check_table, is_int
from uno_env.core.params import RuleParams, StateArrays, arrays_of, rule_params
from uno_env.files import shown
from uno_env.jit import jit_inline

if TYPE_CHECKING:
    from uno_env.core.state import UnoState
    from uno_env.rules import Rules

__all__ = ["seat_ahead", "seat_ahead_of"]


@jit_inline
def seat_ahead(r: RuleParams, s: StateArrays, g: int, seat: int, k: int) -> int:
    """The seat ``k`` active seats ahead of ``seat`` in game ``g``'s direction of play.

    ``k = 0`` is the seat itself. Seats that finished (``play_to_last``) are skipped.
    """
    n_players = r.num_players
    direction = int(s.direction[g])
    if not r.play_to_last or k == 0:
        return (seat + k * direction) % n_players
    reached = 0
    for offset in range(1, 2 * n_players + 1):
        candidate = (seat + offset * direction) % n_players
        if s.finish_rank[g, candidate] < 0:
            reached += 1
            if reached >= k:
                return candidate
    return (seat + direction) % n_players  # unreachable: a live hand has an active seat


def seat_ahead_of(rules: Rules, state: UnoState, seat: int, k: int = 1, game: int = 0) -> int:
    """:func:`seat_ahead` asked from Python, for one game (a narrator, a table view).

    The compiled rule's own Python code answers, so the question costs no compile and the
    answer is the rule's.

    Raises:
        TypeError: for rules or a state of the wrong kind.
        ValueError: naming ``seat``, ``k`` or ``game`` as given, when it is no integer or
            (``seat``, ``game``) outside the table or the batch.
    """
    check_table(rules, state)
    seat = check_int("seat", seat, 0, rules.num_players - 1)
    if not is_int(k):
        raise ValueError(f"k: expected an integer, got {shown(k)}")
    game = check_game("game", game, state.batch_size)
    rule = getattr(seat_ahead, "py_func", seat_ahead)  # the plain function under NUMBA_DISABLE_JIT
    return int(rule(rule_params(rules), arrays_of(state), game, seat, int(k)))
