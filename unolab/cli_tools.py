"""The ``uno-lab`` commands that hand their words to another tool of the lab (``train``,
``tournament``, ``sweep``, ``serve``, ``bench``), ``config``, which lists and prints the shipped configs
those tools take by name, ``agents``, which lists and describes the agents they take
(:mod:`unolab.agent_cards`), and ``exploit``.

``uno-lab exploit AGENT``: estimate how exploitable an agent is (:mod:`unolab.train.exploit.run`).

Two approximate best responses play the frozen agent on fresh deals: a PPO exploiter
trained against it (``--steps``, from scratch or ``--init-from agent``) and the pimc search
with the agent as its rollout model (``--rollouts``). The command prints a table, writes
the result as JSON into the run folder (``--runs-dir``/``--name``) and to ``--out``.
A bad agent or budget is refused in one line before any work starts.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_env.console import path_argument
from uno_env.files import UnreadableFileError, check_writable_target, read_regular_text

__all__ = [
    "BENCHMARKS",
    "EXPLOIT_HELP",
    "TRAIN_HELP",
    "add_exploit_parser",
    "add_train_parser",
    "check_out_path",
    "cmd_agents",
    "cmd_bench",
    "cmd_config",
    "cmd_exploit",
    "cmd_serve",
    "cmd_sweep",
    "cmd_tournament",
    "cmd_train",
    "with_config",
]


BENCHMARKS = {
    "engine": "unolab.benchmarks.core",
    "envs": "unolab.benchmarks.envs",
    "tournament": "unolab.benchmarks.tournament",
    "search": "unolab.benchmarks.search",
    "inference": "unolab.benchmarks.inference",
    "llm": "unolab.benchmarks.llm",
    "training": "unolab.benchmarks.training",
    "web": "unolab.benchmarks.web",
}
"""``uno-lab bench``'s benchmarks: the module of each."""


def with_config(argv: Sequence[str], kind: str | None) -> list[str]:
    """``argv`` with its ``--config`` value resolved: a file, or a shipped config's file."""
    from unolab.shipped_configs import resolve_config

    out = list(argv)
    for i, word in enumerate(out):
        if word == "--config" and i + 1 < len(out):
            out[i + 1] = resolve_config(out[i + 1], kind)
            break
        if word.startswith("--config="):
            out[i] = "--config=" + resolve_config(word.partition("=")[2], kind)
            break
    return out


IMITATE = "imitate"
"""The word of ``uno-lab train imitate``: a warm start by imitation, not an RL algorithm."""

IMITATE_DEFAULT_CONFIG = "imitate/tiny"
"""The shipped config ``uno-lab train imitate`` uses when none is given."""


TRAIN_HELP = "train an agent or clone a bot (imitate) from a YAML config"
"""``uno-lab train``'s line in ``uno-lab --help`` (which imports no algorithm)."""


def _commands() -> dict[str, str]:
    """Each word ``uno-lab train`` takes, and the shipped config it trains without one: the
    algorithms of the registry, then ``imitate``."""
    # The registry imports torch and SB3: only once a training command runs.
    from unolab.train.algorithms import ALGORITHMS

    defaults = {name: algorithm.default_config for name, algorithm in ALGORITHMS.items()}
    return {**defaults, IMITATE: IMITATE_DEFAULT_CONFIG}


