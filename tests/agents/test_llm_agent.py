"""The language-model agent playing whole games against a real chat-completions server.

The server's scripted player reads only the last user message (its ``Legal moves:`` line)
and counts what it served, so the agent's telemetry is checked against it exactly: invalid
answers, retries, fallbacks, timeouts and transport retries, tokens, requests in flight.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from uno_env import cards as C
from uno_env import core, load_rules
from uno_env.config_values import ConfigError
from uno_env.observation import encode
from uno_env.outcomes import END_FORFEIT, END_WON, TableResults
from uno_env.play import play_tables
from uno_env.policy import Policy, PolicyFactory
from uno_env.rng import derive_keys
from uno_env.rules import Rules
from uno_env.text.prompt import PromptOptions
from unolab.agents import make_agent, policy_factory
from unolab.agents.llm.agent import LLMAgent, TextPolicyAgent
from unolab.agents.llm.client import Message
from unolab.agents.llm.records import DecisionCache, messages_key
from unolab.agents.llm.spec import LLMSpec
from unolab.benchmarks.chat_server import ChatServer, Script, chat_server, legal_moves, silent_port
from unolab.tournament.config import load_config
from unolab.tournament.runner import run_tournament

SECRET = "sk-proj-Zq8VbW3nRt5Yp2Lm9Kd4Hs7Jx1Cf6Ga0"
"""The server's key: a recognisable one, which no record, log or message may show."""
RULES_2P = load_rules("official", num_players=2)
RULES_4P = load_rules("official", num_players=4)
FAULTS = Script(invalid_every=4, rate_limit_every=7, error_every=9, slow_every=13, slow_s=1.0)
"""Every fault at once: invalid answers (some twice), 429s, 500s, answers too slow."""


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with chat_server(api_key=SECRET) as running:
        yield running


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNO_TEST_KEY", SECRET)


def spec(server: ChatServer, **options: Any) -> LLMSpec:
    settings: dict[str, Any] = {
        "model": "test-model",
        "base_url": server.base_url,
        "api_key_env": "UNO_TEST_KEY",
        "backoff_s": 0.001,
        "timeout_s": 0.3,
        "concurrency": 4,
    }
    settings.update(options)
    return LLMSpec(**settings)


def play(
    rules: Rules,
    agent: Policy,
    games: int,
    seed: int = 5,
    seat: int = 0,
    keys: np.ndarray | None = None,
    opponent: str = "random",
    dealer: int | None = None,
) -> TableResults:
    """``games`` hands (of ``keys``, else keys from ``seed``), ``agent`` in ``seat`` and
    ``opponent`` bots elsewhere, forfeits allowed."""
    policies: list[Policy | None] = [agent]
    policies += [make_agent(opponent, s) for s in range(1, rules.num_players)]
    lineup = np.arange(rules.num_players)
    lineup[[0, seat]] = lineup[[seat, 0]]
    lineups = np.tile(lineup, (games, 1))
    keys = derive_keys(seed, games) if keys is None else keys
    return play_tables(rules, policies, lineups, keys, dealer=dealer)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_telemetry_matches_what_the_server_served_exactly(
    server: ChatServer, tmp_path: Path
) -> None:
    served = server.play(FAULTS)
    agent = LLMAgent.from_spec(spec(server), seed=0)
    agent.record_to(tmp_path / "decisions.jsonl")
    results = play(RULES_2P, agent, 6)
    agent.close()
    assert (results.end == END_WON).all()  # nothing forfeits: every fault was absorbed
    t = agent.telemetry()
    assert t["invalid"] == served.invalid > 0
    assert t["requests"] == served.answers and t["replayed"] == 0
    assert t["timeouts"] == served.slow > 0
    assert t["transport_retries"] == served.rate_limited + served.errors + served.slow
    assert served.rate_limited > 0 and served.errors > 0
    assert (t["tokens_in"], t["tokens_out"]) == (served.tokens_in, served.tokens_out)
    assert t["invalid"] == t["retries"] + t["fallbacks"] and t["fallbacks"] > 0
    assert t["requests"] == t["decisions"] + t["retries"]
    assert sum(t["forms"].values()) + t["fallbacks"] == t["decisions"]
    assert t["forms"]["notation"] == served.forms["notation"] + served.forms["lower"]
    for form in ("natural", "tag", "final_answer", "json"):
        assert t["forms"][form] == served.forms[form] > 0, form
    assert t["latency_mean_s"] > 0 and t["latency_p90_s"] > 0  # timeouts make a long tail
    lines = records(tmp_path / "decisions.jsonl")
    assert len(lines) == t["decisions"]
    assert sum(line["invalid"] for line in lines) == served.invalid
    assert sum(line["fallback"] for line in lines) == t["fallbacks"]
    assert {line["seat"] for line in lines} == {0}


