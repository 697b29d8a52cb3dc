"""Batched UNO players: baseline bots, learned policies, the resolver and the arena.

Every player follows the :class:`~uno_env.policy.Policy` protocol (re-exported here):
``act(observations, masks)`` over a batch, reading only the observation
(:mod:`uno_env.observation`) and always choosing an action the mask allows. Build a bot by
name with :func:`make_agent`, or resolve a name or an exported agent's path with
:func:`resolve_policy` / :func:`policy_factory` / :func:`resolve_opponents`::

    >>> from agents import BOT_NAMES, make_agent
    >>> BOT_NAMES
    ('random', 'random_action', 'random_any', 'greedy_points', 'card_ranking', 'mixbot')
    >>> make_agent("mixbot").name
    'mixbot'

See ``docs/bots.md`` for what each bot does and how strong it is.
"""

from __future__ import annotations

from agents._common import HeuristicBot
from agents.greedy import GreedyPointsBot
from agents.mixbot import MixBot
from agents.ranking import CardRankingBot
from agents.registry import AGENT_NAMES, BOT_NAMES, SEARCH_NAMES, make_agent
from agents.resolve import is_agent_file, policy_factory, resolve_opponents, resolve_policy
from uno_env.policy import Policy, PolicyFactory, RandomActionBot, RandomAnyBot, RandomBot

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
    "make_agent",
    "policy_factory",
    "resolve_opponents",
    "resolve_policy",
]
