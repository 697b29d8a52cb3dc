"""The spec file of a language-model agent: which model, where, and how it is asked.

A spec is a YAML file whose only top-level key is ``llm``::

    # my_model.yaml
    llm:
      model: qwen2.5:7b                  # any model name; ':' and '/' in names work
      base_url: http://127.0.0.1:11434/v1
      api_key_env: OPENAI_API_KEY        # optional: the NAME of an environment variable
      temperature: 0

Such a file is accepted wherever an agent is (:func:`unolab.agents.resolve.policy_factory`).
Every key but ``model`` and ``base_url`` has a default (:class:`LLMSpec`); each value is
checked against its bounds, and a wrong one is refused in one line naming the file, the key
and the value. The key itself never goes in the file: ``api_key_env`` names the environment
variable that holds it, and a value that looks like a key there is refused without being
shown.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from uno_env.config_values import ConfigError, check_float, check_int, check_seed, from_mapping
from uno_env.configuration import load_yaml_mapping
from uno_env.files import shown
from uno_env.text.prompt import PromptOptions

__all__ = [
    "LLM_SPEC_SUFFIXES",
    "PLAY_KEYS",
    "LLMSpec",
    "is_llm_spec",
    "load_llm_spec",
    "looks_like_secret",
    "spec_suffix",
]

LLM_SPEC_SUFFIXES = (".yaml", ".yml")
"""The suffixes of an agent spec file (in any case)."""

MAX_TOKENS_LIMIT = 32768
"""The most tokens an answer may be given (``max_tokens``)."""
TIMEOUT_LIMIT_S = 3600.0
"""The longest wait for one answer (``timeout_s``)."""
MAX_RETRIES_LIMIT = 20
"""The most transport retries of one request (``max_retries``)."""
BACKOFF_LIMIT_S = 60.0
"""The longest first backoff (``backoff_s``)."""
CONCURRENCY_LIMIT = 256
"""The most requests in flight at once (``concurrency``)."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SECRET_PREFIXES = (
    "sk-",
    "sk_",
    "pk-",
    "rk-",
    "hf_",
    "ghp_",
    "gho_",
    "github_pat_",
    "gsk_",
    "xai-",
    "AIza",
    "r8_",
    "nvapi-",
    "eyJ",
)
"""How common API keys begin (OpenAI, Hugging Face, GitHub, Groq, xAI, Google...)."""


def looks_like_secret(value: str) -> bool:
    """Whether ``value`` looks like a key or a token rather than a variable's name.

    A known key prefix (``sk-``, ``hf_``, ``ghp_``...), or a run of 20 or more letters and
    digits with both in it (a variable's name is words: ``TOGETHER_API_KEY_2``).
    """
    if value.startswith(_SECRET_PREFIXES):
        return True
    return any(
        len(run) >= 20 and any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        for run in re.split(r"[_\W]+", value)
    )


def _secret_words(value: str) -> str:
    """``value`` as a message may name it: itself, or only its length when it may be a key."""
    if looks_like_secret(value) or len(value) > 40:
        return f"a {len(value)}-character value that looks like a key itself (not shown)"
    return shown(value)


PLAY_KEYS = (
    "model",
    "temperature",
    "max_tokens",
    "view",
    "list_moves",
    "choices",
    "glosses",
    "seed",
)
"""The keys of a spec file that decide the model's play (its address, key, timeouts, retries
and concurrency do not)."""


