"""Benchmark: what a language-model player costs besides the model, and how fast a tournament
keeps a model server busy.

``uno-lab bench llm [--decisions N] [--games G] [--delay S] [--concurrency C] [--out F]``
measures, in one run:

* **overhead per decision outside the model**: the agent
  (:class:`~unolab.agents.llm.agent.LLMAgent`) decides positions of real games (collected
  from ``random`` bots, 2 players) one at a time, asking an instant completer (it answers the
  first move of the prompt's ``Legal moves:`` line), with its decisions recorded to a file.
  The time of each decision less the completer's own is the agent's: the seat's view, the
  prompt, the parse of the answer and the record. Median and 90th percentile, in ms (target:
  a median of at most 1 ms);
* **throughput against a model server**: a scripted chat-completions server on 127.0.0.1
  (:mod:`unolab.benchmarks.chat_server`, in a process of its own) answering every request after ``--delay`` seconds
  (200 ms), and a 2-player tournament of ``--games`` games (:func:`run_tournament`, one worker,
  one chunk) between a spec file of that server (``concurrency: C``) and ``random``. The
  figure is the model's requests per second over the tournament's wall time, against the
  bound ``C / delay`` (C requests always in flight); target: 0.8 of the bound. The tables of
  the chunk are what keeps C requests in flight: each step of the batch asks the model for
  every table where it is to move, C at a time, and as games end fewer tables are left (the
  last steps ask fewer than C).

Prints a table and one JSON line of the figures; ``--out`` writes them to a file. Needs the
``llm`` and ``web`` extras (``pip install 'uno-lab[llm,web]'``: the client, and the server).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import platform
import socket
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.console import run_main
from uno_env.core import UnoState
from uno_env.play import Round, play_tables
from uno_env.policy import RandomBot
from uno_env.rules import Rules, load_rules
from unolab.agents.llm.client import Completion, Message
from unolab.agents.llm.spec import LLMSpec
from unolab.benchmarks.options import (
    add_out_option,
    add_seed_option,
    benchmark_parser,
    check_out_option,
    int_in_range,
    positive_seconds,
    write_figures,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "InstantCompleter",
    "bench_overhead",
    "bench_throughput",
    "build_parser",
    "collect_positions",
    "lockstep_ceiling",
    "main",
    "server_process",
]

DEFAULT_CONCURRENCY = LLMSpec.concurrency
"""The requests in flight by default: a spec file's ``concurrency``."""

_LEGAL = "Legal moves: "


class InstantCompleter:
    """A model that answers at once: the first move of the prompt's ``Legal moves:`` line.

    Attributes:
        model: Its name.
        seconds: Time spent answering, over every call (left out of the agent's overhead).
    """

    def __init__(self, model: str = "instant") -> None:
        self.model = model
        self.seconds = 0.0

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The first listed move (its notation, or its letter in letters mode)."""
        start = time.perf_counter()
        text = messages[-1]["content"]
        at = text.find(_LEGAL)
        listed = text[at + len(_LEGAL) :].split("\n", 1)[0] if at >= 0 else ""
        first = listed.split(", ", 1)[0].split(" ", 1)[0].rstrip(")")
        self.seconds += time.perf_counter() - start
        return Completion(text=first)


def collect_positions(rules: Rules, count: int, seed: int) -> list[tuple[UnoState, int]]:
    """``count`` positions of real games (``random`` bots) with the seat to move in each."""
    out: list[tuple[UnoState, int]] = []
    rng = np.random.default_rng(seed)
    while len(out) < count:
        games = 64
        keys = rng.integers(0, 2**63, size=games, dtype=np.uint64)

        def keep(round_: Round) -> bool:
            for row in np.flatnonzero(round_.acting >= 0).tolist():
                if len(out) < count:
                    state = round_.state.select(np.array([row]))
                    out.append((state, int(state.current[0])))
            return len(out) < count

        lineups = np.tile(np.arange(rules.num_players), (games, 1))
        bots = [RandomBot(seed=int(rng.integers(2**31))) for _ in range(rules.num_players)]
        play_tables(rules, bots, lineups, keys, on_round=keep)
    return out


def bench_overhead(decisions: int, seed: int) -> dict[str, Any]:
    """The agent's own time per decision (view, prompt, parse, record), in ms."""
    from unolab.agents.llm.agent import LLMAgent

    rules = load_rules("official", num_players=2)
    positions = collect_positions(rules, decisions, seed)
    completer = InstantCompleter()
    agent = LLMAgent(completer, name="instant", concurrency=1)
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        agent.record_to(Path(tmp) / "decisions.jsonl")
        for state, seat in positions[: min(50, len(positions))]:  # warm the caches
            agent.act_from_state(rules, state, [seat])
        for state, seat in positions:
            before = completer.seconds
            start = time.perf_counter()
            agent.act_from_state(rules, state, [seat])
            spent = time.perf_counter() - start - (completer.seconds - before)
            times.append(spent * 1e3)
        agent.close()
    report = agent.telemetry()
    return {
        "decisions": len(times),
        "median_ms": statistics.median(times),
        "p90_ms": float(np.percentile(times, 90)),
        "mean_ms": statistics.fmean(times),
        "fallbacks": report["fallbacks"],
        "what": "seat view, prompt, parse and record of one decision, the model's time "
        "left out (an instant completer); positions of random-bot games, 2 players",
    }


