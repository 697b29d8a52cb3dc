"""The learner tables' compiled loop: a learner step and the compiled bots' replies in one call.

When every opponent of :class:`~uno_env.envs.learner_tables.LearnerTables` has a compiled
form (:data:`uno_env.bot_kernels.COMPILED_BOTS`), one call of :func:`advance` applies the
learners' actions, lets the opponents act, round after round, until every game waits for
its learner again (or its hand is over), and encodes the learners' observations and masks
into the caller's arrays. When hands ended in the meantime it returns :data:`HAND_ENDED`
instead of encoding: paying them and dealing the next hands is the tables' own Python
(:class:`~uno_env.envs.learner_tables.LearnerTables`), shared with the general path, which
then calls :func:`advance` again, without actions, to play the new hands up to their
learners.

The rounds are those of the general path: in each round every game where an opponent must
act gets one decision, the policies in index order, each on its games in game order (see
:mod:`uno_env.bot_kernels` for why this gives the same draws), and all of the round's
decisions are applied after they are all made. So both paths play the same games from the
same seed. The rules are the core's (:mod:`uno_env.core.kernel`), the observation
:func:`uno_env.observation.encode_one`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env.bot_kernels import colour_choice, first_choice, needs_colour, next_uniform
from uno_env.core.kernel import (
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
)
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.observation import OBS_DIM, encode_one
from uno_env.rules import Rules

__all__ = ["HAND_ENDED", "WAITING", "TableBuffers", "advance"]

WAITING = 0
""":func:`advance` returned with every game at its learner's decision, observations filled."""
HAND_ENDED = 1
""":func:`advance` stopped because a hand ended that is not reported yet."""


class TableBuffers:
    """The work space of :func:`advance` for B games, allocated once.

    Args:
        num_games: B.

    Attributes:
        reported: (B,) bool: the games whose finished hand the caller has handled (read and
            written by the caller between calls).
        terminal: (B, OBS_DIM) float32: on :data:`HAND_ENDED`, the learner's observation of
            each ended game that is not reported yet (other rows are stale).
    """

    def __init__(self, num_games: int) -> None:
        self.reported = np.zeros(num_games, dtype=np.bool_)
        self.masks = np.empty((num_games, C.NUM_ACTIONS), dtype=np.bool_)
        self.options = np.empty((num_games, C.NUM_ACTIONS), dtype=np.bool_)
        self.rows = np.zeros(num_games, dtype=np.int64)
        self.chosen = np.zeros(num_games, dtype=np.int64)
        self.acting = np.zeros(num_games, dtype=np.int64)
        self.terminal = np.zeros((num_games, OBS_DIM), dtype=np.float32)
        self.no_actions = np.zeros(0, dtype=np.int64)


def advance(
    rules: Rules,
    state: UnoState,
    learner: npt.NDArray[np.int64],
    assign: npt.NDArray[np.int64],
    bots: npt.NDArray[np.int64],
    generators: npt.NDArray[np.int64],
    buffers: TableBuffers,
    actions: npt.NDArray[np.int64] | None,
    observations: npt.NDArray[np.float32],
    masks: npt.NDArray[np.bool_],
) -> int:
    """Apply the learners' ``actions`` (if given) and play the opponents, in place.

    Args:
        rules: The rules of the tables.
        state: The tables' own state, changed in place (its cached mask is cleared).
        learner: The learner's seat in each game, (B,).
        assign: Which policy plays the seat k places after the learner, (B, N); column 0
            is unused.
        bots: The compiled form of each policy (:mod:`uno_env.bot_kernels` codes).
        generators: Each policy's generator (:func:`uno_env.bot_kernels.generator_pointers`),
            (P, 2).
        buffers: The work space; ``buffers.reported`` marks the ended hands handled (all
            cleared when ``actions`` are given: a new step begins).
        actions: The learners' actions, C-contiguous int64 (B,), or None.
        observations: (B, OBS_DIM) float32, filled with the learners' observations on
            :data:`WAITING`.
        masks: (B, 80) bool, filled with the learners' legal actions on :data:`WAITING`.

    Returns:
        :data:`WAITING`, :data:`HAND_ENDED` (with ``buffers.terminal`` filled), or ``-1 - g`` for the first game ``g`` whose
        learner action is illegal (nothing is changed then).
    """
    status: int = _ADVANCE(
        rule_params(rules),
        arrays_of(state),
        scratch(),
        learner,
        assign,
        bots,
        generators,
        buffers.no_actions if actions is None else actions,
        buffers.reported,
        buffers.masks,
        buffers.options,
        buffers.rows,
        buffers.chosen,
        buffers.acting,
        buffers.terminal,
        observations,
        masks,
    )
    state.clear_mask_cache()
    return status


