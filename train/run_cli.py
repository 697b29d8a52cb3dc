"""The command line of a training run, ``uno-lab train ALGORITHM`` for every algorithm of the
registry (:mod:`unolab.train.algorithms`): the options, the run's config (new, or read back to resume), one-line
errors, Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from uno_env.config_values import ConfigError
from uno_env.configuration import add_config_options, load_yaml_mapping
from uno_env.console import fail, one_line, path_argument
from uno_env.files import FolderLock, why_missing
from unolab.train.algorithms import get_algorithm
from unolab.train.config import TrainConfig, load_config
from unolab.train.resume import RUN_FOLDER_KEYS, Change, refuse_fixed
from unolab.train.run import START_ERRORS, RunResult, TrainingInterrupted, learn, start_run
from unolab.train.run_folder import write_failed

__all__ = ["build_parser", "main", "resume_folder", "resumed_config_path"]


def resume_folder(given: Path) -> Path:
    """The run folder ``--resume`` names: as given, or absolute where the given path has
    no name of its own (``--resume .`` inside a run's folder, ``--resume ..``)."""
    path = Path(given)
    return Path(os.path.abspath(path)) if path.name in ("", "..") else path


def resumed_config_path(run_dir: Path) -> Path:
    """The config a run resumed from ``run_dir`` trains with (``run_dir/config.yaml``).

    Raises:
        FileNotFoundError: naming the path, when the folder holds no run (a symlink to
            nothing or a loop is said to be one).
        ConfigError: naming the path, when it is no regular file (a folder, a device).
    """
    path = resume_folder(run_dir) / "config.yaml"
    if path.exists() and not path.is_file():  # a folder, or a link to a device: said so
        raise ConfigError(
            f"cannot resume: {path} is not a regular file (a folder, a device or a pipe); "
            "give the folder of a run, e.g. --resume runs/<name>"
        )
    if not path.is_file():
        raise FileNotFoundError(
            f"cannot resume: {path} {why_missing(path)} (give the folder of a run, "
            "e.g. --resume runs/<name>)"
        )
    return path


def _load_run_config(args: argparse.Namespace, algorithm: str) -> TrainConfig:
    """The config of the command line: the file (or the resumed run's), with ``--set``.

    A resumed run is the folder ``--resume`` names: its ``name`` and ``runs_dir`` come
    from it, and ``--set`` cannot move it elsewhere.

    Raises:
        ConfigError: naming the file, key or value at fault.
        FileNotFoundError: to resume a folder that holds no run.
    """
    overrides = list(args.overrides)
    if args.resume is not None:
        run_dir = resume_folder(args.resume)
        for item in overrides:
            key = item.partition("=")[0].strip()
            if key in RUN_FOLDER_KEYS:
                raise ConfigError(
                    f"--set {key}: a resumed run stays in its folder ({run_dir}); to train "
                    f"under another name, start a new run (--config {run_dir / 'config.yaml'} "
                    "--set name=...)"
                )
        # JSON strings are YAML strings: a run named 007 stays a name, not a number.
        overrides += [
            f"runs_dir={json.dumps(str(run_dir.parent))}",
            f"name={json.dumps(run_dir.name)}",
        ]
    path = args.config if args.config is not None else resumed_config_path(args.resume)
    # A resumed run does not read init_from: its network has started already. A file or a
    # --set value that is no YAML is a ConfigError naming it (the loader's).
    config = load_config(path, overrides, check_init_from=args.resume is None)
    if config.algorithm != algorithm:
        given = [item for item in args.overrides if item.partition("=")[0].strip() == "algorithm"]
        if given and args.resume is not None:  # a fixed key of the run, as every other
            run_config = resumed_config_path(args.resume)
            saved = load_yaml_mapping(run_config).get("algorithm")
            if saved != config.algorithm:
                refuse_fixed(run_config.parent, [Change("algorithm", saved, config.algorithm)])
        if given:
            raise ConfigError(
                f"--set {given[-1].strip()}: this command trains {algorithm}; train a "
                f"{config.algorithm} run with uno-lab train {config.algorithm}"
            )
        raise ConfigError(
            f"{path} is a {config.algorithm} config; train it with uno-lab train {config.algorithm}"
        )
    return config


def build_parser(algorithm: str, prog: str | None = None) -> argparse.ArgumentParser:
    """The options of ``uno-lab train ALGORITHM``."""
    parser = argparse.ArgumentParser(
        prog=prog or f"uno-lab train {algorithm}",
        description=f"Train a {algorithm.upper()} UNO agent from a YAML config.",
    )
    add_config_options(
        parser,
        get_algorithm(algorithm).default_config,
        "ppo.learning_rate=1e-4",
        run="runs/<name>",
    )
    parser.add_argument(
        "--resume",
        type=path_argument,
        nargs="?",
        const=Path("."),
        metavar="RUN_DIR",
        help="continue the run in runs/<name> (alone: the run in the current folder); only "
        "the settings that change neither the model nor its data may change (docs/training.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def main(algorithm: str, argv: Sequence[str] | None = None, prog: str | None = None) -> RunResult:
    """Command line of ``uno-lab train ALGORITHM`` (an algorithm of the registry).

    Bad input (a config error, a missing file, a run that exists) ends with one line
    ``<prog>: error: ...`` on stderr and exit status 2; Ctrl-C (or SIGTERM) saves
    ``latest.zip`` and exits 130.

    Args:
        algorithm: A name of the algorithm registry (``ppo``, ``dqn``).
        argv: The arguments (default: ``sys.argv[1:]``).
        prog: The command's name in messages (default: ``uno-lab train ALGORITHM``).
    """
    parser = build_parser(algorithm, prog)
    args = parser.parse_args(argv)
    if args.config is None and args.resume is None:
        parser.error("give --config FILE, or --resume RUN_DIR to continue a run")
    if args.resume is not None and args.overwrite:
        parser.error("--resume continues a run, --overwrite starts it over: give one of them")
    progress = not args.no_progress
    config: TrainConfig | None = None
    try:
        config = _load_run_config(args, algorithm)
        session = start_run(config, args.resume is not None, args.overwrite, progress, sys.stderr)
    except KeyboardInterrupt:
        stage = None if config is None else config.imitation_config()
        where = ": nothing was written"
        if stage is not None and stage.run_dir.is_dir():  # what the clone stage wrote
            kept = sorted(p.name for p in stage.run_dir.iterdir() if p.name != FolderLock.LOCK_NAME)
            where = f"; {stage.run_dir} holds {', '.join(kept)}" if kept else where
        print(f"interrupted before training started{where}", file=sys.stderr)
        raise SystemExit(130) from None
    except START_ERRORS as err:
        fail(err, parser.prog)
    # SIGTERM (kill, a scheduler's stop) saves and stops the run as Ctrl-C does: a run
    # started in the background (nohup ... &) ignores SIGINT, so kill PID is how it is
    # stopped. Not in the main thread (a sweep trial), the caller owns the signals.
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt
    try:
        result = learn(session, progress, sys.stderr)
    except OSError as err:  # the machine, not the input: a full disk, a failed write
        # A RunWriteError names the file already: write_failed gives it back as it is.
        err = write_failed(err, getattr(err, "filename", None) or config.run_dir, config.run_dir)
        print(f"{parser.prog}: error: {one_line(err.strerror or err)}", file=sys.stderr)
        raise SystemExit(1) from None
    except TrainingInterrupted as stop:
        if stop.checkpoint is None:
            print(
                f"interrupted at step {stop.steps:,}; could not save a checkpoint: {stop.reason}",
                file=sys.stderr,
            )
        else:
            print(
                f"interrupted at step {stop.steps:,}: saved {stop.checkpoint}; continue with "
                f"{parser.prog} --resume {stop.run_dir}",
                file=sys.stderr,
            )
        raise SystemExit(130) from None
    exported = f", the agent {result.policy}" if result.policy is not None else ""
    print(
        f"trained {result.steps:,} steps in {result.seconds:.0f} s; checkpoints{exported} "
        f"and TensorBoard logs in {result.run_dir} (tensorboard --logdir {result.run_dir / 'tb'})"
    )
    return result
