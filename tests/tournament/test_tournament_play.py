"""Tests of batched tournament play with forfeits (``unolab.tournament.play``).

* Each game's result does not depend on the other games of its batch (deterministic bots),
  so the row bookkeeping survives the batch shrinking as games end.
* Finishing orders: winner 0 and tied losers; the full order under ``play_to_last``. Every
  order the engine gives passes the check a resumed log's lines go through
  (:func:`unolab.tournament.chunks.ranks_problem`), under each rule that shapes it, and
  the orders no hand can end in are refused.
* Forfeits: a policy that raises on some rows forfeits exactly those games (the other games
  are the same as with a healthy policy); illegal actions and wrong shapes forfeit; the
  offender ranks last and the others tie.
* A whole tournament with a faulty agent goes on and reports the forfeits.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from uno_env import cards as C
from uno_env.observation import OBS_LAYOUT
from uno_env.outcomes import END_FORFEIT, END_TRUNCATED, END_WON
from uno_env.play import PolicyError, play_tables
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents import make_agent
from unolab.tournament.chunks import ranks_problem
from unolab.tournament.config import load_config
from unolab.tournament.design import deal_keys
from unolab.tournament.results import END_KINDS, GameRecord
from unolab.tournament.runner import run_tournament


class BigHandCrash:
    """greedy_points, but the whole call raises when any row holds ``limit`` cards or more."""

    name = "big_hand_crash"

    def __init__(self, seed: int = 0, limit: int = 11) -> None:
        self.inner = make_agent("greedy_points", seed)
        self.limit = limit

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        cards = observations[:, OBS_LAYOUT["hand"]].sum(axis=1)
        if (cards >= self.limit).any():
            raise RuntimeError("too many cards")
        return self.inner.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        self.inner.reset(games)


class DrawsWhenChallenged:
    """greedy_points, but answers a Wild Draw Four with an illegal 'draw'."""

    name = "illegal"

    def __init__(self, seed: int = 0) -> None:
        self.inner = make_agent("greedy_points", seed)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        actions = self.inner.act(observations, masks)
        return np.where(masks[:, C.CHALLENGE], C.DRAW, actions)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


class WrongShape:
    """Returns one action too many."""

    name = "wrong_shape"

    def __init__(self, seed: int = 0) -> None:
        del seed

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        return np.zeros(masks.shape[0] + 1, dtype=np.int64)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


def _lineups(n: int, k: int) -> npt.NDArray[np.int64]:
    """Participant (seat + game) % k in each seat: every rotation."""
    return (np.arange(k)[None, :] + np.arange(n)[:, None]) % k


def test_results_do_not_depend_on_the_batch() -> None:
    rules = Rules(num_players=3, seat_draw_streams=True)
    policies: list[Policy | None] = [
        make_agent(b) for b in ("mixbot", "greedy_points", "card_ranking")
    ]
    lineups, keys = _lineups(90, 3), deal_keys(0, np.arange(90))
    full = play_tables(rules, policies, lineups, keys)
    for start in (0, 17, 60):
        part = play_tables(rules, policies, lineups[start : start + 25], keys[start : start + 25])
        for field in ("ranks", "points", "cards_left", "turns", "end"):
            assert np.array_equal(getattr(part, field), getattr(full, field)[start : start + 25])
    assert (full.end == END_WON).all()
    assert (np.sort(full.ranks, axis=1) == [0, 1, 1]).all(), "a winner and tied losers"
    assert (full.points.sum(axis=1) > 0).all()


def test_play_to_last_gives_the_full_order() -> None:
    rules = Rules(num_players=4, play_to_last=True, seat_draw_streams=True)
    policies: list[Policy | None] = [make_agent("greedy_points") for _ in range(4)]
    res = play_tables(rules, policies, _lineups(40, 4), deal_keys(1, np.arange(40)))
    won = res.end == END_WON
    assert won.any()
    assert (np.sort(res.ranks[won], axis=1) == [0, 1, 2, 3]).all()


def _record(
    ranks: tuple[int, ...],
    end: str,
    forfeit_seat: int | None = None,
    cards_left: tuple[int, ...] | None = None,
    turns: int = 1,
) -> GameRecord:
    """A log line of these ranks; unless given, the seats at rank 0 hold no card."""
    k = len(ranks)
    return GameRecord(
        deal=0,
        seating=0,
        variant=0,
        key=0,
        seats=tuple(f"p{i}" for i in range(k)),
        ranks=ranks,
        points=(0,) * k,
        cards_left=cards_left if cards_left is not None else tuple(int(r > 0) for r in ranks),
        turns=turns,
        end=end,
        forfeit_seat=forfeit_seat,
    )


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=3, max_turns=60),
        Rules(num_players=4, teams=True, max_turns=60),
        Rules(num_players=4, play_to_last=True, max_turns=120),
    ],
    ids=["plain", "teams", "play_to_last"],
)
def test_every_finishing_order_the_engine_gives_passes_the_log_check(rules: Rules) -> None:
    k = rules.num_players
    policies: list[Policy | None] = [make_agent("greedy_points") for _ in range(k - 1)]
    policies.append(BigHandCrash(limit=12))  # some hands end in a forfeit
    res = play_tables(rules, policies, _lineups(160, k), deal_keys(5, np.arange(160)))
    assert {END_WON, END_TRUNCATED, END_FORFEIT} <= set(res.end.tolist())
    for game in range(res.num_games):
        seat = int(res.forfeit_seat[game])
        record = _record(
            tuple(res.ranks[game].tolist()),
            END_KINDS[int(res.end[game])],
            seat if seat >= 0 else None,
            cards_left=tuple(res.cards_left[game].tolist()),  # as the engine left them
            turns=int(res.turns[game]),
        )
        assert ranks_problem(record, rules) == "", (game, record)


@pytest.mark.parametrize(
    ("rules", "ranks", "end", "forfeit_seat", "named"),
    [
        (Rules(num_players=2), (0, 0), "won", None, "one winner at 0"),
        (Rules(num_players=3), (0, 1, 2), "won", None, "one winner at 0"),
        (Rules(num_players=3), (1, 1, 1), "won", None, "no finishing order"),
        (Rules(num_players=3), (0, 2, 2), "won", None, "no finishing order"),
        (Rules(num_players=4, teams=True), (0, 0, 2, 2), "won", None, "the winning team"),
        (Rules(num_players=4, teams=True), (0, 1, 1, 1), "won", None, "the winning team"),
        (Rules(num_players=4, play_to_last=True), (0, 1, 1, 3), "won", None, "its own place"),
        (Rules(num_players=2), (0, 1), "truncated", None, "tie at 0"),
        (Rules(num_players=4, play_to_last=True), (0, 0, 2, 2), "truncated", None, "may tie"),
        (Rules(num_players=3), (0, 0, 0), "forfeit", 1, "must rank last"),
        (Rules(num_players=3), (1, 0, 2), "forfeit", 2, "tie at 0"),
    ],
)
def test_a_finishing_order_no_hand_ends_in_is_named(
    rules: Rules, ranks: tuple[int, ...], end: str, forfeit_seat: int | None, named: str
) -> None:
    problem = ranks_problem(_record(ranks, end, forfeit_seat), rules)
    assert named in problem and str(list(ranks)) in problem


def test_truncated_games_are_ties() -> None:
    rules = Rules(num_players=2, max_turns=6)
    policies: list[Policy | None] = [make_agent("random", 0), make_agent("random", 1)]
    res = play_tables(rules, policies, _lineups(50, 2), deal_keys(2, np.arange(50)))
    truncated = res.end == END_TRUNCATED
    assert truncated.sum() > 40
    assert (res.ranks[truncated] == 0).all() and (res.turns[truncated] == 6).all()


def test_a_raising_policy_forfeits_exactly_its_failing_games() -> None:
    rules = Rules(num_players=2, seat_draw_streams=True)
    n = 200
    lineups, keys = _lineups(n, 2), deal_keys(3, np.arange(n))
    healthy = play_tables(rules, [make_agent("mixbot"), make_agent("greedy_points")], lineups, keys)
    faulty = play_tables(rules, [make_agent("mixbot"), BigHandCrash()], lineups, keys)
    forfeited = faulty.end == END_FORFEIT
    assert 0 < forfeited.sum() < n
    # The faulty seat is the one holding participant 1 and it held >= 11 cards.
    rows = np.flatnonzero(forfeited)
    seats = faulty.forfeit_seat[rows]
    assert (lineups[rows, seats] == 1).all()
    assert (faulty.cards_left[rows, seats] >= 11).all()
    assert all("RuntimeError: too many cards" in faulty.reasons[int(g)] for g in rows)
    # The offender ranks last, the other seat first.
    assert (faulty.ranks[rows, seats] == 1).all() and (faulty.ranks[rows, 1 - seats] == 0).all()
    # Every other game is exactly the game a healthy agent plays.
    ok = ~forfeited
    for field in ("ranks", "points", "turns", "cards_left"):
        assert np.array_equal(getattr(faulty, field)[ok], getattr(healthy, field)[ok])
    assert set(faulty.reasons) == {int(g) for g in rows}


def test_illegal_actions_and_wrong_shapes_forfeit() -> None:
    rules = Rules(num_players=3)
    lineups, keys = _lineups(120, 3), deal_keys(4, np.arange(120))
    res = play_tables(
        rules, [make_agent("mixbot"), DrawsWhenChallenged(), make_agent("random", 0)], lineups, keys
    )
    rows = np.flatnonzero(res.end == END_FORFEIT)
    assert rows.size > 0
    assert all(res.reasons[int(g)].startswith(f"chose action {C.DRAW} ") for g in rows)
    assert (lineups[rows, res.forfeit_seat[rows]] == 1).all()
    offender = res.ranks[rows, res.forfeit_seat[rows]]
    assert (offender == 2).all() and (res.ranks[rows].sum(axis=1) == 2).all()

    res = play_tables(
        rules, [make_agent("mixbot"), WrongShape(), make_agent("random", 0)], lineups, keys
    )
    hit = res.end == END_FORFEIT
    assert hit.all(), "participant 1 sits in every game and fails on its first decision"
    assert "expected" in res.reasons[0]


def test_tournament_with_a_faulty_agent_goes_on(tmp_path: Path) -> None:
    config = load_config(
        {
            "name": "faulty",
            "participants": ["mixbot", "card_ranking", {"name": "crashy", "bot": "greedy_points"}],
            "deal_sets": 30,
            "bootstrap": 20,
            "output_dir": str(tmp_path),
        }
    )
    summary = run_tournament(
        config, overrides={"crashy": BigHandCrash}, progress=False, plots=False, print_table=False
    )
    assert summary["schedule"]["complete"]
    counts = summary["endings"]["counts"]
    assert counts["forfeit"] > 0 and counts["won"] > 0
    assert sum(counts.values()) == 3 * 30 * 2
    info = summary["endings"]["forfeits"]
    assert set(info) == {"crashy"} and info["crashy"]["games"] == counts["forfeit"]
    assert "too many cards" in info["crashy"]["reasons"][0]
    rows = {r["name"]: r for r in summary["leaderboard"]}
    assert rows["crashy"]["forfeits"] == counts["forfeit"] and rows["mixbot"]["forfeits"] == 0
    lines = [json.loads(x) for x in (tmp_path / "faulty" / "games.jsonl").read_text().splitlines()]
    forfeits = [x for x in lines if x["end"] == "forfeit"]
    assert len(forfeits) == counts["forfeit"]
    assert all(x["seats"][x["forfeit_seat"]] == "crashy" for x in forfeits)


@pytest.mark.parametrize("bad", [np.array([[0]]), np.array([0.5])])
def test_safe_act_rejects_bad_returns(bad: np.ndarray) -> None:
    from uno_env.play import _call_isolating as _safe_act

    class Bad:
        name = "bad"

        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return bad

        def reset(self, games: np.ndarray | None = None) -> None:
            """Stateless."""

    masks = np.zeros((1, C.NUM_ACTIONS), dtype=bool)
    masks[0, C.DRAW] = True
    _, forfeits = _safe_act(Bad(), np.zeros((1, 1), dtype=np.float32), masks)
    assert set(forfeits) == {0}


class BlindRandom:
    """The random bot, declaring that it never reads observations (and checking it gets none)."""

    name = "blind_random"
    uses_observations = False

    def __init__(self, seed: int = 0) -> None:
        self.inner = make_agent("random", seed)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        assert observations.shape == (masks.shape[0], 0)
        return self.inner.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        """Stateless."""


@pytest.mark.parametrize("other", ["random", "mixbot"])
def test_policies_that_ignore_observations_get_none(other: str) -> None:
    rules = Rules(num_players=2, seat_draw_streams=True)
    lineups, keys = _lineups(60, 2), deal_keys(5, np.arange(60))
    plain = play_tables(rules, [make_agent("random", 1), make_agent(other, 2)], lineups, keys)
    blind = play_tables(rules, [BlindRandom(1), make_agent(other, 2)], lineups, keys)
    assert (blind.end != END_FORFEIT).all()
    for field in ("ranks", "points", "turns", "cards_left"):
        assert np.array_equal(getattr(plain, field), getattr(blind, field))


class ResetCrash:
    """greedy_points whose ``reset`` raises."""

    name = "reset_crash"

    def __init__(self, seed: int = 0) -> None:
        self.inner = make_agent("greedy_points", seed)

    def act(
        self, observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        return self.inner.act(observations, masks)

    def reset(self, games: npt.NDArray[np.bool_] | None = None) -> None:
        raise OSError("weights went missing")


def test_a_policy_whose_reset_raises_forfeits_its_games() -> None:
    rules = Rules(num_players=3, seat_draw_streams=True)
    n = 60
    lineups = np.array([[0, 1, 2], [2, 0, 3], [3, 2, 0]] * (n // 3))
    keys = deal_keys(6, np.arange(n))
    policies: list[Policy | None] = [
        make_agent("mixbot"),
        ResetCrash(),
        make_agent("greedy_points"),
        make_agent("card_ranking"),
    ]
    res = play_tables(rules, policies, lineups, keys)
    hit = (lineups == 1).any(axis=1)
    assert (res.end[hit] == END_FORFEIT).all() and (res.end[~hit] != END_FORFEIT).all()
    rows = np.flatnonzero(hit)
    assert (lineups[rows, res.forfeit_seat[rows]] == 1).all()
    assert (res.turns[rows] == 0).all(), "forfeited before the first move"
    assert all(res.reasons[int(g)] == "reset raised OSError: weights went missing" for g in rows)
    offender = res.ranks[rows, res.forfeit_seat[rows]]
    assert (offender == 2).all() and (res.ranks[rows].sum(axis=1) == 2).all()
    # The other games are exactly the games played without the broken policy.
    alone = play_tables(rules, [*policies[:1], None, *policies[2:]], lineups[~hit], keys[~hit])
    for field in ("ranks", "points", "turns", "cards_left", "end"):
        assert np.array_equal(getattr(res, field)[~hit], getattr(alone, field))
    with pytest.raises(PolicyError, match=r"reset_crash.*reset raised OSError"):
        play_tables(rules, policies, lineups, keys, on_error="raise")


def test_broken_policies_forfeit_every_game_they_sit_in() -> None:
    rules = Rules(num_players=2)
    lineups, keys = _lineups(10, 2), deal_keys(7, np.arange(10))
    res = play_tables(
        rules, [make_agent("random", 0), None], lineups, keys, broken={1: "could not be built"}
    )
    assert (res.end == END_FORFEIT).all() and set(res.reasons.values()) == {"could not be built"}
    assert (lineups[np.arange(10), res.forfeit_seat] == 1).all()
    with pytest.raises(PolicyError, match="could not be built"):
        play_tables(
            rules,
            [make_agent("random", 0), None],
            lineups,
            keys,
            on_error="raise",
            broken={1: "could not be built"},
        )
