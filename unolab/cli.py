"""``uno-lab``: one command for the lab. Run ``uno-lab --help`` or ``uno-lab <command> --help``.

Commands: ``train ALGORITHM|imitate``, ``tournament``, ``sweep``, ``exploit``, ``play``,
``serve``, ``data``, ``bench``, ``rules``, ``agents``, ``replay``.

Every error a user can cause ends in one line on stderr, never a traceback: bad arguments are
argparse's (exit 2), a domain error raised below :func:`main` (a ``ValueError`` such as
``ConfigError``, a missing or unreadable file) is ``uno-lab <command>: error: <message>``
(exit 2), an error of the machine (a full disk, a failed write: any other ``OSError``) is
one line too (exit 1), Ctrl-C exits 130 and a closed pipe (``uno-lab rules | head``) ends
quietly (141). A command that reaches an optional part that is not installed (the browser
table's ``web``, ``ray``, the benchmarks' ``bench``, the ``notebooks``) names the extra and
the pip command that installs it (:func:`missing_extra_message`). The terminal game's
commands are here too: ``play`` a match, ``replay`` a record, print the ``rules``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from uno_env.console import (
    BROKEN_PIPE_EXIT,
    CLOSED_STREAM_EXIT,
    INPUT_ERRORS,
    INTERRUPTED_EXIT,
    STDOUT_NAME,
    caused_by_input,
    error_line,
    missing_extra_message,
    named_stdout,
    one_line,
    path_argument,
    silence_stdout,
    standard_streams_closed,
    system_error_line,
)
from unolab import __version__
from unolab.cli_tools import (
    BENCHMARKS,
    EXPLOIT_HELP,
    TRAIN_HELP,
    add_exploit_parser,
    add_train_parser,
    cmd_agents,
    cmd_bench,
    cmd_config,
    cmd_data,
    cmd_serve,
    cmd_sweep,
    cmd_tournament,
)

__all__ = [
    "build_parser",
    "cmd_play",
    "cmd_replay",
    "cmd_rules",
    "main",
]


WARM_COMMANDS = frozenset({"tournament", "train", "exploit", "sweep", "bench"})
"""The commands that play games: before them, the engine is compiled if this install has
not done so yet, with a line that says so and a progress display (:mod:`unolab.warmup`).
``serve`` compiles behind its page instead (:mod:`unolab.web.warming`), and ``play`` once
it knows its opponents (only the searches need their part)."""


def _compile_errors() -> tuple[type[Exception], ...]:
    warmup = sys.modules.get("unolab.warmup")  # if it was never loaded, nothing compiled
    return (warmup.CompileFailed,) if warmup is not None else ()


def _domain_errors() -> tuple[type[Exception], ...]:
    """What a user's input can cause below :func:`main` (:data:`uno_env.console.INPUT_ERRORS`,
    and ``FolderInUseError``, another run holding the folder, where that module was loaded:
    it is not imported here, so that ``uno-lab --help`` loads nothing of the engine)."""
    locks = sys.modules.get("uno_env.files")  # if it was never loaded, it raised nothing
    return INPUT_ERRORS + ((locks.FolderInUseError,) if locks is not None else ())


def _add_handover(
    sub: argparse._SubParsersAction,
    name: str,
    help_line: str,
    what: str,
    func: Callable[[argparse.Namespace, list[str]], int],
) -> None:
    """A command whose words go to the tool's own parser (``passthrough``; its ``--help``)."""
    description = f"{what}: uno-lab {name} --help lists the options."
    command = sub.add_parser(name, help=help_line, description=description, add_help=False)
    command.set_defaults(func=func, passthrough=True)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``uno-lab``.

    Args:
        command: The command about to run, if known. Only its parser is built in full
            where that means importing the lab (the tournament's options come from its own
            parser); the others get their help line, which keeps ``uno-lab --help`` fast.
    """
    parser = argparse.ArgumentParser(
        prog="uno-lab",
        description="uno-lab: train, rank and play UNO agents on a vectorised engine.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    if command == "train":  # the algorithms' names come from the registry, which imports torch
        add_train_parser(sub)
    else:
        sub.add_parser("train", help=TRAIN_HELP, add_help=False)

    tournament_help = "run a tournament (shipped configs: uno-lab config list)"
    if command == "tournament":
        # Built from unolab.tournament.cli's own parser, so --help shows its real options.
        from unolab.tournament.cli import build_parser as tournament_parser

        real_tournament = tournament_parser()
        tournament = sub.add_parser(
            "tournament",
            parents=[real_tournament],
            add_help=False,
            help=tournament_help,
            description=real_tournament.description,
            epilog=real_tournament.epilog,
        )
        tournament.set_defaults(func=cmd_tournament, passthrough=False)
    else:  # only its line in uno-lab --help: the tournament's parser imports the lab
        sub.add_parser("tournament", help=tournament_help, add_help=False)

    config = sub.add_parser(
        "config",
        help="list the shipped configs, or print one to copy",
        description="The configs that ship with uno-lab. Any --config takes their names "
        "(uno-lab train ppo --config quick, uno-lab tournament --config bots_round_robin).",
    )
    config.add_argument("action", choices=("list", "show"), help="list them, or show one")
    config.add_argument("name", nargs="?", help="the config to show (e.g. ppo/quick)")
    config.set_defaults(func=cmd_config, passthrough=False)

    _add_handover(
        sub,
        "sweep",
        "tune training settings with Ray Tune (shipped configs: uno-lab config list)",
        "Run a hyper-parameter sweep on Ray Tune",
        cmd_sweep,
    )

    if command == "exploit":  # its parser's defaults come from the lab's config classes
        add_exploit_parser(sub)
    else:
        sub.add_parser("exploit", help=EXPLOIT_HELP, add_help=False)

    play = sub.add_parser(
        "play",
        help="play UNO against agents in the terminal",
        description="Play a match to the rules' target score against bots or exported agents. "
        "Type 'help' at the prompt for the notation; 'q' or Ctrl-D stops (--record still saves).",
    )
    play.add_argument("--rules", default="official", help="preset name or YAML file")
    play.add_argument("--players", type=int, help="seats at the table, 2-10 (default: 2)")
    play.add_argument(
        "--opponents",
        nargs="+",
        default=["mixbot"],
        metavar="AGENT",
        help="bot names, Python classes (my_bots.py:MyBot) or exported agent paths: one for "
        "every seat, or one per seat",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1")
    play.add_argument(
        "--seed", type=int, help="the deal's seed (default: a random one, printed at the start)"
    )
    play.add_argument("--no-colour", action="store_true", help="plain text")
    play.add_argument(
        "--record",
        type=path_argument,
        metavar="FILE",
        help="save the game for uno-lab replay (JSON)",
    )
    play.set_defaults(func=cmd_play, passthrough=False)

    _add_handover(
        sub, "serve", "play and replay UNO in the browser", "Serve the browser table", cmd_serve
    )
    _add_handover(sub, "data", "export human games as imitation data", "Human games", cmd_data)

    bench = sub.add_parser(
        "bench",
        help="run the benchmarks (engine, envs, tournament, search, inference, llm, training)",
        description="Run a benchmark (default: engine). Its options follow its name: "
        "uno-lab bench engine --help lists them. With all, the options must suit each one.",
        add_help=False,
    )
    bench.add_argument("what", nargs="?", choices=[*BENCHMARKS, "all"])
    bench.add_argument(
        "-h", "--help", action="store_true", help="show this help, or the benchmark's options"
    )
    bench.set_defaults(func=cmd_bench, passthrough=True, subparser=bench)

    agents = sub.add_parser(
        "agents",
        help="list every agent you can name (bots, searches, networks), or print one's card",
        description="Every agent a command takes by name: the bots, the searches and the "
        "shipped networks, with their measured strength; with a name (or an exported agent's "
        "path), its card: what it is, how strong it measured and, for a network, its model "
        "card (rules, recipe, strength with intervals, intended use and limits).",
    )
    agents.add_argument(
        "name", nargs="?", help="a bot, a search, a shipped agent or an agent file, e.g. mixbot"
    )
    agents.set_defaults(func=cmd_agents, passthrough=False)

    warmup = sub.add_parser(
        "warmup",
        help="compile the game engine for this machine now (once per install)",
        description="Compile the game engine, the observation encoder and the searches for "
        "this machine and cache them: one to three minutes, once per install. The wheel "
        "ships portable machine code for Linux x86-64 with AVX2 and CPython 3.11, so games "
        "start at once without this; code compiled for the machine itself runs faster "
        "(about 1.5x on the engine here) and is used from then on. Elsewhere every command "
        "that plays games compiles what it needs on first use, saying so; this does it "
        "ahead of time.",
    )
    warmup.add_argument(
        "--check", action="store_true", help="only say whether it is compiled (exit 1 if not)"
    )
    warmup.set_defaults(func=_cmd_warmup, passthrough=False)

    rules = sub.add_parser("rules", help="print the rules switches and presets")
    rules.add_argument("--preset", help="show one preset's switches")
    rules.set_defaults(func=cmd_rules, passthrough=False)

    replay = sub.add_parser(
        "replay",
        help="print a recorded game move by move",
        description="Print a game recorded with uno-lab play --record FILE, move by move in "
        "plain words. The file is checked first: a bad one gives one error naming it.",
    )
    replay.add_argument(
        "file", type=path_argument, help="a game recorded with uno-lab play --record"
    )
    replay.add_argument(
        "--show-hands", action="store_true", help="also show every hand before each move"
    )
    replay.set_defaults(func=cmd_replay, passthrough=False)
    return parser


def _cmd_warmup(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab warmup``: compile what is not compiled yet, and say where it stands."""
    if not args.check:
        # Compile for this machine: the portable code shipped with the wheel is not loaded.
        os.environ["UNO_LAB_NO_PRECOMPILED"] = "1"
    from unolab.warmup import describe_cache, ensure_compiled, is_warm

    if args.check:
        warm = is_warm()
        print(("ready: " if warm else "not compiled yet: ") + describe_cache())
        return 0 if warm else 1
    ensure_compiled(stream=sys.stdout)
    print("ready: " + describe_cache())
    return 0


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def _asks_for_help(words: Sequence[str]) -> bool:
    return any(word in ("-h", "--help") for word in words)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``uno-lab``; return the exit code.

    Bad arguments exit 2 through argparse (``SystemExit``, with ``--help``'s 0). Any error in
    :data:`uno_env.console.INPUT_ERRORS` raised by a command is printed as one line,
    ``uno-lab <command>: error: <message>``, and returns 2; Ctrl-C returns 130, a closed
    stdout pipe 141 with nothing printed, a stdout or stderr closed at start 120 without
    running anything (:mod:`uno_env.console`). No traceback reaches the user.
    """
    command = "uno-lab"
    if standard_streams_closed():  # nowhere to answer, and a file opened now would take its number
        return CLOSED_STREAM_EXIT
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser(_command_of(argv))
        if not argv:  # a bare ``uno-lab``: what it can do, not an error
            parser.print_help()
            return 0
        args, rest = parser.parse_known_args(argv)
        command = f"uno-lab {args.command}"
        args.command_argv = argv[argv.index(args.command) + 1 :]  # what follows the command
        if rest and not args.passthrough:
            parser.error(f"unrecognised arguments: {' '.join(rest)}")
        if args.command in WARM_COMMANDS and not _asks_for_help(args.command_argv):
            from unolab.warmup import ensure_compiled

            ensure_compiled()
        with named_stdout():  # a stdout that cannot take the output is named as such
            code = int(args.func(args, rest))
            # Flush here, not at exit: a stdout that cannot take the output (a full disk,
            # /dev/full) is then reported as one line instead of an interpreter warning.
            sys.stdout.flush()
        return code
    except BrokenPipeError:
        silence_stdout()
        return BROKEN_PIPE_EXIT
    except ModuleNotFoundError as err:  # an optional extra that is not installed
        print(f"{command}: error: {missing_extra_message(err)}", file=sys.stderr)
        return 2
    except _domain_errors() as err:
        print(f"{command}: error: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        if caused_by_input(err):  # a name too long for the file system: the path as given
            print(f"{command}: error: {error_line(err)}", file=sys.stderr)
            return 2
        # The machine, not the input: a full disk, a failed write, a lost device.
        if err.filename == STDOUT_NAME:
            silence_stdout()  # the exit's flush would fail the same way again
        print(f"{command}: error: {system_error_line(err)}", file=sys.stderr)
        return 1
    except _compile_errors() as err:  # the machine's compiler, not the input: exit 1
        print(f"{command}: error: {one_line(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT


def cmd_rules(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab rules``: the switches, or what one preset changes."""
    from uno_env.rules import PRESETS, Rules, load_rules, rules_table

    if args.preset is not None:
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


def cmd_play(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab play``: a match at the terminal against bots or exported agents."""
    from uno_env.cards import MAX_PLAYERS
    from uno_env.rules import DEFAULT_NUM_PLAYERS, load_rules
    from unolab.records import check_record_path

    players = DEFAULT_NUM_PLAYERS if args.players is None else args.players
    if not 2 <= players <= MAX_PLAYERS:
        raise ValueError(f"--players must be 2..{MAX_PLAYERS}, got {players}")
    rules = load_rules(args.rules, num_players=players)
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
    if args.seed is not None and not 0 <= args.seed < 2**64:
        raise ValueError(
            f"--seed must be a whole number in 0..{2**64 - 1} (a 64-bit seed), got {args.seed}"
        )
    if sys.stdin is None:  # started with its input closed (``<&-``): no move can ever come
        raise ValueError(
            "the standard input is closed; uno-lab play reads your moves from it: run it at "
            "a terminal, or give the moves on a pipe"
        )
    # At once, before the engine and the agents load (a network brings torch: seconds).
    print(f"Setting the table: you against {', '.join(opponents)}...", flush=True)
    from uno_env.policy import searches_from_state
    from unolab.agents import resolve_policy
    from unolab.agents.python_bots import class_spec_name, is_class_spec
    from unolab.agents.registry import shipped_agent_path
    from unolab.agents.resolve import is_agent_file
    from unolab.play import agent_mismatch_hint, play_session, random_seed

    seed = random_seed() if args.seed is None else args.seed
    policies = []
    for i, spec in enumerate(opponents):
        try:
            # Each opponent its own seed, wrapped into 64 bits (--seed may be 2**64 - 1).
            policies.append(resolve_policy(spec, rules, seed=(seed + i) % 2**64))
        except ValueError as err:
            if not is_agent_file(spec) and shipped_agent_path(spec) is None:
                raise
            from unolab.agents.policy_metadata import CheckpointMismatchError

            if not isinstance(err, CheckpointMismatchError):
                raise
            raise ValueError(f"{err}. {agent_mismatch_hint(spec, rules)}") from None
    from unolab.warmup import GAME_PARTS, ensure_compiled

    searches = any(searches_from_state(policy) for policy in policies)
    ensure_compiled(names=(*GAME_PARTS, "searches") if searches else GAME_PARTS)
    names = [
        Path(spec).stem
        if is_agent_file(spec) or Path(spec).suffix.lower() in (".yaml", ".yml")  # a model's spec
        else class_spec_name(spec)
        if is_class_spec(spec)
        else spec
        for spec in opponents
    ]
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


def cmd_replay(args: argparse.Namespace, rest: list[str]) -> int:
    """Run ``uno-lab replay``: a recorded game, move by move."""
    from unolab.play import replay

    replay(args.file, show_hands=args.show_hands)
    # Flush here, inside main(): a reader that left (``| head``) raises BrokenPipeError now,
    # which main() ends quietly, instead of at interpreter exit with a traceback.
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
