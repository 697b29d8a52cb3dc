"""The rules configuration shared by a batch of games.

``Rules()`` is the official Mattel rules (docs/rules.md §1-14). Every field is a switch; see
``docs/rules.md`` for the table of switches and defaults. Configs are frozen dataclasses and
are validated on construction: an unknown key or an impossible combination raises a
:class:`~uno_env.config_values.ConfigError` that names it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from uno_env.cards import DECK_SIZE, MAX_PLAYERS
from uno_env.config_values import ConfigError, check_int, from_mapping
from uno_env.configuration import load_yaml_mapping
from uno_env.files import shown

__all__ = [
    "DEFAULT_NUM_PLAYERS",
    "PRESETS",
    "Rules",
    "allowed_values",
    "load_rules",
    "rules_table",
    "switch_descriptions",
]

DEFAULT_NUM_PLAYERS = 2
"""The table size when none is given, everywhere: the rules, the envs, training, tournaments,
``uno-lab play`` and the browser table (the size of the shipped agents' table)."""

MAX_TURNS_LIMIT = 2**19
"""``max_turns`` must stay below this: per-turn random streams are numbered by turn."""

MAX_DRAW = DECK_SIZE
"""Most cards a rule may make a player draw at once (``uno_penalty``, ``draw_cap``): no draw
can take more cards than the deck holds, and larger numbers overflow the compiled engine."""

MAX_TARGET_SCORE = 1_000_000
"""Largest ``target_score``: match scores are 32-bit, and a hand scores a few hundred points,
so a million points is already thousands of hands."""

_INT_FIELDS = ("num_players", "hand_size", "draw_cap", "uno_penalty", "target_score", "max_turns")
"""The integer rule parameters: a bool or a float given for one of them is refused."""


@dataclass(frozen=True)
class Rules:
    """Rules of a batch of UNO games. The defaults are the official rules.

    The switches are documented, with their defaults, in ``docs/rules.md``; their exact
    semantics are in ``docs/engine.md``.

    Attributes:
        num_players: Players at the table, 2 to 10.
        hand_size: Cards dealt to each player.
        draw_rule: ``"one"``: a voluntary draw takes one card (official);
            ``"until_playable"``: draw until a playable card, at most ``draw_cap`` cards.
        draw_cap: Most cards drawn by ``draw_rule: until_playable``.
        voluntary_draw: A player may draw instead of playing. False: only when stuck.
        after_draw: ``"choose"``: a playable drawn card may be played or kept (official);
            ``"rlcard"``: RLCard's automatic play of a drawn wild or current-colour card.
        wd4_challenge: A Wild Draw Four may be challenged; an illegal one is always offered
            and punished only if challenged. Off: an illegal one is masked out.
        wd4_anytime: A Wild Draw Four is always legal and never challenged.
        wd4_last_resort: A Wild Draw Four is legal only when no other play is (RLCard).
        uno_call: Declaring "UNO" is a real decision, and failing to is catchable.
        uno_penalty: Cards drawn by a caught player.
        two_player_rules: The two-player rules (Reverse acts as Skip). ``None`` means on
            exactly when there are two players.
        stack_draw_two: A Draw Two may be answered with a Draw Two.
        stack_draw_four: A Wild Draw Four may be answered with a Wild Draw Four.
        stack_draw_two_on_four: A Draw Two of the named colour may answer a Wild Draw Four.
        stack_draw_four_on_two: A Wild Draw Four may answer a Draw Two.
        stack_cumulative: Stacked penalties add up (else the original penalty passes on).
        reverse_deflects: A Reverse of the current colour sends a draw penalty back.
        jump_in: A player holding the identical card may play it out of turn.
        seven_zero: A 0 rotates all hands; a 7 swaps hands with a chosen player.
        colours_in_circle: A wild names the next colour in the cycle R, Y, G, B.
        play_to_last: The hand goes on until one player is left (full finishing order).
        teams: Four players in two teams of partners sitting opposite.
        scoring: ``"winner_takes"`` (official) or ``"penalty_points"`` (lowest total wins).
        zero_scores_fifty: A lone 0 left in a hand counts 50 points.
        target_score: Match score that ends the match.
        max_turns: Decisions after which a hand is truncated (never a false win).
        starter_redraw_wilds: Reshuffle on any wild starter, not just Wild Draw Four.
        starter_draw_two_skips: A Draw Two starter skips the first player (official). False:
            the first player draws two and still plays (RLCard).
        starter_wild_colour: ``"choose"``: the first player names a Wild starter's colour;
            ``"random"``: it is drawn at random (RLCard).
        reshuffle_top: The reshuffle takes the top discard too (RLCard).
        seat_draw_streams: An engine option for tournaments, not a rule: each seat's k-th draw
            is a uniform pick from the stock driven by that seat's k-th random number, so
            that duplicate deals replayed under other seatings stay correlated. The
            distribution of the game is unchanged.
    """

    num_players: int = DEFAULT_NUM_PLAYERS
    hand_size: int = 7
    draw_rule: Literal["one", "until_playable"] = "one"
    draw_cap: int = 10
    voluntary_draw: bool = True
    after_draw: Literal["choose", "rlcard"] = "choose"
    wd4_challenge: bool = True
    wd4_anytime: bool = False
    wd4_last_resort: bool = False
    uno_call: bool = True
    uno_penalty: int = 2
    two_player_rules: bool | None = None
    stack_draw_two: bool = False
    stack_draw_four: bool = False
    stack_draw_two_on_four: bool = False
    stack_draw_four_on_two: bool = False
    stack_cumulative: bool = False
    reverse_deflects: bool = False
    jump_in: bool = False
    seven_zero: bool = False
    colours_in_circle: bool = False
    play_to_last: bool = False
    teams: bool = False
    scoring: Literal["winner_takes", "penalty_points"] = "winner_takes"
    zero_scores_fifty: bool = False
    target_score: int = 500
    max_turns: int = 3000
    starter_redraw_wilds: bool = False
    starter_draw_two_skips: bool = True
    starter_wild_colour: Literal["choose", "random"] = "choose"
    reshuffle_top: bool = False
    seat_draw_streams: bool = False

    def __post_init__(self) -> None:
        # Bounds: num_players 2..MAX_PLAYERS (seats are int8 and the tables are built for
        # 10); hand_size leaves a starter and a draw pile; draw_cap 1..MAX_DRAW and
        # uno_penalty 0..MAX_DRAW (no draw takes more than the deck); target_score
        # 1..MAX_TARGET_SCORE (32-bit scores); max_turns below MAX_TURNS_LIMIT (turn-numbered
        # random streams).
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name}: expected an integer, got {value!r}")
        if not 2 <= self.num_players <= MAX_PLAYERS:
            raise ConfigError(f"num_players must be 2..{MAX_PLAYERS}, got {self.num_players}")
        if self.hand_size < 1 or self.num_players * self.hand_size + 1 > DECK_SIZE - 8:
            raise ConfigError(
                f"hand_size {self.hand_size} with {self.num_players} players must be >= 1 and "
                f"leave a starter card and a draw pile: num_players * hand_size <= {DECK_SIZE - 9}"
            )
        check_int("draw_cap", self.draw_cap, 1, MAX_DRAW, "no draw takes more than the deck")
        check_int("uno_penalty", self.uno_penalty, 0, MAX_DRAW, "no draw takes more than the deck")
        check_int("target_score", self.target_score, 1, MAX_TARGET_SCORE, "match scores are 32-bit")
        if not 1 <= self.max_turns < MAX_TURNS_LIMIT:
            raise ConfigError(
                f"max_turns must be in 1..{MAX_TURNS_LIMIT - 1}, got {self.max_turns}"
            )
        wd4_modes = [
            name
            for name in ("wd4_challenge", "wd4_anytime", "wd4_last_resort")
            if getattr(self, name)
        ]
        if len(wd4_modes) > 1:
            raise ConfigError(
                f"{' and '.join(wd4_modes)} contradict each other: choose at most one of "
                "wd4_challenge (official), wd4_anytime and wd4_last_resort"
            )
        if self.two_player_rules and self.num_players != 2:
            raise ConfigError(f"two_player_rules needs num_players == 2, got {self.num_players}")
        if self.teams and self.num_players != 4:
            raise ConfigError(
                f"teams needs num_players == 4 (partners sit opposite), got {self.num_players}"
            )
        if self.teams and self.play_to_last:
            raise ConfigError(
                "teams and play_to_last cannot be combined: a team hand ends when "
                "either partner goes out"
            )
        if self.stack_cumulative and not self.stacking:
            raise ConfigError(
                "stack_cumulative needs a stacking rule: set one of stack_draw_two, "
                "stack_draw_four, stack_draw_two_on_four, stack_draw_four_on_two"
            )
        if self.after_draw == "rlcard" and self.draw_rule != "one":
            raise ConfigError('after_draw: "rlcard" draws exactly one card: needs draw_rule: one')

    def game_rules(self) -> Rules:
        """These rules without the engine options that do not change the game."""
        return self.replace(seat_draw_streams=False) if self.seat_draw_streams else self

    @property
    def stacking(self) -> bool:
        """Whether any stacking rule is on."""
        return (
            self.stack_draw_two
            or self.stack_draw_four
            or self.stack_draw_two_on_four
            or self.stack_draw_four_on_two
        )

    @property
    def two_player(self) -> bool:
        """Whether the two-player rules of docs/rules.md §9 apply."""
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
    "street": Rules(
        stack_draw_two=True,
        stack_draw_four=True,
        stack_cumulative=True,
        draw_rule="until_playable",
        jump_in=True,
    ),
    "seven_zero": Rules(seven_zero=True),
    "rlcard": Rules(
        num_players=2,
        voluntary_draw=False,
        after_draw="rlcard",
        wd4_challenge=False,
        wd4_last_resort=True,
        uno_call=False,
        two_player_rules=False,
        starter_draw_two_skips=False,
        starter_wild_colour="random",
        reshuffle_top=True,
    ),
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
        ConfigError: for an unknown preset, a missing or invalid file, a ``preset`` chain that
            comes back to a file it started from, an unknown key or a bad value.
    """
    base = _resolve_rules(spec, where="rules", chain=())
    return base.replace(**overrides) if overrides else base


def _names_a_file(text: str) -> bool:
    """Whether ``text`` names an existing path, a symlink to nothing or a loop included (a
    name the system refuses names none)."""
    try:
        return os.path.lexists(text)
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        return False


def _resolve_rules(
    spec: object, where: str, chain: tuple[Path, ...], beside: Path | None = None
) -> Rules:
    """:func:`load_rules` without the overrides; ``chain`` holds the YAML files being read
    (resolved), so that a ``preset`` naming one of them is reported instead of recursing.
    ``beside`` is the folder of the rules file being read: a relative ``preset`` path in it
    means a file beside it, wherever the command runs."""
    if spec is None:
        return PRESETS["official"]
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, Mapping):
        data = dict(spec)
        preset = data.pop("preset", "official")
        if preset is not None and not isinstance(preset, (str, Path, Mapping)):
            raise ConfigError(
                f"{where}.preset: expected a preset name ({', '.join(PRESETS)}) or the path of "
                f"a YAML file, got {shown(preset)}"
            )
        base = _resolve_rules(preset, where=f"{where}.preset", chain=chain, beside=beside)
        if not data:
            return base
        return from_mapping(Rules, {**base.to_dict(), **data}, where=where)
    text = str(spec)
    if text in PRESETS:
        return PRESETS[text]
    if not text.strip():
        raise ConfigError(
            f"{where}: {shown(text)} is an empty rules preset; choose one of {sorted(PRESETS)} "
            "or give a path "
            "to a YAML file"
        )
    given = text
    if beside is not None and not Path(text).is_absolute():
        text = str(beside / text)
    if text.endswith((".yaml", ".yml")) or _names_a_file(text):
        try:
            resolved = Path(text).resolve()
        except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL: reported below
            resolved = Path(text).absolute()
        if resolved in chain:
            files = " -> ".join(str(path) for path in (*chain, resolved))
            raise ConfigError(
                f"{where}: the rules presets form a cycle ({files}); a rules file may not "
                "name itself, directly or through other files, as its preset"
            )
        return _resolve_rules(
            load_yaml_mapping(text), where=text, chain=(*chain, resolved), beside=Path(text).parent
        )
    raise ConfigError(
        f"{where}: unknown rules preset {shown(given)}; choose one of {sorted(PRESETS)} or give a "
        "path to a YAML file"
    )


def switch_descriptions() -> dict[str, str]:
    """The one-line meaning of each field, read from the Rules docstring."""
    doc = Rules.__doc__ or ""
    out: dict[str, str] = {}
    current = ""
    for line in doc.split("Attributes:")[1].splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        head, sep, rest = stripped.partition(": ")
        if sep and head in Rules.__dataclass_fields__:
            current = head
            out[current] = rest
        elif current:
            out[current] += " " + stripped
    return out


_RST_LITERAL = re.compile(r"``([^`]+)``")
_RST_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]+\.)?([^`.]+)`")


def _plain(text: str, markdown: bool) -> str:
    """Docstring text without reStructuredText markup: Markdown code spans, or bare words."""
    code = r"`\1`" if markdown else r"\1"
    return _RST_ROLE.sub(code, _RST_LITERAL.sub(code, text))


def allowed_values(field: dataclasses.Field[Any]) -> str:
    """The values a field accepts, in words (its type hint read as text)."""
    hint = str(field.type)
    if hint.startswith("Literal["):
        choices = [choice.strip(" '\"") for choice in hint[len("Literal[") : -1].split(",")]
        return ", ".join(choices[:-1]) + " or " + choices[-1]
    return {"bool": "True or False", "bool | None": "True, False or None"}.get(hint, hint)


def rules_table(markdown: bool = False, width: int = 80) -> str:
    """Every switch of :class:`Rules`: its default, its values, its meaning and the presets
    that change it.

    ``uno-lab rules`` prints the plain-text form; ``docs/rules.md`` embeds both forms (a test
    keeps them in step with the code).

    Args:
        markdown: True for a Markdown table; False for plain text, one block per switch,
            wrapped to ``width`` columns, without any markup.
        width: Most characters on a line of the plain-text form.

    Returns:
        The table as one string, without a trailing newline.
    """
    descriptions = switch_descriptions()
    default = Rules()
    lines = (
        [
            "| switch | default | values | meaning | presets that change it |",
            "|---|---|---|---|---|",
        ]
        if markdown
        else []
    )
    for f in dataclasses.fields(Rules):
        meaning = _plain(descriptions.get(f.name, ""), markdown)
        value = getattr(default, f.name)
        changed = [
            (name, getattr(preset, f.name))
            for name, preset in PRESETS.items()
            if getattr(preset, f.name) != value
        ]
        if markdown:
            presets = ", ".join(f"{name}: `{new}`" for name, new in changed)
            lines.append(
                f"| `{f.name}` | `{value}` | {allowed_values(f)} | {meaning} | {presets} |"
            )
            continue
        if changed:
            meaning += " Changed by " + ", ".join(f"{name} ({new})" for name, new in changed)
            meaning += "."
        lines += textwrap.wrap(
            f"{f.name}: {value}  ({allowed_values(f)})",
            width,
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines += textwrap.wrap(
            meaning,
            width,
            initial_indent="    ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines.append("")
    return "\n".join(lines).rstrip("\n")