def test_letters_and_the_changes_view_keep_one_conversation_per_game(
    server: ChatServer, tmp_path: Path
) -> None:
    served = server.play(Script(invalid_every=6))
    agent = LLMAgent.from_spec(spec(server, view="changes", choices="letters"), seed=0)
    agent.record_to(tmp_path / "talk.jsonl")
    results = play(RULES_4P, agent, 3, seat=2)
    agent.close()
    assert (results.end == END_WON).all()
    t = agent.telemetry()
    assert t["forms"]["letter"] == served.forms["letter"] > 0
    assert t["invalid"] == served.invalid > 0
    talks: dict[tuple[int, int], list[Message]] = defaultdict(list)
    for line in records(tmp_path / "talk.jsonl"):
        talk = talks[(line["game"], line["seat"])]
        assert line["seat"] == 2 and line["history"] == len(talk)
        # The first request of a decision is the conversation so far and the new prompt.
        first = [*talk, *line["messages"][: 1 if talk else 2]]
        assert line["requests"][0]["key"] == messages_key("test-model", first)
        assert (line["messages"][0]["role"] == "system") == (not talk)
        talk.extend(line["messages"])
    assert len(talks) == 3 and all(len(talk) > 6 for talk in talks.values())
    later = [m["content"] for m in next(iter(talks.values()))[3:] if m["role"] == "user"]
    assert any("Since your last decision:" in text for text in later)


def test_requests_go_out_concurrency_at_a_time_and_results_keep_their_rows(
    server: ChatServer,
) -> None:
    state = core.init(RULES_2P, keys=derive_keys(3, 12), dealer=1)
    seats = state.current.astype(np.int64)
    served = server.play(Script(delay_s=0.1))
    agent = LLMAgent.from_spec(spec(server, concurrency=5), seed=0)
    start = time.perf_counter()
    concurrent = agent.act_from_state(RULES_2P, state, seats)
    took = time.perf_counter() - start
    assert served.max_in_flight == 5 and served.answers == 12
    assert took < 12 * 0.1 / 2  # three waves of five, not twelve requests one by one
    server.play(Script())
    one_by_one = LLMAgent.from_spec(spec(server, concurrency=1), seed=0)
    assert (one_by_one.act_from_state(RULES_2P, state, seats) == concurrent).all()
    masks = core.legal_action_mask(RULES_2P, state)
    assert masks[np.arange(12), concurrent].all()
    agent.close()
    one_by_one.close()


def test_recorded_decisions_replay_without_a_single_request(
    server: ChatServer, tmp_path: Path
) -> None:
    server.play(FAULTS)
    first = LLMAgent.from_spec(spec(server, view="changes"), seed=0)
    first.record_to(tmp_path / "run.jsonl")
    before = play(RULES_2P, first, 4, seed=9)
    first.close()
    recorded = first.telemetry()
    served = server.play(FAULTS)
    again = LLMAgent.from_spec(spec(server, view="changes"), seed=1)
    cache = DecisionCache.load(tmp_path / "run.jsonl", tmp_path / "not_written_yet.jsonl")
    assert len(cache) == recorded["requests"]
    again.use_cache(cache)
    after = play(RULES_2P, again, 4, seed=9)
    assert served.requests == 0  # not one new request
    t = again.telemetry()
    assert t["replayed"] == recorded["requests"] and t["requests"] == 0
    for key in ("decisions", "invalid", "retries", "fallbacks", "forms"):
        assert t[key] == recorded[key], key
    assert (after.winners == before.winners).all() and (after.turns == before.turns).all()
    assert len(cache) == 0


def test_a_decision_not_recorded_is_asked(server: ChatServer, tmp_path: Path) -> None:
    server.play(Script())
    keys = derive_keys(2, 2)
    first = LLMAgent.from_spec(spec(server), seed=0)
    first.record_to(tmp_path / "one.jsonl")
    play(RULES_2P, first, 1, keys=keys[:1], opponent="mixbot")  # deterministic
    first.close()
    served = server.play(Script())
    again = LLMAgent.from_spec(spec(server), seed=0)
    again.use_cache(DecisionCache.load(tmp_path / "one.jsonl"))
    play(RULES_2P, again, 2, keys=keys, opponent="mixbot")  # the first game, and one more
    t = again.telemetry()
    assert t["replayed"] == first.telemetry()["requests"]
    assert t["requests"] == served.answers > 0


