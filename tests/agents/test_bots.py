"""Tests of the baseline bots (``agents``): legality, strength, decisions and the registry.

* Legality: on states of random play under the official rules (2, 3, 4 and 7 players, plus
  rule variants), every bot's action is in the mask; and on random masks (any subset of the
  80 actions, the house rules' ``pass`` and ``swap:k`` included) it still is.
* Strength: each heuristic bot beats ``random`` in 2 players with a safe margin below the
  rate measured over 10,000 hands (``docs/bot_strength.json``); ``random_any`` loses.
* Hidden information: states that differ only in hidden cards give the same observation and
  the same action; the bots are deterministic and act on each row independently.
* Decisions, on hand-built observations: each bot's play order, the wild colour, holding,
  aggression, card counting, after a draw, declaring, catching, challenging, the starter
  colour and unknown actions.
* The papers' random player (``random``), on many states of real play: a playable card
  uniformly (a wild once: each of k + 1 cards with probability 1/(k + 1), chi-square), the
  wild's colour uniformly; never a draw or a keep while a card plays; always declares and
  catches; challenges at random; other decisions uniformly. ``random_action`` is the lab's
  former ``random``, unchanged: uniform over the play actions' ids.
* The registry: names, construction, and the error for an unknown name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from uno_env import cards as C
from uno_env import core
from uno_env.core.state import PHASE_NAMES
from uno_env.observation import OBS_DIM, OBS_LAYOUT, encode
from uno_env.policy import RandomActionBot
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions
from unolab.agents import (
    BOT_NAMES,
    CardRankingBot,
    GreedyPointsBot,
    MixBot,
    Policy,
    RandomAnyBot,
    RandomBot,
    make_agent,
)
from unolab.agents.arena import evaluate_vs

HEURISTICS = ("greedy_points", "card_ranking", "mixbot")
PLAY, AFTER_DRAW, CHALLENGE_PHASE, CHOOSE_COLOUR = 0, 1, 2, 3


# ----------------------------------------------------------------------------------------
# Hand-built observations
# ----------------------------------------------------------------------------------------


def make_obs(
    hand: Sequence[str],
    top: str = "R0",
    colour: str = "R",
    *,
    phase: int = PLAY,
    direction: int = 1,
    sizes: Sequence[int] | None = None,
    drawn: str | None = None,
    discard: Sequence[str] = (),
) -> npt.NDArray[np.float32]:
    """One observation (1, OBS_DIM) built field by field.

    ``sizes`` are the hand sizes of the other seats in relative order (slot 1, 2, ...); the
    table size is ``len(sizes) + 1`` (two players by default, the opponent holding 7).
    """
    sizes = [7] if sizes is None else list(sizes)
    obs = np.zeros((1, OBS_DIM), dtype=np.float32)
    L = OBS_LAYOUT
    for name in hand:
        obs[0, L["hand"].start + C.parse_card(name)] += 1
    obs[0, L["top_card"].start + C.parse_card(top)] = 1
    obs[0, L["colour"].start + "RYGB".index(colour)] = 1
    obs[0, L["direction"].start] = direction
    obs[0, L["phase"].start + phase] = 1
    if drawn is not None:
        obs[0, L["drawn_card"].start + C.parse_card(drawn)] = 1
    obs[0, L["hand_sizes"].start] = len(hand)
    obs[0, L["hand_sizes"].start + 1 : L["hand_sizes"].start + 1 + len(sizes)] = sizes
    for name in [top, *discard]:
        obs[0, L["discard_counts"].start + C.parse_card(name)] += 1
    obs[0, L["num_players"].start + len(sizes)] = 1
    return obs


def make_mask(*actions: str) -> npt.NDArray[np.bool_]:
    """A (1, 80) mask allowing the named actions."""
    mask = np.zeros((1, C.NUM_ACTIONS), dtype=bool)
    for name in actions:
        mask[0, C.parse_action(name)] = True
    return mask


def play_mask(hand: Sequence[str], top: str, colour: str, *extra: str) -> npt.NDArray[np.bool_]:
    """The official mask of a normal turn (wilds with all colours, a W+4 always offered)."""
    names = [*extra, "draw"]
    for name in set(hand):
        face = C.parse_card(name)
        if face >= C.WILD:
            names += [f"{name}:{c}" for c in "RYGB"]
        elif "RYGB"[C.FACE_COLOUR[face]] == colour or (
            C.parse_card(top) < C.WILD and C.FACE_RANK[face] == C.FACE_RANK[C.parse_card(top)]
        ):
            names.append(name)
    return make_mask(*names)


def act(bot: Policy, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_]) -> str:
    """The bot's action on one observation, by name."""
    action = int(bot.act(obs, mask)[0])
    assert mask[0, action], f"illegal action {C.action_name(action)}"
    return C.action_name(action)


