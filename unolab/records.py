"""The recorded game: the JSON file ``uno-lab play --record`` writes and ``replay`` reads.

A record holds the rules, the deal's seed, the players' names and every hand's actions in
the text notation; replaying deals the same cards and applies the same actions. The web
table reads the same files (``unolab.web.replay.records``). Every file is read bounded and as a
regular file, and every error is one :class:`RecordError` line naming the file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.files import (
    UnreadableFileError,
    read_regular_file,
    read_regular_text,
    shown,
    write_atomically,
)
from uno_env.rules import Rules

__all__ = [
    "MAX_ACTION_CHARS",
    "MAX_NAME_CHARS",
    "MAX_RECORD_BYTES",
    "MAX_SEED",
    "RECORD_FORMAT",
    "RecordError",
    "RecordNotSavedError",
    "check_record_path",
    "load_record",
    "load_record_data",
    "save_record",
    "write_record",
]

SayFn = Callable[[str], None]

MAX_RECORD_BYTES = 64 * 2**20
"""The largest recorded game read (a long match records well under 1 MiB)."""

MAX_NAME_CHARS = 80
"""The longest player name a record may carry."""

MAX_SEED = 2**64 - 1
"""The largest seed a record may carry (``uno-lab play --seed`` takes 64-bit seeds)."""

MAX_ACTION_CHARS = 40
"""The longest move name a record may carry (the notation's longest is a few characters)."""

RECORD_FORMAT = "uno-lab game record"
"""The ``format`` field of a recorded game (older records have none)."""


class RecordError(ValueError):
    """A recorded game (``uno-lab replay FILE``) cannot be read or does not replay."""


class RecordNotSavedError(OSError):
    """A played game could not be written where asked; the message says where it went."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "the game could not be saved"


def check_record_path(path: Path) -> None:
    """Refuse a ``--record`` path before the game starts, rather than lose the game at its end.

    Raises:
        ValueError: naming the path, if it is a folder, its folder is missing or not writable,
            or it is an existing file that is not a recorded game (it would be overwritten)
            or not a regular file (a device such as ``/dev/full``, a pipe).
    """
    if path.is_dir():
        raise ValueError(f"--record {path}: is a folder; give a file name such as {path}/game.json")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(
            f"--record {path}: the folder {parent} does not exist; create it or choose another path"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--record {path}: the folder {parent} is not writable")
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise ValueError(
                f"--record {path}: exists and is not a regular file (a device or pipe); "
                "choose a new file name"
            )
        if not os.access(path, os.W_OK):
            raise ValueError(f"--record {path}: the file is not writable")
        try:
            data = json.loads(read_regular_text(path, MAX_RECORD_BYTES, "record"))
            is_record = isinstance(data, dict) and "rules" in data and "seed" in data
        except (ValueError, RecursionError):
            is_record = False
        if not is_record:
            raise ValueError(
                f"--record {path}: the file exists and is not a recorded game; "
                "choose another path (it would be overwritten)"
            )


def write_record(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` atomically: an old file is replaced, never truncated.

    Raises:
        OSError: the file cannot be written (a full disk); ``path`` is unchanged.
    """
    write_atomically(path, json.dumps(data, indent=2))


def save_record(path: Path, data: Mapping[str, Any], say: SayFn) -> None:
    """Write a played game to ``path``; if that fails, keep it somewhere and say where.

    A game is never lost to a write error: it goes to the temporary folder instead, or, if
    that fails too, to standard output as one line of JSON.

    Raises:
        RecordNotSavedError: ``path`` could not be written; the message says where the game
            went instead.
    """
    try:
        write_record(path, data)
    except OSError as err:
        reason = (err.strerror or str(err)).lower()
        fallback = (
            Path(tempfile.gettempdir()) / f"uno-lab-game-{data.get('seed')}-{os.getpid()}.json"
        )
        try:
            write_record(fallback, data)
        except OSError:
            say(json.dumps(data, separators=(",", ":")))
            raise RecordNotSavedError(
                f"--record {path}: cannot be written ({reason}); the game was printed above as "
                "JSON: save that line to a file to replay it"
            ) from None
        raise RecordNotSavedError(
            f"--record {path}: cannot be written ({reason}); the game was saved to {fallback} "
            f"instead (uno-lab replay {fallback})"
        ) from None
    say(f"Recorded to {path} (uno-lab replay {path}).")


def load_record(path: Path) -> tuple[Rules, int, list[str], list[list[str]]]:
    """Read and check a recorded game; every error is one :class:`RecordError` naming ``path``."""
    rules, seed, names, hands, _ = load_record_data(path)
    return rules, seed, names, hands


def load_record_data(path: Path) -> tuple[Rules, int, list[str], list[list[str]], dict[str, Any]]:
    """:func:`load_record`, and the record's JSON object itself (every key it checks is
    checked: the web table's ``agents``, ``keep_as_data``, ``think_ms``, ...)."""
    hint = "record a game with: uno-lab play --record FILE"
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"no recorded game at {path} ({hint})")
    if path.is_dir():
        raise RecordError(f"{path} is a folder, not a recorded game ({hint})")
    try:
        raw = read_regular_file(path, MAX_RECORD_BYTES, "recorded game")
    except UnreadableFileError as err:
        raise RecordError(f"{err} ({hint})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not a recorded game (not UTF-8 text; {hint})") from None
    if not text.strip():
        raise RecordError(f"{path}: the file is empty, not a recorded game ({hint})")
    try:
        data = json.loads(text)
    except ValueError as err:
        raise RecordError(f"{path}: not valid JSON ({err}); a recorded game is JSON") from None
    except RecursionError:
        raise RecordError(
            f"{path}: the JSON is nested too deeply; a recorded game is flat"
        ) from None
    if not isinstance(data, dict):
        raise RecordError(
            f"{path}: a recorded game is a JSON object with rules, seed and hands; "
            f"found a {type(data).__name__}"
        )
    missing = [k for k in ("rules", "seed") if k not in data]
    if "hands" not in data and "actions" not in data:
        missing.append("hands")
    if missing:
        raise RecordError(f"{path}: missing key(s) {', '.join(missing)}; {hint}")
    form = data.get("format")
    if form is not None and form != RECORD_FORMAT:
        raise RecordError(
            f"{path}: 'format' must be {RECORD_FORMAT!r} (older records have none), got "
            f"{shown(form)}; {hint}"
        )
    raw_rules = data["rules"]
    if not isinstance(raw_rules, dict):
        raise RecordError(
            f"{path}: 'rules' must be an object of rule switches, got {shown(raw_rules)}"
        )
    try:
        rules = Rules.from_dict(raw_rules, where=f"{path}: rules")
    except (ConfigError, TypeError, ValueError) as err:
        message = str(err)
        raise RecordError(
            message if str(path) in message else f"{path}: rules: {message}"
        ) from None
    seed = data["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise RecordError(
            f"{path}: 'seed' must be a whole number in 0..{MAX_SEED} (a 64-bit seed, as "
            f"uno-lab play --seed takes), got {shown(seed)}"
        )
    if "hands" in data:
        hands = data["hands"]
        where = "hands"
        if not isinstance(hands, list) or not all(isinstance(h, list) for h in hands):
            raise RecordError(
                f"{path}: 'hands' must be a list of lists of actions, got {shown(hands, 80)}"
            )
    else:
        hands = [data["actions"]]
        where = "actions"
        if not isinstance(data["actions"], list):
            raise RecordError(
                f"{path}: 'actions' must be a list of actions, got {shown(data['actions'], 80)}"
            )
    for h, actions in enumerate(hands):
        for i, action in enumerate(actions):
            if not isinstance(action, str) or len(action) > MAX_ACTION_CHARS:
                raise RecordError(
                    f"{path}: {where} hand {h + 1} action {i + 1} must be a move's name "
                    f"such as 'G7' or 'draw', got {shown(action)}"
                )
    n_players = rules.num_players
    names = data.get("names")
    if names is None:
        names = [f"player_{s}" for s in range(n_players)]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise RecordError(
            f"{path}: 'names' must be a list of {n_players} names, got {shown(names)}"
        )
    if len(names) != n_players:
        raise RecordError(
            f"{path}: 'names' lists {len(names)} name(s) for {n_players} players ({shown(names)})"
        )
    for name in names:
        # A name is printed to the terminal: control characters could clear the screen, set
        # the window title or forge lines, so a record carrying them is refused.
        if not name.isprintable() or not 0 < len(name) <= MAX_NAME_CHARS:
            raise RecordError(
                f"{path}: the name {name[:MAX_NAME_CHARS]!a} is not a plain name (1 to "
                f"{MAX_NAME_CHARS} printable characters, no control characters); fix 'names'"
            )
    _check_web_keys(data, path, n_players)
    _check_data_keys(data, path, n_players, hands)
    return rules, seed, names, hands, data


