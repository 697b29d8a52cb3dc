"""``uno-lab play`` and ``uno-lab replay``: narration, matches, records, the end of input.

The session is driven in-process through ``play_session(ask=..., say=...)``; one test runs a
real pseudo-terminal through pexpect, where the exit path matters.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pexpect
import pytest
from support import ROOT

from uno_env import UnoGame, load_rules
from uno_env import cards as C
from uno_env.narrate import (
    Table,
    describe_deal,
    describe_situation,
    describe_step,
    describe_table,
    offered_moves,
)
from uno_env.rules import Rules
from unolab.agents import resolve_policy
from unolab.cli import main
from unolab.play import fitting_agents, play_session, replay
from unolab.records import check_record_path


def stacked(
    hands: list[list[str]], dealer: int, starter: str, rest: Iterable[str] = ()
) -> list[str]:
    """A deck that deals ``hands[seat]`` to each seat, then turns ``starter``, then ``rest``."""
    n_players = len(hands)
    order = [(dealer + 1 + i) % n_players for i in range(n_players * len(hands[0]))]
    taken = [0] * n_players
    deck = []
    for seat in order:
        deck.append(hands[seat][taken[seat]])
        taken[seat] += 1
    return [*deck, starter, *rest]


def step_words(game: UnoGame, action: str, listener: int = 0) -> str:
    """Take ``action`` and return what the narration says about it, as one line."""
    before, seat = game.state, game.current_seat
    names = ["you" if s == listener else f"player_{s}" for s in range(game.num_players)]
    game.step(action)
    table = Table(names=names, listener=listener, colour=False)
    return " ".join(
        describe_step(game.rules, before, game.state, seat, C.parse_action(action), table)
    )


def answers(*lines: str, then: str | None = "1") -> Callable[[str], str]:
    """An ``ask`` that gives ``lines``, then ``then`` forever (``None``: end of input)."""
    feed = itertools.chain(lines, itertools.repeat(then))

    def ask(prompt: str) -> str:
        answer = next(feed)
        if answer is None:
            raise EOFError
        return answer

    return ask


# ---- narration ---------------------------------------------------------------------------

SEVEN_GREEN = ["W+4", "G1", "G2", "G3", "G4", "G5", "G6"]
SEVEN_RED = ["R1", "R2", "R3", "R4", "R5", "R6", "R7"]


def test_a_failed_challenge_is_told_with_the_cards_you_draw() -> None:
    deck = stacked([SEVEN_RED, SEVEN_GREEN], dealer=0, starter="R9", rest=["Y1", "Y2", "Y3"] * 2)
    game = UnoGame("official", num_players=2, dealer=0, deck=deck)
    assert "player_1 plays W+4 naming blue" in step_words(game, "W+4:B")
    said = step_words(game, "challenge")
    assert said == ("you challenged; the Wild Draw Four was legal: you draw 6: Y1 Y1 Y2 Y2 Y3 Y3.")


def test_a_successful_challenge_makes_the_bluffer_draw_unseen_cards() -> None:
    bluffer = ["W+4", "R8", "G2", "G3", "G4", "G5", "G6"]
    deck = stacked([SEVEN_RED, bluffer], dealer=0, starter="R9", rest=["Y1", "Y2", "Y3", "Y4"])
    game = UnoGame("official", num_players=2, dealer=0, deck=deck)
    step_words(game, "W+4:B")
    said = step_words(game, "challenge")
    assert said.startswith("you challenged: player_1's Wild Draw Four was illegal")
    assert said.endswith("player_1 draws 4.")
    assert "Y1" not in said  # another player's cards are never named


def test_a_draw_two_victim_draws_and_is_skipped() -> None:
    hands = [SEVEN_RED, ["R+2", "B1", "B2", "B3", "B4", "B5", "B6"], ["G1", *SEVEN_GREEN[1:]]]
    game = UnoGame("official", num_players=3, dealer=0, deck=stacked(hands, 0, "R9"))
    assert step_words(game, "R+2") == "player_1 plays R+2. player_2 draws 2 and is skipped."
    assert game.current_seat == 0


@pytest.mark.parametrize(
    ("players", "hands", "starter", "rules", "script", "said"),
    [
        (
            2,
            [SEVEN_RED, ["RR", "B1", "B2", "B3", "B4", "B5", "B6"]],
            "R9",
            {},
            ["RR"],
            "player_1 plays RR. With two players a Reverse skips: player_1 plays again.",
        ),
        (
            3,
            [SEVEN_RED, ["RR", "B1", "B2", "B3", "B4", "B5", "B6"], SEVEN_GREEN],
            "R9",
            {},
            ["RR"],
            "player_1 plays RR. Play now goes counter-clockwise.",
        ),
        (
            3,
            [SEVEN_RED, ["RS", "B1", "B2", "B3", "B4", "B5", "B6"], SEVEN_GREEN],
            "R9",
            {},
            ["RS"],
            "player_1 plays RS. player_2 is skipped.",
        ),
        (
            3,
            [SEVEN_RED, ["GS", "B1", "B2", "B3", "B4", "B5", "B6"], ["GS", *SEVEN_GREEN[1:]]],
            "G9",
            {"jump_in": True},
            ["GS", "pass"],
            "player_2 passes. player_2 is skipped.",
        ),
        (
            3,
            [SEVEN_RED, ["G0", "B1", "B2", "B3", "B4", "B5", "B6"], SEVEN_GREEN],
            "G9",
            {"seven_zero": True},
            ["G0"],
            "player_1 plays G0. Everyone passes their hand on to the next player.",
        ),
    ],
    ids=["2p-reverse", "3p-reverse", "skip", "skip-after-jump-in-window", "zero-rotates"],
)
def test_what_a_step_did_is_told_from_its_events(
    players: int,
    hands: list[list[str]],
    starter: str,
    rules: dict[str, bool],
    script: list[str],
    said: str,
) -> None:
    deck = stacked(hands, dealer=0, starter=starter)
    game = UnoGame("official", num_players=players, dealer=0, deck=deck, **rules)
    for action in script[:-1]:
        game.step(action)
    assert step_words(game, script[-1]) == said


def test_an_undeclared_uno_is_told_to_the_next_seat() -> None:
    hands = [["R1", "R2"], ["R8", "B1"], ["G1", "G2"]]
    game = UnoGame("official", num_players=3, dealer=0, deck=stacked(hands, 0, "R9"), hand_size=2)
    said = step_words(game, "R8")
    assert said == (
        "player_1 plays R8. player_1 is down to one card and did not call UNO: "
        "catch them before your next move."
    )


def test_your_own_draw_names_the_card_and_others_do_not() -> None:
    deck = stacked([SEVEN_RED, SEVEN_GREEN], dealer=0, starter="B9", rest=["Y5", "B4"])
    game = UnoGame("official", num_players=2, dealer=0, deck=deck)
    said = step_words(game, "draw")
    assert said == "player_1 draws a card." and "Y5" not in said
    said = step_words(game, "draw")
    assert said == "you draw 1: B4."
    table = Table(names=["you", "player_1"], listener=0, colour=False)
    assert describe_situation(game.rules, game.state, table) == (
        "You drew a playable card, B4: play it or keep it."
    )


def test_the_deal_names_the_dealer_and_the_starter() -> None:
    hands = [SEVEN_RED, ["B1", "B2", "B3", "B4", "B5", "B6", "B7"], ["G1", *SEVEN_GREEN[1:]]]
    game = UnoGame("official", num_players=3, dealer=2, deck=stacked(hands, 2, "YS"))
    table = Table(names=["you", "player_1 (mixbot)", "player_2 (random)"], listener=0)
    said = describe_deal(game.rules, game.state, table)
    assert (
        said[0]
        == "Hand 1: player_2 (random) deals 7 cards each; the starter card is \x1b[1;33mYS\x1b[0m."
    )
    assert "The starter Skip: you are skipped." in said
    assert said[-1] == "player_1 (mixbot) plays first."


# ---- the session -------------------------------------------------------------------------


def run_session(rules: Rules, ask: Callable[[str], str], **kwargs: object) -> tuple[UnoGame, str]:
    lines: list[str] = []
    policies = [resolve_policy("mixbot", rules, seed=s) for s in range(rules.num_players - 1)]
    game = play_session(
        rules,
        policies,
        ask=ask,
        say=lines.append,
        colour=False,
        opponent_names=["mixbot"] * (rules.num_players - 1),
        **kwargs,  # type: ignore[arg-type]
    )
    return game, "\n".join(lines)


def test_a_match_plays_hand_after_hand_to_the_target(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2, target_score=1)
    record = tmp_path / "game.json"
    game, said = run_session(rules, answers(), seed=3, record=record)
    assert game.match_over
    assert said.startswith("UNO, 2 players, first to 1 points. Seed 3 (uno-lab play --seed 3")
    assert "player_1 (mixbot)" in said
    assert re.search(r"Game over: .* the match with \d+ points after 1 hand\.", said)
    assert "Match scores:" in said and "[cards worth" in said
    for phase in ("after_draw", "choose_colour", "phase:"):
        assert phase not in said
    data = json.loads(record.read_text())
    assert data["seed"] == 3 and len(data["hands"]) == 1
    lines: list[str] = []
    replayed = replay(record, say=lines.append)
    assert replayed.match_scores == game.match_scores
    assert lines[0] == f"Replay of {record}: 2 players, seed 3."


def test_the_next_hand_is_offered_and_every_hand_replays(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2)
    record = tmp_path / "game.json"
    asked: list[str] = []
    feed = answers("n", then="1")
    hands_offered = iter(["y", "n"])

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(hands_offered) if prompt.startswith("Deal the next hand") else feed(prompt)

    game, said = run_session(rules, ask, seed=11, record=record)
    assert sum(p.startswith("Deal the next hand") for p in asked) == 2
    assert "Hand 2: player_1 (mixbot) deals" in said or "Hand 2: you deal" in said
    assert "Game over after 2 hands" in said
    data = json.loads(record.read_text())
    assert len(data["hands"]) == 2
    lines: list[str] = []
    assert replay(record, say=lines.append).match_scores == game.match_scores
    assert sum(line.startswith("Hand 2 over") for line in lines) == 1


def test_a_random_seed_is_drawn_and_printed(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2)
    record = tmp_path / "game.json"
    _, said = run_session(rules, answers("q"), record=record)
    seed = json.loads(record.read_text())["seed"]
    assert f"Seed {seed} (uno-lab play --seed {seed} deals these cards again)" in said


def test_help_and_out_of_range_numbers(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2)
    _, said = run_session(rules, answers("help", "0", "99", "q"), seed=1)
    assert "How to answer:" in said
    assert re.search(r"There is no move 0: choose 1–\d+\.", said)
    assert re.search(r"There is no move 99: choose 1–\d+\.", said)
    assert "Game abandoned (you stopped)" in said


@pytest.mark.parametrize("stop", ["q", "eof", "interrupt"])
def test_stopping_still_writes_the_record(tmp_path: Path, stop: str) -> None:
    rules = load_rules("official", num_players=2)
    record = tmp_path / "game.json"
    moves = iter(["1", "1", "1"])

    def ask(prompt: str) -> str:
        answer = next(moves, None)
        if answer is not None:
            return answer
        if stop == "eof":
            raise EOFError
        if stop == "interrupt":
            raise KeyboardInterrupt
        return "q"

    if stop == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            run_session(rules, ask, seed=5, record=record)
    else:
        _, said = run_session(rules, ask, seed=5, record=record)
        assert "Game abandoned" in said
    data = json.loads(record.read_text())
    assert len(data["hands"]) == 1 and len(data["hands"][0]) >= 3
    lines: list[str] = []
    replay(record, say=lines.append)
    assert lines[-1] == "(The record stops here, in the middle of hand 1.)"


def test_record_paths_are_checked_before_the_game(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    for bad, words in [
        (tmp_path, "is a folder"),
        (tmp_path / "missing" / "game.json", "does not exist"),
        (notes, "not a recorded game"),
        (notes / "game.json", "does not exist"),
    ]:
        with pytest.raises(ValueError, match=words):
            check_record_path(bad)
    assert notes.read_text() == "keep me"
    check_record_path(tmp_path / "new.json")  # a new file in an existing folder is fine


def test_the_shipped_agents_are_found_by_their_rules() -> None:
    four = fitting_agents(load_rules("official", num_players=4))
    assert [p.name for p in four] == ["ppo_official_4p.safetensors"]
    assert fitting_agents(load_rules("official", num_players=3)) == []


def test_a_table_size_mismatch_says_what_fits(capsys: pytest.CaptureFixture[str]) -> None:
    agent = "agents/pretrained/ppo_official_2p.safetensors"
    assert main(["play", "--players", "4", "--opponents", agent, "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "trained for 2 players: play it with --players 2" in err
    assert "ppo_official_4p" in err


# ---- a real terminal ---------------------------------------------------------------------


def spawn(*args: str, cwd: Path = ROOT) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "unolab.cli", *args],
        cwd=str(cwd),
        encoding="utf-8",
        timeout=120,
    )


def test_terminal_hand_then_stop_and_ctrl_d(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    child = spawn("play", "--seed", "4", "--no-colour", "--record", str(record))
    child.expect(r"Seed 4 \(uno-lab play --seed 4")
    moves = 0
    while child.expect(["Your move", r"Deal the next hand\? \[Y/n\]"]) == 0:
        child.sendline("1")
        moves += 1
        assert moves < 1000
    child.sendline("n")
    child.expect("Game over")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "")
    assert len(json.loads(record.read_text())["hands"]) == 1

    child = spawn("play", "--seed", "4", "--no-colour")
    child.expect("Your move")
    child.sendeof()
    child.expect("Game abandoned")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Traceback" not in (child.before or "")


# ---- what is offered and said ------------------------------------------------------------


def test_your_own_failed_bluff_is_told_to_you() -> None:
    bluffer = ["W+4", "R8", "G2", "G3", "G4", "G5", "G6"]
    deck = stacked([SEVEN_RED, bluffer], dealer=0, starter="R9", rest=["Y1", "Y2", "Y3", "Y4"])
    game = UnoGame("official", num_players=2, dealer=0, deck=deck)
    step_words(game, "W+4:B", listener=1)
    said = step_words(game, "challenge", listener=1)
    assert said.startswith(
        "player_0 challenges: your Wild Draw Four was illegal (you could match the colour): "
        "you draw 4: "
    )
    assert "they could" not in said


def moves_line(said: str) -> str:
    return next(line for line in said.splitlines() if line.startswith("Your moves:"))


def test_uno_is_offered_only_where_calling_it_matters() -> None:
    rules = load_rules("official", num_players=2, hand_size=2)
    # Seed 1: you hold G3 G4 and cannot play; a declaration could not spare you anything.
    game = UnoGame(rules, seed=1)
    assert game.current_seat == 0 and C.UNO in game.legal_action_ids()
    assert offered_moves(game.legal_action_ids()) == [C.DRAW]
    _, said = run_session(rules, answers("q"), seed=1)
    assert moves_line(said) == "Your moves: [1] draw"
    # Seed 3: you can play a card and go down to one: calling UNO matters, and is offered.
    game = UnoGame(rules, seed=3)
    assert game.current_seat == 0 and C.UNO in offered_moves(game.legal_action_ids())
    _, said = run_session(rules, answers("q"), seed=3)
    assert "uno (call UNO)" in moves_line(said)


def test_help_leaves_out_what_the_rules_do_not_have() -> None:
    _, said = run_session(load_rules("official", num_players=2), answers("help", "q"), seed=1)
    assert "call UNO before" in said and "challenge/accept" in said
    plain = load_rules("official", num_players=2, uno_call=False, wd4_challenge=False)
    _, said = run_session(plain, answers("help", "q"), seed=1)
    assert "How to answer:" in said and "  draw / keep" in said
    assert "call UNO before" not in said and "catch a player" not in said
    assert "challenge/accept" not in said


@pytest.mark.parametrize(("players", "told"), [(2, False), (3, True)])
def test_the_direction_is_told_only_where_it_means_something(players: int, told: bool) -> None:
    from uno_env.envs.render import render_table

    game = UnoGame("official", num_players=players, seed=4)
    names = ["you", *(f"player_{s}" for s in range(1, players))]
    header = describe_table(game.rules, game.state, Table(names=names, listener=0))[0]
    assert ("clockwise" in header) is told
    assert ("clockwise" in render_table(game.rules, game.state, 0, colour=False)) is told


def game_over_line(lines: Iterable[str]) -> str:
    return next(line for line in lines if line.startswith("Game over"))


@pytest.mark.parametrize("target", [1, None])
def test_the_game_and_its_replay_end_on_the_same_result_line(
    tmp_path: Path, target: int | None
) -> None:
    # target 1: the first hand ends the match; otherwise the player stops after one hand.
    rules = load_rules("official", num_players=2, **({"target_score": target} if target else {}))
    record = tmp_path / "game.json"
    hands_offered = iter(["n"])

    def ask(prompt: str) -> str:
        return next(hands_offered) if prompt.startswith("Deal the next hand") else "1"

    game, said = run_session(rules, ask, seed=3, record=record)
    live = game_over_line(said.splitlines())
    assert ("wins the match" in live or "win the match" in live) is game.match_over
    lines: list[str] = []
    replay(record, say=lines.append)
    assert lines[-1] == live
    assert not any(" won with " in line for line in lines)


def test_a_language_model_plays_from_its_spec_file(tmp_path: Path) -> None:
    from unolab.benchmarks.chat_server import chat_server

    rules = load_rules("official", num_players=2, target_score=1)
    with chat_server() as server:
        spec = tmp_path / "my_model.yaml"
        spec.write_text(f"llm:\n  model: test-model\n  base_url: {server.base_url}\n")
        model = resolve_policy(str(spec), rules, seed=0)
        lines: list[str] = []
        game = play_session(
            rules, [model], ask=answers(), say=lines.append, colour=False, seed=5,
            opponent_names=["my_model"],
        )  # fmt: skip
        served = server.served.requests
    said = "\n".join(lines)
    assert game.match_over
    assert "player_1 (my_model) plays" in said or "player_1 (my_model) draws" in said
    # Every move of the model's seat was asked of the server, once.
    assert served == model.telemetry()["requests"] == model.telemetry()["decisions"] > 0
