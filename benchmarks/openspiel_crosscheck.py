"""A peer's algorithm on the lab's engine: OpenSpiel's ISMCTS against the lab's, same budgets.

``python -m unolab.benchmarks.openspiel_crosscheck`` plays, at 2 players and official rules,
on the same deals (keys from ``--seed``), with the searcher's seat alternated:

* OpenSpiel's own ``ISMCTSBot`` (its Python code, random rollouts, UCT with c = 2) on the
  ``python_uno`` game against the lab's ``random`` player (the UNO papers' random player);
* the lab's ``ismcts`` at the same iteration budget against ``random``.

It reports both win rates with Wilson 95% intervals and the median time per decision of each
searcher. Equal budgets should give strengths within their intervals of each other, or a
difference the two algorithms explain (the lab's tree shares statistics across the
determinizations and its rollouts play a heuristic, not uniformly random moves); a large
unexplained gap is a bug in one of the two. Results are written as JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_env import load_rules
from uno_env.observation import encode
from uno_env.play import Round, play_tables
from uno_env.rng import derive_keys
from unolab.agents import make_agent
from unolab.agents.stats import wilson_interval
from unolab.benchmarks.options import int_in_range

__all__ = ["lab_ismcts", "main", "openspiel_ismcts"]


def _rate(wins: int, games: int) -> dict[str, float | int]:
    low, high = wilson_interval(wins, games)
    return {"games": games, "wins": wins, "win_rate": wins / games, "ci_low": low, "ci_high": high}


def openspiel_ismcts(
    keys: np.ndarray, iterations: int, seed: int, progress: bool = True
) -> dict[str, Any]:
    """OpenSpiel's ISMCTSBot against ``random`` on ``python_uno``, seats alternated."""
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    from uno_env.envs.openspiel_game import key_actions, register

    register()
    game = pyspiel.load_game("python_uno", {"num_players": 2})
    rules = load_rules("official", num_players=2)
    rng = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(
        game,
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
        uct_c=2.0,
        max_simulations=iterations,
        random_state=rng,
    )
    opponent = make_agent("random", seed)
    wins, seconds = 0, []
    for game_no, key in enumerate(keys.tolist()):
        searcher = game_no % 2
        state = game.new_initial_state()
        for byte in key_actions(int(key)):
            state.apply_action(byte)
        while not state.is_terminal():
            player = state.current_player()
            if player == searcher:
                start = time.perf_counter()
                action = bot.step(state)
                seconds.append(time.perf_counter() - start)
            else:
                core_state = state.uno_state
                mask = np.zeros((1, 80), dtype=bool)
                mask[0, state.legal_actions()] = True
                action = int(opponent.act(encode(rules, core_state), mask)[0])
            state.apply_action(action)
        wins += int(state.returns()[searcher] > 0)
        if progress and (game_no + 1) % 50 == 0:
            print(f"  openspiel ismcts {iterations}: {game_no + 1} hands", file=sys.stderr)
    return {**_rate(wins, len(keys)), "median_ms_per_decision": 1000 * statistics.median(seconds)}


def lab_ismcts(keys: np.ndarray, iterations: int, seed: int) -> dict[str, Any]:
    """The lab's ``ismcts`` at ``iterations`` against ``random``, on the same deals."""
    rules = load_rules("official", num_players=2)
    searcher = make_agent(f"ismcts:{iterations}", seed)
    opponent = make_agent("random", seed)
    lineups = np.array([[0, 1] if g % 2 == 0 else [1, 0] for g in range(len(keys))])
    seconds: list[float] = []
    timer: dict[str, float] = {}

    def timed(turn: Round) -> None:  # the search's time per decision, per round
        now = time.perf_counter()
        if "last" in timer:
            searched = int(np.count_nonzero(turn.acting == 0))
            if searched:
                seconds.extend([(now - timer["last"]) / searched] * searched)
        timer["last"] = now

    out = play_tables(rules, [searcher, opponent], lineups, keys, on_error="raise", on_round=timed)
    seat = np.where(lineups[:, 0] == 0, 0, 1)
    wins = int(np.count_nonzero(out.winners == seat))
    return {
        **_rate(wins, len(keys)),
        "median_ms_per_decision": 1000 * statistics.median(seconds) if seconds else None,
        "note": "time per decision: a round's time shared by the rows where the search acts",
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cross-check; print a table and write ``--out``."""
    parser = argparse.ArgumentParser(
        prog="python -m unolab.benchmarks.openspiel_crosscheck", description=__doc__
    )
    parser.add_argument(
        "--budgets", type=int_in_range(1, 100_000), nargs="+", default=[8, 32], help="iterations"
    )
    parser.add_argument("--hands", type=int_in_range(2, 1_000_000), default=1000)
    parser.add_argument("--seed", type=int_in_range(0, 2**62), default=3232)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    keys = derive_keys(args.seed, args.hands)
    rows = []
    for budget in args.budgets:
        lab = lab_ismcts(keys, budget, args.seed)
        peer = openspiel_ismcts(keys, budget, args.seed)
        rows.append({"iterations": budget, "lab_ismcts": lab, "openspiel_ismcts": peer})
        for name, res in (("lab ismcts", lab), ("OpenSpiel ISMCTSBot", peer)):
            ms = res["median_ms_per_decision"]
            print(
                f"{budget:>6} iterations  {name:<20} {res['win_rate']:.1%} "
                f"[{res['ci_low']:.1%}, {res['ci_high']:.1%}]  "
                f"{'-' if ms is None else f'{ms:.2f} ms'} per decision",
                flush=True,
            )
    record = {
        "description": (
            "OpenSpiel's ISMCTSBot (random rollouts, uct_c 2) on python_uno and the lab's "
            "ismcts, each against the papers' random player at 2 players, official rules, on "
            "the same deals with the searcher's seat alternated; Wilson 95% intervals"
        ),
        "seed": args.seed,
        "hands": args.hands,
        "date": datetime.date.today().isoformat(),
        "results": rows,
    }
    if args.out is not None:
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
