"""The search agent ``ismcts``: legal, reproducible, blind to hidden cards, playable anywhere."""

from __future__ import annotations

import numpy as np
import pytest
from support.scenarios import stack
from support.search import decision_states

from uno_env import UnoGame, core, load_rules
from uno_env import cards as C
from uno_env.policy import Policy
from unolab.agents import make_agent
from unolab.agents.arena import evaluate_vs
from unolab.agents.ismcts import DEFAULT_ITERATIONS, IsmctsAgent, _Tree
from unolab.agents.registry import AGENT_NAMES, BOT_NAMES, SEARCH_NAMES
from unolab.agents.search_base import root_candidates

RULES2 = load_rules("official", num_players=2)


def test_registered_as_a_search_agent() -> None:
    assert "ismcts" in SEARCH_NAMES and "ismcts" in AGENT_NAMES and "ismcts" not in BOT_NAMES
    agent = make_agent("ismcts", seed=1)
    assert isinstance(agent, IsmctsAgent) and isinstance(agent, Policy)
    assert agent.iterations == DEFAULT_ITERATIONS
    assert agent.needs_state and not agent.uses_observations
    with pytest.raises(TypeError, match="act_from_state"):
        agent.act(np.zeros((1, 3), np.float32), np.ones((1, C.NUM_ACTIONS), bool))


@pytest.mark.parametrize(
    ("preset", "num_players", "switches"),
    [
        ("official", 2, {}),
        ("official", 4, {}),
        ("official", 4, {"teams": True}),
        ("street", 3, {}),
        ("seven_zero", 4, {}),
        ("rlcard", 2, {}),
        ("official", 3, {"jump_in": True, "play_to_last": True}),
    ],
)
def test_decisions_are_legal_under_every_preset(
    preset: str, num_players: int, switches: dict[str, bool]
) -> None:
    rules = load_rules(preset, num_players=num_players, **switches)
    state = decision_states(rules, 24, seed=num_players)
    before = state.copy()
    agent = IsmctsAgent(seed=3, iterations=64)
    masks = core.legal_action_mask(rules, state)
    actions = agent.act_from_state(rules, state, state.current.astype(np.int64))
    assert masks[np.arange(state.batch_size), actions].all()
    assert agent.decisions > 0
    # The real games are untouched: the search plays on its determinizations.
    for name, arr in before.array_fields().items():
        np.testing.assert_array_equal(getattr(state, name), arr, err_msg=name)


def test_every_iteration_passes_through_the_root() -> None:
    state = decision_states(RULES2, 40, seed=5)
    agent = IsmctsAgent(seed=2, iterations=96)
    masks = core.legal_action_mask(RULES2, state)
    for g in range(state.batch_size):
        one = state.select(np.array([g]))
        action = agent.act_from_state(RULES2, one, one.current.astype(np.int64))
        if agent.last_visits is None:  # one candidate: nothing searched, nothing estimated
            assert agent.last_values is not None and np.isnan(agent.last_values).all()
            continue
        visits = agent.last_visits
        assert visits.sum() == 96  # one root edge per iteration
        assert (visits[~masks[g]] == 0).all()  # only legal actions
        assert visits[int(action[0])] == visits.max()  # the most played root action
        # The estimates, in hand-reward units, for the root actions tried and only those.
        assert agent.last_values is not None and agent.last_values.shape == (1, C.NUM_ACTIONS)
        tried = ~np.isnan(agent.last_values[0])
        np.testing.assert_array_equal(tried, visits > 0)
        assert (agent.last_values[0, tried] >= -1.0).all()
        assert (agent.last_values[0, tried] <= 1.0).all()
        agent.last_visits = None


def test_a_full_tree_stops_growing_and_the_search_goes_on() -> None:
    rules = load_rules("official", num_players=4)
    state = decision_states(rules, 30, seed=4)
    agent = IsmctsAgent(seed=1, iterations=200)
    # Room for 5 nodes only: the iterations past it play on without adding nodes.
    agent._tree = _Tree.empty(200)._replace(
        child=np.full((5, C.NUM_ACTIONS), -1, dtype=np.int32), own=np.full(5, -1, dtype=np.int32)
    )
    masks = core.legal_action_mask(rules, state)
    actions = agent.act_from_state(rules, state, state.current.astype(np.int64))
    assert masks[np.arange(state.batch_size), actions].all()
    assert agent.decisions > 0 and agent._tree.used[0] == 5
    assert agent.last_visits is not None and agent.last_visits.sum() == 200


def test_reproducible_for_a_seed_and_the_tree_starts_afresh() -> None:
    state = decision_states(RULES2, 40, seed=7)
    seats = state.current.astype(np.int64)
    first = IsmctsAgent(seed=11, iterations=48).act_from_state(RULES2, state, seats)
    # The same agent after other searches: the tree of the last one is cleared first.
    reused = IsmctsAgent(seed=99, iterations=48)
    reused.act_from_state(
        RULES2, decision_states(RULES2, 10, seed=8), decision_states(RULES2, 10, 8).current
    )
    reused.rng = np.random.default_rng(11)
    np.testing.assert_array_equal(first, reused.act_from_state(RULES2, state, seats))


# Two states of one information set get the same decisions: tests/agents/test_search.py
# (test_two_states_of_one_information_set_get_the_same_decisions, for both search agents).


def test_it_finds_the_sure_win() -> None:
    # Seat 0 holds a red Skip and a red 5 on a red 1: Skip first plays again and goes out;
    # the 5 first leaves the Skip to a colour seat 1's wilds may change.
    rules = load_rules("official", num_players=2, hand_size=2)
    deck = stack([["R5", "RS"], ["W", "W+4"]], "R1", pile=["G2", "B9", "Y3"], dealer=1)
    game = UnoGame(rules, seed=0, dealer=1, deck=deck)
    game.step("uno")  # declared before the second-last card is played
    assert int(game.state.current[0]) == 0
    agent = IsmctsAgent(seed=0, iterations=256)
    action = agent.act_from_state(rules, game.state, np.array([0]))
    assert C.ACTION_NAMES[int(action[0])] == "RS"


def test_forced_decisions_skip_the_search() -> None:
    mask = np.zeros(C.NUM_ACTIONS, bool)
    mask[[3, 17, C.UNO]] = True
    assert root_candidates(mask).tolist() == [C.UNO]
    mask[C.UNO] = False
    mask[C.DRAW] = True
    assert root_candidates(mask).tolist() == [3, 17]  # a voluntary draw is pruned


def test_beats_random() -> None:
    result = evaluate_vs(
        RULES2, IsmctsAgent(seed=0, iterations=128), "random", 200, seed=77, progress=False
    )
    assert result.win_rate > 0.55, result
