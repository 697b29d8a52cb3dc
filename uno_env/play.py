"""The one batched play loop: policies act at many tables, stepped together through the core.

Every caller that lets policies play goes through this module: evaluations
(:func:`unolab.agents.arena.play_games`), tournaments (:mod:`unolab.tournament.runner`) and the opponent
seats inside the learner envs (:mod:`uno_env.envs.learner_tables`).

* :func:`choose_actions` is one round: every live game gets one decision from the policy
  that holds its acting seat. It computes the legal-action masks and the acting seat's
  observation of every game once, then calls each policy once, on all the rows where it
  must act (so inference is batched across tables), and checks what comes back.
* :func:`play_tables` plays complete hands with it, one hand per row, and records how each
  ended. Finished games are dropped from the batch as it shrinks, so the long tail of slow
  games costs little.

Observations. A policy with the class attribute ``uses_observations = False`` gets arrays of
shape (rows, 0); when no policy of a round reads observations they are not encoded at all
(encoding is about 40% of the time of a game between fast bots).

Search agents. A policy with the class attribute ``needs_state = True`` (such as
``unolab.agents.pimc.PimcAgent``) is called as ``act_from_state(rules, games, seats, masks)``
instead of ``act``: ``games`` holds the rows where it acts (read-only: the table's own
state when it acts in every row) and ``seats`` their acting seats. Such a policy must read
only what the acting seat knows, by determinizing first (:func:`uno_env.core.determinize`).
Errors are handled as for ``act``.

Errors (``on_error``). A policy that raises, returns the wrong shape or a non-integer array,
or chooses an out-of-range or illegal action is either

* ``"raise"``: reported at once, as :class:`PolicyError` naming the policy, the game, the
  seat, the action and the legal ones (an ``IllegalActionError``, so callers that catch
  illegal actions catch it); an exception raised by the policy itself is wrapped in one,
  naming the policy, with the original chained as its cause; nothing is stepped; or
* ``"forfeit"``: isolated and forfeited. A failing call is retried on each half of its rows,
  recursively, down to single rows, so exactly the games whose row makes the policy fail
  are forfeited and the others go on (a randomised policy therefore sees the rows of a
  failed call again; this only happens after a failure). A forfeited game stops at once:
  the forfeiting seat is ranked last and the other seats tie above it (as in chess, a
  forfeit is a loss for the offender and a win for the others).

A policy whose ``reset`` raises (or one the caller could not build, passed as ``broken``)
cannot play at all: with ``"forfeit"`` every game where it sits is forfeited before the first
move (its first seat in the game forfeits, with the reason), and the other games are played
as usual; with ``"raise"`` a :class:`PolicyError` names it.

``KeyboardInterrupt`` and other ``BaseException`` are never caught.

Hooks. :func:`play_tables` hands each round to ``on_round`` before stepping it (a
:class:`Round`: the batch, the masks, who acts and what they chose), which may change the
actions or stop the play; ``on_ended`` sees each game's final state. Recorders, rollouts and
replays are such hooks on this one loop.

How hands end is recorded in :class:`uno_env.outcomes.TableResults`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import IllegalActionError, UnoState
from uno_env.observation import encode
from uno_env.outcomes import (
    TableResults,
    record_ended,
    record_forfeits,
)
from uno_env.policy import (
    Policy,
    StateSearcher,
    policy_name,
    reads_observations,
    searches_from_state,
)
from uno_env.rules import Rules

__all__ = [
    "ErrorPolicy",
    "PolicyError",
    "Round",
    "choose_actions",
    "play_tables",
]

ErrorPolicy = Literal["raise", "forfeit"]
"""What a policy's failure does: raise :class:`PolicyError`, or forfeit the offending seat."""

COMPACT_BELOW = 0.9
"""Drop finished games from the batch when fewer than this share are live (a copy of the
state costs far less than a step over dead rows)."""


class PolicyError(IllegalActionError):
    """A policy failed: it raised, returned malformed actions or chose an illegal one."""


@dataclass(frozen=True)
class Round:
    """One round of :func:`play_tables`, as its ``on_round`` hook sees it, before the step.

    Attributes:
        state: The batch the policies saw: the games still in play, and finished ones until
            the batch is next compacted. Read it only (the loop steps it in place next);
            ``state.select(rows)`` copies rows to keep.
        games: The game number of each row (an index into the results), (B,) int64.
        acting: Index into the policies of the policy acting in each row, -1 in finished
            games, (B,) int64.
        masks: The legal-action masks of ``state``, (B, 80) bool.
        actions: The chosen actions, (B,) int64 (0 in finished games). The hook may
            overwrite acting rows with other legal actions: the step plays this array.
    """

    state: UnoState
    games: npt.NDArray[np.int64]
    acting: npt.NDArray[np.int64]
    masks: npt.NDArray[np.bool_]
    actions: npt.NDArray[np.int64]


