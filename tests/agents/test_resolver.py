"""One resolver: every name or spec a user types becomes a player through ``policy_factory``.

A search's own options that name a policy (its rollout policy, its prior) included: a shipped
agent's name works there as everywhere, and a search is refused there in one line.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from uno_env import load_rules
from uno_env.policy import PolicyFactory
from unolab.agents import make_agent, resolve_opponents, resolve_policy
from unolab.agents import resolve as resolve_module
from unolab.agents.arena import evaluate_vs, play_games
from unolab.agents.pimc import PimcAgent
from unolab.cli import main as cli_main
from unolab.tournament.config import load_config
from unolab.tournament.participants import entrants_for
from unolab.tournament.runner import run_tournament

RULES_2P = load_rules("official", num_players=2)
LEARNED_ROLLOUT = "pimc:rollouts=2,rollout_policy=ppo_official_2p"
"""A search rolling out with a shipped agent named as everywhere else."""


def test_a_shipped_agent_rolls_out_a_search_in_the_python_api() -> None:
    agent = resolve_policy(LEARNED_ROLLOUT, RULES_2P, seed=3)
    assert isinstance(agent, PimcAgent) and agent.name == LEARNED_ROLLOUT
    results = play_games(RULES_2P, [agent, make_agent("random", 1)], 2, seed=5, progress=False)
    assert results.turns.min() > 0
    assert agent.decisions > 0 and agent.rollout_steps > 0


def test_a_shipped_agent_rolls_out_a_search_in_a_tournament(tmp_path: Path) -> None:
    config = load_config(
        {
            "name": "t",
            "participants": [LEARNED_ROLLOUT, "random"],
            "rules": "official",
            "num_players": 2,
            "deal_sets": 1,
            "games_per_chunk": 2,
            "bootstrap": 10,
            "seed": 11,
            "output_dir": str(tmp_path),
        }
    )
    summary = run_tournament(config, progress=False, plots=False, print_table=False)
    names = {row["name"] for row in summary["leaderboard"]}
    assert names == {LEARNED_ROLLOUT, "random"}


def test_a_shipped_agent_rolls_out_a_search_in_play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Always the first move offered, for one hand; then the end of the input ends the session.
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 400 + "n\n"))
    code = cli_main(["play", "--opponents", LEARNED_ROLLOUT, "--seed", "4", "--no-colour"])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert f"player_1 ({LEARNED_ROLLOUT})" in out
    assert f"player_1 ({LEARNED_ROLLOUT}) plays" in out  # it searched its moves


@pytest.mark.parametrize("spec", ["pimc", "pimc_strong:4", "ismcts:8", "pimc_guided"])
def test_a_search_named_as_a_rollout_policy_is_refused_in_one_line(spec: str) -> None:
    for build in (
        lambda: PimcAgent(seed=0, rollout_policy=spec),
        lambda: make_agent(f"pimc:rollout_policy={spec}", 0),
    ):
        with pytest.raises(ValueError, match="is a search agent") as info:
            build()
        assert "\n" not in str(info.value) and repr(spec) in str(info.value)


def test_a_class_that_searches_is_refused_as_a_rollout_policy(tmp_path: Path) -> None:
    bots = tmp_path / "searching.py"
    bots.write_text(
        "import numpy as np\n"
        "class Searcher:\n"
        "    name = 'searcher'\n"
        "    needs_state = True\n"
        "    def act(self, observations, masks): return np.zeros(len(masks), dtype=np.int64)\n"
        "    def act_from_state(self, rules, state, seats, masks=None):\n"
        "        return np.zeros(state.batch_size, dtype=np.int64)\n"
        "    def reset(self, games=None): pass\n"
    )
    with pytest.raises(ValueError, match="is a search agent"):
        PimcAgent(seed=0, rollout_policy=f"{bots}:Searcher")


def test_a_prior_must_give_action_probabilities() -> None:
    with pytest.raises(ValueError, match="'mixbot' gives no action probabilities"):
        PimcAgent(seed=0, prior="mixbot")
    # A shipped agent by name guides the search as its path does.
    assert PimcAgent(seed=0, rollouts=2, prior="ppo_official_2p", rules=RULES_2P).prior_spec


class _Spy:
    """Stands in for ``policy_factory`` wherever a module holds it, recording each spec."""

    def __init__(self, real: Callable[..., PolicyFactory]) -> None:
        self.real = real
        self.specs: list[str] = []

    def __call__(self, spec: Any, *args: Any, **kwargs: Any) -> PolicyFactory:
        self.specs.append(str(spec))
        return self.real(spec, *args, **kwargs)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> _Spy:
    real = resolve_module.policy_factory
    found = _Spy(real)
    holders = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith(("unolab", "uno_env"))
        and getattr(module, "policy_factory", None) is real
    ]
    assert resolve_module in holders
    for module in holders:
        monkeypatch.setattr(module, "policy_factory", found)
    return found


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "resolve_policy": lambda spec: resolve_policy(spec, RULES_2P),
    "resolve_opponents": lambda spec: resolve_opponents([spec], RULES_2P),
    "make_agent, a search's rollout policy": lambda spec: make_agent(
        f"pimc:rollouts=2,rollout_policy={spec}", 0
    ),
    "PimcAgent's rollout policy": lambda spec: PimcAgent(seed=0, rollout_policy=spec),
    "evaluate_vs": lambda spec: evaluate_vs(
        RULES_2P, make_agent("random", 0), spec, 2, progress=False
    ),
    "a tournament's participant": lambda spec: entrants_for(
        load_config({"name": "t", "participants": [spec, "random"], "num_players": 2})
    ),
    "a tournament's search participant": lambda spec: load_config(
        {"name": "t", "participants": [f"pimc:rollout_policy={spec}", "random"]}
    ),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("spec", ["mixbot", "ppo_official_2p"])
def test_every_entry_point_resolves_through_policy_factory(
    spy: _Spy, entry: str, spec: str
) -> None:
    ENTRY_POINTS[entry](spec)
    assert spec in spy.specs


def test_a_tournament_builds_its_participants_through_policy_factory(
    spy: _Spy, tmp_path: Path
) -> None:
    config = load_config(
        {
            "name": "t",
            "participants": ["ppo_official_2p", "mixbot"],
            "num_players": 2,
            "deal_sets": 1,
            "output_dir": str(tmp_path),
        }
    )
    entrants = entrants_for(config)
    spy.specs.clear()
    policy = entrants[0].build(3)
    assert spy.specs == ["ppo_official_2p"] and policy.name.startswith("ppo_official_2p")


def test_the_command_line_resolves_through_policy_factory(
    spy: _Spy, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the session ends at once
    assert cli_main(["play", "--opponents", "greedy_points", "--seed", "1", "--no-colour"]) == 0
    assert "greedy_points" in spy.specs
    capsys.readouterr()


def test_a_learned_participant_plays_as_load_policy_builds_it() -> None:
    """Resolved once and built per seed, a learned agent plays as one loaded with that seed."""
    from unolab.agents.learned import load_policy

    factory = resolve_module.policy_factory("ppo_official_2p", RULES_2P, deterministic=False)
    loaded = load_policy("ppo_official_2p", RULES_2P, deterministic=False, seed=9)
    rng = np.random.default_rng(0)
    obs = rng.random((16, loaded.meta.obs_dim), dtype=np.float32)
    masks = np.ones((16, loaded.meta.num_actions), dtype=bool)
    np.testing.assert_array_equal(factory(9).act(obs, masks), loaded.act(obs, masks))


def test_optional_capabilities_are_declared_protocols() -> None:
    from uno_env.policy import (
        ActionProbabilities,
        ObservationUse,
        Resettable,
        SearchStatistics,
        StateSearcher,
        reads_observations,
        searches_from_state,
    )

    learned = resolve_policy("ppo_official_2p", RULES_2P)
    for spec in ("pimc:2", "ismcts:4"):
        search = make_agent(spec, 0)
        assert isinstance(search, StateSearcher) and searches_from_state(search)
        assert isinstance(search, SearchStatistics) and search.decisions == 0
        assert not reads_observations(search) and not isinstance(search, ActionProbabilities)
    assert isinstance(learned, ActionProbabilities) and not isinstance(learned, SearchStatistics)
    assert reads_observations(learned) and not isinstance(learned, ObservationUse)
    assert not reads_observations(make_agent("random_any")) and reads_observations(
        make_agent("mixbot")
    )
    assert all(isinstance(make_agent(name), Resettable) for name in ("random", "mixbot"))
    assert not isinstance(object(), Resettable)
