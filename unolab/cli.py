"""``uno-lab``: one command for the lab. Run ``uno-lab --help`` or ``uno-lab <command> --help``.

Commands: ``train ppo|dqn``, ``tournament``, ``play``, ``bench``, ``rules``, ``replay``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from uno_env.configuration import ConfigError

__all__ = ["main"]


def _cmd_train(args: argparse.Namespace, rest: list[str]) -> int:
    module = importlib.import_module(f"train.{args.algorithm}")
    module.main(rest)
    return 0


def _cmd_tournament(args: argparse.Namespace, rest: list[str]) -> int:
    module = importlib.import_module("tournament.cli")
    result = module.main(rest)
    return int(result) if isinstance(result, int) else 0


def _cmd_bench(args: argparse.Namespace, rest: list[str]) -> int:
    targets = {
        "engine": "benchmarks.core",
        "envs": "benchmarks.envs",
        "tournament": "benchmarks.tournament",
    }
    chosen = list(targets) if args.what == "all" else [args.what]
    for what in chosen:
        print(f"== {what} benchmark ==")
        importlib.import_module(targets[what]).main(rest)
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
    print("Presets: " + ", ".join(PRESETS) + "  (uno-lab rules --preset NAME for one)\n")
    print(rules_table())
    return 0


def _cmd_play(args: argparse.Namespace, rest: list[str]) -> int:
    from agents import resolve_policy
    from uno_env.rules import load_rules
    from unolab.play import play_session

    rules = load_rules(args.rules, num_players=args.players)
    opponents = list(args.opponents)
    if len(opponents) == 1:
        opponents *= rules.num_players - 1
    if len(opponents) != rules.num_players - 1:
        raise ValueError(
            f"{rules.num_players} players need 1 or {rules.num_players - 1} opponents, "
            f"got {len(opponents)}: {opponents}"
        )
    policies = [resolve_policy(spec, rules, seed=args.seed + i) for i, spec in enumerate(opponents)]
    play_session(
        rules,
        policies,
        human_seat=args.seat,
        seed=args.seed,
        colour=not args.no_colour,
        record=args.record,
    )
    return 0


def _cmd_replay(args: argparse.Namespace, rest: list[str]) -> int:
    from unolab.play import replay

    if not args.file.is_file():
        raise FileNotFoundError(
            f"no recorded game at {args.file} (record one with uno-lab play --record FILE)"
        )
    replay(args.file, show_hands=args.show_hands)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``uno-lab``."""
    parser = argparse.ArgumentParser(
        prog="uno-lab",
        description="uno-lab: train, rank and play UNO agents on a vectorised engine.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = sub.add_parser(
        "train",
        help="train an agent (ppo or dqn) from a YAML config",
        description="Train an agent. Options after the algorithm go to python -m train.<algo>: "
        "--config FILE, --set KEY=VALUE, --resume RUN_DIR, --no-progress.",
    )
    train.add_argument("algorithm", choices=["ppo", "dqn"])
    train.set_defaults(func=_cmd_train, passthrough=True)

    tournament = sub.add_parser(
        "tournament",
        help="run a tournament (see configs/tournament/)",
        description="Run a tournament; options go to python -m tournament (e.g. --config FILE).",
    )
    tournament.set_defaults(func=_cmd_tournament, passthrough=True)

    play = sub.add_parser("play", help="play UNO against agents in the terminal")
    play.add_argument("--rules", default="official", help="preset name or YAML file")
    play.add_argument("--players", type=int, default=2, help="seats at the table (2-10)")
    play.add_argument(
        "--opponents",
        nargs="+",
        default=["mixbot"],
        metavar="AGENT",
        help="bot names or exported agent paths: one for every seat, or one per seat",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat")
    play.add_argument("--seed", type=int, default=0, help="the deal's seed")
    play.add_argument("--no-colour", action="store_true", help="plain text")
    play.add_argument("--record", type=Path, help="save the game for uno-lab replay")
    play.set_defaults(func=_cmd_play, passthrough=False)

    bench = sub.add_parser("bench", help="run the benchmarks (engine, envs, tournament)")
    bench.add_argument(
        "what", nargs="?", default="engine", choices=["engine", "envs", "tournament", "all"]
    )
    bench.set_defaults(func=_cmd_bench, passthrough=True)

    rules = sub.add_parser("rules", help="print the rules switches and presets")
    rules.add_argument("--preset", help="show one preset's switches")
    rules.set_defaults(func=_cmd_rules, passthrough=False)

    replay = sub.add_parser("replay", help="print a recorded game move by move")
    replay.add_argument("file", type=Path, help="a game recorded with uno-lab play --record")
    replay.add_argument("--show-hands", action="store_true", help="also show the mover's hand")
    replay.set_defaults(func=_cmd_replay, passthrough=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``uno-lab``; return the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args, rest = parser.parse_known_args(argv)
    if rest and not args.passthrough:
        parser.error(f"unrecognised arguments: {' '.join(rest)}")
    try:
        return int(args.func(args, rest))
    except (ConfigError, ValueError, FileNotFoundError) as err:
        print(f"uno-lab {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
