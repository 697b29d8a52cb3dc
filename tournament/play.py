"""Batched play of many tables at once, with forfeits instead of crashes.

:func:`play_tables` steps every game of a chunk side by side through the vectorised core.
Each step it computes the legal-action masks and the acting seat's observation of every live
game once, then calls each participant's policy once, on all the rows (across every table
and seating) where that participant must act, so inference is batched across tables.

Policies that never read observations may say so with a class attribute
``uses_observations = False``: they get arrays of shape (rows, 0), and when every policy of a
batch says so the observations are not encoded at all (encoding is about 40% of the time of
a tournament between fast bots). Policies without the attribute get full observations.

Forfeits. A policy call that raises, returns the wrong shape or a non-integer array is
retried on each half of its rows, recursively, down to single rows: exactly the games whose
row makes the policy fail are forfeited, the others go on. (A randomised policy therefore
sees the rows of a failed call again; this only happens after a failure.) A row whose
returned action is out of range or illegal is forfeited too. A forfeited game stops at once:
the forfeiting seat is ranked last and the other seats tie above it (as in chess, a forfeit
is a loss for the offender and a win for the others). ``KeyboardInterrupt`` and other
``BaseException`` are not caught.

Finishing order (``ranks``). Without ``play_to_last`` a hand only tells who went out first:
the winner ranks 0 and the other seats tie at rank 1 (with ``teams``, both partners rank 0).
Ordering the losers by the points left in their hands would rank them on something they were
not playing for, so ties are kept: they are honest, and the ratings handle them. Under
``play_to_last`` the full finishing order is used. A truncated hand is a tie between the
seats still playing (seats already out under ``play_to_last`` keep their places).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agents.base import Policy
from uno_env import core
from uno_env.cards import NUM_ACTIONS
from uno_env.observation import encode
from uno_env.rules import Rules

__all__ = ["END_FORFEIT", "END_TRUNCATED", "END_WON", "TableResults", "play_tables"]

END_WON, END_TRUNCATED, END_FORFEIT = 0, 1, 2
_COMPACT_BELOW = 0.9
"""Drop finished games from the batch when fewer than this share are live (a copy of the
state costs far less than a step over dead rows)."""


@dataclass(frozen=True)
class TableResults:
    """Outcomes of G games with k seats.

    Attributes:
        ranks: Finishing position of each seat (0 first, ties share), (G, k) int64.
        points: The engine's ``hand_points``, (G, k) int64.
        cards_left: Cards in each hand at the end, (G, k) int64.
        turns: Decisions taken, (G,) int64.
        end: ``END_WON``, ``END_TRUNCATED`` or ``END_FORFEIT``, (G,) int64.
        forfeit_seat: The forfeiting seat, else -1, (G,) int64.
        reasons: Game index -> why it was forfeited.
    """

    ranks: npt.NDArray[np.int64]
    points: npt.NDArray[np.int64]
    cards_left: npt.NDArray[np.int64]
    turns: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    forfeit_seat: npt.NDArray[np.int64]
    reasons: dict[int, str]


def _competition_ranks(keys: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Rank of each seat: how many seats have a strictly smaller key (ties share)."""
    less = keys[:, None, :] < keys[:, :, None]
    out: npt.NDArray[np.int64] = less.sum(axis=2).astype(np.int64)
    return out


def _order_keys(rules: Rules, state: core.UnoState, rows: npt.NDArray[np.int64]) -> np.ndarray:
    """Sort keys of the seats of finished games (smaller finishes earlier)."""
    n_players = rules.num_players
    keys = np.zeros((rows.size, n_players), dtype=np.float64)
    won = state.done[rows]
    if rules.play_to_last:
        rank = state.finish_rank[rows].astype(np.float64)
        keys = np.where(rank >= 0, rank, float(n_players))
    else:
        winners = state.winner[rows].astype(np.int64)
        keys[won] = 1.0
        w = np.flatnonzero(won)
        keys[w, winners[w]] = 0.0
        if rules.teams:
            keys[w, (winners[w] + 2) % 4] = 0.0
    return keys


def _safe_act(
    policy: Policy, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], dict[int, str]]:
    """Call a policy; return its actions and the rows that forfeit, with the reason.

    A failing call is retried on each half of the rows, down to single rows.
    """
    n_rows = masks.shape[0]
    try:
        raw = policy.act(observations, masks)
        chosen = np.asarray(raw)
        if chosen.shape != (n_rows,) or not np.issubdtype(chosen.dtype, np.integer):
            raise TypeError(
                f"act returned shape {chosen.shape} dtype {chosen.dtype}; expected ({n_rows},) "
                "integers"
            )
    except Exception as err:
        if n_rows == 1:
            return np.zeros(1, dtype=np.int64), {0: f"{type(err).__name__}: {err}"}
        half = n_rows // 2
        first, bad_first = _safe_act(policy, observations[:half], masks[:half])
        second, bad_second = _safe_act(policy, observations[half:], masks[half:])
        bad = {**bad_first, **{half + r: why for r, why in bad_second.items()}}
        return np.concatenate([first, second]), bad
    actions = chosen.astype(np.int64)
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    legal = in_range & masks[np.arange(n_rows), np.where(in_range, actions, 0)]
    bad = {}
    for r in np.flatnonzero(~legal):
        bad[int(r)] = (
            f"illegal action {int(actions[r])}; legal: {np.flatnonzero(masks[r]).tolist()}"
        )
    actions[~legal] = 0
    return actions, bad


