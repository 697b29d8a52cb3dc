"""`RuleParams` (what the compiled step reads) is tied to `Rules` (what a user sets).

`RuleParams` is the one hand-kept copy of the switches: these tests fail when a field is
added to `Rules` without a decision about how the compiled rules see it, when a
`RuleParams` field is fed by no switch, and when a switch stops reaching its field.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from uno_env.core.params import RuleParams, rule_params
from uno_env.rules import Rules

# Each Rules field: the RuleParams fields it feeds, and a setting (applied on top of the
# official rules, with whatever it needs to be legal) under which the field changes.
FEEDS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "num_players": (("num_players", "two_player"), {"num_players": 3}),
    "draw_rule": (("until_playable",), {"draw_rule": "until_playable"}),
    "draw_cap": (("draw_cap",), {"draw_cap": 3}),
    "voluntary_draw": (("voluntary_draw",), {"voluntary_draw": False}),
    "after_draw": (("rlcard_after_draw",), {"after_draw": "rlcard"}),
    "wd4_challenge": (("wd4_challenge",), {"wd4_challenge": False}),
    "wd4_anytime": (("wd4_anytime",), {"wd4_challenge": False, "wd4_anytime": True}),
    "wd4_last_resort": (
        ("wd4_last_resort",),
        {"wd4_challenge": False, "wd4_last_resort": True},
    ),
    "uno_call": (("uno_call",), {"uno_call": False}),
    "uno_penalty": (("uno_penalty",), {"uno_penalty": 4}),
    "two_player_rules": (("two_player",), {"two_player_rules": False}),
    "stack_draw_two": (("respond_to_two", "stack_table"), {"stack_draw_two": True}),
    "stack_draw_four": (("respond_to_four", "stack_table"), {"stack_draw_four": True}),
    "stack_draw_two_on_four": (
        ("respond_to_four", "stack_table"),
        {"stack_draw_two_on_four": True},
    ),
    "stack_draw_four_on_two": (
        ("respond_to_two", "stack_table"),
        {"stack_draw_four_on_two": True},
    ),
    "stack_cumulative": (
        ("stack_cumulative",),
        {"stack_draw_two": True, "stack_cumulative": True},
    ),
    "reverse_deflects": (
        ("respond_to_two", "respond_to_four", "stack_table"),
        {"reverse_deflects": True},
    ),
    "jump_in": (("jump_in",), {"jump_in": True}),
    "seven_zero": (("seven_zero",), {"seven_zero": True}),
    "colours_in_circle": (("colours_in_circle",), {"colours_in_circle": True}),
    "play_to_last": (("play_to_last",), {"play_to_last": True}),
    "teams": (("teams",), {"num_players": 4, "teams": True}),
    "scoring": (("penalty_points",), {"scoring": "penalty_points"}),
    "zero_scores_fifty": (("zero_scores_fifty",), {"zero_scores_fifty": True}),
    "target_score": (("target_score",), {"target_score": 100}),
    "max_turns": (("max_turns",), {"max_turns": 100}),
    "starter_redraw_wilds": (("starter_redraw_wilds",), {"starter_redraw_wilds": True}),
    "starter_draw_two_skips": (
        ("starter_draw_two_skips",),
        {"starter_draw_two_skips": False},
    ),
    "starter_wild_colour": (
        ("starter_wild_colour_random",),
        {"starter_wild_colour": "random"},
    ),
    "reshuffle_top": (("reshuffle_top",), {"reshuffle_top": True}),
    "seat_draw_streams": (("seat_draw_streams",), {"seat_draw_streams": True}),
}

# Rules fields the compiled step does not read, and where they are read instead.
NOT_COMPILED: dict[str, str] = {
    "hand_size": "the deal (uno_env.core.setup reads the Rules object itself)",
}


def test_every_switch_is_either_compiled_or_declared_outside() -> None:
    names = {field.name for field in dataclasses.fields(Rules)}
    assert names == set(FEEDS) | set(NOT_COMPILED), (
        "a Rules field without a decision: add it to FEEDS (and to RuleParams and "
        "rule_params) or to NOT_COMPILED, see docs/engine.md 'Adding a house rule'"
    )
    assert not set(FEEDS) & set(NOT_COMPILED)


def test_every_compiled_field_is_fed_by_a_switch() -> None:
    fed = {target for targets, _ in FEEDS.values() for target in targets}
    assert fed == set(RuleParams._fields)


@pytest.mark.parametrize("switch", sorted(FEEDS))
def test_a_switch_reaches_the_fields_it_feeds(switch: str) -> None:
    targets, setting = FEEDS[switch]
    official, changed = rule_params(Rules()), rule_params(Rules().replace(**setting))
    for name in RuleParams._fields:
        before, after = getattr(official, name), getattr(changed, name)
        moved = bool((before != after).any()) if name == "stack_table" else before != after
        if name in targets:
            assert moved, f"{switch}={setting[switch]!r} does not reach RuleParams.{name}"


@pytest.mark.parametrize("switch", sorted(NOT_COMPILED))
def test_a_switch_outside_the_step_leaves_the_params_alone(switch: str) -> None:
    official = rule_params(Rules())
    changed = rule_params(Rules().replace(**{switch: 5}))
    for name in RuleParams._fields:
        before, after = getattr(official, name), getattr(changed, name)
        same = bool((before == after).all()) if name == "stack_table" else before == after
        assert same, f"{switch} changes RuleParams.{name}: move it to FEEDS"
