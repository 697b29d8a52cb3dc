"""End-to-end training speed: MaskablePPO learner steps per second for each env worker count.

``uno-lab bench training`` builds the env and the model as a training run does
(:func:`unolab.train.run.training_env`: the games in the trainer's process for 1 worker, a
:class:`~uno_env.envs.shared_vec_env.ShardedUnoVecEnv` for more; random opponents) and times
MaskablePPO's ``learn`` over whole rollouts, after one rollout of warm-up: rollouts and
updates together, learner steps per second, the median of ``--repeats``. On ``cuda`` it also
samples the GPU's utilisation while it learns (``torch.cuda.utilization``, else
``nvidia-smi``); elsewhere that column is ``n/a``. When ``--device`` names (or ``auto``
finds) a GPU, every worker count is measured on the CPU too, side by side.

It prints a table and one JSON line with the figures (``--out`` writes them to a file).
Torch uses ``--torch-threads`` threads (1 by default, as every timed figure of the lab).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.console import run_main
from unolab.benchmarks.options import (
    add_out_option,
    add_seed_option,
    benchmark_parser,
    check_out_option,
    int_in_range,
    write_figures,
)

__all__ = ["build_parser", "gpu_utilisation", "main", "measure"]

_PROG = "python -m unolab.benchmarks.training"


def _counts(text: str) -> list[int]:
    """``--workers 1,4,16``: worker counts, each an integer from 1 to 256."""
    parse = int_in_range(1, 256)
    parts = [part.strip() for part in text.split(",")]
    if not parts or any(not part for part in parts):
        raise argparse.ArgumentTypeError(f"expected worker counts such as 1,4,16, got {text!r}")
    return [parse(part) for part in parts]


def _widths(text: str) -> list[int]:
    """``--net-arch 64,64``: hidden layer widths."""
    parse = int_in_range(1, 4096)
    return [parse(part.strip()) for part in text.split(",")]


def build_parser(prog: str = _PROG) -> argparse.ArgumentParser:
    """The command line of the training benchmark."""
    parser = benchmark_parser(prog, __doc__)
    parser.add_argument("--workers", type=_counts, default=[1, 4, 16],
                        help="env worker counts to measure, comma-separated (default 1,4,16)")  # fmt: skip
    parser.add_argument("--envs", type=int_in_range(1, 65_536), default=1024,
                        help="games stepped together, in all (default 1024)")  # fmt: skip
    parser.add_argument("--n-steps", type=int_in_range(1, 65_536), default=32,
                        help="PPO steps per env per rollout (default 32)")  # fmt: skip
    parser.add_argument("--batch-size", type=int_in_range(1, 2**20), default=4096,
                        help="PPO minibatch (default 4096)")  # fmt: skip
    parser.add_argument("--epochs", type=int_in_range(1, 100), default=2,
                        help="PPO epochs per rollout (default 2)")  # fmt: skip
    parser.add_argument("--net-arch", type=_widths, default=[256, 256],
                        help="hidden layer widths (default 256,256)")  # fmt: skip
    parser.add_argument("--rollouts", type=int_in_range(1, 10_000), default=2,
                        help="rollouts timed per figure, after one of warm-up (default 2)")  # fmt: skip
    parser.add_argument("--repeats", type=int_in_range(1, 100), default=1,
                        help="repeats per figure (median; default 1)")  # fmt: skip
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="where the network trains (default auto); with a GPU the CPU "
                        "is measured too")  # fmt: skip
    parser.add_argument("--torch-threads", type=int_in_range(1, 1024), default=1,
                        help="torch threads of the trainer (default 1)")  # fmt: skip
    add_seed_option(parser, 0)
    add_out_option(parser)
    return parser


def gpu_utilisation() -> float | None:
    """The GPU's utilisation now, in percent (``torch.cuda.utilization``, else
    ``nvidia-smi``), or None where neither answers."""
    import torch

    try:
        return float(torch.cuda.utilization())
    except Exception:  # no pynvml, no driver: ask nvidia-smi
        pass
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        return float(out.stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


class _Sampler:
    """Samples :func:`gpu_utilisation` every 0.2 s in a thread while it is entered."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            value = gpu_utilisation()
            if value is not None:
                self.samples.append(value)

    def __enter__(self) -> _Sampler:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._stop.set()
            self._thread.join()

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.samples) if self.samples else None


