"""Batched learner tables: one learner seat per game, opponent policies play the other seats.

:class:`LearnerTables` is the machinery behind both single-agent envs: the Gymnasium env is
one table (B = 1), the SB3 ``VecEnv`` is B tables stepped together. After the learner's
action it lets the opponents act, batched across games, until every game is back at the
learner's decision (or over), pays the rewards of the hands that ended, and (with
``autoreset``) deals the next hands. All rules come from :mod:`uno_env.core`; observations
come from :func:`uno_env.observation.encode`, always from the learner's seat.

The opponents come in the forms of :mod:`uno_env.envs.opponents`, which also plays their
turns for the tables (:func:`~uno_env.envs.opponents.opponents_act` on the general path,
:class:`~uno_env.envs.opponents.CompiledOpponents` on the compiled one).

Two ways to play the opponents' turns, with the same results (same seed: same games,
observations and rewards):

* **Compiled** (:attr:`LearnerTables.compiled`): when every opponent policy has a compiled
  form (the random baselines, :data:`uno_env.learner_kernel.COMPILED_BOTS`) and no pool draws
  them, one compiled call per step (:func:`uno_env.learner_kernel.advance`) applies the
  learners' actions, plays the opponents' rounds and encodes the observations and masks;
  Python runs only when a hand ends (to pay it and deal the next).
* **General**: any other policy (a learned network, a search, a heuristic bot of
  ``unolab.agents``) is played as below.

A policy is called once per round with the sub-batch of games where one of its seats must
act (through :func:`uno_env.play.choose_actions`, the batched play loop every caller
shares); it sees each game from the acting seat, like any player. Policies therefore see
varying sub-batches and should keep no per-row memory; ``reset()`` is called on each whole
reset.

An opponent that fails (raises, returns malformed actions or an illegal one) raises
:class:`uno_env.play.PolicyError` naming it, the game, the seat and the legal actions. The
learner's action was already played by then and the table waits on the opponent's seat, so
the tables stop: every later call (``step``, ``observations``, ``action_masks``, ``state``)
raises :class:`TablesStoppedError` with the original error until :meth:`LearnerTables.reset`
deals new hands. They never continue silently from a half-played round.

The same holds for an interruption (Ctrl-C, ``SystemExit``) anywhere between the learner's
action and the learner's next decision, or in the middle of a reset: the interrupted call
re-raises it, and every later call raises :class:`TablesStoppedError`, asking for a reset,
instead of playing the learner's next action for an opponent's seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from uno_env import core
from uno_env.core import IllegalActionError, UnoState
from uno_env.envs import RewardFn, base_key, episode_words, resolve_reward
from uno_env.envs.common import REWARD_SCHEMES, SLOT_STRIDE
from uno_env.envs.opponents import CompiledOpponents, OpponentsSpec, as_policy, opponents_act
from uno_env.envs.table_inputs import (
    ResetNeededError,
    check_learner_seat,
    check_num_games,
    explicit_hands,
    opponent_lineup,
)
from uno_env.learner_kernel import COMPILED_REWARDS, REDEAL_LIMIT, WAITING, Autoreset
from uno_env.observation import encode
from uno_env.policy import MaskArray, ObsArray, Policy, PolicyFactory, Resettable
from uno_env.rules import Rules

__all__ = ["MAX_SILENT_REDEALS", "LearnerStep", "LearnerTables", "TablesStoppedError"]

MAX_SILENT_REDEALS = 1000
"""Hands of one game in a row that may end before the learner's first decision."""

_BOT_SEED_SALT = 0xB07
_NO_GAMES = np.zeros(0, dtype=np.int64)
_NO_OBSERVATIONS = np.zeros((0, 0), dtype=np.float32)


class TablesStoppedError(ResetNeededError):
    """The tables stopped after an opponent's error or an interruption; only ``reset()``
    deals them again."""


def _too_many_redeals(rules: Rules) -> RuntimeError:
    """The error of a game whose hands keep ending before its learner's first decision."""
    return RuntimeError(
        f"{MAX_SILENT_REDEALS} hands in a row ended before the learner's first decision "
        f"(max_turns={rules.max_turns} is too small?)"
    )


_MIDWAY = "interrupted in the middle of a round"
"""Why the tables are stopped while a round is being played (cleared when it completes)."""