def decide(
    name: str,
    hand: Sequence[str],
    top: str,
    colour: str,
    *,
    extra: Sequence[str] = (),
    **fields: Any,
) -> str:
    """The named bot's action in a normal turn with the official mask."""
    obs = make_obs(hand, top, colour, **fields)
    return act(make_agent(name), obs, play_mask(hand, top, colour, *extra))


# ----------------------------------------------------------------------------------------
# Legality
# ----------------------------------------------------------------------------------------


def _check_on_random_play(bot: Policy, rules: Rules, seed: int, games: int, steps: int) -> int:
    """Drive games with a mix of the bot's and random actions; check every bot action.

    Returns the number of (state, action) pairs checked.
    """
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    checked = 0
    for _ in range(steps):
        live = state.live
        if not live.any():
            break
        mask = core.legal_action_mask(rules, state)
        rows = np.flatnonzero(live)
        chosen = bot.act(encode(rules, state)[rows], mask[rows])
        assert chosen.shape == rows.shape and chosen.dtype == np.int64
        illegal = ~mask[rows, chosen]
        assert not illegal.any(), (
            f"{bot.name} chose {C.action_name(int(chosen[illegal][0]))} in game "
            f"{int(rows[illegal][0])}; legal: "
            f"{C.action_names(np.flatnonzero(mask[rows[illegal][0]]))}"
        )
        checked += rows.size
        # Half the games follow the bot, half play at random: varied states, bot states too.
        actions = uniform_legal_actions(mask, rng)
        follow = rows[rng.random(rows.size) < 0.5]
        actions[follow] = chosen[np.searchsorted(rows, follow)]
        state = core.step(rules, state, actions)
    return checked


@pytest.mark.parametrize("num_players", [2, 3, 4, 7])
@pytest.mark.parametrize("name", BOT_NAMES)
def test_never_illegal_under_official_rules(name: str, num_players: int) -> None:
    checked = _check_on_random_play(
        make_agent(name, seed=1),
        Rules(num_players=num_players),
        seed=num_players,
        games=128,
        steps=150,
    )
    assert checked > 5000


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=4, wd4_challenge=False, uno_call=False),
        Rules(num_players=3, wd4_anytime=True, wd4_challenge=False),
        Rules(num_players=2, hand_size=30),
    ],
    ids=["no-challenge-no-uno", "wd4-anytime", "2p-big-hands"],
)
@pytest.mark.parametrize("name", HEURISTICS)
def test_never_illegal_under_variants(name: str, rules: Rules) -> None:
    assert _check_on_random_play(make_agent(name), rules, seed=9, games=96, steps=120) > 3000


