"""A language model (or a Python function from chat messages to text) as an UNO player.

:class:`LLMAgent` acts from the state (``needs_state``, see :mod:`uno_env.play`): for each
row it builds what the acting seat may know (:func:`uno_env.text.view.seat_view`), puts the
decision to the model (:func:`uno_env.text.prompt.decision_prompt`, after the rules in a
system message), reads the answer (:func:`uno_env.text.answers.parse_answer`) and plays it.

* **Invalid answers.** An answer that names no legal move, or two, gets one retry with the
  reason (:func:`~uno_env.text.answers.retry_message`); a second invalid answer plays the
  documented fallback (:func:`~uno_env.text.answers.fallback_action`: ``draw`` when it is
  legal, else ``keep``, else the first legal move). Both are counted.
* **Views.** ``"full"``: every decision is the system message and the whole table, with no
  memory. ``"changes"``: one conversation per game and seat (by ``(state.key[g], seat)``):
  the system message and the whole table once, then only what changed since the seat's
  last decision (:func:`~uno_env.text.view.changes_between`). Two games of one deal (the
  same key, as a tournament's duplicate deals are) where the agent holds the same seat
  cannot be told apart by the agent: once it sees two (in one call, or a decision off the
  conversation's last), those games get the ``"full"`` view; before that their prompts may
  tell what happened in the other game, so ``"full"`` is the safe view when one agent plays
  a deal twice at once.
* **Concurrency.** The play loop hands the agent the rows of many tables at once; their
  requests go out ``concurrency`` at a time from a thread pool the agent owns. The actions
  come back in row order and depend only on the answers.
* **Records and replay.** :meth:`LLMAgent.record_to` writes a JSON line per decision
  (:mod:`unolab.agents.llm.records`); :meth:`LLMAgent.use_cache` answers the prompts a
  :class:`~unolab.agents.llm.records.DecisionCache` holds without asking the model.
* **Telemetry.** :meth:`LLMAgent.telemetry`: decisions, invalid answers, retries,
  fallbacks, timeouts, transport retries, latency, tokens.

**When the endpoint fails.** A request whose transport retries run out, or that the
endpoint refuses, fails its decision: ``act_from_state`` raises that one line
(:class:`~unolab.agents.llm.client.LLMEndpointError`), and the play loop forfeits the game
with it as the reason. The loop retries the other rows of the call on halves of it: the
answers already received are kept for that, so no request is sent twice and only the
failing game forfeits. A lasting failure (nothing listens at the address, an unknown
model, a refused key) stops the agent asking: each later call raises the same line at
once, so every game it plays forfeits with it, until :meth:`LLMAgent.reset`.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from uno_env.config_values import check_int
from uno_env.files import shown
from uno_env.policy import (
    ActArray,
    MaskArray,
    PolicyFactory,
    Seed,
    StateOnlyPolicy,
    check_reset_games,
)
from uno_env.rules import Rules
from uno_env.text.answers import fallback_action, parse_answer, retry_message
from uno_env.text.prompt import PromptOptions, decision_prompt, system_prompt
from uno_env.text.view import changes_between, seat_view
from unolab.agents.llm.client import (
    ChatClient,
    Completer,
    Completion,
    FunctionCompleter,
    LLMEndpointError,
    Message,
    TextPolicy,
)
from unolab.agents.llm.records import (
    Decision,
    DecisionCache,
    DecisionWriter,
    Telemetry,
    decision_record,
    failure_record,
    messages_key,
)
from unolab.agents.llm.spec import CONCURRENCY_LIMIT, LLMSpec, load_llm_spec

if TYPE_CHECKING:
    from uno_env.core import UnoState

__all__ = [
    "LLMAgent",
    "SpecBuilder",
    "TextPolicyAgent",
    "agent_from_file",
    "spec_factory",
]

IDLE_CALLS = 256
"""A conversation not continued for this many calls is forgotten (its game is over)."""


def _order(view: dict[str, Any]) -> tuple[int, int]:
    """When a view was taken in its game: its hand, then the decisions taken in the hand."""
    return int(view["hand_number"]), int(view["turn"])


@dataclass
class _Conversation:
    """One seat's conversation in one game (the ``"changes"`` view)."""

    messages: list[Message]
    view: dict[str, Any]
    used: int


