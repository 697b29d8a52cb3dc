"""Model cards of the shipped agents, generated from their JSON metadata.

A card says what an agent is (algorithm, network, the rules and table size it plays, its
observation version), how it was made (the recipe: each stage's config and command, its
size, time and machine), how strong it is (every bot it was measured against, with the Wilson
95% interval, the hands and the seed) and what it is for and not for. Everything comes from
the agent's ``.json`` beside its weights, so the card cannot drift from the agent: the docs
site (``docs/agents/``), ``uno-lab agents`` and the browser's Lab tab all show the same text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_env.files import read_regular_text, shown
from uno_env.rules import PRESETS
from unolab.agents.agent_files import (
    EXPORT_HINT,
    MAX_METADATA_BYTES,
    metadata_object,
    parse_json,
)
from unolab.agents.registry import SEARCH_NAMES, SHIPPED_DIR, shipped_agent_names

__all__ = ["ModelCard", "StrengthRow", "card_markdown", "model_card", "model_cards"]

_WRITTEN_BEFORE_DESCRIPTIONS = {
    "ppo": "MaskablePPO (an actor-critic network)",
    "dqn": "masked DQN (a Q-network)",
    "imitation": "imitation (a network cloned from a teacher's decisions)",
}
"""What an algorithm trains, for agents whose metadata does not say it: an export records
its algorithm's description (``extra.algorithm_description``, from the training registry)."""


@dataclass(frozen=True)
class StrengthRow:
    """One measured pairing: the agent against a bot in every other seat."""

    opponent: str
    win_rate: float
    ci_low: float
    ci_high: float
    games: int


@dataclass(frozen=True)
class ModelCard:
    """What a shipped agent is, how it was made, how strong it is, and its limits.

    Attributes:
        name: The agent's name (its file stem).
        algorithm: How its network was trained (``ppo``, ``dqn``, ``imitation``).
        rules: The rules preset it matches (``custom`` when none does).
        num_players: Its table size.
        observation_version: The observation encoding it reads.
        network: Its hidden layers and activation, e.g. ``512-512 tanh``.
        training_steps: Learner steps of its training (``None`` for a clone).
        stages: The recipe, one line per stage: the command, its size and wall time.
        strength: Its measured win rates.
        strength_method: How they were measured.
        seed: The seed of the strength measurement.
        intended_use: What it is for.
        limits: What it is not for.
        method: How it was made, in words, where its algorithm's name says too little (an
            imitation of a search is expert iteration); ``""`` otherwise.
    """

    name: str
    algorithm: str
    rules: str
    num_players: int
    observation_version: int
    network: str
    training_steps: int | None
    stages: tuple[str, ...]
    strength: tuple[StrengthRow, ...]
    strength_method: str
    seed: int | None
    intended_use: str
    limits: tuple[str, ...]
    method: str = ""

    @property
    def title(self) -> str:
        """One line: the algorithm, the rules and the table size."""
        kind = self.method or _WRITTEN_BEFORE_DESCRIPTIONS.get(self.algorithm, self.algorithm)
        return f"{kind}, {self.rules} rules, {self.num_players} players"

    def to_dict(self) -> dict[str, Any]:
        """The card as plain JSON data (for the web's Lab tab)."""
        return {
            "name": self.name,
            "title": self.title,
            "algorithm": self.algorithm,
            "rules": self.rules,
            "num_players": self.num_players,
            "observation_version": self.observation_version,
            "network": self.network,
            "training_steps": self.training_steps,
            "recipe": list(self.stages),
            "strength": [vars(row) | {"seed": self.seed} for row in self.strength],
            "strength_method": self.strength_method,
            "intended_use": self.intended_use,
            "limits": list(self.limits),
        }


def _preset_of(rules: dict[str, Any]) -> str:
    """The preset whose switches these are (``custom`` when none matches)."""
    switches = {k: v for k, v in rules.items() if k != "num_players"}
    for name, preset in PRESETS.items():
        values = preset.to_dict()
        if {k: v for k, v in values.items() if k != "num_players"} == switches:
            return name
    return "custom"


def _command(stage: dict[str, Any]) -> str:
    """The command that ran a stage of the recipe, from its config.

    The metadata records the config's path in the checkout (``configs/ppo/official_2p.yaml``);
    the command names it as a shipped config (``ppo/official_2p``), which works from any folder.
    """
    config = str(stage.get("config", "?"))
    kind = "imitate" if "/imitate/" in config else "dqn" if "/dqn/" in config else "ppo"
    name = config.removeprefix("configs/").removesuffix(".yaml")
    command = f"uno-lab train {kind} --config {name}"
    if "init_from" in stage:
        command += f" --set init_from={stage['init_from']}"
    return command


def _stage_line(stage: dict[str, Any]) -> str:
    """A recipe stage: its command, then its size, its wall time and the machine's load."""
    parts = []
    if "decisions" in stage:
        parts.append(f"{int(stage['decisions']):,} decisions")
    if "steps" in stage:
        parts.append(f"{int(stage['steps']):,} steps")
    if "picked_at_steps" in stage:
        parts.append(f"the checkpoint at {int(stage['picked_at_steps']):,} kept")
    if "wall_seconds" in stage:
        parts.append(f"{int(stage['wall_seconds']):,} s on a 2-core CPU machine")
    if "wall_note" in stage:
        parts.append(str(stage["wall_note"]))
    detail = "; ".join(parts)
    return f"`{_command(stage)}`" + (f" ({detail})" if detail else "")