@pytest.mark.parametrize("name", BOT_NAMES)
def test_any_mask_gets_a_legal_action(name: str) -> None:
    """Random masks (future phases: pass, swap:k, stacking...) on real observations."""
    rng = np.random.default_rng(3)
    rules = Rules(num_players=5)
    state = core.init(rules, 400, seed=4)
    obs = encode(rules, state)
    masks = rng.random((400, C.NUM_ACTIONS)) < rng.choice([0.02, 0.1, 0.5], size=(400, 1))
    masks[:50] = False
    masks[:50, C.PASS] = rng.random(50) < 0.5
    masks[:50, C.SWAP : C.SWAP + 4] = rng.random((50, 4)) < 0.5
    masks[-20:] = False  # finished games: any action
    bot = make_agent(name, seed=2)
    chosen = bot.act(obs, masks)
    rows = np.flatnonzero(masks.any(axis=1))
    assert rows.size > 300
    assert masks[rows, chosen[rows]].all()
    assert ((chosen >= 0) & (chosen < C.NUM_ACTIONS)).all()


# ----------------------------------------------------------------------------------------
# Strength
# ----------------------------------------------------------------------------------------

# (bot, least win rate in 1,500 two-player hands against random). The 10,000-hand rates
# (docs/bot_strength.json, seed 1313) are 55.7%, 65.5% and 68.3%; each bound is at least 3
# standard errors (1.3 points each) below.
STRENGTH = [("greedy_points", 0.51), ("card_ranking", 0.61), ("mixbot", 0.63)]


@pytest.mark.parametrize(("name", "least"), STRENGTH)
def test_heuristic_beats_random_in_two_players(name: str, least: float) -> None:
    result = evaluate_vs(Rules(num_players=2), make_agent(name), "random", 1500, seed=11)
    assert result.win_rate >= least, result
    assert result.ci_low > 0.5


def test_mixbot_beats_random_in_four_players() -> None:
    # 39.2% over 10,000 hands (seed 1313); fair share 25%. 3 standard errors: 4.2 points.
    result = evaluate_vs(Rules(num_players=4), MixBot(), "random", 1200, seed=12)
    assert result.win_rate >= 0.35, result


def test_random_any_loses_to_random() -> None:
    # random_any draws at will: it wins about 1.6% of two-player hands.
    result = evaluate_vs(Rules(num_players=2), RandomAnyBot(5), "random", 600, seed=13)
    assert result.win_rate <= 0.08, result


# ----------------------------------------------------------------------------------------
# Observation only, determinism, row independence
# ----------------------------------------------------------------------------------------


def _hide_differently(state: core.UnoState, rng: np.random.Generator) -> core.UnoState:
    """Swap one card of a non-acting seat's hand with a different card of the draw pile."""
    other = state.copy()
    n_players = state.num_players
    for g in range(state.batch_size):
        seat = (int(state.current[g]) + 1 + int(rng.integers(n_players - 1))) % n_players
        held = np.flatnonzero(other.hands[g, seat])
        pile = np.arange(int(other.draw_pos[g]), C.DECK_SIZE)
        if held.size == 0 or pile.size == 0:
            continue
        face = int(rng.choice(held))
        candidates = pile[other.deck[g, pile] != face]
        if candidates.size == 0:
            continue
        pos = int(rng.choice(candidates))
        new_face = int(other.deck[g, pos])
        other.hands[g, seat, face] -= 1
        other.hands[g, seat, new_face] += 1
        other.deck[g, pos] = face
    return other


@pytest.mark.parametrize("num_players", [2, 4])
def test_hidden_information_does_not_change_actions(num_players: int) -> None:
    rules = Rules(num_players=num_players)
    rng = np.random.default_rng(6)
    state = core.init(rules, 300, seed=7)
    for _ in range(12):  # move into the middle of the hands
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    live = np.flatnonzero(state.live)
    state = state.select(live)
    other = _hide_differently(state, rng)
    assert (other.hands != state.hands).any(), "the hidden cards must differ"
    obs, other_obs = encode(rules, state), encode(rules, other)
    np.testing.assert_array_equal(obs, other_obs)
    for name in HEURISTICS:
        bot = make_agent(name)
        np.testing.assert_array_equal(
            bot.act(obs, core.legal_action_mask(rules, state)),
            bot.act(other_obs, core.legal_action_mask(rules, other)),
        )


