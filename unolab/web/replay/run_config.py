"""A tournament run's config, made safe to replay (:class:`SafeRunConfig`).

A run folder is data, never code, whoever wrote it: its ``config.json`` may name only bots
and exported agents (``.safetensors``, loaded without unpickling) that lie in the runs
folder (the run's own folder or any other under it, such as a training run's), among the
shipped agents or in ``--agents-dir``; its rules may be a preset, a mapping of switches or
a YAML file inside the run folder. A stored ``allow_pickle`` is ignored. A participant that
is a Python class (``my_bots.py:MyBot``) is code: it is rebuilt only when its file or
module is one the server was told to trust (``--trust-code``). A language model's spec
file is never read: a placeholder takes its place, and the replay plays its recorded
moves. Messages name files by run id, never by server path.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_env.rules import PRESETS
from unolab.agents import AGENT_NAMES
from unolab.agents.llm.spec import spec_suffix
from unolab.agents.python_bots import canonical_class_spec, class_spec_name, is_class_spec
from unolab.tournament.config import TournamentConfig, load_config, normalise
from unolab.web.guard import Invalid, inside, is_regular, one_line, read_bytes, read_json

__all__ = ["SafeRunConfig"]

_MAX_RULES_BYTES = 2**20
"""The largest rules file read from a run folder (a real one is a few hundred bytes)."""

_RULES_DEPTH = 8
"""Most rules files a run's rules may chain through ``preset`` (a loop stops here)."""

_NOT_REPLAYED = ("output_dir", "workers", "backend", "address")
"""Config keys that say where and how fast a run was played: a replay needs none of them
(and ``output_dir`` would make the server look at a path the file chose)."""

_AGENT_SUFFIXES = (".safetensors", ".json")

