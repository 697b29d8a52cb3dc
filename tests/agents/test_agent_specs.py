"""A search's options in its name: ``pimc:2048``, ``ismcts:8192``, ``pimc:rollouts=..,...``."""

from __future__ import annotations

import pytest

from uno_env import ConfigError
from unolab.agents import make_agent, policy_factory
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.pimc import PimcAgent
from unolab.agents.registry import (
    SEARCH_NAMES,
    canonical_agent_spec,
    is_agent_spec,
    parse_agent_spec,
)
from unolab.tournament.config import load_config


@pytest.mark.parametrize(
    ("spec", "kind", "attribute", "value"),
    [
        ("pimc:128", PimcAgent, "rollouts", 128),
        ("pimc_strong:300", PimcAgent, "rollouts", 300),
        ("pimc_guided:rollouts=256,prior_weight=0.2", PimcAgent, "prior_weight", 0.2),
        ("ismcts:500", IsmctsAgent, "iterations", 500),
        ("ismcts:iterations=64,exploration=0.5", IsmctsAgent, "exploration", 0.5),
        ("pimc:rollouts=8,early_stop=true", PimcAgent, "early_stop", True),
    ],
)
def test_a_search_takes_its_options_from_its_name(
    spec: str, kind: type, attribute: str, value: object
) -> None:
    agent = make_agent(spec, seed=1)
    assert isinstance(agent, kind)
    assert getattr(agent, attribute) == value
    assert agent.name == spec  # a leaderboard tells the configurations apart
    assert is_agent_spec(spec)
    assert policy_factory(spec).name == spec


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("pimc:0", "rollouts must be in 1..65536, got 0"),
        ("ismcts:exploration=-1", "exploration must be a number > 0"),
        ("pimc:depth=3", "'depth=3' is not an option of pimc"),
        ("mixbot:3", "'mixbot' takes no options"),
        ("pimc:", "is not an option of pimc"),
    ],
)
def test_bad_options_are_refused_naming_them(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)
    with pytest.raises(ValueError, match=r"pimc|ismcts|mixbot"):
        policy_factory(spec)


def test_the_budget_alone_sets_each_searchs_own_unit() -> None:
    for name in SEARCH_NAMES:
        _, options = parse_agent_spec(f"{name}:77")
        assert options == {"iterations" if name == "ismcts" else "rollouts": 77}
    assert parse_agent_spec("pimc") == ("pimc", {})
    assert not is_agent_spec("ppo_official_2p") and not is_agent_spec("agents/x.safetensors")


def test_a_tournament_takes_searches_with_their_budgets() -> None:
    config = load_config(
        {"name": "t", "participants": ["mixbot", "pimc:32", "ismcts:64"], "deal_sets": 1}
    )
    assert [p.display_name for p in config.participants] == ["mixbot", "pimc:32", "ismcts:64"]
    with pytest.raises(ConfigError, match="rollouts must be"):
        load_config({"name": "t", "participants": ["mixbot", "pimc:lots"], "deal_sets": 1})


@pytest.mark.parametrize(
    ("spellings", "canonical"),
    [
        (("pimc:4", "pimc:rollouts=4", "pimc: rollouts = 4"), "pimc:rollouts=4"),
        (
            ("pimc:prune_draws=TRUE,rollouts=8", "pimc:8,prune_draws=1"),
            "pimc:prune_draws=true,rollouts=8",
        ),
        (("ismcts:64", "ismcts:iterations=64"), "ismcts:iterations=64"),
        (
            ("pimc_guided:prior_weight=1.0", "pimc_guided:prior_weight=1"),
            "pimc_guided:prior_weight=1",
        ),
        (("random",), "random"),
        (("pimc",), "pimc"),
    ],
)
def test_every_spelling_of_a_spec_has_one_canonical_form(
    spellings: tuple[str, ...], canonical: str
) -> None:
    assert {canonical_agent_spec(s) for s in spellings} == {canonical}
    assert canonical_agent_spec("pimc:64") != canonical_agent_spec("pimc")  # no defaults filled


def test_a_tournament_refuses_one_agent_under_two_spellings() -> None:
    with pytest.raises(ConfigError, match=r"'pimc:4' and 'pimc:rollouts=4' are one agent"):
        load_config({"name": "t", "participants": ["mixbot", "pimc:4", "pimc:rollouts=4"]})
    with pytest.raises(ConfigError, match=r"'ismcts:64' and 'ismcts:iterations=64'"):
        load_config(
            {
                "name": "t",
                "format": "gauntlet",
                "candidate": "ismcts:64",
                "participants": ["mixbot", "ismcts:iterations=64"],
            }
        )
    # Named on purpose, one agent may play twice (an A/A test).
    config = load_config(
        {
            "name": "t",
            "participants": [
                {"name": "a", "bot": "pimc:4"},
                {"name": "b", "bot": "pimc:rollouts=4"},
            ],
        }
    )
    assert [p.display_name for p in config.participants] == ["a", "b"]