class LLMAgent(StateOnlyPolicy):
    """A player whose moves a chat model (or a text policy) chooses; see the module.

    Args:
        completer: What answers the messages: a :class:`~unolab.agents.llm.client.ChatClient`
            or a :class:`FunctionCompleter`.
        name: The player's name (default: the completer's model).
        options: How decisions are put (:class:`uno_env.text.prompt.PromptOptions`).
        concurrency: Requests in flight at once, 1 to 256.
        cache: Recorded answers to replay (:meth:`use_cache`).

    Raises:
        ValueError: for a ``concurrency`` out of range.
    """

    def __init__(
        self,
        completer: Completer,
        *,
        name: str | None = None,
        options: PromptOptions | None = None,
        concurrency: int = 1,
        cache: DecisionCache | None = None,
    ) -> None:
        self.completer = completer
        self.model = str(completer.model)
        self.name = name if name is not None else self.model
        self.options = options if options is not None else PromptOptions()
        if not isinstance(self.options, PromptOptions):
            raise TypeError(f"options: expected PromptOptions, got {shown(self.options)}")
        self.concurrency = check_int("concurrency", concurrency, 1, CONCURRENCY_LIMIT)
        self.spec: LLMSpec | None = None
        self._cache = cache
        self._held: dict[str, list[Completion]] = {}  # a failed call's answers, for its halves
        self._failed: dict[str, BaseException] = {}
        self._memory: dict[tuple[int, int], _Conversation] = {}
        self._shared: set[tuple[int, int]] = set()  # game and seat of two games at once
        self._systems: dict[Rules, str] = {}
        self._writer: DecisionWriter | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._broken: LLMEndpointError | None = None
        self._calls = 0
        self._telemetry = Telemetry()

    # ------------------------------------------------------------------ building

    @classmethod
    def from_spec(cls, spec: LLMSpec, *, name: str | None = None, seed: Seed = None) -> LLMAgent:
        """An agent asking the endpoint of ``spec``.

        Args:
            spec: The model, its endpoint and the prompt's options.
            name: The player's name (default: the model's).
            seed: Seed of the client's backoff jitter.

        Raises:
            LLMSetupError: if ``openai`` is missing or the key's variable is not set.
        """
        client = ChatClient(spec, seed=seed)
        agent = cls(
            client, name=name or spec.model, options=spec.prompt_options,
            concurrency=spec.concurrency,
        )  # fmt: skip
        agent.spec = spec
        return agent

    # ------------------------------------------------------------------ the Policy protocol

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Forget the conversations, and a lasting endpoint failure (the next call asks
        again).

        Memory is kept by game key, which a mask of rows does not name: a mask with any
        game marked forgets every conversation (each starts again with the whole table).

        Raises:
            ValueError: for ``games`` that are neither None nor a boolean mask.
        """
        check_reset_games(self.name, games)
        if games is not None and not np.any(games):
            return
        self._memory.clear()
        self._shared.clear()
        self._held.clear()
        self._failed.clear()
        self._broken = None

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """One action per game for the acting ``seats``, asked of the model.

        A row whose seat has no decision (a finished game) gets action 0, unasked.

        Raises:
            LLMEndpointError: one line, when a request got no answer (see the module).
            ValueError: for ``seats`` that do not fit the batch.
        """
        del masks  # the view's legal moves are the mask's
        if self._broken is not None:
            raise type(self._broken)(str(self._broken))
        seat_arr = np.asarray(seats, dtype=np.int64).reshape(-1)
        if seat_arr.shape != (state.batch_size,):
            raise ValueError(
                f"{self.name}: seats: expected one per game ({state.batch_size}), got "
                f"{seat_arr.shape[0]}"
            )
        self._calls += 1
        if self._calls % IDLE_CALLS == 0:
            self._forget_idle()
        system = self._system_prompt(rules)
        actions = np.zeros(state.batch_size, dtype=np.int64)
        keys, turns, hands = state.key.tolist(), state.turn.tolist(), state.hand_no.tolist()
        posed = []
        for row, seat in enumerate(seat_arr.tolist()):
            view = seat_view(rules, state, seat, row)
            if view.get("legal_moves"):  # else no decision here: nothing to ask
                posed.append((row, int(keys[row]), seat, view))
        if self.options.view == "changes":
            seen = Counter((game, seat) for _, game, seat, _ in posed)
            self._shared.update(identity for identity, n in seen.items() if n > 1)
        decisions = [self._pose(row, game, seat, view, system) for row, game, seat, view in posed]
        self._ask(decisions)
        for d in decisions:
            if d.failure is None:
                d.answers.append(parse_answer(d.completions[-1].text, d.prompt))
                if not d.answers[-1].valid:
                    d.sending = [
                        *d.sending,
                        {"role": "assistant", "content": d.completions[-1].text},
                        {"role": "user", "content": retry_message(d.answers[-1], d.prompt)},
                    ]
        again = [d for d in decisions if not d.settled]
        self._ask(again)
        for d in again:
            if d.failure is None:
                d.answers.append(parse_answer(d.completions[-1].text, d.prompt))
        failed = [d for d in decisions if d.failure is not None]
        if failed:
            self._hold(decisions)
            if state.batch_size == 1:
                for key in failed[0].keys[-1:]:
                    self._failed.pop(key, None)
            failure = failed[0].failure
            assert failure is not None
            raise failure
        for d in decisions:
            self._settle(d, turns[d.row], hands[d.row])
            actions[d.row] = d.action
        return actions

    # ------------------------------------------------------------------ asking

    def _system_prompt(self, rules: Rules) -> str:
        text = self._systems.get(rules)
        if text is None:
            text = self._systems[rules] = system_prompt(rules, self.options)
        return text

    def _pose(self, row: int, game: int, seat: int, view: dict[str, Any], system: str) -> Decision:
        """The decision of one row, and the messages that ask it."""
        if self.options.view == "changes" and (game, seat) not in self._shared:
            talk = self._memory.get((game, seat))
            if talk is not None and _order(view) <= _order(talk.view):
                # Not a later decision of the same game: another game of the same deal.
                self._shared.add((game, seat))
                del self._memory[(game, seat)]
                talk = None
            if talk is not None:
                since = changes_between(talk.view, view)
                prompt = decision_prompt(view, self.options, since)
                sending = [*talk.messages, {"role": "user", "content": prompt.text}]
                return Decision(row, game, seat, view, prompt, len(talk.messages), sending)
        prompt = decision_prompt(view, self.options)
        sending = [{"role": "system", "content": system}, {"role": "user", "content": prompt.text}]
        return Decision(row, game, seat, view, prompt, 0, sending)

    def _ask(self, decisions: list[Decision]) -> None:
        """One request per decision, in row order: held or recorded answers first, then the
        rest concurrently."""
        sending: list[tuple[Decision, str]] = []
        for d in decisions:
            key = messages_key(self.model, d.sending)
            d.keys.append(key)
            held = self._held.get(key)
            found = held.pop(0) if held else None
            if found is None and self._cache is not None:
                found = self._cache.take(key)
            if found is not None:
                d.completions.append(found)
            elif key in self._failed:
                d.failure = self._failed[key]
            else:
                sending.append((d, key))
        if not sending:
            return
        if len(sending) == 1 or self.concurrency == 1:
            results = [self._request(d.sending) for d, _ in sending]
        else:
            pool = self._pool
            if pool is None:
                pool = self._pool = ThreadPoolExecutor(
                    self.concurrency, thread_name_prefix=f"llm-{self.name}"
                )
            results = list(pool.map(self._request, [d.sending for d, _ in sending]))
        lasting = None
        for (d, key), result in zip(sending, results, strict=True):
            if isinstance(result, Completion):
                d.completions.append(result)
                continue
            d.failure = result
            if isinstance(result, LLMEndpointError) and result.lasting:
                lasting = lasting or result
                continue
            self._failed[key] = result
            self._telemetry.failed(result)
        if lasting is not None:
            self._broken = lasting
            raise type(lasting)(str(lasting))

    def _request(self, messages: list[Message]) -> Completion | Exception:
        """One completion, or the failure (a worker thread's result, raised by the caller)."""
        broken = self._broken
        if broken is not None:  # another request found the endpoint gone: ask no more
            return broken
        try:
            return self.completer.complete(messages)
        except LLMEndpointError as err:
            if err.lasting:
                self._broken = err
            return err
        except Exception as err:  # a text policy's own failure fails its decision alone
            return err

    def _hold(self, decisions: list[Decision]) -> None:
        """Keep the answers of a failed call for the play loop's calls on its halves."""
        for d in decisions:
            for key, completion in zip(d.keys, d.completions, strict=False):
                self._held.setdefault(key, []).append(completion)

    # ------------------------------------------------------------------ settling

    def _settle(self, d: Decision, turn: int, hand_no: int) -> None:
        """Play the decision: its action, the conversation, the record, the counts."""
        last = d.answers[-1]
        if last.valid:
            assert last.action is not None
            d.action = last.action
        else:
            d.action, d.fallback = fallback_action(d.prompt), True
        answered = [*d.sending, {"role": "assistant", "content": d.completions[-1].text}]
        if self.options.view == "changes" and (d.game, d.seat) not in self._shared:
            self._memory[(d.game, d.seat)] = _Conversation(answered, d.view, self._calls)
        self._telemetry.settled(d)
        if self._writer is not None:
            self._writer.write(decision_record(d, self.model, self.name, answered, turn, hand_no))

    def _forget_idle(self) -> None:
        oldest = self._calls - IDLE_CALLS
        for identity in [i for i, talk in self._memory.items() if talk.used < oldest]:
            del self._memory[identity]

    # ------------------------------------------------------------------ records, telemetry

    def record_to(self, path: str | Path | None) -> None:
        """Append a JSON line per decision to ``path`` from now on (None: stop recording).

        See :mod:`unolab.agents.llm.records` for the fields.

        Raises:
            OSError: if the file cannot be opened for appending.
        """
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if path is not None:
            self._writer = DecisionWriter(path)

    def record_failure(self, state: UnoState, seat: int, action: int, why: str) -> None:
        """Record that the endpoint failed game 0's decision and ``action`` was played."""
        if self._writer is not None:
            key, hand, turn = int(state.key[0]), int(state.hand_no[0]), int(state.turn[0])
            self._writer.write(
                failure_record(self.model, self.name, key, seat, hand, turn, action, why)
            )

    def use_cache(self, cache: DecisionCache | None) -> None:
        """Answer the prompts ``cache`` holds from it, without asking the model (None: ask
        the model every time)."""
        self._cache = cache

    def telemetry(self) -> dict[str, Any]:
        """What the agent did so far.

        Returns:
            ``decisions`` (settled: answered or fallen back), ``requests`` (answers the
            model gave), ``replayed`` (answers taken from the cache), ``invalid`` (invalid
            answers), ``retries`` (decisions asked again after an invalid answer),
            ``fallbacks``, ``timeouts`` (tries that timed out), ``transport_retries``
            (tries repeated after 429, 5xx or a timeout), ``failed_requests`` (requests
            given up: their games forfeit), ``latency_mean_s`` and ``latency_p90_s`` (over
            the requests, waits between tries included; None before any), ``tokens_in``
            and ``tokens_out`` (of the requests; replayed answers cost none), and
            ``forms`` (how many accepted answers each form gave).
        """
        return self._telemetry.as_dict()

    def close(self) -> None:
        """Stop the worker threads, close the record file and the client's connections."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.record_to(None)
        closer = getattr(self.completer, "close", None)
        if callable(closer):
            closer()


class TextPolicyAgent(LLMAgent):
    """A Python text policy played as a language model is: ``fn(messages) -> text``.

    ``fn`` gets the chat messages of each decision (a system message with the rules, then
    the decision, and, after an invalid answer, that answer and the feedback) and returns
    its answer's text; parsing, the retry, the fallback, records and telemetry are the
    :class:`LLMAgent`'s.

    Args:
        fn: The text policy.
        name: Its name (on leaderboards; the cache files its answers under it).
        options: How decisions are put.
        concurrency: Calls of ``fn`` at once (1: one at a time; raise it only for a
            thread-safe ``fn``).
    """

    def __init__(
        self,
        fn: TextPolicy,
        name: str = "text_policy",
        options: PromptOptions | None = None,
        concurrency: int = 1,
    ) -> None:
        super().__init__(
            FunctionCompleter(fn, name), name=name, options=options, concurrency=concurrency
        )


@dataclass(frozen=True)
class SpecBuilder:
    """Builds agents asking one model, from a seed: a tournament's workers get it pickled
    (the spec is plain values, and names the key's variable, never the key).

    Attributes:
        spec: The model, its endpoint and the prompt's options.
        name: The players' name.
    """

    spec: LLMSpec
    name: str

    def __call__(self, seed: Seed = None) -> LLMAgent:
        """A fresh agent (its own connections, threads and memory)."""
        return LLMAgent.from_spec(self.spec, name=self.name, seed=seed)


def spec_factory(path: str | Path) -> PolicyFactory:
    """The factory of the agents an agent spec file describes, named by the file's stem.

    The file is checked, and one agent built (and closed), now: a bad value, a missing
    ``openai`` or an unset key variable fails here, not in the first game.

    Raises:
        ConfigError: naming the file, the key and the value (:func:`load_llm_spec`).
        LLMSetupError: if ``openai`` is missing or the key's variable is not set.
    """
    builder = SpecBuilder(load_llm_spec(path), Path(path).stem)
    builder(0).close()
    return PolicyFactory(builder.name, builder)


def agent_from_file(path: str | Path, seed: Seed = None) -> LLMAgent:
    """The agent an agent spec file describes, named by the file's stem.

    Raises:
        ConfigError: naming the file, the key and the value (:func:`load_llm_spec`).
        LLMSetupError: if ``openai`` is missing or the key's variable is not set.
    """
    return LLMAgent.from_spec(load_llm_spec(path), name=Path(path).stem, seed=seed)
