"""The agents a browser may seat at a table, by id: the browser never sends a path.

Ids: a bot's name (``mixbot``, ``pimc``), ``shipped:<name>`` for the agents of
``agents/pretrained/`` and ``folder:<name>`` for the exported agents and the language
models' spec files (``*.yaml``/``*.yml`` holding ``llm:``) of ``serve --agents-dir``.
Policies are built once per (agent, rules) and shared by every game that seats them: all
agents act through one :class:`~unolab.web.game.batching.AgentBatcher`, so a shared policy
is only ever called from one thread at a time.

A language model is no shared policy: each game gets its own agent
(:meth:`Catalogue.model_agent`), which asks the endpoint of the operator's spec file, in
the game's own request, outside the batcher (an answer takes seconds; the other tables'
bots do not wait for it). The browser chooses a model by id only: it never sends a path,
an address or a spec, so the server asks no host but those its operator's spec files name.
A spec file that does not load is listed as unavailable, with the reason in one line.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from uno_env.policy import ActionProbabilities, Policy
from uno_env.rules import Rules
from unolab.agents import AGENT_NAMES, SEARCH_NAMES
from unolab.agents.registry import SHIPPED_DIR
from unolab.agents.resolve import policy_factory

if TYPE_CHECKING:
    from unolab.agents.llm.agent import LLMAgent
    from unolab.agents.llm.spec import LLMSpec

__all__ = [
    "ABOUT",
    "AT_ONCE_KINDS",
    "STRENGTH_FILE",
    "AgentEntry",
    "Catalogue",
    "UnknownAgentError",
    "bot_strength",
    "endpoint_host",
]

LOG = logging.getLogger(__name__)

ABOUT: dict[str, str] = {
    "random": "plays a playable card at random (a wild counts once); the papers' baseline",
    "random_action": "uniform over the legal play actions, so it spends its wilds eagerly",
    "random_any": "uniform over every legal action, voluntary draws included: almost never wins",
    "greedy_points": "dumps the playable card worth the most points",
    "card_ranking": "a fixed order: Draw Two > Skip > number > Reverse > Wild Draw Four > Wild",
    "mixbot": "the lab's best heuristic: colour control, held wilds, aggression, card counting",
    "pimc": "searches 64 simulated playouts per move over guessed hands (about 1 ms a move)",
    "pimc_strong": "the same search with 2,048 playouts per move (about 30 ms a move)",
    "pimc_guided": "1,024 playouts per move, guided by the shipped network of the table size",
    "ismcts": "information-set tree search, 4,096 iterations per move (about 30 ms a move)",
}
"""A one-line description of each bot the page offers, shown next to its name."""

AT_ONCE_KINDS = frozenset({"bot", "shipped", "folder"})
"""The kinds of :class:`AgentEntry` that decide in well under a millisecond (bots and
networks): a game among them is played in the server's event loop
(:meth:`Catalogue.answers_at_once`)."""

STRENGTH_FILE = Path(__file__).resolve().parent / "strength.json"
"""The measured strength of each bot in words (official rules, 2 players), generated from
the docs' strength records by ``python tools/published.py`` and shipped with the package."""


