"""Hyper-parameter sweeps on Ray Tune: ``uno-lab sweep --config sweep/<name>``.

Each trial is a normal training run (:func:`unolab.train.run.train`) of the sweep's training config
with the trial's values (:mod:`unolab.train.sweep.config`), on one CPU and one torch thread, with
its own run folder, TensorBoard logs and exported policy. After each periodic evaluation the
trial reports its win rate against the metric bot (with the Wilson interval) to Tune, whose
ASHA scheduler stops the trials that fall behind.

Everything goes to ``<output_dir>/<name>/``:

``tune/``
    Tune's experiment (its state, each trial's reported results).
``runs/<trial>/``
    the trial's training run (``config.yaml``, checkpoints, ``tb/``, the exported agent),
    and ``sweep_trial.json`` (its settings, wall time and steps, rewritten at each
    evaluation).
``results.csv``
    one row per trial: its settings, the best win rate with its interval and the steps it
    was reached at, the steps trained, and whether ASHA stopped it.
``win_rate.png``
    the win rate against steps, one line per trial.
``sweep.json``
    the rows, the wall time and the measured overhead per trial.
``sweep_config.json``
    the sweep and training configs that started the folder.

Running the same command again resumes an interrupted sweep (Tune's restore: finished
trials are kept, unfinished ones continue from their run's ``latest.zip``; the search
space and ``num_samples`` are those it started with, and another config is refused);
``--fresh`` starts over. Without Ray the command says how to install it.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import io
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.console import path_argument
from uno_env.files import FolderInUseError, save_atomically, write_atomically
from uno_env.folders import RunFolder
from unolab.agents.arena import EvalResult
from unolab.agents.ray_backend import RayBackendError, cluster_cpus, connect, require_ray
from unolab.train.config import TrainConfig
from unolab.train.sweep.config import (
    Dimension,
    SweepConfig,
    grid_size,
    load_sweep_config,
    longest_run,
    trial_overrides,
)

__all__ = ["TrialSetup", "build_parser", "main", "run_sweep", "write_results"]

SWEEP_RECORD = "sweep_config.json"
"""The config that started a sweep folder: a resume with another one is refused."""

TRIAL_RECORD = "sweep_trial.json"
"""Written in a trial's run folder at each evaluation and at its end: its settings, its wall
time so far, its steps, and whether it resumed its run."""

METRIC = "win_rate"
"""The score Tune maximises: the win rate against the sweep's metric bot."""


@dataclass(frozen=True)
class TrialSetup:
    """What every trial needs, sent to the workers once.

    Attributes:
        base: The training config as plain data, its paths made absolute.
        runs_dir: Where the trials' run folders go (absolute).
        metric_bot: The evaluation bot whose win rate is reported as the score.
    """

    base: dict[str, Any]
    runs_dir: str
    metric_bot: str


def _absolute(data: dict[str, Any]) -> dict[str, Any]:
    """The config's file paths made absolute: Tune runs trials in folders of its own."""
    out = dict(data)
    for key in ("rules", "init_from"):
        value = out.get(key)
        if isinstance(value, str) and Path(value).suffix and Path(value).exists():
            out[key] = str(Path(value).resolve())
    return out


def _trial(params: dict[str, Any], setup: TrialSetup) -> None:
    """One trial (a Tune function trainable): train, reporting each evaluation to Tune.

    A trial restarted by a resumed sweep continues its run from its newest good checkpoint
    (``latest.zip``, else ``previous.zip``).
    """
    from ray import tune

    from unolab.train.checkpoint_files import has_checkpoint
    from unolab.train.config import load_config
    from unolab.train.run import train

    start = time.perf_counter()
    trial = tune.get_context().get_trial_name()
    overrides = [  # the keys of SET_BY_TRIAL last: no search dimension may set them
        *trial_overrides(params),
        f"name={json.dumps(trial)}",
        f"runs_dir={json.dumps(setup.runs_dir)}",
        "torch_threads=1",
    ]
    config = load_config(None, overrides, base=setup.base)
    resume = has_checkpoint(config.run_dir)

    def record(steps: int) -> None:
        # Written before each report: Tune may stop the trial at any report (ASHA, or the
        # last one at max_t), and the sweep's overhead is its wall time beyond these.
        data = {"params": params, "seconds": time.perf_counter() - start, "steps": steps}
        write_atomically(config.run_dir / TRIAL_RECORD, json.dumps({**data, "resumed": resume}))

    def report(steps: int, results: dict[str, EvalResult]) -> None:
        score = results[setup.metric_bot]
        metrics: dict[str, Any] = {
            "steps": steps,
            METRIC: score.win_rate,
            "ci_low": score.ci_low,
            "ci_high": score.ci_high,
            "trial_seconds": time.perf_counter() - start,
            "run_dir": str(config.run_dir),
        }
        metrics.update({f"win_rate_vs_{bot}": r.win_rate for bot, r in results.items()})
        record(steps)
        tune.report(metrics)

    result = train(
        config, resume=resume, progress_bar=False, overwrite=True, log=None, on_evaluation=report
    )
    record(result.steps)


