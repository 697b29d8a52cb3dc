"""The ``uno-lab`` commands that hand their words to another tool of the lab (``tournament``,
``sweep``, ``serve``, ``bench``), ``config``, which lists and prints the shipped configs
those tools take by name, and ``agents``, which lists and describes the agents they take
(:mod:`unolab.agent_cards`).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "BENCHMARKS",
    "cmd_agents",
    "cmd_bench",
    "cmd_config",
    "cmd_serve",
    "cmd_sweep",
    "cmd_tournament",
    "with_config",
]

BENCHMARKS = {
    "engine": "unolab.benchmarks.core",
    "envs": "unolab.benchmarks.envs",
    "tournament": "unolab.benchmarks.tournament",
    "search": "unolab.benchmarks.search",
    "inference": "unolab.benchmarks.inference",
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
