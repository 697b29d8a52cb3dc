"""Speed of ``python_uno`` through OpenSpiel, against two OpenSpiel games in the same run.

Random games are played through pyspiel's API (``new_initial_state``, ``chance_outcomes``,
``legal_actions``, ``apply_action``) for ``python_uno`` (uno-lab's core behind OpenSpiel's
Python-game bridge), ``python_kuhn_poker`` (OpenSpiel's own Python game: the cost of the
bridge with almost no game logic) and ``crazy_eights`` (a C++ card game of the same family).
The figure is **decision steps per second**: player decisions only, chance nodes are played
but not counted; the timed window holds the new states, the chance draws and the random
choices, as any rollout loop would.

Scheme: one untimed warm-up game per game, then three repeats per game of about
``seconds / 3`` each, interleaved (uno, kuhn, crazy eights, uno, ...) so that a disturbance on
the machine touches all three alike; each figure is the median of its three repeats. The
ratio ``python_uno / python_kuhn_poker`` compares uno-lab's cost per decision with the
bridge's own.

Run ``python -m unolab.benchmarks.openspiel_speed [--seconds S] [--seed N] [--players N]``.
Needs OpenSpiel: ``pip install 'uno-lab[openspiel]'``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any

from uno_env.console import run_main
from unolab.benchmarks.options import (
    add_seed_option,
    benchmark_parser,
    int_in_range,
    positive_seconds,
)

__all__ = ["GAMES", "decision_steps_per_second", "main", "measure"]

GAMES = ("python_uno", "python_kuhn_poker", "crazy_eights")
"""The games measured, in the order of the report."""
_REPEATS = 3


def _play(game: Any, rng: random.Random, budget_s: float | None) -> tuple[int, float]:
    """Play random games until the budget is spent (or one game, without a budget).

    Returns:
        (decision steps, elapsed seconds).
    """
    steps = 0
    start = time.perf_counter()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                u = rng.random()
                action = outcomes[-1][0]
                for outcome, probability in outcomes:
                    u -= probability
                    if u < 0.0:
                        action = outcome
                        break
                state.apply_action(action)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                steps += 1
        elapsed = time.perf_counter() - start
        if budget_s is None or elapsed >= budget_s:
            return steps, elapsed


def decision_steps_per_second(
    games: dict[str, Any], seconds: float, seed: int
) -> dict[str, list[float]]:
    """The decision steps per second of each game, one rate per repeat.

    Args:
        games: Loaded pyspiel games by name.
        seconds: Timed budget per game (split over the repeats).
        seed: Seed of the random choices.

    Returns:
        The rates of the repeats, by game name.
    """
    rng = random.Random(seed)
    for game in games.values():
        _play(game, rng, None)  # warm-up: compiled code, caches
    rates: dict[str, list[float]] = {name: [] for name in games}
    for _ in range(_REPEATS):
        for name, game in games.items():
            steps, elapsed = _play(game, rng, seconds / _REPEATS)
            rates[name].append(steps / elapsed)
    return rates


def measure(seconds: float = 6.0, seed: int = 0, players: int = 2) -> dict[str, float]:
    """The median decision steps per second of :data:`GAMES` and the uno / kuhn ratio.

    Args:
        seconds: Timed budget per game.
        seed: Seed of the random choices.
        players: Players at the UNO and crazy eights tables (kuhn poker has 2).

    Returns:
        Medians by game name, and ``"ratio"``: python_uno / python_kuhn_poker.

    Raises:
        ImportError: without OpenSpiel, saying how to install it.
    """
    from uno_env.envs.openspiel_checks import INSTALL_HINT

    try:
        import open_spiel.python.games  # noqa: F401  (registers python_kuhn_poker)
        import pyspiel
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    import uno_env.envs.openspiel_game  # noqa: F401  (registers python_uno)

    games = {
        "python_uno": pyspiel.load_game("python_uno", {"num_players": players}),
        "python_kuhn_poker": pyspiel.load_game("python_kuhn_poker"),
        "crazy_eights": pyspiel.load_game("crazy_eights", {"players": players}),
    }
    rates = decision_steps_per_second(games, seconds, seed)
    out = {name: float(statistics.median(rates[name])) for name in GAMES}
    out["ratio"] = out["python_uno"] / out["python_kuhn_poker"]
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the decision steps per second of each OpenSpiel game and UNO's ratio to Kuhn
    poker (``argv``: the options; default: the command line)."""
    parser = benchmark_parser("python -m unolab.benchmarks.openspiel_speed", __doc__)
    parser.add_argument(
        "--seconds", type=positive_seconds, default=6.0, help="timed budget per game (> 0)"
    )
    add_seed_option(parser, 0, help="random choices' seed")
    parser.add_argument(
        "--players",
        type=int_in_range(2, 5),
        default=2,
        help="players at the UNO and crazy eights tables (2-5; crazy eights takes up to 5)",
    )
    args = parser.parse_args(argv)
    try:
        result = measure(args.seconds, args.seed, args.players)
    except ImportError as error:
        print(error, file=sys.stderr)
        raise SystemExit(2) from None
    print(f"decision steps per second, random play, median of {_REPEATS} repeats:")
    for name in GAMES:
        print(f"  {name:<18} {result[name]:>12,.0f}")
    print(f"  python_uno / python_kuhn_poker = {result['ratio']:.3f}")


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.openspiel_speed")
