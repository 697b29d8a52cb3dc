"""The options of ``uno-lab serve``: a frozen, bounds-checked config."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import ipaddress
import re
import socket
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from uno_env.config_values import check_int
from uno_env.console import name_too_long
from uno_env.files import UnreadableFileError, read_regular_file, shown

__all__ = ["LOOPBACK_NAMES", "MAX_SOURCE_BYTES", "ServeConfig", "host_of", "option"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names of this machine that every server answers to."""

WILDCARDS = ("0.0.0.0", "::", "")
"""Bind addresses that mean every address of the machine."""

_HOST_NAME = re.compile(r"[A-Za-z0-9.-]{1,253}")

MAX_GAMES_LIMIT = 100_000
"""Most live games a server may be told to hold."""
MAX_BODY_LIMIT = 64 * 2**20
"""Largest request body a server may be told to accept (64 MiB)."""


@dataclass(frozen=True)
class ServeConfig:
    """How the browser table is served.

    Attributes:
        host: The address to bind; ``127.0.0.1`` (this machine only) by default. Any other
            address lets other machines play on this server: an explicit choice.
        port: The TCP port, 1 to 65535.
        agents_dir: A folder of exported agents (``.safetensors`` + ``.json``) and of
            language models' spec files (``*.yaml`` holding ``llm:``) offered as opponents
            besides the bots and the shipped agents; ``None`` for none.
        games_dir: Where finished web games are saved (one JSON record per game), and
            the live games kept (``live.sqlite3``: they survive a restart of the server).
        runs_dir: Where tournament runs are looked for (folders holding ``games.jsonl``).
        max_games: Most games held at once (live and recently finished); more get HTTP 429.
        max_body_bytes: Largest request body, in bytes; larger ones get HTTP 413.
        idle_minutes: A live game untouched this long expires: it is taken out of play
            (its id answers HTTP 410; its finished hands stay under Replay).
        expire_every_seconds: How often the server looks for games idle past
            ``idle_minutes`` (an expired game is found within this long).
        max_games_per_client: Most games one client address holds at once; its oldest
            idle game makes room for a new one, else it gets HTTP 429.
        allowed_hosts: Host names (besides this machine's) that requests may be addressed
            to; the server answers any other ``Host`` header with HTTP 400, so a web page
            of another site cannot read it through DNS rebinding.
        trusted_code: Python files (``my_bots.py``, kept by absolute path) and modules
            (``my_package.bots``; a package covers its modules) whose bot classes a
            tournament replay may run; the server runs no other code a run folder names.
        collect_human_games: Offer each player to keep their game (against agents, alone
            at the table) as research data (``false``, the default: no game is kept as data;
            docs/web.md, "Human games as data").
    """

    host: str = "127.0.0.1"
    port: int = 8000
    agents_dir: Path | None = None
    games_dir: Path = Path("runs/web_games")
    runs_dir: Path = Path("runs")
    max_games: int = 1000
    max_body_bytes: int = 2**20
    idle_minutes: int = 120
    expire_every_seconds: int = 60
    max_games_per_client: int = 50
    allowed_hosts: tuple[str, ...] = ()
    trusted_code: tuple[str, ...] = ()
    collect_human_games: bool = False

    def __post_init__(self) -> None:
        # Every message names a setting by its option of ``uno-lab serve`` (``--max-games``
        # for ``max_games``): the one way the server is configured by hand.
        check_int(option("port"), self.port, 1, 65535, "a TCP port")
        check_int(option("max_games"), self.max_games, 1, MAX_GAMES_LIMIT, "games held in memory")
        check_int(
            option("max_body_bytes"), self.max_body_bytes, 256, MAX_BODY_LIMIT, "request size"
        )
        check_int(option("idle_minutes"), self.idle_minutes, 1, 7 * 24 * 60, "at most a week")
        check_int(
            option("expire_every_seconds"), self.expire_every_seconds, 1, 3600, "at most an hour"
        )
        check_int(
            option("max_games_per_client"), self.max_games_per_client, 1, MAX_GAMES_LIMIT, "games"
        )
        if not isinstance(self.host, str) or not self.host.strip():
            raise ValueError(
                f"{option('host')} {shown(self.host)}: give an address to bind, e.g. 127.0.0.1"
            )
        for name in self.allowed_hosts:
            if not _is_ip(name.strip("[]")) and host_of(name) != name.lower():
                raise ValueError(
                    f"{option('allowed_hosts')} {name!r}: give a host name or an IP address "
                    "without a port or a scheme, e.g. table.example.org"
                )
        if self.agents_dir is not None and not Path(self.agents_dir).is_dir():
            raise ValueError(
                f"{option('agents_dir')} {self.agents_dir}: not a folder; give the folder that "
                "holds exported agents (.safetensors with .json)"
            )
        _check_games_dir(Path(self.games_dir))
        if not isinstance(self.collect_human_games, bool):
            raise ValueError(
                f"{option('collect_human_games')} {shown(self.collect_human_games)}: "
                "give true or false"
            )
        runs = Path(self.runs_dir)
        if (runs.exists() or runs.is_symlink()) and not runs.is_dir():
            raise ValueError(
                f"{option('runs_dir')} {runs}: not a folder; give the folder that holds the "
                "tournament and training runs (runs by default)"
            )
        object.__setattr__(self, "trusted_code", tuple(_trusted(c) for c in self.trusted_code))

    @property
    def is_local(self) -> bool:
        """Whether only this machine can reach the server."""
        return self.host.strip("[]") in LOOPBACK_NAMES

    @property
    def binds_all(self) -> bool:
        """Whether the server listens on every address of the machine (``0.0.0.0``, ``::``)."""
        return self.host.strip("[]") in WILDCARDS

    def trusted_hosts(self) -> frozenset[str]:
        """The host names a request's ``Host`` header may carry (any port): this machine's
        loopback names, ``host`` and ``allowed_hosts``; when binding every address, also
        this machine's host name (an IP address is accepted then as well, see
        :meth:`accepts`)."""
        names = {*LOOPBACK_NAMES, *(n.lower().strip("[]") for n in self.allowed_hosts)}
        if self.binds_all:
            names.add(socket.gethostname().lower())
        else:
            names.add(self.host.lower().strip("[]"))
        return frozenset(names)

    def accepts(self, host: str, trusted: frozenset[str]) -> bool:
        """Whether a request addressed to ``host`` (from :func:`host_of`) is served.

        A server bound to every address also answers requests addressed by IP address:
        DNS rebinding needs a host name, and the clients of such a server reach it by
        whatever address of the machine they can route to.
        """
        if host in trusted:
            return True
        return self.binds_all and _is_ip(host)