def cmd_train(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab train``: the algorithm named, or the one its config names."""
    from unolab.shipped_configs import shipped_configs

    commands = _commands()
    words = list(args.command_argv)
    algorithm, _, source = _split_train_argv(words)
    if source is not None and source[0] == "--config":
        words = with_config(words, algorithm if algorithm in commands else None)
    elif source is None and algorithm in commands and not args.help and "--config" not in words:
        # No config: the shipped default of the algorithm, so a first run needs no YAML
        # (--config without its value is no config left out: its parser says so, alone).
        default = commands[algorithm]
        print(
            f"uno-lab train {algorithm}: no --config given, using the shipped config "
            f"{default} (uno-lab config show {default} prints it)",
            file=sys.stderr,
        )
        words = [*words, "--config", str(shipped_configs().get(default, default))]
    algorithm, argv, source = _split_train_argv(words)
    parser: argparse.ArgumentParser = args.subparser
    if algorithm is None:
        if source is None:
            if args.help:
                parser.print_help()
                parser.exit()
            parser.error(
                f"choose an algorithm: uno-lab train {'|'.join(commands)} --config FILE "
                "(or give --config FILE alone, and the config's algorithm is used)"
            )
        algorithm = _algorithm_of(*source, commands)
    elif algorithm not in commands:
        parser.error(f"unknown algorithm {algorithm!r}: choose one of {', '.join(commands)}")
    if args.help:
        argv = [*argv, "--help"]
    if algorithm == IMITATE:
        from unolab.train.imitate import run as imitate

        imitate.main(argv, prog="uno-lab train imitate")
        return 0
    # The training command parses its own options; --help goes to it and shows the real ones.
    from unolab.train import run_cli

    run_cli.main(algorithm, argv, prog=f"uno-lab train {algorithm}")
    return 0


_TRAIN_VALUE_OPTIONS = ("--config", "--set", "--resume")
"""The options of the training commands that take a value (the next word)."""
_TRAIN_SOURCES = ("--config", "--resume")
"""The options that say where a run's config is."""


def _split_train_argv(
    argv: Sequence[str],
) -> tuple[str | None, list[str], tuple[str, str] | None]:
    """``uno-lab train``'s words, read once.

    Returns:
        The algorithm (the one positional word, or None); the options for the training
        command, without ``-h``/``--help`` (``args.help`` has it); and the first
        ``(option, value)`` of ``--config`` or ``--resume`` (either spelling), or None
        (``--resume`` without a folder: ``.``, the run in the current folder).
    """
    words = [word for word in argv if word not in ("-h", "--help")]
    algorithm: str | None = None
    source: tuple[str, str] | None = None
    rest: list[str] = []
    after: str | None = None  # the option whose value is the next word
    for word in words:
        if after == "--resume" and word.startswith("-"):
            # --resume without a folder: the run in the current folder (an option follows)
            source, after = source or (after, "."), None
        if after is not None:
            if after in _TRAIN_SOURCES and source is None:
                source = (after, word)
            after = None
        elif word in _TRAIN_VALUE_OPTIONS:
            after = word
        elif word.partition("=")[0] in _TRAIN_SOURCES and "=" in word and source is None:
            source = (word.partition("=")[0], word.partition("=")[2])
        elif not word.startswith("-") and algorithm is None:
            algorithm = word
            continue
        rest.append(word)
    if after == "--resume" and source is None:  # --resume last: the current folder's run
        source = (after, ".")
    return algorithm, rest, source


def _algorithm_of(option: str, value: str, commands: dict[str, str]) -> str:
    """The algorithm a ``uno-lab train`` command line leaves out, read from its config.

    A training config names it (``algorithm: ppo`` or ``dqn``); an imitation config has
    ``teachers``; ``--resume RUN_DIR`` reads the run's own ``config.yaml``.
    """
    from uno_env.config_values import ConfigError
    from uno_env.configuration import load_yaml_mapping
    from unolab.train.run_cli import resumed_config_path

    path = resumed_config_path(Path(value)) if option == "--resume" else Path(value)
    mapping = load_yaml_mapping(path)  # one line naming the file when it cannot be read
    named = mapping.get("algorithm")
    algorithms = [name for name in commands if name != IMITATE]
    if named in algorithms:
        return str(named)
    if named is None and "teachers" in mapping:
        return IMITATE
    if named is not None:
        raise ConfigError(
            f"{path}: algorithm: {named!r} is not one of {', '.join(algorithms)} (an imitation "
            "config has teachers and no algorithm)"
        )
    raise ConfigError(
        f"{path} names no algorithm (a training config has algorithm: "
        f"{' or '.join(algorithms)}, an imitation config teachers): run uno-lab train "
        f"{'|'.join(commands)} --config FILE"
    )


def add_train_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``uno-lab train``, naming the algorithms of the registry (this imports it)."""
    words = "|".join(_commands())
    train = sub.add_parser(
        "train",
        help=TRAIN_HELP,
        description=f"Train an agent: uno-lab train [{words}] --config FILE. Left out, the "
        "algorithm is the config's (algorithm: NAME; teachers for imitate). uno-lab train "
        "ppo --help lists the options.",
        add_help=False,
    )
    # No choices here: ``uno-lab train --config FILE`` leaves the algorithm out, and argparse
    # would take FILE for it. cmd_train reads the words itself.
    train.add_argument("algorithm", nargs="?", metavar=f"{{{words.replace('|', ',')}}}")
    train.add_argument(
        "-h", "--help", action="store_true", help="show this help, or the algorithm's options"
    )
    train.set_defaults(func=cmd_train, passthrough=True, subparser=train)


def cmd_tournament(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab tournament`` through :mod:`unolab.tournament.cli`."""
    # unolab.cli.build_parser() checked the options with unolab.tournament.cli's own parser;
    # its main() runs them, with its own one-line errors (exit 2) and Ctrl-C (130).
    from unolab.tournament.cli import main as tournament_main

    return tournament_main(with_config(args.command_argv, "tournament"))


def cmd_sweep(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab sweep`` through :mod:`unolab.train.sweep.run`."""
    # unolab.train.sweep.run parses its own options (--help shows them) and says how to
    # install Ray.
    from unolab.train.sweep import run as sweep

    return sweep.main(with_config(args.command_argv, "sweep"), prog="uno-lab sweep")


def cmd_config(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab config list|show``: the shipped configs, or one of them."""
    from unolab.shipped_configs import config_description, resolve_config, shipped_configs

    if args.action == "list":
        configs = shipped_configs()
        width = max((len(name) for name in configs), default=0)
        for name, path in configs.items():
            print(f"{name:<{width}}  {config_description(path)}")
        print("\n(uno-lab config show NAME prints one; --config NAME uses it)")
        return 0
    if args.name is None:
        raise ValueError(
            "give the config to show: uno-lab config show NAME (see uno-lab config list)"
        )
    path = Path(resolve_config(args.name, None, quiet=True))
    if not path.is_file():
        raise ValueError(
            f"unknown config {args.name!r}: uno-lab config list shows the shipped ones"
        )
    from uno_env.files import read_regular_text

    print(read_regular_text(path, 1 << 20, "config"), end="")
    return 0


def cmd_serve(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab serve`` (the browser table) through :mod:`unolab.web.server`."""
    # The web extra first: without it, one line naming the extra before anything is checked.
    for module in ("fastapi", "uvicorn"):
        importlib.import_module(module)
    # unolab.web.server parses its own options (--help shows them).
    from unolab.web import server

    return server.main(args.command_argv, prog="uno-lab serve")


def cmd_data(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab data export`` (human games as imitation data): :mod:`unolab.human_games`."""
    from unolab.human_games import main

    return main(args.command_argv, prog="uno-lab data")


def cmd_bench(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab bench``: one benchmark, or all of them with the same options."""
    if args.what is None and args.help:
        args.subparser.print_help()
        args.subparser.exit()
    chosen = list(BENCHMARKS) if args.what == "all" else [args.what or "engine"]
    modules = {what: importlib.import_module(BENCHMARKS[what]) for what in chosen}
    if args.help:
        for what, module in modules.items():
            print(module.build_parser(f"uno-lab bench {what}").format_help())
        args.subparser.exit()
    # Check the options against every chosen benchmark before any of them spends minutes.
    for what, module in modules.items():
        module.build_parser(f"uno-lab bench {what}").parse_args(rest)
    for what, module in modules.items():
        print(f"== {what} benchmark ==")
        module.main(rest, prog=f"uno-lab bench {what}")
    return 0


def cmd_agents(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab agents [NAME]``: every agent a user can name, or one agent's card."""
    from unolab.agent_cards import agent_card, agent_listing, print_markdown

    if args.name is None:
        print(agent_listing(), end="")
        return 0
    print_markdown(agent_card(args.name))
    return 0


EXPLOIT_HELP = "estimate an agent's exploitability with a trained and a search best response"
"""The command's line in ``uno-lab --help``."""


def add_exploit_parser(sub: Any) -> None:
    """Add ``exploit`` to ``uno-lab``'s subcommands (``sub``: argparse's subparsers)."""
    from unolab.train.exploit.config import ExploitConfig

    d = ExploitConfig(agent="mixbot")
    parser = sub.add_parser(
        "exploit",
        help=EXPLOIT_HELP,
        description="Estimate how much a best response wins against a frozen agent: PPO "
        "trained against it, and the pimc search with the agent as every seat's rollout "
        "model; each plays fresh deals against it (docs/exploitability.md). The defaults "
        "are a quick look: 'uno-lab exploit ppo_official_2p --init-from agent' took about 4 "
        "minutes on a 2-core machine shared with other jobs (under 2 minutes of CPU): about "
        "a third training the PPO exploiter and playing its fresh hands (time grows with "
        "--steps, --hands and --curve-points x --curve-hands), the rest the search (time "
        "grows with --search-hands x --rollouts: about 3 s a hand at 64 rollouts there). "
        "The published estimates used larger budgets: --steps 300000 --hands 10000 "
        "--curve-hands 1000 --search-hands 200, about 15 minutes per agent.",
    )
    parser.add_argument(
        "agent",
        metavar="AGENT",
        help="a bot name, a Python class (my_bots.py:MyBot), a shipped agent or an exported "
        "agent's path",
    )
    parser.add_argument(
        "--method",
        choices=("both", "ppo", "search"),
        default="both",
        help="which best response (default: both)",
    )
    parser.add_argument("--rules", default=d.rules, help="rules preset or YAML file")
    parser.add_argument(
        "--players", type=int, help="seats (default: the agent's own table; 2 for a bot)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=d.steps,
        help=f"PPO exploiter's steps, rounded up to whole rollouts (default {d.steps:,})",
    )
    parser.add_argument(
        "--init-from",
        choices=("scratch", "agent"),
        default=d.init_from,
        help="start the PPO exploiter from scratch or from the agent's own weights",
    )
    parser.add_argument(
        "--hands",
        type=int,
        default=d.hands,
        help=f"fresh hands of the trained exploiter (default {d.hands:,})",
    )
    parser.add_argument(
        "--curve-points", type=int, default=d.curve_points, help="evaluations along training"
    )
    parser.add_argument(
        "--curve-hands", type=int, default=d.curve_hands, help="hands of each such evaluation"
    )
    parser.add_argument("--num-envs", type=int, default=d.num_envs, help="PPO's parallel games")
    parser.add_argument(
        "--rollouts", type=int, default=d.rollouts, help="search exploiter's rollouts per action"
    )
    parser.add_argument(
        "--search-hands",
        type=int,
        default=d.search_hands,
        help=f"fresh hands of the search, its longest part (default {d.search_hands:,})",
    )
    parser.add_argument("--seed", type=int, default=d.seed, help="training and search seed")
    parser.add_argument(
        "--eval-seed", type=int, help="seed of the fresh hands (default: seed + 1,000,003)"
    )
    parser.add_argument("--runs-dir", default=d.runs_dir, help="where the run folder goes")
    parser.add_argument("--name", help="the run folder's name (default: exploit_AGENT_Np)")
    parser.add_argument(
        "--out", type=path_argument, metavar="FILE", help="also write the result here"
    )
    parser.add_argument("--overwrite", action="store_true", help="start an existing run over")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=cmd_exploit, passthrough=False)


def check_out_path(out: Path | None) -> None:
    """``--out`` must be a file that can be written, checked before minutes of work: not a
    folder, in a folder that exists, not a device, pipe or link, and not a file of another
    kind (an agent's metadata or weights, a rules file: only an earlier exploit result is
    replaced).

    Raises:
        ValueError: or ``OSError`` (``FileExistsError``...), one line naming ``--out``.
    """
    if out is None:
        return
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a folder; give a file name")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"--out {out}: its folder {out.parent} does not exist")
    check_writable_target(out, "--out")  # a device, a pipe or a symlink there stays as it is
    if out.exists():
        problem = _not_a_result(out)
        if problem:
            raise FileExistsError(
                f"--out {str(out)!r} {problem}; it is not replaced: give a new file, or move "
                "that one away"
            )


def _not_a_result(path: Path) -> str:
    """Why the file at ``path`` is not an exploit result (``""`` when it is one): ``--out``
    replaces only its own kind of file (an agent's metadata or weights, a rules file or a
    tournament's summary there stays as it is)."""
    from unolab.train.exploit.run import MAX_RESULT_BYTES, RESULT_KEYS

    try:
        record = json.loads(read_regular_text(path, MAX_RESULT_BYTES, "--out"))
    except UnreadableFileError:  # too large, not text (weights): not a result either way
        return "is not an exploit result (not a JSON text)"
    except (ValueError, RecursionError):
        return "is not an exploit result (not JSON)"
    if not isinstance(record, dict) or not record.keys() >= RESULT_KEYS:
        keys = ", ".join(repr(key) for key in sorted(RESULT_KEYS))
        return f"is not an exploit result (no {keys})"
    return ""


def cmd_exploit(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab exploit``: check everything, estimate, print the table."""
    from unolab.train.exploit.config import METHODS, ExploitConfig
    from unolab.train.exploit.run import RESULT_FILE, exploit, format_table

    config = ExploitConfig(
        agent=args.agent,
        methods=METHODS if args.method == "both" else (args.method,),
        rules=args.rules,
        num_players=args.players,
        steps=args.steps,
        init_from=args.init_from,
        num_envs=args.num_envs,
        hands=args.hands,
        curve_points=args.curve_points,
        curve_hands=args.curve_hands,
        rollouts=args.rollouts,
        search_hands=args.search_hands,
        seed=args.seed,
        eval_seed=args.eval_seed,
        runs_dir=args.runs_dir,
        name=args.name,
    )
    check_out_path(args.out)
    result = exploit(config, out=args.out, overwrite=args.overwrite, progress=not args.no_progress)
    print(format_table(result))
    also = f"; also written to {args.out}" if args.out is not None else ""
    print(f"results in {Path(result['run_dir'])}/ ({RESULT_FILE}){also}")
    return 0
