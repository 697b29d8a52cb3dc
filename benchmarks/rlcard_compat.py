"""Runtime compatibility layer for RLCard 1.2.0's UNO environment.

RLCard is only a benchmark/reference dependency (the ``bench`` extra). This module is the single
place that imports it, so that every caller gets the same, side-effect-controlled behaviour.

Findings for RLCard 1.2.0 on Python 3.11 with NumPy 2.x (checked against the installed source):

* ``rlcard.make("uno")`` and the whole UNO game/env path work unchanged with NumPy 2: the UNO
  code uses no removed NumPy aliases (``np.int``, ``np.float``, ``np.bool``, ``np.object``), so
  **no NumPy aliases are patched** here (patching them would silently change NumPy for every
  other library in the process).
* ``import rlcard.agents`` (needed for ``RandomAgent``) is the fragile part. Its
  ``__init__`` runs ``python -m pip freeze`` in a subprocess at import time (about 1 s, and it
  raises ``CalledProcessError`` in virtual environments without pip, e.g. ones made by uv), it
  imports torch when torch is installed (and torch then starts one thread per core), and it does
  ``from distutils.version import LooseVersion``, which fails on Python >= 3.12 unless
  setuptools' distutils shim is present. :func:`rlcard_random_agent_cls` imports the package the
  normal way and, if that fails, loads ``rlcard/agents/random_agent.py`` on its own (that file
  only needs NumPy). When torch ends up imported it is pinned to one thread.
* ``rlcard.make("uno", config={"game_num_players": n})`` silently ignores ``n``: the base
  ``Env`` only forwards game configs for blackjack and the hold'em variants, and the UNO payoff
  code hard-codes two players (``payoffs[1 - winner]``). :func:`make_rlcard_uno` therefore only
  accepts ``num_players == 2`` and says so instead of returning a wrong env.
* ``UnoEnv._decode_action`` crashes (``ValueError: a must be 1-dimensional``) when given an
  illegal action id, because it calls ``np.random.choice`` on an ``OrderedDict``. Callers must
  only pass ids from ``state["legal_actions"]``.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

__all__ = [
    "RLCARD_UNO_NUM_ACTIONS",
    "RLCardAgent",
    "RLCardEnv",
    "legal_action_ids",
    "make_rlcard_uno",
    "rlcard_random_agent_cls",
]

RLCARD_UNO_NUM_ACTIONS = 61
"""Size of RLCard's UNO action space: 4 colours x 15 traits (ids 0-59) plus ``draw`` (id 60)."""


class RLCardEnv(Protocol):
    """The subset of ``rlcard.envs.Env`` (UNO flavour) that uno-lab relies on."""

    num_players: int
    num_actions: int
    timestep: int

    def reset(self) -> tuple[dict[str, Any], int]:
        """Start a new game; return ``(state, player_id)``."""
        ...

    def step(self, action: Any, raw_action: bool = False) -> tuple[dict[str, Any], int]:
        """Apply one action of the current player; return ``(next_state, next_player_id)``."""
        ...

    def is_over(self) -> bool:
        """Return True once a player has emptied their hand."""
        ...

    def get_payoffs(self) -> Any:
        """Return the payoff array (``+1`` winner, ``-1`` loser; zeros while running)."""
        ...

    def get_player_id(self) -> int:
        """Return the id of the player to move."""
        ...

    def set_agents(self, agents: list[Any]) -> None:
        """Set one agent per player, used by ``run`` and ``rlcard.utils.tournament``."""
        ...

    def run(self, is_training: bool = False) -> tuple[list[list[Any]], Any]:
        """Play one complete game with the agents; return ``(trajectories, payoffs)``."""
        ...


