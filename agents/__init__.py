"""Batched UNO players: baseline bots, the registry and (in :mod:`agents.arena`) the arena.

Every bot follows the :class:`~agents.base.Policy` protocol: ``act(observations, masks)``
over a batch, reading only the observation (:mod:`uno_env.observation`) and always choosing
an action the mask allows. Build one by name with :func:`make_agent`::

    >>> from agents import BOT_NAMES, make_agent
    >>> BOT_NAMES
    ('random', 'random_any', 'greedy_points', 'card_ranking', 'mixbot')
    >>> make_agent("mixbot").name
    'mixbot'

See ``docs/bots.md`` for what each bot does and how strong it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents._common import HeuristicBot
from agents.base import Policy
from agents.greedy import GreedyPointsBot
from agents.mixbot import MixBot
from agents.random_bots import RandomAnyBot, RandomBot
from agents.ranking import CardRankingBot

__all__ = [
    "BOT_NAMES",
    "CardRankingBot",
    "GreedyPointsBot",
    "HeuristicBot",
    "MixBot",
    "Policy",
    "RandomAnyBot",
    "RandomBot",
    "make_agent",
]

_REGISTRY: dict[str, Callable[[int | np.random.Generator | None], Policy]] = {
    RandomBot.name: RandomBot,
    RandomAnyBot.name: RandomAnyBot,
    GreedyPointsBot.name: GreedyPointsBot,
    CardRankingBot.name: CardRankingBot,
    MixBot.name: MixBot,
}

BOT_NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""Names accepted by :func:`make_agent`."""


def make_agent(name: str, seed: int | np.random.Generator | None = None) -> Policy:
    """Build a bot by name.

    Args:
        name: One of :data:`BOT_NAMES`.
        seed: Seed of the bot's random choices (the heuristic bots are deterministic and
            ignore it).

    Returns:
        A fresh :class:`Policy`.

    Raises:
        ValueError: for an unknown name; the message lists the valid names.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown bot {name!r}; valid names are: {', '.join(BOT_NAMES)}")
    return _REGISTRY[name](seed)
