"""``ismcts``: information-set Monte Carlo tree search from the acting seat's view.

:class:`~unolab.agents.pimc.PimcAgent` scores each candidate by the hands that follow when every
seat then plays the rollout heuristic: one step of improvement over that heuristic. This
agent searches the acting seat's *later* decisions too, with one tree over its information
sets (single-observer ISMCTS, Cowling, Powley and Whitehouse 2012), shared by all the
determinizations of the decision:

* **Determinizations.** Iteration i plays determinization i of
  :func:`unolab.agents.inference.sample_deals` (the same inference as ``pimc``: the lack facts from
  the draws, the choices weighed), drawn in proportion to their weights, so each iteration
  is a deal from the search's posterior.
* **The tree.** A node is the sequence of public actions since the decision (the searching
  seat's own and the other seats'), so two deals that agree on everything the seat sees
  share a node, and the seat's choice at a node cannot depend on a hidden card. At its own
  nodes the seat chooses by UCB1 among the actions legal in the iteration's deal, with
  *availability* counts in place of the parent's visits (an action that is legal in few
  deals is not over-explored); the other seats play the compiled ``fast`` heuristic of
  :mod:`unolab.agents.rollout`, the same opponent model as ``pimc``'s rollouts.
* **Expansion and rollout.** One new edge of the seat's own per iteration, then the
  ``fast`` heuristic plays every seat to the end of the hand, as in ``pimc``. The reward is
  the seat's win (1) or loss (0) (a truncated hand counts as the share of its reward).
* **Choice.** The root action played most often (ties: the best mean, then the lowest id).
* **Pruning** as ``pimc``'s: UNO and catches are taken at once; a voluntary draw is not
  considered when a card plays.

Everything runs in one compiled call per decision (the core's rules, the tree and the
rollouts), so an iteration costs about one ``pimc`` rollout. It is deterministic for a seed
and reads the state only through :func:`~uno_env.core.determinize` (via
:func:`~unolab.agents.inference.sample_deals`): two states of one information set get the same
decisions. docs/search.md ("Information-set search") gives its strength beside ``pimc``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from uno_env import cards as C
from uno_env import core
from uno_env.core import UnoState
from uno_env.core.kernel import (
    NO_SEAT,
    OVER,
    RuleParams,
    Scratch,
    StateArrays,
    apply_one,
    arrays_of,
    fill_mask,
    rule_params,
    scratch,
)
from uno_env.jit import Kernel, jit
from uno_env.policy import ActArray, MaskArray, Seed
from uno_env.rules import Rules
from unolab.agents.inference import check_lack_facts, sample_deals
from unolab.agents.registry import agent_seed
from unolab.agents.rollout import fast_action
from unolab.agents.search_base import (
    SeatArray,
    StateSearchAgent,
    ValueArray,
    check_count,
    check_flag,
    check_number,
    drop_voluntary_draw,
    root_candidates,
)

__all__ = ["DEFAULT_ITERATIONS", "EXPLORATION", "MAX_ITERATIONS", "IsmctsAgent"]

DEFAULT_ITERATIONS = 4096
"""Iterations per decision of the registered ``ismcts``: the budget of ``pimc_strong``'s time
(its speed: ``uno-lab bench search`` and docs/search.md)."""
MAX_ITERATIONS = 1 << 15
"""The largest ``iterations`` accepted."""
EXPLORATION = 0.7
"""UCB1's exploration constant, rewards in [0, 1]."""
_NODES_PER_ITERATION = 6
"""Tree nodes kept per iteration on average at most (the seat's nodes and the other seats'
moves between them: about 1 per iteration at 2 players and 2-3 at 4 were measured); past
the cap an iteration plays on without adding nodes."""
_MAX_NODES = 1 << 17
"""Tree nodes at most, whatever the budget (the child table is nodes x actions int32)."""

_MAX_DEPTH = 256
"""The seat's own decisions recorded per iteration at most (a hand has far fewer)."""


class _Tree(NamedTuple):
    """The arrays of one search tree, reused from search to search (see ``_search_all``)."""

    child: npt.NDArray[np.int32]
    own: npt.NDArray[np.int32]
    visits: npt.NDArray[np.float64]
    wins: npt.NDArray[np.float64]
    avail: npt.NDArray[np.float64]
    used: npt.NDArray[np.int64]
    path_rows: npt.NDArray[np.int64]
    path_acts: npt.NDArray[np.int64]

    @classmethod
    def empty(cls, iterations: int) -> _Tree:
        """Room for a search of ``iterations`` iterations."""
        nodes = min(iterations * _NODES_PER_ITERATION, _MAX_NODES) + 1
        visits = np.zeros((iterations + 1, C.NUM_ACTIONS), dtype=np.float64)
        return cls(
            child=np.full((nodes, C.NUM_ACTIONS), -1, dtype=np.int32),
            own=np.full(nodes, -1, dtype=np.int32),
            visits=visits,
            wins=np.zeros_like(visits),
            avail=np.zeros_like(visits),
            used=np.zeros(2, dtype=np.int64),  # nodes, own nodes of the last search
            path_rows=np.empty(_MAX_DEPTH, dtype=np.int64),
            path_acts=np.empty(_MAX_DEPTH, dtype=np.int64),
        )


