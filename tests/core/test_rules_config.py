"""The rules configuration: validation, presets, YAML and the documented switch table."""

from __future__ import annotations

import pytest
from support import ROOT

from uno_env import ConfigError, Rules, load_rules
from uno_env.rules import PRESETS, rules_table


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_yaml_preset_files_match_the_presets(name: str) -> None:
    assert load_rules(ROOT / "configs" / "rules" / f"{name}.yaml") == PRESETS[name]


def test_every_preset_has_a_yaml_file() -> None:
    files = {p.stem for p in (ROOT / "configs" / "rules").glob("*.yaml")}
    assert files == set(PRESETS)


def test_docs_table_is_up_to_date() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    assert rules_table() in text, "regenerate the table in docs/rules.md from rules_table()"


def test_default_is_official() -> None:
    assert load_rules() == Rules() == PRESETS["official"]


def test_overrides_and_preset_key_in_mapping() -> None:
    rules = load_rules({"preset": "street", "num_players": 3})
    assert rules.jump_in and rules.num_players == 3 and rules.stack_cumulative


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"nonsense": True}, "unknown key(s) ['nonsense']"),
        ({"num_players": 11}, "num_players must be 2..10"),
        ({"teams": True, "num_players": 3}, "teams needs num_players == 4"),
        (
            {"teams": True, "play_to_last": True, "num_players": 4},
            "teams and play_to_last cannot be combined",
        ),
        ({"wd4_last_resort": True}, "wd4_challenge and wd4_last_resort contradict"),
        ({"stack_cumulative": True}, "stack_cumulative needs a stacking rule"),
        ({"draw_rule": "sometimes"}, "choose one of ['one', 'until_playable']"),
        ({"jump_in": "yes"}, "expected true or false"),
        ({"two_player_rules": True, "num_players": 3}, "two_player_rules needs num_players == 2"),
        ({"hand_size": 12, "num_players": 10}, "hand_size 12 with 10 players"),
        ({"max_turns": 2**19}, "max_turns must be in"),
        ({"after_draw": "rlcard", "draw_rule": "until_playable"}, "draws exactly one card"),
    ],
)
def test_bad_configs_are_rejected_with_a_clear_message(fields: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        Rules.from_dict(fields)
    assert message in str(err.value)


def test_unknown_preset_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="unknown rules preset 'nope'; choose one of"):
        load_rules("nope")


def test_missing_yaml_file() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_rules("configs/rules/missing.yaml")


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.num_players = 3  # type: ignore[misc]
    assert hash(rules) == hash(Rules())
