"""uno-lab's game core: a vectorised NumPy UNO engine and the adapters on top of it.

The rules live in :mod:`uno_env.core` (pure functions over batched state arrays). See
``docs/engine.md`` for the exact contract and ``docs/rules.md`` for the rule switches.
"""

from uno_env import cards, core
from uno_env.cards import action_name, card_name, parse_action, parse_card
from uno_env.configuration import ConfigError
from uno_env.core import IllegalActionError, UnoState
from uno_env.game import UnoGame
from uno_env.rules import PRESETS, Rules, load_rules

__all__ = [
    "PRESETS",
    "ConfigError",
    "IllegalActionError",
    "Rules",
    "UnoGame",
    "UnoState",
    "action_name",
    "card_name",
    "cards",
    "core",
    "load_rules",
    "parse_action",
    "parse_card",
]