class IsmctsAgent(StateSearchAgent):
    """Single-observer information-set MCTS (see the module docstring).

    Args:
        seed: Seed of the determinizations (the same seed, the same decisions).
        iterations: Determinizations searched per decision, each one iteration of the tree
            search, in 1..:data:`MAX_ITERATIONS`.
        exploration: UCB1's constant (> 0), rewards scaled to [0, 1].
        lack_facts: The public facts the determinizations keep (as ``pimc``'s,
            :data:`unolab.agents.inference.LACK_FACTS`).
        weigh_choices: Draw the determinizations in proportion to how likely they make the
            other seats' last choices (:func:`unolab.agents.inference.choice_weights`).

    Raises:
        ValueError: for a budget out of range or an exploration constant <= 0 (naming
            the value), a seed that is no integer in ``0..2**64 - 1`` (nor ``None`` or a
            NumPy ``Generator``), or an unknown ``lack_facts``.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: Seed = None,
        iterations: int = DEFAULT_ITERATIONS,
        exploration: float = EXPLORATION,
        lack_facts: str = "drawn",
        weigh_choices: bool = True,
    ) -> None:
        self.iterations = check_count("ismcts", "iterations", iterations, MAX_ITERATIONS)
        self.exploration = check_number("ismcts", "exploration", exploration, allow_zero=False)
        check_lack_facts("ismcts", lack_facts)
        self.lack_facts = lack_facts
        self.weigh_choices = check_flag("ismcts", "weigh_choices", weigh_choices)
        self.rng = np.random.default_rng(agent_seed(seed))
        self._tree: _Tree | None = None  # allocated at the first search
        self._mask = np.empty(C.NUM_ACTIONS, dtype=np.bool_)
        self.decisions = 0
        """Decisions searched so far (forced ones excluded)."""
        self.last_visits: npt.NDArray[np.float64] | None = None
        """The root's visit counts per action of the last searched decision."""
        self.last_values: npt.NDArray[np.float32] | None = None
        """The estimates behind the last :meth:`act_from_state` call, (B, NUM_ACTIONS): each
        root action's mean reward for the acting seat in hand-reward units (+1 a win,
        -1/(N-1) a loss), NaN for the actions not tried (illegal, pruned, or a decision
        with one candidate), as ``pimc``'s: expert iteration can imitate them
        (``unolab.train.imitate``, ``value_targets``)."""

    def _decide(
        self, rules: Rules, state: UnoState, seats: SeatArray, masks: MaskArray, values: ValueArray
    ) -> ActArray:
        """One tree search per game that has more than one candidate."""
        actions = np.empty(state.batch_size, dtype=np.int64)
        for g in range(state.batch_size):
            candidates = root_candidates(masks[g])
            if candidates.size == 1:
                actions[g] = candidates[0]
                continue
            actions[g] = self._search(rules, state.select(np.array([g])), int(seats[g]), values[g])
            self.decisions += 1
        return actions

    def _tree_arrays(self) -> _Tree:
        """The tree's arrays, allocated at the first search (a few MB at the default)."""
        if self._tree is None:
            self._tree = _Tree.empty(self.iterations)
        return self._tree

    def _search(
        self, rules: Rules, game: UnoState, seat: int, values: npt.NDArray[np.float32]
    ) -> int:
        """The chosen action of one game (a batch of one) for ``seat``; the root estimates
        (hand-reward units) into ``values``, (NUM_ACTIONS,)."""
        k = self.iterations
        keys = self.rng.integers(0, 2**63, size=(1, k), dtype=np.uint64)
        dets, weights = sample_deals(
            rules,
            game,
            np.array([seat]),
            keys,
            lack_facts=self.lack_facts,
            weigh_choices=self.weigh_choices,
        )
        if self.weigh_choices and not np.all(weights == weights[0, 0]):
            # Each iteration a deal of the posterior: resample in proportion to the weights.
            order = self.rng.choice(k, size=k, p=weights[0] / weights[0].sum())
            dets = dets.select(np.sort(order))
        # The seat's reward for each winner (the core's rule; the last entry: a truncated
        # hand), scaled to [0, 1] for UCB1.
        rewards = np.append(core.winner_rewards(rules, np.arange(rules.num_players))[:, seat], 0.0)
        low, high = float(rewards.min()), float(rewards.max())
        shares = ((rewards - low) / (high - low)).astype(np.float64)
        tree = self._tree_arrays()
        _SEARCH(
            rule_params(rules),
            arrays_of(dets),
            scratch(),
            self._mask,
            np.int64(seat),
            np.float64(self.exploration),
            shares,
            *tree,
        )
        visits = tree.visits[0].copy()
        self.last_visits = visits
        tried = visits > 0
        means = np.where(tried, tree.wins[0] / np.maximum(visits, 1), -1.0)  # win shares
        values[tried] = low + means[tried] * (high - low)
        # Most visits, then the best mean, then the lowest action id.
        order = np.lexsort((-np.arange(C.NUM_ACTIONS), means, visits))
        return int(order[-1])