def _scheduler(sweep: SweepConfig, base: TrainConfig, dimensions: Sequence[Dimension]) -> Any:
    if sweep.scheduler.kind == "none":
        return None
    from ray.tune.schedulers import ASHAScheduler

    horizon = longest_run(base, dimensions)
    grace = min(sweep.scheduler.grace_evaluations * base.eval.every, horizon)
    return ASHAScheduler(
        time_attr="steps",
        max_t=horizon,
        grace_period=grace,
        reduction_factor=sweep.scheduler.reduction_factor,
    )


def run_sweep(
    sweep: SweepConfig,
    base: TrainConfig,
    dimensions: Sequence[Dimension],
    *,
    address: str | None = None,
    fresh: bool = False,
    verbose: int = 1,
) -> dict[str, Any]:
    """Run (or resume) a sweep and write its results table and plot.

    Args:
        sweep: The sweep.
        base: The training config every trial starts from.
        dimensions: The search space.
        address: The Ray cluster (``auto`` or ``HOST:PORT``; None starts a local Ray with
            ``max_concurrent`` CPUs).
        fresh: Discard an earlier run of this sweep first.
        verbose: Tune's verbosity (0 silent, 1 status updates).

    Returns:
        The summary written to ``sweep.json``.

    Raises:
        RayBackendError: Ray is missing or the cluster cannot be reached.
        FolderInUseError: another process runs the sweep; the message names its pid.
        ConfigError: the folder holds a sweep of another config (without ``fresh``), or
            cannot be made.
    """
    require_ray()
    run = sweep_folder(sweep)
    record = _sweep_record(sweep, base)
    run.hold()  # one process per sweep folder: a second one is refused, naming this one's pid
    try:
        if not fresh:  # a record from before fingerprints is compared key by key
            same = record["fingerprint"]
            run.check_record(SWEEP_RECORD, same, lambda old: _differences(old, record), None, None)
        return _run_sweep(run, sweep, base, dimensions, record, address, fresh, verbose)
    except BaseException:
        run.release(undo=True)  # a refused start leaves no folder it made
        raise
    finally:
        run.release()


def sweep_folder(sweep: SweepConfig) -> RunFolder:
    """The sweep's folder, ``<output_dir>/<name>`` (absolute: Tune runs trials elsewhere):
    its lock, its files, and the record of the config that started it."""
    return RunFolder(
        sweep.folder.resolve(),
        "sweep",
        files=["tune", "runs", "results.csv", "win_rate.png", "sweep.json", SWEEP_RECORD],
        start_over="rerun with --fresh to start over",
        rename="give this one another name",
        relocate="choose another output_dir or name",
    )


