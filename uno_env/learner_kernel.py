"""The learner tables' compiled loop: a learner step and the compiled bots' replies in one call.

When every opponent of :class:`~uno_env.envs.learner_tables.LearnerTables` has a compiled
form (:data:`COMPILED_BOTS`), one call of :func:`advance` applies the
learners' actions, lets the opponents act, round after round, until every game waits for
its learner again (or its hand is over), and encodes the learners' observations and masks
into the caller's arrays. When hands ended in the meantime it returns :data:`HAND_ENDED`
instead of encoding: paying them and dealing the next hands is the tables' own Python
(:class:`~uno_env.envs.learner_tables.LearnerTables`), shared with the general path, which
then calls :func:`advance` again, without actions, to play the new hands up to their
learners.

The rounds are those of the general path: in each round every game where an opponent must
act gets one decision, the policies in index order, each on its games in game order (the compiled forms below
say why this gives the same draws), and all of the round's
decisions are applied after they are all made. So both paths play the same games from the
same seed. The rules are the core's (:mod:`uno_env.core.kernel`), the observation
:func:`uno_env.observation.encode_one`.

**Compiled forms of the random baselines.** The random baselines of :mod:`uno_env.policy` (``random``, ``random_action``,
``random_any``) read only the legal-action masks, so compiled code can make their decisions
itself, one game at a time, with no Python per decision. :data:`COMPILED_BOTS` is the one
registry of such forms: a policy whose class is listed there (the class itself, not a
subclass, which may act otherwise) can be played by a compiled loop, such as the learner
tables' (:mod:`uno_env.envs.learner_tables`); any other policy is played through
:func:`uno_env.play.choose_actions`.

A compiled form decides exactly as the bot's ``act`` does, from the bot's own generator:
it draws the same uniforms, from the same NumPy bit generator (through its C entry
point, :func:`generator_pointers`), in the same order, when it is called on the same rows
in the same order. ``act`` draws one uniform per row for the first choice of a call, then
one per row that chose a wild for its colour (``random`` only); a compiled loop does the
same by making :func:`first_choice` for all the rows of a call before the
:func:`colour_choice` of the rows that need one.

The compiled code calls the bit generator without taking its lock: a generator must not be
drawn from by another thread while a compiled loop uses it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from uno_env import cards as C
from uno_env.core.kernel import (
    OVER,
    RuleParams,
    Scratch,
    StateArrays,
    UnoState,
    apply_one,
    arrays_of,
    deal_fresh,
    fill_mask,
    new_scratch,
    rule_params,
)
from uno_env.jit import Kernel, jit, jit_inline
from uno_env.observation import OBS_DIM, encode_one
from uno_env.policy import RandomActionBot, RandomAnyBot, RandomBot
from uno_env.rng import game_word
from uno_env.rules import Rules

__all__ = [
    "COMPILED_BOTS",
    "COMPILED_REWARDS",
    "HAND_ENDED",
    "RANDOM_ACTION",
    "RANDOM_ANY",
    "RANDOM_CARD",
    "REDEAL_LIMIT",
    "WAITING",
    "Autoreset",
    "BoundAdvance",
    "TableBuffers",
    "advance",
    "colour_choice",
    "compiled_bot",
    "first_choice",
    "generator_pointers",
    "needs_colour",
    "next_uniform",
]


RANDOM_ANY = 0
"""Code of :class:`~uno_env.policy.RandomAnyBot`: uniform over the legal actions."""
RANDOM_ACTION = 1
"""Code of :class:`~uno_env.policy.RandomActionBot`: uniform over the plays' action ids."""
RANDOM_CARD = 2
"""Code of :class:`~uno_env.policy.RandomBot`: a playable card uniformly, then a colour."""

COMPILED_BOTS: dict[type, int] = {
    RandomAnyBot: RANDOM_ANY,
    RandomActionBot: RANDOM_ACTION,
    RandomBot: RANDOM_CARD,
}
"""Policy class -> the code of its compiled form (:func:`first_choice`)."""

