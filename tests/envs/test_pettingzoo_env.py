"""The PettingZoo AEC env: PettingZoo's own checks, turn order, rewards, errors, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import uno_env
from uno_env import cards as C
from uno_env import core
from uno_env.config_values import ConfigError
from uno_env.core import IllegalActionError
from uno_env.envs.pettingzoo_env import raw_env
from uno_env.observation import OBS_DIM
from uno_env.rules import PRESETS

TABLE_SIZES = (2, 4, 10)


def random_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A random legal action, drawing only when nothing else is legal (short hands)."""
    legal = np.flatnonzero(mask)
    if legal.size > 1:
        legal = legal[legal != C.DRAW]
    return int(legal[rng.integers(legal.size)])


def play_random(aec: object, seed: int, on_turn: object = None) -> int:
    """Play one hand with random legal actions; return the number of decisions."""
    rng = np.random.default_rng(seed)
    decisions = 0
    for agent in aec.agent_iter():  # type: ignore[attr-defined]
        obs, _, terminated, truncated, _ = aec.last()  # type: ignore[attr-defined]
        if terminated or truncated:
            aec.step(None)  # type: ignore[attr-defined]
            continue
        if on_turn is not None:
            on_turn(agent, obs)  # type: ignore[operator]
        aec.step(random_action(obs["action_mask"], rng))  # type: ignore[attr-defined]
        decisions += 1
    return decisions


def test_import_from_package() -> None:
    assert uno_env.env is uno_env.envs.pettingzoo_env.env
    assert uno_env.raw_env is raw_env
    aec = uno_env.env(num_players=3)
    aec.reset(seed=0)
    assert aec.possible_agents == ["player_0", "player_1", "player_2"]


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("n_players", TABLE_SIZES)
def test_pettingzoo_api_and_seed_tests(preset: str, n_players: int) -> None:
    api_test(uno_env.env(rules=preset, num_players=n_players), num_cycles=40)
    seed_test(lambda: uno_env.env(rules=preset, num_players=n_players), num_cycles=40)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_agent_selection_follows_the_engine(preset: str) -> None:
    """Every decision, in or out of turn, belongs to the seat the engine asks."""
    aec = uno_env.env(rules=preset, num_players=4)
    inner = aec.unwrapped
    phases: set[int] = set()

    def check(agent: str, obs: dict[str, np.ndarray]) -> None:
        state = inner.game_state
        assert agent == f"player_{int(state.current[0])}"
        np.testing.assert_array_equal(
            obs["action_mask"].astype(bool), core.legal_action_mask(inner.rules, state)[0]
        )
        phases.add(int(state.phase[0]))

    for seed in range(4):
        aec.reset(seed=seed)
        play_random(aec, seed, check)
    rules = aec.unwrapped.rules
    assert core.PLAY in phases
    if rules.wd4_challenge or rules.voluntary_draw:
        assert len(phases) > 1  # decisions other than a normal turn happened


def test_challenge_decision_goes_to_the_victim() -> None:
    aec = raw_env(num_players=3)
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(40):
        aec.reset(seed=seed)
        while aec.agents and not (aec.terminations[aec.agent_selection]):
            state = aec.game_state
            if state.phase[0] == core.CHALLENGE_PHASE:
                victim = (int(state.wd4_seat[0]) + int(state.direction[0])) % 3
                assert aec.agent_selection == f"player_{victim}"
                mask = aec.observe(aec.agent_selection)["action_mask"]
                assert set(np.flatnonzero(mask)) >= {C.CHALLENGE, C.ACCEPT}
                seen += 1
            aec.step(random_action(aec.observe(aec.agent_selection)["action_mask"], rng))
        if seen >= 3:
            break
    assert seen >= 3


def test_observations_and_masks() -> None:
    aec = raw_env(num_players=4)
    aec.reset(seed=5)
    acting = aec.agent_selection
    for agent in aec.agents:
        obs = aec.observe(agent)
        assert obs["observation"].shape == (OBS_DIM,)
        assert obs["observation"].dtype == np.float32
        assert obs["action_mask"].dtype == np.int8
        assert aec.observation_space(agent).contains(obs)
        if agent == acting:
            assert obs["action_mask"].any()
        else:
            assert not obs["action_mask"].any()
    # Each agent sees its own hand.
    hands = aec.game_state.hands[0]
    for seat, agent in enumerate(aec.possible_agents):
        np.testing.assert_array_equal(aec.observe(agent)["observation"][:54], hands[seat])


@pytest.mark.parametrize("n_players", TABLE_SIZES)
def test_win_loss_rewards(n_players: int) -> None:
    aec = raw_env(num_players=n_players)
    for seed in range(3):
        aec.reset(seed=seed)
        totals = dict.fromkeys(aec.possible_agents, 0.0)
        rng = np.random.default_rng(seed)
        while aec.agents:
            agent = aec.agent_selection
            _, reward, terminated, truncated, _ = aec.last()
            totals[agent] += reward
            if terminated or truncated:
                aec.step(None)
                continue
            aec.step(random_action(aec.observe(agent)["action_mask"], rng))
        winner = f"player_{int(aec.game_state.winner[0])}"
        assert totals[winner] == pytest.approx(1.0)
        for agent, total in totals.items():
            if agent != winner:
                assert total == pytest.approx(-1.0 / (n_players - 1))
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-6)


