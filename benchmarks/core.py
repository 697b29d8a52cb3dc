"""Engine throughput benchmark: uno-lab's batched core against RLCard's UNO env, in one run.

Run ``python -m unolab.benchmarks.core`` (or ``make bench``). It measures random-legal-play throughput
(legal mask + random choice + step in place, finished games reset in place) at several batch
sizes, and
RLCard 1.2.0's bare ``env.step`` loop with random legal actions, then prints a table and a
JSON line with the ratios. Each figure is the median of several timed repeats; timings on a
shared machine are noisy, so compare the ratios, which are measured side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from uno_env import core
from uno_env.console import run_main
from uno_env.rng import derive_keys
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from unolab.benchmarks.options import (
    MAX_BATCH,
    add_speed_options,
    int_in_range,
    parse_speed_args,
)
from unolab.benchmarks.rlcard import rlcard_peer

__all__ = ["BenchResult", "build_parser", "engine_steps_per_second", "main"]


@dataclass(frozen=True)
class BenchResult:
    """One throughput figure: the median and all repeats, in units per second."""

    name: str
    median: float
    repeats: tuple[float, ...]


def engine_steps_per_second(rules: Rules, batch_size: int, seconds: float, seed: int = 0) -> float:
    """Random legal play on the batched core; return game-steps per second.

    One game-step is one decision in one live game (so a batch step of B live games counts
    B). Finished games are replaced by fresh ones in groups of at least 1/64 of the batch,
    so that at least ~98% of the batch is live and the replacement cost is amortised.
    """
    rng = np.random.default_rng(seed)
    state = core.init(rules, batch_size, seed=seed)
    fresh_keys = np.random.default_rng(seed + 1)
    steps = 0
    # Warm up once so that first-call costs are not timed.
    state = core.step(
        rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
    )
    start = time.perf_counter()
    deadline = start + seconds
    n_over = int(np.count_nonzero(~state.live))
    while True:
        mask = core.legal_action_mask(rules, state)
        steps += batch_size - n_over
        # The loop owns its state, as an env or a training loop does: it steps in place.
        state = core.step(rules, state, uniform_legal_actions(mask, rng), in_place=True)
        live = state.live
        n_over = batch_size - int(np.count_nonzero(live))
        if n_over * 64 >= batch_size:
            finished = np.flatnonzero(~live)
            keys = derive_keys(fresh_keys, finished.size)
            state = core.reset_games(rules, state, finished, keys, in_place=True)
            n_over = 0
        if time.perf_counter() >= deadline:
            break
    return steps / (time.perf_counter() - start)


def build_parser(prog: str = "python -m unolab.benchmarks.core") -> argparse.ArgumentParser:
    """The benchmark's options; every numeric one is checked by argparse (one line, exit 2).

    Args:
        prog: The command shown in the usage line (``uno-lab bench engine`` passes its own).
    """
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    add_speed_options(parser)
    parser.add_argument(
        "--batch-sizes",
        type=int_in_range(1, MAX_BATCH),
        nargs="+",
        default=[1, 64, 1024, 4096],
        help=f"B values, each 1-{MAX_BATCH:,}",
    )
    return parser


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m unolab.benchmarks.core"
) -> dict[str, float]:
    """Time the engine (and RLCard, the peer) at each batch size; print a table and a JSON line; return the figures (``argv``: the options,
    default the command line; ``prog``: the command named in the usage and error lines)."""
    args, rules = parse_speed_args(build_parser(prog), argv)

    # Interleave the repeats (peer, then each batch size) so that load on the shared machine
    # hits every figure alike; each figure is the median of its repeats.
    per_figure = args.seconds / args.repeats
    samples: dict[str, list[float]] = {}
    rlcard = rlcard_peer(args.no_rlcard)
    for rep in range(args.repeats):
        if rlcard is not None:
            rate = rlcard(per_figure, args.seed + rep)
            samples.setdefault("RLCard 1.2.0 env.step loop", []).append(rate)
        for batch in args.batch_sizes:
            rate = engine_steps_per_second(rules, batch, per_figure, args.seed + rep)
            samples.setdefault(f"uno-lab core B={batch}", []).append(rate)
    rows = [
        (label, BenchResult(label, statistics.median(rates), tuple(rates)))
        for label, rates in samples.items()
    ]
    peer = rows[0][1] if rows and rows[0][0].startswith("RLCard") else None
    figures: dict[str, float] = {}
    if peer is not None:
        figures["rlcard_steps_per_s"] = peer.median
    for batch in args.batch_sizes:
        median = statistics.median(samples[f"uno-lab core B={batch}"])
        figures[f"engine_B{batch}_steps_per_s"] = median
        if peer is not None:
            figures[f"ratio_B{batch}"] = median / peer.median

    print(f"Random legal play, {rules.num_players} players, rules {args.rules!r}")
    print(f"{'engine':<32}{'steps/s (median)':>18}{'vs RLCard':>12}   repeats")
    for label, res in rows:
        ratio = f"{res.median / peer.median:.1f}x" if peer is not None else "-"
        reps = ", ".join(f"{r:,.0f}" for r in res.repeats)
        print(f"{label:<32}{res.median:>18,.0f}{ratio:>12}   [{reps}]")
    print(json.dumps({k: round(v, 2) for k, v in figures.items()}))
    return figures


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.core")
