"""
# UNO

This environment follows the PettingZoo classic environments. One episode is one hand of
UNO, played by the batched uno-lab core (B = 1); the env only adapts it.

| Import             | `from uno_env import env, raw_env`                          |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete                                                    |
| Parallel API       | No                                                          |
| Manual Control     | No                                                          |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']` (2 to 10)      |
| Action Shape       | (1,)                                                        |
| Action Values      | Discrete(80)                                                |
| Observation Shape  | `observation`: (OBS_DIM,) float32; `action_mask`: (80,) int8 |
| Observation Values | see `uno_env.observation.OBS_LAYOUT`                        |

UNO for 2 to 10 players under the official rules or a house-rule preset: `env(rules=...)`
takes a preset name (any of `uno_env.rules.PRESETS`), a YAML path, a mapping or a `Rules`,
and rule fields as keyword arguments, e.g. `env(rules="official", num_players=2)`.

### Agents and turns

Agent `player_k` is seat k. `agent_selection` is always the seat the engine asks for a
decision, which is not only the player whose turn it is: the victim of a Wild Draw Four
decides to challenge or accept, the next seat to act may catch a missing UNO, and house
rules add out-of-turn decisions (jump-in). The same agent may act several times in a row
(after a draw, an UNO declaration or a catch, or after a two-player Skip).

### Observation space

A dict: `observation` is the flat float32 vector of `uno_env.observation.encode` from the
agent's own seat (its hand, the table, every seat's card count relative to it; never an
opponent's cards or the order of the draw pile), and `action_mask` is an int8 vector of
the 80 actions, with the legal actions of the agent that must act and all zeros for the
others.

### Action space

The 80 action ids of `docs/engine.md`: 0-51 play a coloured card, 52-59 play a wild naming
its colour, then draw, keep, challenge, accept, uno, catch, pass, name a colour, swap.

### Rewards

By default, win/loss at the end of the hand: +1 for the winner and -1/(n-1) for every other
player (zero-sum). `reward="points"` pays card points instead (`uno_env.envs.REWARD_SCHEMES`);
a custom reward function may be given. A hand truncated by the rules' `max_turns` gives 0
to everyone and sets every truncation flag.

### Illegal actions

By default (`illegal_action="terminate"`, as in PettingZoo's classic games) `env()` ends the
hand on an illegal action, as PettingZoo's `TerminateIllegalWrapper` does: the offender gets
`illegal_reward` (default -1), the others 0. With `illegal_action="raise"`, and in `raw_env`,
it raises `uno_env.IllegalActionError` naming the agent, the action and the legal actions;
the state is unchanged. What is no action id at all (an integer outside 0..79, a fractional
number, a bool, text, a list) is refused in every mode, as PettingZoo's
`AssertOutOfBoundsWrapper` refuses it: `IllegalActionError` (a `ValueError`) for a number,
`TypeError` for anything else, naming the action as given.

### Rendering

`render_mode="ansi"` returns a coloured text view of the table, `"human"` prints it after
every step. `render_view` chooses the seat whose view is shown: `None` (the seat that must
act), a seat number, or `"all"` (every hand, for debugging).

### Seeding

`reset(seed=s)` deals the hands of the shared key schedule (`uno_env.envs.episode_words`,
slot 0): hand e after the seeded reset is episode e, as in the Gymnasium env and slot 0 of
`UnoVecEnv`. `reset(options={"key": k})` deals the hand of game key `k`.

### Why no `max_cycles`

PettingZoo's `max_cycles_test` targets environments with a `max_cycles` argument that
truncates every agent after so many cycles, which is meaningful for parallel, real-time
games. UNO is a turn-based classic game without a parallel API: the length of a hand is
bounded by the game itself, through the rule `max_turns` (decisions per hand), which
truncates the hand for every agent, so the env has no `max_cycles` and the test does not
apply, as for the other classic environments.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger

from uno_env import core
from uno_env.config_values import check_switch
from uno_env.core import IllegalActionError, UnoState
from uno_env.core.setup import game_keys
from uno_env.envs import (
    RewardFn,
    action_space,
    base_key,
    episode_words,
    resolve_reward,
)
from uno_env.envs.common import action_id, masked_observation_space
from uno_env.envs.registration import (
    DEFAULT_ILLEGAL_ACTION,
    IllegalActionMode,
    check_illegal_action,
)
from uno_env.envs.render import (
    RENDER_MODES,
    check_render_mode,
    check_render_view,
    render_in_mode,
    render_table,
)
from uno_env.envs.table_inputs import ResetNeededError, check_max_iter, check_options
from uno_env.files import shown
from uno_env.observation import OBS_LAYOUT, encode
from uno_env.rules import Rules, load_rules

__all__ = ["env", "raw_env"]

ObsDict = dict[str, npt.NDArray[Any]]


_LEGAL = OBS_LAYOUT["legal_actions"]


def env(
    rules: str | Path | Mapping[str, Any] | Rules | None = None,
    *,
    illegal_action: IllegalActionMode = DEFAULT_ILLEGAL_ACTION,
    illegal_reward: float = -1.0,
    **kwargs: Any,
) -> AECEnv[str, ObsDict, int]:
    """Build the UNO AEC env with PettingZoo's usual wrappers.

    Args:
        rules: Preset name, YAML path, mapping or Rules (``None``: official).
        illegal_action: ``"terminate"`` (the default, PettingZoo's
            ``TerminateIllegalWrapper``: the hand ends and the offender gets
            ``illegal_reward``) or ``"raise"`` (an illegal action raises
            ``IllegalActionError`` naming it and the legal ones; the state is unchanged).
        illegal_reward: The offender's reward under ``"terminate"``.
        **kwargs: Passed to :class:`raw_env` (``reward``, ``render_mode``, ``render_view``,
            ``colour`` and rule fields such as ``num_players``).

    Raises:
        ValueError: for an unknown ``illegal_action``, or an ``illegal_reward`` that is no
            finite number (:func:`~uno_env.envs.registration.check_illegal_action`).
    """
    illegal_reward = check_illegal_action(illegal_action, illegal_reward)
    wrapped: AECEnv[str, ObsDict, int] = raw_env(rules, **kwargs)
    if illegal_action == "terminate":
        wrapped = _TerminateIllegal(wrapped, illegal_reward=illegal_reward)
    # No AssertOutOfBoundsWrapper: the env itself refuses what is no action id, in every
    # mode, with an error that names it as given (a bare assert would not).
    return _OrderEnforcing(wrapped)


class _TerminateIllegal(wrappers.BaseWrapper[str, ObsDict, int]):
    """PettingZoo's ``TerminateIllegalWrapper``, at no cost to a legal move.

    PettingZoo's wrapper reads the mask from the last observation it saw, and encodes one
    itself when the caller used ``last()``: a second observation per turn. The env already
    refuses an illegal action with the state unchanged, so this one steps and, on the
    refusal, ends the hand as PettingZoo's does: every agent done, the offender paid
    ``illegal_reward``, the others 0.
    """

    def __init__(self, env: AECEnv[str, ObsDict, int], illegal_reward: float) -> None:
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)
        self._raw: Any = env.unwrapped

    def step(self, action: int) -> None:
        raw = self._raw
        agent = raw.agent_selection
        if not (raw.terminations[agent] or raw.truncations[agent]):
            # What is no action id is the caller's bug, not a move: refused in every mode.
            action_id(action, f"{agent}: action")
        try:
            raw.step(action)
        except IllegalActionError:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.agents, 0)
            raw.rewards[agent] = self._illegal_reward
            raw._accumulate_rewards()
            raw._deads_step_first()


class _OrderEnforcing(wrappers.OrderEnforcingWrapper[str, ObsDict, int]):
    """PettingZoo's OrderEnforcingWrapper, with the same checks, read from the env directly.

    The inherited ``last``, ``step`` and ``agent_iter`` read the env's attributes through
    the wrappers' ``__getattr__`` chain, which costs more than a turn of the game; these
    read them from the env itself and keep every check of the original. A call before
    ``reset()`` raises :class:`~uno_env.envs.table_inputs.ResetNeededError` (a
    ``ValueError``), where PettingZoo's raises an ``AssertionError`` or ``AttributeError``.
    """

    def __init__(self, env: AECEnv[str, ObsDict, int]) -> None:
        super().__init__(env)
        self._raw: Any = env.unwrapped

    def step(self, action: int | np.integer | None) -> None:
        """Step the env, after the order checks of PettingZoo's wrapper."""
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before step()")
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _OrderEnforcingIterable:
        """The agents in turn, checking that each is stepped before the next (as PettingZoo).

        Raises:
            ValueError: for a ``max_iter`` that is no integer, named as given.
        """
        check_max_iter(max_iter)
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before agent_iter()")
        return _OrderEnforcingIterable(self, max_iter)

    def last(
        self, observe: bool = True
    ) -> tuple[ObsDict | None, float, bool, bool, dict[str, Any]]:
        """Observation, cumulative reward, terminated, truncated and info of the agent to act.

        Raises:
            ValueError: for an ``observe`` that is not True or False, or before ``reset()``.
        """
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before last()")
        observe = check_switch("observe", observe)
        # The env itself answers: the illegal-action wrapper in between changes no
        # observation, and each wrapper's attribute lookups would cost more than the turn.
        raw: AECEnv[str, ObsDict, int] = self.env.unwrapped
        return raw.last(observe)


