"""The agents' moves of many waiting games in one call per policy.

A request whose game waits on an agent hands the game's state to the batcher and blocks.
Whichever waiting request finds no round running leads the next one: it takes every state
handed in so far, stacks those that share the rules into one batch and lets
:func:`uno_env.play.choose_actions` (the lab's one play round) call each policy once on all
of its rows. Under load, the games waiting at the same moment are decided together; a lone
game is decided at once, with no waiting for company.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from uno_env.core import ARRAY_FIELDS, UnoState
from uno_env.play import choose_actions
from uno_env.policy import Policy
from uno_env.rules import Rules

__all__ = ["AgentBatcher"]


@dataclass
class _Waiting:
    """One game waiting for its agent's decision."""

    rules: Rules
    state: UnoState
    policy: Policy
    action: int = -1
    error: Exception | None = None
    done: threading.Event = field(default_factory=threading.Event)


def _stack(states: list[UnoState]) -> UnoState:
    """One batch of several single-game states (same table size)."""
    if len(states) == 1:
        return states[0]
    arrays = {name: np.concatenate([getattr(s, name) for s in states]) for name in ARRAY_FIELDS}
    return UnoState(**arrays)


class AgentBatcher:
    """Decides agents' moves, batching the games that wait at the same time.

    Attributes:
        rounds: Rounds run so far.
        decisions: Decisions made so far (``decisions / rounds`` is the mean batch size).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turn_over = threading.Condition(self._lock)
        self._waiting: list[_Waiting] = []
        self._running = False
        self.rounds = 0
        self.decisions = 0

    def decide(self, rules: Rules, state: UnoState, policy: Policy) -> int:
        """The action ``policy`` takes in ``state`` (one game, its acting seat).

        Raises:
            uno_env.play.PolicyError: if the policy fails or chooses an illegal action.
        """
        item = _Waiting(rules, state, policy)
        with self._lock:
            self._waiting.append(item)
        while not item.done.is_set():
            with self._lock:
                while self._running and not item.done.is_set():
                    self._turn_over.wait()
                if item.done.is_set():
                    break
                batch, self._waiting = self._waiting, []
                self._running = True
            try:
                self._run(batch)
            finally:
                with self._lock:
                    self._running = False
                    self._turn_over.notify_all()
        if item.error is not None:
            raise item.error
        return item.action

    def _run(self, batch: list[_Waiting]) -> None:
        """One round over ``batch``: one call per policy for each rules group."""
        groups: dict[tuple[Rules, int], list[_Waiting]] = {}
        for item in batch:
            groups.setdefault((item.rules, item.state.num_players), []).append(item)
        for (rules, _), items in groups.items():
            policies: list[Policy | None] = []
            index: dict[int, int] = {}
            for item in items:
                index.setdefault(id(item.policy), len(policies))
                if len(policies) < len(index):
                    policies.append(item.policy)
            acting = np.array([index[id(item.policy)] for item in items], dtype=np.int64)
            try:
                actions, _ = choose_actions(
                    rules, _stack([item.state for item in items]), policies, acting
                )
                for item, action in zip(items, actions.tolist(), strict=True):
                    item.action = int(action)
            except Exception as err:  # reported to each waiting request, the server goes on
                for item in items:
                    item.error = err
            finally:
                self.rounds += 1
                self.decisions += len(items)
                for item in items:
                    item.done.set()