def _check_web_keys(data: dict[str, Any], path: Path, n_players: int) -> None:
    """Check the keys a game saved by the web table adds (each may be absent or null):
    ``agents`` (each seat's agent id, null for the human's), ``match_over`` (a flag) and
    ``saved`` (when, as ISO 8601 text).

    Raises:
        RecordError: naming the key and the value, for one of the wrong type.
    """
    agents = data.get("agents")
    if agents is not None and (
        not isinstance(agents, list)
        or len(agents) != n_players
        or not all(a is None or isinstance(a, str) for a in agents)
    ):
        raise RecordError(
            f"{path}: 'agents' must be a list of {n_players} agent ids (null for a human's "
            f"seat), got {shown(agents)}"
        )
    match_over = data.get("match_over")
    if match_over is not None and not isinstance(match_over, bool):
        raise RecordError(f"{path}: 'match_over' must be true or false, got {shown(match_over)}")
    saved = data.get("saved")
    if saved is not None and not isinstance(saved, str):
        raise RecordError(
            f"{path}: 'saved' must be a time as text (2024-01-31T12:00:00+00:00), got "
            f"{shown(saved)}"
        )


def _check_data_keys(
    data: dict[str, Any], path: Path, n_players: int, hands: list[list[str]]
) -> None:
    """Check the keys of a web game its player kept as data (each may be absent or null):
    ``keep_as_data`` (the player's choice), ``think_ms`` (per hand, per action, the human's
    thinking time in ms or null for a move the server played) and ``agent_names`` (each
    seat's agent name, null for a human's seat).

    Raises:
        RecordError: naming the key and the value, for one of the wrong form.
    """
    keep = data.get("keep_as_data")
    if keep is not None and not isinstance(keep, bool):
        raise RecordError(f"{path}: 'keep_as_data' must be true or false, got {shown(keep)}")
    think = data.get("think_ms")
    if think is not None:
        shape_ok = (
            isinstance(think, list)
            and len(think) == len(hands)
            and all(
                isinstance(t, list) and len(t) == len(h) for t, h in zip(think, hands, strict=True)
            )
        )
        if not shape_ok:
            raise RecordError(
                f"{path}: 'think_ms' must hold, for each hand, one entry per action (a time "
                f"in ms, or null), got {shown(think, 80)}"
            )
        for h, times in enumerate(think):
            for i, ms in enumerate(times):
                if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int) or ms < 0):
                    raise RecordError(
                        f"{path}: think_ms hand {h + 1} action {i + 1} must be a time in ms "
                        f"(a whole number from 0) or null, got {shown(ms)}"
                    )
    labels = data.get("agent_names")
    if labels is not None and (
        not isinstance(labels, list)
        or len(labels) != n_players
        or not all(
            a is None or (isinstance(a, str) and a.isprintable() and len(a) <= MAX_NAME_CHARS)
            for a in labels
        )
    ):
        raise RecordError(
            f"{path}: 'agent_names' must be a list of {n_players} agent names (null for a "
            f"human's seat), got {shown(labels)}"
        )
