"""The search agent ``pimc``: legal, reproducible, blind to hidden cards, playable anywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.scenarios import stack
from support.search import decision_states, hidden_twin

from uno_env import UnoGame, core, load_rules
from uno_env import cards as C
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.play import choose_actions, play_tables
from uno_env.policy import Policy
from uno_env.sampling import uniform_legal_actions
from uno_env.testing import check_invariants
from unolab.agents import make_agent
from unolab.agents.arena import evaluate_vs
from unolab.agents.inference import choice_weights
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.pimc import PimcAgent
from unolab.agents.registry import AGENT_NAMES, BOT_NAMES, SEARCH_NAMES
from unolab.agents.rollout import FAST_ROLLOUT, fast_actions, play_out
from unolab.agents.search import STRONG_ROLLOUTS

RULES2 = load_rules("official", num_players=2)
RULES2_HAND2 = load_rules("official", num_players=2, hand_size=2)
RULES2_HAND3 = load_rules("official", num_players=2, hand_size=3)


def test_registered_as_a_search_agent() -> None:
    assert SEARCH_NAMES == ("pimc", "pimc_strong", "pimc_guided", "ismcts")
    strong = make_agent("pimc_strong", 3)
    assert isinstance(strong, PimcAgent) and strong.name == "pimc_strong"
    assert strong.rollouts == STRONG_ROLLOUTS and make_agent("pimc", 3).rollouts == 64
    assert "pimc" in AGENT_NAMES and "pimc" not in BOT_NAMES
    agent = make_agent("pimc", seed=1)
    assert isinstance(agent, PimcAgent) and isinstance(agent, Policy)
    assert agent.needs_state and not agent.uses_observations


def test_act_without_the_state_says_how_to_play_it() -> None:
    with pytest.raises(TypeError, match="act_from_state"):
        PimcAgent(seed=0).act(np.zeros((1, 3), np.float32), np.ones((1, C.NUM_ACTIONS), bool))


@pytest.mark.parametrize("num_players", [2, 4])
def test_decisions_are_legal(num_players: int) -> None:
    rules = load_rules("official", num_players=num_players)
    state = decision_states(rules, 40, seed=num_players)
    agent = PimcAgent(seed=3, rollouts=8)
    masks = core.legal_action_mask(rules, state)
    actions = agent.act_from_state(rules, state, state.current.astype(np.int64))
    assert masks[np.arange(state.batch_size), actions].all()
    assert agent.decisions > 0 and agent.rollouts_played > 0 and agent.rollout_steps > 0


def test_reproducible_for_a_seed() -> None:
    state = decision_states(RULES2, 60, seed=7)
    seats = state.current.astype(np.int64)
    first = PimcAgent(seed=11, rollouts=16).act_from_state(RULES2, state, seats)
    again = PimcAgent(seed=11, rollouts=16).act_from_state(RULES2, state, seats)
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize(
    ("build", "games"),
    [
        (lambda: PimcAgent(seed=5, rollouts=16), 60),
        (lambda: IsmctsAgent(seed=5, iterations=48), 40),
    ],
    ids=["pimc", "ismcts"],
)
def test_two_states_of_one_information_set_get_the_same_decisions(
    build: Callable[[], PimcAgent | IsmctsAgent], games: int
) -> None:
    state = decision_states(RULES2, games, seed=9)
    twin = hidden_twin(state)
    assert check_invariants(RULES2, twin) == []
    assert not np.array_equal(twin.hands, state.hands)
    seats = state.current.astype(np.int64)
    a = build().act_from_state(RULES2, state, seats)
    b = build().act_from_state(RULES2, twin, seats)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("early_stop", [False, True])
def test_the_estimates_behind_each_decision(early_stop: bool) -> None:
    """``last_values``: a mean reward per searched candidate, the chosen action the best."""
    state = decision_states(RULES2, 30, seed=8)
    seats = state.current.astype(np.int64)
    masks = core.legal_action_mask(RULES2, state)
    agent = PimcAgent(seed=2, rollouts=16, early_stop=early_stop)
    actions = agent.act_from_state(RULES2, state, seats)
    values = agent.last_values
    assert values is not None and values.shape == (state.batch_size, C.NUM_ACTIONS)
    searched = ~np.isnan(values)
    assert not (searched & ~masks).any()  # only legal actions get an estimate
    assert (np.abs(values[searched]) <= 1).all()
    several = np.flatnonzero(searched.sum(axis=1) > 1)
    assert several.size > 10
    for g in several.tolist():
        assert values[g, actions[g]] == np.nanmax(values[g])
    single = np.flatnonzero(searched.sum(axis=1) == 0)
    for g in single.tolist():  # one candidate: no search, no estimate
        assert agent._candidates(masks[g]).size == 1


def test_a_prior_breaks_near_ties_its_way() -> None:
    """prior: the chosen action maximises estimate + weight x log prior probability."""
    from uno_env.observation import encode
    from unolab.agents.learned import load_policy
    from unolab.agents.search import GUIDED_PRIORS, guided_pimc

    state = decision_states(RULES2, 40, seed=12)
    seats = state.current.astype(np.int64)
    path = GUIDED_PRIORS[2].path
    plain = PimcAgent(seed=6, rollouts=16)
    unguided = plain.act_from_state(RULES2, state, seats)
    guided = PimcAgent(seed=6, rollouts=16, prior=path, prior_weight=0.5, rules=RULES2)
    actions = guided.act_from_state(RULES2, state, seats)
    values = guided.last_values
    assert values is not None
    np.testing.assert_array_equal(values, plain.last_values)  # the same search underneath
    known = ~np.isnan(values)
    probs = load_policy(path, rules=RULES2).action_probs(encode(RULES2, state), known)
    score = np.where(known, values + 0.5 * np.log(np.maximum(probs, 1e-9)), -np.inf)
    searched = known.sum(axis=1) > 1
    np.testing.assert_array_equal(actions[searched], score[searched].argmax(axis=1))
    np.testing.assert_array_equal(actions[~searched], unguided[~searched])
    assert (actions != unguided).any()  # the prior changed some choices
    zero = PimcAgent(seed=6, rollouts=16, prior=path, prior_weight=0.0)
    np.testing.assert_array_equal(zero.act_from_state(RULES2, state, seats), unguided)
    agent = make_agent("pimc_guided", 1)
    assert agent.name == "pimc_guided" and "pimc_guided" in SEARCH_NAMES
    assert guided_pimc(1)._prior_for(RULES2) is not None
    rules4 = load_rules("official", num_players=4)  # the 4-player network, its own weight
    four = guided_pimc(1)
    assert four._prior_for(rules4) is not None and four.prior_weight == GUIDED_PRIORS[4].weight
    assert GUIDED_PRIORS[4].weight != GUIDED_PRIORS[2].weight
    rules3 = load_rules("official", num_players=3)  # no 3-player network: unguided there
    state3 = decision_states(rules3, 8, seed=3)
    assert guided_pimc(1)._prior_for(rules3) is None
    street = load_rules("street", num_players=2)  # the networks play official rules only
    assert guided_pimc(1)._prior_for(street) is None
    for rules, state in (
        (rules4, decision_states(rules4, 8, seed=3)),
        (rules3, state3),
        (street, decision_states(street, 8, seed=3)),
    ):
        moves = agent.act_from_state(rules, state, state.current.astype(np.int64))
        assert core.legal_action_mask(rules, state)[np.arange(state.batch_size), moves].all()


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"prior_weight": -1.0}, "prior_weight must be a number >= 0, got -1.0"),
        ({"prior_weight": float("nan")}, "prior_weight"),
        ({"prior": "nowhere.safetensors"}, "nowhere.safetensors"),
    ],
)
def test_a_bad_prior_is_named(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises((ValueError, FileNotFoundError), match=named):
        PimcAgent(seed=0, **kwargs)  # type: ignore[arg-type]


def test_an_unknown_lack_facts_choice_is_named() -> None:
    with pytest.raises(ValueError, match=r"lack_facts must be one of drawn, .*got 'colours'"):
        PimcAgent(seed=0, lack_facts="colours")


@pytest.mark.parametrize("facts", ["drawn", "drawn_wild", "shown", "none"])
def test_every_lack_facts_choice_searches_legally_and_reproducibly(facts: str) -> None:
    rules = load_rules("official", num_players=3)
    state = decision_states(rules, 12, seed=5)
    seats = state.current.astype(np.int64)
    first = PimcAgent(seed=4, rollouts=8, lack_facts=facts).act_from_state(rules, state, seats)
    again = PimcAgent(seed=4, rollouts=8, lack_facts=facts).act_from_state(rules, state, seats)
    assert core.legal_action_mask(rules, state)[np.arange(state.batch_size), first].all()
    np.testing.assert_array_equal(first, again)


def test_the_lack_facts_change_what_the_search_samples() -> None:
    """The default reads ``lack_marks``; "none" reads nothing: other deals, other values."""
    rules = load_rules("official", num_players=2)
    state = decision_states(rules, 64, seed=6)
    assert (state.seat_draws[:, :, None] - state.lack_marks < 100).any()
    seats = state.current.astype(np.int64)
    drawn = PimcAgent(seed=4, rollouts=16)
    drawn.act_from_state(rules, state, seats)
    blind = PimcAgent(seed=4, rollouts=16, lack_facts="none")
    blind.act_from_state(rules, state, seats)
    assert drawn.last_values is not None and blind.last_values is not None
    assert not np.array_equal(np.nan_to_num(drawn.last_values), np.nan_to_num(blind.last_values))


def test_a_prior_of_another_table_size_is_refused() -> None:
    from unolab.agents.policy_metadata import CheckpointMismatchError
    from unolab.agents.search import GUIDED_PRIORS

    with pytest.raises(CheckpointMismatchError, match="num_players"):
        PimcAgent(seed=0, prior=GUIDED_PRIORS[2].path, rules=load_rules("official", num_players=3))


def test_forced_decisions_skip_the_search() -> None:
    agent = PimcAgent(seed=0, rollouts=4)
    mask = np.zeros(C.NUM_ACTIONS, bool)
    mask[[3, 17, C.UNO]] = True
    assert agent._candidates(mask).tolist() == [C.UNO]
    mask[C.UNO] = False
    mask[C.DRAW] = True
    assert agent._candidates(mask).tolist() == [3, 17]  # a voluntary draw is pruned
    assert PimcAgent(seed=0, prune_draws=False)._candidates(mask).tolist() == [3, 17, C.DRAW]


def test_time_budget_and_a_bot_rollout_policy() -> None:
    state = decision_states(RULES2, 6, seed=2)
    seats = state.current.astype(np.int64)
    masks = core.legal_action_mask(RULES2, state)
    timed = PimcAgent(seed=1, rollouts=4, time_ms=20)
    actions = timed.act_from_state(RULES2, state, seats)
    assert masks[np.arange(state.batch_size), actions].all()
    by_bot = PimcAgent(seed=1, rollouts=4, rollout_policy="mixbot")
    actions = by_bot.act_from_state(RULES2, state, seats)
    assert masks[np.arange(state.batch_size), actions].all()


def test_fast_rollout_finishes_every_game() -> None:
    for rules in (
        RULES2,
        load_rules("street", num_players=4),
        load_rules("seven_zero", num_players=3),
    ):
        state = decision_states(rules, 64, seed=4)
        final = play_out(rules, state.copy(), FAST_ROLLOUT)
        assert not final.live.any()
        assert check_invariants(rules, final) == []


@pytest.mark.parametrize(
    ("hand", "calm", "attacking"),
    [
        # Seat 0 holds these two cards and G2 (drawn), on R1. Calm (seat 1 holds three
        # cards): a coloured card before a wild, the colour held most, then the most points.
        # Attacking (seat 1, next to play, holds one card): Draw Two > Wild Draw Four >
        # Skip > Reverse > anything else.
        (["R8", "W+4"], "R8", "W+4:R"),
        (["RS", "R+2"], "RS", "R+2"),
        (["RS", "W+4"], "RS", "W+4:R"),
        (["RR", "R+2"], "RR", "R+2"),
        (["G1", "RR"], "G1", "RR"),
        (["G1", "R8"], "G1", "G1"),
    ],
)
def test_fast_rollout_attacks_a_seat_about_to_go_out(
    hand: list[str], calm: str, attacking: str
) -> None:
    deck = stack([hand, ["R1", "B7"]], "R1", pile=["G2", "B9"], dealer=1)
    chosen = []
    # Seat 0 draws G2 (no play); seat 1 then draws B9 (calm) or plays R1 to one card.
    for script, seat1_cards in ((("draw", "draw"), 3), (("draw", "uno", "R1"), 1)):
        game = UnoGame(RULES2_HAND2, seed=0, dealer=1, deck=deck)
        for action in script:
            game.step(action)
        assert game.state.hand_size[0].tolist() == [3, seat1_cards]
        assert int(game.state.current[0]) == 0 and game.top_card == "R1"
        chosen.append(C.ACTION_NAMES[int(fast_actions(RULES2_HAND2, game.state)[0])])
    assert chosen == [calm, attacking]


@pytest.mark.parametrize(
    "build",
    [
        lambda seed: PimcAgent(seed=seed, rollouts=4),
        lambda seed: IsmctsAgent(seed=seed, iterations=16),
    ],
    ids=["pimc", "ismcts"],
)
def test_plays_through_the_play_loop_and_as_an_env_opponent(
    build: Callable[[int], Policy],
) -> None:
    agent = build(0)
    keys = np.arange(12, dtype=np.uint64)
    lineups = np.tile([0, 1], (12, 1))
    results = play_tables(RULES2, [agent, make_agent("random", 1)], lineups, keys, on_error="raise")
    assert (results.winners >= 0).all()
    # Forfeit mode calls it the same way.
    state = decision_states(RULES2, 8, seed=1)
    _, forfeits = choose_actions(
        RULES2, state, [agent], np.zeros(state.batch_size, np.int64), on_error="forfeit"
    )
    assert not forfeits
    env = UnoGymEnv(rules=RULES2, opponents=build(2), learner_seat=0)
    _, info = env.reset(seed=3)
    for _ in range(200):
        _obs, _reward, terminated, truncated, info = env.step(
            int(np.flatnonzero(info["action_mask"])[0])
        )
        if terminated or truncated:
            break
    assert terminated or truncated


def test_beats_random() -> None:
    result = evaluate_vs(
        RULES2, PimcAgent(seed=0, rollouts=32), "random", 200, seed=77, progress=False
    )
    assert result.win_rate > 0.55, result


def test_early_stopping_keeps_the_budget_and_plays_legally() -> None:
    state = decision_states(RULES2, 30, seed=6)
    seats = state.current.astype(np.int64)
    masks = core.legal_action_mask(RULES2, state)
    plain = PimcAgent(seed=4, rollouts=16)
    plain.act_from_state(RULES2, state, seats)
    pruned = PimcAgent(seed=4, rollouts=16, early_stop=True)
    actions = pruned.act_from_state(RULES2, state, seats)
    assert masks[np.arange(state.batch_size), actions].all()
    # The same budget (up to rounding), spent differently.
    assert abs(pruned.rollouts_played - plain.rollouts_played) <= 0.1 * plain.rollouts_played


def test_search_speed_benchmark_runs() -> None:
    from unolab.benchmarks.search import main, search_speed

    speed = search_speed(RULES2, rollouts=4, seconds=0.05, seed=0)
    assert set(speed) == {"search_b1", "search_b64", "core_b1", "core_b4096"}
    assert all(rate > 0 for rate in speed.values())
    with pytest.raises(SystemExit):
        main(["speed", "--rollouts", "0"])


@pytest.mark.parametrize(
    ("agent", "unit", "too_big"),
    [("pimc", "rollouts/action", "65537"), ("ismcts", "iterations", "40000")],
)
def test_search_strength_benchmark_takes_either_agent(
    agent: str, unit: str, too_big: str, tmp_path: Path
) -> None:
    import json

    from unolab.benchmarks.search import main

    out = tmp_path / "strength.json"
    args = ["strength", "--agent", agent, "--budgets", "4", "--hands", "8", "--timing-hands", "1"]
    assert main([*args, "--opponents", "random", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert (row["agent"], row["budget"], row["budget_unit"], row["hands"]) == (agent, 4, unit, 8)
    assert 0.0 <= row["win_rate"] <= 1.0 and row["median_ms_per_decision"] > 0
    with pytest.raises(SystemExit):  # over the agent's own limit, refused in one line
        main(["strength", "--agent", agent, "--budgets", too_big])


def test_pimc_by_name_in_a_tournament_and_the_terminal_game(tmp_path: Path) -> None:
    """The resolver, a tournament config and the terminal game all take `pimc` by name."""
    from uno_env import load_rules
    from unolab.agents import resolve_policy
    from unolab.play import play_session
    from unolab.tournament.config import load_config as load_tournament
    from unolab.tournament.runner import run_tournament

    rules = load_rules("official", num_players=2)
    assert resolve_policy("pimc", rules, seed=1).name == "pimc"
    config = load_tournament(
        {
            "name": "pimc_by_name",
            "participants": ["pimc", "random"],
            "deal_sets": 4,
            "bootstrap": 10,
            "output_dir": str(tmp_path),
        }
    )
    summary = run_tournament(config, progress=False, plots=False, print_table=False)
    assert sum(row["games"] for row in summary["leaderboard"]) == 2 * 4 * 2
    answers = iter(["1"] * 5 + ["q"])
    said: list[str] = []
    play_session(
        rules,
        [resolve_policy("pimc", rules, seed=2)],
        seed=3,
        ask=lambda prompt: next(answers),
        say=said.append,
        colour=False,
        opponent_names=["pimc"],
    )
    assert any("player_1 (pimc)" in line for line in said)


def _face(name: str) -> int:
    return C.FACE_NAMES.index(name)


def _hands_rows(state: core.UnoState, seat: int, *hands: list[str]) -> np.ndarray:
    """Determinization hands (K, N, 54): the state's, with ``seat`` given each of ``hands``."""
    rows = np.repeat(state.hands[:1], len(hands), axis=0)
    for k, cards in enumerate(hands):
        rows[k, seat] = 0
        for card in cards:
            rows[k, seat, _face(card)] += 1
    return rows