@pytest.mark.parametrize("name", HEURISTICS)
def test_deterministic_and_row_independent(name: str) -> None:
    rules = Rules(num_players=3)
    rng = np.random.default_rng(8)
    state = core.init(rules, 200, seed=8)
    for _ in range(20):
        state = core.step(
            rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng)
        )
    obs, mask = encode(rules, state), core.legal_action_mask(rules, state)
    bot = make_agent(name)
    batched = bot.act(obs, mask)
    np.testing.assert_array_equal(batched, make_agent(name).act(obs, mask))
    one_by_one = [int(bot.act(obs[i : i + 1], mask[i : i + 1])[0]) for i in range(0, 200, 7)]
    assert one_by_one == batched[::7].tolist()
    order = rng.permutation(200)
    np.testing.assert_array_equal(bot.act(obs[order], mask[order]), batched[order])


# ----------------------------------------------------------------------------------------
# Decisions
# ----------------------------------------------------------------------------------------


def test_greedy_dumps_the_most_points() -> None:
    hand = ["R3", "R9", "RS", "G4", "W"]
    assert decide("greedy_points", hand, "R5", "R") == "W:R"  # 50 points; red is most common
    assert decide("greedy_points", hand[:4], "R5", "R") == "RS"  # 20 > 9 > 3
    assert decide("greedy_points", ["R3", "R9", "G4"], "R5", "R") == "R9"


def test_greedy_prefers_higher_points_across_colours() -> None:
    # R3 plays by colour, G4 by rank: G4 is worth more.
    assert decide("greedy_points", ["R3", "G9", "G4"], "R4", "R") == "G4"
    # A Wild Draw Four names the most common colour: green (2) over yellow (1).
    assert decide("greedy_points", ["W+4", "G1", "G2", "Y9"], "B5", "B") == "W+4:G"


def test_card_ranking_order() -> None:
    hand = ["R+2", "RS", "R7", "RR", "W+4", "W", "R2"]
    expected = ["R+2", "RS", "R7", "R2", "RR", "W+4:R", "W:R"]
    for want in expected:
        got = decide("card_ranking", hand, "R5", "R")
        assert got == want, (hand, got)
        hand.remove(want.split(":")[0])


def test_mixbot_prefers_its_colour_and_holds_wilds() -> None:
    # On R3: R+2 leaves one red card, B3 leaves two blue cards: switch to blue.
    assert decide("mixbot", ["R+2", "R8", "B3", "B5", "B7"], "R3", "R") == "B3"
    # Only a Wild plays, 3 coloured cards: hold it and draw.
    assert decide("mixbot", ["W", "B3", "B4", "G5"], "R7", "R") == "draw"
    # 2 coloured cards left: the Wild may go, naming blue (2 blue cards).
    assert decide("mixbot", ["W", "B3", "B4"], "R7", "R") == "W:B"
    # A Wild Draw Four is held with 5 coloured cards, played with 4.
    five = ["W+4", "B3", "B4", "B5", "G5", "G6"]
    assert decide("mixbot", five, "R7", "R") == "draw"
    assert decide("mixbot", five[:-1], "R7", "R") == "W+4:B"
    # The other bots play a lone wild at once.
    assert decide("card_ranking", ["W", "B3", "B4", "G5"], "R7", "R") == "W:B"


