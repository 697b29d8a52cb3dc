"""uno-lab's game core: a vectorised NumPy UNO engine and the adapters on top of it.

The rules live in :mod:`uno_env.core` (pure functions over batched state arrays). See
``docs/engine.md`` for the exact contract and ``docs/rules.md`` for the rule switches.
"""

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any

from uno_env.envs.registration import register_envs

if TYPE_CHECKING:
    from uno_env import cards, core
    from uno_env.cards import action_name, card_name, parse_action, parse_card
    from uno_env.config_values import ConfigError
    from uno_env.core import IllegalActionError, UnoState
    from uno_env.envs.pettingzoo_env import env, raw_env
    from uno_env.envs.text_env import text_env
    from uno_env.game import UnoGame
    from uno_env.rules import PRESETS, Rules, load_rules

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
    "text_env",
]

# ``gymnasium.make("uno_env/Uno-v0", ...)``: the env module is imported only by make().
register_envs()


_HOMES = {
    "cards": "uno_env.cards",
    "core": "uno_env.core",
    "action_name": "uno_env.cards",
    "card_name": "uno_env.cards",
    "parse_action": "uno_env.cards",
    "parse_card": "uno_env.cards",
    "ConfigError": "uno_env.configuration",
    "IllegalActionError": "uno_env.core",
    "UnoState": "uno_env.core",
    "UnoGame": "uno_env.game",
    "PRESETS": "uno_env.rules",
    "Rules": "uno_env.rules",
    "load_rules": "uno_env.rules",
    "env": "uno_env.envs.pettingzoo_env",
    "raw_env": "uno_env.envs.pettingzoo_env",
    "text_env": "uno_env.envs.text_env",
}
"""Where each public name lives. They are imported on first use, so that importing one
light module of the package (``uno_env.files``, ``uno_env.rules``) does not load the
compiled engine and numba with it."""


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (``from uno_env import core``)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'uno_env' has no attribute {name!r}")
    module = importlib.import_module(home)
    value = module if home == f"uno_env.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