@dataclass
class LearnerStep:
    """What one learner step (or reset) returns, one row per game.

    Attributes:
        observations: (B, OBS_DIM) the learner's view of its next decision; for a game that
            ended and was not dealt again (no autoreset), the view of the final state.
        rewards: (B,) the learner's reward (non-zero only when a hand ended).
        terminated: (B,) the hand ended with a winner.
        truncated: (B,) the hand hit ``max_turns``.
        finished: (k,) indices of the games whose hand ended in this step.
        terminal_observations: (k, OBS_DIM) the learner's view of those final states.
    """

    observations: ObsArray
    rewards: npt.NDArray[np.float32]
    terminated: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    finished: npt.NDArray[np.int64]
    terminal_observations: ObsArray


class LearnerTables:
    """B games, each with one learner seat and opponent policies in the other seats.

    Args:
        rules: The rules of every game.
        num_games: B.
        opponents: See the module docstring; ``None`` means the ``random`` baseline in every
            opponent seat.
        learner_seat: A fixed seat, or ``"random"``: drawn for each hand from the key schedule.
        reward: A scheme name of :data:`uno_env.envs.REWARD_SCHEMES` or a reward function.
        autoreset: Deal the next hand of a game as soon as one ends (the VecEnv). Without
            it, a finished game waits for :meth:`reset`.
        seed: Seed of the key schedule (``None``: fresh entropy at the first reset).

    Raises:
        ValueError: for a bad size, seat, reward scheme or opponent list.
        TypeError: for an opponent that is not a policy.
    """

    def __init__(
        self,
        rules: Rules,
        num_games: int | np.integer,
        opponents: OpponentsSpec = None,
        learner_seat: int | np.integer | Literal["random"] = "random",
        reward: str | RewardFn = "win_loss",
        autoreset: bool = True,
        seed: int | np.integer | None = None,
    ) -> None:
        self.num_games = check_num_games(num_games)
        self._fixed_seat = check_learner_seat(learner_seat, rules.num_players)
        self.rules = rules
        self.autoreset = autoreset
        self.reward_fn = resolve_reward(reward)
        specs, seat_policy, self._pool = opponent_lineup(opponents, rules.num_players)
        # Factories are built here, and rebuilt from the env's seed at each seed().
        self._factories = {i: f for i, f in enumerate(specs) if isinstance(f, PolicyFactory)}
        self.policies: list[Policy] = [
            spec() if isinstance(spec, PolicyFactory) else as_policy(spec) for spec in specs
        ]
        self._seat_policy = np.array([-1, *seat_policy], dtype=np.int64)
        # Per game: which policy plays the seat k places after the learner (column 0 unused).
        self._assign = np.tile(self._seat_policy, (self.num_games, 1))
        self._learner = np.zeros(self.num_games, dtype=np.int64)
        self._keys = np.zeros(self.num_games, dtype=np.uint64)
        self._episode = np.zeros(self.num_games, dtype=np.int64)
        self._base: np.uint64 | None = None
        self._state: UnoState | None = None
        self._obs: ObsArray | None = None
        self._slots = np.arange(self.num_games, dtype=np.int64)
        self._stopped: str | None = None
        self._masks: MaskArray | None = None
        self._compiled = CompiledOpponents(self.num_games, pooled=self._pool is not None)
        # The compiled loop pays the hands that end and deals the next ones itself when
        # it knows the reward scheme (see :meth:`seed`).
        self._reward_code = next(
            (
                code
                for code, name in enumerate(COMPILED_REWARDS)
                if self.reward_fn is REWARD_SCHEMES[name]
            ),
            None,
        )
        self._autoreset: Autoreset | None = None
        if seed is not None:
            self.seed(seed)

    # ------------------------------------------------------------------ properties

    @property
    def state(self) -> UnoState:
        """A copy of the current batch state (absolute seats; full information)."""
        return self._live_state().copy()

    @property
    def learner_seats(self) -> npt.NDArray[np.int64]:
        """The learner's seat in each game (a copy)."""
        return self._learner.copy()

    @property
    def game_keys(self) -> npt.NDArray[np.uint64]:
        """The key of each game's current hand (a copy): ``core.init(rules, keys=...)``."""
        return self._keys.copy()

    @property
    def over(self) -> npt.NDArray[np.bool_]:
        """Games whose hand is over and waits for :meth:`reset` (only without autoreset)."""
        return ~self._live_state().live

    @property
    def compiled(self) -> bool:
        """Whether the opponents are played by the compiled loop (see the module docstring)."""
        return self._compiled.plays(self.policies)

    @property
    def seeded(self) -> bool:
        """Whether a seed (or fresh entropy) has fixed the key schedule."""
        return self._base is not None

    def _live_state(self) -> UnoState:
        """The state, for a public call: refused while the tables are stopped."""
        if self._stopped is not None:
            raise TablesStoppedError(
                f"the env was {self._stopped}; call reset() before any other call (a "
                "half-played round cannot go on: the next action would be played for the "
                "wrong seat)"
            )
        return self._own_state()

    def _own_state(self) -> UnoState:
        """The state, for the tables' own use in the middle of a round."""
        if self._state is None:
            raise ResetNeededError("the games have not been dealt yet: call reset() first")
        return self._state

    def _advance_or_stop(
        self,
        fresh: npt.NDArray[np.bool_],
        result: LearnerStep | None,
        compiled: bool,
        status: int | None = None,
    ) -> None:
        """:meth:`_advance`, then let the tables go on; anything that stops it half-way
        (an opponent's error, Ctrl-C) leaves them stopped until :meth:`reset`.

        The caller set ``_stopped`` to :data:`_MIDWAY` before changing the state, so an
        interruption that arrives before this method's ``try`` stops the tables too.
        """
        try:
            self._advance(fresh, result, compiled, status)
        except Exception as err:
            # An opponent's error, or the reward function's at a hand's end.
            self._stopped = f"stopped after an error ({type(err).__name__}: {err})"
            raise
        except BaseException as err:  # KeyboardInterrupt, SystemExit, GeneratorExit
            self._stopped = f"interrupted ({type(err).__name__}) in the middle of a round"
            raise
        self._stopped = None

    # ------------------------------------------------------------------ seeding and resets

    def seed(self, seed: int | np.integer | np.random.Generator | None) -> None:
        """Restart the key schedule from ``seed`` (episodes count from 0 again).

        Opponents given as factories are rebuilt with seeds derived from it, so a seeded env
        replays exactly.
        """
        self._base = base_key(seed)
        self._episode[:] = 0
        if self.autoreset and self._reward_code is not None:
            self._autoreset = Autoreset(
                base=int(self._base),
                slot_stride=SLOT_STRIDE,
                fixed_seat=-1 if self._fixed_seat is None else self._fixed_seat,
                max_redeals=MAX_SILENT_REDEALS,
                hand_size=self.rules.hand_size,
                reward=self._reward_code,
                keys=self._keys,
                episodes=self._episode,
            )
        for i, factory in self._factories.items():
            self.policies[i] = factory(np.random.default_rng([int(self._base), _BOT_SEED_SALT, i]))

    def reset(
        self,
        keys: npt.ArrayLike | None = None,
        learner_seats: npt.ArrayLike | None = None,
    ) -> ObsArray:
        """Deal a new hand in every game and play the opponents up to the learner's turn.

        Args:
            keys: Explicit game keys (B,) instead of the key schedule's next ones.
            learner_seats: Explicit learner seats (B,) instead of the configured choice.

        Returns:
            The learner's observations, (B, OBS_DIM). A hand that ends before the learner's
            first decision is silently replaced by the next one of the schedule.
        """
        if self._base is None:
            self.seed(None)
        games = self._slots
        key_arr, seat_arr = explicit_hands(games, keys, learner_seats, self.rules.num_players)
        for policy in self.policies:
            if isinstance(policy, Resettable):
                policy.reset()
        self._stopped = _MIDWAY  # until the opponents have played up to the learner
        self._compiled.outputs = None  # new arrays, not those of a step cut short
        self._assign_hands(games, key_arr, seat_arr)
        self._state = core.init(self.rules, keys=self._keys)
        self._advance_or_stop(
            np.ones(self.num_games, dtype=bool), None, self._compiled.plays(self.policies)
        )
        return self.observations()

    def _assign_hands(
        self,
        games: npt.NDArray[np.int64],
        keys: npt.NDArray[np.uint64] | None = None,
        learner_seats: npt.NDArray[np.int64] | None = None,
    ) -> None:
        """Draw the next episode of ``games`` from the schedule: keys, learner seats, pool.

        Explicit ``keys`` and ``learner_seats`` (one per game) are checked by the caller
        (:func:`~uno_env.envs.table_inputs.explicit_hands`).
        """
        assert self._base is not None
        n_players = self.rules.num_players
        words = episode_words(self._base, games, self._episode[games], n_players + 1)
        self._episode[games] += 1
        self._keys[games] = words[:, 0] if keys is None else keys
        if learner_seats is not None:
            self._learner[games] = learner_seats
        elif self._fixed_seat is not None:
            self._learner[games] = self._fixed_seat
        else:
            self._learner[games] = (words[:, 1] % np.uint64(n_players)).astype(np.int64)
        if self._pool is not None:
            self._assign[games, 1:] = self._pool.sample(words[:, 2:]).reshape(games.size, -1)

    def _redeal(self, games: npt.NDArray[np.int64]) -> None:
        self._assign_hands(games)
        self._state = core.reset_games(
            self.rules, self._own_state(), games, self._keys[games], in_place=True
        )

    # ------------------------------------------------------------------ stepping

    def action_masks(self) -> MaskArray:
        """The learner's legal-action masks, (B, 80) bool, read-only (all False when over)."""
        state = self._live_state()
        if self._masks is not None:
            return self._masks
        return core.legal_action_mask(self.rules, state)

    def observations(self) -> ObsArray:
        """The learner's observations of the current states, (B, OBS_DIM)."""
        if self._obs is None:
            self._obs = encode(self.rules, self._live_state(), self._learner)
        return self._obs

    def step(
        self, actions: npt.ArrayLike, out: tuple[ObsArray, MaskArray] | None = None
    ) -> LearnerStep:
        """Apply the learner's actions, then let the opponents play up to its next decision.

        Args:
            actions: One action id per game, shape (B,).
            out: Arrays to write the learners' next observations, (B, OBS_DIM) float32, and
                masks, (B, 80) bool, into (C-ordered; a shared block's rows, say) instead of
                new ones: the compiled loop encodes into them, the general path copies. The
                result's observations are then ``out[0]``, and ``out[1]`` (made read-only:
                give views made for this step) is the tables' masks until the next step.

        Returns:
            The learner's next observations, rewards, end flags and terminal observations.

        Raises:
            IllegalActionError: if a learner action is illegal (the state is untouched).
            PolicyError: if an opponent fails; the tables then stop until :meth:`reset`.
            TablesStoppedError: if an opponent failed earlier, or a step or reset was
                interrupted (Ctrl-C), and :meth:`reset` was not called since.
            RuntimeError: if a game is over and waits for :meth:`reset` (no autoreset).
        """
        state = self._state
        if self._stopped is not None or state is None:
            state = self._live_state()  # raises, saying why
        if not self.autoreset and not state.live.all():
            raise ResetNeededError("the hand is over: call reset() before stepping again")
        n = self.num_games
        compiled = self._compiled.plays(self.policies)
        self._stopped = _MIDWAY  # until the opponents have played up to the learner
        status: int | None = None
        if (
            compiled
            and type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == (n,)
            and actions.flags.c_contiguous
        ):
            self._obs = self._masks = None
            self._compiled.outputs = out
            # One call: it clears ``reported`` first, and with the schedule it deals the
            # next hands too.
            status = self._play_compiled(actions, self._autoreset)
            if status < 0:
                self._stopped = None  # refused before anything changed
                self._refuse(state, actions)
        else:
            try:
                # The tables own their state (``state`` hands out copies): step it in place.
                self._state = core.step(self.rules, state, actions, in_place=True)
            except Exception as err:
                self._stopped = None  # refused before anything changed
                if isinstance(err, IllegalActionError):
                    raise IllegalActionError(f"learner action refused: {err}") from None
                raise
        rewards = np.zeros(n, dtype=np.float32)
        ended = np.zeros((2, n), dtype=bool)  # one allocation: terminated, truncated
        if status == WAITING and not self._compiled.buffers.finished_count[0]:
            # The whole step was one compiled call and no hand ended (the common step).
            self._stopped = None
            assert self._obs is not None
            terminal = _NO_OBSERVATIONS if self.autoreset else self._obs[:0]
            return LearnerStep(self._obs, rewards, ended[0], ended[1], _NO_GAMES, terminal)
        result = LearnerStep(
            _NO_OBSERVATIONS, rewards, ended[0], ended[1], _NO_GAMES, _NO_OBSERVATIONS
        )
        if status == WAITING:  # hands ended, paid and dealt again in the compiled call
            buffers = self._compiled.buffers
            finished = result.finished = buffers.finished.copy()
            rewards[finished] = buffers.rewards[finished]
            ended[:, finished] = buffers.ends[:, finished]
            result.terminal_observations = buffers.terminal[finished]
            self._stopped = None  # only now: an interruption above would lose the payouts
        else:
            self._advance_or_stop(np.zeros(n, dtype=bool), result, compiled, status)
        result.observations = self.observations()
        if out is not None and result.observations is not out[0]:
            # The general path, or Python dealt the hands that ended: copied in.
            out[0][...] = result.observations
            out[1][...] = self.action_masks()
            out[1].flags.writeable = False
            self._obs, self._masks = out
            result.observations = out[0]
        if not self.autoreset:
            result.terminal_observations = result.observations[result.finished]
        return result

    def _refuse(self, state: UnoState, actions: npt.NDArray[np.int64]) -> None:
        """Raise the core's error for the learner actions the compiled check refused."""
        try:
            core.step(self.rules, state, actions)  # names the game and the legal actions
        except IllegalActionError as err:
            raise IllegalActionError(f"learner action refused: {err}") from None
        raise AssertionError("the compiled loop refused learner actions that the core allows")

    def _play_compiled(
        self, actions: npt.NDArray[np.int64] | None, autoreset: Autoreset | None = None
    ) -> int:
        """One call of the compiled loop; when every game waits for its learner, the
        observations and masks it encoded are the tables' current ones.

        Raises:
            RuntimeError: if a game's hands kept ending before its learner's first decision
                (:data:`MAX_SILENT_REDEALS`); the caller stops the tables.
        """
        status, outputs = self._compiled.advance(
            self.rules, self._own_state(), self._learner, self._assign, actions, autoreset
        )
        if outputs is not None:
            self._obs, self._masks = outputs
        if status == REDEAL_LIMIT:
            err = _too_many_redeals(self.rules)
            self._stopped = f"stopped after an error (RuntimeError: {err})"
            raise err
        return status

    def _advance(
        self,
        fresh: npt.NDArray[np.bool_],
        result: LearnerStep | None,
        compiled: bool,
        status: int | None,
    ) -> None:
        """Let opponents act until each game waits for the learner; handle ended hands.

        The opponents play rounds until every game waits for its learner or is over; then
        the hands that ended are paid and (with autoreset) dealt again, all at once, and the
        new hands are played up to their learners in the same way.

        ``fresh`` marks the games dealt during this call: the learner has not acted in them,
        so a hand of theirs that ends is replaced silently instead of being reported.
        ``compiled`` chooses the compiled loop (:class:`CompiledOpponents`); ``status`` is what
        it returned when the caller already ran it with the learner's actions (None: the
        rounds start here).
        """
        reported = (
            self._compiled.buffers.reported if compiled else np.zeros(self.num_games, dtype=bool)
        )
        if status is None:
            self._obs = self._masks = None
            reported[:] = False
        redeals: npt.NDArray[np.int64] | None = None
        finished: list[npt.NDArray[np.int64]] = []
        terminal: list[ObsArray] = []
        while True:
            if compiled:
                if status is None:
                    status = self._play_compiled(None)
                if status == WAITING:
                    break
                status = None
            elif not self._play_rounds(reported):
                break
            # A hand ended that is not reported yet.
            state = self._own_state()
            idx = np.flatnonzero((state.phase == core.OVER) & ~reported)
            report = idx[~fresh[idx]]
            if report.size and result is not None:
                self._harvest(state, report, result)
                finished.append(report)
                if self.autoreset:
                    terminal.append(
                        self._compiled.buffers.terminal[report]
                        if compiled
                        else self._encode_rows(state, report)
                    )
            reported[report] = True
            again = idx if self.autoreset else idx[fresh[idx]]
            if again.size:
                if redeals is None:
                    redeals = np.zeros(self.num_games, dtype=np.int64)
                redeals[again] += 1
                if redeals.max() > MAX_SILENT_REDEALS:
                    raise _too_many_redeals(self.rules)
                self._redeal(again)
                fresh[again] = True
                reported[again] = False
        if result is not None and finished:
            result.finished = np.concatenate(finished)
            if self.autoreset:
                result.terminal_observations = np.concatenate(terminal)

    def _play_rounds(self, reported: npt.NDArray[np.bool_]) -> bool:
        """The general path: opponents' rounds until every game waits for its learner or
        is over; return whether a hand ended that is not ``reported`` yet."""
        while True:
            state = self._own_state()
            over = state.phase == core.OVER
            need = ~over & (state.current != self._learner)
            if not need.any():
                return bool((over & ~reported).any())
            self._state = opponents_act(
                self.rules, state, np.flatnonzero(need), self.policies, self._learner, self._assign
            )

    def _harvest(self, state: UnoState, games: npt.NDArray[np.int64], out: LearnerStep) -> None:
        table = self.reward_fn(self.rules, state)
        out.rewards[games] = table[games, self._learner[games]]
        out.terminated[games] = state.done[games]
        out.truncated[games] = state.truncated[games]

    def _encode_rows(self, state: UnoState, games: npt.NDArray[np.int64]) -> ObsArray:
        if games.size == self.num_games:
            return encode(self.rules, state, self._learner)
        return encode(self.rules, state.select(games), self._learner[games])
