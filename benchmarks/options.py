"""The benchmarks' shared options: a bad value is one clear line, exit 2.

A benchmark runs for minutes; a zero repeat count or a negative duration must be refused
before it starts, by argparse, with a message that names the option and the value
(``argument --repeats: expected an integer >= 1, got '0'``) instead of a
``ZeroDivisionError`` or a loop that never ends. The speed benchmarks share their table
options (:func:`add_speed_options`), and every benchmark that writes its figures takes the
same ``--out`` (:func:`add_out_option`, checked before the measurement, written atomically
by :func:`write_figures`).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from uno_env.cards import MAX_PLAYERS
from uno_env.config_values import ConfigError
from uno_env.console import check_output_file, path_argument
from uno_env.files import write_atomically
from uno_env.rules import Rules, load_rules

__all__ = [
    "MAX_BATCH",
    "add_out_option",
    "add_seed_option",
    "add_speed_options",
    "benchmark_parser",
    "check_out_option",
    "int_in_range",
    "parse_speed_args",
    "positive_seconds",
    "write_figures",
]

MAX_BATCH = 1 << 20
"""The largest batch or env count a benchmark accepts (about a gigabyte of state arrays)."""


def int_in_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[minimum, maximum]`` (no upper bound if None).

    Args:
        minimum: The smallest value allowed.
        maximum: The largest value allowed, or None for no upper bound.

    Returns:
        A function that parses the text or raises :class:`argparse.ArgumentTypeError`.
    """
    wanted = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer {wanted}, got {text!r}"
            ) from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected an integer {wanted}, got {text!r}")
        return value

    parse.__name__ = f"integer {wanted}"
    return parse


def positive_seconds(text: str) -> float:
    """An argparse ``type`` for a duration: a finite number of seconds above zero.

    Raises:
        argparse.ArgumentTypeError: naming the value.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds > 0, got {text!r}"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def benchmark_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's parser: its command and the first paragraph of its module's docstring."""
    return argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0] or None)


def add_seed_option(
    parser: argparse.ArgumentParser, default: int, bits: int = 63, help: str = "seed (>= 0)"
) -> None:
    """``--seed``: an integer in ``0 .. 2**bits - 1`` (RLCard takes 32 bits, NumPy 63)."""
    parser.add_argument("--seed", type=int_in_range(0, 2**bits - 1), default=default, help=help)


def add_speed_options(parser: argparse.ArgumentParser) -> None:
    """The table options of a speed benchmark measured against RLCard: ``--rules``,
    ``--players``, ``--seconds``, ``--repeats``, ``--seed`` and ``--no-rlcard``."""
    parser.add_argument("--rules", default="official", help="rules preset or YAML path")
    parser.add_argument(
        "--players",
        type=int_in_range(2, MAX_PLAYERS),
        default=2,
        help=f"players per game, 2-{MAX_PLAYERS} (RLCard: 2)",
    )
    parser.add_argument(
        "--seconds", type=positive_seconds, default=6.0, help="time per figure (> 0)"
    )
    parser.add_argument(
        "--repeats", type=int_in_range(1, 1000), default=3, help="repeats per figure (median; >= 1)"
    )
    add_seed_option(parser, 0)
    parser.add_argument("--no-rlcard", action="store_true", help="skip the RLCard peer")


def parse_speed_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> tuple[argparse.Namespace, Rules]:
    """The options of a speed benchmark (:func:`add_speed_options`) and the rules they name,
    with torch on one thread (as every timed figure of the lab is measured).

    Raises:
        SystemExit: through argparse (one line, exit 2), for a bad option or rules.
    """
    args = parser.parse_args(argv)
    try:
        rules = load_rules(args.rules, num_players=args.players)
    except ConfigError as err:
        parser.error(f"argument --rules: {err}")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # the engine's own figures need no torch
        pass
    return args, rules


def add_out_option(parser: argparse.ArgumentParser) -> None:
    """``--out``: the JSON file the figures are written to (none by default)."""
    parser.add_argument("--out", type=path_argument, default=None, help="write the figures as JSON")


def check_out_option(out: Path | None) -> None:
    """Refuse an ``--out`` that cannot be written now, before minutes of measurement."""
    if out is not None:
        check_output_file(out)


def write_figures(out: Path | None, figures: Any, indent: int = 1) -> None:
    """Write the figures to ``out`` as JSON (atomically, its folder made), if one was given."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, json.dumps(figures, indent=indent) + "\n")
