"""RLCard 1.2.0's UNO environment, the peer of uno-lab's speed figures: loaded safely, and timed.

RLCard is only a benchmark/reference dependency (the ``bench`` extra). This module is the single
place that imports it, so that every caller gets the same, side-effect-controlled behaviour.

Two figures are measured, both single-process and single-threaded:

* :func:`rlcard_steps_per_second`: a bare ``env.step`` loop with a uniformly random legal action,
  i.e. the raw cost of RLCard's game logic plus its observation encoding.
* :func:`rlcard_games_per_second`: complete games through ``rlcard.utils.tournament`` with two
  ``rlcard.agents.RandomAgent`` players, i.e. what an RLCard user gets from its own evaluation
  loop (``env.run`` also builds trajectories).

Timing scheme (both functions): one untimed warm-up, then three timed repeats of about
``seconds / 3`` each; the result is the **median** of the three rates, which is robust to a
single repeat being disturbed by other processes on the machine.

Run ``python -m unolab.benchmarks.rlcard [--seconds S] [--seed N]`` to print both figures.

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
import statistics
import sys
import time
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from uno_env.console import run_main
from unolab.benchmarks.options import add_seed_option, benchmark_parser, positive_seconds

__all__ = [
    "RLCARD_UNO_NUM_ACTIONS",
    "RLCardAgent",
    "RLCardEnv",
    "legal_action_ids",
    "main",
    "make_rlcard_uno",
    "rlcard_games_per_second",
    "rlcard_peer",
    "rlcard_random_agent_cls",
    "rlcard_steps_per_second",
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


_REPEATS = 3


def _check_seconds(seconds: float) -> float:
    """Validate a time budget and return the per-repeat budget.

    Args:
        seconds: Total timed budget in seconds.

    Returns:
        ``seconds / 3``, the budget of one repeat.

    Raises:
        ValueError: If ``seconds`` is not positive.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    return seconds / _REPEATS


def rlcard_steps_per_second(seconds: float = 5.0, seed: int = 0) -> float:
    """Measure RLCard UNO ``env.step`` calls per second under a uniformly random legal policy.

    One env (seeded with ``seed``) and one ``np.random.Generator`` (seeded with ``seed``) are
    used throughout. Each step picks an action uniformly among the unique legal action ids,
    ``state["legal_actions"].keys()``, and calls ``env.step``; when ``env.is_over()`` the env is
    reset. Only ``env.step`` calls are counted, but the timed window also contains the resets and
    the action sampling, as any rollout loop would.

    Scheme: 200 untimed warm-up steps, then three repeats that each run until about
    ``seconds / 3`` of wall time has passed (the clock is read after every step); each repeat
    yields ``steps / elapsed`` and the median of the three is returned.

    Args:
        seconds: Approximate total timed duration in seconds (warm-up excluded).
        seed: Seed for the env and the action sampler.

    Returns:
        The median steps per second over the three repeats.

    Raises:
        ValueError: If ``seconds`` is not positive.
    """
    per_repeat = _check_seconds(seconds)
    env = make_rlcard_uno(num_players=2, seed=seed)
    rng = np.random.default_rng(seed)
    state, _ = env.reset()

    def run_steps(budget_s: float | None, max_steps: int | None) -> tuple[int, float]:
        """Step until the time budget or step budget is used; return (steps, elapsed)."""
        nonlocal state
        steps = 0
        start = time.perf_counter()
        now = start
        while True:
            legal = legal_action_ids(state)
            state, _ = env.step(legal[int(rng.integers(len(legal)))])
            steps += 1
            if env.is_over():
                state, _ = env.reset()
            now = time.perf_counter()
            if budget_s is not None and now - start >= budget_s:
                break
            if max_steps is not None and steps >= max_steps:
                break
        return steps, now - start

    run_steps(None, 200)  # warm-up
    rates = []
    for _ in range(_REPEATS):
        steps, elapsed = run_steps(per_repeat, None)
        rates.append(steps / elapsed)
    return float(statistics.median(rates))


def rlcard_games_per_second(seconds: float = 5.0, seed: int = 0) -> float:
    """Measure complete RLCard UNO games per second via ``rlcard.utils.tournament``.

    Two ``rlcard.agents.RandomAgent`` players are set on one env seeded with ``seed``.
    ``RandomAgent`` samples from the *global* ``np.random`` state, so that state is seeded with
    ``seed`` for the measurement and restored afterwards.

    Scheme: an untimed calibration tournament (at least 20 games and 0.2 s) estimates the time
    per game; then three timed tournaments of ``n`` games each are run, with ``n`` chosen so that
    one tournament lasts about ``seconds / 3``; each yields ``n / elapsed`` and the median of the
    three is returned.

    Args:
        seconds: Approximate total timed duration in seconds (calibration excluded).
        seed: Seed for the env and for the global ``np.random`` state used by the agents.

    Returns:
        The median games per second over the three repeats.

    Raises:
        ValueError: If ``seconds`` is not positive.
    """
    from rlcard.utils import tournament

    per_repeat = _check_seconds(seconds)
    random_agent = rlcard_random_agent_cls()
    env = make_rlcard_uno(num_players=2, seed=seed)
    agents: list[Any] = [random_agent(env.num_actions) for _ in range(env.num_players)]
    env.set_agents(agents)

    saved_state = np.random.get_state()
    np.random.seed(seed)
    try:
        calib_games = 0
        start = time.perf_counter()
        while calib_games < 20 or time.perf_counter() - start < 0.2:
            tournament(env, 10)
            calib_games += 10
        per_game = (time.perf_counter() - start) / calib_games
        n_games = max(1, round(per_repeat / per_game))

        rates = []
        for _ in range(_REPEATS):
            start = time.perf_counter()
            tournament(env, n_games)
            rates.append(n_games / (time.perf_counter() - start))
    finally:
        np.random.set_state(saved_state)
    return float(statistics.median(rates))


def main(argv: list[str] | None = None) -> None:
    """Print RLCard UNO steps/s and games/s (``argv``: the options; default: the command
    line)."""
    parser = benchmark_parser("python -m unolab.benchmarks.rlcard", __doc__)
    parser.add_argument(
        "--seconds", type=positive_seconds, default=5.0, help="timed budget per figure (> 0)"
    )
    add_seed_option(parser, 0, bits=32, help="env / policy seed (RLCard takes 32 bits)")
    args = parser.parse_args(argv)
    sps = rlcard_steps_per_second(seconds=args.seconds, seed=args.seed)
    print(f"RLCard UNO env.step loop : {sps:,.0f} steps/s")
    gps = rlcard_games_per_second(seconds=args.seconds, seed=args.seed)
    print(f"RLCard UNO tournament    : {gps:,.1f} games/s")


def rlcard_peer(skip: bool) -> Callable[[float, int], float] | None:
    """The speed benchmarks' peer: the timer of RLCard's ``env.step`` loop
    (:func:`rlcard_steps_per_second`, called with the seconds and
    the seed), or ``None`` when ``skip`` (``--no-rlcard``).

    Raises:
        ModuleNotFoundError: when the ``bench`` extra is not installed, before anything is
            timed (``uno-lab`` says it in one line: the pip command, or ``--no-rlcard``).
    """
    if skip:
        return None
    import rlcard  # noqa: F401  (the peer's module imports it only when it plays)

    return rlcard_steps_per_second


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.rlcard")
