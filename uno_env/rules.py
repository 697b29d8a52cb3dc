"""The rules configuration shared by a batch of games.

``Rules()`` is the official Mattel rules (RULES.md §1-7). Every field is a switch; see
``docs/rules.md`` for the table of switches and defaults. Configs are frozen dataclasses and
are validated on construction: an unknown key or an impossible combination raises a
:class:`~uno_env.configuration.ConfigError` that names it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from uno_env.cards import DECK_SIZE, MAX_PLAYERS
from uno_env.configuration import ConfigError, from_mapping, load_yaml_mapping

__all__ = ["PRESETS", "Rules", "load_rules"]


@dataclass(frozen=True)
class Rules:
    """Rules of a batch of UNO games. The defaults are the official rules.

    Attributes:
        num_players: Players at the table, 2 to 10.
        hand_size: Cards dealt to each player.
        draw_rule: ``"one"``: a voluntary draw takes one card (official).
        draw_cap: Most cards drawn by ``draw_rule: until_playable`` (house rules).
        wd4_challenge: A Wild Draw Four may be challenged; an illegal one is always offered
            and punished only if challenged. Off: an illegal one is masked out.
        wd4_anytime: A Wild Draw Four is always legal and never challenged.
        uno_call: Declaring "UNO" is a real decision, and failing to is catchable.
        uno_penalty: Cards drawn by a caught player.
        two_player_rules: The two-player rules (Reverse acts as Skip). ``None`` means on
            exactly when there are two players.
        scoring: ``"winner_takes"``: the winner scores the opponents' cards (official).
        target_score: Match score that ends the match.
        max_turns: Decisions after which a hand is truncated (never a false win).
        starter_redraw_wilds: Reshuffle on any wild starter, not just Wild Draw Four.
    """

    num_players: int = 4
    hand_size: int = 7
    draw_rule: Literal["one"] = "one"
    draw_cap: int = 10
    wd4_challenge: bool = True
    wd4_anytime: bool = False
    uno_call: bool = True
    uno_penalty: int = 2
    two_player_rules: bool | None = None
    scoring: Literal["winner_takes"] = "winner_takes"
    target_score: int = 500
    max_turns: int = 3000
    starter_redraw_wilds: bool = False

    def __post_init__(self) -> None:
        if not 2 <= self.num_players <= MAX_PLAYERS:
            raise ConfigError(f"num_players must be 2..{MAX_PLAYERS}, got {self.num_players}")
        if self.hand_size < 1 or self.num_players * self.hand_size + 1 > DECK_SIZE - 8:
            raise ConfigError(
                f"hand_size {self.hand_size} with {self.num_players} players must be >= 1 and "
                f"leave a starter card and a draw pile: num_players * hand_size <= {DECK_SIZE - 9}"
            )
        if self.draw_cap < 1:
            raise ConfigError(f"draw_cap must be >= 1, got {self.draw_cap}")
        if self.uno_penalty < 0:
            raise ConfigError(f"uno_penalty must be >= 0, got {self.uno_penalty}")
        if self.target_score < 1:
            raise ConfigError(f"target_score must be >= 1, got {self.target_score}")
        if self.max_turns < 1:
            raise ConfigError(f"max_turns must be >= 1, got {self.max_turns}")
        if self.wd4_anytime and self.wd4_challenge:
            raise ConfigError(
                "wd4_anytime makes every Wild Draw Four legal, so it cannot be challenged: "
                "set wd4_challenge: false with wd4_anytime: true"
            )
        if self.two_player_rules and self.num_players != 2:
            raise ConfigError(f"two_player_rules needs num_players == 2, got {self.num_players}")

    @property
    def two_player(self) -> bool:
        """Whether the two-player rules of RULES.md §4 apply."""
        if self.two_player_rules is None:
            return self.num_players == 2
        return self.two_player_rules

    def replace(self, **changes: Any) -> Rules:
        """Return a copy with some fields changed (validated like any config)."""
        return from_mapping(Rules, {**self.to_dict(), **changes}, where="rules")

    def to_dict(self) -> dict[str, Any]:
        """Return the rules as a plain mapping (for YAML, JSON and checkpoints)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "rules") -> Rules:
        """Build validated rules from a mapping; errors name the bad key and allowed values."""
        return from_mapping(cls, data, where=where)


PRESETS: dict[str, Rules] = {
    "official": Rules(),
}
"""Named rule sets. ``official`` is the default."""


def load_rules(
    spec: str | Path | Mapping[str, Any] | Rules | None = None, **overrides: Any
) -> Rules:
    """Resolve a preset name, a YAML path, a mapping or a Rules object into validated Rules.

    A mapping or YAML file may name a ``preset`` to start from; its other keys override it.

    Args:
        spec: ``None`` (official), a preset name, a path to a YAML file, a mapping or Rules.
        **overrides: Fields to change on top of ``spec``.

    Raises:
        ConfigError: for an unknown preset, a missing file, an unknown key or a bad value.
    """
    if spec is None:
        base = PRESETS["official"]
    elif isinstance(spec, Rules):
        base = spec
    elif isinstance(spec, Mapping):
        data = dict(spec)
        preset = data.pop("preset", "official")
        base = load_rules(preset).replace(**data) if data else load_rules(preset)
    else:
        text = str(spec)
        if text in PRESETS:
            base = PRESETS[text]
        elif text.endswith((".yaml", ".yml")) or Path(text).is_file():
            base = load_rules(load_yaml_mapping(text))
        else:
            raise ConfigError(
                f"unknown rules preset {text!r}; choose one of {sorted(PRESETS)} or give a "
                "path to a YAML file"
            )
    return base.replace(**overrides) if overrides else base
