"""``pimc``: flat Monte Carlo search over determinizations (perfect-information Monte Carlo).

For each decision the agent samples K games consistent with what the acting seat knows
(:func:`uno_env.core.determinize`: its own hand, the public piles and counts; everything
hidden is re-dealt), applies every candidate action to each of them and plays each game to
the end of the hand with a rollout policy. The action with the best mean reward is chosen.

* **One batch.** All rollouts of a decision (candidates x K), and of every table the agent
  is asked about at once, are one core batch, played out by one compiled call with the
  default rollout policy (:data:`unolab.agents.rollout.FAST_ROLLOUT`), or round by round with any
  bot or learned policy.
* **Common random numbers.** Every candidate is tried on the same K determinizations with
  the same random keys, so the differences between candidates are not drowned in the
  differences between deals.
* **Budget.** ``rollouts`` per candidate action, or ``time_ms`` per decision (rounds of
  ``rollouts`` determinizations until the time is spent; the decision then depends on the
  machine's speed, so use ``rollouts`` alone for reproducible play).
* **Inference** (:mod:`unolab.agents.inference`). The determinizations respect what each
  seat showed when it drew unable to play (``lack_facts``), and each is weighed by how
  likely it makes every other seat's last choice of a card: the estimates are
  likelihood-weighted means (``python -m unolab.benchmarks.inference`` scores what they know
  against the real hands).
* **Pruning.** Declaring UNO and catching are taken at once (as by every bot), and by default
  a voluntary draw is not considered when a card plays (noisy estimates otherwise pick it).
* **No hidden information.** The agent acts on the state only through
  :func:`~uno_env.core.determinize`, which replaces everything the seat cannot see before
  anything else reads the state: two states of one information set give the same decision
  for the same seed.

It needs the state, which the :class:`~uno_env.policy.Policy` protocol's observations do not
carry: it sets ``needs_state = True`` and :func:`uno_env.play.choose_actions` (the play loop
of evaluations, tournaments and the envs' opponent seats) calls
:meth:`PimcAgent.act_from_state` instead of ``act``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from uno_env import core
from uno_env.core import UnoState
from uno_env.files import shown
from uno_env.observation import encode
from uno_env.policy import (
    ActArray,
    ActionProbabilities,
    MaskArray,
    Policy,
    PolicyFactory,
    Seed,
    check_agent_rules,
)
from uno_env.rules import Rules
from unolab.agents.inference import check_lack_facts, sample_deals
from unolab.agents.registry import agent_seed, shipped_agent_names
from unolab.agents.resolve import UnknownAgentError, agent_forms, policy_factory
from unolab.agents.rollout import FAST_ROLLOUT, play_out
from unolab.agents.search_base import (
    SeatArray,
    StateSearchAgent,
    ValueArray,
    check_count,
    check_flag,
    check_number,
    root_candidates,
)

__all__ = ["MAX_ROLLOUTS", "MAX_ROWS", "PRIOR_WEIGHT", "PimcAgent"]

MAX_ROLLOUTS = 1 << 16
"""The largest ``rollouts`` per action accepted."""
PRIOR_WEIGHT = 0.03
"""Default weight of a prior's log-probability (measured on design seed 9003, docs/search.md)."""
_PRIOR_FLOOR = 1e-9
"""Probabilities below this count as this (log 0 would veto a candidate the search likes)."""
MAX_ROWS = 1 << 16
"""Rollouts played in one core batch at most (tables are searched in chunks under it)."""


