"""Tournament configs: frozen dataclasses loaded from YAML (the shipped ``tournament/*``: ``uno-lab config list``).

Every key is validated by :func:`uno_env.config_values.from_mapping`: an unknown key or a bad
value raises :class:`~uno_env.config_values.ConfigError` naming it and what is allowed.
A participant may be written as a plain string (a bot name, a Python class such as
``my_bots.py:MyBot``, or the path of an exported agent) or as a mapping
``{name, bot | path, deterministic}``.

Example (``configs/tournament/bots_round_robin.yaml``)::

    name: bots_round_robin
    format: round_robin
    participants: [random, random_any, greedy_points, card_ranking, mixbot]
    num_players: 2
    deal_sets: 200
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from uno_env.cards import MAX_PLAYERS
from uno_env.config_values import ConfigError, check_folder, check_folder_name, from_mapping
from uno_env.configuration import apply_overrides, load_yaml_mapping
from uno_env.rules import DEFAULT_NUM_PLAYERS, Rules, load_rules
from unolab.agents import AGENT_NAMES
from unolab.agents.llm.spec import load_llm_spec, spec_suffix
from unolab.agents.python_bots import (
    CLASS_FORMS,
    canonical_class_spec,
    class_spec_name,
    is_class_spec,
)
from unolab.agents.ray_backend import check_address
from unolab.agents.registry import canonical_agent_spec, is_agent_spec
from unolab.agents.resolve import policy_factory
from unolab.train.config_limits import check_bounds, int_field, make_paths_portable, seed_field

__all__ = [
    "MAX_BOOTSTRAP",
    "MAX_DEAL_SETS",
    "MAX_GAMES_PER_CHUNK",
    "MAX_TABLES",
    "MAX_WORKERS",
    "NOT_FINGERPRINTED",
    "ParticipantSpec",
    "SprtConfig",
    "TournamentConfig",
    "load_config",
    "refuse_pickle_switch",
]

_AGENT_SUFFIXES = ("", ".safetensors", ".json", ".zip")

# The caps below are far above any useful tournament and far below what exhausts memory: a
# config that passes them starts playing instead of dying in an allocation.
MAX_DEAL_SETS = 10_000_000
"""Most deal sets per table: the schedule and the per-deal results are held in memory
(ten million deal sets is weeks of play)."""

MAX_BOOTSTRAP = 100_000
"""Most bootstrap resamples: each one refits the ratings, and the resampled tables are held
in memory; 1,000 already gives stable 95% intervals."""

MAX_TABLES = 1_000_000
"""Most distinct tables (``max_tables``): the schedule lists every one."""

MAX_GAMES_PER_CHUNK = 262_144
"""Most games in one batch: the batched state of a quarter of a million 10-player games
already takes gigabytes."""

MAX_WORKERS = 1_024
"""Most worker processes: more than any machine's cores."""

NOT_FINGERPRINTED = (
    "workers",
    "bootstrap",
    "sprt",
    "allow_pickle",
    "output_dir",
    "backend",
    "address",
)
"""Keys besides ``deal_sets`` that never change a game: where and how fast it is played, how
it is analysed, where it is written."""