@jit
def _search_all(
    r: RuleParams,
    s: StateArrays,
    w: Scratch,
    mask: np.ndarray,
    seat: int,
    exploration: float,
    shares: np.ndarray,
    child: np.ndarray,
    own: np.ndarray,
    visits: np.ndarray,
    wins: np.ndarray,
    avail: np.ndarray,
    used: np.ndarray,
    path_rows: np.ndarray,
    path_acts: np.ndarray,
) -> None:
    """One search: iteration g plays determinization g of ``s`` (changed in place).

    ``shares[w]`` is the seat's reward, scaled to [0, 1], when seat ``w`` wins; the last
    entry when a hand is truncated.

    The tree: ``child[node, action]`` is the node after a public action (-1: none yet);
    ``own[node]`` the row of the seat's statistics at its decision nodes (-1 elsewhere):
    ``visits``, ``wins`` and ``avail`` (times the action was legal when the node was
    reached). Node 0 is the root, own row 0. ``used`` comes in with the sizes of the last
    search, whose rows are cleared first, and goes out with this one's. ``path_rows`` and
    ``path_acts`` are work space for an iteration's own edges (deeper ones go unrecorded).
    """
    for node in range(int(used[0])):
        own[node] = -1
        for a in range(child.shape[1]):
            child[node, a] = -1
    for row in range(int(used[1])):
        for a in range(visits.shape[1]):
            visits[row, a] = 0.0
            wins[row, a] = 0.0
            avail[row, a] = 0.0
    n_nodes = 1
    n_own = 1
    own[0] = 0
    max_nodes = child.shape[0]
    for g in range(s.key.shape[0]):
        node = 0
        depth = 0
        in_tree = True
        while s.phase[g] != OVER:
            fill_mask(r, s, g, mask)
            if mask[C.CATCH]:
                apply_one(r, s, w, g, C.CATCH)
                continue
            if mask[C.UNO]:
                apply_one(r, s, w, g, C.UNO)
                continue
            actor = int(s.current[g])
            if not in_tree:
                apply_one(r, s, w, g, fast_action(r, s, g, mask))
                continue
            if actor != seat:
                act = fast_action(r, s, g, mask)
            else:
                drop_voluntary_draw(mask)
                row = own[node]
                if row < 0:
                    if n_own >= visits.shape[0]:
                        in_tree = False  # (cannot happen: one new row per iteration)
                        apply_one(r, s, w, g, fast_action(r, s, g, mask))
                        continue
                    row = n_own
                    own[node] = row
                    n_own += 1
                act, best = -1, -1.0
                for a in range(C.NUM_ACTIONS):
                    if mask[a]:
                        avail[row, a] += 1.0
                for a in range(C.NUM_ACTIONS):
                    if not mask[a]:
                        continue
                    if visits[row, a] == 0.0:
                        act = a  # an untried action: expand it
                        break
                    score = wins[row, a] / visits[row, a] + exploration * math.sqrt(
                        math.log(avail[row, a]) / visits[row, a]
                    )
                    if score > best:
                        act, best = a, score
                if depth < path_rows.shape[0]:
                    path_rows[depth] = row
                    path_acts[depth] = act
                    depth += 1
                if visits[row, act] == 0.0:
                    in_tree = False  # expanded: roll out from here
            apply_one(r, s, w, g, act)
            if in_tree:
                nxt = child[node, act]
                if nxt < 0:
                    if n_nodes >= max_nodes:
                        in_tree = False
                        continue
                    nxt = n_nodes
                    child[node, act] = nxt
                    n_nodes += 1
                node = nxt
        winner = int(s.winner[g])
        reward = shares[winner] if winner != NO_SEAT else shares[shares.shape[0] - 1]
        for i in range(depth):
            visits[path_rows[i], path_acts[i]] += 1.0
            wins[path_rows[i], path_acts[i]] += reward
    used[0] = n_nodes
    used[1] = n_own


_SEARCH = Kernel(_search_all)
