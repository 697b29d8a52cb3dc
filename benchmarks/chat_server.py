"""A scripted chat-completions server on 127.0.0.1: the "model" of the language-model
benchmark (``uno-lab bench llm``) and of the lab's tests. It needs FastAPI and uvicorn
(``pip install 'uno-lab[web]'``).

:func:`chat_server` serves a FastAPI app with uvicorn in a background thread on 127.0.0.1
(a free port), speaking the OpenAI API: ``POST /v1/chat/completions`` and ``GET
/v1/models``. Behind it a scripted player (:class:`Script`) reads ONLY the text of the last
user message, finds its ``Legal moves:`` line and answers one of those moves, in every form
the agent's parser accepts, sometimes invalidly, sometimes with a 429 (and a
``Retry-After``) or a 500, sometimes slower than the client waits; every answer can be
delayed (the benchmark's 200 ms). Which request gets what is decided from the request's
own text, so a run is the same whatever order concurrent requests arrive in.

The server counts what it served (:class:`Served`), so a test compares the agent's
telemetry with it exactly. An unknown model gets a 404, a wrong key a 401 whose body
echoes the key it was sent (as some endpoints do: the client must not repeat it).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

__all__ = [
    "FORMS",
    "ChatServer",
    "Script",
    "Served",
    "chat_server",
    "free_port",
    "legal_moves",
    "silent_port",
]

FORMS = ("notation", "lower", "letter", "natural", "tag", "final_answer", "json")
"""The forms the scripted player answers in (``letter`` only where the moves are lettered;
``lower`` is notation in lower case): each is a form the agent's parser accepts."""
INVALID_ANSWERS = ("I would rather not say.", "", "pass the salt", "G7 or draw, not sure")
"""What the player answers when it answers invalidly (no move, nothing, an unknown move,
two moves): the ambiguous one only where it names two legal moves."""

_ITEM = re.compile(r"(?:^|, )(?:([A-Z]{1,2})\) )?([^\s,()]+)(?: \(([^()]*)\))?")
_RETRY_LIST = re.compile(r"legal moves: (.*?)\.?\s*$", re.IGNORECASE | re.DOTALL)


def legal_moves(text: str) -> list[tuple[str, str, str]]:
    """The moves a user message lists: (letter or "", notation, gloss or "") each.

    Read from its ``Legal moves:`` line, or else (the feedback on a refused answer) from the
    list after its last "legal moves: ".
    """
    listed = next(
        (
            line[len("Legal moves: ") :]
            for line in text.splitlines()
            if line.startswith("Legal moves: ")
        ),
        None,
    )
    if listed is None:
        found = _RETRY_LIST.search(text)
        if found is None:
            return []
        listed = found.group(1)
    return [
        (item.group(1) or "", item.group(2), item.group(3) or "") for item in _ITEM.finditer(listed)
    ]


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass
class Script:
    """How the scripted player answers, each decided by a hash of the request's last user
    message (and, for the transport faults, by how often that text was asked already).

    Attributes:
        forms: The forms answers are written in, chosen by the text's hash.
        invalid_every: One text in this many gets an invalid answer (0: never).
        rate_limit_every: One text in this many gets a 429 on its first try (0: never).
        error_every: One text in this many gets a 500 on its first try (0: never).
        slow_every: One text in this many is answered after ``slow_s`` on its first try.
        fail_tries: How many tries of a faulty text fail (1: its first try only, so a retry
            is answered).
        retry_after_s: The ``Retry-After`` of a 429 (None: no header).
        slow_s: How long a slow answer takes (longer than the client's timeout).
        delay_s: How long every answer takes.
        answer: Overrides the player: text -> the answer (for one-off tests).
    """

    forms: tuple[str, ...] = FORMS
    invalid_every: int = 0
    rate_limit_every: int = 0
    error_every: int = 0
    slow_every: int = 0
    fail_tries: int = 1
    retry_after_s: float | None = 0.01
    slow_s: float = 1.0
    delay_s: float = 0.0
    answer: Any = None

    def fault(self, text: str, tries: int) -> str | None:
        """The fault a request gets: "429", "500", "slow" or None (an answer)."""
        if tries >= self.fail_tries:  # then a retry is answered
            return None
        h = _digest("fault" + text)
        for every, fault in (
            (self.rate_limit_every, "429"),
            (self.error_every, "500"),
            (self.slow_every, "slow"),
        ):
            if every and h % every == 0:
                return fault
            h //= max(every, 1)
        return None

    def reply(self, text: str) -> tuple[str, str | None]:
        """The answer to a user message and its form (None for an invalid answer)."""
        if self.answer is not None:
            return str(self.answer(text)), "scripted"
        moves = legal_moves(text)
        h = _digest(text)
        if not moves or (self.invalid_every and h % self.invalid_every == 0):
            choices = list(INVALID_ANSWERS)
            if len(moves) < 2:
                choices.remove("G7 or draw, not sure")
            else:
                choices[-1] = f"{moves[0][1]} or {moves[1][1]}, not sure"
            return choices[(h >> 8) % len(choices)], None
        letter, move, gloss = moves[(h >> 16) % len(moves)]
        forms = [f for f in self.forms if (f != "letter" or letter) and (f != "natural" or gloss)]
        form = forms[(h >> 24) % len(forms)] if forms else "notation"
        written = {
            "notation": move,
            "lower": move.lower(),
            "letter": letter,
            "natural": gloss,
            "tag": f"I will play this.\n<action>{move}</action>",
            "final_answer": f"The best move here is clear.\nFinal answer: {move}",
            "json": json.dumps({"action": move, "reason": "it plays"}),
        }[form]
        return written, form