def _serve(port: int, delay: float) -> None:
    """Serve the scripted player on ``port``, answering after ``delay`` seconds (a process of
    its own: the tournament's threads and the server's do not share one interpreter)."""
    import uvicorn

    from unolab.benchmarks.chat_server import ChatServer, Script

    server = ChatServer()
    server.play(Script(delay_s=delay))
    uvicorn.run(
        server.app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        limit_concurrency=1000,
        backlog=1024,
    )


@contextmanager
def server_process(delay: float) -> Iterator[str]:
    """The scripted chat server in a process of its own; yields its ``base_url``.

    Raises:
        RuntimeError: if it does not listen within a minute.
    """
    from unolab.benchmarks.chat_server import free_port

    port = free_port()
    process = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(port, delay), daemon=True
    )
    process.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if not process.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError("the scripted chat server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.join(5)
        if process.is_alive():
            process.kill()


def bench_throughput(games: int, delay: float, concurrency: int, seed: int) -> dict[str, Any]:
    """Requests per second of a 2-player tournament against a server answering in ``delay``."""
    from unolab.tournament.config import load_config
    from unolab.tournament.runner import run_tournament

    with tempfile.TemporaryDirectory() as tmp, server_process(delay) as base_url:
        spec = Path(tmp) / "scripted.yaml"
        spec.write_text(
            f"llm:\n  model: test-model\n  base_url: {base_url}\n  concurrency: {concurrency}\n"
        )
        config = load_config(
            {
                "name": "bench",
                "participants": [str(spec), "random"],
                "num_players": 2,
                "deal_sets": max(1, games // 2),  # two seatings per deal set
                "games_per_chunk": max(2, games),
                "workers": 1,
                "bootstrap": 0,
                "seed": seed,
                "output_dir": tmp,
            }
        )
        start = time.perf_counter()
        summary = run_tournament(config, progress=False, plots=False, print_table=False)
        elapsed = time.perf_counter() - start
        report = next(r for r in summary["leaderboard"] if r["name"] == "scripted")["telemetry"]
        ceiling = lockstep_ceiling(Path(tmp) / "bench" / "decisions", concurrency)
    requests = report["requests"]
    bound = concurrency / delay
    return {
        "games": summary["schedule"]["games_used"],
        "decisions": report["decisions"],
        "requests": requests,
        "elapsed_s": elapsed,
        "requests_per_s": requests / elapsed,
        "bound_per_s": bound,
        "ratio_to_bound": requests / elapsed / bound,
        "lockstep_ceiling": ceiling,
        "latency_mean_s": report["latency_mean_s"],
        "latency_p90_s": report["latency_p90_s"],
        "concurrency": concurrency,
        "delay_s": delay,
        "what": "a 2-player tournament (the model against random, one worker, one chunk) "
        "against a local chat server answering each request after delay_s; the bound is "
        "concurrency / delay_s; lockstep_ceiling is the highest ratio the chunk's steps allow",
    }


def lockstep_ceiling(decisions: Path, concurrency: int) -> float | None:
    """The highest ratio to the bound that the steps of a chunk allow, from its records.

    The tables of a chunk move in step: the games start together and each takes one
    decision per step, so a decision's ``turn`` is its step. A step that asks the model
    ``n`` times takes ``ceil(n / concurrency)`` rounds of requests; the ceiling is the
    requests over ``concurrency`` times those rounds (1.0 when every step asks a multiple
    of ``concurrency``). ``None`` without records.
    """
    per_step: dict[int, int] = {}
    for path in decisions.rglob("chunk-*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            asked = sum(1 for r in record["requests"] if not r.get("replayed"))
            if asked:
                per_step[int(record["turn"])] = per_step.get(int(record["turn"]), 0) + 1
    if not per_step:
        return None
    rounds = sum(-(-n // concurrency) for n in per_step.values())
    return sum(per_step.values()) / (concurrency * rounds)


def build_parser(prog: str = "python -m unolab.benchmarks.llm") -> argparse.ArgumentParser:
    """The benchmark's options; every numeric one is checked by argparse (one line, exit 2).

    Args:
        prog: The command shown in the usage line (``uno-lab bench llm`` passes its own).
    """
    parser = benchmark_parser(prog, __doc__)
    parser.add_argument(
        "--decisions",
        type=int_in_range(1, 10**6),
        default=2000,
        help="decisions timed for the overhead, >= 1",
    )
    parser.add_argument(
        "--games",
        type=int_in_range(2, 10**5),
        default=200,
        help="games of the tournament against the server, >= 2",
    )
    parser.add_argument(
        "--delay",
        type=positive_seconds,
        default=0.2,
        help="seconds the server takes to answer each request (> 0)",
    )
    parser.add_argument(
        "--concurrency",
        type=int_in_range(1, 256),
        default=DEFAULT_CONCURRENCY,
        help=f"requests in flight (the spec's concurrency, 1-256; default {DEFAULT_CONCURRENCY})",
    )
    add_seed_option(parser, 0)
    add_out_option(parser)
    return parser


def main(
    argv: Sequence[str] | None = None, *, prog: str = "python -m unolab.benchmarks.llm"
) -> dict[str, Any]:
    """Time the agent's overhead and a tournament's throughput against a local server; print
    the figures, write them with ``--out`` (``argv``: the options, default the command line;
    ``prog``: the command named in the usage and error lines)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    check_out_option(args.out)
    missing = [m for m in ("openai", "fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        parser.error(
            f"{', '.join(missing)} not installed; the benchmark needs the client and the "
            "server: pip install 'uno-lab[llm,web]'"
        )
    overhead = bench_overhead(args.decisions, args.seed)
    throughput = bench_throughput(args.games, args.delay, args.concurrency, args.seed)
    figures = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "python": platform.python_version(),
        },
        "overhead": overhead,
        "throughput": throughput,
        "targets": {"overhead_median_ms": 1.0, "throughput_ratio_to_bound": 0.8},
    }
    t = throughput
    rows = [
        ("overhead per decision, median", f"{overhead['median_ms']:.3f} ms", "<= 1 ms"),
        ("overhead per decision, p90", f"{overhead['p90_ms']:.3f} ms", ""),
        (
            f"tournament, {t['games']} games, {t['requests']} requests",
            f"{t['requests_per_s']:.1f} /s",
            f"bound {t['bound_per_s']:.1f} /s",
        ),
        (
            f"ratio to the bound (concurrency {t['concurrency']}, {t['delay_s']:g} s)",
            f"{t['ratio_to_bound']:.2f}",
            ">= 0.8",
        ),
        (
            "the chunk's steps allow at most",
            "-" if t["lockstep_ceiling"] is None else f"{t['lockstep_ceiling']:.2f}",
            "",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'figure'.ljust(width)}  {'measured':>12}  target")
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>12}  {target}")
    print(json.dumps(figures, separators=(",", ":")))
    write_figures(args.out, figures, indent=2)
    return figures


if __name__ == "__main__":
    run_main(main, "python -m unolab.benchmarks.llm")
