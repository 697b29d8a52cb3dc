"""The shipped agents load safely under their rules and play legal moves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import ROOT

from uno_env import core, load_rules
from uno_env.observation import encode
from unolab.agents.learned import load_policy
from unolab.agents.policy_metadata import CheckpointMismatchError

PRETRAINED = ROOT / "agents" / "pretrained"


@pytest.mark.parametrize(
    ("name", "players"),
    [
        ("ppo_official_2p", 2),
        ("ppo_official_4p", 4),
        ("ppo_official_2p_exit", 2),
    ],
)
def test_shipped_agent_loads_and_plays_legal_moves(name: str, players: int) -> None:
    path = PRETRAINED / f"{name}.safetensors"
    assert path.stat().st_size < 5_000_000
    rules = load_rules("official", num_players=players)
    policy = load_policy(path, rules=rules)
    assert policy.name == name
    stages = json.loads(path.with_suffix(".json").read_text())["extra"]["stages"]
    assert all(Path(ROOT, stage["config"]).is_file() for stage in stages)
    state = core.init(rules, 64, seed=5)
    masks = core.legal_action_mask(rules, state)
    actions = policy.act(encode(rules, state), masks)
    assert masks[np.arange(64), actions].all()
    other = 3 if players == 2 else 2
    with pytest.raises(CheckpointMismatchError, match="num_players"):
        load_policy(path, rules=load_rules("official", num_players=other))