@dataclass(frozen=True)
class LLMSpec:
    """A language-model agent: the endpoint, the model, and how each decision is asked.

    Attributes:
        model: The model's name as the endpoint knows it (``qwen2.5:7b``,
            ``meta-llama/Llama-3.1-8B-Instruct``).
        base_url: The address of an OpenAI-compatible API (``http://127.0.0.1:11434/v1``):
            ``http`` or ``https``, without a user name or password in it.
        api_key_env: The NAME of the environment variable that holds the API key, or None
            for an endpoint that needs none. Never the key itself.
        temperature: Sampling temperature, 0 to 2.
        max_tokens: The most tokens of one answer, 1 to 32768.
        timeout_s: How long one request may take before it is retried, (0, 3600] seconds.
        max_retries: Transport retries of one request (on 429, 5xx and timeouts), 0 to 20;
            they are not invalid answers.
        backoff_s: The wait before the first transport retry, doubling with each retry
            (with jitter), 0 to 60 seconds; a ``Retry-After`` the server sends wins.
        concurrency: Requests in flight at once, 1 to 256 (default 4): a batch of decisions
            from many tables is sent this many at a time. Local servers answer few at once by
            default (llama.cpp's and Ollama's parallel slots), and the tables of a
            tournament move in step, so more only queue there; raise it for vLLM, SGLang
            or a hosted API.
        view: ``"full"`` (each decision states the whole table; no memory) or
            ``"changes"`` (one conversation per game and seat: the rules once, then what
            changed since the model's last decision).
        list_moves: Whether each prompt lists the legal moves.
        choices: ``"names"`` (the model answers a move's notation, ``G7``) or
            ``"letters"`` (it answers the letter of a listed move, ``A``).
        glosses: Whether each listed move carries its meaning in words (``G7 (green 7)``).
        seed: A seed sent with every request (for endpoints that sample reproducibly), or
            None to send none.
    """

    model: str
    base_url: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 1.0
    concurrency: int = 4
    view: Literal["full", "changes"] = "full"
    list_moves: bool = True
    choices: Literal["names", "letters"] = "names"
    glosses: bool = True
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(f"model: {shown(self.model)} is empty; give the model's name")
        if not self.model.isprintable() or len(self.model) > 256:
            raise ConfigError(
                f"model: {shown(self.model)} is not a model name (a control character, or "
                "over 256 characters)"
            )
        object.__setattr__(self, "base_url", _checked_url(self.base_url))
        if self.api_key_env is not None:
            _check_env_name(self.api_key_env)
        floats = {
            "temperature": check_float("temperature", self.temperature, 0.0, 2.0),
            "timeout_s": check_float(
                "timeout_s", self.timeout_s, 0.0, TIMEOUT_LIMIT_S, low_open=True
            ),
            "backoff_s": check_float("backoff_s", self.backoff_s, 0.0, BACKOFF_LIMIT_S),
        }
        for key, value in floats.items():
            object.__setattr__(self, key, value)
        check_int("max_tokens", self.max_tokens, 1, MAX_TOKENS_LIMIT)
        check_int("max_retries", self.max_retries, 0, MAX_RETRIES_LIMIT)
        check_int("concurrency", self.concurrency, 1, CONCURRENCY_LIMIT)
        if self.seed is not None:
            check_seed("seed", self.seed)
        for key, allowed in (("view", ("full", "changes")), ("choices", ("names", "letters"))):
            if getattr(self, key) not in allowed:
                raise ConfigError(
                    f"{key}: {shown(getattr(self, key))} is not allowed; choose one of "
                    f"{list(allowed)}"
                )
        for key in ("list_moves", "glosses"):
            if not isinstance(getattr(self, key), bool):
                raise ConfigError(f"{key}: expected true or false, got {shown(getattr(self, key))}")
        self.prompt_options  # noqa: B018 (checks the options together: letters need moves listed)

    @property
    def prompt_options(self) -> PromptOptions:
        """How each decision is put to the model (:class:`uno_env.text.prompt.PromptOptions`)."""
        return PromptOptions(
            view=self.view, list_moves=self.list_moves, choices=self.choices, glosses=self.glosses
        )

    def play_settings(self) -> dict[str, Any]:
        """What decides the model's play: :data:`PLAY_KEYS` and their values (a tournament's
        fingerprint counts them; a moved server or a new key changes none of its games)."""
        return {key: getattr(self, key) for key in PLAY_KEYS}

    def public(self) -> dict[str, Any]:
        """The spec as plain values, for records and summaries (it holds no key: only the
        name of the variable that does)."""
        return asdict(self)


def _checked_url(url: object) -> str:
    """``base_url`` checked: an http(s) address with a host, no credentials, no spaces."""
    if not isinstance(url, str):
        raise ConfigError(f"base_url: expected an address (http://host:port/v1), got {shown(url)}")
    try:
        parts = urlsplit(url.strip())
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = None, False
    if parts is not None and (parts.username is not None or parts.password is not None):
        # A password in the address would reach every message that names it.
        raise ConfigError(
            "base_url: holds a user name or password; give the address alone and the key's "
            "variable in api_key_env"
        )
    if (
        parts is None
        or not port_ok
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or any(c.isspace() for c in url.strip())
        or not url.isprintable()
    ):
        raise ConfigError(
            f"base_url: {shown(url)} is not an http(s) address; give the API's address, "
            "e.g. http://127.0.0.1:11434/v1"
        )
    return url.strip().rstrip("/")