def play_tables(
    rules: Rules,
    policies: Sequence[Policy | None],
    lineups: npt.NDArray[np.int64],
    keys: npt.NDArray[np.uint64],
) -> TableResults:
    """Play one hand per row, seat ``s`` of game ``g`` held by ``policies[lineups[g, s]]``.

    Every game is dealt from its key with seat ``k-1`` as the dealer, so seat 0 plays first
    (unless the starter card says otherwise). All policies are ``reset`` first.

    Args:
        rules: The rules of every game.
        policies: Policy by participant id (``None`` for participants absent here).
        lineups: Participant id of each seat, (G, k).
        keys: The game keys, (G,).

    Returns:
        The outcome of every game, in row order.
    """
    n_games, n_players = lineups.shape
    if n_players != rules.num_players or keys.shape != (n_games,):
        raise ValueError(
            f"lineups {lineups.shape} and keys {keys.shape} do not fit {rules.num_players} seats"
        )
    out = TableResults(
        ranks=np.zeros((n_games, n_players), dtype=np.int64),
        points=np.zeros((n_games, n_players), dtype=np.int64),
        cards_left=np.zeros((n_games, n_players), dtype=np.int64),
        turns=np.zeros(n_games, dtype=np.int64),
        end=np.zeros(n_games, dtype=np.int64),
        forfeit_seat=np.full(n_games, -1, dtype=np.int64),
        reasons={},
    )
    if n_games == 0:
        return out
    for policy in policies:
        if policy is not None:
            policy.reset()
    state = core.init(rules, keys=keys, dealer=n_players - 1)
    ids = np.arange(n_games)
    seats_of = lineups.astype(np.int64)
    live = state.live
    present = [p for p in range(len(policies)) if policies[p] is not None]
    blind = {p for p in present if not getattr(policies[p], "uses_observations", True)}
    while live.any():
        masks = core.legal_action_mask(rules, state)
        observations = None if blind.issuperset(present) else encode(rules, state)
        acting = seats_of[np.arange(state.batch_size), state.current]
        actions = np.zeros(state.batch_size, dtype=np.int64)
        forfeits: dict[int, str] = {}
        for pid in present:
            rows = np.flatnonzero(live & (acting == pid))
            if rows.size == 0:
                continue
            policy = policies[pid]
            assert policy is not None
            if pid in blind or observations is None:
                seen = np.empty((rows.size, 0), dtype=np.float32)  # declared unused
            else:
                seen = observations[rows]
            chosen, bad = _safe_act(policy, seen, masks[rows])
            actions[rows] = chosen
            for r, why in bad.items():
                forfeits[int(rows[r])] = why
        if forfeits:
            rows = np.array(sorted(forfeits), dtype=np.int64)
            _record_forfeits(rules, state, rows, ids, forfeits, out)
            keep = np.ones(state.batch_size, dtype=bool)
            keep[rows] = False
            idx = np.flatnonzero(keep)
            state, ids, live = state.select(idx), ids[idx], live[idx]
            seats_of, actions = seats_of[idx], actions[idx]
            if state.batch_size == 0:
                break
        state = core.step(rules, state, actions, in_place=True)  # the loop owns its state
        now_live = state.live
        _record(rules, state, np.flatnonzero(live & ~now_live), ids, out)
        live = now_live
        n_live = int(np.count_nonzero(live))
        if n_live < state.batch_size * _COMPACT_BELOW:
            keep_rows = np.flatnonzero(live)
            state, ids, live = state.select(keep_rows), ids[keep_rows], live[keep_rows]
            seats_of = seats_of[keep_rows]
    return out


def _record(
    rules: Rules,
    state: core.UnoState,
    rows: npt.NDArray[np.int64],
    ids: npt.NDArray[np.int64],
    out: TableResults,
) -> None:
    if rows.size == 0:
        return
    games = ids[rows]
    out.ranks[games] = _competition_ranks(_order_keys(rules, state, rows))
    out.points[games] = state.hand_points[rows]
    out.cards_left[games] = state.hand_size[rows]
    out.turns[games] = state.turn[rows]
    out.end[games] = np.where(state.done[rows], END_WON, END_TRUNCATED)


def _record_forfeits(
    rules: Rules,
    state: core.UnoState,
    rows: npt.NDArray[np.int64],
    ids: npt.NDArray[np.int64],
    reasons: dict[int, str],
    out: TableResults,
) -> None:
    games = ids[rows]
    seat = state.current[rows].astype(np.int64)
    keys = _order_keys(rules, state, rows)  # live hands: seats still playing tie
    keys[np.arange(rows.size), seat] = np.inf
    out.ranks[games] = _competition_ranks(keys)
    out.cards_left[games] = state.hand_size[rows]
    out.turns[games] = state.turn[rows]
    out.end[games] = END_FORFEIT
    out.forfeit_seat[games] = seat
    for row, game in zip(rows, games, strict=True):
        out.reasons[int(game)] = reasons[int(row)]