def _run_sweep(
    run: RunFolder,
    sweep: SweepConfig,
    base: TrainConfig,
    dimensions: Sequence[Dimension],
    record: dict[str, Any],
    address: str | None,
    fresh: bool,
    verbose: int,
) -> dict[str, Any]:
    """:func:`run_sweep` with the sweep's folder held."""
    from ray import tune

    folder = run.path
    experiment = folder / "tune"
    metric_bot = sweep.metric_bot or base.eval.bots[0]
    setup = TrialSetup(_absolute(base.to_dict()), str(folder / "runs"), metric_bot)
    start = time.perf_counter()
    with connect(address, num_cpus=sweep.max_concurrent) as ray:
        connected = time.perf_counter() - start
        cpus = cluster_cpus(ray)
        if fresh:
            run.remove(run.existing())
        run.write(SWEEP_RECORD, json.dumps(record, indent=2, sort_keys=True) + "\n")
        trainable = tune.with_resources(tune.with_parameters(_trial, setup=setup), {"cpu": 1})
        if tune.Tuner.can_restore(str(experiment)):
            print(f"resuming the sweep in {experiment}", file=sys.stderr)
            tuner = tune.Tuner.restore(
                str(experiment), trainable, resume_unfinished=True, resume_errored=True
            )
        else:
            tuner = tune.Tuner(
                trainable,
                param_space={d.key: d.to_tune() for d in dimensions},
                tune_config=tune.TuneConfig(
                    metric=METRIC,
                    mode="max",
                    num_samples=sweep.num_samples,
                    max_concurrent_trials=sweep.max_concurrent,
                    scheduler=_scheduler(sweep, base, dimensions),
                    # A finished trial's process runs the next one: torch and the lab are
                    # imported once per slot, not once per trial.
                    reuse_actors=True,
                ),
                run_config=tune.RunConfig(
                    name="tune",
                    storage_path=str(folder),
                    verbose=verbose,
                    failure_config=tune.FailureConfig(max_failures=2),
                ),
            )
        fit_start = time.perf_counter()
        grid = tuner.fit()
        fit = time.perf_counter() - fit_start
    wall = time.perf_counter() - start
    rows = [_row(grid[i], [d.key for d in dimensions], base) for i in range(len(grid))]
    rows.sort(key=lambda r: r["trial"])
    errors = [f"{r['trial']}: {r['error']}" for r in rows if r["error"]]
    trial_seconds = sum(r["trial_seconds"] for r in rows)
    concurrency = max(1, min(sweep.max_concurrent, cpus, len(rows)))
    summary = {
        "name": sweep.name,
        "train_config": sweep.train_config,
        "metric": f"win rate vs {metric_bot}",
        "trials": len(rows),
        "grid_size": grid_size(dimensions),
        "wall_s": wall,
        "ray_connect_s": connected,
        "tune_fit_s": fit,
        "trial_seconds_total": trial_seconds,
        "concurrency": concurrency,
        # Time the sweep adds to its trials: Ray and Tune starting, trials scheduled and
        # their processes started, results recorded; per trial, at this concurrency.
        "overhead_per_trial_s": (wall * concurrency - trial_seconds) / len(rows) if rows else 0,
        # The same without Ray's start and stop (nothing of it where a cluster is joined).
        "tune_overhead_per_trial_s": (fit * concurrency - trial_seconds) / len(rows) if rows else 0,
        "rows": rows,
        "errors": errors,
    }
    write_results(folder, rows, [d.key for d in dimensions], summary)
    return summary


def _sweep_record(sweep: SweepConfig, base: TrainConfig) -> dict[str, Any]:
    """What decides a sweep's trials: its config (less where and how fast) and the training
    config every trial starts from."""
    data = dataclasses.asdict(sweep)
    for key in ("max_concurrent", "output_dir"):
        data.pop(key)
    out: dict[str, Any] = json.loads(json.dumps({"sweep": data, "train": base.to_dict()}))
    text = json.dumps(out, sort_keys=True).encode("utf-8")
    out["fingerprint"] = hashlib.sha256(text).hexdigest()[:16]
    return out


def _differences(stored: dict[str, Any], record: dict[str, Any]) -> str:
    """The keys in which a stored sweep record and this sweep's differ ("" when none)."""
    differ = []
    for part in ("sweep", "train"):
        old = stored.get(part)
        old = old if isinstance(old, dict) else {}
        differ += [
            f"{part}.{key}"
            for key in sorted(set(record[part]) | set(old))
            if record[part].get(key) != old.get(key)
        ]
    return ", ".join(differ)


def _row(result: Any, keys: Sequence[str], base: TrainConfig) -> dict[str, Any]:
    """A trial's line of the results table, from Tune's record of its reports."""
    frame = result.metrics_dataframe
    config = result.config or {}
    run_dir = (result.metrics or {}).get("run_dir")
    name = Path(run_dir).name if run_dir else Path(result.path or "?").name
    row: dict[str, Any] = {"trial": name}
    row.update({key: config.get(key) for key in keys})
    history: list[tuple[int, float]] = []
    best: dict[str, Any] = {"win_rate": None, "ci_low": None, "ci_high": None, "best_steps": None}
    steps, seconds = 0, 0.0
    if frame is not None and METRIC in frame and len(frame):
        frame = frame.dropna(subset=[METRIC])
        history = [(int(s), float(w)) for s, w in zip(frame["steps"], frame[METRIC], strict=True)]
        top = frame.loc[frame[METRIC].idxmax()]
        best = {
            "win_rate": float(top[METRIC]),
            "ci_low": float(top["ci_low"]),
            "ci_high": float(top["ci_high"]),
            "best_steps": int(top["steps"]),
        }
        steps = int(frame["steps"].max())
        seconds = float(frame["trial_seconds"].max())
    row.update(best)
    if run_dir and (Path(run_dir) / TRIAL_RECORD).is_file():  # its latest wall time
        seconds = float(json.loads((Path(run_dir) / TRIAL_RECORD).read_text())["seconds"])
    target = int(config.get("total_steps", base.total_steps))
    row.update(
        steps=steps,
        stopped_early=bool(steps and steps < target and result.error is None),
        trial_seconds=seconds,
        error=" ".join(str(result.error).split())[:300] if result.error else "",
        history=history,
    )
    return row


