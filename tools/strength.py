"""Measure bots and exported agents against ``random``: ``python tools/strength.py``.

Each candidate plays 10,000 hands per pairing under the official rules, in one seat with the
opponent bot in every other seat (``random`` by default, the random player of the UNO
papers), its seat rotated evenly over the table (:func:`unolab.agents.arena.evaluate_vs`). The
candidates are the bots (``--bots``, every bot by default) and exported agents
(``--agents PATH ...``; then only the bots named with ``--bots`` are rated too). An agent is
rated only at the table size it was trained for. ``--opponents`` names other opponent bots:
``--opponents random mixbot`` rates every candidate against each. Learned agents run on
``--threads`` torch threads (1 by default: measured fastest for these small networks).
``--bots pimc`` rates the search agent, whose decisions cost milliseconds: with
``--backend ray [--address auto|HOST:PORT]`` every pairing is a Ray task, on a local Ray or
a cluster, with the same results (``docs/distributed.md``).

The script prints a table (win rate, Wilson 95% interval, fair share) and writes the figures
to a JSON file: ``--out``, by default ``runs/strength/bot_strength.json`` (untracked). The
figures quoted in the docs live in ``docs/bot_strength.json`` (the bots) and
``docs/pretrained_strength.json`` (the shipped agents); update them on purpose with ``--out``.
``--out`` replaces only a strength record: any other file there is refused before the
measurement (one line naming it).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.cards import MAX_PLAYERS
from uno_env.config_values import ConfigError
from uno_env.console import path_argument, run_main
from uno_env.files import (
    UnreadableFileError,
    UnwritableFileError,
    check_writable_target,
    read_regular_text,
    write_atomically,
)
from uno_env.policy import Policy
from uno_env.rules import Rules, load_rules
from unolab.agents import AGENT_NAMES, BOT_NAMES, make_agent
from unolab.agents.arena import DEFAULT_BATCH_SIZE, EvalResult, evaluate_vs
from unolab.agents.progress import progress_bar, say
from unolab.agents.ray_backend import BACKENDS, AgentFiles, RayBackendError, connect

__all__ = [
    "DEFAULT_OUT",
    "DOCS_OUT",
    "PROG",
    "Pairing",
    "agent_table_sizes",
    "build_parser",
    "format_table",
    "main",
    "measure",
    "pairing_line",
    "pairings",
    "rate",
]

PROG = "python tools/strength.py"
"""The command, as its messages name it."""
OPPONENT = "random"
DEFAULT_OUT = Path("runs/strength/bot_strength.json")
"""Where the figures go unless ``--out`` says otherwise: never the tracked docs by accident."""
DOCS_OUT = Path("docs/bot_strength.json")
"""The figures the docs quote; written only when ``--out`` names it."""


def _load_agent(path: str, rules: Rules) -> Policy:
    """The exported agent at ``path`` for ``rules`` (deterministic: the masked argmax).

    Raises:
        ValueError: (``AgentFileError``, ``CheckpointMismatchError``) naming the file, or
            FileNotFoundError.
    """
    from unolab.agents.learned import load_policy  # torch only when an agent is rated

    return load_policy(path, rules=rules)


def agent_table_sizes(path: str, players: Sequence[int], preset: str = "official") -> list[int]:
    """The table sizes among ``players`` the exported agent at ``path`` was trained for.

    Raises:
        ValueError: naming ``path`` when it fits none of them (with the reason for the last),
            or when the file is missing or malformed.
    """
    from unolab.agents.policy_metadata import CheckpointMismatchError

    fits, reason = [], ""
    for n_players in players:
        try:
            _load_agent(path, load_rules(preset, num_players=n_players))
        except CheckpointMismatchError as err:
            reason = str(err)
            continue
        except FileNotFoundError as err:
            raise ValueError(f"agent {path!r}: {err}") from None
        fits.append(n_players)
    if not fits:
        sizes = ", ".join(str(n) for n in players)
        raise ValueError(f"agent {path!r} fits none of the table sizes {sizes}: {reason}")
    return fits


@dataclass(frozen=True)
class Pairing:
    """One measurement: a candidate against an opponent bot at one table size.

    Attributes:
        num_players: The table size.
        candidate: A bot name, or the path of an exported agent.
        is_agent: Whether ``candidate`` is an agent file.
        opponent: The opponent bot, one in every other seat.
    """

    num_players: int
    candidate: str
    is_agent: bool
    opponent: str


def pairings(
    bots: Sequence[str],
    players: Sequence[int],
    preset: str = "official",
    agents: Sequence[str] = (),
    opponents: Sequence[str] = (OPPONENT,),
) -> list[Pairing]:
    """Every pairing of :func:`measure`, in the order of its results.

    Raises:
        ValueError: naming an agent file that is missing, malformed or fits no table size.
    """
    fitting = {path: agent_table_sizes(path, players, preset) for path in agents}
    out: list[Pairing] = []
    for n_players in players:
        candidates = [(name, False) for name in bots]
        candidates += [(path, True) for path in agents if n_players in fitting[path]]
        for spec, is_agent in candidates:
            out.extend(Pairing(n_players, spec, is_agent, opponent) for opponent in opponents)
    return out


def rate(
    pairing: Pairing,
    num_games: int,
    seed: int = 0,
    preset: str = "official",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = True,
) -> EvalResult:
    """Play one pairing: a freshly built, freshly seeded candidate against its opponents."""
    rules = load_rules(preset, num_players=pairing.num_players)
    if pairing.is_agent:
        candidate = _load_agent(pairing.candidate, rules)
    else:
        candidate = make_agent(pairing.candidate, seed)
    return evaluate_vs(
        rules,
        candidate,
        pairing.opponent,
        num_games,
        seed=seed,
        batch_size=batch_size,
        progress=progress,
    )


def measure(
    bots: Sequence[str],
    players: Sequence[int],
    num_games: int,
    seed: int = 0,
    preset: str = "official",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = True,
    *,
    agents: Sequence[str] = (),
    opponents: Sequence[str] = (OPPONENT,),
    backend: str = "local",
    address: str | None = None,
    threads: int = 1,
) -> list[EvalResult]:
    """Rate each bot and each exported agent against each opponent at each table size.

    Args:
        bots: Bot names (see :data:`unolab.agents.BOT_NAMES`), or the search agent ``pimc``.
        players: Table sizes.
        num_games: Hands per pairing.
        seed: Seed of every pairing (each pairing deals the same hands).
        preset: Rules preset; the table size overrides its ``num_players``.
        batch_size: Games played side by side.
        progress: Show progress bars (plain lines off a terminal).
        agents: Paths of exported agents; each is rated at the table sizes it was trained
            for (see :func:`agent_table_sizes`), with its deterministic (argmax) policy.
        opponents: The opponent bots, one in every other seat (``random`` by default).
        backend: ``local`` (one pairing after the other, here) or ``ray`` (every pairing a
            Ray task, see :mod:`unolab.agents.ray_backend`); the results are the same.
        address: The Ray cluster (``auto`` or ``HOST:PORT``; None starts a local Ray).
        threads: Torch threads of the learned agents on each Ray worker.

    Returns:
        One result per (table size, candidate, opponent): table sizes outermost, then the
        bots and the agents in the order given, then the opponents.

    Raises:
        ValueError: naming an agent file that is missing, malformed or fits no table size;
            (``RayBackendError``) Ray missing or its cluster unreachable.
    """
    todo = pairings(bots, players, preset, agents, opponents)
    if backend == "ray":
        return _measure_on_ray(
            todo, num_games, seed, preset, batch_size, progress, address, threads
        )
    return [rate(p, num_games, seed, preset, batch_size, progress) for p in todo]


def _rate_shipped(
    pairing: Pairing,
    files: AgentFiles | None,
    threads: int,
    options: tuple[int, int, str, int],
) -> EvalResult:
    """A Ray task: one pairing, its agent file (if any) written on the worker first."""
    if files is not None:
        import torch

        torch.set_num_threads(threads)
        pairing = dataclasses.replace(pairing, candidate=str(files.materialise()))
    num_games, seed, preset, batch_size = options
    return rate(pairing, num_games, seed, preset, batch_size, progress=False)


def _measure_on_ray(
    todo: Sequence[Pairing],
    num_games: int,
    seed: int,
    preset: str,
    batch_size: int,
    progress: bool,
    address: str | None,
    threads: int,
) -> list[EvalResult]:
    """Every pairing as a Ray task (agents travel as file bytes); results in ``todo``'s order."""
    with connect(address) as ray:
        if __name__ != "__main__":
            # Imported, not run as a script (whose code Ray already sends by value): a
            # cluster's nodes have the lab installed, not this tool, so its code travels too.
            from ray import cloudpickle

            cloudpickle.register_pickle_by_value(sys.modules[__name__])
        task = ray.remote(num_cpus=1, max_retries=3)(_rate_shipped)
        shipped = {p.candidate: ray.put(AgentFiles.read(p.candidate)) for p in todo if p.is_agent}
        options = (num_games, seed, preset, batch_size)
        refs = [
            task.remote(p, shipped.get(p.candidate) if p.is_agent else None, threads, options)
            for p in todo
        ]
        results: dict[Any, EvalResult] = {}
        start = time.perf_counter()
        with progress_bar("pairings", len(refs), unit="pairings", enabled=progress) as bar:
            waiting = list(refs)
            while waiting:
                finished, waiting = ray.wait(waiting, num_returns=1)
                result = results[finished[0]] = ray.get(finished[0])
                bar.advance()
                if progress:  # what each pairing measured, above the bar on a terminal
                    say(pairing_line(result, len(results), len(refs), start))
        return [results[ref] for ref in refs]