def test_a_request_that_gets_no_answer_forfeits_its_game_only(server: ChatServer) -> None:
    # One text in five fails every try: its game forfeits; the others play to the end.
    served = server.play(Script(error_every=5, fail_tries=99))
    agent = LLMAgent.from_spec(spec(server, max_retries=1), seed=0)
    results = play(RULES_2P, agent, 8, seed=4)
    forfeits = results.end == END_FORFEIT
    assert forfeits.any() and (results.end[~forfeits] == END_WON).all()
    for row in np.flatnonzero(forfeits):
        reason = results.reasons[int(row)]
        assert reason.startswith("LLMRequestError: model 'test-model' at ")
        assert "no answer after 2 tries (the last: HTTP 500)" in reason and "\n" not in reason
    # The play loop retried the failed calls on halves: no request was sent twice.
    assert max(served.tries.values()) <= 2
    assert sum(n == 2 for n in served.tries.values()) == forfeits.sum()
    t = agent.telemetry()
    assert t["failed_requests"] == forfeits.sum()
    assert t["requests"] == served.answers
    agent.close()


def test_a_lasting_failure_forfeits_every_game_with_its_one_line(tmp_path: Path) -> None:
    with silent_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        path = tmp_path / "gone.yaml"
        path.write_text(f"llm:\n  model: gone-model\n  base_url: {url}\n")
        factory = policy_factory(str(path))
        agent = factory(0)
        results = play(RULES_2P, agent, 6)
        line = f"cannot connect to {url} (for model 'gone-model'): nothing answers there"
        assert (results.end == END_FORFEIT).all()
        assert all(r.startswith(f"LLMConnectionError: {line}") for r in results.reasons.values())
        # A tournament stops at once, naming the participant and the line.
        config = load_config(
            {
                "name": "t",
                "participants": [{"name": "gone", "bot": "random"}, "mixbot"],
                "num_players": 2,
                "deal_sets": 2,
                "games_per_chunk": 4,
                "bootstrap": 10,
                "seed": 3,
                "output_dir": str(tmp_path / "runs"),
            }
        )
        with pytest.raises(ConfigError) as info:
            run_tournament(
                config, overrides={"gone": factory}, progress=False, plots=False, print_table=False
            )
    assert f"participant 'gone': {line}" in str(info.value) and "\n" not in str(info.value)


def test_a_text_policy_plays_as_a_model_does(tmp_path: Path) -> None:
    seen: list[list[Message]] = []

    def first_move(messages: list[Message]) -> str:
        seen.append(messages)
        moves = legal_moves(messages[-1]["content"])
        text = messages[-1]["content"]
        if "refused" in text or len(seen) % 5:
            return f"Final answer: {moves[-1][1]}"
        return "I pass."  # invalid: retried with the reason

    agent = TextPolicyAgent(first_move, name="scripted")
    agent.record_to(tmp_path / "policy.jsonl")
    results = play(RULES_4P, agent, 3, seat=1)
    assert (results.end == END_WON).all()
    t = agent.telemetry()
    assert t["invalid"] == t["retries"] > 0 and t["fallbacks"] == 0
    assert t["requests"] == len(seen) == t["decisions"] + t["retries"]
    assert seen[0][0]["role"] == "system" and "UNO" in seen[0][0]["content"]
    assert agent.name == "scripted"
    assert {line["agent"] for line in records(tmp_path / "policy.jsonl")} == {"scripted"}
    other = TextPolicyAgent(first_move, name="same")
    assert isinstance(other, LLMAgent) and other.model == "same"


def test_a_text_policy_that_raises_forfeits_that_game_alone() -> None:
    def fragile(messages: list[Message]) -> str:
        if "W+4" in messages[-1]["content"]:
            raise RuntimeError("no idea what to do with a wild draw four")
        return legal_moves(messages[-1]["content"])[0][1]

    results = play(RULES_2P, TextPolicyAgent(fragile), 10, seed=1)
    forfeits = np.flatnonzero(results.end == END_FORFEIT)
    assert forfeits.size and forfeits.size < 10
    assert all("RuntimeError: no idea" in results.reasons[int(r)] for r in forfeits)


def test_an_invalid_answer_twice_plays_the_documented_fallback() -> None:
    agent = TextPolicyAgent(lambda messages: "something else entirely", name="lost")
    state = core.init(RULES_2P, keys=derive_keys(8, 4), dealer=1)
    actions = agent.act_from_state(RULES_2P, state, state.current)
    masks = core.legal_action_mask(RULES_2P, state)
    for row, action in enumerate(actions.tolist()):
        legal = np.flatnonzero(masks[row]).tolist()
        expected = C.DRAW if C.DRAW in legal else C.KEEP if C.KEEP in legal else legal[0]
        assert action == expected
    t = agent.telemetry()
    assert (t["decisions"], t["invalid"], t["retries"], t["fallbacks"]) == (4, 8, 4, 4)