def test_mixbot_attacks_the_next_player() -> None:
    hand = ["R+2", "R8", "B3", "B5", "B7"]
    # 4 players, direction +1: the next player is slot 1.
    assert decide("mixbot", hand, "R3", "R", sizes=[1, 5, 5]) == "R+2"
    assert decide("mixbot", hand, "R3", "R", sizes=[5, 5, 1]) == "B3"
    # Direction -1: the next player is slot 3.
    assert decide("mixbot", hand, "R3", "R", sizes=[5, 5, 1], direction=-1) == "R+2"
    assert decide("mixbot", hand, "R3", "R", sizes=[1, 5, 5], direction=-1) == "B3"
    # Wild Draw Four (otherwise held) over Skip when the next player is on one card.
    attack = ["RS", "W+4", "B1", "B2", "B3", "B4", "B5"]
    assert decide("mixbot", attack, "R9", "R", sizes=[1]) == "W+4:B"
    assert decide("mixbot", attack, "R9", "R", sizes=[4]) == "RS"


def test_mixbot_keeps_cards_matchable_then_counts_cards() -> None:
    sixes = ["Y6", "Y6", "G6", "B6"]
    fives = ["Y5", "Y5", "G5", "G5", "B5"]
    # R6 leaves R5 and G6 playable, R5 leaves only R6: that comes before card counting
    # (which, with the fives gone, prefers R5).
    assert decide("mixbot", ["R5", "R6", "G6"], "R1", "R", discard=fives) == "R6"
    # Equal otherwise: play the rank whose other copies are already out of play.
    assert decide("mixbot", ["R5", "R6"], "R1", "R", discard=sixes) == "R6"
    assert decide("mixbot", ["R5", "R6"], "R1", "R", discard=fives) == "R5"


@pytest.mark.parametrize("name", HEURISTICS)
def test_after_a_draw(name: str) -> None:
    obs = make_obs(["B1", "G7", "Y3", "R4"], "R9", "R", phase=AFTER_DRAW, drawn="R4")
    assert act(make_agent(name), obs, make_mask("R4", "keep")) == "R4"


def test_mixbot_keeps_a_drawn_wild_it_holds() -> None:
    obs = make_obs(["B1", "G7", "Y3", "W"], "R9", "R", phase=AFTER_DRAW, drawn="W")
    mask = make_mask("W:R", "W:Y", "W:G", "W:B", "keep")
    assert act(MixBot(), obs, mask) == "keep"
    assert act(GreedyPointsBot(), obs, mask) == "W:G"  # one card each: green has most points


@pytest.mark.parametrize("name", ("random", "random_action", *HEURISTICS))
def test_declares_and_catches(name: str) -> None:
    bot = make_agent(name, seed=0)
    obs = make_obs(["R1", "B2"], "R5", "R", sizes=[1])
    assert act(bot, obs, make_mask("R1", "draw", "uno")) == "uno"
    assert act(bot, obs, make_mask("R1", "draw", "uno", "catch")) == "catch"


@pytest.mark.parametrize("name", HEURISTICS)
def test_challenge_heuristic(name: str) -> None:
    bot = make_agent(name)
    mask = make_mask("challenge", "accept")
    # 4 players, direction +1: the Wild Draw Four came from slot 3.
    big = make_obs(["R1", "B2"], "W+4", "G", phase=CHALLENGE_PHASE, sizes=[1, 1, 6])
    small = make_obs(["R1", "B2"], "W+4", "G", phase=CHALLENGE_PHASE, sizes=[6, 6, 2])
    assert act(bot, big, mask) == "challenge"
    assert act(bot, small, mask) == "accept"
    # Direction -1: it came from slot 1.
    reverse = make_obs(
        ["R1", "B2"], "W+4", "G", phase=CHALLENGE_PHASE, sizes=[6, 1, 1], direction=-1
    )
    assert act(bot, reverse, mask) == "challenge"


@pytest.mark.parametrize("name", HEURISTICS)
def test_names_the_starter_colour(name: str) -> None:
    obs = make_obs(["Y1", "Y2", "G3", "B9", "W"], "W", "R", phase=CHOOSE_COLOUR)
    obs[0, OBS_LAYOUT["colour"]] = 0
    obs[0, OBS_LAYOUT["colour"].start + 4] = 1  # not named yet
    mask = make_mask("colour:R", "colour:Y", "colour:G", "colour:B")
    assert act(make_agent(name), obs, mask) == "colour:Y"


