"""``uno-lab``: one command for the lab. Run ``uno-lab --help`` or ``uno-lab <command> --help``.

Commands: ``train ppo|dqn|imitate``, ``tournament``, ``sweep``, ``play``, ``serve``, ``bench``,
``rules``, ``replay``.

Every error a user can cause ends in one line on stderr, never a traceback: bad arguments are
argparse's (exit 2), a domain error raised below :func:`main` (a ``ValueError`` such as
``ConfigError``, a missing or unreadable file) is ``uno-lab <command>: error: <message>``
(exit 2), an error of the machine (a full disk, a failed write: any other ``OSError``) is
one line too (exit 1), Ctrl-C exits 130 and a closed pipe (``uno-lab rules | head``) ends
quietly (141).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from uno_env.files import FolderInUseError
from uno_env.rules import DEFAULT_NUM_PLAYERS
from unolab import __version__
from unolab.extras import missing_extra_message

__all__ = ["DOMAIN_ERRORS", "build_parser", "main"]

DOMAIN_ERRORS: tuple[type[Exception], ...] = (
    ValueError,  # ConfigError, IllegalActionError and the other checks of the lab's inputs
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
    PermissionError,
    FolderInUseError,  # another run holds the folder: the message names its pid
)
"""What a user's input can cause below :func:`main`: one line ``error: ...``, exit 2."""

_ALGORITHMS = ("ppo", "dqn", "imitate")
_BENCHMARKS = {
    "engine": "unolab.benchmarks.core",
    "envs": "unolab.benchmarks.envs",
    "tournament": "unolab.benchmarks.tournament",
    "search": "unolab.benchmarks.search",
    "inference": "unolab.benchmarks.inference",
}


def _with_config(argv: Sequence[str], kind: str | None) -> list[str]:
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