def counting_agent() -> tuple[TextPolicyAgent, list[int]]:
    """A text policy in the changes view, and the number of messages of each request."""
    sizes: list[int] = []

    def count(messages: list[Message]) -> str:
        sizes.append(len(messages))
        return legal_moves(messages[-1]["content"])[0][1]

    return TextPolicyAgent(count, options=PromptOptions(view="changes")), sizes


def decide(agent: LLMAgent, state: core.UnoState, decisions: int) -> core.UnoState:
    """Play one game on until ``agent`` (seat 0) took ``decisions`` decisions; mixbot plays
    seat 1."""
    bot = make_agent("mixbot")
    while decisions:
        if int(state.current[0]) == 0:
            action = agent.act_from_state(RULES_2P, state, state.current)
            decisions -= 1
        else:
            masks = core.legal_action_mask(RULES_2P, state)
            action = bot.act(encode(RULES_2P, state), masks)
        state = core.step(RULES_2P, state, action)
    return state


def test_reset_forgets_the_conversations() -> None:
    agent, sizes = counting_agent()
    state = decide(agent, core.init(RULES_2P, keys=derive_keys(8, 1), dealer=1), 2)
    assert sizes == [2, 4]  # one conversation: each decision adds a prompt and an answer
    agent.reset(np.array([False]))  # no game marked: nothing forgotten
    state = decide(agent, state, 1)
    assert sizes == [2, 4, 6]
    agent.reset()
    decide(agent, state, 1)
    assert sizes == [2, 4, 6, 2]  # a fresh conversation, with the whole table


def test_two_games_of_one_deal_in_one_seat_get_the_full_view() -> None:
    agent, sizes = counting_agent()
    start = core.init(RULES_2P, keys=derive_keys(8, 1), dealer=1)
    decide(agent, start, 3)
    decide(agent, start, 2)  # the deal again from its start: not a later decision of that
    assert sizes == [2, 4, 6, 2, 2]  # game, so another game of the deal: the full view
    sizes.clear()
    # Seat 0 moves first: the agent's first decisions in both games come in one call.
    play(RULES_2P, agent, 2, keys=np.repeat(derive_keys(7, 1), 2), dealer=1)
    assert set(sizes) == {2}
    sizes.clear()
    play(RULES_2P, agent, 2, keys=derive_keys(9, 2))  # two deals: two conversations
    assert max(sizes) > 10


def test_the_key_reaches_no_record_log_or_message(
    server: ChatServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("", "openai", "httpx", "httpx2", "httpcore", "httpcore2"):
        caplog.set_level(logging.DEBUG, logger=name or None)
    server.play(FAULTS)
    agent = LLMAgent.from_spec(spec(server), seed=0)
    agent.record_to(tmp_path / "r.jsonl")
    results = play(RULES_2P, agent, 2)
    server.play(Script(error_every=1, fail_tries=99))
    failed = play(RULES_2P, agent, 1)
    agent.close()
    out = capsys.readouterr()
    texts = [
        (tmp_path / "r.jsonl").read_text(),
        caplog.text,
        out.out,
        out.err,
        json.dumps(agent.telemetry()),
        repr(agent.spec),
        repr(agent.completer),
        repr(vars(agent.completer)),
        " ".join(failed.reasons.values()),
    ]
    assert len(results.end) == 2 and failed.reasons
    for text in texts:
        assert SECRET not in text and SECRET[8:24] not in text


def test_the_overhead_per_decision_outside_the_model_is_under_a_millisecond(
    tmp_path: Path,
) -> None:
    """Prompt, parse and record with an instant model: the median per decision."""

    def instant(messages: list[Message]) -> str:
        return legal_moves(messages[-1]["content"])[0][1]

    agent = TextPolicyAgent(instant)
    agent.record_to(tmp_path / "fast.jsonl")
    per_decision: list[float] = []
    act = agent.act_from_state

    def timed(rules: Rules, state: Any, seats: Any, masks: Any = None) -> Any:
        start = time.perf_counter()
        actions = act(rules, state, seats, masks)
        per_decision.append((time.perf_counter() - start) / len(actions))
        return actions

    agent.act_from_state = timed  # type: ignore[method-assign]
    play(RULES_4P, agent, 6, seed=11)
    median = float(np.median(per_decision))
    print(f"overhead per decision: median {median * 1e3:.3f} ms over {len(per_decision)} calls")
    assert median < 1e-3


def test_a_factory_builds_fresh_agents(server: ChatServer, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(f"llm:\n  model: test-model\n  base_url: {server.base_url}\n")
    factory = policy_factory(str(path))
    assert isinstance(factory, PolicyFactory)
    one, two = factory(1), factory(2)
    assert isinstance(one, LLMAgent) and isinstance(two, LLMAgent)
    assert one is not two and one.name == two.name == "m"
    one.close()
    two.close()
