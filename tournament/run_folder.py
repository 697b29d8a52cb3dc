"""A tournament's run folder: its config, its meta file, its lock, and the check that a
resumed run is the same tournament.

``<output_dir>/<name>/`` holds ``config.json`` (the config and its fingerprint),
``games.meta.json`` (how many deal sets the log's chunks hold), ``games.jsonl`` (the games,
:mod:`unolab.tournament.results`) and the reports. Both records list under ``overrides`` the
participants whose seats a policy given in code took (``run_tournament(overrides=...)``): the
config names only their placeholders, so a replay must not rebuild them from it. The folder
is a :class:`uno_env.folders.RunFolder`: the run holds its lock while it plays, and a resume
with another config is refused, naming the keys that differ. Every file is written whole
(:func:`write_file`), and a failed write is one line naming the file and how to resume
(:func:`write_error`).
"""

from __future__ import annotations

import contextlib
import errno
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from uno_env.config_values import ConfigError
from uno_env.files import shown, write_atomically
from uno_env.folders import NO_SPACE, RunFolder
from uno_env.rules import load_rules
from unolab.tournament.config import NOT_FINGERPRINTED, TournamentConfig

__all__ = ["MAX_LOG_BYTES", "TournamentFolder", "write_error", "write_file"]


MAX_LOG_BYTES = 4 << 30
"""The largest ``games.jsonl`` read: about twenty million games. The log is read whole and
every game is held in memory, so a larger one would exhaust the memory anyway."""


def write_error(err: OSError, path: Path, doing: str) -> OSError:
    """A failed write as one line: the reason, the file, and how to resume.

    Args:
        err: The operating system's error.
        path: The file written.
        doing: What was being written (``"appending games to"``).

    Returns:
        An :class:`OSError` with the same ``errno`` whose message says it all (its
        ``strerror`` is the whole line, so a CLI prints it as it is).
    """
    reason = err.strerror or " ".join(str(err).split()) or type(err).__name__
    reason = reason[:1].lower() + reason[1:]
    if err.errno in NO_SPACE:
        hint = "free space and rerun the same command to resume"
    else:
        hint = "rerun the same command to resume once the folder can be written"
    return OSError(err.errno or errno.EIO, f"{reason}: {doing} {path}; {hint}")


