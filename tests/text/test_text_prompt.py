"""The prompt: its ``Legal moves:`` contract, the options, and the rules in words."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from text_states import RULE_SETS, decisions

from uno_env import cards as C
from uno_env import core
from uno_env.config_values import ConfigError
from uno_env.rules import PRESETS, Rules, load_rules
from uno_env.text.prompt import (
    LEGAL_MOVES,
    PromptOptions,
    choice_labels,
    decision_prompt,
    system_prompt,
)
from uno_env.text.rules_words import rules_in_words
from uno_env.text.view import seat_view

GLOSS = re.compile(r" \([^)]*\)")


def read_legal_moves(text: str, letters: bool) -> dict[str, int]:
    """A scripted reader of the contract: only the ``Legal moves:`` line is read."""
    lines = [line for line in text.splitlines() if line.startswith(LEGAL_MOVES)]
    assert len(lines) == 1, text
    items = GLOSS.sub("", lines[0][len(LEGAL_MOVES) :]).split(", ")
    out = {}
    for item in items:
        label, _, name = item.partition(") ") if letters else (item, "", item)
        out[label] = C.parse_action(name)
    return out


def _view(rules: Rules, legal: list[str] | None = None, seed: int = 2) -> dict[str, Any]:
    state = next(
        s
        for s in decisions(rules, seed=seed, games=4, steps=50)
        if int(s.phase[0]) == core.PLAY and int(s.turn[0]) > 2
    )
    view = seat_view(rules, state, int(state.current[0]))
    return view if legal is None else dict(view, legal_moves=legal)


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            PromptOptions(),
            "Legal moves: G7 (green 7), W:B (wild, name blue), W+4:R (wild draw four, name "
            "red), draw (draw a card)",
        ),
        (PromptOptions(glosses=False), "Legal moves: G7, W:B, W+4:R, draw"),
        (
            PromptOptions(choices="letters"),
            "Legal moves: A) G7 (green 7), B) W:B (wild, name blue), C) W+4:R (wild draw four, "
            "name red), D) draw (draw a card)",
        ),
        (
            PromptOptions(choices="letters", glosses=False),
            "Legal moves: A) G7, B) W:B, C) W+4:R, D) draw",
        ),
    ],
)
def test_the_legal_moves_line_has_its_exact_format(options: PromptOptions, line: str) -> None:
    view = _view(Rules(), ["G7", "W:B", "W+4:R", "draw"])
    prompt = decision_prompt(view, options)
    assert [x for x in prompt.text.splitlines() if x.startswith("Legal moves")] == [line]
    ids = [C.parse_action(name) for name in ("G7", "W:B", "W+4:R", "draw")]
    labels = (
        ["A", "B", "C", "D"] if options.choices == "letters" else ["G7", "W:B", "W+4:R", "draw"]
    )
    assert prompt.choices == dict(zip(labels, ids, strict=True))
    assert read_legal_moves(prompt.text, options.choices == "letters") == prompt.choices


def test_glosses_of_the_other_moves() -> None:
    view = _view(
        load_rules(num_players=4),
        ["keep", "challenge", "accept", "uno", "catch", "pass", "colour:G", "swap:1", "swap:3"],
    )
    view = dict(view, seat=1, pending_penalty=4, catchable_seat=3)
    line = next(
        x for x in decision_prompt(view, PromptOptions()).text.splitlines() if x.startswith("Legal")
    )
    assert line == (
        "Legal moves: keep (keep the drawn card), challenge (challenge the Wild Draw Four), "
        "accept (draw 4), uno (call UNO), catch (catch seat 3 without UNO), pass (do not jump "
        "in), colour:G (name green), swap:1 (swap hands with seat 2), swap:3 (swap hands "
        "with seat 0)"
    )


def test_without_listed_moves_there_is_no_line_but_the_choices_remain() -> None:
    view = _view(Rules())
    prompt = decision_prompt(view, PromptOptions(list_moves=False))
    assert "Legal moves" not in prompt.text
    assert list(prompt.choices) == view["legal_moves"]


def test_the_changes_view_tells_what_happened_and_the_decision() -> None:
    view = _view(Rules())
    full = decision_prompt(view, PromptOptions(view="changes")).text
    assert full == decision_prompt(view, PromptOptions()).text  # nothing to tell yet
    short = decision_prompt(view, PromptOptions(view="changes"), ["Seat 1 played G5."]).text
    assert short.startswith("Since your last decision:\n- Seat 1 played G5.\n")
    assert "Your hand" in short and "Match scores" not in short
    assert "Seat 1 played" not in decision_prompt(view, PromptOptions(), ["Seat 1 played G5."]).text


def test_a_view_without_a_decision_is_refused() -> None:
    view = dict(_view(Rules()), decision=None, legal_moves=[])
    with pytest.raises(ValueError, match="no decision"):
        decision_prompt(view, PromptOptions())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"view": "all"}, "view: expected 'full' or 'changes', got 'all'"),
        ({"choices": "numbers"}, "choices: expected 'names' or 'letters'"),
        ({"glosses": "yes"}, "glosses: expected true or false"),
        ({"list_moves": 1}, "list_moves: expected true or false"),
        ({"choices": "letters", "list_moves": False}, "needs list_moves"),
    ],
)
def test_bad_options_are_named(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        PromptOptions(**changes)


def test_choice_labels_go_past_z() -> None:
    assert choice_labels(3) == ["A", "B", "C"]
    labels = choice_labels(30)
    assert labels[25:] == ["Z", "AA", "AB", "AC", "AD"] and len(set(labels)) == 30


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_reader_of_the_line_recovers_exactly_the_legal_moves(name: str) -> None:
    """Thousands of random decisions, both modes, with and without glosses."""
    rules = RULE_SETS[name]
    seen: Counter[str] = Counter()
    count = 0
    options = [
        PromptOptions(),
        PromptOptions(glosses=False),
        PromptOptions(choices="letters"),
        PromptOptions(choices="letters", glosses=False),
    ]
    dealt = core.init(rules, 300, seed=4)  # Wild starters: a colour to name
    starters = [dealt.select(np.array([g])) for g in range(300)]
    for i, state in enumerate([*starters, *decisions(rules, seed=21, games=16, steps=160)]):
        if not bool(state.live[0]):
            continue
        legal = set(np.flatnonzero(core.legal_action_mask(rules, state)[0]).tolist())
        view = seat_view(rules, state, int(state.current[0]))
        opts = options[i % 4]
        prompt = decision_prompt(view, opts)
        read = read_legal_moves(prompt.text, opts.choices == "letters")
        assert set(read.values()) == legal and read == prompt.choices
        seen.update(C.action_name(a).split(":")[0] for a in legal)
        count += 1
    assert count >= 2000
    assert {"draw"} <= set(seen)
    if name != "rlcard":
        assert {"keep", "uno", "catch", "colour"} <= set(seen), seen
    if rules.wd4_challenge:
        assert "challenge" in seen, seen
    if rules.wd4_challenge and not rules.stacking:
        assert "accept" in seen, seen
    if rules.seven_zero:
        assert "swap" in seen
    if rules.jump_in:
        assert "pass" in seen


CODE_WORDS = re.compile(
    r"\b(True|False|None|until_playable|winner_takes|penalty_points|rlcard)\b|_"
)
"""Config words: values of the switches as a config file spells them, and switch names."""


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_is_told_in_plain_words(preset: str) -> None:
    text = rules_in_words(PRESETS[preset])
    assert text and CODE_WORDS.search(text) is None, text
    system = system_prompt(PRESETS[preset], PromptOptions())
    assert text in system and "Final answer:" in system and "<action>" in system
    assert "letter" in system_prompt(PRESETS[preset], PromptOptions(choices="letters"))


# One change per switch, each from a base where it changes the game.
SWITCHES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "num_players": ({}, {"num_players": 3}),
    "hand_size": ({}, {"hand_size": 6}),
    "draw_rule": ({}, {"draw_rule": "until_playable"}),
    "draw_cap": ({"draw_rule": "until_playable"}, {"draw_cap": 5}),
    "voluntary_draw": ({}, {"voluntary_draw": False}),
    "after_draw": ({}, {"after_draw": "rlcard"}),
    "wd4_challenge": ({}, {"wd4_challenge": False}),
    "wd4_anytime": ({"wd4_challenge": False}, {"wd4_anytime": True}),
    "wd4_last_resort": ({"wd4_challenge": False}, {"wd4_last_resort": True}),
    "uno_call": ({}, {"uno_call": False}),
    "uno_penalty": ({}, {"uno_penalty": 4}),
    "two_player_rules": ({}, {"two_player_rules": False}),
    "stack_draw_two": ({}, {"stack_draw_two": True}),
    "stack_draw_four": ({}, {"stack_draw_four": True}),
    "stack_draw_two_on_four": ({}, {"stack_draw_two_on_four": True}),
    "stack_draw_four_on_two": ({}, {"stack_draw_four_on_two": True}),
    "stack_cumulative": ({"stack_draw_two": True}, {"stack_cumulative": True}),
    "reverse_deflects": ({}, {"reverse_deflects": True}),
    "jump_in": ({}, {"jump_in": True}),
    "seven_zero": ({}, {"seven_zero": True}),
    "colours_in_circle": ({}, {"colours_in_circle": True}),
    "play_to_last": ({}, {"play_to_last": True}),
    "teams": ({"num_players": 4}, {"teams": True}),
    "scoring": ({}, {"scoring": "penalty_points"}),
    "zero_scores_fifty": ({}, {"zero_scores_fifty": True}),
    "target_score": ({}, {"target_score": 200}),
    "max_turns": ({}, {"max_turns": 500}),
    "starter_redraw_wilds": ({}, {"starter_redraw_wilds": True}),
    "starter_draw_two_skips": ({}, {"starter_draw_two_skips": False}),
    "starter_wild_colour": ({}, {"starter_wild_colour": "random"}),
    "reshuffle_top": ({}, {"reshuffle_top": True}),
}
NOT_A_RULE = {"seat_draw_streams"}  # how random numbers are drawn: nothing a player sees


def test_every_switch_is_covered() -> None:
    fields = {f.name for f in dataclasses.fields(Rules)}
    assert set(SWITCHES) | NOT_A_RULE == fields


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_switching_a_rule_changes_the_words(switch: str) -> None:
    base, change = SWITCHES[switch]
    before = load_rules("official", **base)
    after = before.replace(**change)
    text = rules_in_words(after)
    assert text != rules_in_words(before)
    assert CODE_WORDS.search(text) is None, text
