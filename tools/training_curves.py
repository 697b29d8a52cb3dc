"""Learning curves for the docs: ``python tools/training_curves.py``.

Each named experiment of :data:`EXPERIMENTS` trains one or more runs with the lab's own
training loop (:func:`unolab.train.run.train`) and keeps every evaluation the run wrote to
its ``evaluations.jsonl``. The curves go to a JSON record (``--out``, by default
``docs/data/training_curves.json``; figures of other experiments already there are kept),
from which ``python tools/published.py`` draws the pictures of docs/training.md and the
tables of docs/results.md.

``--only NAME`` runs one experiment; ``--runs-dir`` is where the run folders go (by default
a temporary folder, removed at the end).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uno_env.console import path_argument, run_main
from uno_env.files import check_writable_target, read_regular_text, write_atomically

__all__ = ["DATA", "EXPERIMENTS", "PROG", "curve_points", "main", "run_experiment"]

PROG = "python tools/training_curves.py"
"""The command, as its messages and the record name it."""
DATA = Path(__file__).resolve().parent.parent / "docs" / "data" / "training_curves.json"
"""The record the docs are generated from (in a checkout; not part of the wheel)."""


def _from_scratch(gamma: float) -> dict[str, Any]:
    return {
        "name": f"scratch_gamma_{gamma}",
        "algorithm": "ppo",
        "rules": "official",
        "num_players": 2,
        "total_steps": 163_840,
        "num_envs": 64,
        "seed": 11,
        "opponents": {"bots": {"random": 1.0}, "self_play": 0.0},
        "eval": {"every": 16_384, "games": 1000, "bots": ["random"]},
        "ppo": {
            "n_steps": 128,
            "batch_size": 2048,
            "n_epochs": 4,
            "net_arch": [64, 64],
            "gamma": gamma,
        },
    }


EXPERIMENTS: dict[str, dict[str, Any]] = {
    "ppo_discount": {
        "title": "PPO from scratch against random: the discount",
        "description": (
            "MaskablePPO from scratch against the papers' random player only, 2 players, "
            "official rules, 64 tables, 64-64 network; the same run at gamma 0.99 (SB3's "
            "default) and at gamma 1.0. Below 1, a hand being lost is worth more the longer "
            "it lasts, and the policy learns to stall (voluntary draws)."
        ),
        "runs": {"gamma 0.99": _from_scratch(0.99), "gamma 1.0": _from_scratch(1.0)},
    },
}
"""The experiments: a title, a description and the training configs of its runs, by label."""


def curve_points(run_dir: Path, bots: Sequence[str]) -> list[dict[str, Any]]:
    """A run's evaluations as curve points: steps, opponent, win rate, interval, hands."""
    from unolab.train.run_callback import read_curve

    return [{**point, "opponent": bot} for bot in bots for point in read_curve(run_dir, bot)]


def run_experiment(name: str, runs_dir: Path) -> dict[str, Any]:
    """Train every run of experiment ``name``; return its figure for the record."""
    import torch

    from unolab.train import run
    from unolab.train.config import config_for

    torch.set_num_threads(1)
    experiment = EXPERIMENTS[name]
    lines = []
    for label, config in experiment["runs"].items():
        start = time.perf_counter()
        result = run.train(
            config_for({**config, "runs_dir": str(runs_dir)}, config["algorithm"]),
            progress_bar=True,
            overwrite=True,
            log=None,
        )
        lines.append(
            {
                "label": label,
                "config": config,
                "seconds": round(time.perf_counter() - start, 1),
                "points": curve_points(result.run_dir, config["eval"]["bots"]),
            }
        )
    return {
        "title": experiment["title"],
        "description": experiment["description"],
        "command": f"{PROG} --only {name}",
        "date": datetime.date.today().isoformat(),
        "machine": f"{os.cpu_count()}-core {platform.machine()} CPU, Python "
        f"{platform.python_version()}, torch threads 1",
        "lines": lines,
    }


MAX_RECORD_BYTES = 16 << 20
"""The largest record read back (the published one is a few hundred KiB)."""


def _merged(path: Path, figures: Mapping[str, Any]) -> dict[str, Any]:
    """The record at ``path`` (if any) with ``figures`` added.

    Raises:
        ValueError: one line naming the file, when it is there but is not such a record.
    """
    record: dict[str, Any] = {"description": "", "figures": {}}
    if path.exists():
        text = read_regular_text(path, MAX_RECORD_BYTES, "--out")
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            raise ValueError(f"--out {str(path)!r} is not JSON: give a new file") from None
        if not isinstance(record, dict) or not isinstance(record.get("figures", {}), dict):
            raise ValueError(
                f"--out {str(path)!r} is not a training-curves record (no 'figures' mapping): "
                "give a new file"
            )
    record["description"] = (
        "Learning curves: per figure, its runs' evaluations (win rate with its Wilson 95% "
        "interval, against each evaluation bot, on the run's own evaluation deals)."
    )
    record["figures"] = {**record.get("figures", {}), **figures}
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiments and write (or add to) the record."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("--only", choices=sorted(EXPERIMENTS), action="append", default=None)
    parser.add_argument("--out", type=path_argument, default=DATA)
    parser.add_argument("--runs-dir", type=path_argument, default=None)
    args = parser.parse_args(argv)
    names = args.only or sorted(EXPERIMENTS)
    _merged(args.out, {})  # the record it adds to is checked before minutes of training
    check_writable_target(args.out, "--out")
    runs_dir = args.runs_dir or Path(tempfile.mkdtemp(prefix="uno-lab-curves-"))
    try:
        figures = {name: run_experiment(name, runs_dir) for name in names}
    finally:
        if args.runs_dir is None:
            shutil.rmtree(runs_dir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.out, json.dumps(_merged(args.out, figures), indent=2) + "\n")
    for name, figure in figures.items():
        for line in figure["lines"]:
            last = line["points"][-1]
            print(
                f"{name} / {line['label']}: {last['win_rate']:.1%} against {last['opponent']} "
                f"after {last['steps']:,} steps ({line['seconds']:.0f} s)"
            )
    return 0


if __name__ == "__main__":
    run_main(main, PROG)