_UNIFORM_DRAW = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)
"""The C signature of a NumPy bit generator's ``next_double``."""


def compiled_bot(policy: object) -> int | None:
    """The code of ``policy``'s compiled form, or None if it has none.

    A policy has one when its class is in :data:`COMPILED_BOTS` (exactly: a subclass may
    override ``act``) and its ``rng`` is a NumPy generator.
    """
    code = COMPILED_BOTS.get(type(policy))
    if code is None or not isinstance(getattr(policy, "rng", None), np.random.Generator):
        return None
    return code


def generator_pointers(rng: np.random.Generator) -> tuple[int, int]:
    """The addresses of ``rng``'s ``next_double`` function and of its bit generator's state.

    :func:`next_uniform` draws from them; they stay valid while ``rng`` lives.
    """
    entry = rng.bit_generator.ctypes
    function = ctypes.cast(entry.next_double, ctypes.c_void_p).value
    assert function is not None
    return function, int(entry.state_address)


def next_uniform(function: int, state: int) -> float:
    """The next uniform in ``[0, 1)`` of a generator, as its ``random()`` draws it.

    Args:
        function: The address of the bit generator's ``next_double`` (:func:`generator_pointers`).
        state: The address of its state.
    """
    return float(_UNIFORM_DRAW(int(function))(int(state)))


def _next_double_intrinsic(typingctx: Any, function: Any, state: Any) -> Any:
    """Compiled: call ``next_double`` at address ``function`` on the state at ``state``."""
    del typingctx

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        del context, signature
        void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.DoubleType(), [void_p])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [builder.inttoptr(args[1], void_p)])

    return types.float64(function, state), codegen


_call_next_double: Any = intrinsic(_next_double_intrinsic)


@overload(next_uniform)
def _next_uniform_compiled(function: Any, state: Any) -> Any:
    """In compiled code, :func:`next_uniform` is a direct call of the C function."""
    if isinstance(function, types.Integer) and isinstance(state, types.Integer):
        # numba wants the implementation's annotations to be the overload's.
        def impl(function: Any, state: Any) -> Any:
            return _call_next_double(function, state)

        return impl
    return None


@jit_inline
def _pick_row(row: np.ndarray, u: float) -> int:
    """The ``floor(u * n)``-th true entry of ``row`` (0 if none): ``uniform_legal_actions``."""
    count = 0
    for action in range(row.shape[0]):
        count += int(row[action])
    if count == 0:
        return 0
    target = int(u * count)
    for action in range(row.shape[0]):
        target -= int(row[action])
        if target < 0:
            return action
    return 0


@jit_inline
def _force_free_actions(mask: np.ndarray, options: np.ndarray) -> None:
    """Declaring and catching are free: take them whenever offered (catching last, so first)."""
    for forced in (C.UNO, C.CATCH):
        if mask[forced]:
            for action in range(C.NUM_ACTIONS):
                options[action] = False
            options[forced] = True


