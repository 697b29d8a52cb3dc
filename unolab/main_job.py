"""The lab's main job (``make run``): train, rank, report, in a few minutes on a laptop.

1. Train a PPO agent on the shipped quick config (``ppo/quick``: a clone of ``mixbot``, then
   PPO from it), with a progress bar.
2. Run a round-robin tournament of it against the shipped pretrained agent and every bot,
   with duplicate deals, ratings and error bars.
3. Print the leaderboard and say where the TensorBoard logs, checkpoints and plots are.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import torch

from uno_env.console import run_main
from unolab.agents import BOT_NAMES
from unolab.agents.registry import SHIPPED_DIR
from unolab.shipped_configs import shipped_configs
from unolab.train import run_cli
from unolab.train.config import load_config

__all__ = ["main"]

PRETRAINED = SHIPPED_DIR / "ppo_official_2p.safetensors"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the main job; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m unolab.main_job", description=__doc__)
    parser.add_argument("--runs-dir", default="runs", help="where runs are written")
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="override the training steps (the clone then records as many decisions, at "
        "least 1,000: a smoke test)",
    )
    parser.add_argument("--deal-sets", type=int, default=150, help="deal sets per pairing")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    print("== 1/3 Training a PPO agent (the shipped config ppo/quick) ==", flush=True)
    config = shipped_configs()["ppo/quick"]
    train_args = [
        "--config",
        str(config),
        "--set",
        f"runs_dir={args.runs_dir}",
        "--overwrite",  # the main job starts its run over each time it is run
    ]
    if args.steps is not None:
        train_args += [
            "--set",
            f"total_steps={args.steps}",
            "--set",
            f"eval.every={max(args.steps // 2, 1)}",
        ]
        if load_config(config).imitate is not None:
            train_args += [
                "--set",
                f"imitate.samples={max(args.steps, 1000)}",
                "--set",
                "imitate.eval_games=100",
            ]
    result = run_cli.main("ppo", train_args)
    trained = result.policy or result.run_dir / "best_policy.safetensors"

    print("\n== 2/3 Tournament: the new agent, the shipped agent and every bot ==", flush=True)
    from unolab.tournament import cli as tournament_cli

    participants = [str(trained)]
    if PRETRAINED.is_file():
        participants.append(str(PRETRAINED))
    else:
        print(f"(no shipped agent at {PRETRAINED}; ranking against the bots only)")
    participants += list(BOT_NAMES)
    output_dir = Path(args.runs_dir) / "tournaments"
    status = tournament_cli.main(
        [
            "--name", "main_job",
            "--format", "round_robin",
            "--participants", *participants,
            "--players", "2",
            "--rules", "official",
            "--deal-sets", str(args.deal_sets),
            "--output-dir", str(output_dir),
            "--fresh",
        ]
    )  # fmt: skip

    print("\n== 3/3 Where everything is ==")
    print(f"TensorBoard logs: tensorboard --logdir {result.run_dir / 'tb'}")
    print(f"Checkpoints:      {result.run_dir} (best.zip, latest.zip)")
    print(f"The new agent:    {trained} (+ .json; load it with unolab.agents.learned.load_policy)")
    print(f"Tournament:       {output_dir / 'main_job'} (leaderboard.csv, summary.json, *.png)")
    return status


if __name__ == "__main__":
    run_main(main, "python -m unolab.main_job")
