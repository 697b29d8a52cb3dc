"""``make run`` until training exists: batched self-play of random games, with statistics.

Plays a batch of complete games with uniformly random legal actions on the batched core,
then prints how the games went: length, first-mover advantage, finishing card counts,
reshuffles, UNO catches, challenges and throughput.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from uno_env import cards as C
from uno_env import core
from uno_env.rules import load_rules
from uno_env.sampling import uniform_legal_actions

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Play ``--games`` random games per player count and print statistics."""
    parser = argparse.ArgumentParser(prog="python -m uno_env.demo", description=__doc__)
    parser.add_argument("--games", type=int, default=20_000, help="games per player count")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 7])
    parser.add_argument("--rules", default="official", help="preset name or YAML path")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    print(
        f"uno-lab demo: {args.games:,} random self-play games per table size, rules {args.rules!r}"
    )
    header = (
        f"{'players':>7} {'steps/game':>11} {'1st mover win':>14} {'truncated':>10} "
        f"{'reshuffles':>11} {'catches':>8} {'challenges':>11} {'points/win':>11} {'steps/s':>10}"
    )
    rows = []
    for n_players in args.players:
        rules = load_rules(args.rules, num_players=n_players)
        rng = np.random.default_rng(args.seed)
        state = core.init(rules, args.games, seed=args.seed)
        first_mover = state.current.copy()
        counts = {"catch": 0, "challenge": 0, "steps": 0}
        start = time.perf_counter()
        with tqdm(total=args.games, desc=f"{n_players} players", unit="game", leave=False) as bar:
            finished_before = 0
            while state.live.any():
                mask = core.legal_action_mask(rules, state)
                actions = uniform_legal_actions(mask, rng)
                live = state.live
                counts["steps"] += int(live.sum())
                counts["catch"] += int(np.count_nonzero(live & (actions == C.CATCH)))
                counts["challenge"] += int(np.count_nonzero(live & (actions == C.CHALLENGE)))
                state = core.step(rules, state, actions)
                finished = int((~state.live).sum())
                bar.update(finished - finished_before)
                finished_before = finished
        elapsed = time.perf_counter() - start
        won = state.done
        rows.append(
            f"{n_players:>7} {counts['steps'] / args.games:>11.1f} "
            f"{np.mean(state.winner[won] == first_mover[won]):>14.1%} "
            f"{np.mean(state.truncated):>10.2%} {np.mean(state.shuffles):>11.2f} "
            f"{counts['catch']:>8,} {counts['challenge']:>11,} "
            f"{state.hand_points[won].sum(axis=1).mean():>11.1f} "
            f"{counts['steps'] / elapsed:>10,.0f}"
        )
    print(header)
    print("\n".join(rows))
    print(
        "\nRandom play draws voluntarily as often as it plays, so games are long. Next: see the\n"
        "README for the engine API (uno_env.core), UnoGame and the benchmark (make bench)."
    )


if __name__ == "__main__":
    main()