_OPTIONS = {"allowed_hosts": "--allowed-host", "trusted_code": "--trust-code"}
"""The settings whose option of ``uno-lab serve`` is not the name with dashes (it is
repeated, one value at a time)."""

MAX_SOURCE_BYTES = 16 * 2**20
"""The largest Python file ``--trust-code`` reads to check it (a bot is a few kB)."""


def option(setting: str) -> str:
    """The option of ``uno-lab serve`` that sets the :class:`ServeConfig` field ``setting``
    (``max_games`` -> ``--max-games``): how messages name a setting."""
    return _OPTIONS.get(setting, "--" + setting.replace("_", "-"))


def _check_games_dir(folder: Path) -> None:
    """Refuse a ``--games-dir`` that is no folder and cannot become one (it is created
    when the first game is saved), before the server starts rather than at the first save.

    Raises:
        ValueError: naming the option, the folder and what is in the way.
    """
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        if path.exists() or path.is_symlink():
            what = "is" if path == folder else f"cannot be created: {path} is"
            raise ValueError(
                f"{option('games_dir')} {folder}: {what} not a folder; give a folder where "
                "finished games may be saved"
            )


def _trusted(code: str) -> str:
    """A ``--trust-code`` value checked: an existing ``.py`` file of valid Python (made
    absolute) or the dotted name of a module that can be found (it is not imported here)."""
    flag = option("trusted_code")
    if code.lower().endswith(".py"):
        path = Path(code).expanduser()
        too_long = name_too_long(path)
        if too_long:
            raise ValueError(f"{flag} {too_long}")
        if not path.is_file():
            raise ValueError(f"{flag} {code}: no such Python file")
        _check_source(path, f"{flag} {code}")
        return str(path.resolve())
    if not code or not all(part.isidentifier() for part in code.split(".")):
        raise ValueError(
            f"{flag} {code!r}: give a Python file (my_bots.py) or a module's name (my_package.bots)"
        )
    origin = _module_origin(code)
    if origin is None:
        raise ValueError(
            f"{flag} {code}: no module named {code!r} on the Python path; install it or add "
            "its folder to PYTHONPATH, or give a Python file (my_bots.py)"
        )
    if origin.endswith(".py"):
        _check_source(Path(origin), f"{flag} {code}")
    return code


def _check_source(path: Path, where: str) -> None:
    """Refuse a Python file that does not compile (it is compiled, never run).

    Raises:
        ValueError: starting with ``where``, naming the line that is wrong.
    """
    try:
        source = read_regular_file(path, MAX_SOURCE_BYTES, "Python file")
        # Decoded as Python's import decodes it (UTF-8 unless the file declares a coding):
        # compile() of the raw bytes lets a byte that is no UTF-8 pass in a comment.
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
        compile(text, str(path), "exec", dont_inherit=True)
    except UnreadableFileError as err:
        raise ValueError(f"{where}: {err}") from None
    except UnicodeDecodeError as err:  # Python would not import it either
        raise ValueError(
            f"{where}: not {err.encoding} text (byte 0x{err.object[err.start]:02x} at offset "
            f"{err.start}), so Python cannot import it; save it as UTF-8"
        ) from None
    except SyntaxError as err:
        line = f"line {err.lineno}: " if err.lineno else ""
        raise ValueError(f"{where}: not valid Python ({line}{err.msg}); fix the file") from None
    except (ValueError, RecursionError):  # a NUL byte, nesting past the parser
        raise ValueError(f"{where}: not valid Python; fix the file") from None


def _module_origin(name: str) -> str | None:
    """Where the module ``name`` would be loaded from (its file, or ``"built-in"``), found
    without importing it or its packages (whose code would run); ``None`` if it is not
    found."""
    loaded = sys.modules.get(name)
    if loaded is not None:  # imported already (os.path is no file of a package)
        return getattr(loaded, "__file__", None) or "built-in"
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name: nothing is imported
        for part in parts[1:]:
            if spec is None or spec.submodule_search_locations is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(
                part, list(spec.submodule_search_locations)
            )
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return spec.origin or "namespace package"


def host_of(header: str | None) -> str | None:
    """The host of a ``Host`` header, lower-case, without port or IPv6 brackets; ``None``
    for a header that is missing or malformed."""
    if not header:
        return None
    text = header.strip().lower()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not _is_ip(host) or (rest and not _is_port(rest)):
            return None
        return host
    host, colon, port = text.rpartition(":")
    if not colon:
        host = text
    elif not _is_port(colon + port):
        return None
    return host if _HOST_NAME.fullmatch(host) else None


def _is_port(text: str) -> bool:
    return text.startswith(":") and text[1:].isdigit() and len(text) <= 6


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