def measure(args: argparse.Namespace, workers: int, device: str, runs_dir: str) -> dict[str, Any]:
    """One figure: learner steps per second of MaskablePPO with ``workers`` env workers on
    ``device`` (``cpu`` or ``cuda``), the median of ``args.repeats``, and the GPU's mean
    utilisation while learning (None off a GPU).

    Raises:
        ConfigError: for sizes a training config refuses (more workers than games, a
            minibatch larger than the rollout), naming the key.
    """
    from unolab.train import algorithms
    from unolab.train.config import load_config
    from unolab.train.run import training_env
    from unolab.train.run_callback import League

    config = load_config(
        None,
        base={
            "name": f"bench_w{workers}_{device}",
            "algorithm": "ppo",
            "num_envs": args.envs,
            "num_workers": workers,
            "device": device,
            "torch_threads": args.torch_threads,
            "seed": args.seed,
            "runs_dir": runs_dir,
            "opponents": {"bots": {"random": 1.0}, "self_play": 0.0},
            "ppo": {
                "n_steps": args.n_steps,
                "batch_size": min(args.batch_size, args.n_steps * args.envs),
                "n_epochs": args.epochs,
                "net_arch": list(args.net_arch),
            },
        },
    )
    rules = config.build_rules()
    env = training_env(config, rules, League(config.opponents, rules, seed=config.seed))
    rollout = args.n_steps * args.envs
    speeds, utilisation = [], []
    try:
        model = algorithms.make_model(config, env)
        model.learn(total_timesteps=rollout)  # warm-up: the first reset, the first update
        for _ in range(args.repeats):
            done = model.num_timesteps
            with _Sampler(device == "cuda") as sampler:
                start = time.perf_counter()
                model.learn(total_timesteps=args.rollouts * rollout, reset_num_timesteps=False)
                seconds = time.perf_counter() - start
            speeds.append((model.num_timesteps - done) / seconds)
            if sampler.mean is not None:
                utilisation.append(sampler.mean)
    finally:
        env.close()
    return {
        "workers": workers,
        "device": device,
        "steps_per_second": statistics.median(speeds),
        "runs": speeds,
        "gpu_utilisation": statistics.median(utilisation) if utilisation else None,
    }


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'workers':>8} {'device':>7} {'steps/s':>10} {'vs 1 worker':>12} {'GPU util':>9}"]
    base: dict[str, float] = {}
    for row in rows:
        base.setdefault(row["device"], row["steps_per_second"])
        ratio = row["steps_per_second"] / base[row["device"]]
        util = row["gpu_utilisation"]
        shown = "n/a" if util is None else f"{util:.0f}%"
        lines.append(
            f"{row['workers']:>8} {row['device']:>7} {row['steps_per_second']:>10,.0f} "
            f"{ratio:>11.2f}x {shown:>9}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = _PROG) -> dict[str, Any]:
    """Run the benchmark; print the table and one JSON line (and write ``--out``)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    check_out_option(args.out)
    too_many = [w for w in args.workers if w > args.envs]
    if too_many:
        parser.error(f"argument --workers: {too_many[0]} workers for {args.envs} games (--envs)")
    import torch

    from unolab.train.config_limits import resolve_device

    torch.set_num_threads(args.torch_threads)
    try:
        device = resolve_device(args.device, key="--device")
    except ConfigError as err:
        parser.error(f"argument {err}")
    devices = [device, "cpu"] if device == "cuda" else ["cpu"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="uno-bench-training-") as runs_dir:
        for each in devices:
            for workers in args.workers:
                try:
                    rows.append(measure(args, workers, each, runs_dir))
                except ConfigError as err:
                    parser.error(str(err))
    figures = {
        "benchmark": "training",
        "algorithm": "ppo",
        "opponents": "random",
        "envs": args.envs,
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "epochs": args.epochs,
        "net_arch": list(args.net_arch),
        "rollouts": args.rollouts,
        "repeats": args.repeats,
        "torch_threads": args.torch_threads,
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "rows": rows,
    }
    print(
        f"MaskablePPO, {args.envs} games against random, rollouts of {args.n_steps} steps per "
        f"game, minibatch {args.batch_size}, {args.epochs} epochs, net {list(args.net_arch)}"
    )
    print(_table(rows))
    print(json.dumps(figures))
    write_figures(args.out, figures)
    return figures


if __name__ == "__main__":
    run_main(main)