def pairing_line(result: EvalResult, done: int, total: int, start: float) -> str:
    """One line for a finished pairing: what it measured, and how far the run has got."""
    return (
        f"pairing {done}/{total} done after {time.perf_counter() - start:.0f} s: "
        f"{result.candidate} vs {result.opponent} ({result.num_players} players) "
        f"{100 * result.win_rate:.1f}% [{100 * result.ci_low:.1f}, {100 * result.ci_high:.1f}] "
        f"over {result.games} hands"
    )


def format_table(results: Sequence[EvalResult]) -> str:
    """A Markdown table of the results."""
    lines = [
        "| players | bot | vs | games | win rate | Wilson 95% CI | fair share | mean turns |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.num_players} | {r.candidate} | {r.opponent} | {r.games} | "
            f"{100 * r.win_rate:.1f}% | [{100 * r.ci_low:.1f}%, {100 * r.ci_high:.1f}%] | "
            f"{100 * r.fair_share:.1f}% | {r.mean_turns:.1f} |"
        )
    return "\n".join(lines)


def _int_in_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[minimum, maximum]``, else one clear line."""
    wanted = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected an integer {wanted}, got {text!r}")
        return value

    return parse


def _check_out(parser: argparse.ArgumentParser, out: Path) -> None:
    """Refuse an ``--out`` that cannot be written before the measurement, not after it."""
    if out.is_dir():
        parser.error(f"argument --out: {out} is a directory; give a JSON file path")
    folder = out.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        parser.error(f"argument --out: {folder} is a file, so {out} cannot be created")
    try:
        check_writable_target(out, "--out")
    except UnwritableFileError as err:
        parser.error(f"argument {err}")
    if out.exists():
        problem = _not_a_record(out)
        if problem:
            parser.error(
                f"argument --out: {str(out)!r} {problem}; it is not replaced: give a new "
                "file, or move that one away"
            )


MAX_RECORD_BYTES = 16 << 20
"""The largest ``--out`` read back to see whether it is a strength record (a published one
is tens of KiB)."""


def _not_a_record(path: Path) -> str:
    """Why the file at ``path`` is not a strength record (``""`` when it is one): ``--out``
    replaces only its own kind of file, as the other records' ``--out`` options do."""
    try:
        text = read_regular_text(path, MAX_RECORD_BYTES, "--out")
    except UnreadableFileError as err:
        return f"cannot be read ({err})"
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return "is not JSON (not a strength record)"
    if not (
        isinstance(record, dict)
        and isinstance(record.get("results"), list)
        and "games_per_pairing" in record
    ):
        return "is not a strength record (no 'results' list and 'games_per_pairing')"
    return ""


