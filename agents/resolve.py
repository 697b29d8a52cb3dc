"""Turning what a user types (a bot name or an exported agent's path) into policies.

The envs, the play loop and the tournament runner take policy objects; resolving names and
files is the job of their callers. This module is the one resolver they share:

* :func:`resolve_policy`: one policy, built now (the CLI, the terminal game);
* :func:`policy_factory`: a :class:`~uno_env.policy.PolicyFactory` that builds fresh seeded
  policies on demand (the envs seed it from their own seed, tournaments per chunk);
* :func:`resolve_opponents`: the ``opponents`` argument of the learner envs from names.

    >>> from agents import resolve_opponents
    >>> from uno_env.envs.gym_env import UnoGymEnv
    >>> env = UnoGymEnv(num_players=3, opponents=resolve_opponents(["mixbot", "random"]))
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents.registry import BOT_NAMES, make_agent
from uno_env.policy import Policy, PolicyFactory, Seed
from uno_env.rules import Rules

__all__ = ["is_agent_file", "policy_factory", "resolve_opponents", "resolve_policy"]


def is_agent_file(spec: str | Path) -> bool:
    """Whether ``spec`` names an exported agent (``.safetensors`` with its ``.json``)."""
    return Path(spec).with_suffix(".safetensors").is_file()


def _unknown(spec: str) -> ValueError:
    return ValueError(
        f"unknown agent {spec!r}: give a bot name ({', '.join(BOT_NAMES)}) or the path of an "
        "exported agent (a .safetensors file with its .json metadata beside it)"
    )


def policy_factory(spec: str | Path, rules: Rules | None = None) -> PolicyFactory:
    """A factory of fresh policies for a bot name or an exported agent's path.

    Args:
        spec: A name of :data:`agents.BOT_NAMES`, or the path of an exported agent.
        rules: The rules the agent will play; an exported agent must have been trained under
            them (checked when it is built). Unused for bots.

    Raises:
        ValueError: naming the bots and the expected file forms when ``spec`` is neither.
    """
    text = str(spec)
    if text in BOT_NAMES:

        def build_bot(seed: Seed) -> Policy:
            return make_agent(text, seed)

        return PolicyFactory(text, build_bot)
    if is_agent_file(text):
        from agents.learned import load_policy  # torch is imported only for learned agents

        def build_learned(seed: Seed) -> Policy:
            if isinstance(seed, np.random.Generator):
                seed = int(seed.integers(2**62))
            return load_policy(text, rules=rules, seed=seed)

        return PolicyFactory(Path(text).stem, build_learned)
    raise _unknown(text)


def resolve_policy(spec: str | Path, rules: Rules | None = None, seed: Seed = 0) -> Policy:
    """One policy for a bot name or an exported agent's path, built and seeded now.

    Raises:
        ValueError: naming the bots and the expected file forms when ``spec`` is neither.
    """
    return policy_factory(spec, rules)(seed)


def resolve_opponents(
    specs: str | Sequence[str | Path], rules: Rules | None = None
) -> PolicyFactory | list[PolicyFactory]:
    """Opponents for the learner envs from names: one factory (for one name) or a list.

    The envs build the factories' policies from their own seed, so a seeded env replays
    exactly.

    Raises:
        ValueError: for an unknown name.
    """
    if isinstance(specs, str):
        return policy_factory(specs, rules)
    return [policy_factory(spec, rules) for spec in specs]