def test_points_rewards_are_zero_sum_and_favour_the_winner() -> None:
    aec = raw_env(num_players=3, reward="points")
    aec.reset(seed=2)
    play_random(aec, 2)
    state = aec.game_state
    table = uno_env.envs.points_rewards(aec.rules, state)[0]
    assert table.sum() == pytest.approx(0.0, abs=1e-5)
    assert table[int(state.winner[0])] > 0
    left = core.points_left(aec.rules, state, np.array([0]))[0]
    for seat in range(3):
        if seat != int(state.winner[0]):
            assert table[seat] == pytest.approx(-left[seat] / 100)


def test_truncation_gives_zero_rewards() -> None:
    aec = raw_env(num_players=2, max_turns=6)
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(6):
        legal = np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])
        aec.step(int(legal[rng.integers(legal.size)]))
    assert all(aec.truncations.values())
    assert not any(aec.terminations.values())
    assert all(r == 0 for r in aec.rewards.values())


def test_illegal_action_raises_and_keeps_the_state() -> None:
    aec = uno_env.env(num_players=2, illegal_action="raise")
    aec.reset(seed=1)
    agent = aec.agent_selection
    state = aec.unwrapped.game_state
    mask = aec.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match=agent):
        aec.step(illegal)
    assert aec.unwrapped.game_state is state
    assert aec.agent_selection == agent


def test_terminate_illegal_wrapper_by_default() -> None:
    aec = uno_env.env(num_players=3, illegal_reward=-2.0)
    aec.reset(seed=1)
    offender = aec.agent_selection
    illegal = int(np.flatnonzero(aec.observe(offender)["action_mask"] == 0)[0])
    aec.step(illegal)
    assert all(aec.terminations.values())
    assert aec.rewards[offender] == -2.0
    with pytest.raises(ValueError, match="illegal_action"):
        uno_env.env(illegal_action="ignore")  # type: ignore[arg-type]


def test_rules_as_preset_and_keywords() -> None:
    aec = raw_env("official", num_players=5, hand_size=5)
    aec.reset(seed=0)
    assert len(aec.agents) == 5
    assert aec.game_state.hand_size[0].sum() >= 25
    with pytest.raises(ConfigError, match="no_such_rule"):
        raw_env(no_such_rule=True)
    with pytest.raises(ConfigError, match="nonsense"):
        raw_env("nonsense")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")


def test_seeded_resets_and_explicit_keys() -> None:
    a, b = raw_env(num_players=3), raw_env(num_players=3)
    a.reset(seed=9)
    b.reset(seed=9)
    assert a.game_key == b.game_key
    a.reset()
    assert a.game_key != b.game_key  # the next hand of the schedule
    b.reset(options={"key": int(a.game_key)})
    np.testing.assert_array_equal(a.game_state.hands, b.game_state.hands)
    expected = core.init(a.rules, keys=np.array([a.game_key], dtype=np.uint64))
    np.testing.assert_array_equal(a.game_state.deck, expected.deck)


def test_render_one_seat_hides_the_other_hands(capsys: pytest.CaptureFixture[str]) -> None:
    aec = raw_env(num_players=3, render_mode="ansi", render_view=1, colour=False)
    aec.reset(seed=4)
    text = aec.render()
    assert isinstance(text, str)
    hands = aec.game_state.hands[0]
    lines = {line.split()[0 if not line.startswith(">") else 1]: line for line in text.split("\n")}
    for seat in range(3):
        line = next(v for k, v in lines.items() if k == f"player_{seat}")
        shown = [C.FACE_NAMES[f] for f in np.repeat(np.arange(54), hands[seat])]
        if seat == 1:
            assert all(name in line for name in shown)
        else:
            assert line.rstrip().endswith("cards")
    everyone = raw_env(num_players=3, render_mode="ansi", render_view="all", colour=True)
    everyone.reset(seed=4)
    assert "\x1b[" in everyone.render()  # coloured
    human = raw_env(num_players=2, render_mode="human", colour=False)
    human.reset(seed=0)
    assert "player_0" in capsys.readouterr().out


def test_the_wrapper_keeps_pettingzoos_order_checks() -> None:
    """The wrapper reads the env directly, and still refuses what PettingZoo's refuses."""
    aec = uno_env.env(num_players=2)
    with pytest.raises(AttributeError, match="before reset"):
        aec.agent_selection  # noqa: B018
    with pytest.raises(Exception, match="reset"):
        aec.step(0)
    aec.reset(seed=1)
    turns = iter(aec.agent_iter(max_iter=3))
    first = next(turns)
    assert first == aec.agent_selection
    with pytest.raises(AssertionError, match="need to call step"):
        next(turns)  # the agent was not stepped
    aec.step(random_action(aec.last()[0]["action_mask"], np.random.default_rng(0)))
    assert next(turns) == aec.agent_selection
    aec.step(random_action(aec.last()[0]["action_mask"], np.random.default_rng(0)))
    # max_iter=3 is reached: the refused call counted, as in PettingZoo.
    assert next(turns, None) is None
