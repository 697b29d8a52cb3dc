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
from pathlib import Path

from unolab.web.settings import ServeConfig

__all__ = ["build_parser", "main", "port_in_use"]


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound, or ``None`` if it can (it is let go at once).

    Checked before the server starts so that a busy port gets one clear line instead of
    the page's address followed by uvicorn's traceback-like error.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # The same option uvicorn sets: a port left in TIME_WAIT by a stopped server is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use (another server?)"
            return f"cannot bind {host}:{port}: {(err.strerror or str(err)).lower()}"
    return None


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
        type=Path,
        default=None,
        help="a folder of exported agents (.safetensors + .json) to offer as opponents",
    )
    parser.add_argument(
        "--games-dir",
        type=Path,
        default=defaults.games_dir,
        help=f"where finished web games are saved ({defaults.games_dir})",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
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
        help=f"a game untouched this long is dropped from memory ({defaults.idle_minutes})",
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
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "uno-lab serve") -> int:
    """Parse the options and serve until Ctrl-C.

    Returns:
        The exit code (0 after a clean stop, 1 when the port cannot be bound).

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
        max_games_per_client=args.max_games_per_client,
        allowed_hosts=tuple(args.allowed_host),
        trusted_code=tuple(args.trust_code),
    )
    import uvicorn

    from unolab.web.app import create_app
    from unolab.web.warming import start_warmup

    if not config.is_local:
        print(
            f"{prog}: warning: serving on {config.host}: anyone who can reach this address "
            "can play here and read the saved games and runs (there is no login)",
            file=sys.stderr,
        )
    busy = port_in_use(config.host, config.port)
    if busy is not None:
        print(f"{prog}: {busy}; choose another with --port", file=sys.stderr)
        return 1
    print(f"uno-lab table on http://{config.host}:{config.port}/ (Ctrl-C stops it)", flush=True)
    # The page loads at once: an engine not compiled yet compiles behind it, and the page
    # shows the progress instead of the first deal waiting minutes without a word.
    warmup = start_warmup(lambda line: print(f"{prog}: {line}", file=sys.stderr, flush=True))
    app = create_app(config, warmup=warmup)
    uvicorn.run(app, host=config.host, port=config.port, log_level="warning")
    return 0
