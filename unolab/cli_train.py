"""``uno-lab train``: find the algorithm (the command line's, or the config's) and hand the
words to the training command, which parses its own options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from unolab.cli_tools import with_config

__all__ = ["cmd_train"]

IMITATE = "imitate"
"""The word of ``uno-lab train imitate``: a warm start by imitation, not an RL algorithm."""

IMITATE_DEFAULT_CONFIG = "imitate/tiny"
"""The shipped config ``uno-lab train imitate`` uses when none is given."""


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