def test_a_choice_is_weighed_by_the_playable_cards_of_the_sampled_hand() -> None:
    """Seat 0 played R5 on R1 from R5 B2 G3 (its only card that played). Seen from seat 1, a
    sampled hand R9 G3 would have offered two plays (R9, R5): half as likely to choose R5
    under the random player's rule; a hand with a wild offers two as well."""
    deck = stack([["R5", "B2", "G3"], ["R7", "Y1", "Y2"]], "R1", pile=["G9", "B9"], dealer=1)
    game = UnoGame(RULES2_HAND3, seed=0, dealer=1, deck=deck)
    game.step("R5")
    state = game.state
    assert (int(state.choice_colour[0, 0]), int(state.choice_top[0, 0])) == (0, _face("R1"))
    assert int(state.choice_draws[0, 0]) == 0 and int(state.current[0]) == 1
    hands = _hands_rows(state, 0, ["B2", "G3"], ["R9", "G3"], ["W", "G3"])
    weights = choice_weights(state, np.array([1]), hands, 3)
    np.testing.assert_allclose(weights[0], np.array([1, 0.5, 0.5]) / (2 / 3))
    # The seat's own choices are never weighed: it knows its hand.
    np.testing.assert_array_equal(choice_weights(state, np.array([0]), hands, 3), np.ones((1, 3)))


