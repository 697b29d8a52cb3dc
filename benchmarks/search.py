"""The search agents: ``pimc``'s rollout speed beside the plain core, and strength by budget.

``python -m unolab.benchmarks.search speed`` measures, in one run, the plain core's random-play
throughput (:func:`unolab.benchmarks.core.engine_steps_per_second`) and the game steps per second
that ``pimc`` plays in its rollouts while searching (determinizing, stepping the candidate
actions and playing out with the compiled fast rollout, everything of a decision counted),
one decision at a time (B = 1, as at a table) and for 64 tables at once.

``python -m unolab.benchmarks.search strength`` plays a search agent (``--agent``: ``pimc``, its
budgets rollouts per candidate action, or ``ismcts``, iterations per decision) at several
budgets against opponent bots: official rules, seats alternated, Wilson 95% intervals
(:func:`unolab.agents.arena.evaluate_vs`), and times single decisions (B = 1) for the median
milliseconds per searched decision. Both print a table and write JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from uno_env import core
from uno_env.console import run_main
from uno_env.core import UnoState
from uno_env.policy import ActArray, MaskArray
from uno_env.rules import Rules, load_rules
from uno_env.sampling import uniform_legal_actions
from unolab.agents.arena import evaluate_vs
from unolab.agents.bots import PLAIN_BOTS
from unolab.agents.ismcts import MAX_ITERATIONS, IsmctsAgent
from unolab.agents.pimc import PimcAgent
from unolab.agents.search_base import StateSearchAgent
from unolab.benchmarks.core import engine_steps_per_second
from unolab.benchmarks.options import (
    add_out_option,
    check_out_option,
    int_in_range,
    positive_seconds,
    write_figures,
)

__all__ = ["build_parser", "decision_states", "main", "search_speed", "strength_table"]


def decision_states(rules: Rules, count: int, seed: int) -> UnoState:
    """``count`` live games after a random number of random-legal moves (0-40)."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, count, seed=seed)
    stop = rng.integers(0, 41, size=count)
    for turn in range(41):
        mask = core.legal_action_mask(rules, state)
        moving = state.live & (stop > turn)
        if not moving.any():
            break
        actions = uniform_legal_actions(mask, rng)
        # A game that would end stays where it is (a live decision is wanted).
        after = core.step(rules, state, actions)
        keep = moving & after.live
        state = state.select(np.arange(count))
        for name, arr in after.array_fields().items():
            getattr(state, name)[keep] = arr[keep]
        state.clear_mask_cache()
    return state


def search_speed(rules: Rules, rollouts: int, seconds: float, seed: int) -> dict[str, float]:
    """Rollout steps per second inside search (B = 1 and B = 64) and the plain core's."""
    states = decision_states(rules, 64, seed)
    out: dict[str, float] = {}
    for label, tables in (("search_b1", 1), ("search_b64", 64)):
        agent = PimcAgent(seed=seed, rollouts=rollouts)
        agent.act_from_state(rules, states.select(np.arange(1)), states.current[:1])  # warm-up
        agent.rollout_steps = 0
        start = time.perf_counter()
        i = 0
        while time.perf_counter() - start < seconds:
            rows = np.arange(i, i + tables) % states.batch_size
            sub = states.select(rows)
            agent.act_from_state(rules, sub, sub.current.astype(np.int64))
            i += tables
        out[label] = agent.rollout_steps / (time.perf_counter() - start)
    for batch in (1, 4096):
        out[f"core_b{batch}"] = engine_steps_per_second(rules, batch, seconds, seed)
    return out


SEARCH_AGENTS: dict[str, Callable[[int, int], StateSearchAgent]] = {
    "pimc": lambda seed, budget: PimcAgent(seed=seed, rollouts=budget),
    "ismcts": lambda seed, budget: IsmctsAgent(seed=seed, iterations=budget),
}
"""The search agents the strength table plays, built from a seed and a budget (``pimc``:
rollouts per candidate action; ``ismcts``: iterations per decision)."""
BUDGET_UNITS = {"pimc": "rollouts/action", "ismcts": "iterations"}


class _Timed:
    """A search agent recording the wall time of each searched single decision."""

    needs_state = True
    uses_observations = False

    def __init__(self, agent: StateSearchAgent) -> None:
        self.agent = agent
        self.name = agent.name
        self.times: list[float] = []

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        """The agent's own (it refuses: it needs the state)."""
        return self.agent.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """The agent's own."""
        self.agent.reset(games)

    def act_from_state(
        self, rules: Rules, state: UnoState, seats: npt.ArrayLike, masks: MaskArray | None = None
    ) -> ActArray:
        """Search, timing single searched decisions."""
        before = self.agent.decisions
        start = time.perf_counter()
        out = self.agent.act_from_state(rules, state, seats, masks)
        if self.agent.decisions > before and state.batch_size == 1:
            self.times.append(time.perf_counter() - start)
        return out