def bot_strength() -> dict[str, str]:
    """The strength line of each bot measured (``{}`` if the file is missing)."""
    try:
        data: dict[str, str] = json.loads(STRENGTH_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data


class UnknownAgentError(ValueError):
    """An agent id that the server does not offer."""


@dataclass(frozen=True)
class AgentEntry:
    """One agent on offer.

    Attributes:
        id: What the browser sends.
        kind: ``bot``, ``search``, ``shipped``, ``folder`` or ``llm`` (a language model's
            spec file of the agents folder).
        label: What the table shows next to the seat (``mixbot``, ``ppo_official_2p``).
        rules: The rules a learned agent was trained under (``None`` for bots: any rules).
        path: The agent's weights (learned agents only; never sent to the browser).
        about: What it is, in one line (``""`` where unknown).
        strength: How strong it measured, in words (``None`` where not measured).
        model: A language model's name (``None`` for other agents).
        endpoint: The host (and port) a language model is asked at; never the key.
        unavailable: Why a language model cannot play here, in one line (``None``: it can).
        spec: A language model's spec (never sent to the browser).
    """

    id: str
    kind: str
    label: str
    rules: dict[str, Any] | None = None
    path: Path | None = field(default=None, repr=False)
    about: str = ""
    strength: str | None = None
    model: str | None = None
    endpoint: str | None = None
    unavailable: str | None = None
    spec: LLMSpec | None = field(default=None, repr=False)

    def public(self) -> dict[str, Any]:
        """The entry as the API shows it (no path, no address beyond the host, no key)."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "rules": self.rules,
            "about": self.about,
            "strength": self.strength,
        }
        if self.kind == "llm":
            out.update(model=self.model, endpoint=self.endpoint, unavailable=self.unavailable)
        return out


def endpoint_host(base_url: str) -> str:
    """The host (and port) of an endpoint's address, as the page shows it: no path, no
    scheme (``http://127.0.0.1:11434/v1`` -> ``127.0.0.1:11434``)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port is not None else host


def _model_entries(folder: Path, taken: set[str]) -> Iterable[AgentEntry]:
    """The language models' spec files of ``folder`` (``*.yaml``/``*.yml`` holding ``llm:``).

    A file that does not load (a bad value, ``openai`` missing, the key's variable unset)
    is listed as unavailable with the reason, naming the file by its name alone; a YAML
    file that is no spec (no ``llm:``, or no YAML at all) is left out, with a log line
    for one that cannot be read.
    """
    from uno_env.config_values import ConfigError
    from uno_env.configuration import load_yaml_mapping
    from unolab.agents.llm.client import ChatClient
    from unolab.agents.llm.spec import load_llm_spec, spec_suffix

    for path in sorted(folder.iterdir()):
        if not spec_suffix(path) or not path.is_file():
            continue
        try:
            if "llm" not in load_yaml_mapping(path):
                continue  # another YAML file (rules, a config): no agent
        except (ConfigError, OSError, ValueError, RecursionError) as err:
            LOG.warning("agents folder: %s is not offered: %s", path.name, err)
            continue
        entry_id = f"folder:{path.stem}"
        if entry_id in taken:
            LOG.warning("agents folder: %s is not offered: %s is taken", path.name, entry_id)
            continue
        taken.add(entry_id)
        spec = None
        why = None
        try:
            spec = load_llm_spec(path)
            ChatClient(spec).close()  # the openai package and the key's variable, checked now
        except Exception as err:  # any failure of the operator's file: shown, never a 500
            why = " ".join(str(err).replace(str(path), path.name).split())
            if spec is not None:  # the page shows the endpoint's host, not its address
                why = why.replace(spec.base_url, endpoint_host(spec.base_url))
        model = spec.model if spec is not None else None
        host = endpoint_host(spec.base_url) if spec is not None else None
        about = f"a language model: {model} at {host}" if spec is not None else "a language model"
        yield AgentEntry(
            entry_id,
            "llm",
            path.stem,
            path=path,
            about=about if why is None else f"{about} (unavailable: {why})",
            model=model,
            endpoint=host,
            unavailable=why,
            spec=spec if why is None else None,
        )


def _learned_about(meta: dict[str, Any]) -> tuple[str, str | None]:
    """An exported agent's description and measured strength, from its metadata (an agent
    without them, or with odd ones, is still offered: they are only shown)."""
    found_extra, found_rules = meta.get("extra"), meta.get("rules")
    extra: dict[str, Any] = found_extra if isinstance(found_extra, dict) else {}
    rules: dict[str, Any] = found_rules if isinstance(found_rules, dict) else {}
    algorithm = str(meta.get("algorithm") or "an unnamed algorithm")
    players = rules.get("num_players")
    steps = extra.get("steps")
    about = f"a network trained by {algorithm}"
    if isinstance(players, int):
        about += f" for {players} players"
    if isinstance(steps, int):
        about += f" ({steps:,} steps)"
    strength = extra.get("strength")
    shown = []
    if isinstance(strength, dict):
        for opponent in ("random", "mixbot"):
            found = strength.get(opponent)
            if isinstance(found, dict) and isinstance(found.get("win_rate"), (int, float)):
                shown.append(f"{100 * found['win_rate']:.1f}% vs {opponent}")
    if shown and isinstance(players, int):
        shown.append(f"{players} players")
    return about, ", ".join(shown) or None


def _learned_entries(folder: Path, kind: str) -> Iterable[AgentEntry]:
    """The exported agents of ``folder`` (each ``.json`` with its ``.safetensors``)."""
    for meta_path in sorted(folder.glob("*.json")):
        weights = meta_path.with_suffix(".safetensors")
        if not weights.is_file():
            continue
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            rules = Rules.from_dict(meta["rules"]).game_rules().to_dict()
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not an agent of this lab (or of another engine version): not offered
        about, strength = _learned_about(meta) if isinstance(meta, dict) else ("", None)
        yield AgentEntry(
            f"{kind}:{meta_path.stem}", kind, meta_path.stem, rules, weights, about, strength
        )


class Catalogue:
    """The agents on offer and their policies.

    Args:
        agents_dir: A folder of exported agents, or ``None``.
        shipped_dir: The shipped agents (default: ``agents/pretrained``).
    """

    def __init__(self, agents_dir: Path | None = None, shipped_dir: Path | None = None) -> None:
        strength = bot_strength()
        entries = [
            AgentEntry(
                name,
                "search" if name in SEARCH_NAMES else "bot",
                name,
                about=ABOUT.get(name, ""),
                strength=strength.get(name),
            )
            for name in AGENT_NAMES
        ]
        entries += _learned_entries(shipped_dir or SHIPPED_DIR, "shipped")
        if agents_dir is not None:
            entries += _learned_entries(Path(agents_dir), "folder")
            entries += _model_entries(Path(agents_dir), {e.id for e in entries})
        self.entries: dict[str, AgentEntry] = {e.id: e for e in entries}
        self._policies: dict[tuple[str, Rules], Policy] = {}
        self._lock = threading.Lock()

    def entry(self, agent_id: str) -> AgentEntry:
        """The entry of an id.

        Raises:
            UnknownAgentError: naming the id and the ones on offer.
        """
        found = self.entries.get(agent_id)
        if found is None:
            shown = ", ".join(sorted(self.entries))
            raise UnknownAgentError(f"unknown agent {agent_id!r}; this server offers: {shown}")
        return found

    def entry_by_label(self, label: str) -> AgentEntry | None:
        """The entry shown as ``label`` (to read old records, which keep only labels)."""
        for entry in self.entries.values():
            if entry.label == label:
                return entry
        return None

    def answers_at_once(self, agent_ids: Iterable[str | None]) -> bool:
        """Whether every agent of ``agent_ids`` (``None``: a person's seat) decides in well
        under a millisecond: a bot or a network, not a search or a language model."""
        return all(
            a is None or (a in self.entries and self.entries[a].kind in AT_ONCE_KINDS)
            for a in agent_ids
        )

    def policy(self, agent_id: str, rules: Rules) -> Policy:
        """The shared policy of an agent under ``rules``, built on first use.

        Raises:
            UnknownAgentError: for an id not on offer.
            ValueError: if a learned agent was trained under other rules (the message says
                which), or its files cannot be read.
        """
        entry = self.entry(agent_id)
        if entry.kind == "llm":
            raise ValueError(
                f"{agent_id} is a language model: each game asks it through its own agent"
            )
        key = (agent_id, rules)
        with self._lock:
            found = self._policies.get(key)
            if found is None:
                spec = str(entry.path) if entry.path is not None else entry.id
                try:
                    found = policy_factory(spec, rules)(0)
                except ValueError as err:  # the server's paths are no business of the browser
                    raise ValueError(str(err).replace(spec, agent_id)) from None
                found.reset()
                self._policies[key] = found
            return found

    def action_probs(
        self,
        agent_id: str,
        rules: Rules,
        observations: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.float32] | None:
        """What a learned agent thinks of each action (``None`` for agents without a network)."""
        policy = self.policy(agent_id, rules)
        if not isinstance(policy, ActionProbabilities):
            return None
        out: npt.NDArray[np.float32] = np.asarray(
            policy.action_probs(observations, masks), dtype=np.float32
        )
        return out

    def model_agent(self, agent_id: str, name: str) -> LLMAgent:
        """A fresh agent asking the language model ``agent_id`` (one per game and seat: its
        conversation and its records are the game's).

        Raises:
            UnknownAgentError: for an id not on offer.
            ValueError: for an agent that is no language model, or one that is unavailable
                (the reason, in one line).
        """
        from unolab.agents.llm.agent import LLMAgent

        entry = self.entry(agent_id)
        if entry.kind != "llm":
            raise ValueError(f"{agent_id} is not a language model")
        if entry.spec is None:
            raise ValueError(f"{entry.label} cannot play here: {entry.unavailable}")
        return LLMAgent.from_spec(entry.spec, name=name)
