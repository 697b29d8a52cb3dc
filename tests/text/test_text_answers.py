"""Reading a model's answer: every accepted form, the refusals and their reasons, the fallback."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from uno_env import cards as C
from uno_env import core
from uno_env.rules import load_rules
from uno_env.text.answers import FORMS, Answer, fallback_action, parse_answer, retry_message
from uno_env.text.prompt import Prompt, PromptOptions, decision_prompt
from uno_env.text.view import seat_view

LEGAL = ["G7", "G+2", "W:R", "W:Y", "W:G", "W:B", "W+4:R", "W+4:Y", "W+4:G", "W+4:B", "draw"]


def _view(legal: list[str], **extra: Any) -> dict[str, Any]:
    view: dict[str, Any] = {
        "seat": 0,
        "players": 4,
        "hand_number": 1,
        "turn": 3,
        "hand": ["G7", "G+2", "W", "W+4"],
        "top_card": "G5",
        "colour": "G",
        "direction": "clockwise",
        "draw_pile": 80,
        "discard_pile": 3,
        "you": {"score": 0, "catchable": False, "out": False},
        "others": [],
        "decision": "play",
        "drawn_card": None,
        "pending_penalty": 0,
        "uno_declared": False,
        "wild_draw_four_from": None,
        "jump_in_card": None,
        "catchable_seat": None,
        "legal_moves": legal,
        "match": {"scores": [0, 0, 0, 0], "target_score": 500, "lowest_wins": False, "over": False},
        "hand_over": False,
        "winner": None,
    }
    view.update(extra)
    return view


NAMES = decision_prompt(_view(LEGAL), PromptOptions())
LETTERS = decision_prompt(_view(LEGAL), PromptOptions(choices="letters"))
A = C.parse_action

ACCEPTED = [
    # (answer, prompt, action, form)
    ("G7", NAMES, "G7", "notation"),
    ("g7", NAMES, "G7", "notation"),
    ("  `G7`.", NAMES, "G7", "notation"),
    ("g+2", NAMES, "G+2", "notation"),
    ("w+4:b", NAMES, "W+4:B", "notation"),
    ("W:b", NAMES, "W:B", "notation"),
    ("DRAW", NAMES, "draw", "notation"),
    ("I will play G7.", NAMES, "G7", "notation"),
    ("green 7", NAMES, "G7", "natural"),
    ("Green seven", NAMES, "G7", "natural"),
    ("green draw two", NAMES, "G+2", "natural"),
    ("wild draw four, blue", NAMES, "W+4:B", "natural"),
    ("Wild Draw Four naming red", NAMES, "W+4:R", "natural"),
    ("wild, name yellow", NAMES, "W:Y", "natural"),
    ("Wild (green)", NAMES, "W:G", "natural"),
    ("draw a card", NAMES, "draw", "natural"),
    ("<action>G7</action>", NAMES, "G7", "tag"),
    ("Thinking it over...\n<action> green 7 </action>", NAMES, "G7", "tag"),
    ("<ACTION>draw</ACTION>", NAMES, "draw", "tag"),
    ("Final answer: G7", NAMES, "G7", "final_answer"),
    ("I could draw or play.\n**Final answer:** w+4:g", NAMES, "W+4:G", "final_answer"),
    ("final answer is wild draw four, blue", NAMES, "W+4:B", "final_answer"),
    ('{"action": "G7"}', NAMES, "G7", "json"),
    ('```json\n{"action": "draw", "why": "nothing good"}\n```', NAMES, "draw", "json"),
    ("<think>G+2 or draw? Both are fine.</think>G7", NAMES, "G7", "notation"),
    ("G7, yes G7.", NAMES, "G7", "notation"),
    ("I cannot play R5, so G7.", NAMES, "G7", "notation"),
    ("B", LETTERS, "G+2", "letter"),
    ("b", LETTERS, "G+2", "letter"),
    ("(K)", LETTERS, "draw", "letter"),
    ("Option A", LETTERS, "G7", "letter"),
    ("I pick C) W:R", LETTERS, "W:R", "notation"),
    ("I pick C)", LETTERS, "W:R", "letter"),
    ("<action>A</action>", LETTERS, "G7", "tag"),
    ("Final answer: K", LETTERS, "draw", "final_answer"),
    ('{"action": "A"}', LETTERS, "G7", "json"),
    ("G7", LETTERS, "G7", "notation"),
]


def test_the_letters_are_in_action_order() -> None:
    assert [C.action_name(a) for a in LETTERS.choices.values()] == sorted(LEGAL, key=A)
    assert LETTERS.choices["K"] == A("draw")


@pytest.mark.parametrize(("text", "prompt", "move", "form"), ACCEPTED)
def test_every_accepted_form(text: str, prompt: Prompt, move: str, form: str) -> None:
    answer = parse_answer(text, prompt)
    assert answer == Answer(A(move), None, form)
    assert answer.valid and form in FORMS


REFUSED = [
    # (answer, prompt, words the reason holds)
    ("G7 or draw", NAMES, "more than one legal move (G7 and draw)"),
    ("<action>G7, G+2</action>", NAMES, "more than one legal move"),
    ("wild", NAMES, "'wild' could mean W:R, W:Y, W:G, W:B"),
    ("wild draw four", NAMES, "could mean W+4:R"),
    ("R5", NAMES, "'R5' is not a legal move now"),
    ('{"action": "keep"}', NAMES, "'keep' is not a legal move now"),
    ("Final answer: blue", NAMES, "'blue' is not a legal move now"),
    ("", NAMES, "The answer is empty"),
    ("I am not sure.", NAMES, "No move was found in the answer"),
    ("<action>hmm</action>", NAMES, "No move was found in the <action> tag"),
    ("Z", LETTERS, "No move was found"),
]


@pytest.mark.parametrize(("text", "prompt", "reason"), REFUSED)
def test_ambiguous_and_illegal_answers_are_refused_with_a_reason(
    text: str, prompt: Prompt, reason: str
) -> None:
    answer = parse_answer(text, prompt)
    assert answer.action is None and not answer.valid
    assert answer.error is not None and reason in answer.error
    message = retry_message(answer, prompt)
    assert answer.error in message
    listed = ", ".join(f"{k}) {C.action_name(v)}" for k, v in prompt.choices.items())
    assert (listed if prompt is LETTERS else ", ".join(LEGAL)) in message


def test_glosses_of_other_moves_are_understood() -> None:
    prompt = decision_prompt(
        _view(["catch", "swap:1", "swap:2"], decision="swap", catchable_seat=2), PromptOptions()
    )
    assert parse_answer("swap hands with seat 2", prompt).action == A("swap:2")
    assert parse_answer("Swap:1", prompt).action == A("swap:1")
    assert parse_answer("catch seat 2 without UNO", prompt).action == A("catch")


def test_the_drawn_card_and_colour_decisions_in_words() -> None:
    drawn = decision_prompt(
        _view(["W:R", "W:Y", "W:G", "W:B", "keep"], decision="drawn_card", drawn_card="W"),
        PromptOptions(),
    )
    assert parse_answer("keep it", drawn).action == A("keep")
    assert parse_answer("play it, naming blue: W:B", drawn).action == A("W:B")
    assert "could mean" in (parse_answer("play it", drawn).error or "")
    colour = decision_prompt(
        _view(["colour:R", "colour:Y", "colour:G", "colour:B"], decision="colour"), PromptOptions()
    )
    assert parse_answer("Blue", colour).action == A("colour:B")
    assert parse_answer("color:g", colour).action == A("colour:G")


@pytest.mark.parametrize(
    ("legal", "fallback"),
    [
        (["G7", "draw"], "draw"),
        (["G7", "keep"], "keep"),
        (["challenge", "accept"], "challenge"),
        (["swap:2", "swap:1"], "swap:2"),
    ],
)
def test_the_fallback_rule(legal: list[str], fallback: str) -> None:
    prompt = Prompt(text="", choices={name: A(name) for name in legal})
    assert fallback_action(prompt) == A(fallback)
    letters = Prompt(text="", choices={chr(65 + i): A(n) for i, n in enumerate(legal)})
    assert fallback_action(letters) == A(fallback)
    with pytest.raises(ValueError, match="no legal moves"):
        fallback_action(Prompt(text="", choices={}))


def test_words_about_the_cards_in_a_longer_text_are_no_choice() -> None:
    prompt = Prompt(text="", choices={"G7": A("G7"), "W:B": A("W:B"), "draw": A("draw")})
    assert parse_answer("wild", prompt).action == A("W:B")  # the one wild move
    talk = "I keep the wild for later and play the card that matches. G7."
    assert parse_answer(talk, prompt) == Answer(A("G7"), None, "notation")


def test_text_that_is_no_string_is_refused() -> None:
    answer = parse_answer(None, NAMES)  # type: ignore[arg-type]
    assert answer.action is None and "must be text" in (answer.error or "")


def test_a_decision_costs_well_under_a_millisecond() -> None:
    """View, prompt and reading the answer: the overhead a model's decision adds."""
    rules = load_rules(num_players=4)
    state = core.init(rules, 1, seed=1)
    seat = int(state.current[0])
    options = PromptOptions()
    times = []
    for _ in range(300):
        start = time.perf_counter()
        prompt = decision_prompt(seat_view(rules, state, seat), options)
        parse_answer("Let me think. I could draw.\nFinal answer: draw", prompt)
        times.append(time.perf_counter() - start)
    assert float(np.median(times)) < 1e-3