def median_ms(rules: Rules, budget: int, hands: int, seed: int, agent: str = "pimc") -> float:
    """Median milliseconds of a searched decision, one table at a time, against random."""
    timed = _Timed(SEARCH_AGENTS[agent](seed, budget))
    evaluate_vs(rules, timed, "random", hands, seed=seed, batch_size=1, progress=False)
    return 1000 * statistics.median(timed.times)


def strength_table(
    rules: Rules,
    budgets: Sequence[int],
    opponents: Sequence[str],
    hands: int,
    seed: int,
    timing_hands: int,
    agent_name: str = "pimc",
) -> list[dict[str, Any]]:
    """Win rates of a search agent per budget and opponent, and the median ms per decision."""
    rows = []
    for budget in budgets:
        ms = median_ms(rules, budget, timing_hands, seed, agent_name)
        for opponent in opponents:
            agent = SEARCH_AGENTS[agent_name](seed, budget)
            start = time.perf_counter()
            result = evaluate_vs(rules, agent, opponent, hands, seed=seed, progress=False)
            row = {
                "agent": agent_name,
                "budget": budget,
                "budget_unit": BUDGET_UNITS[agent_name],
                "opponent": opponent,
                "hands": result.games,
                "win_rate": result.win_rate,
                "ci95": [result.ci_low, result.ci_high],
                "median_ms_per_decision": ms,
                "seconds": time.perf_counter() - start,
            }
            rows.append(row)
            print(
                f"{agent_name} {budget:>5} {BUDGET_UNITS[agent_name]} vs {opponent:<8} "
                f"{100 * result.win_rate:5.1f}% [{100 * result.ci_low:.1f}, "
                f"{100 * result.ci_high:.1f}]  median {ms:6.1f} ms/decision  "
                f"({row['seconds']:.0f} s)",
                flush=True,
            )
    return rows


def build_parser(prog: str = "python -m unolab.benchmarks.search") -> argparse.ArgumentParser:
    """The command line of the search benchmark."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what",
        nargs="?",
        choices=["speed", "strength"],
        default="speed",
        help="what to measure (default: speed)",
    )
    parser.add_argument("--players", type=int_in_range(2, 10), default=2)
    parser.add_argument("--rollouts", type=int_in_range(1, 1 << 16), default=64,
                        help="speed: rollouts per action (default 64)")  # fmt: skip
    parser.add_argument("--seconds", type=positive_seconds, default=3.0,
                        help="speed: seconds per figure (default 3)")  # fmt: skip
    parser.add_argument("--agent", choices=list(SEARCH_AGENTS), default="pimc",
                        help="strength: the search agent (default pimc)")  # fmt: skip
    parser.add_argument("--budgets", type=int_in_range(1, 1 << 16), nargs="+",
                        default=[16, 64, 256],
                        help="strength: rollouts per action (pimc) or iterations (ismcts)")  # fmt: skip
    parser.add_argument("--opponents", nargs="+", choices=list(PLAIN_BOTS),
                        default=["random", "mixbot"])  # fmt: skip
    parser.add_argument("--hands", type=int_in_range(1, 10**9), default=2000)
    parser.add_argument("--timing-hands", type=int_in_range(1, 10**9), default=20,
                        help="strength: hands played one at a time for the ms figure")  # fmt: skip
    parser.add_argument("--seed", type=int_in_range(0, 2**63 - 1), default=1414)
    add_out_option(parser)
    return parser


def main(
    argv: Sequence[str] | None = None, prog: str = "python -m unolab.benchmarks.search"
) -> int:
    """Run the benchmark; print the figures (and write them with ``--out``)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.agent == "ismcts" and max(args.budgets) > MAX_ITERATIONS:
        parser.error(
            f"argument --budgets: ismcts takes 1 to {MAX_ITERATIONS} iterations, "
            f"got {max(args.budgets)}"
        )
    check_out_option(args.out)  # before the measurement, not after it
    rules = load_rules("official", num_players=args.players)
    result: dict[str, Any] = {"players": args.players, "seed": args.seed}
    if args.what == "speed":
        speed = search_speed(rules, args.rollouts, args.seconds, args.seed)
        result["rollouts_per_action"] = args.rollouts
        result["steps_per_second"] = speed
        for name, rate in speed.items():
            ratio = rate / speed["core_b4096"]
            print(f"{name:<12} {rate:>14,.0f} steps/s  {ratio:5.2f}x core B=4096")
    else:
        result["rows"] = strength_table(
            rules,
            args.budgets,
            args.opponents,
            args.hands,
            args.seed,
            args.timing_hands,
            args.agent,
        )
    write_figures(args.out, result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.search")