def _strength(extra: dict[str, Any]) -> tuple[tuple[StrengthRow, ...], str, int | None]:
    measured = extra.get("strength") or {}
    rows = tuple(
        StrengthRow(
            opponent=name,
            win_rate=float(row["win_rate"]),
            ci_low=float(row["ci_low"]),
            ci_high=float(row["ci_high"]),
            games=int(row["games"]),
        )
        for name, row in measured.items()
        if isinstance(row, dict) and "win_rate" in row
    )
    seed = measured.get("seed")
    method = str(measured.get("description", "")).strip()
    if method and not method.endswith("."):
        method += "."
    return rows, method, int(seed) if seed is not None else None


def _method(algorithm: str, extra: dict[str, Any]) -> str:
    """How an agent was made, where its algorithm's name says too little (else ``""``): the
    description its export recorded of its algorithm.

    A clone whose teachers include a search (``pimc``, ``ismcts``) learned from the search's
    decisions: that is expert iteration (docs/training.md), not the plain imitation of a bot.
    """
    teachers = extra.get("teachers")
    if algorithm != "imitation" or not isinstance(teachers, dict):
        described = extra.get("algorithm_description")
        return described.strip() if isinstance(described, str) else ""
    searches = sorted({str(t).partition(":")[0] for t in teachers} & set(SEARCH_NAMES))
    if not searches:
        return ""
    return (
        "imitation network refined by expert iteration (cloned from the decisions of the "
        f"{' and '.join(searches)} search)"
    )


def _limits(name: str, preset: str, num_players: int, version: int) -> tuple[str, ...]:
    return (
        f"It plays only the {preset} rules at {num_players} players: loading it for other "
        "rules or another table size is refused with an error naming the difference.",
        f"It reads observation version {version}; a lab whose encoding changed refuses it.",
        "Its strength is measured against the lab's bots only, on fresh deals; against people "
        "or search agents it may do worse, and an exploiter trained against it does better.",
        f"It acts from one seat's observation: it never sees hidden cards ({name} has no "
        "memory beyond what the observation's public history holds).",
    )


def model_card(meta_path: Path) -> ModelCard:
    """The card of the agent whose metadata is ``meta_path`` (an exported agent's ``.json``).

    Raises:
        ValueError: if the file cannot be read (missing, too large, not UTF-8: the message
            names it) or is not an agent's metadata.
    """
    text = read_regular_text(meta_path, MAX_METADATA_BYTES, "agent metadata")
    # Every key present first, as for loading the agent: a missing one named the same way.
    meta = metadata_object(
        parse_json(text.encode("utf-8"), str(meta_path), "metadata"), str(meta_path)
    )
    try:
        return _card_of(meta)
    except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as err:
        # Any file may be named: whatever its shape, one line naming it.
        reason = f"no field {shown(err.args[0])}" if isinstance(err, KeyError) else str(err)
        raise ValueError(
            f"{meta_path}: not an exported agent's metadata ({reason[:120]}); {EXPORT_HINT}"
        ) from None


def _card_of(meta: dict[str, Any]) -> ModelCard:
    """The card of parsed metadata (any malformed field raises; see :func:`model_card`)."""
    name = str(meta["name"])
    rules = dict(meta["rules"])
    extra = dict(meta.get("extra") or {})
    num_players = int(rules["num_players"])
    version = int(meta["obs_version"])
    network = f"{'-'.join(str(w) for w in meta['hidden'])} {meta['activation']}"
    preset = _preset_of(rules)
    stages = tuple(_stage_line(stage) for stage in extra.get("stages", ()))
    strength, method, seed = _strength(extra)
    algorithm = str(meta.get("algorithm", "?"))
    steps = extra.get("steps")
    use = (
        f"An opponent to play and to train against, and a baseline to compare new agents "
        f"with, at {preset}-rules UNO with {num_players} players."
    )
    return ModelCard(
        name=name,
        algorithm=algorithm,
        rules=preset,
        num_players=num_players,
        observation_version=version,
        network=network,
        training_steps=int(steps) if steps is not None else None,
        stages=stages,
        strength=strength,
        strength_method=method,
        seed=seed,
        intended_use=use,
        limits=_limits(name, preset, num_players, version),
        method=_method(algorithm, extra),
    )


def model_cards(folder: Path = SHIPPED_DIR) -> list[ModelCard]:
    """The cards of every shipped agent, by name."""
    if folder == SHIPPED_DIR:
        names = shipped_agent_names()
    else:
        names = tuple(sorted(p.stem for p in folder.glob("*.json")))
    return [model_card(folder / f"{name}.json") for name in names]


def card_markdown(card: ModelCard) -> str:
    """The card as a Markdown page."""
    lines = [
        f"# {card.name}",
        "",
        f"{card.title[0].upper()}{card.title[1:]}.",
        "",
        "| | |",
        "|---|---|",
        f"| Rules | {card.rules}, {card.num_players} players |",
        f"| Observation | version {card.observation_version} |",
        f"| Network | {card.network} |",
        f"| Algorithm | {card.algorithm} |",
    ]
    if card.training_steps is not None:
        lines.append(f"| Training steps | {card.training_steps:,} |")
    lines += ["", "## Recipe", ""]
    lines += [f"{i}. {stage}" for i, stage in enumerate(card.stages, 1)] or ["Not recorded."]
    lines += ["", "## Strength", ""]
    if card.strength:
        lines += [
            "| against | win rate | 95% interval | hands |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| `{row.opponent}` | {row.win_rate:.1%} | "
            f"[{row.ci_low:.1%}, {row.ci_high:.1%}] | {row.games:,} |"
            for row in card.strength
        ]
        lines += ["", f"Measured with seed {card.seed}. {card.strength_method}".rstrip()]
    else:
        lines.append("Not measured.")
    lines += ["", "## Intended use", "", card.intended_use, "", "## Known limits", ""]
    lines += [f"- {limit}" for limit in card.limits]
    return "\n".join(lines) + "\n"
