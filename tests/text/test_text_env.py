"""The text env: a policy that reads only the prompt text plays complete hands."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from support import ROOT

import uno_env
from uno_env import cards as C
from uno_env.envs import text_env as text_env_module
from uno_env.envs.table_inputs import ResetNeededError
from uno_env.envs.text_env import TextEnv, resolve_agent_name
from uno_env.policy import PolicyFactory, RandomBot
from uno_env.rules import load_rules
from uno_env.text.prompt import LEGAL_MOVES, PromptOptions

ITEM = re.compile(r"(?:([A-Z]{1,2})\) )?(\S+?)(?: \(([^)]*)\))?(?:, |$)")
"""One listed move: its letter, its notation, its gloss (glosses hold no parentheses)."""


class ScriptedPlayer:
    """Reads only the prompt's ``Legal moves:`` line and answers in every accepted form,
    sometimes invalidly (counting those)."""

    def __init__(self, seed: int, invalid_rate: float = 0.05) -> None:
        self.rng = np.random.default_rng(seed)
        self.invalid_rate = invalid_rate
        self.invalid = 0
        self.answers = 0

    def moves(self, prompt: str) -> list[tuple[str | None, str, str | None]]:
        lines = [line for line in prompt.splitlines() if line.startswith(LEGAL_MOVES)]
        assert len(lines) == 1, prompt
        body = lines[0][len(LEGAL_MOVES) :]
        out = []
        position = 0
        while position < len(body):
            match = ITEM.match(body, position)
            assert match is not None and match.end() > position, body[position:]
            out.append((match.group(1), match.group(2), match.group(3)))
            position = match.end()
        return out

    def __call__(self, prompt: str) -> str:
        moves = self.moves(prompt)
        self.answers += 1
        if self.rng.random() < self.invalid_rate:
            self.invalid += 1
            if len(moves) > 1 and self.rng.random() < 0.5:
                return f"{moves[0][1]} or {moves[1][1]}"
            return "I would rather not say."
        letter, name, gloss = moves[int(self.rng.integers(len(moves)))]
        label = letter or name
        forms = [
            label,
            label.lower(),
            f"Let me think.\n<action>{label}</action>",
            f"Thinking...\nFinal answer: {label}",
            json.dumps({"action": label}),
            name,
        ]
        if gloss:
            forms.append(gloss)
        return forms[int(self.rng.integers(len(forms)))]


def play_hand(env: TextEnv, player: ScriptedPlayer, seed: int) -> dict[str, Any]:
    prompt, info = env.reset(seed=seed)
    assert info["system_prompt"] and info["legal_moves"] and info["view"]["decision"]
    for _ in range(5000):
        prompt, reward, terminated, truncated, info = env.step(player(prompt))
        if terminated or truncated:
            assert info["legal_moves"] == [] and -1.0 <= reward <= 1.0
            return info
        assert LEGAL_MOVES in prompt
    raise AssertionError("the hand did not end")


CASES = [
    ("official", 2, PromptOptions()),
    ("official", 4, PromptOptions(view="changes", choices="letters")),
    ("street", 4, PromptOptions(glosses=False)),
    ("seven_zero", 4, PromptOptions(view="changes")),
    ("rlcard", 2, PromptOptions(choices="letters", glosses=False)),
    ("street", 2, PromptOptions(view="changes", choices="letters")),
]


@pytest.mark.parametrize(("preset", "players", "options"), CASES)
def test_a_text_policy_plays_complete_hands(
    preset: str, players: int, options: PromptOptions
) -> None:
    env = uno_env.text_env(
        num_players=players,
        opponents=PolicyFactory("random", RandomBot),
        rules=preset,
        options=options,
    )
    for seed in range(3):
        player = ScriptedPlayer(seed)
        info = play_hand(env, player, seed)
        assert info["invalid_answers"] == player.invalid
        assert info["decisions"] <= player.answers
        assert info["fallbacks"] <= player.invalid


def test_the_same_seed_replays_the_same_game() -> None:
    def transcript(seed: int) -> list[str]:
        env = uno_env.text_env(
            num_players=3, opponents="mixbot", options=PromptOptions(view="changes")
        )
        player = ScriptedPlayer(7)
        prompt, _ = env.reset(seed=seed)
        out = [prompt]
        while True:
            prompt, _, terminated, truncated, _ = env.step(player(prompt))
            out.append(prompt)
            if terminated or truncated:
                return out

    first = transcript(5)
    assert transcript(5) == first
    assert transcript(6) != first


def test_an_invalid_answer_is_retried_once_then_the_fallback_plays() -> None:
    env = uno_env.text_env(opponents="random", options=PromptOptions())
    prompt, info = env.reset(seed=3)
    legal = info["legal_actions"]
    again, reward, terminated, _, info = env.step("no idea")
    assert info["invalid"] and info["retry"] and not info["fallback"] and info["retries"] == 1
    assert info["action"] is None and info["invalid_answers"] == 1 and reward == 0.0
    assert again.startswith("Your answer was refused: No move was found in the answer.")
    assert again.endswith(prompt) and not terminated
    _, _, _, _, info = env.step("still no idea")
    assert info["invalid"] and info["fallback"] and not info["retry"]
    expected = C.DRAW if C.DRAW in legal else (C.KEEP if C.KEEP in legal else legal[0])
    assert info["action"] == expected and info["move"] == C.action_name(expected)
    assert info["invalid_answers"] == 2 and info["fallbacks"] == 1 and info["decisions"] == 1


def test_a_retry_then_a_valid_answer_plays_it() -> None:
    env = uno_env.text_env(opponents="random")
    _, info = env.reset(seed=4)
    env.step("??")
    move = info["legal_moves"][0]
    _, _, _, _, after = env.step(f"<action>{move}</action>")
    assert not after["invalid"] and not after["fallback"] and after["retries"] == 1
    assert after["move"] == move and after["answer"].form == "tag"


def test_the_full_and_the_changes_views() -> None:
    full = uno_env.text_env(opponents="random", options=PromptOptions())
    changes = uno_env.text_env(opponents="random", options=PromptOptions(view="changes"))
    first_full, _ = full.reset(seed=9)
    first_changes, info = changes.reset(seed=9)
    assert first_full == first_changes and "Match scores" in first_full  # the first is whole
    assert info["events"][0].startswith("Hand 1:")
    move = info["legal_moves"][0]
    later_full, *_ = full.step(move)
    later_changes, *_, step_info = changes.step(move)
    if step_info["legal_moves"]:
        assert "Match scores" in later_full and "Since your last decision" not in later_full
        assert later_changes.startswith("Since your last decision:\n- You ")
        assert "Match scores" not in later_changes
        assert step_info["events"][0].startswith("You ")


def test_opponents_by_name_factory_policy_and_list() -> None:
    factory = resolve_agent_name("mixbot", load_rules())
    assert isinstance(factory, PolicyFactory)
    for opponents in ("mixbot", factory, RandomBot(seed=1), ["random", "mixbot", factory], None):
        env = uno_env.text_env(num_players=4, opponents=opponents)
        play_hand(env, ScriptedPlayer(0, invalid_rate=0.0), seed=1)


def test_an_unknown_name_and_a_missing_resolver_are_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="no_such_bot"):
        uno_env.text_env(opponents="no_such_bot")
    monkeypatch.setattr(text_env_module, "entry_points", lambda group: [])
    with pytest.raises(ValueError, match=r"'mixbot' is an agent name, but no package"):
        uno_env.text_env(opponents="mixbot")
    uno_env.text_env(opponents=RandomBot(seed=0))  # policies need no resolver


def test_stepping_after_the_end_or_before_a_reset_is_refused() -> None:
    env = uno_env.text_env(opponents="random")
    with pytest.raises(ResetNeededError, match="call reset"):
        env.step("draw")
    play_hand(env, ScriptedPlayer(1, invalid_rate=0.0), seed=2)
    with pytest.raises(ResetNeededError, match="call reset"):
        env.step("draw")


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="options: expected a PromptOptions"):
        uno_env.text_env(options={"view": "full"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="learner_seat"):
        uno_env.text_env(learner_seat=5)
    env = uno_env.text_env(opponents="random")
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


def test_reset_options_choose_the_deal_and_the_seat() -> None:
    env = uno_env.text_env(num_players=3, opponents="random")
    first, info = env.reset(seed=0, options={"key": 17, "learner_seat": 2})
    assert info["learner_seat"] == 2 and info["view"]["seat"] == 2
    again, _ = env.reset(seed=0, options={"key": 17, "learner_seat": 2})
    assert again == first


def test_the_guide_s_training_loop_runs() -> None:
    """The rollout sketch of docs/text.md, with a scripted model."""
    guide = (ROOT / "docs" / "text.md").read_text("utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "def rollout" in b)
    scope: dict[str, Any] = {}
    exec(block, scope)
    player = ScriptedPlayer(3, invalid_rate=0.1)
    env = uno_env.text_env(opponents="random", options=PromptOptions(view="changes"))
    messages, reward, invalid = scope["rollout"](env, lambda m: player(m[-1]["content"]), 0)
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "assistant"
    assert invalid == player.invalid and -1.0 <= reward <= 1.0
