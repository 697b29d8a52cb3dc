"""The ``uno-lab`` commands of the game at the terminal: ``play`` a match against agents,
``replay`` a recorded game, print the ``rules`` switches and presets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["cmd_play", "cmd_replay", "cmd_rules"]


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
