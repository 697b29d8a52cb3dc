"""The OpenSpiel game ``python_uno``: OpenSpiel's own checks, its search bots, information
sets, agreement with ``UnoGame``, and errors.

Skips without OpenSpiel on a user's machine (``pip install 'uno-lab[openspiel]'``); in CI
(``UNO_LAB_CI=1``) a missing OpenSpiel fails. Games are kept short (small hands, a low
``max_turns``) so that the suite stays fast on two cores.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from support.optional import require

from uno_env import UnoGame, core
from uno_env.core import IllegalActionError

pyspiel: Any = require("pyspiel", "the OpenSpiel game python_uno runs on OpenSpiel")

from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts  # noqa: E402

from uno_env.envs import openspiel_checks, openspiel_game, openspiel_views  # noqa: E402
from uno_env.envs.openspiel_parameters import load_game  # noqa: E402
from uno_env.envs.openspiel_state import key_actions  # noqa: E402
from uno_env.envs.openspiel_views import GAME_NAME  # noqa: E402
from uno_env.observation import OBS_DIM  # noqa: E402

SHORT = {"max_turns": 80}
"""Random play draws a lot: a low ``max_turns`` keeps OpenSpiel's quadratic checks quick."""


def load(**params: Any) -> Any:
    return pyspiel.load_game(GAME_NAME, {**SHORT, **params})


def deal(game: Any, key: int) -> Any:
    state = game.new_initial_state()
    for byte in key_actions(key):
        state.apply_action(byte)
    return state


def random_walk(state: Any, rng: np.random.Generator, steps: int) -> list[int]:
    """Apply up to ``steps`` random legal actions; return them."""
    taken = []
    for _ in range(steps):
        if state.is_terminal():
            break
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        taken.append(action)
    return taken


def test_registered_and_typed() -> None:
    assert GAME_NAME in pyspiel.registered_names()
    game = load(num_players=3)
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert game.num_players() == 3
    assert game.num_distinct_actions() == 80
    assert game.max_chance_outcomes() == 256
    assert game.max_game_length() == SHORT["max_turns"]
    assert game.observation_tensor_shape() == [OBS_DIM]
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert int(pyspiel.PlayerId.CHANCE) == openspiel_checks.CHANCE_PLAYER
    assert int(pyspiel.PlayerId.TERMINAL) == openspiel_checks.TERMINAL_PLAYER


@pytest.mark.parametrize(
    ("params", "sims"),
    [
        ({"num_players": 2}, 3),
        ({"num_players": 3, "hand_size": 4}, 2),
        ({"num_players": 4, "hand_size": 3}, 2),
        ({"preset": "street", "num_players": 3, "hand_size": 4}, 2),
        ({"preset": "seven_zero", "num_players": 4, "hand_size": 3}, 2),
        ({"preset": "rlcard", "hand_size": 3}, 2),
        ({"num_players": 4, "teams": True, "hand_size": 3}, 2),
    ],
)
def test_openspiel_random_sim_test(params: dict[str, Any], sims: int) -> None:
    # OpenSpiel's own checks: legal actions and masks, clone, serialization round trips,
    # observations and information states for every player, returns, game length.
    pyspiel.random_sim_test(load(**params), num_sims=sims, serialize=True, verbose=False)


def test_house_rule_switches_apply_on_top_of_the_preset() -> None:
    street = load(preset="street").rules
    assert street.stack_draw_two and street.jump_in and street.draw_rule == "until_playable"
    mixed = load(preset="street", seven_zero=True, stack_draw_two=False).rules
    # A switch set to its official default cannot undo a preset's change (see the docs).
    assert mixed.seven_zero and mixed.stack_draw_two
    assert not load(two_player_rules=False).rules.two_player
    assert load().rules.two_player
    # The game's string lists every parameter and loads the same rules back.
    game = load(preset="street", num_players=3)
    assert pyspiel.load_game(str(game)).rules == game.rules


