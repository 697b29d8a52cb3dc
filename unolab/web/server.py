"""``uno-lab serve``: the browser table on http://127.0.0.1:8000 (``--help`` for the options).

The page loads at once even on the first start of an install, when the game engine still
has to compile: that happens in the background while the page shows its progress
(:mod:`unolab.web.warming`).

It binds to 127.0.0.1 (this machine only) unless ``--host`` says otherwise: another address
lets anyone who can reach it play on this server and read its saved games and tournament
runs, so it is an explicit choice and a warning is printed. Requests must be addressed to
a name of this server (``--allowed-host`` adds names): a page of another site cannot reach
it by rebinding its own DNS name to this machine.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from collections.abc import Sequence

from uno_env.console import path_argument
from unolab.web.settings import ServeConfig

__all__ = ["bind_problem", "build_parser", "main"]


_WHERE_TO_LISTEN = (
    "give an address of this machine: 127.0.0.1 (this machine only, the default) or 0.0.0.0 "
    "(every address; see docs/web.md)"
)


def bind_problem(host: str, port: int) -> str | None:
    """Why the server cannot listen on ``host:port``, as one line that says what to do; or
    ``None`` if it can (the address is let go at once).

    Checked before the server starts, with the same socket uvicorn binds, so that each
    failure gets its own line: a host name that does not resolve, an address that is not
    this machine's, a port below 1024 without the rights to it, a port in use.

    Args:
        host: The ``--host`` given (a name, an IPv4 address, an IPv6 address with or without
            brackets).
        port: The ``--port`` given.
    """
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            # The same option uvicorn sets: a port left in TIME_WAIT by a stopped server is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, port))
    except (socket.gaierror, UnicodeError, ValueError):
        # A name the resolver does not know, or cannot even encode (a label over 63
        # characters, a NUL in it).
        return (
            f"--host {host!r}: no such host name or address{_host_hint(host)}; {_WHERE_TO_LISTEN}"
        )
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            return (
                f"port {port} on {host} is already in use (another server?); choose another "
                "with --port"
            )
        if err.errno == errno.EACCES:
            return (
                f"--port {port}: this user may not listen on {host}:{port} (ports below 1024 "
                "need administrator rights); choose a port from 1024 up with --port (8000 by "
                "default)"
            )
        if err.errno == errno.EADDRNOTAVAIL:
            return f"--host {host}: {address} is not an address of this machine; {_WHERE_TO_LISTEN}"
        if err.errno == errno.EAFNOSUPPORT:
            return f"--host {host}: this machine has no IPv6; {_WHERE_TO_LISTEN}"
        reason = (err.strerror or str(err)).lower()
        if err.errno == errno.EINVAL and address.lower().startswith("fe80"):
            reason += " (a link-local address needs its interface: fe80::1%eth0)"
        return f"--host {host}: cannot listen on {host}:{port}: {reason}; {_WHERE_TO_LISTEN}"
    return None


def _host_hint(host: str) -> str:
    """What may be wrong with a host that does not resolve, if its form says."""
    if "/" in host:
        return " (give the host alone, without http:// or a path)"
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit() and ":" not in name:
        return f" (give the port with --port {port}, not in --host)"
    return ""


def build_parser(prog: str = "uno-lab serve") -> argparse.ArgumentParser:
    """The options of ``uno-lab serve``."""
    defaults = ServeConfig()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Play UNO against the lab's agents and replay recorded games in a browser.",
    )
    parser.add_argument(
        "--host",
        default=defaults.host,
        help="address to bind (default 127.0.0.1, this machine only; another address lets "
        "other machines in: see docs/web.md)",
    )
    parser.add_argument("--port", type=int, default=defaults.port, help="TCP port (8000)")
    parser.add_argument(
        "--agents-dir",
        type=path_argument,
        default=None,
        help="a folder of exported agents (.safetensors + .json) to offer as opponents",
    )
    parser.add_argument(
        "--games-dir",
        type=path_argument,
        default=defaults.games_dir,
        help=f"where finished web games are saved, and the live ones kept (live.sqlite3, "
        f"so that they survive a restart) ({defaults.games_dir})",
    )
    parser.add_argument(
        "--runs-dir",
        type=path_argument,
        default=defaults.runs_dir,
        help=f"where tournament runs are looked for, to replay their games ({defaults.runs_dir})",
    )
    parser.add_argument(
        "--max-games",
        type=int,
        default=defaults.max_games,
        help=f"most games held at once; more get HTTP 429 ({defaults.max_games})",
    )
    parser.add_argument(
        "--max-games-per-client",
        type=int,
        default=defaults.max_games_per_client,
        help="most games one client address holds at once; its oldest idle game makes room, "
        f"else HTTP 429 ({defaults.max_games_per_client})",
    )
    parser.add_argument(
        "--idle-minutes",
        type=int,
        default=defaults.idle_minutes,
        help="a live game untouched this long expires (its finished hands stay under "
        f"Replay) ({defaults.idle_minutes})",
    )
    parser.add_argument(
        "--expire-every-seconds",
        type=int,
        default=defaults.expire_every_seconds,
        help="how often the server looks for games idle past --idle-minutes, 1 to 3600 "
        f"({defaults.expire_every_seconds})",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name (besides 127.0.0.1, localhost, [::1] and --host) that requests may "
        "be addressed to, e.g. the machine's DNS name; repeat for more",
    )
    parser.add_argument(
        "--trust-code",
        action="append",
        default=[],
        metavar="FILE_OR_MODULE",
        help="a Python file (my_bots.py) or module whose bot classes may run here, to replay "
        "the tournament games they played (the server runs no other code a run folder "
        "names); repeat for more",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=defaults.max_body_bytes,
        help=f"largest request body; larger get HTTP 413 ({defaults.max_body_bytes})",
    )
    parser.add_argument(
        "--collect-human-games",
        action="store_true",
        help="offer each player to keep their game against the agents as research data "
        "(moves, thinking times, rules, agents' names; no names or addresses of people), "
        "in --games-dir; each player chooses per game (off by default; docs/web.md)",
    )
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "uno-lab serve") -> int:
    """Parse the options and serve until Ctrl-C.

    Returns:
        The exit code: 0 after a clean stop, 2 when the server cannot listen on
        ``--host``/``--port`` (one line on stderr says why and what to do).

    Raises:
        ValueError: for a bad option value (the CLI prints it as one line).
    """
    args = build_parser(prog).parse_args(argv)
    config = ServeConfig(
        host=args.host,
        port=args.port,
        agents_dir=args.agents_dir,
        games_dir=args.games_dir,
        runs_dir=args.runs_dir,
        max_games=args.max_games,
        max_body_bytes=args.max_body_bytes,
        idle_minutes=args.idle_minutes,
        expire_every_seconds=args.expire_every_seconds,
        max_games_per_client=args.max_games_per_client,
        allowed_hosts=tuple(args.allowed_host),
        trusted_code=tuple(args.trust_code),
        collect_human_games=args.collect_human_games,
    )
    problem = bind_problem(config.host, config.port)
    if problem is not None:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2
    import uvicorn

    from unolab.web.app import create_app, open_live_games
    from unolab.web.warming import start_warmup

    if not config.is_local:
        print(
            f"{prog}: warning: serving on {config.host}: anyone who can reach this address "
            "can play here and read the saved games and runs (there is no login)",
            file=sys.stderr,
        )
    live = open_live_games(config)  # a damaged or foreign file: one line, before serving
    address = config.host.strip("[]")
    shown = f"[{address}]" if ":" in address else address  # an IPv6 address in a URL
    print(f"uno-lab table on http://{shown}:{config.port}/ (Ctrl-C stops it)", flush=True)
    # The page loads at once: an engine not compiled yet compiles behind it, and the page
    # shows the progress instead of the first deal waiting minutes without a word.
    warmup = start_warmup(lambda line: print(f"{prog}: {line}", file=sys.stderr, flush=True))
    app = create_app(config, warmup=warmup, live=live)
    # The address as bind_problem bound it: the socket takes an IPv6 address without brackets.
    uvicorn.run(app, host=address, port=config.port, log_level="warning")
    return 0