@dataclass(frozen=True)
class ParticipantSpec:
    """One participant: a bot by name or class, or an exported agent by path.

    Attributes:
        name: The name on the leaderboard (default: the bot name, the class name, or the
            file stem).
        bot: A name of :data:`unolab.agents.AGENT_NAMES` (a bot or a search agent such as
            ``pimc``), or a Python class (``my_bots.py:MyBot``, ``package.module:MyBot``),
            whose file is recorded by its absolute path so that the run's record rebuilds it
            from any working folder.
        path: An exported agent (``.safetensors`` + ``.json``, loaded without pickle), a
            language model's spec file (``.yaml`` holding ``llm:``,
            :mod:`unolab.agents.llm.spec`; named by its stem) or an SB3 ``.zip`` checkpoint
            (needs ``allow_pickle``: loading it runs code).
        deterministic: Learned agents play the argmax (True) or sample (False).
    """

    name: str = ""
    bot: str | None = None
    path: str | None = None
    deterministic: bool = True

    def __post_init__(self) -> None:
        for key in ("name", "path"):
            value = getattr(self, key)
            if isinstance(value, str) and "\0" in value:
                raise ConfigError(
                    f"participant {key} {value!r} contains a NUL character; remove it"
                )
        make_paths_portable(self, "path")
        if (self.bot is None) == (self.path is None):
            raise ConfigError(
                f"participant {self.name or '?'}: give exactly one of 'bot' (one of "
                f"{list(AGENT_NAMES)}) or 'path' (an exported agent)"
            )
        if self.bot is not None and not is_agent_spec(self.bot):
            raise ConfigError(
                f"participant: unknown bot {self.bot!r}; bots are {list(AGENT_NAMES)} (a "
                f"search may carry its budget: pimc:2048), or {CLASS_FORMS}"
            )
        if self.bot is not None and ":" in self.bot:
            try:
                # A search's options are checked by its constructor; a class is loaded and
                # built once, so that a bad one is named before any game.
                policy_factory(self.bot)
            except ValueError as err:
                raise ConfigError(f"participant: {err}") from None
            object.__setattr__(self, "bot", canonical_class_spec(self.bot))
        if (
            self.path is not None
            and Path(self.path).suffix not in _AGENT_SUFFIXES
            and not spec_suffix(self.path)
        ):
            as_class = " (a Python class is a 'bot')" if is_class_spec(self.path) else ""
            raise ConfigError(
                f"participant: {self.path!r} is not an agent file; expected .safetensors "
                f"(exported agent), .yaml (a language model's spec file, llm: ...) or .zip "
                f"(SB3 checkpoint, with allow_pickle){as_class}"
            )

    @property
    def display_name(self) -> str:
        """The leaderboard name."""
        if self.name:
            return self.name
        if self.bot is not None:
            if self.bot.partition(":")[0] not in AGENT_NAMES and is_class_spec(self.bot):
                return class_spec_name(self.bot)
            return self.bot
        return Path(str(self.path)).stem

    @property
    def is_pickle(self) -> bool:
        """Whether loading runs code (an SB3 zip)."""
        return self.path is not None and Path(self.path).suffix == ".zip"


@dataclass(frozen=True)
class SprtConfig:
    """A sequential probability ratio test of "the candidate is better".

    Hypotheses are Elo differences: H0 ``elo0``, H1 ``elo1`` (``elo1 > elo0``), with error
    rates ``alpha`` (accept H1 when H0 holds) and ``beta`` (accept H0 when H1 holds).
    """

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ConfigError(f"sprt: need elo1 > elo0, got elo0={self.elo0}, elo1={self.elo1}")
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if not 0.0 < value < 0.5:
                raise ConfigError(f"sprt.{key} must be in (0, 0.5), got {value}")


