"""The bots by name: :data:`BOT_NAMES`, :data:`SEARCH_NAMES` and :func:`make_agent`.

:data:`BOT_NAMES` are the bots that act on observations (``act``), the ones every list of
"all the bots" rates. The search agents of :data:`SEARCH_NAMES` (``pimc``, ``pimc_strong``,
``pimc_guided`` and ``ismcts``) act on the state (``needs_state``, see :mod:`uno_env.play`)
and cost milliseconds per decision, so they are built by name like a bot but are not in
those lists; :data:`AGENT_NAMES` holds both.
"""

from __future__ import annotations

from collections.abc import Callable

from uno_env.policy import Policy, Seed
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.plain_bots import PLAIN_BOTS
from unolab.agents.search import PimcAgent, guided_pimc, strong_pimc

__all__ = ["AGENT_NAMES", "BOT_NAMES", "SEARCH_NAMES", "make_agent"]

_REGISTRY: dict[str, Callable[[Seed], Policy]] = dict(PLAIN_BOTS)
_SEARCH: dict[str, Callable[[Seed], Policy]] = {
    PimcAgent.name: PimcAgent,
    "pimc_strong": strong_pimc,
    "pimc_guided": guided_pimc,
    IsmctsAgent.name: IsmctsAgent,
}

BOT_NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""The bots that act on observations (the lists of "every bot")."""
SEARCH_NAMES: tuple[str, ...] = tuple(_SEARCH)
"""The search agents, which act on the state (``needs_state``)."""
AGENT_NAMES: tuple[str, ...] = BOT_NAMES + SEARCH_NAMES
"""Names accepted by :func:`make_agent`."""


def make_agent(name: str, seed: Seed = None) -> Policy:
    """Build a bot by name.

    Args:
        name: One of :data:`AGENT_NAMES`.
        seed: Seed of the bot's random choices (the heuristic bots are deterministic and
            ignore it; ``pimc`` seeds its determinizations with it).

    Returns:
        A fresh :class:`~uno_env.policy.Policy`.

    Raises:
        ValueError: for an unknown name; the message lists the valid names.
    """
    build = _REGISTRY.get(name) or _SEARCH.get(name)
    if build is None:
        raise ValueError(f"unknown bot {name!r}; valid names are: {', '.join(AGENT_NAMES)}")
    return build(seed)
