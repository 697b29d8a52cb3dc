"""A seat's view holds exactly what the seat may know: hidden cards never show.

Hidden information is the other seats' cards, the order of the draw pile, the card another
seat just drew, whether a Wild Draw Four was a bluff and the game's random key. Two states
that differ only there (``core.determinize`` samples them) must give the seat the same view
and the same prompt, in every decision phase, under several rule sets.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from text_states import RULE_SETS, decisions

from uno_env import core
from uno_env.core import UnoState
from uno_env.rules import Rules, load_rules
from uno_env.text.prompt import PromptOptions, decision_prompt
from uno_env.text.view import DECISIONS, changes_between, seat_view

OPTIONS = (
    PromptOptions(),
    PromptOptions(choices="letters", glosses=False),
    PromptOptions(view="changes"),
)


def _prompts(view: dict) -> list[str]:
    if view["decision"] is None:
        return []
    return [decision_prompt(view, options).text for options in OPTIONS]


def _with_other_key(state: UnoState) -> UnoState:
    out = state.copy()
    out.key[:] = out.key ^ np.uint64(0x9E3779B97F4A7C15)
    return out


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_states_a_seat_cannot_tell_apart_give_the_same_view_and_prompt(name: str) -> None:
    rules = RULE_SETS[name]
    phases: set[int] = set()
    checked = 0
    for i, state in enumerate(decisions(rules, seed=11, games=8, steps=120)):
        if i % 7 or not bool(state.live[0]):
            continue
        acting = int(state.current[0])
        watcher = (acting + 1 + i % (rules.num_players - 1)) % rules.num_players
        for seat in (acting, watcher):
            base = seat_view(rules, state, seat)
            keys = np.arange(3, dtype=np.uint64) + np.uint64(i)
            variants = core.determinize(rules, state, seat, keys)
            others = [variants.select(np.array([k])) for k in range(3)]
            others.append(_with_other_key(state))
            for other in others:
                assert seat_view(rules, other, seat) == base
                assert _prompts(seat_view(rules, other, seat)) == _prompts(base)
            if seat == acting:
                phases.add(int(state.phase[0]))
            checked += 1
    assert checked > 50
    assert core.PLAY in phases


def test_every_decision_phase_is_checked_somewhere() -> None:
    """The rule sets above reach every phase a view names (so the test above covers them)."""
    seen: set[int] = set()
    for rules in RULE_SETS.values():
        for i, state in enumerate(decisions(rules, seed=11, games=8, steps=120)):
            if i % 7 == 0 and bool(state.live[0]):
                seen.add(int(state.phase[0]))
    assert seen == set(DECISIONS)


def test_the_seat_s_own_cards_do_change_its_view() -> None:
    """The same perturbation seen by the seat whose cards moved: the tests above can fail."""
    rules = load_rules(num_players=3)
    state = next(s for s in decisions(rules, seed=3, games=1, steps=30) if bool(s.live[0]))
    moved = state.copy()
    face = int(np.flatnonzero(moved.hands[0, 1])[0])
    other = next(f for f in range(54) if f != face)
    moved.hands[0, 1, face] -= 1
    moved.hands[0, 1, other] += 1
    assert seat_view(rules, moved, 1) != seat_view(rules, state, 1)
    assert seat_view(rules, moved, 2) == seat_view(rules, state, 2)


def _first_decision(rules: Rules, phase: int, seed: int = 5) -> UnoState:
    for state in decisions(rules, seed=seed, games=16, steps=400):
        if int(state.phase[0]) == phase:
            return state
    raise AssertionError(f"no state in phase {phase}")


def test_a_view_is_json_and_names_what_the_seat_knows() -> None:
    rules = load_rules(num_players=3)
    state = _first_decision(rules, core.AFTER_DRAW)
    seat = int(state.current[0])
    view = seat_view(rules, state, seat)
    assert json.loads(json.dumps(view)) == view
    assert view["decision"] == "drawn_card"
    assert view["drawn_card"] in view["hand"]
    assert "keep" in view["legal_moves"]
    assert len(view["hand"]) == int(state.hand_size[0, seat])
    assert [o["seat"] for o in view["others"]] == [
        (seat + k * int(state.direction[0])) % 3 for k in (1, 2)
    ]
    assert [o["position"] for o in view["others"]] == ["next", "previous"]
    # Another seat sees neither the drawn card nor a decision.
    other = seat_view(rules, state, (seat + 1) % 3)
    assert other["drawn_card"] is None and other["decision"] is None
    assert other["legal_moves"] == []
    with pytest.raises(ValueError, match=re.escape("seat must be in 0..2")):
        seat_view(rules, state, 3)


def test_changes_between_two_views_of_a_seat() -> None:
    rules = load_rules(num_players=2)
    states = [s for s in decisions(rules, seed=8, games=1, steps=40) if bool(s.live[0])]
    seat = int(states[0].current[0])
    before = seat_view(rules, states[0], seat)
    later = next(s for s in states[1:] if int(s.turn[0]) > int(states[0].turn[0]) + 1)
    after = seat_view(rules, later, seat)
    lines = changes_between(before, after)
    assert lines and all(line.endswith(".") for line in lines)
    assert changes_between(before, before) == []
    new_hand = dict(after, hand_number=after["hand_number"] + 1)
    assert changes_between(before, new_hand)[0].startswith(f"Hand {new_hand['hand_number']}")
    with pytest.raises(ValueError, match="same seat"):
        changes_between(before, dict(after, seat=1 - seat))
