"""Batched UNO players: baseline bots, learned policies, the resolver and the arena.

Every player follows the :class:`~uno_env.policy.Policy` protocol (re-exported here):
``act(observations, masks)`` over a batch, reading only the observation
(:mod:`uno_env.observation`) and always choosing an action the mask allows. Build a bot by
name with :func:`make_agent`, or resolve a name or an exported agent's path with
:func:`resolve_policy` / :func:`policy_factory` / :func:`resolve_opponents`::

    >>> from unolab.agents import BOT_NAMES, make_agent
    >>> BOT_NAMES
    ('random', 'random_action', 'random_any', 'greedy_points', 'card_ranking', 'mixbot')
    >>> make_agent("mixbot").name
    'mixbot'

Learned agents load with :func:`load_policy` (a shipped agent's name or an exported
agent's path; torch is imported then, not with this package)::

    >>> from unolab.agents import load_policy
    >>> load_policy("ppo_official_2p").meta.rules["num_players"]
    2

See ``docs/bots.md`` for what each bot does and how strong it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uno_env.policy import Policy, PolicyFactory, RandomActionBot, RandomAnyBot, RandomBot
from unolab.agents.bots import CardRankingBot, GreedyPointsBot, MixBot
from unolab.agents.heuristics import HeuristicBot
from unolab.agents.registry import AGENT_NAMES, BOT_NAMES, SEARCH_NAMES, make_agent
from unolab.agents.resolve import is_agent_file, policy_factory, resolve_opponents, resolve_policy

if TYPE_CHECKING:
    from unolab.agents.learned import load_policy

__all__ = [
    "AGENT_NAMES",
    "BOT_NAMES",
    "SEARCH_NAMES",
    "CardRankingBot",
    "GreedyPointsBot",
    "HeuristicBot",
    "MixBot",
    "Policy",
    "PolicyFactory",
    "RandomActionBot",
    "RandomAnyBot",
    "RandomBot",
    "is_agent_file",
    "load_policy",
    "make_agent",
    "policy_factory",
    "resolve_opponents",
    "resolve_policy",
]


def __getattr__(name: str) -> Any:
    # load_policy needs torch: it is imported on first use, so bots load without it.
    if name == "load_policy":
        from unolab.agents.learned import load_policy

        return load_policy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
