"""The flat Monte Carlo searches of the registry: ``pimc``, ``pimc_strong`` and ``pimc_guided``.

All three are :class:`~unolab.agents.pimc.PimcAgent` (the search itself, see
:mod:`unolab.agents.pimc`) at other settings: ``pimc`` at 64 rollouts per action, the cheap
one for tables, envs and recordings; ``pimc_strong`` at :data:`STRONG_ROLLOUTS`, the
strongest within 50 ms per decision; and ``pimc_guided`` at :data:`GUIDED_ROLLOUTS`, its
choice guided by the shipped network of the table size (:data:`GUIDED_PRIORS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.policy import ActionProbabilities, Seed
from uno_env.rules import Rules
from unolab.agents.pimc import PRIOR_WEIGHT, PimcAgent
from unolab.agents.registry import SHIPPED_DIR

__all__ = [
    "GUIDED_PRIORS",
    "GUIDED_ROLLOUTS",
    "STRONG_ROLLOUTS",
    "GuidedPrior",
    "guided_pimc",
    "strong_pimc",
]

STRONG_ROLLOUTS = 2048
"""Rollouts per action of ``pimc_strong``: the strongest search within a 50 ms budget per
decision (its speed: ``uno-lab bench search`` and docs/search.md)."""


def strong_pimc(seed: Seed = None, **options: Any) -> PimcAgent:
    """``pimc_strong``: :class:`PimcAgent` at :data:`STRONG_ROLLOUTS` rollouts per action.

    The strongest search within 50 ms per decision (docs/search.md); ``pimc`` (64 rollouts)
    stays the cheap one for tables, envs and recordings.
    """
    agent = PimcAgent(seed=seed, **{"rollouts": STRONG_ROLLOUTS, **options})
    agent.name = "pimc_strong"
    return agent


GUIDED_ROLLOUTS = 1024
"""Rollouts per action of ``pimc_guided`` (its speed: ``uno-lab bench search``)."""


@dataclass(frozen=True)
class GuidedPrior:
    """The prior ``pimc_guided`` uses at one table size.

    Attributes:
        path: The exported agent whose policy guides the choice.
        weight: Its ``prior_weight`` (chosen on design seeds, docs/search.md).
    """

    path: Path
    weight: float


GUIDED_PRIORS: dict[int, GuidedPrior] = {
    2: GuidedPrior(SHIPPED_DIR / "ppo_official_2p_exit.safetensors", PRIOR_WEIGHT),
    4: GuidedPrior(SHIPPED_DIR / "ppo_official_4p.safetensors", 0.1),
}
"""The prior of ``pimc_guided`` by table size (the shipped network of that size); at a table
size without one it searches unguided."""


class _GuidedPimc(PimcAgent):
    """``pimc_guided``: the prior of :data:`GUIDED_PRIORS` for the table size played, when
    the rules are the ones that network was trained under (else unguided)."""

    _guided_rules: Rules | None = None

    def _prior_for(self, rules: Rules) -> ActionProbabilities | None:
        if rules is not self._guided_rules:  # chosen once per rules, not per decision
            from unolab.agents.policy_metadata import CheckpointMismatchError

            self._guided_rules = rules
            guide = GUIDED_PRIORS.get(rules.num_players)
            self.prior_spec = None if guide is None else str(guide.path)
            self.prior_weight = PRIOR_WEIGHT if guide is None else guide.weight
            try:
                return super()._prior_for(rules)
            except CheckpointMismatchError:
                # The shipped networks play the official rules; under others, no guide.
                self.prior_spec = None
        return super()._prior_for(rules)


def guided_pimc(seed: Seed = None, **options: Any) -> PimcAgent:
    """``pimc_guided``: :class:`PimcAgent` at :data:`GUIDED_ROLLOUTS` rollouts per action,
    its choice guided by the shipped network of the table size (:data:`GUIDED_PRIORS`: the
    clone of the search at 2 players, weight :data:`PRIOR_WEIGHT`; the PPO agent at 4,
    weight 0.1; unguided at a table size or under rules without one)."""
    for guide in GUIDED_PRIORS.values():
        # Refused now, not when the first game reaches a decision.
        for needed in (guide.path, guide.path.with_suffix(".json")):
            if not needed.is_file():
                raise FileNotFoundError(
                    f"pimc_guided: its guide {needed} is missing (the installation is "
                    "incomplete: reinstall uno-lab)"
                )
    agent = _GuidedPimc(seed=seed, **{"rollouts": GUIDED_ROLLOUTS, **options})
    agent.name = "pimc_guided"
    return agent
