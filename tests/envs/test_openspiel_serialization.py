"""Serialized ``python_uno`` states: text (the game and the action history), read back by
replaying checked actions, lossless, and never unpickled.

Skips without OpenSpiel on a user's machine; in CI (``UNO_LAB_CI=1``) a missing OpenSpiel
fails. Games are kept short (a low ``max_turns``, small hands) for two cores.
"""

from __future__ import annotations

import base64
import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.optional import require

pyspiel: Any = require("pyspiel", "the OpenSpiel game python_uno runs on OpenSpiel")

from uno_env.envs import openspiel_game  # noqa: E402
from uno_env.envs.openspiel_parameters import load_game, openspiel_own  # noqa: E402
from uno_env.envs.openspiel_state import KEY_BYTES, key_actions, load_state  # noqa: E402
from uno_env.envs.openspiel_views import GAME_NAME  # noqa: E402

GAMES: list[dict[str, Any]] = [
    {"num_players": 2, "max_turns": 120},
    {"num_players": 3, "hand_size": 4, "max_turns": 120},
    {"preset": "street", "num_players": 3, "hand_size": 4, "max_turns": 150},
    {"preset": "seven_zero", "num_players": 4, "hand_size": 3, "max_turns": 150},
    {"num_players": 4, "teams": True, "hand_size": 3, "max_turns": 120},
    {"stack_draw_two": True, "jump_in": True, "uno_penalty": 4, "max_turns": 120},
    {"preset": "rlcard", "hand_size": 5, "max_turns": 30},
]
"""Presets and house rules, each with a low max_turns (some hands end truncated)."""


def load(params: dict[str, Any]) -> Any:
    return pyspiel.load_game(GAME_NAME, params)


def walk(state: Any, rng: np.random.Generator, steps: int) -> None:
    """Apply up to ``steps`` random outcomes or legal actions."""
    for _ in range(steps):
        if state.is_terminal():
            return
        state.apply_action(int(rng.choice(state.legal_actions())))


def assert_same(restored: Any, original: Any) -> None:
    """Everything a state shows, hidden cards and every seat's views included."""
    assert type(restored) is type(original)
    assert restored.history() == original.history()
    assert restored.move_number() == original.move_number()
    assert str(restored) == str(original)
    assert restored.current_player() == original.current_player()
    assert restored.is_terminal() == original.is_terminal()
    assert restored.returns() == original.returns()
    assert restored.legal_actions() == original.legal_actions()
    assert restored.serialize() == original.serialize()
    if original.is_chance_node():
        assert restored.chance_outcomes() == original.chance_outcomes()
    for player in range(original.num_players()):
        assert restored.observation_tensor(player) == original.observation_tensor(player)
        assert restored.observation_string(player) == original.observation_string(player)
        assert restored.information_state_string(player) == original.information_state_string(
            player
        )
    if original.uno_state is not None:
        for name, array in original.uno_state.array_fields().items():
            np.testing.assert_array_equal(getattr(restored.uno_state, name), array, err_msg=name)


def assert_same_future(restored: Any, original: Any, seed: int) -> None:
    """The same random actions from both end in the same game."""
    for state in (restored, original):
        walk(state, np.random.default_rng(seed), 10_000)
    assert_same(restored, original)


def snapshots(params: dict[str, Any], seed: int) -> list[Any]:
    """States of one random game: the root, between key bytes, the deal, mid-hand, the end."""
    game = load(params)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    found = [state.clone()]
    for byte in key_actions(int(rng.integers(2**63)))[:3]:
        state.apply_action(byte)
    found.append(state.clone())
    walk(state, rng, KEY_BYTES - 3)
    found.append(state.clone())
    while not state.is_terminal():
        walk(state, rng, int(rng.integers(1, 12)))
        found.append(state.clone())
    return found