@jit
def _advance(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    learner: np.ndarray,
    assign: np.ndarray,
    bots: np.ndarray,
    generators: np.ndarray,
    actions: np.ndarray,
    reported: np.ndarray,
    work: np.ndarray,
    options: np.ndarray,
    rows: np.ndarray,
    chosen: np.ndarray,
    acting: np.ndarray,
    terminal: np.ndarray,
    observations: np.ndarray,
    masks: np.ndarray,
) -> int:
    """See :func:`advance` (``actions`` of length 0: none)."""
    n_games = learner.shape[0]
    n_players = r.num_players
    if actions.shape[0] == n_games:
        # Check every learner action first: an illegal one changes nothing.
        for g in range(n_games):
            reported[g] = False  # a new step: no hand of it has been reported
            if s.phase[g] != OVER:
                act = actions[g]
                fill_mask(r, s, g, work[g])
                if act < 0 or act >= C.NUM_ACTIONS or not work[g, act]:
                    return -1 - g
        for g in range(n_games):
            if s.phase[g] != OVER:
                apply_one(r, s, w, g, int(actions[g]))
    # The games where an opponent must act, in game order; a round can only shorten it.
    n_rows = 0
    for g in range(n_games):
        if s.phase[g] != OVER and s.current[g] != learner[g]:
            rows[n_rows] = g
            n_rows += 1
    while n_rows > 0:
        for i in range(n_rows):
            g = rows[i]
            acting[i] = assign[g, (int(s.current[g]) - learner[g]) % n_players]
        _round(r, s, w, bots, generators, work, options, rows[:n_rows], chosen, acting)
        kept = 0
        for i in range(n_rows):
            g = rows[i]
            if s.phase[g] != OVER and s.current[g] != learner[g]:
                rows[kept] = g
                kept += 1
        n_rows = kept
    ended = False
    for g in range(n_games):
        if s.phase[g] == OVER and not reported[g]:
            ended = True
            # The learner's view of the final state, for the caller to report.
            fill_mask(r, s, g, work[g])
            _encode_row(s, n_players, r.target_score, g, learner[g], work[g], terminal[g])
    if ended:
        return HAND_ENDED
    for g in range(n_games):
        fill_mask(r, s, g, masks[g])
        _encode_row(s, n_players, r.target_score, g, learner[g], masks[g], observations[g])
    return WAITING


@jit_inline
def _encode_row(
    s: StateArrays,
    n_players: int,
    target_score: int,
    g: int,
    seat: int,
    mask: np.ndarray,
    row: np.ndarray,
) -> None:
    """Zero ``row``, then encode game ``g`` from ``seat`` into it."""
    for i in range(row.shape[0]):
        row[i] = 0.0
    encode_one(s, n_players, target_score, g, seat, mask, row)


@jit
def _round(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    bots: np.ndarray,
    generators: np.ndarray,
    work: np.ndarray,
    options: np.ndarray,
    rows: np.ndarray,
    chosen: np.ndarray,
    acting: np.ndarray,
) -> None:
    """One decision in each game of ``rows``, by policy ``acting[i]``, then all applied."""
    for p in range(bots.shape[0]):
        code = bots[p]
        function, state = generators[p, 0], generators[p, 1]
        for i in range(rows.shape[0]):
            if acting[i] == p:
                fill_mask(r, s, rows[i], work[i])
                chosen[i] = first_choice(code, work[i], options[i], next_uniform(function, state))
        for i in range(rows.shape[0]):
            if acting[i] == p and needs_colour(code, chosen[i]):
                chosen[i] = colour_choice(options[i], chosen[i], next_uniform(function, state))
    for i in range(rows.shape[0]):
        apply_one(r, s, w, rows[i], int(chosen[i]))


_ADVANCE = Kernel(_advance)
