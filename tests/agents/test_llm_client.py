"""The chat client against a real HTTP server: counted retries that honour Retry-After,
timeouts, and one line (never the key) for a refused connection, a model or a key."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from unolab.agents.llm.client import (
    ChatClient,
    LLMAuthError,
    LLMConnectionError,
    LLMModelError,
    LLMRequestError,
)
from unolab.agents.llm.spec import LLMSpec
from unolab.benchmarks.chat_server import ChatServer, Script, chat_server, silent_port

SECRET = "sk-proj-Zq8VbW3nRt5Yp2Lm9Kd4Hs7Jx1Cf6Ga0"
"""A recognisable key: no message or log line may show it."""
ASK = [
    {"role": "system", "content": "You play UNO."},
    {"role": "user", "content": "Your move.\nLegal moves: G7 (green 7), draw (draw a card)"},
]


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with chat_server(api_key=SECRET) as running:
        yield running


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNO_TEST_KEY", SECRET)
    monkeypatch.setenv("UNO_WRONG_KEY", SECRET[::-1])


def client(server: ChatServer, waits: list[float] | None = None, **options: object) -> ChatClient:
    settings: dict[str, object] = {
        "model": "test-model",
        "base_url": server.base_url,
        "api_key_env": "UNO_TEST_KEY",
        "backoff_s": 0.01,
    }
    settings.update(options)
    recorded = waits if waits is not None else []
    return ChatClient(LLMSpec(**settings), seed=7, sleep=recorded.append)  # type: ignore[arg-type]


def test_an_answer_with_its_tokens(server: ChatServer) -> None:
    served = server.play(Script(forms=("notation",)))
    done = client(server).complete(ASK)
    assert done.text in ("G7", "draw") and done.retries == 0 and not done.replayed
    assert (done.tokens_in, done.tokens_out) == (served.tokens_in, served.tokens_out)
    assert done.tokens_in > 0 and done.latency_s > 0


@pytest.mark.parametrize("retry_after", [0.25, 3.0])
def test_a_429_is_retried_after_exactly_the_wait_the_server_names(
    server: ChatServer, retry_after: float
) -> None:
    served = server.play(Script(rate_limit_every=1, retry_after_s=retry_after))
    waits: list[float] = []
    done = client(server, waits).complete(ASK)
    assert waits == [retry_after]
    assert done.retries == 1 and done.timeouts == 0
    assert (served.rate_limited, served.answers, served.requests) == (1, 1, 2)


def test_a_500_backs_off_with_seeded_jitter(server: ChatServer) -> None:
    runs = []
    for _ in range(2):
        server.play(Script(error_every=1, fail_tries=3))
        waits: list[float] = []
        done = client(server, waits, backoff_s=0.5).complete(ASK)
        assert done.retries == 3
        runs.append(waits)
    assert runs[0] == runs[1]  # the same seed, the same jitter
    for k, wait in enumerate(runs[0]):
        assert 0.5 * 2**k * 0.5 <= wait < 0.5 * 2**k


def test_a_slow_answer_times_out_and_is_retried(server: ChatServer) -> None:
    served = server.play(Script(slow_every=1, slow_s=1.5))
    done = client(server, timeout_s=0.3).complete(ASK)
    assert (done.timeouts, done.retries) == (1, 1)
    assert (served.slow, served.answers) == (1, 1)


def test_retries_run_out_in_one_line(server: ChatServer) -> None:
    served = server.play(Script(rate_limit_every=1, fail_tries=10))
    with pytest.raises(LLMRequestError) as info:
        client(server, max_retries=2).complete(ASK)
    message = str(info.value)
    assert "no answer after 3 tries" in message and "HTTP 429" in message
    assert server.base_url in message and "'test-model'" in message and "\n" not in message
    assert not info.value.lasting and info.value.retries == 2
    assert served.rate_limited == 3 and served.answers == 0


def test_a_refused_connection_is_one_lasting_line() -> None:
    with silent_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        spec = LLMSpec(model="some-model", base_url=url, backoff_s=0.01)
        with pytest.raises(LLMConnectionError) as info:
            ChatClient(spec, sleep=lambda s: None).complete(ASK)
    message = str(info.value)
    assert info.value.lasting and url in message and "'some-model'" in message
    assert "\n" not in message and "nothing answers" in message


def test_an_unknown_model_is_one_lasting_line(server: ChatServer) -> None:
    served = server.play(Script())
    with pytest.raises(LLMModelError) as info:
        client(server, model="qwen2.5:72b").complete(ASK)
    message = str(info.value)
    assert info.value.lasting and "'qwen2.5:72b'" in message and server.base_url in message
    assert "404" in message and "\n" not in message
    assert served.not_found == 1 and served.requests == 1  # not retried


def test_a_wrong_key_is_one_line_that_never_shows_a_key(
    server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    served = server.play(Script())
    caplog.set_level(logging.DEBUG)
    with pytest.raises(LLMAuthError) as info:
        client(server, api_key_env="UNO_WRONG_KEY").complete(ASK)
    message = str(info.value)
    assert info.value.lasting and "401" in message and "UNO_WRONG_KEY" in message
    assert served.unauthorized == 1  # its body echoed the key it was sent
    for text in (message, repr(info.value), caplog.text, repr(client(server))):
        assert SECRET not in text and SECRET[::-1] not in text
        assert SECRET[3:20] not in text and SECRET[::-1][:17] not in text


def test_no_key_at_all_is_named(server: ChatServer) -> None:
    server.play(Script())
    with pytest.raises(LLMAuthError, match="name its environment variable in api_key_env"):
        client(server, api_key_env=None).complete(ASK)
