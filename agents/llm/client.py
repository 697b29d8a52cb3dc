"""The chat-completions client of a language-model agent: one request, retried, timed.

:class:`ChatClient` sends chat messages to an OpenAI-compatible endpoint (the ``openai``
package, installed with ``pip install 'uno-lab[llm]'``) and returns a :class:`Completion`:
the text and what it cost. It makes its own retries, so that each is counted and a server's
``Retry-After`` is honoured to the millisecond:

* **retried** (up to ``max_retries`` times, counted as transport retries, never as invalid
  answers): 429 (rate limit), 5xx, a request that timed out, a connection lost mid-request.
  The wait is the server's ``Retry-After`` (``retry-after-ms`` first) when it sends one,
  else ``backoff_s`` doubling with each retry, with jitter from a seeded generator;
* **one line, at once** (:class:`LLMEndpointError`, naming the address and the model):
  a refused connection (nobody listens there), a model the endpoint does not know (404), a
  key it refuses (401, 403). These are ``lasting``: every later request would fail alike,
  so the agent stops asking (:mod:`unolab.agents.llm.agent`);
* any other answer (400, 422...) and retries run out: one line for that request only.

The key is read from the environment variable the spec names and never appears in a
message: errors are written here, not copied from the server's answer (an endpoint may
echo part of the key).
"""

from __future__ import annotations

import email.utils
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from uno_env.console import require_extra
from uno_env.files import shown
from uno_env.policy import Seed
from unolab.agents.llm.spec import LLMSpec

__all__ = [
    "MAX_RETRY_AFTER_S",
    "ChatClient",
    "Completer",
    "Completion",
    "FunctionCompleter",
    "LLMAuthError",
    "LLMConnectionError",
    "LLMEndpointError",
    "LLMModelError",
    "LLMRequestError",
    "LLMSetupError",
    "Message",
    "TextPolicy",
    "require_openai",
]

"""How to install the ``openai`` package the client needs."""

MAX_RETRY_AFTER_S = 600.0
"""The longest ``Retry-After`` waited for (a longer one is waited for this long)."""
MAX_BACKOFF_S = 60.0
"""The longest wait between two tries when the server names none."""

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``."""


class LLMSetupError(ValueError):
    """The agent cannot be set up here: ``openai`` is missing, or the key's variable unset."""


class LLMEndpointError(ValueError):
    """The endpoint did not answer a request: one line naming its address and the model.

    Attributes:
        lasting: Whether every later request would fail the same way (a refused
            connection, an unknown model, a refused key), so that asking again is no use.
    """

    lasting = False
    retries = 0
    """Transport retries made before the request was given up."""
    timeouts = 0
    """Tries of the request that timed out."""


class LLMConnectionError(LLMEndpointError):
    """Nothing answers at the address (a refused connection, an unknown host)."""

    lasting = True


class LLMModelError(LLMEndpointError):
    """The endpoint does not know the model, or the address is not a chat API (404)."""

    lasting = True


class LLMAuthError(LLMEndpointError):
    """The endpoint refuses the key (401, 403)."""

    lasting = True


class LLMRequestError(LLMEndpointError):
    """One request failed: retries ran out, or the endpoint refused that request (400)."""


def require_openai() -> ModuleType:
    """The ``openai`` module.

    Raises:
        LLMSetupError: when it is not installed, with the command that installs it.
    """
    return require_extra("openai", LLMSetupError, "a language-model agent")


@dataclass(frozen=True)
class Completion:
    """One answer of a model, and what it cost.

    Attributes:
        text: The answer's text ("" when the model sent none).
        tokens_in: Prompt tokens, as the endpoint counted them (0 when it did not say).
        tokens_out: Answer tokens, likewise.
        latency_s: Seconds from the first try to the answer, waits between tries included.
        retries: Transport retries it took (429, 5xx, timeouts).
        timeouts: Tries that timed out (each retried, so counted in ``retries`` too unless
            the last).
        replayed: Whether it came from a record (no request was sent).
    """

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    retries: int = 0
    timeouts: int = 0
    replayed: bool = False


class Completer(Protocol):
    """What answers chat messages: an endpoint (:class:`ChatClient`) or a Python function.

    ``model`` names what answers (the cache keys recorded answers by it).
    """

    model: str

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The answer to ``messages``.

        Raises:
            LLMEndpointError: when no answer came (one line).
        """
        ...


def _retry_after(response: Any) -> float | None:
    """The wait a server asks for, in seconds (``retry-after-ms``, else ``retry-after`` in
    seconds or as an HTTP date), or None when it names none."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                continue
            seconds = when.timestamp() - time.time()
        if math.isfinite(seconds):
            return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)
    return None


def _refused(err: BaseException) -> bool:
    """Whether a connection error is a refused connection or an unknown host (nobody
    answers there), not a connection lost mid-request."""
    seen: BaseException | None = err
    for _ in range(8):  # the chain of causes: openai's error, then the HTTP library's
        if seen is None:
            return False
        if type(seen).__name__ == "ConnectError":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


TextPolicy = Callable[[list[Message]], str]
"""A Python text policy: the chat messages of a decision -> the answer's text."""


