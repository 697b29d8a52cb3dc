"""A language model's spec file: read with bounds, accepted wherever an agent is, and
refused in one line naming the file, the key and the value (a key itself never shown)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest

from uno_env.config_values import ConfigError
from uno_env.policy import PolicyFactory
from unolab.agents import make_agent, policy_factory, resolve_policy
from unolab.agents.agent_files import MissingAgentFileError
from unolab.agents.llm.agent import LLMAgent, SpecBuilder
from unolab.agents.llm.client import LLMSetupError
from unolab.agents.llm.spec import LLMSpec, is_llm_spec, load_llm_spec, looks_like_secret
from unolab.agents.resolve import UnknownAgentError, agent_forms

SECRET = "sk-proj-Zq8VbW3nRt5Yp2Lm9Kd4Hs7Jx1Cf6Ga0"
"""A recognisable key: no message may show it."""
GOOD = "llm:\n  model: qwen2.5:7b\n  base_url: http://127.0.0.1:11434/v1\n"


def spec_file(tmp_path: Path, text: str, name: str = "my_model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_spec_file_is_read_with_its_defaults(tmp_path: Path) -> None:
    path = spec_file(tmp_path, GOOD + "  temperature: 0\n  view: changes\n")
    spec = load_llm_spec(path)
    assert spec.model == "qwen2.5:7b"  # ':' in a model's name works
    assert spec.base_url == "http://127.0.0.1:11434/v1"
    assert (spec.temperature, spec.max_tokens, spec.max_retries, spec.concurrency) == (
        0.0,
        256,
        4,
        4,
    )
    assert spec.prompt_options.view == "changes" and spec.prompt_options.list_moves
    assert is_llm_spec(path)
    assert not is_llm_spec(spec_file(tmp_path, "name: t\n", "rules.yaml"))
    assert not is_llm_spec(tmp_path / "missing.yaml")


def test_a_model_name_with_slashes_and_a_trailing_slash_in_the_address(tmp_path: Path) -> None:
    text = "llm:\n  model: meta-llama/Llama-3.1-8B-Instruct\n  base_url: https://h.example/v1/\n"
    spec = load_llm_spec(spec_file(tmp_path, text))
    assert spec.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert spec.base_url == "https://h.example/v1"


BAD_SPECS = [
    # (the llm section's lines after model and base_url, or a whole file; the words expected)
    ("  temperature: 3\n", ["llm.temperature", "3", "[0, 2]"]),
    ("  max_tokens: 0\n", ["llm.max_tokens", "0", "1..32768"]),
    ("  concurrency: 300\n", ["llm.concurrency", "300", "1..256"]),
    ("  timeout_s: 0\n", ["llm.timeout_s", "0", "(0, 3600]"]),
    ("  max_retries: -1\n", ["llm.max_retries", "-1", "0..20"]),
    ("  view: partial\n", ["llm.view", "'partial'", "full"]),
    ("  choices: letters\n  list_moves: false\n", ["llm.choices", "letters", "list_moves"]),
    ("  temprature: 0\n", ["llm", "unknown key", "temprature", "temperature"]),
    ("  api_key_env: OPENAI-KEY\n", ["llm.api_key_env", "'OPENAI-KEY'", "name"]),
    ("  seed: -1\n", ["llm.seed", "-1"]),
    ("  glosses: maybe\n", ["llm.glosses", "'maybe'"]),
]


@pytest.mark.parametrize(
    ("extra", "words"), BAD_SPECS, ids=[e.split(":")[0].strip() for e, _ in BAD_SPECS]
)
def test_a_bad_value_is_one_line_naming_file_key_and_value(
    tmp_path: Path, extra: str, words: list[str]
) -> None:
    path = spec_file(tmp_path, GOOD + extra)
    for load in (load_llm_spec, policy_factory, make_agent):
        with pytest.raises(ConfigError) as info:
            load(str(path))
        message = str(info.value)
        assert "\n" not in message and message.startswith(str(path)), message
        for word in words:
            assert word in message, (word, message)


BAD_FILES = [
    ("llm:\n  base_url: http://127.0.0.1:1/v1\n", ["llm.model is missing"]),
    ("llm:\n  model: m\n", ["llm.base_url is missing"]),
    ("llm:\n  model: m\n  base_url: ftp://x/v1\n", ["llm.base_url", "'ftp://x/v1'", "http"]),
    ("llm:\n  model: ''\n  base_url: http://h/v1\n", ["llm.model", "empty"]),
    ("llm: gpt\n", ["llm", "'gpt'", "mapping"]),
    (GOOD + "name: mine\n", ["unknown top-level key", "'name'", "only llm"]),
    ("model: m\nbase_url: http://h/v1\n", ["no llm: section"]),
    ("llm:\n  model: m\n  base_url: [http://h/v1\n", ["invalid YAML", "line"]),
]


@pytest.mark.parametrize("text, words", BAD_FILES)
def test_a_malformed_spec_file_is_one_line_naming_it(
    tmp_path: Path, text: str, words: list[str]
) -> None:
    path = spec_file(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        policy_factory(str(path))
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize(
    "line",
    [
        f"  api_key_env: {SECRET}\n",
        f"  api_key_env: {SECRET[3:].replace('-', '')}\n",  # letters and digits only
        f"  api_key: {SECRET}\n",
        f"  base_url: http://user:{SECRET[3:]}@127.0.0.1:1/v1\n",
    ],
    ids=["key-in-api_key_env", "bare-key-in-api_key_env", "api_key", "password-in-url"],
)
def test_a_key_in_the_file_is_refused_without_being_shown(tmp_path: Path, line: str) -> None:
    text = GOOD + line if "base_url" not in line else "llm:\n  model: m\n" + line
    path = spec_file(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        policy_factory(str(path))
    message = str(info.value)
    assert SECRET[3:].replace("-", "")[:12] not in message.replace("-", "")
    assert str(path) in message and "\n" not in message
    assert any(key in message for key in ("api_key_env", "api_key", "base_url"))


def test_what_looks_like_a_key() -> None:
    assert looks_like_secret(SECRET) and looks_like_secret("hf_abcdefghijklmnopqrstu")
    assert looks_like_secret("a1b2c3d4e5f6g7h8i9j0k1l2")
    for name in ("OPENAI_API_KEY", "TOGETHER_API_KEY_2", "my_key", "GROQ_API_KEY"):
        assert not looks_like_secret(name), name


def test_the_resolver_builds_agents_from_a_spec_file(tmp_path: Path) -> None:
    path = spec_file(tmp_path, GOOD)
    factory = policy_factory(str(path), "official")
    assert isinstance(factory, PolicyFactory) and factory.name == "my_model"
    agent = factory(3)
    assert isinstance(agent, LLMAgent) and agent.name == "my_model"
    assert agent.needs_state and not agent.uses_observations
    assert agent.spec == load_llm_spec(path)
    resolved = resolve_policy(path, "official", seed=1)
    assert isinstance(resolved, LLMAgent) and resolved.name == "my_model"
    made = make_agent(str(path), 2)
    assert isinstance(made, LLMAgent) and made.name == "my_model"
    for built in (agent, resolved, made):
        built.close()


def test_the_factory_survives_a_pickle_round_trip(tmp_path: Path) -> None:
    factory = policy_factory(str(spec_file(tmp_path, GOOD + "  api_key_env: MY_KEY_VAR\n")))
    assert isinstance(factory.build, SpecBuilder)
    # Built in the checking process above; a worker needs the variable too.
    data = pickle.dumps(factory)
    assert b"MY_KEY_VAR" in data  # the variable's name travels, never a key
    again = pickle.loads(data)
    assert again.name == factory.name and again.build == factory.build
    agent = again(5)
    assert isinstance(agent, LLMAgent) and agent.spec == factory.build.spec
    agent.close()


@pytest.fixture(autouse=True)
def _key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY_VAR", SECRET)


def test_an_unset_key_variable_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    path = spec_file(tmp_path, GOOD + "  api_key_env: NOT_SET_ANYWHERE\n")
    with pytest.raises(LLMSetupError, match="NOT_SET_ANYWHERE is not set"):
        policy_factory(str(path))


def test_a_missing_openai_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai now fails
    with pytest.raises(LLMSetupError) as info:
        policy_factory(str(spec_file(tmp_path, GOOD)))
    assert "pip install 'uno-lab[llm]'" in str(info.value) and "\n" not in str(info.value)


def test_a_missing_spec_file_and_a_search_context_are_named(tmp_path: Path) -> None:
    with pytest.raises(MissingAgentFileError, match="does not exist"):
        policy_factory(str(tmp_path / "nope.yaml"))
    with pytest.raises(ValueError, match="is a language model, which cannot play inside a search"):
        policy_factory(str(spec_file(tmp_path, GOOD)), allow_search=False)
    assert "spec file" in agent_forms() and "spec file" not in agent_forms(allow_search=False)
    with pytest.raises(UnknownAgentError, match="spec file"):
        policy_factory("no_such_bot")


def test_a_spec_built_in_python_checks_its_bounds() -> None:
    with pytest.raises(ConfigError, match="concurrency: 0 is out of range"):
        LLMSpec(model="m", base_url="http://h/v1", concurrency=0)
    with pytest.raises(ConfigError, match="not an http"):
        LLMSpec(model="m", base_url="h:1/v1")
    assert LLMSpec(model="m", base_url="http://h/v1").public()["api_key_env"] is None
