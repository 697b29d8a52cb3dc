"""Measure every bot against ``random``: ``python -m agents.strength``.

Each bot plays 10,000 hands per table size (2 and 4 players by default) under the official
rules, in one seat with ``random`` in the others, its seat rotated evenly over the table
(:func:`agents.arena.evaluate_vs`). The script prints a table (win rate, Wilson 95% interval,
fair share) and writes the figures to a JSON file (``--out``, default
``docs/bot_strength.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import BOT_NAMES, make_agent
from agents.arena import DEFAULT_BATCH_SIZE, EvalResult, evaluate_vs
from uno_env.rules import load_rules

__all__ = ["format_table", "main", "measure"]

OPPONENT = "random"
DEFAULT_OUT = Path("docs/bot_strength.json")


def measure(
    bots: Sequence[str],
    players: Sequence[int],
    num_games: int,
    seed: int = 0,
    preset: str = "official",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = True,
) -> list[EvalResult]:
    """Rate each bot against ``random`` at each table size.

    Args:
        bots: Bot names (see :data:`agents.BOT_NAMES`).
        players: Table sizes.
        num_games: Hands per pairing.
        seed: Seed of every pairing (each pairing deals the same hands).
        preset: Rules preset; the table size overrides its ``num_players``.
        batch_size: Games played side by side.
        progress: Show progress bars (hidden anyway when the output is not a terminal).

    Returns:
        One result per (table size, bot), table sizes outermost.
    """
    results = []
    for n_players in players:
        rules = load_rules(preset, num_players=n_players)
        for name in bots:
            results.append(
                evaluate_vs(
                    rules,
                    make_agent(name, seed),
                    OPPONENT,
                    num_games,
                    seed=seed,
                    batch_size=batch_size,
                    progress=progress,
                )
            )
    return results


def format_table(results: Sequence[EvalResult]) -> str:
    """A Markdown table of the results."""
    lines = [
        "| players | bot | vs | games | win rate | Wilson 95% CI | fair share | mean turns |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.num_players} | {r.candidate} | {r.opponent} | {r.games} | "
            f"{100 * r.win_rate:.1f}% | [{100 * r.ci_low:.1f}%, {100 * r.ci_high:.1f}%] | "
            f"{100 * r.fair_share:.1f}% | {r.mean_turns:.1f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement, print the table and write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m agents.strength", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output path")
    parser.add_argument("--games", type=int, default=10_000, help="hands per pairing")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="table sizes")
    parser.add_argument(
        "--bots", nargs="+", default=list(BOT_NAMES), choices=BOT_NAMES, help="bots to rate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="official")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be >= 1")

    start = time.perf_counter()
    results = measure(args.bots, args.players, args.games, args.seed, args.preset, args.batch_size)
    elapsed = time.perf_counter() - start
    print(format_table(results))
    print(f"\n{len(results)} pairings in {elapsed:.0f} s", file=sys.stderr)
    report: dict[str, Any] = {
        "description": (
            "Each bot against 'random' in the other seats, its seat rotated evenly over the "
            "table; win rate with a Wilson 95% interval. Truncated hands count as not won."
        ),
        "preset": args.preset,
        "opponent": OPPONENT,
        "games_per_pairing": args.games,
        "seed": args.seed,
        "seconds": round(elapsed, 1),
        "python": platform.python_version(),
        "results": [r.to_dict() for r in results],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
