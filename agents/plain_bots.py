"""The bots that act on observations, by name (the table :mod:`unolab.agents.registry` extends).

Kept apart from the registry so that the search agent (:mod:`unolab.agents.search`), which the
registry lists too, can build its rollout bots by name without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable

from uno_env.policy import Policy, RandomActionBot, RandomAnyBot, RandomBot, Seed
from unolab.agents.greedy import GreedyPointsBot
from unolab.agents.mixbot import MixBot
from unolab.agents.ranking import CardRankingBot

__all__ = ["PLAIN_BOTS"]

PLAIN_BOTS: dict[str, Callable[[Seed], Policy]] = {
    RandomBot.name: RandomBot,
    RandomActionBot.name: RandomActionBot,
    RandomAnyBot.name: RandomAnyBot,
    GreedyPointsBot.name: GreedyPointsBot,
    CardRankingBot.name: CardRankingBot,
    MixBot.name: MixBot,
}
"""Bot name -> builder from a seed, in the order of :data:`unolab.agents.BOT_NAMES`."""
