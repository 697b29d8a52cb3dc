"""Load on the browser table's server (``uno-lab bench web``): answer latency and moves/s of
a real ``uno-lab serve`` process under many clients, and no answered move lost when it is
killed with SIGKILL under that load.

The benchmark starts ``uno-lab serve`` on 127.0.0.1 (a free port, a temporary games folder of
its own) and runs ``--clients`` clients at once, each in a thread of its own over HTTP: each
deals a game against a bot (``POST /api/games``) and plays ``--moves`` moves, each a random
legal move of the last answer (``POST /api/games/{id}/moves`` with the answer's ``seq``),
timing every answer. A server commits every accepted move to its SQLite file (WAL,
``synchronous=FULL``) before it answers, so the latency includes one synced commit.

The server has no switch that turns its file off. The cost of persistence is measured twice
instead: the same load on the same server with its games folder on a memory file system
(``/dev/shm``, where a sync costs nothing; SQLite still writes), and a synced SQLite commit
of one move (the settings of the server's file) timed alone on the disk.
The two load rounds are repeated ``--repeats`` times, interleaved (the load of a shared
machine drifts), each on a fresh server; their answers are pooled.

The crash round plays the same load while the server is killed (``kill -9``) ``--kills``
times at random moments and restarted on the same games folder; a client whose request
fails waits for the new server and reads its game back. After the round the server is
killed once more and restarted, and every game is read: its ``seq`` must be at least the
last ``seq`` a client was answered for it. Answered moves lost and games unreadable must
both be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from unolab.benchmarks.options import (
    add_out_option,
    add_seed_option,
    benchmark_parser,
    check_out_option,
    int_in_range,
    write_figures,
)

__all__ = ["Load", "Server", "build_parser", "commit_cost", "crash_round", "load_round", "main"]

START_TIMEOUT_S = 900.0
"""How long a server may take to answer ready (a first start may compile the engine)."""
REQUEST_TIMEOUT_S = 60.0
"""How long a client waits for one answer."""
SHM = Path("/dev/shm")
"""The memory file system of the round without disk syncs, where the machine has one."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """``uno-lab serve`` in a process of its own on 127.0.0.1, over ``games``.

    Args:
        games: The games folder (its ``live.sqlite3`` survives a kill and a restart).
        say: Where progress lines go.
    """

    def __init__(self, games: Path, say: Callable[[str], None]) -> None:
        self.games = games
        self.say = say
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start the server and wait until its engine is ready.

        Returns:
            The seconds it took.

        Raises:
            RuntimeError: the server exited or did not get ready in time (its last output).
        """
        log = self.games.parent / f"{self.games.name}-server.log"
        command = [sys.executable, "-m", "unolab.cli", "serve", "--port", str(self.port)]
        command += ["--games-dir", str(self.games), "--runs-dir", str(self.games / "runs")]
        command += ["--max-games", "100000", "--max-games-per-client", "100000"]
        began = time.monotonic()
        with log.open("ab") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=out)
        shown = began
        while True:
            state: dict[str, Any] = {}
            try:
                state = httpx.get(f"{self.url}/api/warmup", timeout=5).json()
                if state.get("ready"):
                    return time.monotonic() - began
            except (httpx.HTTPError, ValueError):
                pass
            if self.proc.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-5:]
                raise RuntimeError("uno-lab serve exited: " + " / ".join(tail))
            now = time.monotonic()
            if now - began > START_TIMEOUT_S:
                self.kill()
                raise RuntimeError(f"uno-lab serve was not ready after {START_TIMEOUT_S:.0f} s")
            if now - shown >= 2.0:  # nothing silent for long: a first start may compile
                shown = now
                part = f", compiling {state['current']}" if state.get("current") else ""
                done = f" ({state['done']}/{state['total']} parts)" if state.get("total") else ""
                self.say(f"  waiting for the server: {now - began:.0f} s{part}{done}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown code of the server runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(timeout=60)


@dataclass
class Load:
    """What the clients of a round did (shared by their threads; append is atomic).

    Attributes:
        latencies: The seconds of each answered move.
        accepted: The last ``seq`` each game was answered with, by game id.
        failures: Requests that got no answer (a killed server).
        errors: Answers that were refused (any status but 200 and 201): each stops its
            client, and then all of them.
        up: Set while the server answers (the crash round clears it around a restart).
        url: The server's address now.
    """

    url: str
    latencies: list[float] = field(default_factory=list)
    accepted: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    errors: list[str] = field(default_factory=list)
    up: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _client(load: Load, number: int, moves: int, seed: int, more: Callable[[], bool]) -> None:
    """One client: deal a game against a bot, play ``moves`` random legal moves (and on while
    ``more()``), a new hand or game when one ends; after a failed request wait for the
    server and read the game back."""
    rng = random.Random(seed * 1_000_003 + number)
    played, view, silent = 0, None, 0
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as http:
        while (played < moves or more()) and not load.errors:
            load.up.wait()
            url = load.url
            try:
                if view is None or view["match_over"]:
                    body = {"opponents": ["mixbot"], "seed": rng.randrange(2**31)}
                    answer = http.post(f"{url}/api/games", json=body)
                elif view["hand_over"]:
                    answer = http.post(
                        f"{url}/api/games/{view['id']}/next-hand", json={"seq": view["seq"]}
                    )
                else:
                    move = rng.choice(view["moves"])["action"]
                    body = {"action": move, "seq": view["seq"]}
                    began = time.perf_counter()
                    answer = http.post(f"{url}/api/games/{view['id']}/moves", json=body)
                    if answer.status_code == 200:
                        load.latencies.append(time.perf_counter() - began)
                        played += 1
                if answer.status_code not in (200, 201):
                    raise httpx.HTTPStatusError("refused", request=answer.request, response=answer)
                view = answer.json()
                silent = 0
                with load.lock:
                    load.accepted[view["id"]] = max(load.accepted.get(view["id"], 0), view["seq"])
            except httpx.HTTPStatusError as err:
                answer = err.response
                load.errors.append(
                    f"{answer.status_code} for {err.request.url.path}: {answer.text}"
                )
                return
            except (httpx.TransportError, ValueError):
                silent += 1
                with load.lock:
                    load.failures += 1
                if silent > 300:  # about 30 s without an answer: not a restart
                    load.errors.append(f"no answer from {load.url} after {silent} tries")
                    return
                time.sleep(0.05)
                view = _read_back(load, http, view)


def _read_back(
    load: Load, http: httpx.Client, view: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The game as the server has it now (None: deal a new one), after a failed request."""
    if view is None:
        return None
    for _ in range(100):
        load.up.wait()
        try:
            answer = http.get(f"{load.url}/api/games/{view['id']}")
            if answer.status_code == 200:
                return dict(answer.json())
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    return None


def _play(load: Load, clients: int, moves: int, seed: int, more: Callable[[], bool]) -> float:
    """Run the clients until each played its moves (and ``more()`` is false); the seconds."""
    began = time.perf_counter()
    threads = [
        threading.Thread(target=_client, args=(load, n, moves, seed, more), daemon=True)
        for n in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if load.errors:
        raise RuntimeError(f"the server refused a request: {load.errors[0][:300]}")
    return time.perf_counter() - began


def _ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def pooled(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of repeated load rounds together: every answer's latency pooled, the
    moves over the seconds of all, and each round's median (the spread)."""
    latencies = [t for r in rounds for t in r["latencies"]]
    seconds = sum(r["seconds"] for r in rounds)
    return {
        "moves": len(latencies),
        "median_ms": _ms(latencies, 0.5),
        "p99_ms": _ms(latencies, 0.99),
        "moves_per_s": round(len(latencies) / seconds, 1),
        "seconds": round(seconds, 2),
        "failed_requests": sum(r["failed_requests"] for r in rounds),
        "round_medians_ms": [_ms(r["latencies"], 0.5) for r in rounds],
        "start_s": round(statistics.median(r["start_s"] for r in rounds), 2),
    }


def load_round(
    games: Path, clients: int, moves: int, seed: int, say: Callable[[str], None]
) -> dict[str, Any]:
    """The load on a fresh server over ``games``: the latency of each move (seconds), the
    round's seconds, failed requests and the server's start."""
    server = Server(games, say)
    started = server.start()
    try:
        load = Load(server.url)
        load.up.set()
        seconds = _play(load, clients, moves, seed, lambda: False)
    finally:
        server.kill()
    median, p99 = _ms(load.latencies, 0.5), _ms(load.latencies, 0.99)
    say(f"  {len(load.latencies)} moves in {seconds:.2f} s: median {median} ms, p99 {p99} ms")
    return {
        "latencies": load.latencies,
        "seconds": seconds,
        "failed_requests": load.failures,
        "start_s": started,
    }


def crash_round(
    games: Path, clients: int, moves: int, kills: int, seed: int, say: Callable[[str], None]
) -> dict[str, Any]:
    """The load while the server is killed ``kills`` times; then every game read back after
    one more kill: answered moves lost and games unreadable."""
    server = Server(games, say)
    server.start()
    load = Load(server.url)
    load.up.set()
    rng = random.Random(seed)
    restarts: list[float] = []
    killing = threading.Event()
    killing.set()

    def killer() -> None:
        nonlocal server
        try:
            for number in range(kills):
                if load.errors:
                    break
                time.sleep(rng.uniform(0.2, 2.0))  # a random moment of the load
                load.up.clear()
                server.kill()
                server = Server(games, say)
                restarts.append(server.start())
                load.url = server.url
                load.up.set()
                say(f"  kill -9 {number + 1}/{kills}: restarted in {restarts[-1]:.1f} s")
        except (RuntimeError, OSError, subprocess.SubprocessError) as err:  # the clients stop
            load.errors.append(str(err))
            load.up.set()
        finally:
            killing.clear()

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        seconds = _play(load, clients, moves, seed, killing.is_set)
    finally:
        thread.join()
        server.kill()  # the last word is the file's: every game is read from it
    server = Server(games, say)
    server.start()
    lost = unreadable = 0
    try:
        with httpx.Client(timeout=REQUEST_TIMEOUT_S) as http:
            for game_id, seq in load.accepted.items():
                try:
                    answer = http.get(f"{server.url}/api/games/{game_id}")
                    kept = int(answer.json()["seq"]) if answer.status_code == 200 else None
                except (httpx.HTTPError, ValueError, KeyError, TypeError):
                    kept = None
                if kept is None:
                    unreadable += 1
                elif kept < seq:
                    lost += seq - kept
    finally:
        server.kill()
    return {
        "kills": kills,
        "games": len(load.accepted),
        "answered_moves": len(load.latencies),
        "accepted_moves_lost": lost,
        "games_unreadable": unreadable,
        "failed_requests": load.failures,
        "restart_median_s": round(statistics.median(restarts), 2) if restarts else None,
        "seconds": round(seconds, 2),
    }


def commit_cost(folder: Path, commits: int = 200) -> dict[str, Any]:
    """A synced SQLite commit of one move, timed alone in ``folder``: a file with the
    settings of the server's live games (WAL, ``synchronous=FULL``), one small row per
    transaction, as the server commits an accepted move."""
    db = sqlite3.connect(folder / "commit_cost.sqlite3", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("CREATE TABLE moves (game TEXT, seq INTEGER, seat INTEGER, action TEXT)")
        times = []
        for seq in range(1, commits + 1):
            began = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO moves VALUES (?, ?, ?, ?)", ("bench", seq, 0, "draw"))
            db.execute("COMMIT")
            times.append(time.perf_counter() - began)
    finally:
        db.close()
    return {"commits": commits, "median_ms": _ms(times, 0.5), "p99_ms": _ms(times, 0.99)}


def build_parser(prog: str = "uno-lab bench web") -> argparse.ArgumentParser:
    """The benchmark's options."""
    parser = benchmark_parser(prog, __doc__)
    parser.add_argument(
        "--clients", type=int_in_range(1, 1000), default=32, help="clients at once (32)"
    )
    parser.add_argument(
        "--moves", type=int_in_range(1, 100_000), default=50, help="moves per client (50)"
    )
    parser.add_argument(
        "--kills", type=int_in_range(0, 1000), default=20, help="kill -9 of the crash round (20)"
    )
    parser.add_argument(
        "--repeats",
        type=int_in_range(1, 100),
        default=3,
        help="load rounds with persistence on and sync free, interleaved (3)",
    )
    add_seed_option(parser, 0)
    add_out_option(parser)
    return parser


def _table(figures: dict[str, Any]) -> str:
    rows = [f"{'round':<34} {'moves':>6} {'median ms':>10} {'p99 ms':>8} {'moves/s':>8}"]
    for name, title in (("disk", "persistence on (disk, synced)"), ("memory", "sync free")):
        if name in figures:
            r = figures[name]
            rows.append(
                f"{title:<34} {r['moves']:>6} {r['median_ms']:>10} {r['p99_ms']:>8} "
                f"{r['moves_per_s']:>8}"
            )
    c = figures["commit"]
    rows.append(f"{'one commit alone (disk)':<34} {c['commits']:>6} {c['median_ms']:>10} "
                f"{c['p99_ms']:>8}")  # fmt: skip
    k = figures["crash"]
    rows.append(
        f"crash round: {k['kills']} kill -9, {k['games']} games, {k['answered_moves']} "
        f"answered moves: {k['accepted_moves_lost']} lost, {k['games_unreadable']} unreadable"
    )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None, prog: str = "uno-lab bench web") -> int:
    """Run the benchmark; print its table and one JSON line.

    Returns:
        0, or 1 when an answered move was lost or a game could not be read.
    """
    args = build_parser(prog).parse_args(argv)
    check_out_option(args.out)

    def say(line: str) -> None:
        print(line, flush=True)

    load_before = [round(x, 2) for x in os.getloadavg()]
    figures: dict[str, Any] = {
        "benchmark": "web",
        "clients": args.clients,
        "moves": args.moves,
        "repeats": args.repeats,
        "seed": args.seed,
        "cpus": os.cpu_count(),
        "load_before": load_before,
    }
    failed = None
    root = Path(tempfile.mkdtemp(prefix="uno-lab-bench-web-"))
    memory = Path(tempfile.mkdtemp(prefix="uno-lab-bench-web-", dir=SHM)) if SHM.is_dir() else None
    try:
        rounds: dict[str, list[dict[str, Any]]] = {"disk": [], "memory": []}
        for repeat in range(args.repeats):  # interleaved: the machine's load drifts
            for name, folder in (("disk", root), ("memory", memory)):
                if folder is not None:
                    say(f"{name} round {repeat + 1}/{args.repeats}: {args.clients} clients x "
                        f"{args.moves} moves (load {os.getloadavg()[0]:.2f})")  # fmt: skip
                    rounds[name].append(
                        load_round(
                            folder / f"{name}{repeat}",
                            args.clients,
                            args.moves,
                            args.seed + repeat,
                            say,
                        )
                    )
        figures.update({name: pooled(done) for name, done in rounds.items() if done})
        figures["commit"] = commit_cost(root)
        say(f"crash round: {args.kills} kill -9 under the load")
        figures["crash"] = crash_round(
            root / "crash", args.clients, args.moves, args.kills, args.seed, say
        )
    except RuntimeError as err:
        failed = str(err).replace("\n", " ")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if memory is not None:
            shutil.rmtree(memory, ignore_errors=True)
    if failed is not None:
        print(f"{prog}: error: {failed}", file=sys.stderr)
        return 1
    figures["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(_table(figures))
    print(json.dumps(figures), flush=True)
    write_figures(args.out, figures)
    crash = figures["crash"]
    return 1 if crash["accepted_moves_lost"] or crash["games_unreadable"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