def _check_env_name(value: object) -> None:
    """``api_key_env`` checked: a variable's name, never something that looks like a key."""
    if not isinstance(value, str):
        raise ConfigError(
            f"api_key_env: expected the name of an environment variable, got {shown(value)}"
        )
    if looks_like_secret(value) or not _ENV_NAME.fullmatch(value):
        raise ConfigError(
            f"api_key_env: {_secret_words(value)} is not the name of an environment variable; "
            "keep the key out of the file: put it in a variable (export OPENAI_API_KEY=...) "
            "and give that variable's name (api_key_env: OPENAI_API_KEY)"
        )


_REQUIRED = {
    "model": "the model's name (e.g. model: qwen2.5:7b)",
    "base_url": "the API's address (e.g. base_url: http://127.0.0.1:11434/v1)",
}


def spec_suffix(path: str | Path) -> bool:
    """Whether ``path`` has an agent spec file's suffix (``.yaml`` or ``.yml``, any case)."""
    return str(path).lower().endswith(LLM_SPEC_SUFFIXES)


def is_llm_spec(path: str | Path) -> bool:
    """Whether ``path`` is a ``.yaml``/``.yml`` file whose top level has ``llm:``.

    Nothing is checked beyond that (:func:`load_llm_spec` checks the values); a file that
    cannot be read or parsed is no spec.
    """
    if not spec_suffix(path):
        return False
    try:
        if not Path(path).is_file():
            return False
        return "llm" in load_yaml_mapping(path)
    except (ConfigError, OSError, ValueError):
        return False


def load_llm_spec(path: str | Path) -> LLMSpec:
    """Read and check an agent spec file.

    Args:
        path: A YAML file holding ``llm:`` (see the module docstring).

    Returns:
        The spec.

    Raises:
        ConfigError: one line naming the file, the key and the value: a file that cannot
            be read or parsed, a top level other than ``llm:``, a missing ``model`` or
            ``base_url``, an unknown key, a value out of its bounds, or an ``api_key_env``
            that is not a variable's name (a value that looks like a key is not shown).
    """
    data = load_yaml_mapping(path)
    where = str(path)
    if "llm" not in data:
        raise ConfigError(
            f"{where}: no llm: section; an agent spec file holds llm: with at least model "
            "and base_url (see docs/llm.md)"
        )
    stray = sorted((key for key in data if key != "llm"), key=repr)
    if stray:
        raise ConfigError(
            f"{where}: unknown top-level key(s) {stray}; an agent spec file holds only llm:"
        )
    section = data["llm"]
    if not isinstance(section, dict):
        raise ConfigError(
            f"{where}: llm: expected a mapping of keys (model, base_url, ...), got {shown(section)}"
        )
    if "api_key" in section:  # named before the unknown keys: the file holds a key
        raise ConfigError(
            f"{where}: llm.api_key: a key never goes in the file (not shown); put it in an "
            "environment variable and give that variable's name in api_key_env"
        )
    for key, what in _REQUIRED.items():
        if section.get(key) is None:
            raise ConfigError(f"{where}: llm.{key} is missing; give {what}")
    if isinstance(section.get("api_key_env"), str):
        try:
            _check_env_name(section["api_key_env"])  # before any message could show it
        except ConfigError as err:
            raise ConfigError(f"{where}: llm.{err}") from None
    try:
        return from_mapping(LLMSpec, section, where=f"{where}: llm")
    except ConfigError as err:
        # A bound checked by the spec itself names its key alone ("temperature: ..."): name
        # it in the file's section as the type checks do ("llm.temperature: ...").
        message, prefix = str(err), f"{where}: llm: "
        key = message[len(prefix) :].partition(":")[0]
        if message.startswith(prefix) and key in _FIELDS:
            raise ConfigError(f"{where}: llm.{message[len(prefix) :]}") from None
        raise


_FIELDS = frozenset(field.name for field in fields(LLMSpec))
