"""Benchmark: tournament games per second against RLCard's ``rlcard.utils.tournament``.

``python -m unolab.benchmarks.tournament [--games N] [--workers W] [--chunk C] [--seconds S] [--out F]``
measures, in one run:

* our tournament, bots only: a real round robin (:func:`unolab.tournament.runner.run_tournament`:
  duplicate deal sets, per-seat draw streams, ``games.jsonl`` written crash-safely) of
  ``random`` bots (the players of RLCard's figure), 2 players and 4 players. The figure is
  the games played over the wall time of the play phase (the policies, the play, the
  durable writes and the start of the worker processes; not the final ratings and plots,
  whose cost does not grow with the play);
* with ``--mask-only``, the ``random`` bots marked ``uses_observations = False``
  (:func:`mask_only_random`): the projection of declaring it on ``uno_env.policy.RandomBot``;
* the same with a field of heuristic bots (``random``, ``greedy_points``, ``card_ranking``,
  ``mixbot``), for reference;
* with ``--ray``, the ``random`` round robins again on a local Ray of ``--workers`` CPUs,
  interleaved with the local backend (:func:`bench_ray`, medians of 3): the Ray backend's
  throughput as a ratio to the local one's (target 0.8x on the 2-core machine);
* RLCard 1.2.0: complete 2-player games of its UNO env through ``rlcard.utils.tournament``
  with its ``RandomAgent`` players, single process (RLCard's tournament has no parallel
  mode): :func:`unolab.benchmarks.rlcard.rlcard_games_per_second` (wall clock, median of three).

Each figure also comes as games per CPU second (all processes), which a machine shared with
other jobs disturbs much less than the wall clock: with W idle cores our wall figure is
about W times our CPU figure. The headline is the 2-player ratio to RLCard (target 40x).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.console import run_main
from uno_env.policy import Policy
from unolab.agents import make_agent
from unolab.agents.ray_backend import connect, require_ray
from unolab.benchmarks.options import (
    MAX_BATCH,
    add_out_option,
    check_out_option,
    int_in_range,
    positive_seconds,
    write_figures,
)
from unolab.tournament.config import load_config
from unolab.tournament.participants import PolicyFactory
from unolab.tournament.runner import run_tournament

__all__ = [
    "bench_ray",
    "bench_tournament",
    "build_parser",
    "main",
    "mask_only_random",
    "rlcard_cpu_games_per_second",
]

_HEURISTIC_FIELD = ("random", "greedy_points", "card_ranking", "mixbot")


def mask_only_random(seed: int) -> Policy:
    """The ``random`` bot, marked ``uses_observations = False`` (it only reads the masks).

    The bench's projection of the one-line change proposed for ``uno_env.policy.RandomBot``:
    with it, a batch of such bots skips the observation encoding.
    """
    bot = make_agent("random", seed)
    setattr(bot, "uses_observations", False)  # noqa: B010 (not part of the Policy protocol)
    return bot


def bench_tournament(
    num_players: int,
    games: int,
    workers: int,
    bots: Sequence[str] = ("random",),
    games_per_chunk: int = 16384,
    seed: int = 0,
    mask_only: bool = False,
    backend: str = "local",
) -> dict[str, Any]:
    """Play a round robin of bots into a temporary folder and time its play phase.

    With one bot name every seat holds a copy of it (a single table); with several names
    the round robin covers every table of ``num_players`` of them. ``mask_only`` replaces
    every participant by :func:`mask_only_random`. ``backend="ray"`` plays the chunks as Ray
    tasks on the Ray this process is connected to (``workers`` is then the local Ray's CPUs).

    Returns:
        Games played, wall seconds, games/s, CPU seconds (all processes), games per CPU s.
    """
    if len(bots) == 1:
        participants: list[Any] = [
            {"name": f"{bots[0]}_{i}", "bot": bots[0]} for i in range(num_players)
        ]
    else:
        participants = list(bots)
    n_tables = math.comb(len(participants), num_players)
    per_deal = 2 if num_players == 2 else num_players * (1 if num_players % 2 == 0 else 2)
    deal_sets = max(1, -(-games // (per_deal * n_tables)))
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(
            {
                "name": "bench",
                "participants": participants,
                "num_players": num_players,
                "deal_sets": deal_sets,
                "workers": workers,
                "games_per_chunk": games_per_chunk,
                "bootstrap": 0,
                "seed": seed,
                "output_dir": tmp,
                "backend": backend,
            }
        )
        overrides: dict[str, PolicyFactory] = {}
        if mask_only:
            overrides = {p["name"]: mask_only_random for p in participants}
        summary = run_tournament(
            config, overrides=overrides, progress=False, plots=False, print_table=False
        )
        logged = (Path(tmp) / "bench" / "games.jsonl").read_text().count("\n")
    run = summary["run"]
    return {
        "num_players": num_players,
        "bots": list(bots),
        "games": run["games_played"],
        "games_logged": logged,
        "seconds": run["elapsed_s"],
        "games_per_s": run["games_per_s"],
        "cpu_s": run["cpu_s"],
        "games_per_cpu_s": run["games_per_cpu_s"],
        "workers": workers,
        "backend": backend,
        "games_per_chunk": games_per_chunk,
        "mean_turns": summary["endings"]["turns_mean"],
    }


def bench_ray(games: int, workers: int, games_per_chunk: int, repeats: int = 3) -> dict[str, Any]:
    """The random round robins (2 and 4 players) on the local and the ray backends, in turn.

    A local Ray of ``workers`` CPUs is started first (its start is timed on its own: a
    cluster is started once for many runs). Per table size, Ray's first run (``cold``: its
    worker processes import the lab) is timed alone, then ``repeats`` interleaved pairs of
    runs (local, then Ray, whose workers are warm, as on a cluster that has run before) give
    the medians. A machine shared with other jobs disturbs single runs; the medians of
    interleaved runs much less.

    Returns:
        Per table size: the cold figure, the medians, every run's games/s, the ratios of
        Ray's games/s to the local backend's; and Ray's start time.
    """
    start = time.perf_counter()
    with connect(None, num_cpus=workers):
        out: dict[str, Any] = {"ray_start_s": time.perf_counter() - start, "repeats": repeats}
        for k in (2, 4):

            def rate(backend: str, k: int = k) -> float:
                run = bench_tournament(
                    k, games, workers, ("random",), games_per_chunk, backend=backend
                )
                return float(run["games_per_s"])

            cold = rate("ray")
            pairs = [(rate("local"), rate("ray")) for _ in range(repeats)]
            local = statistics.median(p[0] for p in pairs)
            warm = statistics.median(p[1] for p in pairs)
            figures = {
                "ray_cold_games_per_s": cold,
                "local_games_per_s": local,
                "ray_games_per_s": warm,
                "runs_local": [p[0] for p in pairs],
                "runs_ray": [p[1] for p in pairs],
                "ratio": warm / local,
                "ratio_cold": cold / local,
            }
            out[f"random_{k}p"] = figures
            print(
                f"tournament {k}p random, {workers} workers, medians of {repeats}: local "
                f"{local:,.0f} games/s, ray {warm:,.0f} ({figures['ratio']:.2f}x); ray's first "
                f"run {cold:,.0f} ({figures['ratio_cold']:.2f}x)"
            )
    return out


def rlcard_cpu_games_per_second(seconds: float = 3.0, seed: int = 0) -> dict[str, float]:
    """RLCard's 2-player tournament with random agents, timed by CPU and wall clock.

    The same set-up as :func:`unolab.benchmarks.rlcard.rlcard_games_per_second` (one env, two
    ``RandomAgent`` players, the global ``np.random`` state seeded and restored), played in
    batches of 20 games for about ``seconds`` of CPU time after a warm-up.
    """
    from rlcard.utils import tournament

    from unolab.benchmarks.rlcard import make_rlcard_uno, rlcard_random_agent_cls

    agent_cls = rlcard_random_agent_cls()
    env = make_rlcard_uno(num_players=2, seed=seed)
    env.set_agents([agent_cls(env.num_actions) for _ in range(env.num_players)])
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        tournament(env, 20)
        games, cpu0, wall0 = 0, time.process_time(), time.perf_counter()
        while time.process_time() - cpu0 < seconds:
            tournament(env, 20)
            games += 20
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        np.random.set_state(saved)
    return {"games": games, "games_per_cpu_s": games / cpu, "games_per_s": games / wall}


def build_parser(prog: str = "python -m unolab.benchmarks.tournament") -> argparse.ArgumentParser:
    """The benchmark's options; every numeric one is checked by argparse (one line, exit 2).

    Args:
        prog: The command shown in the usage line (``uno-lab bench tournament`` passes its own).
    """
    parser = argparse.ArgumentParser(prog=prog, description="tournament games/s against RLCard")
    parser.add_argument(
        "--games",
        type=int_in_range(1, 10**9),
        default=200_000,
        help="games per random figure, >= 1 (amortises worker start-up)",
    )
    parser.add_argument(
        "--workers",
        type=int_in_range(1, 1024),
        default=os.cpu_count() or 1,
        help="processes playing the games (>= 1; default: one per CPU)",
    )
    parser.add_argument(
        "--chunk",
        type=int_in_range(1, MAX_BATCH),
        default=16384,
        help=f"games_per_chunk, 1-{MAX_BATCH:,}",
    )
    parser.add_argument(
        "--seconds", type=positive_seconds, default=6.0, help="RLCard's timed budget (> 0)"
    )
    parser.add_argument("--skip-heuristic", action="store_true")
    parser.add_argument(
        "--mask-only",
        action="store_true",
        help="also time random bots marked uses_observations=False (a projection)",
    )
    parser.add_argument(
        "--ray",
        action="store_true",
        help="also play the random round robins on a local Ray of --workers CPUs, side by "
        "side with the local backend (pip install 'uno-lab[ray]')",
    )
    add_out_option(parser)
    return parser


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m unolab.benchmarks.tournament"
) -> dict[str, Any]:
    """Time tournament games against RLCard's; print the figures, write them with ``--out``
    (``argv``: the options, default the command line; ``prog``: the command named in the
    usage and error lines)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    check_out_option(args.out)  # before minutes of play, not after them
    # The peer is measured last: check it is there before minutes of our own play.
    if importlib.util.find_spec("rlcard") is None:
        parser.error("rlcard is not installed; install the bench extra: pip install '.[bench]'")
    if args.ray:
        try:
            require_ray()
        except ValueError as err:
            parser.error(f"argument --ray: {err}")

    from unolab.benchmarks.rlcard import rlcard_games_per_second

    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "python": platform.python_version(),
        },
        "workers": args.workers,
    }
    cases: list[tuple[str, int, tuple[str, ...], int]] = [
        (f"random_{k}p", k, ("random",), args.games) for k in (2, 4)
    ]
    if not args.skip_heuristic:
        cases += [(f"heuristic_{k}p", k, _HEURISTIC_FIELD, args.games // 2) for k in (2, 4)]
    if args.mask_only:
        cases += [(f"mask_only_random_{k}p", k, ("random",), args.games) for k in (2, 4)]
    for key, k, bots, games in cases:
        mask_only = key.startswith("mask_only")
        results[key] = bench_tournament(
            k, games, args.workers, bots, args.chunk, mask_only=mask_only
        )
        r = results[key]
        label = "random (uses_observations=False)" if mask_only else "+".join(bots)
        print(
            f"tournament {k}p {label}: {r['games_per_s']:,.0f} games/s "
            f"({r['games_per_cpu_s']:,.0f} per CPU second, {args.workers} workers)"
        )
    if args.ray:
        results["ray"] = bench_ray(args.games, args.workers, args.chunk)
    wall = rlcard_games_per_second(seconds=args.seconds, seed=0)
    cpu = rlcard_cpu_games_per_second(seconds=args.seconds / 2, seed=0)
    results["rlcard_2p"] = {
        "games_per_s": wall,
        "games_per_cpu_s": cpu["games_per_cpu_s"],
        "how": "rlcard.utils.tournament, 2 RandomAgent players, 1 process",
    }
    print(
        f"RLCard tournament 2p random agents: {wall:,.1f} games/s "
        f"({cpu['games_per_cpu_s']:,.1f} per CPU second)"
    )
    for key in [k for k in results if k.startswith(("random_", "mask_only"))]:
        ours = results[key]
        ratio = {
            "wall": ours["games_per_s"] / wall,
            "per_cpu_second": ours["games_per_cpu_s"] / cpu["games_per_cpu_s"],
        }
        results[f"ratio_{key}"] = ratio
        print(
            f"ratio {key} to RLCard 2p: {ratio['wall']:.1f}x wall, "
            f"{ratio['per_cpu_second']:.1f}x per CPU second"
        )
    results["machine"]["load_average_after"] = (
        list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    )
    write_figures(args.out, results, indent=2)
    return results


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.tournament")
