"""
# UNO as text

A Gymnasium-style env for language models: one learner seat reads its decisions as text
and answers in text; opponent policies play the other seats inside ``step``. One episode
is one hand, as in :class:`~uno_env.envs.gym_env.UnoGymEnv`, on the same machinery
(:class:`~uno_env.envs.learner_tables.LearnerTables`): the same seed deals the same hands
and, with the same opponents, plays the same game.

| Import        | `uno_env.text_env(num_players=2, opponents="mixbot")`                     |
|---------------|----------------------------------------------------------------------------|
| Observation   | a prompt (`str`): `uno_env.text.prompt.decision_prompt` of the learner's view |
| Action        | any text; read by `uno_env.text.answers.parse_answer`                     |
| Reward        | the learner's, when the hand ends (`"win_loss"` by default)               |
| Agents        | one learner seat (fixed or drawn per hand); opponents play the others     |

### The exchange

``reset(seed=...)`` returns ``(prompt, info)``: the prompt of the learner's first decision
(the whole table), and ``info`` with ``system_prompt`` (the rules and answer forms, to send
as the system message), ``view`` (the learner's :func:`~uno_env.text.view.seat_view`),
``legal_actions`` (ids), ``legal_moves`` (notation), ``choices`` (the labels a model may
answer) and ``events`` (what happened before the first decision, in words).

``step(text)`` returns ``(prompt, reward, terminated, truncated, info)``. An answer that
names one legal move plays it; the opponents then play up to the learner's next decision,
whose prompt comes back. An invalid answer (no move, two moves, an illegal one) gets one
retry: the prompt returned is :func:`~uno_env.text.answers.retry_message` followed by the
same decision, and nothing is played. A second invalid answer plays the fallback
(:func:`~uno_env.text.answers.fallback_action`: ``draw``, else ``keep``, else the first
legal move). ``info`` says what happened: ``answer`` (the parse result), ``invalid``
(this answer was invalid), ``retry`` (the prompt is a retry), ``retries`` (retries used in
this decision), ``fallback`` (the fallback was played), ``action`` and ``move`` (what was
played, ``None`` on a retry), the episode's counts ``decisions``, ``invalid_answers`` and
``fallbacks``, and the keys of ``reset``'s info for the next decision.

With ``PromptOptions(view="changes")`` each prompt after the first tells what happened
since the learner's last decision (the narrator, :mod:`uno_env.narrate`, sees every step:
its own move's outcome, each opponent's move) and only the essentials of the table; with
``"full"`` every prompt states the whole table. ``info["events"]`` holds the narration in
both views.

### Opponents

As for the other envs (:mod:`uno_env.envs.opponents`): a policy, a callable, a
:class:`~uno_env.policy.PolicyFactory`, a list with one per opponent seat, or an
:class:`~uno_env.envs.opponents.OpponentPool`; and agent NAMES (``"mixbot"``,
``"random"``, a spec file), resolved through the ``uno_env.agents`` entry point that
uno-lab installs (``factory(name, rules)`` returns a ``PolicyFactory``, seeded from the
env's seed). A name with no resolver installed is one clear error.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.envs import RewardFn
from uno_env.envs.common import checked_seed
from uno_env.envs.learner_tables import LearnerTables
from uno_env.envs.opponents import OpponentPool, OpponentsSpec, as_policy
from uno_env.envs.table_inputs import ResetNeededError, check_options, explicit_hands
from uno_env.files import shown
from uno_env.narrate import Table, describe_deal, describe_step
from uno_env.observation import encode
from uno_env.policy import (
    ActArray,
    MaskArray,
    Policy,
    PolicyFactory,
    RandomBot,
    Resettable,
    Seed,
    StateSearcher,
    policy_name,
    reads_observations,
    searches_from_state,
)
from uno_env.rules import DEFAULT_NUM_PLAYERS, Rules, load_rules
from uno_env.text.answers import fallback_action, parse_answer, retry_message
from uno_env.text.prompt import Prompt, PromptOptions, decision_prompt, system_prompt
from uno_env.text.view import seat_view

__all__ = ["AGENT_RESOLVERS", "TextEnv", "resolve_agent_name", "text_env"]

AGENT_RESOLVERS = "uno_env.agents"
"""The entry-point group of agent-name resolvers: ``resolver(name, rules)`` returns a
:class:`~uno_env.policy.PolicyFactory` (uno-lab registers ``unolab.agents.resolve:policy_factory``)."""

Record = tuple[UnoState, int, int]
"""An opponent's decision: the state before it (B = 1), the seat, the action."""