_COLUMNS = ("win_rate", "ci_low", "ci_high", "best_steps", "steps", "stopped_early", "error")


def write_results(
    folder: Path, rows: Sequence[dict[str, Any]], keys: Sequence[str], summary: dict[str, Any]
) -> None:
    """Write ``results.csv``, ``win_rate.png`` and ``sweep.json`` into ``folder``, each whole."""
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow(["trial", *keys, *_COLUMNS])
    for row in rows:
        writer.writerow([row["trial"], *(row[k] for k in keys), *(row[c] for c in _COLUMNS)])
    write_atomically(folder / "results.csv", table.getvalue())
    write_atomically(folder / "sweep.json", json.dumps(summary, indent=2, default=str) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for row in rows:
        if row["history"]:
            steps, rates = zip(*row["history"], strict=True)
            label = ", ".join(f"{k.rpartition('.')[2]}={row[k]:.3g}" for k in keys if _num(row[k]))
            ax.plot(steps, rates, marker="o", label=label or row["trial"])
    ax.set_xlabel("learner steps")
    ax.set_ylabel(summary["metric"])
    ax.set_title(f"sweep {summary['name']}: win rate against steps, per trial")
    ax.grid(alpha=0.3)
    if rows:
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_atomically(folder / "win_rate.png", lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def build_parser(prog: str = "uno-lab sweep") -> argparse.ArgumentParser:
    """The command's options."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Sweep training settings on Ray Tune (pip install 'uno-lab[ray]'): each "
        "trial a normal training run, ASHA stopping the bad ones. Rerun to resume.",
    )
    parser.add_argument(
        "--config",
        required=True,
        type=path_argument,
        help="sweep YAML (uno-lab also takes a shipped name: sweep/quick_lr_ent)",
    )
    parser.add_argument(
        "--num-samples", type=int, help="samples of the search space (overrides the file)"
    )
    parser.add_argument(
        "--max-concurrent", type=int, help="trials at once, one CPU each (overrides the file)"
    )
    parser.add_argument(
        "--address",
        metavar="auto|HOST:PORT",
        help="the Ray cluster to join (default: start a local Ray of --max-concurrent CPUs)",
    )
    parser.add_argument("--fresh", action="store_true", help="discard an earlier run first")
    parser.add_argument("--quiet", action="store_true", help="no trial status updates")
    return parser


def _load(args: argparse.Namespace) -> tuple[SweepConfig, TrainConfig, list[Dimension]]:
    sweep, base, dimensions = load_sweep_config(args.config)
    options = {"num_samples": "--num-samples", "max_concurrent": "--max-concurrent"}
    for key, option in options.items():
        value = getattr(args, key)
        if value is None:
            continue
        try:
            sweep = dataclasses.replace(sweep, **{key: value})
        except ValueError as err:  # the option's value, not the file's: named as typed
            raise ConfigError(f"{option} {value}: {str(err).removeprefix(f'{key}: ')}") from None
    return sweep, base, dimensions


def main(argv: Sequence[str] | None = None, prog: str = "uno-lab sweep") -> int:
    """Run the command; return the exit status (0, 2 for bad input, 130 interrupted)."""
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        sweep, base, dimensions = _load(args)
        require_ray()
        summary = run_sweep(
            sweep,
            base,
            dimensions,
            address=args.address,
            fresh=args.fresh,
            verbose=0 if args.quiet else 1,
        )
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume the sweep", file=sys.stderr)
        return 130
    except (RayBackendError, ValueError, OSError, FolderInUseError) as err:
        print(f"{prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    folder = sweep.folder
    print(
        f"{summary['trials']} trials in {summary['wall_s']:.0f} s (overhead "
        f"{summary['overhead_per_trial_s']:.1f} s per trial); results in "
        f"{folder / 'results.csv'} and {folder / 'win_rate.png'}"
    )
    for error in summary["errors"]:
        print(f"trial failed: {error}", file=sys.stderr)
    return 1 if summary["errors"] else 0