@dataclass
class Served:
    """What the server served (read it after the requests are done)."""

    requests: int = 0
    answers: int = 0
    invalid: int = 0
    rate_limited: int = 0
    errors: int = 0
    slow: int = 0
    not_found: int = 0
    unauthorized: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    forms: Counter[str] = field(default_factory=Counter)
    tries: Counter[str] = field(default_factory=Counter, repr=False)
    """How often each last user message was asked (by the text's digest)."""


class ChatServer:
    """The app and its counters. ``base_url`` is set once it listens.

    Args:
        models: The models it serves (any other gets a 404).
        api_key: The key it accepts (None: any, or none).
    """

    def __init__(self, models: tuple[str, ...] = ("test-model",), api_key: str | None = None):
        self.models = models
        self.api_key = api_key
        self.script = Script()
        self.served = Served()
        self.base_url = ""
        self._lock = threading.Lock()
        self.app = self._build()

    def play(self, script: Script) -> Served:
        """Answer by ``script`` from now on, with fresh counters (returned)."""
        with self._lock:
            self.script = script
            self.served = Served()
        return self.served

    def _refusal(self, request: Request) -> JSONResponse | None:
        if self.api_key is None:
            return None
        given = request.headers.get("authorization", "").removeprefix("Bearer ")
        if given == self.api_key:
            return None
        with self._lock:
            self.served.unauthorized += 1
        return JSONResponse(
            {"error": {"message": f"Incorrect API key provided: {given}", "type": "auth"}},
            status_code=401,
        )

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.get("/v1/models")
        async def models(request: Request) -> Any:
            refused = self._refusal(request)
            if refused is not None:
                return refused
            return {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> Any:
            body = await request.json()
            with self._lock:
                served, script = self.served, self.script
                served.requests += 1
                served.in_flight += 1
                served.max_in_flight = max(served.max_in_flight, served.in_flight)
            try:
                return await self._answer(request, body, served, script)
            finally:
                with self._lock:
                    served.in_flight -= 1

        return app

    async def _answer(
        self, request: Request, body: dict[str, Any], served: Served, script: Script
    ) -> Any:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        model = body.get("model")
        if model not in self.models:
            with self._lock:
                served.not_found += 1
            return JSONResponse(
                {"error": {"message": f"model {model!r} not found", "type": "not_found"}},
                status_code=404,
            )
        messages = body["messages"]
        text = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        digest = hashlib.sha256(text.encode()).hexdigest()
        with self._lock:
            tries = served.tries[digest]
            served.tries[digest] += 1
        fault = script.fault(text, tries)
        if fault in ("429", "500"):
            with self._lock:
                if fault == "429":
                    served.rate_limited += 1
                else:
                    served.errors += 1
            headers = {}
            if fault == "429" and script.retry_after_s is not None:
                headers["retry-after"] = f"{script.retry_after_s:g}"
            return JSONResponse(
                {"error": {"message": "try again", "type": "server"}},
                status_code=int(fault),
                headers=headers,
            )
        if fault == "slow":
            with self._lock:
                served.slow += 1
            await asyncio.sleep(script.slow_s)  # the client has given up by now
            return JSONResponse({"error": {"message": "too late"}}, status_code=500)
        if script.delay_s:
            await asyncio.sleep(script.delay_s)
        answer, form = script.reply(text)
        tokens_in = sum(len(m["content"]) for m in messages) // 4 + 1
        tokens_out = len(answer) // 4 + 1
        with self._lock:
            served.answers += 1
            served.tokens_in += tokens_in
            served.tokens_out += tokens_out
            if form is None:
                served.invalid += 1
            else:
                served.forms[form] += 1
        return {
            "id": f"chatcmpl-{served.answers}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }


def free_port() -> int:
    """A port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 held by this process but not listening: connections are refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@contextmanager
def chat_server(
    models: tuple[str, ...] = ("test-model",), api_key: str | None = None
) -> Iterator[ChatServer]:
    """A :class:`ChatServer` served by uvicorn in a thread; stopped on exit."""
    server = ChatServer(models, api_key)
    port = free_port()
    config = uvicorn.Config(
        server.app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
        limit_concurrency=1000,
        backlog=1024,
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the chat server did not start")
        time.sleep(0.02)
    server.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield server
    finally:
        running.should_exit = True
        thread.join(timeout=10)