RoundHook = Callable[[Round], "bool | None"]
"""Called with every round before its step; returning ``False`` stops the play there."""

EndedHook = Callable[[UnoState, npt.NDArray[np.int64], npt.NDArray[np.int64]], object]
"""Called after a step with the state, the rows whose hand just ended and their game numbers."""


# ----------------------------------------------------------------------------------------
# One round: every acting seat decides
# ----------------------------------------------------------------------------------------


def _malformed(actions: npt.NDArray[np.generic], n_rows: int) -> str | None:
    if actions.shape != (n_rows,) or not np.issubdtype(actions.dtype, np.integer):
        return (
            f"act returned shape {actions.shape} dtype {actions.dtype}; expected ({n_rows},) "
            "integers"
        )
    if actions.dtype.kind == "u" and actions.size and actions.max() > np.iinfo(np.int64).max:
        # Past int64 an action would wrap to a negative number: name it as returned.
        return f"chose action {actions.max().item()}, which is out of range 0..{C.NUM_ACTIONS - 1}"
    return None


def _illegal_reason(action: int, mask: npt.NDArray[np.bool_]) -> str:
    legal = np.flatnonzero(mask)
    if not 0 <= action < C.NUM_ACTIONS:
        return (
            f"chose action {action}, which is out of range 0..{C.NUM_ACTIONS - 1}; "
            f"legal actions: {C.action_names(legal)}"
        )
    return (
        f"chose action {action} {C.action_name(action)!r}, which is not legal; "
        f"legal actions: {C.action_names(legal)}"
    )


def _call_policy(
    policy: Policy,
    observations: npt.NDArray[np.float32],
    masks: npt.NDArray[np.bool_],
    table: tuple[Rules, UnoState] | None,
) -> npt.NDArray[np.generic]:
    """The policy's actions: ``act``, or ``act_from_state`` for a policy that needs the state.

    ``table`` is the rules and the rows' games, given for policies with ``needs_state``.
    """
    if table is None:
        return np.asarray(policy.act(observations, masks))
    rules, games = table
    if not isinstance(policy, StateSearcher):
        raise TypeError(f"{policy_name(policy)} has needs_state but no act_from_state")
    return np.asarray(policy.act_from_state(rules, games, games.current.astype(np.int64), masks))


def _needs_state(policy: Policy) -> bool:
    """Whether the policy searches from the state (see the module docstring)."""
    return searches_from_state(policy)


def _call_isolating(
    policy: Policy,
    observations: npt.NDArray[np.float32],
    masks: npt.NDArray[np.bool_],
    table: tuple[Rules, UnoState] | None = None,
) -> tuple[npt.NDArray[np.int64], dict[int, str]]:
    """Call a policy; return its actions and the rows whose call fails, with the reason.

    A failing call is retried on each half of the rows, down to single rows.
    """
    n_rows = masks.shape[0]
    try:
        chosen = _call_policy(policy, observations, masks, table)
        problem = _malformed(chosen, n_rows)
        if problem is not None:
            raise TypeError(problem)
    except Exception as err:
        if n_rows == 1:
            return np.zeros(1, dtype=np.int64), {0: f"{type(err).__name__}: {err}"}
        half = n_rows // 2
        first_table = second_table = None
        if table is not None:
            first_table = (table[0], table[1].select(np.arange(half)))
            second_table = (table[0], table[1].select(np.arange(half, n_rows)))
        first, bad_first = _call_isolating(policy, observations[:half], masks[:half], first_table)
        second, bad_second = _call_isolating(
            policy, observations[half:], masks[half:], second_table
        )
        bad = {**bad_first, **{half + r: why for r, why in bad_second.items()}}
        return np.concatenate([first, second]), bad
    return chosen.astype(np.int64, copy=False), {}