def _cmd_train(args: argparse.Namespace, rest: list[str]) -> int:
    from unolab.shipped_configs import DEFAULT_TRAIN_CONFIGS, shipped_configs

    words = list(args.command_argv)
    algorithm, _, source = _split_train_argv(words)
    if source is not None and source[0] == "--config":
        words = _with_config(words, algorithm if algorithm in _ALGORITHMS else None)
    elif source is None and algorithm in _ALGORITHMS and not args.help:
        # No config: the shipped default of the algorithm, so a first run needs no YAML.
        default = DEFAULT_TRAIN_CONFIGS[algorithm]
        print(
            f"uno-lab train {algorithm}: no --config given, using the shipped config "
            f"{default} (uno-lab config show {default} prints it)",
            file=sys.stderr,
        )
        words = [*words, "--config", str(shipped_configs()[default])]
    algorithm, argv, source = _split_train_argv(words)
    parser: argparse.ArgumentParser = args.subparser
    if algorithm is None:
        if source is None:
            if args.help:
                parser.print_help()
                parser.exit()
            parser.error(
                "choose an algorithm: uno-lab train ppo|dqn|imitate --config FILE "
                "(or give --config FILE alone, and the config's algorithm is used)"
            )
        algorithm = _algorithm_of(*source)
    elif algorithm not in _ALGORITHMS:
        parser.error(f"unknown algorithm {algorithm!r}: choose one of {', '.join(_ALGORITHMS)}")
    if args.help:
        argv = [*argv, "--help"]
    if algorithm == "imitate":  # a warm start by imitation, not an RL algorithm
        from unolab.train import imitate

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
        ``(option, value)`` of ``--config`` or ``--resume`` (either spelling), or None.
    """
    words = [word for word in argv if word not in ("-h", "--help")]
    algorithm: str | None = None
    source: tuple[str, str] | None = None
    rest: list[str] = []
    after: str | None = None  # the option whose value is the next word
    for word in words:
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
    return algorithm, rest, source


def _algorithm_of(option: str, value: str) -> str:
    """The algorithm a ``uno-lab train`` command line leaves out, read from its config.

    A training config names it (``algorithm: ppo`` or ``dqn``); an imitation config has
    ``teachers``; ``--resume RUN_DIR`` reads the run's own ``config.yaml``.
    """
    from uno_env.configuration import ConfigError, load_yaml_mapping
    from unolab.train.run_cli import resumed_config_path

    path = resumed_config_path(Path(value)) if option == "--resume" else Path(value)
    mapping = load_yaml_mapping(path)  # one line naming the file when it cannot be read
    named = mapping.get("algorithm")
    if named in _ALGORITHMS and named != "imitate":
        return str(named)
    if named is None and "teachers" in mapping:
        return "imitate"
    if named is not None:
        raise ConfigError(
            f"{path}: algorithm: {named!r} is not one of ppo, dqn (an imitation config has "
            "teachers and no algorithm)"
        )
    raise ConfigError(
        f"{path} names no algorithm (a training config has algorithm: ppo or dqn, an "
        "imitation config teachers): run uno-lab train ppo|dqn|imitate --config FILE"
    )


def _cmd_tournament(args: argparse.Namespace, rest: list[str]) -> int:
    # build_parser() checked the options with unolab.tournament.cli's own parser; its main() runs
    # them, with its own one-line errors (exit 2) and Ctrl-C (130).
    from unolab.tournament.cli import main as tournament_main

    return tournament_main(_with_config(args.command_argv, "tournament"))


def _cmd_sweep(args: argparse.Namespace, rest: list[str]) -> int:
    # unolab.train.sweep parses its own options (--help shows them) and says how to install Ray.
    from unolab.train import sweep

    return sweep.main(_with_config(args.command_argv, "sweep"), prog="uno-lab sweep")


def _cmd_config(args: argparse.Namespace, rest: list[str]) -> int:
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


def _cmd_serve(args: argparse.Namespace, rest: list[str]) -> int:
    # The web extra first: without it, one line naming the extra before anything is checked.
    for module in ("fastapi", "uvicorn"):
        importlib.import_module(module)
    # unolab.web.server parses its own options (--help shows them).
    from unolab.web import server

    return server.main(args.command_argv, prog="uno-lab serve")


def _cmd_bench(args: argparse.Namespace, rest: list[str]) -> int:
    if args.what is None and args.help:
        args.subparser.print_help()
        args.subparser.exit()
    chosen = list(_BENCHMARKS) if args.what == "all" else [args.what or "engine"]
    modules = {what: importlib.import_module(_BENCHMARKS[what]) for what in chosen}
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


def _cmd_rules(args: argparse.Namespace, rest: list[str]) -> int:
    from uno_env.rules import PRESETS, Rules, load_rules, rules_table

    if args.preset:
        rules = load_rules(args.preset)
        default = Rules()
        print(f"Preset {args.preset!r} (switches that differ from the official rules):")
        for name, value in rules.to_dict().items():
            if value != getattr(default, name):
                print(f"  {name}: {value}")
        return 0
    print("Presets: " + ", ".join(PRESETS))
    print("(uno-lab rules --preset NAME shows the switches a preset changes)\n")
    print(rules_table())
    return 0


def _cmd_play(args: argparse.Namespace, rest: list[str]) -> int:
    from uno_env.cards import MAX_PLAYERS
    from uno_env.rules import load_rules
    from unolab.agents import resolve_policy
    from unolab.agents.resolve import is_agent_file
    from unolab.agents.shipped import shipped_agent_path
    from unolab.play import agent_mismatch_hint, play_session, random_seed
    from unolab.records import check_record_path

    if not 2 <= args.players <= MAX_PLAYERS:
        raise ValueError(f"--players must be 2..{MAX_PLAYERS}, got {args.players}")
    rules = load_rules(args.rules, num_players=args.players)
    if not 0 <= args.seat < rules.num_players:
        raise ValueError(
            f"--seat must be a seat of the {rules.num_players}-player table, "
            f"0..{rules.num_players - 1}; got {args.seat}"
        )
    if args.record is not None:
        check_record_path(args.record)  # refuse a bad path before any card is dealt
    opponents = list(args.opponents)
    if len(opponents) == 1:
        opponents *= rules.num_players - 1
    if len(opponents) != rules.num_players - 1:
        raise ValueError(
            f"--opponents: {rules.num_players} players need 1 or {rules.num_players - 1} "
            f"opponents, got {len(opponents)}: {opponents}"
        )
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a whole number >= 0, got {args.seed}")
    seed = random_seed() if args.seed is None else args.seed
    policies = []
    for i, spec in enumerate(opponents):
        try:
            policies.append(resolve_policy(spec, rules, seed=seed + i))
        except ValueError as err:
            if not is_agent_file(spec) and shipped_agent_path(spec) is None:
                raise
            from unolab.agents.learned import CheckpointMismatchError

            if not isinstance(err, CheckpointMismatchError):
                raise
            raise ValueError(f"{err}. {agent_mismatch_hint(spec, rules)}") from None
    names = [Path(spec).stem if is_agent_file(spec) else spec for spec in opponents]
    # q, Ctrl-D and a closed input end the session normally (exit 0); Ctrl-C is raised again
    # once the record is written, and main() turns it into exit 130.
    play_session(
        rules,
        policies,
        human_seat=args.seat,
        seed=seed,
        colour=not args.no_colour and sys.stdout.isatty(),
        record=args.record,
        opponent_names=names,
    )
    return 0


def _cmd_replay(args: argparse.Namespace, rest: list[str]) -> int:
    from unolab.play import replay

    replay(args.file, show_hands=args.show_hands)
    # Flush here, inside main(): a reader that left (``| head``) raises BrokenPipeError now,
    # which main() ends quietly, instead of at interpreter exit with a traceback.
    sys.stdout.flush()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``uno-lab``."""
    parser = argparse.ArgumentParser(
        prog="uno-lab",
        description="uno-lab: train, rank and play UNO agents on a vectorised engine.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = sub.add_parser(
        "train",
        help="train an agent (ppo or dqn) or clone a bot (imitate) from a YAML config",
        description="Train an agent: uno-lab train [ppo|dqn|imitate] --config FILE. Left "
        "out, the algorithm is the config's (algorithm: ppo or dqn; teachers for imitate). "
        "The options are those of python -m unolab.train.<algorithm>: uno-lab train ppo --help "
        "lists them.",
        add_help=False,
    )
    # No choices here: ``uno-lab train --config FILE`` leaves the algorithm out, and argparse
    # would take FILE for it. _cmd_train reads the words itself (_split_train_argv).
    train.add_argument("algorithm", nargs="?", metavar="{ppo,dqn,imitate}")
    train.add_argument(
        "-h", "--help", action="store_true", help="show this help, or the algorithm's options"
    )
    train.set_defaults(func=_cmd_train, passthrough=True, subparser=train)

    # Built from unolab.tournament.cli's own parser, so --help shows its real options.
    from unolab.tournament.cli import build_parser as tournament_parser

    real_tournament = tournament_parser()
    tournament = sub.add_parser(
        "tournament",
        parents=[real_tournament],
        add_help=False,
        help="run a tournament (see configs/tournament/)",
        description=real_tournament.description,
        epilog=real_tournament.epilog,
    )
    tournament.set_defaults(func=_cmd_tournament, passthrough=False)

    config = sub.add_parser(
        "config",
        help="list the shipped configs, or print one to copy",
        description="The configs that ship with uno-lab. Any --config takes their names "
        "(uno-lab train ppo --config quick, uno-lab tournament --config bots_round_robin).",
    )
    config.add_argument("action", choices=("list", "show"), help="list them, or show one")
    config.add_argument("name", nargs="?", help="the config to show (e.g. ppo/quick)")
    config.set_defaults(func=_cmd_config, passthrough=False)

    sweep = sub.add_parser(
        "sweep",
        help="tune training settings with Ray Tune (see configs/sweep/)",
        description="Run a hyper-parameter sweep on Ray Tune: uno-lab sweep --help lists the options.",
        add_help=False,
    )
    sweep.set_defaults(func=_cmd_sweep, passthrough=True)

    play = sub.add_parser(
        "play",
        help="play UNO against agents in the terminal",
        description="Play a match to the rules' target score against bots or exported agents. "
        "Type 'help' at the prompt for the notation; 'q' or Ctrl-D stops (--record still saves).",
    )
    play.add_argument("--rules", default="official", help="preset name or YAML file")
    play.add_argument(
        "--players", type=int, default=DEFAULT_NUM_PLAYERS, help="seats at the table (2-10)"
    )
    play.add_argument(
        "--opponents",
        nargs="+",
        default=["mixbot"],
        metavar="AGENT",
        help="bot names or exported agent paths: one for every seat, or one per seat",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1")
    play.add_argument(
        "--seed", type=int, help="the deal's seed (default: a random one, printed at the start)"
    )
    play.add_argument("--no-colour", action="store_true", help="plain text")
    play.add_argument(
        "--record", type=Path, metavar="FILE", help="save the game for uno-lab replay (JSON)"
    )
    play.set_defaults(func=_cmd_play, passthrough=False)

    serve = sub.add_parser(
        "serve",
        help="play and replay UNO in the browser",
        description="Serve the browser table: uno-lab serve --help lists the options.",
        add_help=False,
    )
    serve.set_defaults(func=_cmd_serve, passthrough=True)

    bench = sub.add_parser(
        "bench",
        help="run the benchmarks (engine, envs, tournament, search, inference)",
        description="Run a benchmark (default: engine). Its options follow its name: "
        "uno-lab bench engine --help lists them. With all, the options must suit each one.",
        add_help=False,
    )
    bench.add_argument("what", nargs="?", choices=[*_BENCHMARKS, "all"])
    bench.add_argument(
        "-h", "--help", action="store_true", help="show this help, or the benchmark's options"
    )
    bench.set_defaults(func=_cmd_bench, passthrough=True, subparser=bench)

    rules = sub.add_parser("rules", help="print the rules switches and presets")
    rules.add_argument("--preset", help="show one preset's switches")
    rules.set_defaults(func=_cmd_rules, passthrough=False)

    replay = sub.add_parser(
        "replay",
        help="print a recorded game move by move",
        description="Print a game recorded with uno-lab play --record FILE, move by move in "
        "plain words. The file is checked first: a bad one gives one error naming it.",
    )
    replay.add_argument("file", type=Path, help="a game recorded with uno-lab play --record")
    replay.add_argument(
        "--show-hands", action="store_true", help="also show every hand before each move"
    )
    replay.set_defaults(func=_cmd_replay, passthrough=False)
    return parser


def _one_line(err: BaseException) -> str:
    """The error's message on one line (its type when it has none)."""
    text = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
    return text or type(err).__name__


def _system_error_line(err: OSError) -> str:
    """An operating-system error (a full disk, a failed write) as one line naming the file."""
    if err.strerror and err.filename is not None and str(err.filename) not in err.strerror:
        return f"{err.filename}: {err.strerror[:1].lower()}{err.strerror[1:]}"
    if err.strerror and not str(err).startswith("["):
        return _one_line(err)
    return (err.strerror or _one_line(err)).rstrip(".")


def _flush_stdout() -> None:
    """Flush stdout; a failure names the standard output (there is no file name to give)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OSError(err.errno, err.strerror or str(err), "the standard output") from None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the exit's flush does not hit the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (captured, or already closed)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``uno-lab``; return the exit code.

    Bad arguments exit 2 through argparse (``SystemExit``, with ``--help``'s 0). Any error in
    :data:`DOMAIN_ERRORS` raised by a command is printed as one line,
    ``uno-lab <command>: error: <message>``, and returns 2; Ctrl-C returns 130, a closed
    stdout pipe 141 with nothing printed. No traceback reaches the user.
    """
    command = "uno-lab"
    try:
        parser = build_parser()
        argv = list(sys.argv[1:] if argv is None else argv)
        if not argv:  # a bare ``uno-lab``: what it can do, not an error
            parser.print_help()
            return 0
        args, rest = parser.parse_known_args(argv)
        command = f"uno-lab {args.command}"
        args.command_argv = argv[argv.index(args.command) + 1 :]  # what follows the command
        if rest and not args.passthrough:
            parser.error(f"unrecognised arguments: {' '.join(rest)}")
        code = int(args.func(args, rest))
        # Flush here, not at exit: a stdout that cannot take the output (a full disk,
        # /dev/full) is then reported as one line instead of an interpreter warning.
        _flush_stdout()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except ModuleNotFoundError as err:  # an optional extra that is not installed
        print(f"{command}: error: {missing_extra_message(err)}", file=sys.stderr)
        return 2
    except DOMAIN_ERRORS as err:
        print(f"{command}: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        # The machine, not the input: a full disk, a failed write, a lost device.
        try:
            sys.stdout.flush()
        except (OSError, ValueError):  # stdout itself failed: the exit's flush would too
            _quiet_stdout()
            if err.filename is None:
                err = OSError(err.errno, err.strerror or str(err), "the standard output")
        print(f"{command}: error: {_system_error_line(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
