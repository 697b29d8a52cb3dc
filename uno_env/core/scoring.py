"""The end of a hand: scoring (docs/rules.md §12-13), match totals, rewards and the card total."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.checks import check_rules, check_state, check_table, game_indices, int_values
from uno_env.core.params import RuleParams, StateArrays, arrays_of, rule_params
from uno_env.core.state import NO_SEAT, OVER, IntArray, UnoState, clear_decision
from uno_env.files import shown
from uno_env.jit import jit
from uno_env.rules import Rules

__all__ = [
    "card_totals",
    "finish_hand",
    "hand_rewards",
    "place_rewards",
    "points_left",
    "winner_takes_points",
]


@jit
def _seat_points(r: RuleParams, s: StateArrays, g: int, seat: int) -> int:
    """Card points left in one hand (a lone 0 counts 50 with ``zero_scores_fifty``)."""
    points = 0
    zeros = 0
    for face in range(C.NUM_FACES):
        count = int(s.hands[g, seat, face])
        if count:
            points += count * C.FACE_POINTS[face]
            if face < C.NUM_COLOURED_FACES and face % C.NUM_RANKS == 0:
                zeros += count
    if r.zero_scores_fifty and s.hand_size[g, seat] == 1 and zeros == 1:
        return 50
    return points


@jit
def _points_left_into(r: RuleParams, s: StateArrays, games: np.ndarray, out: np.ndarray) -> None:
    """Write the card points left in each hand of ``games`` into the rows of ``out``."""
    for i in range(games.shape[0]):
        for seat in range(r.num_players):
            out[i, seat] = _seat_points(r, s, games[i], seat)


def points_left(rules: Rules, state: UnoState, games: IntArray) -> npt.NDArray[np.int32]:
    """(k, N) card points left in each hand of ``games``.

    Raises:
        ValueError: naming a game index (as given) outside the batch.
    """
    check_table(rules, state)
    idx = np.ascontiguousarray(game_indices("games", games, state.batch_size).ravel())
    out = np.zeros((idx.size, rules.num_players), dtype=np.int32)
    _points_left_into(rule_params(rules), arrays_of(state), idx, out)
    return out


@jit
def winner_takes_points(r: RuleParams, s: StateArrays, g: int) -> None:
    """Set game ``g``'s hand points under ``winner_takes``: the winner (and partner) take the
    points left in the other hands."""
    n_players = r.num_players
    winner = int(s.winner[g])
    total = 0
    for seat in range(n_players):
        s.hand_points[g, seat] = 0
        if r.teams:
            # Partners sit opposite: the team scores both opponents' hands.
            if seat % 2 != winner % 2:
                total += _seat_points(r, s, g, seat)
        elif seat != winner:
            total += _seat_points(r, s, g, seat)
    s.hand_points[g, winner] = total
    if r.teams:
        s.hand_points[g, (winner + 2) % 4] = total


@jit
def finish_hand(r: RuleParams, s: StateArrays, g: int) -> None:
    """End the hand of game ``g`` (whose ``winner`` is set): score it and update the match."""
    s.done[g] = True
    s.uno_exposed[g] = NO_SEAT
    clear_decision(s, g, OVER)
    if r.penalty_points:
        for seat in range(r.num_players):
            s.hand_points[g, seat] = _seat_points(r, s, g, seat)
    elif not r.play_to_last:  # play_to_last scored when the first seat went out
        winner_takes_points(r, s, g)
    best = 0
    for seat in range(r.num_players):
        s.scores[g, seat] += s.hand_points[g, seat]
        best = max(best, int(s.scores[g, seat]))
    s.match_over[g] = best >= r.target_score


def hand_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Win/loss rewards of finished hands, shape (B, N).

    The winner gets +1 and every other seat -1/(N-1), so rewards sum to zero. With ``teams``
    both partners of the winning team get +1 and the others -1. Live and truncated hands give
    zeros.

    Raises:
        TypeError: for rules or a state of the wrong kind.
        ValueError: for rules of another table size than the state's.
    """
    check_table(rules, state)
    return winner_rewards(rules, np.where(state.done, state.winner, NO_SEAT))


def winner_rewards(rules: Rules, winners: npt.NDArray[np.integer]) -> npt.NDArray[np.float32]:
    """Win/loss rewards from the winner of each hand (``NO_SEAT`` for none), shape (B, N).

    The rule of :func:`hand_rewards`, for callers that keep only the winners (the batched
    play loop records them as hands end).

    Raises:
        ValueError: naming a winner (as given) that is neither a seat nor ``NO_SEAT``.
    """
    check_rules(rules)
    n_players = rules.num_players
    given = winners
    winners = int_values("winners", winners)
    if winners.ndim != 1:
        raise ValueError(f"winners: expected shape (B,), got {shown(given)}")
    outside = np.flatnonzero((winners < NO_SEAT) | (winners >= n_players))
    if outside.size:
        raise ValueError(
            f"winners: {shown(np.asarray(given, dtype=object)[outside[0]])} is not a seat "
            f"(0..{n_players - 1}) nor {NO_SEAT} (no winner)"
        )
    out = np.zeros((winners.shape[0], n_players), dtype=np.float32)
    won = np.flatnonzero(winners != NO_SEAT)
    winners = winners[won].astype(np.int64)
    if rules.teams:
        out[won] = -1.0
        out[won, winners] = 1.0
        out[won, (winners + 2) % 4] = 1.0
    else:
        out[won] = -1.0 / (n_players - 1)
        out[won, winners] = 1.0
    return out


def place_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Rewards by finishing place under ``play_to_last``, shape (B, N).

    Linear in the place: +1 for the first out, -1 for the last, summing to zero. Without
    ``play_to_last`` the places are the winner first and the others tied in between, which
    gives :func:`hand_rewards`.

    Raises:
        TypeError: for rules or a state of the wrong kind.
        ValueError: for rules of another table size than the state's.
    """
    check_table(rules, state)
    if not rules.play_to_last:
        return hand_rewards(rules, state)
    n_players = rules.num_players
    out = np.zeros((state.batch_size, n_players), dtype=np.float32)
    won = np.flatnonzero(state.done)
    ranks = state.finish_rank[won].astype(np.float32)
    out[won] = 1.0 - 2.0 * ranks / (n_players - 1)
    return out


def card_totals(state: UnoState) -> npt.NDArray[np.int64]:
    """Cards in hands + draw pile + discard pile per game (always 108: an invariant).

    Raises:
        TypeError: for a state that is no :class:`UnoState`.
    """
    check_state(state)
    in_hands = state.hands.sum(axis=(1, 2), dtype=np.int64)
    in_pile = C.DECK_SIZE - state.draw_pos.astype(np.int64)
    return in_hands + in_pile + state.discard_len.astype(np.int64)
