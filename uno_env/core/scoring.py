"""The end of a hand: scoring (RULES.md §7), match totals, rewards and the card total."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.core.state import OVER, IntArray, UnoState
from uno_env.core.tables import ZERO_FACES
from uno_env.rules import Rules

__all__ = ["card_totals", "finish_hands", "hand_rewards", "place_rewards", "points_left"]


def points_left(rules: Rules, s: UnoState, games: IntArray) -> npt.NDArray[np.int32]:
    """(k, N) card points left in each hand (a lone 0 counts 50 with ``zero_scores_fifty``)."""
    points = s.hands[games].astype(np.int32) @ C.FACE_POINTS
    if rules.zero_scores_fifty:
        lone_zero = (s.hand_size[games] == 1) & (s.hands[games][:, :, ZERO_FACES].sum(axis=2) == 1)
        points[lone_zero] = 50
    return points


def winner_takes_points(rules: Rules, s: UnoState, games: IntArray) -> npt.NDArray[np.int32]:
    """(k, N) hand points under ``winner_takes``: the winner (and partner) take the rest."""
    left = points_left(rules, s, games)
    winners = s.winner[games].astype(np.int64)
    out = np.zeros_like(left)
    rows = np.arange(games.size)
    if rules.teams:
        # Partners sit opposite: the team scores both opponents' hands.
        opponents = (winners[:, None] + np.array([1, 3])[None, :]) % 4
        team_points = left[rows[:, None], opponents].sum(axis=1)
        out[rows, winners] = team_points
        out[rows, (winners + 2) % 4] = team_points
    else:
        others = left.sum(axis=1) - left[rows, winners]
        out[rows, winners] = others
    return out


def finish_hands(rules: Rules, s: UnoState, games: IntArray) -> None:
    """End the hands of ``games`` (whose ``winner`` is set): score them and update the match."""
    s.done[games] = True
    s.phase[games] = OVER
    s.uno_exposed[games] = -1
    s.declared[games] = False
    s.pending[games] = 0
    s.penalty_kind[games] = 0
    s.wd4_seat[games] = -1
    s.drawn[games] = -1
    s.effect_face[games] = -1
    s.effect_seat[games] = -1
    if rules.scoring == "penalty_points":
        points = points_left(rules, s, games)
    elif rules.play_to_last:
        points = s.hand_points[games]  # scored when the first seat went out
    else:
        points = winner_takes_points(rules, s, games)
    s.hand_points[games] = points
    s.scores[games] += points
    s.match_over[games] = s.scores[games].max(axis=1) >= rules.target_score


def hand_rewards(rules: Rules, state: UnoState) -> npt.NDArray[np.float32]:
    """Win/loss rewards of finished hands, shape (B, N).

    The winner gets +1 and every other seat -1/(N-1), so rewards sum to zero. With ``teams``
    both partners of the winning team get +1 and the others -1. Live and truncated hands give
    zeros.
    """
    n_players = rules.num_players
    out = np.zeros((state.batch_size, n_players), dtype=np.float32)
    won = np.flatnonzero(state.done)
    winners = state.winner[won].astype(np.int64)
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
    """
    if not rules.play_to_last:
        return hand_rewards(rules, state)
    n_players = rules.num_players
    out = np.zeros((state.batch_size, n_players), dtype=np.float32)
    won = np.flatnonzero(state.done)
    ranks = state.finish_rank[won].astype(np.float32)
    out[won] = 1.0 - 2.0 * ranks / (n_players - 1)
    return out


def card_totals(state: UnoState) -> npt.NDArray[np.int64]:
    """Cards in hands + draw pile + discard pile per game (always 108: an invariant)."""
    in_hands = state.hands.sum(axis=(1, 2), dtype=np.int64)
    in_pile = C.DECK_SIZE - state.draw_pos.astype(np.int64)
    return in_hands + in_pile + state.discard_len.astype(np.int64)