@pytest.mark.parametrize("params", GAMES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_round_trips_are_lossless_at_every_point_of_random_games(params: dict[str, Any]) -> None:
    game = load(params)
    checked = 0
    for seed in range(3):
        states = snapshots(params, seed)
        assert states[-1].is_terminal()
        for index, state in enumerate(states):
            text = state.serialize()
            restored = game.deserialize_state(text)
            assert_same(restored, state)
            assert_same(load_state(text), state)
            if index % 4 == 0:  # continuing play: the same game from both
                assert_same_future(restored, state.clone(), seed + index)
            checked += 1
    assert checked > 20


def test_the_text_is_the_game_string_then_one_action_per_line() -> None:
    game = load({"num_players": 3, "hand_size": 4, "max_turns": 60})
    state = game.new_initial_state()
    walk(state, np.random.default_rng(4), 20)
    text = state.serialize()
    assert text == "\n".join([str(game), *map(str, state.history())]) + "\n"
    assert game.new_initial_state().serialize() == f"{game}\n"
    # Without the closing newline, and with Windows line ends, it reads the same.
    assert_same(game.deserialize_state(text.rstrip("\n")), state)
    assert_same(game.deserialize_state(text.replace("\n", "\r\n")), state)


def test_a_short_game_line_fills_in_the_defaults() -> None:
    game = load({"num_players": 3})
    state = game.new_initial_state()
    walk(state, np.random.default_rng(1), 15)
    actions = "\n".join(map(str, state.history()))
    assert_same(game.deserialize_state(f"{GAME_NAME}(num_players=3)\n{actions}"), state)
    assert_same(
        game.deserialize_state(f"{GAME_NAME}(num_players=3,uno_call=true)\n{actions}"), state
    )


@pytest.mark.parametrize("params", GAMES[:4], ids=["official", "three", "street", "seven_zero"])
def test_resampled_states_round_trip_with_their_samples(params: dict[str, Any]) -> None:
    game = load(params)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    rng = np.random.default_rng(11)
    state = game.new_initial_state()
    walk(state, rng, KEY_BYTES + 6)
    sample = state.resample_from_infostate(state.current_player(), sampler)
    walk(sample, rng, 3)
    if not sample.is_terminal():  # a sample of a sample, for another seat, then the same point
        sample = sample.resample_from_infostate((sample.current_player() + 1) % 2, sampler)
        sample = sample.resample_from_infostate(0, sampler)
        walk(sample, rng, 2)
    text = sample.serialize()
    assert text.count("\nresample ") == len(sample._table.resamples) >= 1
    assert sample.history()[: len(state.history())] == state.history()
    restored = game.deserialize_state(text)
    assert_same(restored, sample)
    assert restored._table.known_from == sample._table.known_from
    assert_same_future(restored, sample.clone(), 5)
    # Without its resample lines the text is the original game's (as the docs say): the
    # actions after the first resampling need not even be legal there.
    moves = sample._table.resamples[0][0]
    plain = "\n".join([str(game), *map(str, sample.history()[:moves])])
    assert_same(game.deserialize_state(plain), state)


def test_a_resample_before_the_deal_is_a_plain_state() -> None:
    game = load({"max_turns": 60})
    state = game.new_initial_state()
    state.apply_action(7)
    sample = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert "resample" not in sample.serialize()
    assert_same(game.deserialize_state(sample.serialize()), sample)


def test_pyspiel_serialize_game_and_state_round_trips_python_uno() -> None:
    for params in GAMES[:3]:
        for state in snapshots(params, 8)[::3]:
            game = state.get_game()
            text = pyspiel.serialize_game_and_state(game, state)
            assert text.startswith("# Automatically generated by OpenSpiel")
            assert f"[Game]\n{game}\n[State]\n{state.serialize()}\n" in text
            assert "__dict__" not in text and "history=" not in text
            game_back, state_back = pyspiel.deserialize_game_and_state(text)
            assert isinstance(game_back, openspiel_game.UnoOpenSpielGame)
            assert str(game_back) == str(game)
            assert_same(state_back, state)


def test_pyspiel_serialization_of_other_games_is_openspiels_own() -> None:
    assert pyspiel.serialize_game_and_state is openspiel_game.serialize_game_and_state
    assert pyspiel.deserialize_game_and_state is openspiel_game.deserialize_game_and_state
    assert pyspiel.load_game is load_game
    openspiel_game.register()  # again: OpenSpiel's own functions stay the ones kept
    originals = {
        name: openspiel_own(name)
        for name in ("deserialize_game_and_state", "load_game", "serialize_game_and_state")
    }
    for original in originals.values():
        assert original.__module__ == "pyspiel", original
    for name in ("tic_tac_toe", "leduc_poker", "misere(game=python_uno(max_turns=40))"):
        game = pyspiel.load_game(name)
        state = game.new_initial_state()
        walk(state, np.random.default_rng(2), 5)
        text = pyspiel.serialize_game_and_state(game, state)
        assert text == originals["serialize_game_and_state"](game, state)
        _, back = pyspiel.deserialize_game_and_state(text)
        assert back.history() == state.history() and str(back) == str(state)


RELOADED = """
import importlib, pyspiel
from uno_env.envs import openspiel_game as module, openspiel_parameters as parameters
first = pyspiel.load_game("python_uno(max_turns=40)")
for _ in range(2):
    importlib.reload(parameters)
    importlib.reload(module)
module.register()
ours = {"load_game": parameters.load_game}
for name in ("load_game", "serialize_game_and_state", "deserialize_game_and_state"):
    assert getattr(pyspiel, name) is ours.get(name, getattr(module, name, None)), name
    assert parameters.openspiel_own(name).__module__ == "pyspiel", name
for game in (first, pyspiel.load_game("python_uno(max_turns=40)"), pyspiel.load_game("tic_tac_toe")):
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert back.history() == state.history(), game
try:
    pyspiel.load_game("python_uno", {"num_players": 2**31})
except ValueError as err:
    print("refused:", err)
"""


def test_a_second_import_or_a_reload_keeps_openspiels_functions() -> None:
    """Reloaded, the module must not take its own earlier functions for OpenSpiel's (each
    would call itself) nor refuse games of its earlier class."""
    done = subprocess.run(
        [sys.executable, "-c", RELOADED], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"refused: rules: num_players must be 2..10, got {2**31}" in done.stdout


def test_pickle_and_copy_write_the_text_and_clones_still_work() -> None:
    game = load({"num_players": 3, "max_turns": 80})
    state = game.new_initial_state()
    walk(state, np.random.default_rng(6), KEY_BYTES + 5)
    sample = state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    for original in (state, sample):
        dumped = pickle.dumps(original)
        assert b"load_state" in dumped and b"__dict__" not in dumped
        for copied in (
            pickle.loads(dumped),
            copy.copy(original),
            copy.deepcopy(original),
            original.clone(),
        ):
            assert_same(copied, original)
            assert copied.uno_state is not original.uno_state
            assert_same_future(copied, original.clone(), 3)


def _pickle_payload(marker: Path) -> str:
    """OpenSpiel's pickled form of a Python state, whose unpickling would create ``marker``."""

    class Payload:
        def __reduce__(self) -> tuple[Any, tuple[str, str]]:
            return (Path.write_text, (marker, "ran"))  # type: ignore[return-value]

    data = base64.b64encode(pickle.dumps({"_table": Payload()})).decode()
    return f"history=\nmove_number=0\n__dict__={data}"


def test_a_pickle_payload_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    payload = _pickle_payload(marker)
    game = load({})
    layout = f"[Meta]\nVersion: 1\n\n[Game]\n{game}\n[State]\n{payload}\n"
    attempts = [
        lambda: game.deserialize_state(payload),
        lambda: game.deserialize_state(f"{game}\n{payload}"),
        lambda: load_state(payload),
        lambda: pyspiel.deserialize_game_and_state(layout),
        lambda: pyspiel.deserialize_game_and_state(layout.replace(str(game), "python_uno()")),
    ]
    for attempt in attempts:
        with pytest.raises(ValueError) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message and message.startswith(f"{GAME_NAME}: serialized state, line")
        assert not marker.exists()
    # The payload is real: unpickled, it writes the file.
    pickle.loads(base64.b64decode(payload.partition("__dict__=")[2]))
    assert marker.read_text() == "ran"
    os.remove(marker)