class RLCardAgent(Protocol):
    """The agent interface used by ``rlcard.envs.Env.run``."""

    use_raw: bool

    def step(self, state: dict[str, Any]) -> Any:
        """Return an action id for ``state`` (training mode)."""
        ...

    def eval_step(self, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Return ``(action id, info)`` for ``state`` (evaluation mode)."""
        ...


def _ensure_distutils_version() -> None:
    """Provide ``distutils.version.LooseVersion`` if the interpreter lacks it.

    ``rlcard/agents/__init__.py`` imports ``LooseVersion`` but never uses it. On Python >= 3.12
    ``distutils`` is gone from the standard library; setuptools usually re-provides it, and only
    when it does not is a minimal stand-in registered (nothing else is touched).
    """
    try:
        import distutils.version  # noqa: F401
    except ImportError:
        pkg = sys.modules.get("distutils") or types.ModuleType("distutils")
        pkg.__path__ = []  # mark as a package so the submodule import resolves
        version = types.ModuleType("distutils.version")

        class LooseVersion(str):
            """Placeholder for the removed ``distutils.version.LooseVersion`` (unused by RLCard)."""

        version.LooseVersion = LooseVersion  # type: ignore[attr-defined]
        pkg.version = version  # type: ignore[attr-defined]
        sys.modules.setdefault("distutils", pkg)
        sys.modules["distutils.version"] = version


def _pin_torch_threads() -> None:
    """Limit torch to one intra-op thread if some import has already loaded it."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _load_random_agent_module_directly() -> Any:
    """Load ``rlcard/agents/random_agent.py`` without executing ``rlcard/agents/__init__.py``.

    Returns:
        The ``RandomAgent`` class from RLCard's own source file.

    Raises:
        ImportError: If RLCard is not installed or the file cannot be found.
    """
    import rlcard

    path = f"{rlcard.__path__[0]}/agents/random_agent.py"
    spec = importlib.util.spec_from_file_location("_uno_lab_rlcard_random_agent", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load RLCard's RandomAgent from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RandomAgent


def rlcard_random_agent_cls() -> Callable[[int], RLCardAgent]:
    """Return ``rlcard.agents.RandomAgent``, working around RLCard's fragile package import.

    The regular ``from rlcard.agents import RandomAgent`` is tried first. If the package
    ``__init__`` fails (no pip in the environment, no ``distutils``, a broken torch install), the
    agent's own module is loaded directly; it is the identical class body and only depends on
    NumPy. If torch was imported along the way it is pinned to one thread.

    Note that ``RandomAgent`` draws from the *global* ``np.random`` state, not from the env's
    seeded generator; seed ``np.random`` yourself for reproducible tournaments.

    Returns:
        The ``RandomAgent`` class (constructor signature ``RandomAgent(num_actions)``).
    """
    _ensure_distutils_version()
    try:
        from rlcard.agents import RandomAgent

        cls: Any = RandomAgent
    except Exception:  # CalledProcessError from `pip freeze`, ImportError, torch failures, ...
        cls = _load_random_agent_module_directly()
    _pin_torch_threads()
    result: Callable[[int], RLCardAgent] = cls
    return result


def make_rlcard_uno(num_players: int = 2, seed: int = 0) -> RLCardEnv:
    """Create RLCard 1.2.0's UNO environment, seeded, with the compatibility fixes applied.

    The env's own ``np.random.RandomState`` (seeded from ``seed`` through RLCard's SHA-512 seed
    hashing) drives the deck shuffles, the reshuffles and the random colours RLCard picks for a
    wild starter card and for a drawn wild card. Agents have their own randomness.

    Args:
        num_players: Number of players. RLCard 1.2.0's UNO only implements two players (it
            ignores ``game_num_players`` and its payoffs assume two players), so this must be 2.
        seed: Non-negative integer seed for the env's random state.

    Returns:
        A fresh ``rlcard.envs.uno.UnoEnv``; call ``reset()`` before stepping it.

    Raises:
        ValueError: If ``num_players != 2`` or ``seed`` is negative.
        ImportError: If RLCard is not installed (``pip install 'uno-lab[bench]'``).
    """
    if num_players != 2:
        raise ValueError(
            f"RLCard 1.2.0's UNO supports exactly 2 players (got num_players={num_players}): "
            "it ignores 'game_num_players' and its payoffs assume two players"
        )
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    import rlcard

    env: Any = rlcard.make("uno", config={"seed": int(seed)})
    if env.num_players != num_players or env.num_actions != RLCARD_UNO_NUM_ACTIONS:
        raise RuntimeError(
            f"unexpected RLCard UNO env: {env.num_players} players, {env.num_actions} actions"
        )
    _pin_torch_threads()
    result: RLCardEnv = env
    return result


def legal_action_ids(state: dict[str, Any]) -> list[int]:
    """Return the legal action ids of an RLCard UNO state, in RLCard's order.

    Args:
        state: A state dict as returned by ``env.reset()`` / ``env.step()``.

    Returns:
        The keys of ``state["legal_actions"]`` (an ``OrderedDict`` of unique ids) as a list.
    """
    legal: OrderedDict[int, None] = state["legal_actions"]
    return list(legal.keys())