class FunctionCompleter:
    """A Python function from chat messages to text, answering as a model would.

    Args:
        fn: The text policy; it gets a copy of the messages (changing it changes nothing).
        model: Its name (the cache files its answers under it).
    """

    def __init__(self, fn: TextPolicy, model: str) -> None:
        if not callable(fn):
            raise TypeError(f"a text policy must be callable (messages -> text), got {shown(fn)}")
        self.fn = fn
        self.model = model

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The function's answer.

        Raises:
            TypeError: if it returns something other than text.
        """
        start = time.perf_counter()
        text = self.fn([dict(m) for m in messages])
        if not isinstance(text, str):
            raise TypeError(f"text policy {self.model!r} returned {shown(text)}, not text")
        return Completion(text=text, latency_s=time.perf_counter() - start)


class ChatClient:
    """Chat completions from an OpenAI-compatible endpoint, with counted retries.

    Thread-safe: the agent sends many requests at once through one client.

    Args:
        spec: The endpoint, the model and the request's settings.
        seed: Seed of the jitter of the backoff (never of the model's answers: the spec's
            ``seed`` is sent for that).
        sleep: Waits between tries (tests pass a recorder).

    Raises:
        LLMSetupError: if ``openai`` is not installed, or ``api_key_env`` names a variable
            that is not set.
    """

    def __init__(
        self, spec: LLMSpec, seed: Seed = None, sleep: Callable[[float], object] = time.sleep
    ) -> None:
        self.spec = spec
        self.model = spec.model
        self._openai = require_openai()
        key = None
        if spec.api_key_env is not None:
            key = os.environ.get(spec.api_key_env)
            if not key:
                raise LLMSetupError(
                    f"api_key_env: the environment variable {spec.api_key_env} is not set; "
                    f"export it with the key of {spec.base_url}, or leave api_key_env out "
                    "for an endpoint that needs no key"
                )
        # max_retries=0: the retries are this class's own, counted and honouring Retry-After.
        self._client = self._openai.OpenAI(
            base_url=spec.base_url,
            api_key=key or "unused",  # the package insists on one; a local server ignores it
            timeout=spec.timeout_s,
            max_retries=0,
        )
        self._sleep = sleep
        self._rng = np.random.default_rng(seed)
        self._rng_lock = threading.Lock()
        extra: dict[str, Any] = {"temperature": spec.temperature, "max_tokens": spec.max_tokens}
        if spec.seed is not None:
            extra["seed"] = spec.seed
        self._extra = extra

    def __repr__(self) -> str:
        return f"ChatClient(model={self.model!r}, base_url={self.spec.base_url!r})"

    @property
    def where(self) -> str:
        """The model and its endpoint, as messages name them."""
        return f"model {self.model!r} at {self.spec.base_url}"

    def backoff(self, retry: int) -> float:
        """The wait before transport retry ``retry`` (1, 2, ...) when the server names none:
        ``backoff_s * 2**(retry-1)``, at most :data:`MAX_BACKOFF_S`, times a jitter in
        [0.5, 1)."""
        with self._rng_lock:
            jitter = 0.5 + 0.5 * float(self._rng.random())
        return min(self.spec.backoff_s * 2.0 ** (retry - 1), MAX_BACKOFF_S) * jitter

    def complete(self, messages: Sequence[Message]) -> Completion:
        """Send ``messages``; return the answer.

        Raises:
            LLMConnectionError: nothing answers at the address (lasting).
            LLMModelError: the endpoint does not know the model (404; lasting).
            LLMAuthError: the endpoint refuses the key (401, 403; lasting).
            LLMRequestError: retries ran out, or the endpoint refused this request.
        """
        openai = self._openai
        start = time.perf_counter()
        retries = timeouts = 0
        while True:
            wait: float | None = None
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=list(messages), **self._extra
                )
            except openai.APITimeoutError:  # before its base class, APIConnectionError
                timeouts += 1
                why = f"no answer within timeout_s={self.spec.timeout_s:g}"
            except openai.APIConnectionError as err:
                if _refused(err):
                    raise LLMConnectionError(
                        f"cannot connect to {self.spec.base_url} (for model {self.model!r}): "
                        "nothing answers there; start the server or correct base_url"
                    ) from None
                why = "the connection was lost"
            except openai.APIStatusError as err:
                status = int(err.status_code)
                if status in (401, 403):
                    variable = self.spec.api_key_env
                    raise LLMAuthError(
                        f"{self.spec.base_url} refused the key for model {self.model!r} "
                        f"(HTTP {status}): "
                        + (
                            f"check the key in the environment variable {variable}"
                            if variable
                            else "it needs one: name its environment variable in api_key_env"
                        )
                    ) from None
                if status == 404:
                    raise LLMModelError(
                        f"{self.where}: not found (HTTP 404): check the model's name and the "
                        f"address ({self.spec.base_url}/models lists the models it serves)"
                    ) from None
                if status != 429 and status < 500:
                    raise LLMRequestError(
                        f"{self.where} refused the request (HTTP {status}); it was not retried"
                    ) from None
                wait = _retry_after(err.response)
                why = f"HTTP {status}"
            else:
                choice = response.choices[0] if response.choices else None
                text = (choice.message.content if choice is not None else None) or ""
                usage = response.usage
                return Completion(
                    text=text,
                    tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
                    tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
                    latency_s=time.perf_counter() - start,
                    retries=retries,
                    timeouts=timeouts,
                )
            if retries >= self.spec.max_retries:
                given_up = LLMRequestError(
                    f"{self.where}: no answer after {retries + 1} tries (the last: {why}); "
                    "raise max_retries or timeout_s, or lower concurrency"
                )
                given_up.retries, given_up.timeouts = retries, timeouts
                raise given_up
            retries += 1
            self._sleep(wait if wait is not None else self.backoff(retries))

    def close(self) -> None:
        """Close the connections (the client cannot be used after)."""
        self._client.close()