def test_a_draw_since_the_choice_or_a_drawn_card_played_weighs_nothing() -> None:
    """Seat 0 chose R5; then it drew (its hand then is no longer its hand now plus R5), and
    a drawn card played is no choice at all: both leave the weights at one."""
    deck = stack([["R5", "B2", "G3"], ["R7", "Y1", "Y2"]], "R1", pile=["G9", "R9"], dealer=1)
    game = UnoGame(RULES2_HAND3, seed=0, dealer=1, deck=deck)
    game.step("R5")
    game.step("R7")
    game.step("draw")  # seat 0 draws G9 (nothing plays on R7): its choice of R5 is stale
    state = game.state
    assert int(state.seat_draws[0, 0]) == 1 and int(state.choice_draws[0, 0]) == 0
    hands = _hands_rows(state, 0, ["B2", "G3", "G9"], ["R9", "G3", "G9"])
    np.testing.assert_array_equal(choice_weights(state, np.array([1]), hands, 2), np.ones((1, 2)))
    assert int(state.choice_draws[0, 1]) == 0  # seat 1 chose R7
    game.step("draw")  # seat 1 draws R9 on R7 and plays it: not a choice among its cards
    game.step("R9")
    assert int(game.state.choice_draws[0, 1]) == -1


def test_choice_contexts_match_the_cards_played_under_random_play() -> None:
    """Property: wherever a context is kept, the seat's last card played matched it."""
    rules = load_rules("official", num_players=4)
    state = core.init(rules, 64, seed=9)
    rng = np.random.default_rng(9)
    kept = 0
    for _ in range(80):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
        games, seats = np.nonzero(state.choice_draws >= 0)
        for game, seat in zip(games, seats, strict=True):
            face = int(state.last_played[game, seat])
            colour, top = int(state.choice_colour[game, seat]), int(state.choice_top[game, seat])
            wild = face >= C.NUM_COLOURED_FACES
            same_colour = not wild and face // C.NUM_RANKS == colour
            same_rank = top < C.NUM_COLOURED_FACES and not wild and face % 13 == top % 13
            assert wild or same_colour or same_rank, (game, seat, face, colour, top)
            kept += 1
        state = state.select(np.flatnonzero(state.live)) if not state.live.all() else state
        if state.batch_size == 0:
            break
    assert kept > 1000