class PimcAgent(StateSearchAgent):
    """Flat Monte Carlo search over determinizations (see the module docstring).

    Args:
        seed: Seed of the determinizations' keys (the same seed, the same decisions).
        rollouts: Determinizations (rollouts per candidate action) of a decision, >= 1;
            under ``time_ms``, per round.
        time_ms: A time budget per decision in milliseconds (> 0), or ``None``.
        rollout_policy: ``"fast"`` (compiled with the core, the default), or any agent
            :func:`~unolab.agents.resolve.policy_factory` resolves but a search: a bot
            name, a shipped agent (``ppo_official_2p``), a Python class or the path of an
            exported agent.
        rules: The rules the agent will play, when known: a learned rollout policy is then
            checked against them at once (otherwise at the first decision).
        prune_draws: Do not consider a voluntary draw when a card plays.
        early_stop: Spend half the rollouts on every candidate, then the rest on those not
            clearly worse than the best (paired differences, :data:`EARLY_STOP_Z` standard
            errors); the same total budget. Ignored under ``time_ms``.
        prior: ``None``, or the path of an exported agent whose policy guides the choice:
            each searched candidate scores its mean rollout reward plus ``prior_weight``
            times the log of the probability the agent gives it (over the candidates, from
            the acting seat's observation: public information only). A clone of the search
            (expert iteration) knows what many searches chose before; the prior breaks
            near-ties its way.
        prior_weight: The weight of the prior's log-probability (>= 0), in reward units:
            at 0.03 a candidate the prior finds e times likelier gains 0.03.
        lack_facts: What the determinizations take from the public history
            (:data:`~unolab.agents.inference.LACK_FACTS`): ``"drawn"`` (default), ``"drawn_wild"``, ``"shown"`` or
            ``"none"``.
        weigh_choices: Weigh each determinization by how likely every other seat's last
            choice of a card was with the hand it was dealt
            (:func:`~unolab.agents.inference.choice_weights`).

    Raises:
        ValueError: for a budget <= 0 (naming it), an unknown rollout policy or
            ``lack_facts``, a search named as the rollout policy or the prior, a prior
            without action probabilities, an exported agent (``prior`` or
            ``rollout_policy``) that is missing or malformed, or trained under other rules
            or another table size.
        TypeError: for ``rules`` that are no :class:`~uno_env.rules.Rules`, or a ``prior``
            that is no path.
    """

    name = "pimc"

    def __init__(
        self,
        seed: Seed = None,
        rollouts: int = 64,
        time_ms: float | None = None,
        rollout_policy: str | Path = FAST_ROLLOUT,
        rules: Rules | None = None,
        prune_draws: bool = True,
        early_stop: bool = False,
        prior: str | Path | None = None,
        prior_weight: float = PRIOR_WEIGHT,
        lack_facts: str = "drawn",
        weigh_choices: bool = True,
    ) -> None:
        self.rollouts = check_count("pimc", "rollouts", rollouts, MAX_ROLLOUTS)
        self.time_ms = (
            None
            if time_ms is None
            else check_number("pimc", "time_ms", time_ms, allow_zero=False, unit=" (milliseconds)")
        )
        self.prior_weight = check_number("pimc", "prior_weight", prior_weight, allow_zero=True)
        check_lack_facts("pimc", lack_facts)
        self.lack_facts = lack_facts
        self.weigh_choices = check_flag("pimc", "weigh_choices", weigh_choices)
        if prior is not None and not isinstance(prior, (str, os.PathLike)):
            raise TypeError(
                f"pimc: prior must be the path of an exported agent (a .safetensors file) or "
                f"None, got {shown(prior)}"
            )
        if rules is not None:
            check_agent_rules(rules)
        self.prior_spec = None if prior is None else str(prior)
        self._prior: ActionProbabilities | None = None
        self._prior_rules: Rules | None = None
        self.prune_draws = check_flag("pimc", "prune_draws", prune_draws)
        self.early_stop = check_flag("pimc", "early_stop", early_stop)
        self.rng = np.random.default_rng(agent_seed(seed))
        self.rollout_spec = str(rollout_policy)
        self._rollout: Policy | str | None = None
        self._rollout_rules: Rules | None = None
        # A bad spec is named now, not at the first decision (checked against the rules
        # there when they are not known yet).
        if rules is not None:
            self._rollout_for(rules)
            self._prior_for(rules)
        else:
            if self.rollout_spec != FAST_ROLLOUT:
                _rollout_factory(self.rollout_spec, None)
            if self.prior_spec is not None:
                _prior_policy(self.prior_spec, None)  # its files, named if missing or damaged
        self.decisions = 0
        """Decisions searched so far (forced ones excluded)."""
        self.rollouts_played = 0
        """Rollouts played so far."""
        self.rollout_steps = 0
        """Game steps played in rollouts so far (the action tried included)."""
        self.last_values: npt.NDArray[np.float32] | None = None
        """The estimates behind the last :meth:`act_from_state` call, (B, NUM_ACTIONS): each
        searched candidate's mean rollout reward for the acting seat, NaN for the actions
        not searched (illegal, pruned, or a decision with one candidate). Expert iteration
        can imitate them as well as the chosen action (``unolab.train.imitate``, ``value_targets``).
        """

    # ------------------------------------------------------------------------------------
    # Search
    # ------------------------------------------------------------------------------------

    def _decide(
        self, rules: Rules, state: UnoState, seats: SeatArray, masks: MaskArray, values: ValueArray
    ) -> ActArray:
        """Flat Monte Carlo over the candidates of every game, in one batch.

        Raises:
            ValueError: for a learned rollout policy of other rules.
        """
        rollout = self._rollout_for(rules)
        candidates = [self._candidates(masks[g]) for g in range(state.batch_size)]
        actions = np.array([c[0] if c.size else 0 for c in candidates], dtype=np.int64)
        searched = [g for g, c in enumerate(candidates) if c.size > 1]
        if not searched:
            return actions
        per_table = max(len(candidates[g]) for g in searched) * self.rollouts
        chunk = max(1, MAX_ROWS // per_table)
        for start in range(0, len(searched), chunk):
            games = searched[start : start + chunk]
            best = self._search(rules, state, seats, games, candidates, rollout, values)
            actions[games] = best
        self.decisions += len(searched)
        prior = self._prior_for(rules)
        if prior is not None:
            self._apply_prior(rules, state, prior, np.asarray(searched), values, actions)
        return actions

    def _apply_prior(
        self,
        rules: Rules,
        state: UnoState,
        prior: ActionProbabilities,
        searched: npt.NDArray[np.int64],
        values: npt.NDArray[np.float32],
        actions: npt.NDArray[np.int64],
    ) -> None:
        """Re-choose in the ``searched`` games: estimate + weight x log prior probability."""
        known = ~np.isnan(values[searched])
        seen = state if searched.size == state.batch_size else state.select(searched)
        probs = prior.action_probs(encode(rules, seen), known)
        logs = np.log(np.maximum(probs, _PRIOR_FLOOR))
        score = np.where(known, values[searched] + self.prior_weight * logs, -np.inf)
        actions[searched] = score.argmax(axis=1)

    def _prior_for(self, rules: Rules) -> ActionProbabilities | None:
        """The prior policy for ``rules`` (checked against them once), or None."""
        if self.prior_spec is None:
            return None
        if self._prior is None or self._prior_rules is not rules:
            self._prior = _prior_policy(self.prior_spec, rules)
            self._prior_rules = rules
        return self._prior

    def _candidates(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """The actions worth searching in one game (:func:`root_candidates`)."""
        return root_candidates(mask, self.prune_draws)

    def _search(
        self,
        rules: Rules,
        state: UnoState,
        seats: npt.NDArray[np.int64],
        games: list[int],
        candidates: list[npt.NDArray[np.int64]],
        rollout: Policy | str,
        estimates: npt.NDArray[np.float32],
    ) -> npt.NDArray[np.int64]:
        """The best candidate of each of ``games``, by mean rollout reward.

        Writes each candidate's mean reward into ``estimates[game, action]`` (a candidate
        stopped early keeps the mean of the rollouts it had).
        """
        sub = state.select(np.asarray(games, dtype=np.int64))
        sub_seats = seats[games]
        alive = [np.ones(candidates[g].size, dtype=bool) for g in games]
        values: list[list[npt.NDArray[np.float64]]] = [[] for _ in games]  # (cands, K) blocks
        deadline = None if self.time_ms is None else time.perf_counter() + self.time_ms / 1000
        if self.early_stop and self.time_ms is None:
            # Half the budget on every candidate; the rest on those not clearly worse.
            first = max(1, self.rollouts // 2)
            self._round(rules, sub, sub_seats, games, candidates, alive, first, rollout, values)
            budget = [self.rollouts * candidates[g].size for g in games]
            for t in range(len(games)):
                alive[t] = _not_clearly_worse(np.concatenate(values[t], axis=1))
            rest = [
                max(0, (budget[t] - first * candidates[g].size) // int(alive[t].sum()))
                for t, g in enumerate(games)
            ]
            self._round(rules, sub, sub_seats, games, candidates, alive, rest, rollout, values)
        else:
            while True:
                self._round(
                    rules, sub, sub_seats, games, candidates, alive, self.rollouts, rollout, values
                )
                if deadline is None or time.perf_counter() >= deadline:
                    break
        best = []
        for t, g in enumerate(games):
            block = np.concatenate(values[t], axis=1)
            # A stopped candidate's columns after its stop are zeros: average its own.
            counts = np.where(alive[t], block.shape[1], values[t][0].shape[1])
            means = block.sum(axis=1) / counts
            estimates[g, candidates[g]] = means
            means[~alive[t]] = -np.inf
            best.append(candidates[g][int(np.argmax(means))])  # ties: the lowest action id
        return np.array(best, dtype=np.int64)

    def _round(
        self,
        rules: Rules,
        sub: UnoState,
        seats: npt.NDArray[np.int64],
        games: list[int],
        candidates: list[npt.NDArray[np.int64]],
        alive: list[npt.NDArray[np.bool_]],
        per_table: int | list[int],
        rollout: Policy | str,
        values: list[list[npt.NDArray[np.float64]]],
    ) -> None:
        """One batch: K fresh determinizations per table, every live candidate on each.

        Appends to ``values[t]`` a (candidates, K) block (zeros for pruned candidates).
        """
        counts = [per_table] * len(games) if isinstance(per_table, int) else list(per_table)
        n_det = max(counts)
        if n_det == 0:
            return
        keys = self.rng.integers(0, 2**63, size=(len(games), n_det), dtype=np.uint64)
        dets, weights = sample_deals(
            rules,
            sub,
            seats,
            keys,
            lack_facts=self.lack_facts,
            weigh_choices=self.weigh_choices,
        )
        # Row (table t, candidate a, determinization k): the same deals for every a.
        rows, acts, owner = [], [], []
        for t, g in enumerate(games):
            for a in np.flatnonzero(alive[t]).tolist():
                rows.append(np.arange(t * n_det, t * n_det + counts[t]))
                acts.append(np.full(counts[t], candidates[g][a], dtype=np.int64))
                owner.append((t, a))
        batch = dets.select(np.concatenate(rows))
        start_turns = int(batch.turn.sum(dtype=np.int64))
        batch = core.step(rules, batch, np.concatenate(acts), in_place=True)
        seat_rows = np.concatenate([np.full(counts[t], seats[t], dtype=np.int64) for t, _ in owner])
        final = play_out(rules, batch, rollout)
        self.rollout_steps += int(final.turn.sum(dtype=np.int64)) - start_turns
        rewards = core.hand_rewards(rules, final)
        flat = rewards[np.arange(final.batch_size), seat_rows].astype(np.float64)
        self.rollouts_played += flat.size
        blocks = [np.zeros((candidates[g].size, counts[t])) for t, g in enumerate(games)]
        at = 0
        # Weighted rewards, the weights of mean 1 over the deals a table uses: the block's
        # mean is the likelihood-weighted mean reward.
        used = []
        for t in range(len(games)):
            mine = weights[t, : counts[t]]
            # (only early stopping's second round uses fewer than the K computed)
            used.append(mine / mine.mean() if 0 < counts[t] < n_det else mine)
        for t, a in owner:
            blocks[t][a] = flat[at : at + counts[t]] * used[t]
            at += counts[t]
        for t in range(len(games)):
            if counts[t]:
                values[t].append(blocks[t])

    def _rollout_for(self, rules: Rules) -> Policy | str:
        """The rollout policy for ``rules`` (a learned one is checked against them once)."""
        if self.rollout_spec == FAST_ROLLOUT:
            return FAST_ROLLOUT
        if self._rollout is None or self._rollout_rules is not rules:
            seed = int(self.rng.integers(2**62))
            # policy_factory refuses a learned policy of other rules.
            self._rollout = _rollout_factory(self.rollout_spec, rules)(seed)
            self._rollout_rules = rules
        return self._rollout


def _rollout_factory(spec: str, rules: Rules | None) -> PolicyFactory:
    """The rollout policy ``spec`` names, resolved as every agent is, but no search.

    Raises:
        ValueError: as :func:`~unolab.agents.resolve.policy_factory`; an unknown name's
            message adds the compiled rollout, ``"fast"``.
    """
    try:
        return policy_factory(spec, rules, allow_search=False)
    except UnknownAgentError:
        raise UnknownAgentError(
            f"pimc: unknown rollout policy {spec!r}; give {FAST_ROLLOUT!r} (compiled, the "
            f"default), {agent_forms(allow_search=False)}"
        ) from None


def _prior_policy(spec: str, rules: Rules | None) -> ActionProbabilities:
    """The prior ``spec`` names, resolved as every agent is (no search), seeded with 0.

    Raises:
        ValueError: as :func:`~unolab.agents.resolve.policy_factory`, or for a policy that
            gives no action probabilities (a bot), naming ``spec``.
    """
    try:
        prior = policy_factory(spec, rules, allow_search=False)(0)
    except UnknownAgentError:
        raise UnknownAgentError(
            f"pimc: unknown prior {spec!r}: no shipped agent has that name "
            f"({', '.join(shipped_agent_names())}) and {spec}.safetensors does not exist; give "
            "an exported agent (a .safetensors file with its .json metadata beside it)"
        ) from None
    if not isinstance(prior, ActionProbabilities):
        raise ValueError(
            f"pimc: prior {spec!r} gives no action probabilities (action_probs): give an "
            "exported agent or a shipped agent's name"
        )
    return prior


EARLY_STOP_Z = 2.0
"""A candidate is clearly worse when its paired mean difference to the best one exceeds this
many standard errors (the differences are paired: the same determinizations and keys)."""


def _not_clearly_worse(values: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Candidates (rows of ``values``, (A, K) rewards on shared deals) worth more rollouts."""
    means = values.mean(axis=1)
    best = int(np.argmax(means))
    diff = values[best][None, :] - values
    n = values.shape[1]
    spread = diff.std(axis=1, ddof=1) if n > 1 else np.zeros(values.shape[0])
    keep: npt.NDArray[np.bool_] = diff.mean(axis=1) <= EARLY_STOP_Z * spread / np.sqrt(n)
    keep[best] = True
    return keep
