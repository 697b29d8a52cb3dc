"""Throughput of RLCard 1.2.0's UNO environment, the reference point for uno-lab's engine.

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
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from uno_env.console import run_main
from unolab.benchmarks.options import int_in_range, positive_seconds
from unolab.benchmarks.rlcard_compat import (
    legal_action_ids,
    make_rlcard_uno,
    rlcard_random_agent_cls,
)

__all__ = ["main", "rlcard_games_per_second", "rlcard_steps_per_second"]

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
    """Print RLCard UNO steps/s and games/s.

    Args:
        argv: Command-line arguments (defaults to ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(
        prog="python -m unolab.benchmarks.rlcard",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument(
        "--seconds", type=positive_seconds, default=5.0, help="timed budget per figure (> 0)"
    )
    parser.add_argument(
        "--seed",
        type=int_in_range(0, 2**32 - 1),
        default=0,
        help="env / policy seed (RLCard takes 32 bits)",
    )
    args = parser.parse_args(argv)
    sps = rlcard_steps_per_second(seconds=args.seconds, seed=args.seed)
    print(f"RLCard UNO env.step loop : {sps:,.0f} steps/s")
    gps = rlcard_games_per_second(seconds=args.seconds, seed=args.seed)
    print(f"RLCard UNO tournament    : {gps:,.1f} games/s")


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.rlcard")