class _OrderEnforcingIterable(
    wrappers.order_enforcing.AECOrderEnforcingIterable[str, ObsDict, int]
):
    def __iter__(self) -> _OrderEnforcingIterator:
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(
    wrappers.order_enforcing.AECOrderEnforcingIterator[str, ObsDict, int]
):
    """PettingZoo's iterator over the agents, reading the env's own attributes."""

    def __next__(self) -> str:
        wrapper: Any = self.env
        raw = wrapper._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not wrapper._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        wrapper._has_updated = False
        agent: str = raw.agent_selection
        return agent


class raw_env(AECEnv[str, ObsDict, int], EzPickle):
    """The UNO AEC env without wrappers (see the module docstring, the env card).

    Args:
        rules: Preset name, YAML path, mapping or Rules (``None``: official).
        reward: ``"win_loss"`` (default), ``"points"`` or a reward function.
        render_mode: ``"ansi"``, ``"human"`` or ``None``.
        render_view: Whose view ``render`` shows: ``None`` (the seat to act), a seat or
            ``"all"``.
        colour: Use ANSI colours when rendering.
        **rule_overrides: Rule fields on top of ``rules``.
    """

    metadata = {  # noqa: RUF012
        "render_modes": list(RENDER_MODES),
        "name": "uno_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: str | Path | Mapping[str, Any] | Rules | None = None,
        *,
        reward: str | RewardFn = "win_loss",
        render_mode: str | None = None,
        render_view: int | np.integer | Literal["all"] | None = None,
        colour: bool = True,
        **rule_overrides: Any,
    ) -> None:
        EzPickle.__init__(
            self,
            rules,
            reward=reward,
            render_mode=render_mode,
            render_view=render_view,
            colour=colour,
            **rule_overrides,
        )
        super().__init__()
        self.render_mode = check_render_mode(render_mode)
        self.rules = load_rules(rules, **rule_overrides)
        n_players = self.rules.num_players
        self.render_view = check_render_view(render_view, n_players)
        self.reward_fn = resolve_reward(reward)
        self.colour = check_switch("colour", colour)
        self.possible_agents = [f"player_{s}" for s in range(n_players)]
        self.agents = self.possible_agents[:]
        self._seat = {name: s for s, name in enumerate(self.possible_agents)}
        self._seat_array = {name: np.array([s]) for name, s in self._seat.items()}
        self._actions = np.zeros(1, dtype=np.int64)
        obs_space = masked_observation_space(self.rules)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self._base: np.uint64 | None = None
        self._episode = 0
        self._game: UnoState | None = None
        self.game_key = np.uint64(0)

    # ------------------------------------------------------------------ copies

    def __getstate__(self) -> dict[str, Any]:
        """The whole env, the hand in play included (``copy.deepcopy`` and ``pickle``).

        EzPickle's state holds only the constructor's arguments: a copy would be a new env
        that was never reset, without the hand, its agents or its rewards.
        """
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the env from :meth:`__getstate__` (a deep copy owns its arrays)."""
        self.__dict__.update(state)

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The Dict observation space of ``agent`` (one shared object)."""
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """Discrete(80)."""
        return self.action_spaces[self._check_agent(agent)]

    def _check_agent(self, agent: object) -> str:
        """``agent`` if it is one of the table's agents, else a ValueError naming it."""
        if not isinstance(agent, str) or agent not in self._seat:
            raise ValueError(
                f"agent: unknown agent {shown(agent)}; the agents are {self.possible_agents}"
            )
        return agent

    # ------------------------------------------------------------------ state

    @property
    def game_state(self) -> UnoState:
        """The core state of the hand (B = 1, absolute seats, full information).

        It is the env's live state, stepped in place: ``copy()`` it to keep a snapshot.
        """
        if self._game is None:
            raise ResetNeededError("call reset() before using the env")
        return self._game

    def _agent_of(self, seat: int) -> str:
        return self.possible_agents[seat]

    # ------------------------------------------------------------------ API

    def reset(
        self, seed: int | np.integer | None = None, options: dict[str, Any] | None = None
    ) -> None:
        """Deal a new hand.

        Args:
            seed: Restart the key schedule from this seed (hand e after it is episode e).
            options: ``{"key": game_key}`` deals that hand; other keys are ignored.

        Raises:
            ValueError: for a key that is not an integer in [0, 2**64) (nothing changes).
        """
        key = None
        opts = check_options(options)
        if "key" in opts:
            key = game_keys(opts["key"])
            if key.size != 1:
                raise ValueError(f"key must be an integer in [0, 2**64), got {shown(opts['key'])}")
        if seed is not None or self._base is None:
            self._base = base_key(seed)
            self._episode = 0
        if key is not None:
            self.game_key = np.uint64(key.reshape(()))
        else:
            words = episode_words(
                self._base, np.zeros(1, dtype=np.int64), np.array([self._episode]), 1
            )
            self.game_key = np.uint64(words[0, 0])
        self._episode += 1
        self._game = core.init(self.rules, keys=np.array([self.game_key], dtype=np.uint64))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self._agent_of(int(self._game.current[0]))
        self._skip_agent_selection = None
        if self.render_mode == "human":
            self.render()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable[str, ObsDict, int]:
        """The agents in turn, as PettingZoo's, with ``max_iter`` checked.

        Raises:
            ValueError: for a ``max_iter`` that is no integer, named as given.
        """
        return super().agent_iter(check_max_iter(max_iter))

    def observe(self, agent: str) -> ObsDict:
        """The agent's view: its observation vector and its action mask (zeros if not acting)."""
        game = self.game_state
        obs = encode(self.rules, game, self._seat_array[self._check_agent(agent)])[0]
        # The encoding's legal_actions field is the mask of the seat to act, zeros for others.
        return {"observation": obs, "action_mask": obs[_LEGAL].astype(np.int8)}

    def step(self, action: int | np.integer | None) -> None:
        """Apply the selected agent's action (``None`` for an agent that is done).

        Raises:
            uno_env.IllegalActionError: for an illegal action, or a number that is no action
                id (out of range, fractional), named as given (the state is unchanged).
            TypeError: for an action that is not a number (a bool, text, a list).
        """
        if self._game is None:
            raise ResetNeededError("reset() needs to be called before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game_state
        self._actions[0] = action_id(action, f"{agent}: action")
        try:
            # The hand's state is the env's own: step it in place (a copy per turn would cost
            # more than the step). Illegal actions are refused before anything changes.
            new = core.step(self.rules, game, self._actions, in_place=True)
        except IllegalActionError as err:
            raise IllegalActionError(f"{agent}: {err}") from None
        self._game = new
        self._cumulative_rewards[agent] = 0.0
        if new.phase[0] == core.OVER:
            table = self.reward_fn(self.rules, new)[0]
            self.rewards = {a: float(table[self._seat[a]]) for a in self.agents}
            if new.truncated[0]:
                self.truncations = dict.fromkeys(self.agents, True)
            else:
                self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
            self.agent_selection = self._agent_of(int(new.current[0]))
            self._deads_step_first()
        else:
            self.agent_selection = self._agent_of(int(new.current[0]))
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """Render the table (``ansi``: return the text; ``human``: print it)."""
        return render_in_mode(
            self.render_mode,
            lambda: render_table(
                self.rules,
                self.game_state,
                view=self.render_view,
                colour=self.colour,
                names=self.possible_agents,
            ),
        )

    def close(self) -> None:
        """Nothing to release."""
