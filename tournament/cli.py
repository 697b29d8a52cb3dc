"""Command line: ``uno-lab tournament --config tournament/<x> [flags]`` (or ``python -m
unolab.tournament --config FILE``).

Flags override the YAML file (or describe the whole tournament without one)::

    uno-lab tournament --config tournament/bots_round_robin --workers 2
    uno-lab tournament --config tournament/bots_round_robin --backend ray \\
        --address auto
    uno-lab tournament --name quick --participants random mixbot --deal-sets 50
    uno-lab tournament --name gate --format ab --candidate runs/x/x.safetensors \\
        --incumbent mixbot --participants random greedy_points --sprt 0 20

Running the same command again resumes the run (the games already on disk are kept);
``--fresh`` starts over. Exit status: 0 when the tournament is complete or the SPRT decided;
2 for bad arguments or any problem with the inputs (a bad config or override, an unknown
participant, an agent file that does not load, a corrupt ``games.jsonl`` or ``config.json``,
a log holding another run's games, a run folder of another config or in use by another run,
an output folder that cannot be created), reported as one line ``error: ...`` on stderr
naming the file or value; 1 when the machine fails a write (a full disk: the line names the
file, and rerunning the same command resumes) or a chunk kills its worker process again and
again (the line names the chunk; a worker that dies once or a few times only costs a
restart of the pool); 130 when interrupted (Ctrl-C: the games
finished so far are kept, and rerunning the command resumes).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.configuration import apply_overrides, load_yaml_mapping
from uno_env.console import (
    BROKEN_PIPE_EXIT,
    INPUT_ERRORS,
    caused_by_input,
    error_line,
    one_line,
    run_main,
    silence_stdout,
)
from uno_env.files import FolderInUseError
from uno_env.rules import Rules
from unolab.agents.progress import PipeConsole
from unolab.tournament.backends import WorkerLostError
from unolab.tournament.config import TournamentConfig, load_config, refuse_pickle_switch
from unolab.tournament.run_folder import TournamentFolder
from unolab.tournament.runner import run_tournament

__all__ = ["build_parser", "config_from_args", "default_name", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(
        prog="python -m unolab.tournament",
        description="Fair, rated, reproducible, crash-safe UNO tournaments.",
    )
    p.add_argument(
        "--config", help="tournament YAML (uno-lab also takes a shipped name: bots_round_robin)"
    )
    p.add_argument(
        "--name",
        help="run name (results in <output-dir>/<name>/; default: the participants' names "
        "joined by _)",
    )
    p.add_argument("--format", choices=["round_robin", "gauntlet", "ab"])
    p.add_argument(
        "--participants",
        nargs="+",
        metavar="P",
        help="bot names, Python classes (my_bots.py:MyBot) or agent paths (the field)",
    )
    p.add_argument("--candidate", help="gauntlet / ab: the player tested")
    p.add_argument("--incumbent", help="ab: the player the candidate replaces")
    p.add_argument("--rules", help="rules preset name or YAML path")
    p.add_argument("--players", type=int, dest="num_players", help="table size k, 2..10")
    p.add_argument("--deal-sets", type=int, dest="deal_sets", help="deal sets per table")
    p.add_argument("--max-tables", type=int, dest="max_tables", help="sample this many tables")
    p.add_argument("--design", choices=["auto", "pair", "rotations", "williams"])
    p.add_argument("--seed", type=int)
    p.add_argument("--workers", type=int, help="processes (does not change the results)")
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        help="where chunks are played: local processes (default) or Ray tasks "
        "(pip install 'uno-lab[ray]'; does not change the results)",
    )
    p.add_argument(
        "--address",
        metavar="auto|HOST:PORT",
        help="ray backend: the cluster to join (default: start a local Ray of --workers CPUs)",
    )
    p.add_argument("--games-per-chunk", type=int, dest="games_per_chunk")
    p.add_argument("--bootstrap", type=int, help="bootstrap resamples for rating intervals")
    p.add_argument(
        "--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"), help="stop when the SPRT decides"
    )
    p.add_argument("--no-seat-streams", action="store_true", help="turn seat_draw_streams off")
    p.add_argument(
        "--allow-pickle",
        action="store_true",
        help="accept SB3 .zip checkpoints (loading them runs code from the file)",
    )
    p.add_argument("--output-dir", dest="output_dir", help="default runs/tournaments")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="any key")
    p.add_argument("--fresh", action="store_true", help="discard games already played")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return p


def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    """Merge the YAML file (if any), the flags and ``--set`` items into a config.

    Raises:
        ConfigError: for any invalid key or value.
    """
    data: dict[str, Any] = load_yaml_mapping(args.config) if args.config else {}
    if args.config:
        _refuse_rules_file(args.config, data, named=args.name is not None)
        refuse_pickle_switch(data, args.config)
    for key in (
        "name",
        "format",
        "participants",
        "candidate",
        "incumbent",
        "rules",
        "num_players",
        "deal_sets",
        "max_tables",
        "design",
        "seed",
        "workers",
        "backend",
        "address",
        "games_per_chunk",
        "bootstrap",
        "output_dir",
    ):
        value = getattr(args, key)
        if value is not None:
            data[key] = value
    if args.sprt is not None:
        data["sprt"] = {**(data.get("sprt") or {}), "elo0": args.sprt[0], "elo1": args.sprt[1]}
    if args.no_seat_streams:
        data["seat_draw_streams"] = False
    if args.allow_pickle:
        data["allow_pickle"] = True
    if "name" not in data:
        if args.config:
            raise ConfigError(f"{args.config} has no 'name': add one to it, or give --name NAME")
        named = [args.candidate, args.incumbent, *(args.participants or [])]
        if not args.participants:
            raise ConfigError("give --config, or --participants (and --name to name the run)")
        data["name"] = default_name([str(p) for p in named if p is not None])
    if args.set:
        refuse_pickle_switch(apply_overrides({}, args.set, example="sprt.elo1=10"), "--set")
    data = apply_overrides(data, args.set, example="sprt.elo1=10")
    return load_config(data)


MAX_DEFAULT_NAME = 80
"""The longest run name made from the participants (longer ones are cut)."""


def default_name(participants: Sequence[str]) -> str:
    """The run's name when ``--name`` is not given: its participants joined by ``_``, each by
    its leaderboard name (a file by its stem; ``:`` and other characters a folder name should
    not hold become ``-``): ``mixbot random my_model.yaml`` -> ``mixbot_random_my_model``."""
    parts = []
    for spec in participants:
        path = Path(spec)
        stem = path.stem if path.suffix.lower() in _FILE_SUFFIXES else spec
        parts.append(re.sub(r"[^A-Za-z0-9._+-]+", "-", stem).strip("-.") or "agent")
    return "_".join(parts)[:MAX_DEFAULT_NAME].rstrip("_") or "tournament"


_FILE_SUFFIXES = (".yaml", ".yml", ".safetensors", ".json", ".zip", ".py")
"""The suffixes of the files a participant is named by (the stem names it)."""

_RULES_KEYS = frozenset({"preset", *(f.name for f in dataclasses.fields(Rules))})
"""The keys of a rules file (``configs/rules/*.yaml``): a preset and the switches."""

_TOURNAMENT_KEYS = frozenset(f.name for f in dataclasses.fields(TournamentConfig))


def _refuse_rules_file(path: str, data: Mapping[str, Any], named: bool) -> None:
    """Refuse a rules file given as the tournament config, saying what it is.

    A file whose keys outside a tournament config's are all rules switches is a rules file,
    and so is one without ``name`` whose keys are all rules keys (an empty one included,
    such as ``configs/rules/official.yaml``) when ``--name`` does not name the run either.

    Args:
        path: The ``--config`` file.
        data: Its keys and values.
        named: ``--name`` was given.

    Raises:
        ConfigError: naming the file and the option that takes it.
    """
    keys = set(data)
    stray = keys - _TOURNAMENT_KEYS
    only_rules = "name" not in keys and not named and keys <= _RULES_KEYS
    if only_rules or (stray and stray <= _RULES_KEYS):
        raise ConfigError(
            f"{path} is a rules file, not a tournament config: give it with --rules {path} "
            "(with --name NAME --participants ..., or a tournament config: uno-lab config list "
            "shows the shipped ones)"
        )


_BAD_INPUT: tuple[type[Exception], ...] = (*INPUT_ERRORS, FolderInUseError)
"""What a user's input causes (exit 2): :data:`uno_env.console.INPUT_ERRORS`, and another
run holding the folder."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0, 1 when the machine failed: a full
    disk, a worker killed again and again; 2 for bad input, 130 interrupted)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse printed the usage and the problem (or --help)
        return exit_.code if isinstance(exit_.code, int) else 2
    # A reader that goes away (`| head`) ends the run quietly with 141, not rich's exit 1.
    console = PipeConsole()
    try:
        config = config_from_args(args)
        run_tournament(
            config,
            fresh=args.fresh,
            progress=not args.no_progress,
            console=console,
            plots=not args.no_plots,
        )
        # The last line says where everything went (summary, leaderboard, plots, games).
        print(f"results in {TournamentFolder(config).path}/")
    except KeyboardInterrupt:
        print("interrupted; rerun to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): end quietly
        silence_stdout()  # what is still buffered must not fail again at exit
        return BROKEN_PIPE_EXIT
    except _BAD_INPUT as err:  # a config, a log, a path: the user's to fix
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:  # the machine (a full disk, a failed write), or a name too long
        if caused_by_input(err):
            print(f"error: {error_line(err)}", file=sys.stderr)
            return 2
        print(f"error: {_system_error_line(err)}", file=sys.stderr)
        return 1
    except WorkerLostError as err:  # the machine: a worker killed again and again
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 1
    return 0


def _system_error_line(err: OSError) -> str:
    """An operating-system error as one line naming the file (the runner's own failures
    carry the whole line as their ``strerror``)."""
    reason = err.strerror or ""
    if reason and err.filename is not None and str(err.filename) not in reason:
        return one_line(f"{err.filename}: {reason[:1].lower()}{reason[1:]}")
    if reason and str(err).startswith("["):
        return one_line(reason)
    return one_line(err)


if __name__ == "__main__":
    run_main(main, "python -m unolab.tournament")