def test_chance_bytes_spell_the_key_and_match_unogame() -> None:
    game = load(num_players=3, hand_size=5, max_turns=400)
    for seed in range(3):
        uno = UnoGame(game.rules, seed=seed)
        state = game.new_initial_state()
        assert state.is_chance_node()
        assert [p for _, p in state.chance_outcomes()] == [1 / 256] * 256
        for byte in key_actions(uno.key):
            state.apply_action(byte)
        assert state.key == uno.key
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            assert state.current_player() == uno.current_seat
            assert state.legal_actions() == uno.legal_action_ids()
            action = int(rng.choice(state.legal_actions()))
            assert state.action_to_string(state.current_player(), action) in uno.legal_actions()
            state.apply_action(action)
            uno.step(action)
        assert uno.over
        expected = core.hand_rewards(uno.rules, uno.state)[0]
        np.testing.assert_allclose(state.returns(), expected, atol=1e-6)
        assert sum(state.returns()) == pytest.approx(0.0, abs=1e-12)
        final = state.uno_state
        assert final is not None
        np.testing.assert_array_equal(final.hands, uno.state.hands)
        assert int(final.winner[0]) == (-1 if uno.winner is None else uno.winner)


def test_truncation_at_max_turns_ends_with_zero_returns() -> None:
    game = load(max_turns=10)
    state = deal(game, 99)
    decisions = len(random_walk(state, np.random.default_rng(0), 100))
    assert state.is_terminal() and decisions == 10
    assert state.returns() == [0.0, 0.0]


@pytest.mark.parametrize("params", [{"num_players": 2}, {"preset": "street", "num_players": 3}])
def test_resampled_states_share_the_information_set(params: dict[str, Any]) -> None:
    game = load(**{**params, "max_turns": 120})
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    rng = np.random.default_rng(7)
    state = deal(game, 2024)
    checked = 0
    while not state.is_terminal():
        for player in range(game.num_players()):
            sample = state.resample_from_infostate(player, sampler)
            assert sample.current_player() == state.current_player()
            assert sample.information_state_string(player) == state.information_state_string(player)
            assert sample.observation_tensor(player) == state.observation_tensor(player)
            assert sample.observation_string(player) == state.observation_string(player)
            checked += 1
        random_walk(state, rng, 5)
    assert checked > 10


def test_states_step_in_place_and_clones_stay_apart() -> None:
    game = load()
    state = deal(game, 21)
    before = state.uno_state.copy()
    history = state.history()
    clone = state.clone()
    random_walk(clone, np.random.default_rng(3), 400)
    assert clone.is_terminal() and clone.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.history() == history and not state.is_terminal()
    for name, array in before.array_fields().items():
        np.testing.assert_array_equal(getattr(state.uno_state, name), array, err_msg=name)
    arrays = state.uno_state
    state.apply_action(state.legal_actions()[0])
    assert state.uno_state is arrays  # OpenSpiel states change as actions apply
    assert clone.uno_state is not arrays


def test_resample_draws_other_hands_and_keeps_playing() -> None:
    game = load(num_players=3)
    state = deal(game, 5)
    random_walk(state, np.random.default_rng(1), 6)
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    samples = [state.resample_from_infostate(player, sampler) for _ in range(4)]
    true_hands = state.uno_state.hands[0]
    others = [s.uno_state.hands[0] for s in samples]
    for hands in others:
        np.testing.assert_array_equal(hands[player], true_hands[player])
    assert any(not np.array_equal(h, true_hands) for h in others)
    for sample in samples:  # a sample is a live state of the game: it plays on
        random_walk(sample, np.random.default_rng(2), 200)
        assert sample.is_terminal()


def test_information_state_hides_other_hands() -> None:
    game = load()
    state = deal(game, 11)
    hands = state.uno_state.hands[0]
    text = state.information_state_string(0)
    own = openspiel_views.hand_text(hands.tobytes(), 0)
    other = openspiel_views.hand_text(hands.tobytes(), 1)
    assert own in text and other not in text


class RestartableISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's Python ISMCTS bot with ``restart_at``, which ``evaluate_bots`` calls on
    every bot (the bot itself leaves it to pyspiel's base class, which raises)."""

    def restart_at(self, state: Any) -> None:
        self.reset()


def test_ismcts_and_mcts_bots_play_complete_games() -> None:
    game = load(num_players=3, hand_size=3, max_turns=60)
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bots = [
        RestartableISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=8, random_state=rng),
        mcts.MCTSBot(game, uct_c=2.0, max_simulations=8, evaluator=evaluator, random_state=rng),
        pyspiel.make_uniform_random_bot(2, 5),
    ]
    for _ in range(2):
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        assert len(returns) == 3 and sum(returns) == pytest.approx(0.0, abs=1e-12)