def choose_actions(
    rules: Rules,
    state: UnoState,
    policies: Sequence[Policy | None],
    acting: npt.NDArray[np.int64],
    *,
    on_error: ErrorPolicy = "raise",
    game_ids: npt.NDArray[np.int64] | None = None,
    masks: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.int64], dict[int, str]]:
    """One decision in every game where a policy must act.

    Args:
        rules: The rules of the batch.
        state: The batch (only read).
        policies: The policies, by index.
        acting: Index into ``policies`` of the policy holding each game's acting seat, or
            -1 where no policy acts (finished games, or seats played by someone else), (B,).
        on_error: ``"raise"`` or ``"forfeit"`` (see the module docstring).
        game_ids: The number of each row's game, for messages (default: the row numbers).
        masks: The legal-action masks of ``state`` when the caller has them already.

    Returns:
        The actions (B,) int64 (0 where no policy acts or the row forfeits) and, with
        ``"forfeit"``, row -> reason for each forfeited row (always empty with ``"raise"``).

    Raises:
        PolicyError: with ``"raise"``, for the first failing policy.
    """
    if masks is None:
        masks = core.legal_action_mask(rules, state)
    actions = np.zeros(state.batch_size, dtype=np.int64)
    forfeits: dict[int, str] = {}
    counts = np.bincount(acting[acting >= 0], minlength=len(policies))
    present = np.flatnonzero(counts).tolist()
    if not present:
        return actions, forfeits
    reads = [p for p in present if reads_observations(policies[p])]
    observations = encode(rules, state) if reads else None
    for index in present:
        policy = policies[index]
        assert policy is not None, f"no policy at index {index}"
        rows = np.flatnonzero(acting == index)
        if observations is not None and index in reads:
            seen = observations if rows.size == state.batch_size else observations[rows]
        else:
            seen = np.empty((rows.size, 0), dtype=np.float32)  # declared unused
        row_masks = masks if rows.size == state.batch_size else masks[rows]
        table = None
        if _needs_state(policy):
            table = (rules, state if rows.size == state.batch_size else state.select(rows))
        if on_error == "forfeit":
            chosen, bad = _call_isolating(policy, seen, row_masks, table)
        else:
            try:
                returned = _call_policy(policy, seen, row_masks, table)
            except Exception as err:  # the policy's own bug: name it, keep the cause chained
                raise PolicyError(
                    f"policy {policy_name(policy)!r} raised {type(err).__name__}: {err}"
                ) from err
            problem = _malformed(returned, rows.size)
            if problem is not None:
                raise PolicyError(f"policy {policy_name(policy)!r}: {problem}")
            chosen, bad = returned.astype(np.int64, copy=False), {}
        in_range = (chosen >= 0) & (chosen < C.NUM_ACTIONS)
        legal = in_range & row_masks[np.arange(rows.size), np.where(in_range, chosen, 0)]
        legal[list(bad)] = True  # already forfeited, with their own reason
        for illegal in np.flatnonzero(~legal).tolist():
            bad[illegal] = _illegal_reason(int(chosen[illegal]), row_masks[illegal])
        if bad and on_error == "raise":
            first = min(bad)
            game = int(rows[first]) if game_ids is None else int(game_ids[rows[first]])
            seat = int(state.current[rows[first]])
            raise PolicyError(
                f"policy {policy_name(policy)!r} (game {game}, seat {seat}) {bad[first]}"
            )
        if bad:
            chosen = chosen.copy()
            chosen[list(bad)] = 0
            for row, why in bad.items():
                forfeits[int(rows[row])] = why
        actions[rows] = chosen
    return actions, forfeits


# ----------------------------------------------------------------------------------------
# Complete hands
# ----------------------------------------------------------------------------------------