@dataclass(frozen=True)
class TournamentConfig:
    """A tournament: who plays, in which format, on how many deals, and where results go.

    Attributes:
        name: The run name: results go to ``<output_dir>/<name>/``.
        format: ``round_robin`` (every table of ``num_players`` participants, or a balanced
            sample of ``max_tables``), ``gauntlet`` (``candidate`` against tables drawn from
            ``participants``, the field) or ``ab`` (``candidate`` replaces ``incumbent`` in the
            same seats, on the same deals, against the field ``participants``).
        participants: All players (round robin) or the field (gauntlet, ab).
        candidate: The player tested (gauntlet, ab).
        incumbent: The player the candidate replaces (ab).
        rules: A rules preset name, a YAML path or a mapping (see ``docs/rules.md``).
        num_players: The table size k, 2 to 10.
        deal_sets: Deal sets per table. A deal set is one shuffled deal replayed under every
            seating of the balanced design (and, in ``ab``, for both the incumbent and the
            candidate).
        max_tables: Most distinct tables; 0 plays every k-subset (round robin) or every
            (k-1)-subset of the field (gauntlet, ab). When there are more, a balanced sample
            is drawn: every participant sits at the same number of tables (within one).
        design: The seatings of a deal set: ``pair`` (two players, both seatings), ``rotations``
            (the k cyclic rotations plus the k rotations of the reversed order), ``williams``
            (a Williams design: each ordered pair of neighbours equally often), ``auto``
            (``pair`` for two players, ``williams`` from three).
        seat_draw_streams: Per-seat draw streams (an engine option that keeps duplicate deals
            correlated across seatings; the game's distribution is unchanged).
        seed: Seeds the deals and every agent's random choices (``0 <= seed < 2**63``).
        games_per_chunk: Games played side by side in one batch (one unit of parallel work
            and of crash-safe writing). Part of the results: keep it to reproduce a run.
        workers: Processes playing chunks in parallel (does not change the results).
        bootstrap: Bootstrap resamples (over whole deal sets) for the rating intervals.
        sprt: Stop as soon as a sequential test decides (``gauntlet`` and ``ab`` only).
        allow_pickle: Accept SB3 ``.zip`` checkpoints (loading one runs code from the file).
        output_dir: Parent folder of the run folder (a folder, or one that can be created:
            no part of it may be a file).
        backend: Where the chunks are played: ``local`` (a pool of ``workers`` processes)
            or ``ray`` (Ray tasks, see ``docs/distributed.md``). Does not change the results.
        address: The Ray cluster (``ray`` backend): ``auto`` (started on this machine by
            ``ray start --head``) or ``HOST:PORT`` of its head node; unset starts a local Ray
            with ``workers`` CPUs.

    Each integer key's bounds are declared once, with the key.
    """

    name: str
    format: Literal["round_robin", "gauntlet", "ab"] = "round_robin"
    participants: tuple[ParticipantSpec, ...] = ()
    candidate: ParticipantSpec | None = None
    incumbent: ParticipantSpec | None = None
    rules: str | dict[str, Any] = "official"
    num_players: int = int_field(DEFAULT_NUM_PLAYERS, 2, MAX_PLAYERS, "seats at a table")
    deal_sets: int = int_field(100, 1, MAX_DEAL_SETS, "held in memory")
    max_tables: int = int_field(0, 0, MAX_TABLES, "0 plays every table")
    design: Literal["auto", "pair", "rotations", "williams"] = "auto"
    seat_draw_streams: bool = True
    seed: int = seed_field()
    games_per_chunk: int = int_field(8192, 1, MAX_GAMES_PER_CHUNK, "one batch's memory")
    workers: int = int_field(1, 1, MAX_WORKERS)
    bootstrap: int = int_field(1000, 0, MAX_BOOTSTRAP, "each refits the ratings")
    sprt: SprtConfig | None = None
    allow_pickle: bool = False
    output_dir: str = "runs/tournaments"
    backend: Literal["local", "ray"] = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        check_folder_name("name", self.name)
        check_bounds(self)
        make_paths_portable(self, "output_dir")
        check_folder("output_dir", self.output_dir)
        if self.address is not None and self.backend != "ray":
            raise ConfigError(f"address {self.address!r} is for the ray backend; add --backend ray")
        try:
            check_address(self.address)
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if self.design == "pair" and self.num_players != 2:
            raise ConfigError("design 'pair' is for two players; use rotations or williams")
        k = self.num_players
        if self.format == "round_robin":
            if self.candidate is not None or self.incumbent is not None:
                raise ConfigError("round_robin takes no candidate or incumbent: list everyone")
            if len(self.participants) < k:
                raise ConfigError(
                    f"round_robin with num_players={k} needs at least {k} participants, "
                    f"got {len(self.participants)}"
                )
            if self.sprt is not None:
                raise ConfigError("sprt needs a candidate: use format gauntlet or ab")
        else:
            if self.candidate is None:
                raise ConfigError(f"format {self.format} needs a candidate")
            if self.format == "ab" and self.incumbent is None:
                raise ConfigError(
                    "format ab needs an incumbent (the player the candidate replaces)"
                )
            if self.format == "gauntlet" and self.incumbent is not None:
                raise ConfigError("format gauntlet takes no incumbent (did you mean ab?)")
            if len(self.participants) < k - 1:
                raise ConfigError(
                    f"{self.format} with num_players={k} needs a field of at least {k - 1} "
                    f"participants, got {len(self.participants)}"
                )
        names = [p.display_name for p in self.all_participants]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(
                f"participant names must be unique, repeated: {duplicates}; give each a 'name'"
            )
        _refuse_one_agent_twice(self.all_participants)
        pickled = [str(p.path) for p in self.all_participants if p.is_pickle]
        if pickled and not self.allow_pickle:
            raise ConfigError(
                f"{', '.join(pickled)}: an SB3 .zip checkpoint is loaded with pickle, which "
                "runs code from the file; pass --allow-pickle if you trust it, "
                "or export it to .safetensors"
            )
        self.game_rules()  # validate the rules now, with a clear message

    @property
    def all_participants(self) -> tuple[ParticipantSpec, ...]:
        """Everyone who plays: the candidate and incumbent first, then the field."""
        head = tuple(p for p in (self.candidate, self.incumbent) if p is not None)
        return head + self.participants

    def game_rules(self) -> Rules:
        """The rules of every game (``num_players`` and ``seat_draw_streams`` applied)."""
        return load_rules(
            self.rules, num_players=self.num_players, seat_draw_streams=self.seat_draw_streams
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping (for JSON)."""
        return dataclasses.asdict(self)

    def language_models(self) -> dict[str, dict[str, Any] | None]:
        """What decides the play of each language model, read from its spec file, by
        participant name: :meth:`~unolab.agents.llm.spec.LLMSpec.play_settings` (``None`` for a file that cannot be read;
        a run refuses it with its own line). Empty without a language model."""
        out: dict[str, dict[str, Any] | None] = {}
        for spec in self.all_participants:
            if spec.path is None or not spec_suffix(spec.path):
                continue
            try:
                loaded = load_llm_spec(spec.path)
            except (ConfigError, OSError):
                out[spec.display_name] = None
                continue
            out[spec.display_name] = loaded.play_settings()
        return out

    def game_fields(self) -> dict[str, Any]:
        """The keys that decide the games' contents, as a run stores them: the rules
        resolved to every switch, each language model by what decides its play
        (:meth:`language_models`, not where its server is). ``deal_sets`` (a run may be
        extended) and :data:`NOT_FINGERPRINTED` are left out: they never change a game."""
        data = self.to_dict()
        for key in ("deal_sets", *NOT_FINGERPRINTED):
            data.pop(key)
        data["rules"] = self.game_rules().to_dict()
        models = self.language_models()
        if models:  # absent without one: the fingerprints of other runs are unchanged
            data["language_models"] = models
        out: dict[str, Any] = json.loads(json.dumps(data))  # as stored: tuples become lists
        return out

    def fingerprint(self) -> str:
        """A hash of everything that decides the games' contents (:meth:`game_fields`)."""
        text = json.dumps(self.game_fields(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _refuse_one_agent_twice(participants: Sequence[ParticipantSpec]) -> None:
    """Refuse one agent listed twice under two spellings of its spec (``pimc:4`` and
    ``pimc:rollouts=4``); a participant given its own ``name`` may repeat an agent on
    purpose (an A/A test).

    Raises:
        ConfigError: naming both spellings and the one spec they share.
    """
    seen: dict[str, str] = {}
    for spec in participants:
        if spec.bot is None or spec.name:
            continue
        canonical = canonical_agent_spec(spec.bot)
        first = seen.setdefault(canonical, spec.bot)
        if first != spec.bot:
            raise ConfigError(
                f"participants {first!r} and {spec.bot!r} are one agent ({canonical}): list "
                "it once, or give each a 'name' to play it twice"
            )


def _participant_entry(value: Any) -> Any:
    """A string participant becomes a mapping: a bot name or class, or the path of an agent."""
    if isinstance(value, str):
        return {"bot": value} if is_agent_spec(value) else {"path": value}
    return value


def normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """Turn the short forms of a raw config mapping into the full ones."""
    out = dict(data)
    participants = out.get("participants")
    if isinstance(participants, Sequence) and not isinstance(participants, str):
        out["participants"] = [_participant_entry(p) for p in participants]
    for key in ("candidate", "incumbent"):
        if key in out:
            out[key] = _participant_entry(out[key])
    return out


def _check_error_rates(sprt: Mapping[str, Any], where: str) -> None:
    """The SPRT's error rates, each a number in (0, 0.5) (a NaN says so, not "not finite").

    Raises:
        ConfigError: naming the key, the value and the interval.
    """
    for key in ("alpha", "beta"):
        value = sprt.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # not a number: the field's own check says so
        if not 0.0 < value < 0.5:  # NaN included: it compares false
            raise ConfigError(f"{where}.{key}: expected a number in (0, 0.5), got {value!r}")


def refuse_pickle_switch(data: Mapping[str, Any], where: str) -> None:
    """Refuse ``allow_pickle`` in a file or a ``--set`` item: only the explicit flag sets it.

    A config file travels (a shared experiment, a run folder handed over); if it could
    switch unpickling on, opening someone's config would be enough to run their code.

    Raises:
        ConfigError: naming where the switch was found and the flag to use instead.
    """
    if "allow_pickle" in data:
        raise ConfigError(
            f"{where}: allow_pickle cannot be set here (loading an SB3 .zip runs code from the "
            "file); pass --allow-pickle on the command line for checkpoints you trust"
        )


def load_config(
    source: str | Path | Mapping[str, Any], overrides: Sequence[str] = ()
) -> TournamentConfig:
    """Load and validate a tournament config.

    Args:
        source: A YAML path or a mapping.
        overrides: ``key=value`` items applied on top (see :func:`apply_overrides`).

    Returns:
        The validated config.

    Raises:
        ConfigError: naming the file and the bad key or value.
    """
    if isinstance(source, Mapping):
        data, where = dict(source), "tournament"
    else:
        data, where = load_yaml_mapping(source), str(source)
        refuse_pickle_switch(data, where)
    if overrides:
        refuse_pickle_switch(apply_overrides({}, overrides, example="sprt.elo1=10"), "--set")
        data = apply_overrides(data, overrides, example="sprt.elo1=10")
    data = normalise(data)
    if isinstance(data.get("sprt"), Mapping):
        _check_error_rates(data["sprt"], f"{where}.sprt")
    return from_mapping(TournamentConfig, data, where=where)