def build_parser() -> argparse.ArgumentParser:
    """The command line's options; bad values are refused by argparse (one line, exit 2)."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument(
        "--out",
        type=path_argument,
        default=DEFAULT_OUT,
        help=f"JSON output path (default {DEFAULT_OUT}; --out {DOCS_OUT} updates the figures "
        "the docs quote)",
    )
    parser.add_argument(
        "--games", type=_int_in_range(1), default=10_000, help="hands per pairing (>= 1)"
    )
    parser.add_argument(
        "--players",
        type=_int_in_range(2, MAX_PLAYERS),
        nargs="+",
        default=[2, 4],
        help=f"table sizes, each 2-{MAX_PLAYERS}",
    )
    parser.add_argument(
        "--bots",
        nargs="+",
        default=None,
        choices=AGENT_NAMES,
        help="bots to rate, or the search agent pimc (default: every bot, or none when "
        "--agents is given)",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=[],
        metavar="PATH",
        help="exported agents to rate (.safetensors with its .json), each at the table sizes "
        "it was trained for",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=[OPPONENT],
        choices=BOT_NAMES,
        help=f"the opponent bots, one in every other seat (default {OPPONENT})",
    )
    parser.add_argument(
        "--threads",
        type=_int_in_range(1, 64),
        default=1,
        help="torch threads of the learned agents (1-64, default 1)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: the pairings one after the other; ray: every pairing a Ray task "
        "(pip install 'uno-lab[ray]'; the same results)",
    )
    parser.add_argument(
        "--address",
        metavar="auto|HOST:PORT",
        help="ray backend: the cluster to join (default: start a local Ray)",
    )
    parser.add_argument("--seed", type=_int_in_range(0), default=0, help="seed (>= 0)")
    parser.add_argument("--preset", default="official", help="rules preset or YAML path")
    parser.add_argument(
        "--batch-size",
        type=_int_in_range(1),
        default=DEFAULT_BATCH_SIZE,
        help="games played side by side (>= 1)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement, print the table and write the JSON."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_out(parser, args.out)
    if args.address is not None and args.backend != "ray":
        parser.error("argument --address: it names a Ray cluster; add --backend ray")
    for n_players in args.players:  # a bad preset is refused now, not after the first rows
        try:
            load_rules(args.preset, num_players=n_players)
        except ConfigError as err:
            parser.error(f"argument --preset: {err}")
    bots = args.bots if args.bots is not None else ([] if args.agents else list(BOT_NAMES))
    if args.agents:
        import torch

        torch.set_num_threads(args.threads)
        for path in args.agents:  # a bad agent file is refused now, not after the bots
            try:
                agent_table_sizes(path, args.players, args.preset)
            except ValueError as err:
                parser.error(f"argument --agents: {err}")

    start = time.perf_counter()
    try:
        results = measure(
            bots,
            args.players,
            args.games,
            args.seed,
            args.preset,
            args.batch_size,
            agents=args.agents,
            opponents=args.opponents,
            backend=args.backend,
            address=args.address,
            threads=args.threads,
        )
    except RayBackendError as err:
        parser.error(f"argument --backend: {err}")
    elapsed = time.perf_counter() - start
    print(format_table(results))
    print(f"\n{len(results)} pairings in {elapsed:.0f} s", file=sys.stderr)
    report: dict[str, Any] = {
        "description": (
            "Each candidate against the opponent bot in every other seat, its seat rotated "
            "evenly over the table; win rate with a Wilson 95% interval. Truncated hands "
            "count as not won. 'random' is the random player of the UNO papers (a playable "
            "card uniformly, a wild once, then its colour); 'random_action' is uniform over "
            "the play actions (a wild once per colour), the lab's former 'random'."
        ),
        "preset": args.preset,
        "games_per_pairing": args.games,
        "seed": args.seed,
        "seconds": round(elapsed, 1),
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "results": [r.to_dict() for r in results],
    }
    if len(args.opponents) == 1:
        report["opponent"] = args.opponents[0]
    report["opponents"] = list(args.opponents)
    if args.agents:
        report["agents"] = list(args.agents)
        report["torch_threads"] = args.threads
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.out, json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main, PROG)