def play_tables(
    rules: Rules,
    policies: Sequence[Policy | None],
    lineups: npt.NDArray[np.int64],
    keys: npt.NDArray[np.uint64] | None = None,
    *,
    state: UnoState | None = None,
    dealer: int | None = None,
    on_error: ErrorPolicy = "forfeit",
    first_game: int = 0,
    on_finished: Callable[[int], object] | None = None,
    on_round: RoundHook | None = None,
    on_ended: EndedHook | None = None,
    broken: Mapping[int, str] | None = None,
) -> TableResults:
    """Play one hand per row, seat ``s`` of game ``g`` held by ``policies[lineups[g, s]]``.

    Every game is dealt from its key (:func:`uno_env.core.init`), or play goes on from
    ``state``. All policies are ``reset`` first; a policy whose ``reset`` raises is treated
    like one listed in ``broken``.

    Args:
        rules: The rules of every game.
        policies: Policy by index (``None`` for indices no lineup uses).
        lineups: Policy index of each seat, (G, k).
        keys: The game keys, (G,); give either ``keys`` or ``state``.
        state: Games to play on from, (G,), instead of dealing new ones. The loop steps it
            in place until it first compacts the batch, so pass a copy to keep it. Games
            already over are recorded as they stand.
        dealer: The dealer seat of every game, or ``None`` to draw it from each game's key
            (as at a real table). Tournaments deal with seat ``k-1``, so seat 0 plays first.
        on_error: ``"forfeit"`` or ``"raise"`` (see the module docstring).
        first_game: The number of row 0's game, for messages.
        on_finished: Called with the number of hands that just ended (a progress bar).
        on_round: Called with each :class:`Round` before its step. It may overwrite
            actions; if it returns ``False`` play stops there, and the games still live are
            recorded as cut short (``END_TRUNCATED``).
        on_ended: Called after a step with the state, the rows whose hand just ended (won or
            truncated; forfeits are not stepped) and their game numbers (``0..G-1``).
        broken: Policy index -> why it cannot play (e.g. its factory raised). With
            ``"forfeit"`` every game where it sits is forfeited before the first move, with
            that reason; with ``"raise"`` a :class:`PolicyError` names it.

    Returns:
        The outcome of every hand, in row order.

    Raises:
        ValueError: if the lineups and keys (or state) do not fit the rules' table size, or
            not exactly one of ``keys`` and ``state`` is given.
        PolicyError: with ``on_error="raise"``, for the first failing policy (including a
            ``reset`` that raises, or a ``broken`` one).
    """
    n_games, n_players = lineups.shape
    if state is not None and keys is None:
        n_given: tuple[int, ...] = (state.batch_size,)
    elif keys is not None and state is None:
        n_given = keys.shape
    else:
        raise ValueError("give the games either as keys or as a state, not both or neither")
    if n_players != rules.num_players or n_given != (n_games,):
        raise ValueError(
            f"lineups {lineups.shape} and {n_given[0]} games do not fit {rules.num_players} seats"
        )
    out = TableResults.empty(n_games, n_players)
    if n_games == 0:
        return out
    failed = _reset_policies(policies, broken or {}, on_error)
    if state is None:
        state = core.init(rules, keys=keys, dealer=dealer)
    games = np.arange(n_games, dtype=np.int64)
    seats_of = lineups.astype(np.int64)
    live = state.live
    over = np.flatnonzero(~live)
    if over.size:  # games given already over
        record_ended(rules, state, over, games[over], out)
    if failed:
        blocked = np.isin(seats_of, list(failed))
        rows = np.flatnonzero(blocked.any(axis=1))
        if rows.size:
            seats = blocked[rows].argmax(axis=1)  # the first seat held by a failed policy
            reasons = [failed[int(seats_of[r, s])] for r, s in zip(rows, seats, strict=True)]
            record_forfeits(rules, state, rows, games[rows], reasons, out, seats=seats)
            if on_finished is not None:
                on_finished(rows.size)
            idx = np.flatnonzero(~blocked.any(axis=1))
            state, games, live, seats_of = state.select(idx), games[idx], live[idx], seats_of[idx]
    while live.any():
        acting = np.where(live, seats_of[np.arange(state.batch_size), state.current], -1)
        masks = core.legal_action_mask(rules, state)
        actions, forfeits = choose_actions(
            rules,
            state,
            policies,
            acting,
            on_error=on_error,
            game_ids=games + first_game,
            masks=masks,
        )
        if forfeits:
            rows = np.array(sorted(forfeits), dtype=np.int64)
            reasons = [forfeits[int(r)] for r in rows]
            record_forfeits(rules, state, rows, games[rows], reasons, out)
            if on_finished is not None:
                on_finished(rows.size)
            keep = np.ones(state.batch_size, dtype=bool)
            keep[rows] = False
            idx = np.flatnonzero(keep)
            state, games, live = state.select(idx), games[idx], live[idx]
            seats_of, actions, acting, masks = seats_of[idx], actions[idx], acting[idx], masks[idx]
            if state.batch_size == 0:
                break
        if on_round is not None and on_round(Round(state, games, acting, masks, actions)) is False:
            stopped = np.flatnonzero(live)
            record_ended(rules, state, stopped, games[stopped], out)
            break
        state = core.step(rules, state, actions, in_place=True)  # the loop owns its state
        now_live = state.live
        ended = np.flatnonzero(live & ~now_live)
        if ended.size:
            record_ended(rules, state, ended, games[ended], out)
            if on_ended is not None:
                on_ended(state, ended, games[ended])
            if on_finished is not None:
                on_finished(ended.size)
        live = now_live
        if np.count_nonzero(live) < state.batch_size * COMPACT_BELOW:
            keep_rows = np.flatnonzero(live)
            state, games, live = state.select(keep_rows), games[keep_rows], live[keep_rows]
            seats_of = seats_of[keep_rows]
    out.rewards[:] = core.winner_rewards(rules, out.winners)
    return out


def _reset_policies(
    policies: Sequence[Policy | None], broken: Mapping[int, str], on_error: ErrorPolicy
) -> dict[int, str]:
    """Reset every policy; return index -> reason for those that cannot play.

    Raises:
        PolicyError: with ``"raise"``, for the first policy that is broken or fails to reset.
    """
    failed = dict(broken)
    for index, policy in enumerate(policies):
        if policy is None or index in failed:
            continue
        try:
            policy.reset()
        except Exception as err:  # any failure of the policy's own code: isolate it
            failed[index] = f"reset raised {type(err).__name__}: {err}"
    if failed and on_error == "raise":
        index = min(failed)
        policy = policies[index]
        name = policy_name(policy) if policy is not None else f"#{index}"
        raise PolicyError(f"policy {name!r}: {failed[index]}")
    return failed