_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[^\s'\"/]+/)+")
"""The folders of an absolute path in a message (the file name after them is kept)."""


class SafeRunConfig:
    """Rebuilds the configs of the runs under one runs folder as they may be replayed.

    Args:
        folder: The runs folder of ``serve --runs-dir``.
        shipped_dir: The shipped agents.
        agents_dir: The folder of ``serve --agents-dir`` (its agents may play in a replay).
        trusted_code: The Python files (by path) and modules (by name, a package covering
            its modules) whose classes may play in a replay (``serve --trust-code``).
    """

    def __init__(
        self,
        folder: Path,
        shipped_dir: Path,
        agents_dir: Path | None = None,
        trusted_code: Sequence[str] = (),
    ) -> None:
        self.folder = folder
        self.agent_roots = [folder, shipped_dir] + ([Path(agents_dir)] if agents_dir else [])
        self.trusted_code = tuple(trusted_code)
        self._labels = [
            (shipped_dir, "agents/pretrained"),
            (folder.absolute(), "--runs-dir"),  # absolute: "runs" is also a word
        ]
        if agents_dir is not None:
            self._labels.append((Path(agents_dir), "--agents-dir"))

    def rebuilt_config(
        self, folder: Path, run_id: str, where: str, seats: Sequence[str], models: set[str]
    ) -> TournamentConfig:
        """The run's tournament config, made safe to rebuild (see the class docstring).

        Args:
            folder: The run folder.
            run_id: Its id.
            where: The game replayed, for messages (``run x, game 3``).
            seats: The participant in each seat of that game, for messages.
            models: Filled with the names of the participants that are language models:
                the config names a placeholder bot in their place (their spec files are
                not read), and the replay plays their recorded moves.

        Raises:
            Invalid: for a config that cannot be read or rebuilt, that names what a replay
                may not load, or for a game in which a seat cannot be rebuilt.
        """
        stored = read_json(folder / "config.json", "run config", f"{run_id}/config.json")
        raw = stored.get("config") if isinstance(stored, dict) else None
        if not isinstance(raw, dict):
            raise Invalid(
                f"run {run_id}: config.json holds no 'config' mapping; it is not the config "
                "of a tournament run"
            )
        overridden = stored.get("overrides", [])
        if not isinstance(overridden, list) or not all(isinstance(n, str) for n in overridden):
            raise Invalid(
                f"run {run_id}: config.json: 'overrides' must be a list of participant names"
            )
        for seat, name in enumerate(seats):
            if name in overridden:
                raise Invalid(
                    f"{where} cannot be shown: seat {seat} ({name!r}) was played by a policy "
                    "given in code (run_tournament overrides), which the run cannot rebuild "
                    "(its config names only the seat's placeholder); to replay such games, "
                    "enter the bot as a class (my_bots.py:MyBot) among the participants"
                )
        data = normalise(raw)
        for key in _NOT_REPLAYED:
            data.pop(key, None)
        data["allow_pickle"] = False  # whatever the file says: a replay never unpickles
        for key in ("candidate", "incumbent"):
            data[key] = self._participant(data.get(key), folder, run_id, where, seats, models)
            if data[key] is None:
                del data[key]
        if isinstance(data.get("participants"), list):
            data["participants"] = [
                self._participant(p, folder, run_id, where, seats, models)
                for p in data["participants"]
            ]
        if "rules" in data:
            data["rules"] = self._rules(data["rules"], folder, run_id, 0)
        try:
            return load_config(data)
        except (ValueError, TypeError, RecursionError) as err:
            raise Invalid(f"run {run_id}: config.json: {err}") from None

    def _participant(
        self,
        entry: Any,
        folder: Path,
        run_id: str,
        where: str,
        seats: Sequence[str],
        models: set[str],
    ) -> Any:
        """A participant entry with its agent file checked and made absolute.

        Bots and malformed entries pass unchanged (the config check names them). A language
        model's spec file becomes a placeholder bot of the same name (its name goes in
        ``models``): the replay plays its recorded moves.

        Raises:
            Invalid: for an SB3 ``.zip``, an agent file outside the runs folder, the
                shipped agents and ``--agents-dir``, or a Python class the server was not
                told to trust.
        """
        if isinstance(entry, dict) and isinstance(entry.get("bot"), str):
            return self._python_bot(entry, folder, where, seats)
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return entry
        path = Path(entry["path"])
        given = entry.get("name")
        name = given if isinstance(given, str) and given else path.stem
        if spec_suffix(path):
            models.add(name)
            return {"name": name, "bot": "random"}  # a placeholder: never plays
        if path.suffix == ".zip":
            raise Invalid(
                f"run {run_id}: participant {name!r} is an SB3 .zip checkpoint, which loads "
                "with pickle (running code from the file); a replay never unpickles: export "
                "it to .safetensors (python -m unolab.train.export) and name that file in the "
                "run's config.json"
            )
        if path.suffix and path.suffix not in _AGENT_SUFFIXES:
            return entry  # not an agent file: the config check says so
        found = self._agent_file(path, folder)
        if found is None:
            bot_hint = "" if path.suffix else f" (nor is it a bot: {', '.join(AGENT_NAMES)})"
            raise Invalid(
                f"run {run_id}: participant {name!r}: its agent {path.name!r} is not in the "
                f"runs folder, the shipped agents or --agents-dir{bot_hint}; copy its "
                ".safetensors and .json into the runs folder (or serve with --agents-dir "
                "naming their folder)"
            )
        # The name stays the one the games were logged under, even if links lead elsewhere.
        return {**entry, "name": name, "path": str(found)}

    def _python_bot(
        self, entry: dict[str, Any], folder: Path, where: str, seats: Sequence[str]
    ) -> dict[str, Any]:
        """A participant that names a bot: a Python class only if its code is trusted.

        A relative file is taken in the run folder (a tournament records an absolute path).

        Raises:
            Invalid: for a class whose file or module the server was not told to trust,
                naming the seat it takes in the game (or the participant, when it sits out).
        """
        spec = entry["bot"]
        if spec.partition(":")[0] in AGENT_NAMES or not is_class_spec(spec):
            return entry  # a bot, a search, or a malformed name the config check names
        source = spec.rpartition(":")[0]
        if source.lower().endswith(".py") and not Path(source).expanduser().is_absolute():
            spec = f"{folder / source}:{class_spec_name(spec)}"
        spec = canonical_class_spec(spec)
        if self._trusts(spec):
            return {**entry, "bot": spec}
        given = entry.get("name")
        name = given if isinstance(given, str) and given else class_spec_name(spec)
        shown_source = Path(source).name if source.lower().endswith(".py") else source
        who = (
            f"seat {list(seats).index(name)} ({name!r})"
            if name in seats
            else f"participant {name!r}"
        )
        kind = "file" if source.lower().endswith(".py") else "module"
        raise Invalid(
            f"{where} cannot be shown: {who} is the Python class "
            f"{shown_source}:{class_spec_name(spec)}, code that this server does not run "
            f"unless told to (a run folder is data): serve with --trust-code naming its "
            f"{kind} to replay this run's games"
        )

    def _trusts(self, spec: str) -> bool:
        """Whether the class ``spec`` (canonical) lies in a file or module trusted here."""
        source = spec.rpartition(":")[0]
        for trusted in self.trusted_code:
            if trusted.lower().endswith(".py"):
                if source.lower().endswith(".py") and _same_file(Path(source), Path(trusted)):
                    return True
            elif source == trusted or source.startswith(trusted + "."):
                return True
        return False

    def _agent_file(self, path: Path, folder: Path) -> Path | None:
        """The weights of an exported agent named by a run, if both of its files are regular
        files inside the runs folder or an agents folder of this server; else ``None``.

        A relative path is looked for in the run folder, then as a tournament started in
        the runs folder or in the folder above it wrote it (``runs/ppo/agent.safetensors``),
        then (as a tournament started from the project root wrote it,
        ``agents/pretrained/...``) in the working folder.
        """
        try:
            base = path.with_suffix("") if path.suffix in _AGENT_SUFFIXES else path
            if not base.name:
                return None
            above = [self.folder / base, self.folder.absolute().parent / base]
            bases = [base] if path.is_absolute() else [folder / base, *above, Path.cwd() / base]
        except (OSError, ValueError):  # an empty name, a working folder that is gone
            return None
        roots = [folder, *self.agent_roots]
        for stem in bases:
            files = [stem.with_name(stem.name + suffix) for suffix in _AGENT_SUFFIXES]
            if all(is_regular(f) and any(inside(f, r) for r in roots) for f in files):
                return files[0].absolute()
        return None

    def _rules(self, spec: Any, folder: Path, run_id: str, depth: int) -> Any:
        """A run's rules with every file replaced by its contents: only presets and
        mappings reach the rules loader, which then opens no file.

        Raises:
            Invalid: for a rules file outside the run folder, unreadable, not a mapping,
                or a chain of ``preset`` files too long (a loop).
        """
        if depth > _RULES_DEPTH:
            raise Invalid(
                f"run {run_id}: its rules name presets more than {_RULES_DEPTH} files deep "
                "(a rules file that names itself?)"
            )
        if isinstance(spec, dict):
            out = dict(spec)
            if out.get("preset") is not None:
                out["preset"] = self._rules(out["preset"], folder, run_id, depth + 1)
            return out
        if not isinstance(spec, str) or spec in PRESETS:
            return spec  # a preset, or a wrong type the rules check names
        path = folder / spec
        if Path(spec).is_absolute() or not inside(path, folder):
            raise Invalid(
                f"run {run_id}: its rules name a file outside the run folder; the rules of "
                f"a replayed run are a preset ({', '.join(PRESETS)}), a mapping of switches "
                "or a YAML file inside the run folder"
            )
        shown_as = f"{run_id}/{Path(spec).as_posix()}"
        if not is_regular(path):
            raise Invalid(
                f"run {run_id}: its rules name {shown_as!r}, which is not a file in the run "
                f"folder; give a preset ({', '.join(PRESETS)}) or a mapping of switches"
            )
        text = read_bytes(path, _MAX_RULES_BYTES, "rules file", shown_as)
        import yaml

        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError):
            # The parser's message quotes the file; say only where.
            raise Invalid(f"run {run_id}: the rules file {shown_as!r} is not valid YAML") from None
        if not isinstance(data, dict):
            raise Invalid(
                f"run {run_id}: the rules file {shown_as!r} holds no mapping of rule switches"
            )
        return self._rules(data, folder, run_id, depth + 1)

    def scrub(self, message: str, folder: Path, run_id: str) -> str:
        """``message`` on one line, with no folder of the server in it."""
        pairs: list[tuple[Path, str]] = [(folder, run_id), *self._labels]
        for root, label in list(pairs):
            with contextlib.suppress(OSError, RuntimeError):  # a link loop: shown as written
                pairs.append((root.resolve(), label))
            pairs.append((root.absolute(), label))
        for root, label in sorted(pairs, key=lambda p: -len(str(p[0]))):
            if str(root) not in (".", "/"):
                message = message.replace(str(root), label)
        return one_line(_ABSOLUTE.sub("", message), 600)


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (links followed); never raises."""
    try:
        return a.expanduser().resolve() == b.expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
        return False
