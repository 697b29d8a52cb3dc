"""uno-lab's game core: a vectorised NumPy UNO engine and the adapters on top of it.

The rules live in :mod:`uno_env.core` (pure functions over batched state arrays). See
``docs/engine.md`` for the exact contract and ``docs/rules.md`` for the rule switches.
"""

from importlib import metadata
from typing import TYPE_CHECKING, Any

from uno_env import cards, core
from uno_env.cards import action_name, card_name, parse_action, parse_card
from uno_env.configuration import ConfigError
from uno_env.core import IllegalActionError, UnoState
from uno_env.envs.registration import register_envs
from uno_env.game import UnoGame
from uno_env.rules import PRESETS, Rules, load_rules

if TYPE_CHECKING:
    from uno_env.envs.pettingzoo_env import env, raw_env

try:
    __version__ = metadata.version("uno-lab")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "PRESETS",
    "ConfigError",
    "IllegalActionError",
    "Rules",
    "UnoGame",
    "UnoState",
    "__version__",
    "action_name",
    "card_name",
    "cards",
    "core",
    "env",
    "load_rules",
    "parse_action",
    "parse_card",
    "raw_env",
]

# ``gymnasium.make("uno_env/Uno-v0", ...)``: the env module is imported only by make().
register_envs()


def __getattr__(name: str) -> Any:
    """Import the PettingZoo env on first use: ``from uno_env import env, raw_env``."""
    if name in ("env", "raw_env"):
        from uno_env.envs import pettingzoo_env

        return getattr(pettingzoo_env, name)
    raise AttributeError(f"module 'uno_env' has no attribute {name!r}")