@pytest.mark.parametrize("name", HEURISTICS)
def test_unknown_phases_fall_back_sensibly(name: str) -> None:
    bot = make_agent(name)
    obs = make_obs(["R1", "B2"], "R5", "R", phase=7, sizes=[6, 2, 9])
    # seven-zero: swap with the smallest hand (2 cards, two seats ahead).
    assert act(bot, obs, make_mask("swap:1", "swap:2", "swap:3")) == "swap:2"
    assert act(bot, obs, make_mask("pass")) == "pass"
    # A jump-in window: play the identical card rather than pass.
    jump = make_obs(["R5", "B2"], "R5", "R", phase=6)
    assert act(bot, jump, make_mask("R5", "pass")) == "R5"


def test_mixbot_plays_a_held_card_outside_its_own_turn() -> None:
    # A stacking window (phase 5): a held Wild Draw Four passes the penalty on.
    obs = make_obs(["W+4", "B1", "B2", "B3", "B4", "B5"], "W+4", "R", phase=5)
    assert act(MixBot(), obs, make_mask("W+4:R", "W+4:Y", "W+4:G", "W+4:B", "draw")) == "W+4:B"


# ----------------------------------------------------------------------------------------
# The papers' random player (random) and the lab's former random (random_action)
# ----------------------------------------------------------------------------------------

WILD_BLOCKS = (C.PLAY_WILD, C.PLAY_WILD_DRAW_FOUR)