@jit_inline
def first_choice(code: int, mask: np.ndarray, options: np.ndarray, u: float) -> int:
    """Bot ``code``'s choice in one game, from its legal ``mask`` and the uniform ``u``.

    For ``random`` (:data:`RANDOM_CARD`) a wild's four colour choices count as one option
    (its first column is returned) and ``options`` keeps the row's options for
    :func:`colour_choice`; ``options`` is work space for the other bots.
    """
    for action in range(C.NUM_ACTIONS):
        options[action] = mask[action]
    if code == RANDOM_ANY:
        return _pick_row(options, u)
    can_play = False
    for action in range(C.NUM_PLAY_ACTIONS):
        can_play |= mask[action]
    if code == RANDOM_ACTION:
        if can_play:
            options[C.DRAW] = False
            options[C.KEEP] = False
        _force_free_actions(mask, options)
        return _pick_row(options, u)
    # RANDOM_CARD: in its own turn a playable card is always played.
    if can_play and not mask[C.PASS]:
        for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
            options[action] = False
    _force_free_actions(mask, options)
    # Each wild's block of colour choices counts as one option, its first column.
    wild = False
    wild_draw_four = False
    for c in range(C.NUM_COLOURS):
        wild |= options[C.PLAY_WILD + c]
        wild_draw_four |= options[C.PLAY_WILD_DRAW_FOUR + c]
    count = int(wild) + int(wild_draw_four)
    for action in range(C.PLAY_WILD):
        count += int(options[action])
    for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
        count += int(options[action])
    if count == 0:
        return 0
    target = int(u * count)
    for action in range(C.PLAY_WILD):  # the options in id order, as the Python bot counts
        target -= int(options[action])
        if target < 0:
            return action
    target -= int(wild)
    if target < 0:
        return C.PLAY_WILD
    target -= int(wild_draw_four)
    if target < 0:
        return C.PLAY_WILD_DRAW_FOUR
    for action in range(C.NUM_PLAY_ACTIONS, C.NUM_ACTIONS):
        target -= int(options[action])
        if target < 0:
            return action
    return 0


# The walk above takes the action ids in this order: the coloured plays, the two wilds'
# blocks, then the other actions.
assert C.PLAY_WILD_DRAW_FOUR == C.PLAY_WILD + C.NUM_COLOURS
assert C.NUM_PLAY_ACTIONS == C.PLAY_WILD_DRAW_FOUR + C.NUM_COLOURS


@jit_inline
def needs_colour(code: int, action: int) -> bool:
    """Whether bot ``code``'s first choice ``action`` still needs :func:`colour_choice`."""
    return code == RANDOM_CARD and (action == C.PLAY_WILD or action == C.PLAY_WILD_DRAW_FOUR)


@jit_inline
def colour_choice(options: np.ndarray, first: int, u: float) -> int:
    """The wild's play with a colour drawn uniformly among its options, from ``u``."""
    return first + _pick_row(options[first : first + C.NUM_COLOURS], u)


WAITING = 0
""":func:`advance` returned with every game at its learner's decision, observations filled."""
HAND_ENDED = 1
""":func:`advance` stopped because a hand ended that is not reported yet."""
REDEAL_LIMIT = 2
""":func:`advance` stopped because the hands of one game ended before its learner's first
decision more often in a row than :attr:`Autoreset.max_redeals` allows."""

_NO_REWARD = -1
COMPILED_REWARDS = ("win_loss",)
"""The reward schemes (:data:`uno_env.envs.REWARD_SCHEMES` names) whose compiled forms
:func:`advance` pays itself when it deals the next hands (:class:`Autoreset`); its code is
the name's index."""


class Autoreset:
    """The key schedule of a batch of learner tables, for :func:`advance` to pay the hands
    that end and deal the next ones itself, in the same call.

    Game ``g``'s next hand takes the random words of stream ``g * slot_stride +
    episodes[g]`` of key ``base`` (:func:`uno_env.rng.game_word`): word 0 is its game key,
    word 1 its learner's seat (modulo the number of seats) unless the seat is fixed. This
    is the schedule of :func:`uno_env.envs.episode_words`; the arrays are the tables' own,
    updated in place.

    Args:
        base: The schedule's base key.
        slot_stride: The distance between two games' streams.
        fixed_seat: The learner's seat in every hand, or -1 for a seat drawn per hand.
        max_redeals: How many hands of one game in a row may end before its learner's first
            decision.
        hand_size: Cards dealt to each seat.
        reward: The reward scheme's code (its index in :data:`COMPILED_REWARDS`).
        keys: (B,) uint64, each game's current key.
        episodes: (B,) int64, each game's number of hands dealt so far.
    """

    def __init__(
        self,
        base: int,
        slot_stride: int,
        fixed_seat: int,
        max_redeals: int,
        hand_size: int,
        reward: int,
        keys: npt.NDArray[np.uint64],
        episodes: npt.NDArray[np.int64],
    ) -> None:
        self.base = np.uint64(base)
        self.slot_stride = np.uint64(slot_stride)
        self.fixed_seat = int(fixed_seat)
        self.max_redeals = int(max_redeals)
        self.hand_size = int(hand_size)
        self.reward = int(reward)
        self.keys = keys
        self.episodes = episodes