def write_file(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` atomically (the old file stays whole on a failure).

    Raises:
        OSError: one line naming the file (see :func:`write_error`).
    """
    try:
        write_atomically(path, data)
    except OSError as err:
        raise write_error(err, path, "cannot write") from None


class TournamentFolder:
    """The files of one tournament run, in a :class:`~uno_env.folders.RunFolder` (its lock
    keeps a second run out of them).

    Args:
        config: The tournament config (the folder is ``<output_dir>/<name>``).
    """

    def __init__(self, config: TournamentConfig) -> None:
        self.path = Path(config.output_dir) / config.name
        self.games = self.path / "games.jsonl"
        self.meta = self.path / "games.meta.json"
        self.config = self.path / "config.json"
        self.summary = self.path / "summary.json"
        self.run = RunFolder(
            self.path,
            "tournament run",
            files=[
                self.games.name,
                self.meta.name,
                self.summary.name,
                "leaderboard.csv",
                "telemetry.jsonl",  # the participants' reports, with the games
                "decisions",  # the decision records, with the games
            ],
            start_over="rerun with --fresh to discard its games",
            rename="use another name",
            relocate="choose another output_dir or name",
            on_write_error=lambda err, path: write_error(err, path, "cannot write"),
        )

    def hold(self) -> None:
        """Create the folder and take its lock for this run (:meth:`uno_env.folders.RunFolder.hold`)."""
        self.run.hold()

    def release(self) -> None:
        """Drop the lock, removing its file (:meth:`uno_env.folders.RunFolder.release`)."""
        self.run.release()

    def prepare(self, fresh: bool) -> None:
        """With ``fresh``, discard the games and results already there (not the config:
        it is rewritten)."""
        if fresh:
            self.run.remove(self.run.existing())

    def check(self, config: TournamentConfig, has_games: bool) -> dict[str, Any] | None:
        """Refuse to resume games that another config played.

        ``config.json`` (when it exists) and ``games.meta.json`` (the log's own record) must
        both hold this config's fingerprint; a log with neither cannot be vouched for. Nothing
        is checked when there are no games yet.

        Returns:
            The log's record (``games.meta.json``), or ``None`` when there are no games or
            no record.

        Raises:
            ConfigError: naming the file, the keys that differ and what to do.
        """
        if not has_games:
            return None
        hint = (
            f"it records which config played {self.games.name}; restore or delete it (the "
            "other record then decides), or rerun with --fresh to discard the games"
        )
        records = {
            path: self.run.check_record(
                path.name, config.fingerprint(), lambda old: _differences(old, config), hint
            )
            for path in (self.config, self.meta)
        }
        if records[self.meta] is None and records[self.config] is None:
            raise ConfigError(
                f"{self.games} holds games but neither {self.config.name} nor "
                f"{self.meta.name} says which config played them (a log from before "
                "fingerprints, or copied here): rerun with --fresh to discard them, or use "
                "another name"
            )
        return records[self.meta]

    def deal_set_counts(self, meta: Mapping[str, Any] | None) -> set[int] | None:
        """The deal-set counts (``Schedule.num_deal_sets``) of the runs that wrote the log.

        Returns:
            The counts, or ``None`` when the record does not say (a log from before they
            were recorded).

        Raises:
            ConfigError: when the record holds something else under that key.
        """
        if meta is None or "deal_set_counts" not in meta:
            return None
        counts = meta["deal_set_counts"]
        if not isinstance(counts, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 < n < 2**63 for n in counts
        ):
            raise ConfigError(
                f"{self.meta}: 'deal_set_counts' must be a list of positive 64-bit integers, got "
                f"{shown(counts)}: restore or delete the file, or rerun with --fresh to "
                "discard the games"
            )
        return set(counts)

    def overridden(self, meta: Mapping[str, Any] | None) -> set[str]:
        """The participants the log's earlier runs played with policies given in code.

        Raises:
            ConfigError: when the record holds something else than a list of names there.
        """
        if meta is None or "overrides" not in meta:
            return set()
        names = meta["overrides"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(
                f"{self.meta}: 'overrides' must be a list of participant names, got "
                f"{shown(names)}: restore or delete the file, or rerun with --fresh to "
                "discard the games"
            )
        return set(names)

    def write(
        self, config: TournamentConfig, counts: set[int], overridden: Collection[str] = ()
    ) -> None:
        """Record the config: ``games.meta.json`` (before any game) and ``config.json``.

        Args:
            config: The config of this run.
            counts: The deal-set counts of the runs that wrote the log, this one included.
            overridden: The participants whose games policies given in code played (in
                this run or an earlier one of the log).

        Raises:
            OSError: one line naming the file that cannot be written.
        """
        meta = {
            "fingerprint": config.fingerprint(),
            "games_config": config.game_fields(),
            "deal_set_counts": sorted(counts),
            "overrides": sorted(overridden),
        }
        config_data = {
            "fingerprint": config.fingerprint(),
            "config": config.to_dict(),
            "games_config": meta["games_config"],
            "overrides": meta["overrides"],
        }
        for path, data in ((self.meta, meta), (self.config, config_data)):
            self.run.write(path.name, json.dumps(data, indent=2, sort_keys=True) + "\n")


_NOT_FINGERPRINTED = ("deal_sets", *NOT_FINGERPRINTED)
"""Config keys that never change a game (see :meth:`TournamentConfig.fingerprint`)."""


def _participant_label(entry: Any) -> str:
    if isinstance(entry, Mapping):
        return str(entry.get("name") or entry.get("bot") or Path(str(entry.get("path"))).stem)
    return str(entry)


def _show(key: str, value: Any) -> str:
    if key in ("participants",) and isinstance(value, list):
        return "[" + ", ".join(_participant_label(v) for v in value) + "]"
    if key in ("candidate", "incumbent") and value is not None:
        return _participant_label(value)
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else repr(value)


def _differences(stored: Mapping[str, Any], config: TournamentConfig) -> str:
    """The game-deciding keys in which a stored run record and ``config`` differ."""
    new = config.game_fields()
    recorded = stored.get("games_config")
    old: dict[str, Any] = dict(recorded) if isinstance(recorded, Mapping) else {}
    raw = stored.get("config")
    if not old and isinstance(raw, Mapping):  # a config.json from before games_config
        old = {k: v for k, v in raw.items() if k not in _NOT_FINGERPRINTED}
        with contextlib.suppress(ValueError, TypeError, OverflowError):  # else as written
            old["rules"] = load_rules(
                old.get("rules", "official"),
                num_players=int(old.get("num_players", 2)),
                seat_draw_streams=bool(old.get("seat_draw_streams", True)),
            ).to_dict()
    diffs = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for sub in sorted(set(a) | set(b)):
                if a.get(sub) != b.get(sub):
                    diffs.append(f"{key}.{sub} {a.get(sub)!r} -> {b.get(sub)!r}")
        else:
            diffs.append(f"{key} {_show(key, a)} -> {_show(key, b)}")
    if not diffs:
        return (
            f"fingerprint {stored.get('fingerprint')} -> {config.fingerprint()} with the same "
            "keys, so a preset or the engine changed"
        )
    return "; ".join(diffs)


# --- the run ---------------------------------------------------------------------------------