def _real_decisions(
    rules: Rules, games: int, steps: int, seed: int
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """The masks and phases of every live decision of ``games`` hands of random play."""
    rng = np.random.default_rng(seed)
    state = core.init(rules, games, seed=seed)
    masks, phases = [], []
    for _ in range(steps):
        mask = core.legal_action_mask(rules, state)
        live = np.flatnonzero(mask.any(axis=1))
        masks.append(mask[live])
        phases.append(state.phase[live].copy())
        state = core.step(rules, state, uniform_legal_actions(mask, rng))
    return np.concatenate(masks), np.concatenate(phases)


def _cards(mask: npt.NDArray[np.bool_]) -> list[int]:
    """The distinct playable cards of one mask: a coloured play's id, or a wild's block."""
    plays = np.flatnonzero(mask[: C.NUM_COLOURED_FACES]).tolist()
    return plays + [first for first in WILD_BLOCKS if mask[first : first + C.NUM_COLOURS].any()]


def _card_of(action: int) -> int:
    """The card an action plays: its id, or its wild block's first id."""
    for first in WILD_BLOCKS:
        if first <= action < first + C.NUM_COLOURS:
            return first
    return action


def _chi_square_p(counts: npt.NDArray[np.int64], expected: npt.NDArray[np.float64]) -> float:
    from scipy.stats import chisquare

    return float(chisquare(counts, expected).pvalue)


def test_random_chooses_a_playable_card_uniformly_a_wild_once() -> None:
    """Many real turns with a wild and k other playable cards: each card has 1/(k + 1)."""
    masks, phases = _real_decisions(Rules(num_players=3), 512, 60, seed=21)
    turns = masks[(phases == PHASE_NAMES.index("play")) & ~masks[:, C.UNO] & ~masks[:, C.CATCH]]
    with_wild = [m for m in turns if len(_cards(m)) >= 2 and _cards(m)[-1] in WILD_BLOCKS]
    states = np.array(with_wild[:300])
    assert len(states) == 300, len(with_wild)
    repeats = 300
    chosen = RandomBot(5).act(np.empty((0, 0), np.float32), np.repeat(states, repeats, axis=0))
    chosen = chosen.reshape(len(states), repeats)
    counts, expected, wild_colours = [], [], np.zeros(C.NUM_COLOURS, np.int64)
    for mask, row in zip(states, chosen, strict=True):
        assert mask[row].all()
        cards = _cards(mask)
        played = np.array([_card_of(int(a)) for a in row])
        counts += [int((played == card).sum()) for card in cards]
        expected += [repeats / len(cards)] * len(cards)
        wilds = row[played >= C.PLAY_WILD]
        np.add.at(wild_colours, wilds % C.NUM_COLOURS, 1)
    assert _chi_square_p(np.array(counts), np.array(expected)) > 1e-3
    # Every wild may name any colour under the official rules: each is named 1/4 of the time.
    assert wild_colours.sum() > 10_000
    uniform = np.full(C.NUM_COLOURS, wild_colours.sum() / C.NUM_COLOURS)
    assert _chi_square_p(wild_colours, uniform) > 1e-3


def test_random_action_counts_a_wild_once_per_colour() -> None:
    """The former random: R1, R2 and a Wild give the Wild 4/6 of the plays, not 1/3."""
    mask = make_mask("R1", "R2", "W:R", "W:Y", "W:G", "W:B", "draw")
    many = np.repeat(mask, 6000, axis=0)
    none = np.empty((6000, 0), np.float32)
    old = RandomActionBot(3).act(none, many)
    new = RandomBot(3).act(none, many)
    assert abs((old >= C.PLAY_WILD).mean() - 4 / 6) < 0.02
    assert abs((new >= C.PLAY_WILD).mean() - 1 / 3) < 0.02
    assert abs((new == C.parse_action("R1")).mean() - 1 / 3) < 0.02
    # Only the colours a wild may name (colours in a circle: one) are chosen.
    circle = make_mask("R1", "W:G", "W+4:G")
    picked = RandomBot(4).act(none[:3000], np.repeat(circle, 3000, axis=0))
    assert set(C.action_names(np.unique(picked))) == {"R1", "W:G", "W+4:G"}


def test_random_action_is_the_former_random_bit_for_bit() -> None:
    """random_action chooses as the lab's former random did (the golden games)."""
    masks, _ = _real_decisions(Rules(num_players=4), 128, 80, seed=22)
    rng = np.random.default_rng(9)
    preferred = masks.copy()
    can_play = masks[:, : C.NUM_PLAY_ACTIONS].any(axis=1)
    preferred[can_play, C.DRAW] = False
    preferred[can_play, C.KEEP] = False
    for forced in (C.UNO, C.CATCH):
        preferred[masks[:, forced]] = False
        preferred[masks[:, forced], forced] = True
    np.testing.assert_array_equal(
        RandomActionBot(9).act(np.empty((len(masks), 0), np.float32), masks),
        uniform_legal_actions(preferred, rng),
    )


@pytest.mark.parametrize("name", ["random", "random_action"])
def test_random_plays_whenever_a_card_plays(name: str) -> None:
    """Real decisions of 2 and 4 players: never a draw or keep while a card plays."""
    for players in (2, 4):
        masks, phases = _real_decisions(Rules(num_players=players), 256, 150, seed=players)
        chosen = make_agent(name, seed=1).act(np.empty((len(masks), 0), np.float32), masks)
        assert masks[np.arange(len(masks)), chosen].all()
        free = ~masks[:, C.UNO] & ~masks[:, C.CATCH]
        can_play = masks[:, : C.NUM_PLAY_ACTIONS].any(axis=1) & free
        assert can_play.sum() > 5000
        assert (chosen[can_play] < C.NUM_PLAY_ACTIONS).all()
        # After a draw the drawn card is played whenever it plays (the mask offers it).
        after_draw = (phases == PHASE_NAMES.index("after_draw")) & free
        assert after_draw.sum() > 200
        assert (chosen[after_draw] != C.KEEP).all()
        # Stuck: it draws.
        stuck = (phases == PHASE_NAMES.index("play")) & free & ~can_play
        assert stuck.sum() > 500 and (chosen[stuck] == C.DRAW).all()


def test_random_always_declares_and_catches_on_real_play() -> None:
    masks, _ = _real_decisions(Rules(num_players=3), 256, 200, seed=23)
    chosen = RandomBot(2).act(np.empty((len(masks), 0), np.float32), masks)
    catch, uno = masks[:, C.CATCH], masks[:, C.UNO] & ~masks[:, C.CATCH]
    assert catch.sum() > 50 and uno.sum() > 500
    assert (chosen[catch] == C.CATCH).all() and (chosen[uno] == C.UNO).all()


def test_random_other_decisions_are_uniform() -> None:
    none = np.empty((8000, 0), np.float32)
    bot = RandomBot(6)

    def shares(*actions: str) -> dict[str, float]:
        picked = C.action_names(bot.act(none, np.repeat(make_mask(*actions), 8000, axis=0)))
        return {a: picked.count(a) / 8000 for a in actions}

    # The Wild Draw Four challenge: at random.
    assert all(abs(v - 1 / 2) < 0.03 for v in shares("challenge", "accept").values())
    # The seven-zero swap target and the starter's colour: uniform.
    assert all(abs(v - 1 / 3) < 0.03 for v in shares("swap:1", "swap:2", "swap:3").values())
    colours = shares("colour:R", "colour:Y", "colour:G", "colour:B")
    assert all(abs(v - 1 / 4) < 0.03 for v in colours.values())
    # A jump-in window: pass or play the identical card, a wild counting once.
    assert all(abs(v - 1 / 2) < 0.03 for v in shares("R5", "pass").values())
    jump_wild = shares("W:R", "W:Y", "W:G", "W:B", "pass")
    assert abs(jump_wild["pass"] - 1 / 2) < 0.03
    # A stacking window looks like a turn in the mask: a card that answers is played.
    stack = shares("R+2", "W+4:R", "W+4:Y", "W+4:G", "W+4:B", "draw", "challenge")
    assert stack["draw"] == stack["challenge"] == 0 and abs(stack["R+2"] - 1 / 2) < 0.03
    assert all(abs(v - 1 / 2) < 0.03 for v in shares("draw", "challenge").values())


def test_random_is_stronger_than_the_former_random() -> None:
    # docs/bot_strength.json (seed 1313): random_action wins 48.1% [47.1, 49.1] of 10,000
    # two-player hands against random, and 23.5% [22.7, 24.4] in 4 players.
    result = evaluate_vs(
        Rules(num_players=2), RandomActionBot(3), "random", 10_000, seed=14, progress=False
    )
    assert result.win_rate < 0.5, result


# ----------------------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------------------


def test_registry_builds_every_bot() -> None:
    assert BOT_NAMES == (
        "random",
        "random_action",
        "random_any",
        "greedy_points",
        "card_ranking",
        "mixbot",
    )
    classes = (RandomBot, RandomActionBot, RandomAnyBot, GreedyPointsBot, CardRankingBot, MixBot)
    for name, cls in zip(BOT_NAMES, classes, strict=True):
        bot = make_agent(name, seed=3)
        assert type(bot) is cls and bot.name == name
        assert isinstance(bot, Policy)


def test_registry_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown bot 'greedy'") as info:
        make_agent("greedy")
    for name in BOT_NAMES:
        assert name in str(info.value)


def test_random_bots_are_reproducible_from_their_seed() -> None:
    rules = Rules(num_players=3)
    state = core.init(rules, 64, seed=1)
    obs, mask = encode(rules, state), core.legal_action_mask(rules, state)
    for name in ("random", "random_action", "random_any"):
        first = make_agent(name, seed=4).act(obs, mask)
        np.testing.assert_array_equal(first, make_agent(name, seed=4).act(obs, mask))
