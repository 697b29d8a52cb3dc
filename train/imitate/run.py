"""An imitation run, from a script or ``uno-lab train imitate --config FILE``.

:func:`imitate` runs the steps of :mod:`unolab.train.imitate` with its folder held (record,
fit, score, measure, export); :func:`train` takes a config object, a YAML file or a mapping;
:func:`main` is the command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from uno_env.config_values import check_switch
from uno_env.configuration import add_config_options
from uno_env.console import fail
from uno_env.files import FolderInUseError, shown
from uno_env.folders import RunFolder
from uno_env.observation import OBS_VERSION
from uno_env.rules import Rules
from unolab.agents.arena import EvalResult, evaluate_vs
from unolab.agents.learned import TorchPolicy
from unolab.agents.progress import check_log
from unolab.agents.progress import say as status_line
from unolab.train.config_limits import resolve_device
from unolab.train.imitate.config import ImitateConfig, load_imitate_config
from unolab.train.imitate.data import generate_demonstrations, teacher_factory
from unolab.train.imitate.files import (
    DEMONSTRATIONS_FILE,
    concat_demonstrations,
    load_demonstrations,
    save_demonstrations,
)
from unolab.train.imitate.fit import (
    REPORT_NAME,
    agreement,
    clone_metadata,
    fit_clone,
    format_report,
    predict,
    run_folder,
    validation_split,
    write_clone,
)

__all__ = [
    "ImitationResult",
    "imitate",
    "main",
    "train",
]

_EVAL_SEED_OFFSET = 7919
"""Added to the run's seed for the strength measurement (as training runs do): its deals
are never those the clone was trained on."""


@dataclass(frozen=True)
class ImitationResult:
    """What an imitation run produced.

    Attributes:
        run_dir: The run's folder.
        policy: The clone's weights (``<run_dir>/<name>.safetensors``).
        report: The report as written to ``imitation_report.json``.
    """

    run_dir: Path
    policy: Path
    report: dict[str, Any]


def _strength(
    config: ImitateConfig, rules: Rules, clone: TorchPolicy, progress: bool
) -> dict[str, dict[str, dict[str, Any]]]:
    """Win rates of the clone and (with ``eval_teachers``) of each teacher against each
    evaluation bot, on the same deals."""
    seed = config.seed + _EVAL_SEED_OFFSET
    players: dict[str, Any] = {"clone": clone}
    for name, weight in config.teachers.items():
        if weight > 0 and config.eval_teachers:
            players[name] = teacher_factory(name, rules, config.teacher_budget)(seed)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, player in players.items():
        out[label] = {}
        for bot in config.eval_bots:
            result: EvalResult = evaluate_vs(
                rules, player, bot, config.eval_games, seed=seed, progress=progress
            )
            out[label][bot] = result.to_dict()
    return out


def imitate(
    config: ImitateConfig,
    *,
    overwrite: bool = False,
    progress: bool = True,
    log: TextIO | None = sys.stderr,
) -> ImitationResult:
    """Run an imitation: record, fit, score, measure, export (see the module docstring).

    Args:
        config: The run.
        overwrite: Replace the files of an earlier run of the same name.
        progress: Show progress bars (plain lines off a terminal).
        log: Where to say what runs now (None: silent).

    Returns:
        The run's folder, the clone's weights and the report.

    Raises:
        RunExistsError: (a FileExistsError) if ``config.run_dir`` holds a run and
            ``overwrite`` is not set.
        FolderInUseError: another run holds ``config.run_dir``; the message names its pid.
        ValueError: for a teacher that cannot be loaded (an agent file trained under other
            rules, a malformed one) or that plays an illegal action; ConfigError (a
            ValueError) for an ``overwrite`` or ``progress`` that is not a bool.
        TypeError: for a ``config`` that is no ImitateConfig or a ``log`` that is no text
            stream.
    """
    if not isinstance(config, ImitateConfig):
        raise TypeError(
            "config: expected an ImitateConfig (unolab.train.imitate.config."
            f"load_imitate_config builds one), got {shown(config)}"
        )
    check_switch("overwrite", overwrite)
    check_switch("progress", progress)
    check_log(log)

    def say(message: str) -> None:
        if log is not None:
            status_line(f"[{config.name}] {message}", log)

    torch.set_num_threads(config.torch_threads)
    resolve_device(config.device)  # cuda without a GPU: refused before minutes of recording
    rules = config.build_rules()
    folder = run_folder(config)
    folder.check_new(overwrite)  # before any work; checked again under the lock
    folder.hold()  # one run per folder: a second one is refused, naming this one's pid
    try:
        folder.check_new(overwrite)
        result = _imitate(config, rules, progress, say, folder)
    except BaseException:
        # A refused start leaves nothing behind; a stopped one keeps its files, not the lock.
        folder.release(undo=not folder.existing())
        raise
    folder.release()
    return result


def _imitate(
    config: ImitateConfig,
    rules: Rules,
    progress: bool,
    say: Callable[[str], None],
    folder: RunFolder,
) -> ImitationResult:
    """:func:`imitate`'s work, with the run folder held."""
    for teacher in config.teachers:  # an agent file that does not fit fails now, named
        teacher_factory(teacher, rules, config.teacher_budget)
    if config.behaviour is not None and config.samples:
        teacher_factory(config.behaviour, rules)
    teachers_label = "+".join(config.teachers)
    parts = []
    for path in config.include:  # a file of other rules fails now, before any recording
        parts.append(load_demonstrations(path, rules))
        say(
            f"included {len(parts[-1]):,} decisions of {'+'.join(parts[-1].teacher_names)} "
            f"from {path}"
        )
    if config.samples:
        say(f"recording {config.samples:,} decisions of {teachers_label}...")
        recorded = generate_demonstrations(
            rules,
            config.teachers,
            config.samples,
            opponents=config.opponents,
            seed=config.seed,
            games_per_batch=config.games_per_batch,
            progress=progress,
            teacher_budget=config.teacher_budget,
            behaviour=config.behaviour,
            behaviour_share=config.behaviour_share,
        )
        if config.keep_demonstrations:  # kept at once: an hour of search is not lost
            config.run_dir.mkdir(parents=True, exist_ok=True)
            kept = save_demonstrations(config.run_dir / DEMONSTRATIONS_FILE, recorded, rules)
            say(f"kept the recording in {kept}")
        parts.append(recorded)
    demos = concat_demonstrations(parts)
    if config.value_targets is not None and demos.values is None:
        say(
            "value_targets: no teacher recorded estimates (only search teachers do); "
            "imitating the chosen actions"
        )
    train_rows, valid_rows = validation_split(demos, config.validation, config.seed)
    say(
        f"fitting {config.net_arch} on {train_rows.size:,} decisions, "
        f"{valid_rows.size:,} held out..."
    )
    start = time.perf_counter()
    net, history = fit_clone(config, demos, train_rows, valid_rows, progress=progress)
    fit_seconds = time.perf_counter() - start
    predicted = predict(net, demos.observations[valid_rows], demos.masks[valid_rows])
    report: dict[str, Any] = {
        "name": config.name,
        "teachers_label": teachers_label,
        "teachers": dict(config.teachers),
        "opponents": config.opponents,
        "behaviour": (
            None
            if config.behaviour is None
            else {"agent": config.behaviour, "share": config.behaviour_share}
        ),
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
        "data": {
            "decisions": len(demos),
            "games": demos.num_games,
            "forced_skipped": demos.forced,
            "train": int(train_rows.size),
            "validation": int(valid_rows.size),
            "seconds": demos.seconds,
            "included": list(config.include),
            "with_estimates": (
                0 if demos.values is None else int((~np.isnan(demos.values)).any(axis=1).sum())
            ),
        },
        "fit": {
            "value_targets": config.value_targets,
            "epochs": config.epochs,
            "seconds": fit_seconds,
            "history": history,
        },
        "accuracy": agreement(predicted, demos, valid_rows),
    }
    del demos  # the observations take gigabytes at a few million decisions
    # The clone is written before the measurement (minutes with a search teacher), so that
    # an interrupted measurement loses no fitted clone; it is written again with its figures.
    config.run_dir.mkdir(parents=True, exist_ok=True)
    write_clone(config, rules, net, report)
    say(f"measuring the clone and its teacher(s) against {list(config.eval_bots)}...")
    clone = TorchPolicy(net, clone_metadata(config, rules, {}))
    report["strength"] = _strength(config, rules, clone, progress)
    weights = write_clone(config, rules, net, report)
    report["policy"] = str(weights)
    folder.write(REPORT_NAME, json.dumps(report, indent=2))
    folder.write("config.yaml", config.to_yaml())
    return ImitationResult(config.run_dir, weights, report)


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------