class TableBuffers:
    """The work space of :func:`advance` for B games, allocated once.

    Args:
        num_games: B.

    Attributes:
        reported: (B,) bool: the games whose finished hand the caller has handled (read and
            written by the caller between calls).
        terminal: (B, OBS_DIM) float32: on :data:`HAND_ENDED`, the learner's observation of
            each ended game that is not reported yet (other rows are stale); after an
            :class:`Autoreset`, that of each game of :attr:`finished`.
        rewards: (B,) float32: after an :class:`Autoreset`, the learner's reward in each game
            of :attr:`finished` (other rows are stale).
        ends: (2, B) bool: likewise, whether each such hand was won (row 0) or cut by
            ``max_turns`` (row 1).
    """

    def __init__(self, num_games: int) -> None:
        self.reported = np.zeros(num_games, dtype=np.bool_)
        self.masks = np.empty((num_games, C.NUM_ACTIONS), dtype=np.bool_)
        self.options = np.empty((num_games, C.NUM_ACTIONS), dtype=np.bool_)
        self.rows = np.zeros((_INT_ROWS, num_games), dtype=np.int64)
        self.terminal = np.zeros((num_games, OBS_DIM), dtype=np.float32)
        self.no_actions = np.zeros(0, dtype=np.int64)
        self.finished_count = np.zeros(1, dtype=np.int64)
        self.rewards = np.zeros(num_games, dtype=np.float32)
        self.ends = np.zeros((2, num_games), dtype=np.bool_)
        self.deal_keys = np.zeros(num_games, dtype=np.uint64)

    @property
    def finished(self) -> npt.NDArray[np.int64]:
        """After :func:`advance` dealt the next hands itself, the games whose hand ended in
        the step, in game order (a view: copy what you keep). Each one's reward is in
        ``rewards``, its end in ``ends`` (terminated, truncated) and its learner's view of the
        final state in ``terminal``."""
        return self.rows[_FINISHED, : int(self.finished_count[0])]


_ROUND_GAMES, _CHOSEN, _ACTING, _FINISHED, _REDEALS, _DEALT = range(6)
_INT_ROWS = 6
"""The rows of :attr:`TableBuffers.rows`: the games where an opponent acts, each one's
choice and policy, the finished games, each game's deals in this call, the games to deal."""


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
    autoreset: Autoreset | None = None,
) -> int:
    """Apply the learners' ``actions`` (if given) and play the opponents, in place.

    Args:
        rules: The rules of the tables.
        state: The tables' own state, changed in place (its cached mask is cleared).
        learner: The learner's seat in each game, (B,) (changed in place by ``autoreset``).
        assign: Which policy plays the seat k places after the learner, (B, N); column 0
            is unused.
        bots: The compiled form of each policy (:mod:`uno_env.learner_kernel` codes).
        generators: Each policy's generator (:func:`uno_env.learner_kernel.generator_pointers`),
            (P, 2).
        buffers: The work space; ``buffers.reported`` marks the ended hands handled (all
            cleared when ``actions`` are given: a new step begins).
        actions: The learners' actions, C-contiguous int64 (B,), or None.
        observations: (B, OBS_DIM) float32, filled with the learners' observations on
            :data:`WAITING`.
        masks: (B, 80) bool, filled with the learners' legal actions on :data:`WAITING`.
        autoreset: With ``actions``: pay each hand that ends and deal the game's next hand
            from this schedule, in the same call, until every game waits for its learner
            (the ended games are then ``buffers.finished``; a hand that ends before its
            learner's first decision is dealt again silently). None: stop at the first
            ended hand with :data:`HAND_ENDED`.

    Returns:
        :data:`WAITING`, :data:`HAND_ENDED` (with ``buffers.terminal`` filled),
        :data:`REDEAL_LIMIT`, or ``-1 - g`` for the first game ``g`` whose learner action is
        illegal (nothing is changed then).
    """
    bound = BoundAdvance(rules, state, learner, assign, bots, generators, buffers, autoreset)
    return bound(actions, observations, masks)


