"""Learned policies: batch and single-row inputs, action probabilities, and the resolver."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from support import ROOT
from support.agents import write_tiny_agent

from uno_env import core, load_rules
from uno_env.cards import NUM_ACTIONS
from uno_env.envs.gym_env import UnoGymEnv
from uno_env.observation import OBS_DIM, encode
from uno_env.policy import PolicyFactory
from uno_env.rules import Rules
from unolab.agents import resolve_opponents, resolve_policy
from unolab.agents.learned import TorchPolicy, load_policy

PRETRAINED_2P = ROOT / "agents" / "pretrained" / "ppo_official_2p.safetensors"
RULES_2P = load_rules("official", num_players=2)


def _batch(rules: Rules, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    state = core.init(rules, size, seed=seed)
    return encode(rules, state), core.legal_action_mask(rules, state)


def _tiny(path: Path, name: str = "tiny") -> Path:
    return write_tiny_agent(path.parent, name, activation="relu", random_biases=True)


@pytest.fixture(scope="module")
def pretrained() -> TorchPolicy:
    return load_policy(PRETRAINED_2P, rules=RULES_2P)


def test_single_observation_is_a_batch_of_one(pretrained: TorchPolicy) -> None:
    obs, masks = _batch(RULES_2P, 16, seed=3)
    batch = pretrained.act(obs, masks)
    for row in range(16):
        single = pretrained.act(obs[row], masks[row])
        assert single.shape == (1,)
        assert single.dtype == np.int64
        assert single[0] == batch[row]
    assert pretrained.action_probs(obs[0], masks[0]).shape == (1, NUM_ACTIONS)


@pytest.mark.parametrize(
    ("obs_shape", "mask_shape"),
    [((4, OBS_DIM - 1), (4, NUM_ACTIONS)), ((4, OBS_DIM), (3, NUM_ACTIONS)), ((OBS_DIM,), (4, 80))],
)
def test_wrong_shapes_name_the_expected_ones(
    pretrained: TorchPolicy, obs_shape: tuple[int, ...], mask_shape: tuple[int, ...]
) -> None:
    with pytest.raises(ValueError, match=rf"\(B, {OBS_DIM}\).*\(B, {NUM_ACTIONS}\)"):
        pretrained.act(np.zeros(obs_shape, np.float32), np.ones(mask_shape, bool))
    with pytest.raises(ValueError, match=str(obs_shape).replace("(", r"\(").replace(")", r"\)")):
        pretrained.action_probs(np.zeros(obs_shape, np.float32), np.ones(mask_shape, bool))


def test_action_probs_are_the_masked_softmax(pretrained: TorchPolicy) -> None:
    obs, masks = _batch(RULES_2P, 64, seed=9)
    masks = masks.copy()
    masks[5] = False  # a finished game: no legal action
    probs = pretrained.action_probs(obs, masks)
    assert probs.shape == (64, NUM_ACTIONS)
    assert probs.dtype == np.float32
    assert (probs[~masks] == 0).all()
    live = masks.any(axis=1)
    np.testing.assert_allclose(probs[live].sum(axis=1), 1.0, atol=1e-5)
    assert (probs[5] == 0).all()
    # The deterministic policy plays the most probable legal action.
    np.testing.assert_array_equal(probs[live].argmax(axis=1), pretrained.act(obs, masks)[live])


def test_sampling_policy_samples_the_probabilities(tmp_path: Path) -> None:
    path = _tiny(tmp_path / "tiny")
    policy = load_policy(path, rules=Rules(num_players=2), deterministic=False, seed=1)
    obs, masks = _batch(Rules(num_players=2), 1, seed=4)
    probs = policy.action_probs(obs, masks)[0]
    draws = np.array([policy.act(obs, masks)[0] for _ in range(2000)])
    assert masks[0, draws].all()
    freq = np.bincount(draws, minlength=NUM_ACTIONS) / draws.size
    np.testing.assert_allclose(freq, probs, atol=0.05)


def test_agent_loads_by_stem_json_and_dotted_names(tmp_path: Path) -> None:
    path = _tiny(tmp_path / "tiny")
    shutil.copy(path, tmp_path / "tiny.v2.safetensors")
    shutil.copy(path.with_suffix(".json"), tmp_path / "tiny.v2.json")
    obs, masks = _batch(Rules(num_players=2), 8, seed=2)
    expected = load_policy(path).act(obs, masks)
    for spec in (tmp_path / "tiny", tmp_path / "tiny.json", tmp_path / "tiny.v2.safetensors"):
        np.testing.assert_array_equal(load_policy(spec).act(obs, masks), expected)
        np.testing.assert_array_equal(resolve_policy(str(spec)).act(obs, masks), expected)


def test_a_dotted_name_is_written_whole(tmp_path: Path) -> None:
    # A run named gamma_0.99 exports gamma_0.99.safetensors, not gamma_0.safetensors.
    weights = write_tiny_agent(tmp_path, "gamma_0.99")
    assert weights == tmp_path / "gamma_0.99.safetensors"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gamma_0.99.json",
        "gamma_0.99.safetensors",
    ]
    assert load_policy(tmp_path / "gamma_0.99").name == "gamma_0.99"


def test_resolve_opponents_plays_an_exported_agent_in_the_gym_env() -> None:
    opponents = resolve_opponents(str(PRETRAINED_2P), rules=RULES_2P)
    assert isinstance(opponents, PolicyFactory)
    assert opponents.name == "ppo_official_2p"
    env = UnoGymEnv(rules=RULES_2P, opponents=opponents, learner_seat=1)
    rng = np.random.default_rng(0)
    for episode in range(3):
        env.reset(seed=episode)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    assert resolve_opponents([PRETRAINED_2P, "mixbot"], rules=RULES_2P)[0].name == opponents.name


def test_resolved_agent_plays_like_the_loaded_one(pretrained: TorchPolicy) -> None:
    obs, masks = _batch(RULES_2P, 64, seed=1)
    resolved = resolve_policy(str(PRETRAINED_2P), RULES_2P, seed=np.random.default_rng(0))
    np.testing.assert_array_equal(resolved.act(obs, masks), pretrained.act(obs, masks))


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nobot", "unknown agent 'nobot'"),
        ("no/such/agent.safetensors", "'no/such/agent.safetensors' does not exist"),
        ("agent.json", "'agent.json' does not exist"),
        ("model.zip", "SB3 checkpoint"),
        ("agents", "is a directory"),
    ],
)
def test_resolver_names_what_it_cannot_resolve(spec: str, needle: str) -> None:
    for call in (
        lambda: resolve_policy(spec),
        lambda: resolve_opponents(spec),
        lambda: resolve_opponents([spec]),
    ):
        with pytest.raises(ValueError, match=needle) as info:
            call()
        # A path naming no file is a FileNotFoundError too, as load_policy raises it.
        assert isinstance(info.value, FileNotFoundError) == ("does not exist" in needle)


def test_resolver_refuses_a_non_sequence() -> None:
    with pytest.raises(TypeError, match="42"):
        resolve_opponents(42)  # type: ignore[arg-type]
