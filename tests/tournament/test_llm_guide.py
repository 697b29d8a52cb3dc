"""docs/llm.md says what the code does: its example prompts are the text layer's output, its
table of spec keys lists every key with its default, and its spec file loads."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
from support import ROOT

from uno_env import core
from uno_env.rules import load_rules
from uno_env.text.prompt import PromptOptions, decision_prompt, system_prompt
from uno_env.text.view import seat_view
from unolab.agents.llm.spec import LLMSpec, load_llm_spec

GUIDE = ROOT / "docs" / "llm.md"


def _example(marker: str) -> str:
    """The fenced block that follows ``<!-- example: {marker}`` in the guide."""
    text = GUIDE.read_text("utf-8")
    found = re.search(
        rf"<!-- example: {re.escape(marker)}[^\n]*-->\n```text\n(.*?)\n```", text, re.S
    )
    assert found, f"no example '{marker}' in {GUIDE}"
    return found.group(1)


def test_the_example_prompts_are_the_text_layer_s() -> None:
    rules = load_rules("official", num_players=2)
    state = core.init(rules, keys=np.array([7], dtype=np.uint64), dealer=rules.num_players - 1)
    options = PromptOptions()
    assert int(state.current[0]) == 0
    assert _example("system prompt") == system_prompt(rules, options)
    view = seat_view(rules, state, 0)
    assert _example("decision prompt") == decision_prompt(view, options).text


def test_the_table_of_keys_lists_every_key_with_its_default() -> None:
    text = GUIDE.read_text("utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", text, re.M))
    for field in dataclasses.fields(LLMSpec):
        assert field.name in rows, f"docs/llm.md does not list the key {field.name}"
        if field.default is dataclasses.MISSING:
            assert rows[field.name].strip() == "(required)"
        elif field.default is None:
            assert rows[field.name].strip() == "none"
        else:
            shown = rows[field.name].strip().strip("`")
            expected = (
                str(field.default).lower() if isinstance(field.default, bool) else field.default
            )
            assert shown == str(expected) or float(shown) == field.default, field.name


def test_the_guide_s_spec_file_loads(tmp_path: Path) -> None:
    text = GUIDE.read_text("utf-8")
    block = re.search(r"```yaml\n(# my_model.yaml\n.*?)```", text, re.S)
    assert block
    path = tmp_path / "my_model.yaml"
    path.write_text(block.group(1))
    spec = load_llm_spec(path)
    assert (spec.model, spec.base_url, spec.api_key_env) == (
        "qwen2.5:7b",
        "http://127.0.0.1:11434/v1",
        "OPENAI_API_KEY",
    )