def test_unknown_parameter_raises_naming_it() -> None:
    with pytest.raises(ValueError, match="bogus_switch"):
        pyspiel.load_game(GAME_NAME, {"bogus_switch": True})
    with pytest.raises(ValueError, match="bogus_switch"):
        openspiel_game.UnoOpenSpielGame({"bogus_switch": True})
    with pytest.raises(ValueError, match="nope"):
        pyspiel.load_game(GAME_NAME, {"preset": "nope"})
    with pytest.raises(ValueError, match="num_players"):
        pyspiel.load_game(GAME_NAME, {"num_players": 11})
    with pytest.raises(ValueError, match="hand_size"):
        openspiel_game.UnoOpenSpielGame({"hand_size": "7"})
    no_mappings: list[Any] = [[], 0, "num_players=3"]  # even an empty one is no mapping
    for no_mapping in no_mappings:
        with pytest.raises(TypeError, match="params must be a mapping"):
            openspiel_game.UnoOpenSpielGame(no_mapping)


def test_load_game_checks_python_uno_first_and_passes_other_games_on(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert pyspiel.load_game is load_game
    string = pyspiel.load_game(f"{GAME_NAME}(num_players=+3,preset=street,jump_in=false)")
    mapping = pyspiel.load_game(
        GAME_NAME, {"num_players": np.int64(3), "preset": "street", "jump_in": np.False_}
    )
    assert isinstance(string, openspiel_game.UnoOpenSpielGame)
    assert string.rules == mapping.rules and str(string) == str(mapping)
    assert string.num_players() == 3 and string.get_parameters()["num_players"] == 3
    assert pyspiel.load_game(GAME_NAME).rules == pyspiel.load_game(f"{GAME_NAME}()").rules
    # A bad parameter never reaches OpenSpiel, which would also print to stderr.
    capfd.readouterr()
    with pytest.raises(ValueError, match=f"got {2**31}"):
        pyspiel.load_game(GAME_NAME, {"num_players": 2**31})
    assert capfd.readouterr().err == ""
    # Every other game is OpenSpiel's own, its errors too.
    assert pyspiel.load_game("kuhn_poker", {"players": 3}).num_players() == 3
    assert pyspiel.load_game("tic_tac_toe").get_type().short_name == "tic_tac_toe"
    assert str(pyspiel.load_game(f"misere(game={GAME_NAME}(max_turns=40))")).startswith("misere")
    with pytest.raises(pyspiel.SpielError, match="bogus"):
        pyspiel.load_game("tic_tac_toe", {"bogus": 1})


def test_illegal_action_raises_naming_it() -> None:
    state = deal(load(), 3)
    legal = state.legal_actions()
    illegal = next(a for a in range(80) if a not in legal)
    before = str(state)
    with pytest.raises(IllegalActionError, match=rf"illegal action {illegal} "):
        state.apply_action(illegal)
    with pytest.raises(IllegalActionError, match="illegal action 80"):
        state.apply_action(80)
    assert str(state) == before and state.legal_actions() == legal
    with pytest.raises(IllegalActionError, match="chance outcome 256"):
        load().new_initial_state().apply_action(256)


BARE = """
import sys
sys.modules["pyspiel"] = None  # import pyspiel now fails
import uno_env.envs.openspiel_game as game
from uno_env.envs.openspiel_state import key_actions
assert key_actions(1) == [0, 0, 0, 0, 0, 0, 0, 1]
for make in (game.register, game.UnoOpenSpielGame):
    try:
        make()
    except ImportError as err:
        print("refused:", err)
"""


def test_imports_without_openspiel_and_says_how_to_install() -> None:
    """In a fresh process, as on a machine without OpenSpiel: every module imports, and
    registering or building the game says how to install it."""
    done = subprocess.run(
        [sys.executable, "-c", BARE], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    refusal = "refused: OpenSpiel is not installed: pip install 'uno-lab[openspiel]'\n"
    assert done.stdout == refusal * 2