def train(
    config: ImitateConfig | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
    *,
    overwrite: bool = False,
    progress: bool = True,
    log: TextIO | None = sys.stderr,
) -> ImitationResult:
    """Clone teachers from a script or a notebook, as ``uno-lab train imitate --config FILE``.

    Args:
        config: An :class:`~unolab.train.imitate.config.ImitateConfig`, the path of a YAML config
            or a mapping of its keys.
        overrides: ``key=value`` items applied on top, as ``--set`` (``decisions=2000``).
        overwrite: Replace the files of an earlier run of the same name.
        progress: Show progress bars.
        log: Where to say what runs now (None: silent).

    Returns:
        The run's folder, the clone's weights and the report.

    Raises:
        ConfigError: for an invalid config.
        RunExistsError: (a FileExistsError) if the run folder holds a run and
            ``overwrite`` is not set.
    """
    if isinstance(config, ImitateConfig):
        if overrides:
            config = load_imitate_config(None, overrides, base=config.to_dict())
    elif isinstance(config, Mapping):
        config = load_imitate_config(None, overrides, base=config)
    else:
        config = load_imitate_config(config, overrides)
    return imitate(config, overwrite=overwrite, progress=progress, log=log)


def _config_example(prog: str | None) -> str:
    """The config the help names: a shipped name where ``uno-lab`` resolves it, else a file."""
    return "imitate/mixbot_2p" if (prog or "").startswith("uno-lab") else "my_imitate.yaml"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The options of ``uno-lab train imitate``."""
    parser = argparse.ArgumentParser(
        prog=prog or "uno-lab train imitate",
        description="Clone a bot (or a weighted mix of bots) into a network that a PPO run can "
        "start from (init_from: runs/<name>/<name>.safetensors).",
    )
    add_config_options(parser, _config_example(prog), "samples=200000", run="runs/<name>")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> ImitationResult:
    """Command line: ``uno-lab train imitate --config FILE [--set KEY=VALUE] [--overwrite]``.

    Bad input ends with one line ``<prog>: error: ...`` on stderr and exit status 2, having
    written nothing; Ctrl-C exits 130, naming what was written before it (a kept recording,
    a fitted clone) or saying that nothing was.
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.config is None:
        parser.error(f"give --config FILE (e.g. {_config_example(prog)})")
    config: ImitateConfig | None = None
    try:
        config = load_imitate_config(args.config, args.overrides)
        result = imitate(config, overwrite=args.overwrite, progress=not args.no_progress)
    except KeyboardInterrupt:
        written = [] if config is None else [p.name for p in run_folder(config).existing()]
        kept = f"; kept in {config.run_dir}: {', '.join(written)}" if written and config else ""
        print(f"interrupted{kept or ': nothing was written'}", file=sys.stderr)
        raise SystemExit(130) from None
    except (ValueError, OSError, FolderInUseError) as err:
        fail(err, parser.prog)
    print(format_report(result.report))
    print(
        f"wrote the clone {result.policy} and {result.run_dir / REPORT_NAME}; start a PPO run "
        f"from it with init_from: {result.policy}"
    )
    return result