def resolve_agent_name(name: str, rules: Rules) -> PolicyFactory:
    """The factory of the agent ``name``, from the installed resolvers of :data:`AGENT_RESOLVERS`.

    Raises:
        ValueError: when no resolver is installed, naming the agent; a resolver's own error
            (an unknown name) as it is.
    """
    found = sorted(entry_points(group=AGENT_RESOLVERS), key=lambda point: point.name)
    if not found:
        raise ValueError(
            f"opponent {name!r} is an agent name, but no package that resolves agent names "
            f"is installed (entry-point group {AGENT_RESOLVERS!r}): install uno-lab, or pass "
            "policies or PolicyFactory objects"
        )
    error: ValueError | None = None
    for point in found:
        try:
            factory = point.load()(name, rules)
        except ValueError as err:  # this resolver does not know the name: try the next
            error = err
            continue
        if not isinstance(factory, PolicyFactory):
            raise ValueError(
                f"the agent resolver {point.value!r} returned {shown(factory)} for {name!r}, "
                "not a PolicyFactory"
            )
        return factory
    assert error is not None
    raise error


class _Watched:
    """An opponent whose decisions the env records, to narrate every step.

    It acts from the state (``needs_state``), so the play loop hands it the game before
    each of its decisions; it decides as the wrapped policy would (from the state for a
    searcher, else from the acting seat's observation) and records the state and action.
    """

    needs_state = True
    uses_observations = False

    def __init__(self, policy: Policy, log: list[Record]) -> None:
        self.policy = policy
        self.name = policy_name(policy)
        self.log = log

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """The wrapped policy's ``act`` (the play loop calls :meth:`act_from_state`)."""
        return np.asarray(self.policy.act(observations, masks))

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """Decide as the wrapped policy, and record each row's state and action."""
        seat_arr = np.asarray(seats, dtype=np.int64)
        legal = core.legal_action_mask(rules, state) if masks is None else masks
        if searches_from_state(self.policy) and isinstance(self.policy, StateSearcher):
            actions = np.asarray(self.policy.act_from_state(rules, state, seat_arr, legal))
        else:
            observations = (
                encode(rules, state, seat_arr)
                if reads_observations(self.policy)
                else np.zeros((state.batch_size, 0), dtype=np.float32)
            )
            actions = np.asarray(self.policy.act(observations, legal))
        if actions.shape == (state.batch_size,):
            for row in range(state.batch_size):
                self.log.append(
                    (state.select(np.array([row])), int(seat_arr[row]), int(actions[row]))
                )
        return actions

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Reset the wrapped policy."""
        if isinstance(self.policy, Resettable):
            self.policy.reset(games)


def _watched_factory(factory: PolicyFactory, log: list[Record]) -> PolicyFactory:
    def build(seed: Seed) -> Policy:
        return _Watched(factory(seed), log)

    return PolicyFactory(factory.name, build)


class TextEnv:
    """UNO for one learner seat that reads and writes text; opponents act inside ``step``.

    Args:
        rules: A preset name, YAML path, mapping or :class:`~uno_env.rules.Rules`
            (``None``: official).
        opponents: See the module docstring; default ``"mixbot"`` in every opponent seat.
        options: How decisions are put (:class:`~uno_env.text.prompt.PromptOptions`).
        learner_seat: A fixed seat, or ``"random"`` (drawn for each hand from the seed).
        reward: ``"win_loss"`` (default), ``"points"``, or a reward function
            (:data:`uno_env.envs.REWARD_SCHEMES`).
        **rule_overrides: Rule fields on top of ``rules`` (e.g. ``num_players=4``).

    Raises:
        ValueError: for bad rules, options, seats or opponents (naming them).
        TypeError: for an opponent that is no policy.
    """

    def __init__(
        self,
        rules: str | Path | Mapping[str, Any] | Rules | None = None,
        opponents: OpponentsSpec = "mixbot",
        options: PromptOptions | None = None,
        learner_seat: int | np.integer | Literal["random"] = "random",
        reward: str | RewardFn = "win_loss",
        **rule_overrides: Any,
    ) -> None:
        self.rules = load_rules(rules, **rule_overrides)
        if options is None:
            options = PromptOptions()
        if not isinstance(options, PromptOptions):
            raise TypeError(f"options: expected a PromptOptions, got {shown(options)}")
        self.options = options
        self._log: list[Record] = []
        self.tables = LearnerTables(
            self.rules,
            1,
            self._watch(opponents),
            learner_seat=learner_seat,
            reward=reward,
            autoreset=False,
        )
        self.system_prompt = system_prompt(self.rules, self.options)
        self._prompt: Prompt | None = None
        self._info: dict[str, Any] = {}
        self._before: UnoState | None = None
        self._retries = 0
        self._over = True
        self._counts = {"decisions": 0, "invalid_answers": 0, "fallbacks": 0}

    # ------------------------------------------------------------------ opponents

    def _watch(self, opponents: OpponentsSpec) -> OpponentsSpec:
        """The opponents in the form given, each recorded by the env (names resolved)."""
        if isinstance(opponents, OpponentPool):
            pool = copy.copy(opponents)
            pool.policies = [self._watch_one(p) for p in opponents.policies]
            return pool
        if isinstance(opponents, Sequence) and not isinstance(opponents, (str, bytes)):
            return [self._watch_one(p) for p in opponents]
        return self._watch_one(opponents)

    def _watch_one(self, opponent: object) -> object:
        if opponent is None:  # the learner tables' default: the random baseline
            opponent = PolicyFactory(RandomBot.name, RandomBot)
        if isinstance(opponent, (str, Path)):
            opponent = resolve_agent_name(str(opponent), self.rules)
        if isinstance(opponent, PolicyFactory):
            return _watched_factory(opponent, self._log)
        return _Watched(as_policy(opponent), self._log)

    # ------------------------------------------------------------------ the episode

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current hand."""
        return int(self.tables.learner_seats[0])

    @property
    def state(self) -> UnoState:
        """A copy of the game (full information: for tests and tools, never for the model)."""
        return self.tables.state

    def reset(
        self, *, seed: int | np.integer | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Deal a hand and play the opponents up to the learner's first decision.

        Args:
            seed: Restart the key schedule (the same seed replays the same hands).
            options: ``{"key": game_key, "learner_seat": seat}``, both optional.

        Returns:
            The prompt of the learner's first decision (the whole table) and the info dict.
        """
        seed = checked_seed(seed)
        opts = check_options(options)
        explicit_hands(
            np.arange(1), opts.get("key"), opts.get("learner_seat"), self.rules.num_players
        )
        if seed is not None or not self.tables.seeded:
            self.tables.seed(seed)
        self._log.clear()
        self._over = True  # until the reset completes
        self.tables.reset(keys=opts.get("key"), learner_seats=opts.get("learner_seat"))
        state = self.tables.state
        key = int(state.key[0])
        records = [r for r in self._log if int(r[0].key[0]) == key]  # hands redealt dropped
        table = self._table()
        deal = records[0][0] if records else state
        events = [*describe_deal(self.rules, deal, table), *self._narrate(records, state, table)]
        self._counts = dict.fromkeys(self._counts, 0)
        self._over = False
        prompt, info = self._decision(state, events, since=())
        return prompt, info

    def step(self, text: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Read the learner's answer; play it (or retry once, then the fallback).

        Returns:
            ``(prompt, reward, terminated, truncated, info)``; see the module docstring.

        Raises:
            RuntimeError: (a ResetNeededError) when the hand is over or was never dealt.
        """
        if self._over or self._prompt is None or self._before is None:
            raise ResetNeededError("the hand is over: call reset() before stepping again")
        prompt = self._prompt
        answer = parse_answer(text, prompt)
        flags = {"answer": answer, "invalid": not answer.valid, "retry": False, "fallback": False}
        if not answer.valid:
            self._counts["invalid_answers"] += 1
            if self._retries == 0:
                self._retries = 1
                again = f"{retry_message(answer, prompt)}\n\n{prompt.text}"
                info = {
                    **self._info,
                    **flags,
                    **self._counts,
                    "retry": True,
                    "retries": 1,
                    "action": None,
                    "move": None,
                }
                return again, 0.0, False, False, info
            flags["fallback"] = True
            self._counts["fallbacks"] += 1
        action = answer.action if answer.action is not None else fallback_action(prompt)
        retries = self._retries
        self._counts["decisions"] += 1
        before = self._before
        learner = self.learner_seat
        self._log.clear()
        out = self.tables.step(np.array([action], dtype=np.int64))
        state = self.tables.state
        table = self._table()
        first_after = self._log[0][0] if self._log else state
        events = describe_step(self.rules, before, first_after, learner, action, table)
        events += self._narrate(list(self._log), state, table)
        terminated, truncated = bool(out.terminated[0]), bool(out.truncated[0])
        played = {"retries": retries, "action": action, "move": C.action_name(action)}
        if terminated or truncated:
            self._over = True
            text_out, info = self._ending(state, events)
        else:
            text_out, info = self._decision(state, events, since=events)
        info.update(flags)
        info.update(played)
        return text_out, float(out.rewards[0]), terminated, truncated, info

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ text

    def _table(self) -> Table:
        learner = self.learner_seat
        names = ["you" if s == learner else f"seat {s}" for s in range(self.rules.num_players)]
        return Table(names, listener=learner, colour=False)

    def _narrate(self, records: list[Record], final: UnoState, table: Table) -> list[str]:
        """The narrator's sentences for the recorded opponents' steps, in order."""
        lines: list[str] = []
        for i, (before, seat, action) in enumerate(records):
            after = records[i + 1][0] if i + 1 < len(records) else final
            lines += describe_step(self.rules, before, after, seat, action, table)
        return lines

    def _decision(
        self, state: UnoState, events: list[str], since: Sequence[str]
    ) -> tuple[str, dict[str, Any]]:
        events = [_sentence(line) for line in events]
        view = seat_view(self.rules, state, self.learner_seat)
        prompt = decision_prompt(
            view, self.options, [_sentence(line) for line in since] if since else ()
        )
        self._prompt = prompt
        self._before = state
        self._retries = 0
        self._info = {
            "system_prompt": self.system_prompt,
            "view": view,
            "legal_actions": prompt.actions,
            "legal_moves": list(view["legal_moves"]),
            "choices": dict(prompt.choices),
            "events": events,
            "learner_seat": self.learner_seat,
        }
        info = {
            **self._info,
            **self._counts,
            "answer": None,
            "invalid": False,
            "retry": False,
            "retries": 0,
            "fallback": False,
            "action": None,
            "move": None,
        }
        return prompt.text, info

    def _ending(self, state: UnoState, events: list[str]) -> tuple[str, dict[str, Any]]:
        events = [_sentence(line) for line in events]
        view = seat_view(self.rules, state, self.learner_seat)
        winner = view["winner"]
        if winner is None:
            end = f"The hand was stopped at {self.rules.max_turns} decisions: no winner."
        elif winner == view["seat"]:
            end = "The hand is over: you went out and won it."
        else:
            end = f"The hand is over: seat {winner} went out and won it."
        text = "\n".join(["What happened:", *(f"- {line}" for line in events), end])
        self._prompt = None
        self._info = {}
        info = {
            "system_prompt": self.system_prompt,
            "view": view,
            "legal_actions": [],
            "legal_moves": [],
            "choices": {},
            "events": events,
            "learner_seat": self.learner_seat,
            **self._counts,
        }
        return text, info


def _sentence(line: str) -> str:
    return line[:1].upper() + line[1:]


def text_env(
    num_players: int = DEFAULT_NUM_PLAYERS,
    opponents: OpponentsSpec = "mixbot",
    rules: str | Path | Mapping[str, Any] | Rules | None = None,
    options: PromptOptions | None = None,
    **kwargs: Any,
) -> TextEnv:
    """A :class:`TextEnv`: ``uno_env.text_env(num_players=2, opponents="mixbot")``.

    Args:
        num_players: Players at the table (on top of ``rules``).
        opponents: Names, policies or factories (see the module docstring).
        rules: A preset name, YAML path, mapping or Rules (``None``: official).
        options: How decisions are put (:class:`~uno_env.text.prompt.PromptOptions`).
        **kwargs: ``learner_seat``, ``reward`` and rule fields, as :class:`TextEnv` takes.
    """
    return TextEnv(rules, opponents=opponents, options=options, num_players=num_players, **kwargs)