class BoundAdvance:
    """:func:`advance` for one batch of tables, with every argument but the learners'
    actions and the outputs gathered once: the form a step calls, where gathering some
    thirty arguments each time would cost more than the compiled call's own work at one
    table.

    It holds the arrays it was given (the tables' own, changed in place) and a work space of
    its own, so it stays valid while those arrays are the batch's: bind again when the
    state object, the policies' generators, the learner seats' array or the schedule
    change (an owner's ``assign`` array must stay the one it was bound with). It must not be called
    from two threads at once (nor may the tables be stepped so).

    Args:
        rules, state, learner, assign, bots, generators, buffers, autoreset: As for
            :func:`advance`.
    """

    def __init__(
        self,
        rules: Rules,
        state: UnoState,
        learner: npt.NDArray[np.int64],
        assign: npt.NDArray[np.int64],
        bots: npt.NDArray[np.int64],
        generators: npt.NDArray[np.int64],
        buffers: TableBuffers,
        autoreset: Autoreset | None = None,
    ) -> None:
        self.state = state
        self.learner = learner
        self.generators = generators
        self.autoreset = autoreset
        fixed = (
            rule_params(rules),
            arrays_of(state),
            new_scratch(),
            learner,
            assign,
            bots,
            generators,
            buffers.reported,
            buffers.masks,
            buffers.options,
            buffers.rows,
            buffers.terminal,
            buffers.finished_count,
            buffers.rewards,
            buffers.ends,
            buffers.deal_keys,
        )
        self._stepping = fixed + _schedule(autoreset or _NO_AUTORESET)
        self._playing = fixed + _schedule(_NO_AUTORESET)
        self._no_actions = buffers.no_actions
        self._entry = _ADVANCE.compiled(
            *self._playing, self._no_actions, buffers.terminal, buffers.masks
        )

    def __call__(
        self,
        actions: npt.NDArray[np.int64] | None,
        observations: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> int:
        """:func:`advance` with these actions and outputs (see there)."""
        if actions is None:
            status: int = self._entry(*self._playing, self._no_actions, observations, masks)
        else:
            status = self._entry(*self._stepping, actions, observations, masks)
        self.state.clear_mask_cache()
        return status


def _schedule(plan: Autoreset) -> tuple[Any, ...]:
    return (
        plan.reward,
        plan.base,
        plan.slot_stride,
        plan.fixed_seat,
        plan.max_redeals,
        plan.hand_size,
        plan.keys,
        plan.episodes,
    )


_NO_AUTORESET = Autoreset(
    0, 0, -1, 0, 0, _NO_REWARD, np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
)


@jit
def _advance(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    learner: np.ndarray,
    assign: np.ndarray,
    bots: np.ndarray,
    generators: np.ndarray,
    reported: np.ndarray,
    work: np.ndarray,
    options: np.ndarray,
    rows: np.ndarray,
    terminal: np.ndarray,
    finished_count: np.ndarray,
    rewards: np.ndarray,
    ends: np.ndarray,
    deal_keys: np.ndarray,
    reward: int,
    base: np.uint64,
    slot_stride: np.uint64,
    fixed_seat: int,
    max_redeals: int,
    hand_size: int,
    keys: np.ndarray,
    episodes: np.ndarray,
    actions: np.ndarray,
    observations: np.ndarray,
    masks: np.ndarray,
) -> int:
    """See :func:`advance` (``actions`` of length 0: none; ``reward`` -1:
    no autoreset)."""
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
    dealing = reward != _NO_REWARD
    redeals = rows[_REDEALS]
    n_finished = 0
    if dealing:
        for g in range(n_games):
            redeals[g] = 0
    while True:
        _play_rounds(r, s, w, learner, assign, bots, generators, work, options, rows)
        ended = False
        for g in range(n_games):
            if s.phase[g] == OVER and not reported[g]:
                ended = True
                if not dealing or redeals[g] == 0:
                    # The learner's view of the final state, to report.
                    fill_mask(r, s, g, work[g])
                    _encode_row(s, n_players, r.target_score, g, learner[g], work[g], terminal[g])
        if not ended:
            break
        if not dealing:
            return HAND_ENDED
        n_deals = 0
        for g in range(n_games):
            if s.phase[g] != OVER:
                continue
            if redeals[g] == 0:  # the learner acted in this hand: it is reported
                rows[_FINISHED, n_finished] = g
                n_finished += 1
                rewards[g] = _learner_reward(r, s, g, learner[g], reward)
                ends[0, g] = s.done[g]
                ends[1, g] = s.truncated[g]
            redeals[g] += 1
            if redeals[g] > max_redeals:
                finished_count[0] = n_finished
                return REDEAL_LIMIT
            rows[_DEALT, n_deals] = g
            n_deals += 1
        for i in range(n_deals):
            g = rows[_DEALT, i]
            stream = np.uint64(g) * slot_stride + np.uint64(episodes[g])
            episodes[g] += 1
            keys[g] = game_word(base, stream, np.uint64(0))
            if fixed_seat < 0:
                learner[g] = int(game_word(base, stream, np.uint64(1)) % np.uint64(n_players))
            deal_keys[i] = keys[g]
        deal_fresh(r, s, w, rows[_DEALT, :n_deals], deal_keys[:n_deals], hand_size)
    finished_count[0] = n_finished
    for g in range(n_games):
        fill_mask(r, s, g, masks[g])
        _encode_row(s, n_players, r.target_score, g, learner[g], masks[g], observations[g])
    return WAITING


@jit_inline
def _learner_reward(r: RuleParams, s: StateArrays, g: int, seat: int, reward: int) -> float:
    """The learner's reward for game ``g``'s ended hand under the compiled scheme ``reward``
    (:data:`COMPILED_REWARDS`): ``win_loss`` is :func:`uno_env.core.hand_rewards`' rule."""
    if not s.done[g]:
        return 0.0  # a hand cut by max_turns pays nothing
    winner = s.winner[g]
    if r.teams:
        return 1.0 if seat == winner or seat == (winner + 2) % 4 else -1.0
    return 1.0 if seat == winner else -1.0 / (r.num_players - 1)


@jit_inline
def _play_rounds(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    learner: np.ndarray,
    assign: np.ndarray,
    bots: np.ndarray,
    generators: np.ndarray,
    work: np.ndarray,
    options: np.ndarray,
    rows: np.ndarray,
) -> None:
    """The opponents' rounds until every game waits for its learner or is over."""
    n_players = r.num_players
    games = rows[_ROUND_GAMES]
    chosen = rows[_CHOSEN]
    acting = rows[_ACTING]
    # The games where an opponent must act, in game order; a round can only shorten it.
    n_rows = 0
    for g in range(learner.shape[0]):
        if s.phase[g] != OVER and s.current[g] != learner[g]:
            games[n_rows] = g
            n_rows += 1
    while n_rows > 0:
        for i in range(n_rows):
            g = games[i]
            acting[i] = assign[g, (int(s.current[g]) - learner[g]) % n_players]
        _round(r, s, w, bots, generators, work, options, games[:n_rows], chosen, acting)
        kept = 0
        for i in range(n_rows):
            g = games[i]
            if s.phase[g] != OVER and s.current[g] != learner[g]:
                games[kept] = g
                kept += 1
        n_rows = kept


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
