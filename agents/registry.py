"""The bots by name: :data:`BOT_NAMES` and :func:`make_agent`."""

from __future__ import annotations

from collections.abc import Callable

from agents.greedy import GreedyPointsBot
from agents.mixbot import MixBot
from agents.ranking import CardRankingBot
from uno_env.policy import Policy, RandomActionBot, RandomAnyBot, RandomBot, Seed

__all__ = ["BOT_NAMES", "make_agent"]

_REGISTRY: dict[str, Callable[[Seed], Policy]] = {
    RandomBot.name: RandomBot,
    RandomActionBot.name: RandomActionBot,
    RandomAnyBot.name: RandomAnyBot,
    GreedyPointsBot.name: GreedyPointsBot,
    CardRankingBot.name: CardRankingBot,
    MixBot.name: MixBot,
}

BOT_NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""Names accepted by :func:`make_agent`."""


def make_agent(name: str, seed: Seed = None) -> Policy:
    """Build a bot by name.

    Args:
        name: One of :data:`BOT_NAMES`.
        seed: Seed of the bot's random choices (the heuristic bots are deterministic and
            ignore it).

    Returns:
        A fresh :class:`~uno_env.policy.Policy`.

    Raises:
        ValueError: for an unknown name; the message lists the valid names.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown bot {name!r}; valid names are: {', '.join(BOT_NAMES)}")
    return _REGISTRY[name](seed)
