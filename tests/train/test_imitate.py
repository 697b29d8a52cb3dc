"""Warm starts by imitation: recording, fitting, the report, export, init_from."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from support import ROOT

from uno_env import cards as C
from uno_env.config_values import ConfigError
from uno_env.core.state import AFTER_DRAW, CHALLENGE_PHASE, CHOOSE_COLOUR, PLAY
from uno_env.envs.vec_env import UnoVecEnv
from uno_env.observation import OBS_DIM
from uno_env.rules import load_rules
from unolab import cli
from unolab.agents import make_agent, resolve_opponents
from unolab.agents.ismcts import IsmctsAgent
from unolab.agents.learned import MLPNet, load_policy
from unolab.agents.pimc import PimcAgent
from unolab.train import algorithms
from unolab.train.checkpoint_state import initialise_from
from unolab.train.config import load_config
from unolab.train.config_sections import PPOParams
from unolab.train.export import snapshot_policy
from unolab.train.imitate import fit
from unolab.train.imitate import run as imitate
from unolab.train.imitate.config import ImitateConfig, load_imitate_config
from unolab.train.imitate.data import (
    DECISION_KINDS,
    decision_kinds,
    generate_demonstrations,
    teacher_factory,
)
from unolab.train.imitate.files import (
    DemonstrationFileError,
    concat_demonstrations,
    load_demonstrations,
    save_demonstrations,
)

TINY = ROOT / "configs" / "imitate" / "tiny.yaml"
PPO_TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
DQN_TINY = ROOT / "configs" / "dqn" / "tiny.yaml"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> imitate.ImitationResult:
    """One tiny imitation run of mixbot, shared by the tests of its outputs."""
    runs = tmp_path_factory.mktemp("runs")
    return imitate.main(["--config", str(TINY), "--no-progress", "--set", f"runs_dir={runs}"])


def test_the_clone_is_written_before_it_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(imitate, "_strength", interrupted)
    config = load_imitate_config(TINY, [f"runs_dir={tmp_path}"])
    with pytest.raises(KeyboardInterrupt):
        imitate.imitate(config, progress=False, log=None)
    policy = load_policy(fit.clone_path(config).with_suffix(".safetensors"))
    assert policy.meta.extra["evaluations"] is None
    assert policy.meta.extra["decisions"] == config.samples


def test_recorded_decisions_are_the_teachers_own() -> None:
    rules = load_rules("official", num_players=3)
    demos = generate_demonstrations(
        rules, {"mixbot": 1.0}, 3000, seed=5, games_per_batch=64, progress=False
    )
    assert len(demos) == 3000
    assert demos.observations.shape == (3000, OBS_DIM)
    assert demos.masks[np.arange(3000), demos.actions].all(), "every action is legal"
    assert (demos.masks.sum(axis=1) > 1).all(), "forced decisions are not recorded"
    assert demos.forced > 0
    # mixbot is deterministic: asked again on what its seat saw, it answers the same.
    again = make_agent("mixbot").act(demos.observations, demos.masks)
    np.testing.assert_array_equal(again, demos.actions)
    same = generate_demonstrations(
        rules, {"mixbot": 1.0}, 3000, seed=5, games_per_batch=64, progress=False
    )
    np.testing.assert_array_equal(same.observations, demos.observations)


def test_a_recording_off_a_terminal_logs_each_batch(capsys: pytest.CaptureFixture[str]) -> None:
    """Under pytest stderr is no terminal and no bar is drawn; an hour-long recording of
    a search teacher still reports after every batch of games."""
    rules = load_rules("official", num_players=2)
    generate_demonstrations(rules, {"mixbot": 1.0}, 2000, seed=5, games_per_batch=32)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and all(line.startswith("recorded ") for line in lines)
    assert lines[-1].startswith("recorded 2,000 of 2,000 decisions in ")
    generate_demonstrations(rules, {"mixbot": 1.0}, 500, seed=5, progress=False)
    assert capsys.readouterr().err == ""


def test_a_mix_of_teachers_against_opponents_records_only_the_teachers() -> None:
    rules = load_rules("official", num_players=4)
    demos = generate_demonstrations(
        rules,
        {"mixbot": 1.0, "card_ranking": 1.0},
        4000,
        opponents={"random_any": 1.0},
        seed=2,
        games_per_batch=128,
        progress=False,
    )
    assert demos.teacher_names == ("mixbot", "card_ranking")
    assert set(np.unique(demos.teachers).tolist()) == {0, 1}
    # One teacher seat per game: a game's decisions all come from one teacher.
    for game in np.unique(demos.games)[:50]:
        assert np.unique(demos.teachers[demos.games == game]).size == 1
    # random_any draws voluntarily; the heuristic teachers never do with a card to play.
    mixbot = demos.teachers == 0
    again = make_agent("mixbot").act(demos.observations[mixbot], demos.masks[mixbot])
    np.testing.assert_array_equal(again, demos.actions[mixbot])


def test_decision_kinds() -> None:
    phases = np.array([PLAY, PLAY, PLAY, AFTER_DRAW, CHALLENGE_PHASE, CHOOSE_COLOUR, PLAY, 5])
    actions = np.array(
        [3, C.PLAY_WILD + 2, C.DRAW, C.KEEP, C.CHALLENGE, C.NAME_COLOUR, C.UNO, C.DRAW]
    )
    kinds = [DECISION_KINDS[k] for k in decision_kinds(phases, actions)]
    assert kinds == [
        "play",
        "play",
        "draw",
        "after_draw",
        "challenge",
        "wild_colour",
        "uno",
        "other",
    ]


def test_every_imitation_config_loads() -> None:
    paths = sorted((ROOT / "configs" / "imitate").glob("*.yaml"))
    assert len(paths) >= 8
    for path in paths:
        config = load_imitate_config(path)
        assert config.name, path


def test_config_round_trip_and_defaults() -> None:
    config = load_imitate_config(TINY)
    again = load_imitate_config(None, base=config.to_dict())
    assert again == config
    assert ImitateConfig(name="x").net_arch == PPOParams().net_arch  # the shipped PPO shape
    assert load_imitate_config(ROOT / "configs" / "imitate" / "mixbot_2p.yaml").teachers == {
        "mixbot": 1.0
    }


def test_the_run_writes_a_clone_and_a_report(tiny_run: imitate.ImitationResult) -> None:
    run_dir = tiny_run.run_dir
    assert tiny_run.policy == run_dir / "imitate_tiny.safetensors"
    meta = json.loads((run_dir / "imitate_tiny.json").read_text())
    assert meta["algorithm"] == "imitation"
    assert meta["hidden"] == [32, 32] and meta["activation"] == "tanh"
    assert meta["extra"]["teachers"] == {"mixbot": 1.0}
    assert 0.0 <= meta["extra"]["accuracy"] <= 1.0
    report = json.loads((run_dir / fit.REPORT_NAME).read_text())
    assert report["accuracy"]["overall"] == meta["extra"]["accuracy"]
    assert set(report["accuracy"]["kinds"]) == set(DECISION_KINDS)
    assert report["accuracy"]["kinds"]["play"]["decisions"] > 0
    assert set(report["strength"]) == {"clone", "mixbot"}
    clone, teacher = report["strength"]["clone"]["random"], report["strength"]["mixbot"]["random"]
    assert clone["games"] == teacher["games"] == 40
    assert clone["ci_low"] <= clone["win_rate"] <= clone["ci_high"]
    assert len(report["fit"]["history"]) == 2
    assert (run_dir / "config.yaml").is_file()
    table = fit.format_report(report)
    assert "clone" in table and "mixbot (teacher)" in table and "vs random" in table


def test_a_clone_learns_its_teacher(tmp_path: Path) -> None:
    """A few thousand decisions and a few epochs already agree with mixbot most of the time."""
    result = imitate.main(
        [
            "--config",
            str(TINY),
            "--no-progress",
            "--set",
            f"runs_dir={tmp_path}",
            "--set",
            "samples=30000",
            "--set",
            "epochs=8",
            "--set",
            "batch_size=128",
            "--set",
            "net_arch=[64, 64]",
        ]
    )
    assert result.report["accuracy"]["overall"] > 0.8, result.report["accuracy"]


def test_a_second_run_needs_overwrite(
    tiny_run: imitate.ImitationResult, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tiny_run.run_dir.parent}"]
    before = tiny_run.policy.read_bytes()
    with pytest.raises(SystemExit) as stop:
        imitate.main(argv)
    assert stop.value.code == 2
    assert "--overwrite" in capsys.readouterr().err
    assert tiny_run.policy.read_bytes() == before


def test_ppo_starts_from_the_clone(tiny_run: imitate.ImitationResult, tmp_path: Path) -> None:
    """PPO's policy branch and action head receive the clone; its greedy actions agree."""
    rules = load_rules("official", num_players=2)
    config = load_config(
        PPO_TINY, [f"runs_dir={tmp_path}", f"init_from={tiny_run.policy}", "total_steps=64"]
    )
    env = UnoVecEnv(config.num_envs, rules, opponents=resolve_opponents(["random"]), seed=0)
    try:
        model = algorithms.make_model(config, env)
        value_before = [
            p.detach().clone() for p in model.policy.mlp_extractor.value_net.parameters()
        ]
        initialise_from(model, tiny_run.policy, rules)
        value_after = list(model.policy.mlp_extractor.value_net.parameters())
    finally:
        env.close()
    for before, after in zip(value_before, value_after, strict=True):
        assert (before == after).all(), "the value head starts fresh"
    started = snapshot_policy(model, "ppo@0", "ppo", rules)
    clone = load_policy(tiny_run.policy, rules=rules)
    demos = generate_demonstrations(rules, {"card_ranking": 1.0}, 2000, seed=9, progress=False)
    np.testing.assert_array_equal(
        started.act(demos.observations, demos.masks), clone.act(demos.observations, demos.masks)
    )


def test_a_ppo_run_trains_from_the_clone(tiny_run: imitate.ImitationResult, tmp_path: Path) -> None:
    from unolab.train import run_cli

    result = run_cli.main(
        "ppo",
        [
            "--config",
            str(PPO_TINY),
            "--no-progress",
            "--set",
            f"runs_dir={tmp_path}",
            "--set",
            f"init_from={tiny_run.policy}",
            "--set",
            "total_steps=1024",
        ],
    )
    assert result.steps >= 1024
    assert (tmp_path / "ppo_tiny" / "config.yaml").read_text().count(str(tiny_run.policy)) == 1


def test_uno_lab_train_imitate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["train", "imitate", "--help"])
    assert stop.value.code == 0
    assert "--config" in capsys.readouterr().out
    code = cli.main(
        [
            "train",
            "imitate",
            "--config",
            str(TINY),
            "--no-progress",
            "--set",
            f"runs_dir={tmp_path}",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "agreement with the teacher" in out and "init_from" in out
    assert (tmp_path / "imitate_tiny" / "imitate_tiny.safetensors").is_file()


@pytest.mark.parametrize("dueling", [False, True])
def test_dqn_starts_from_a_relu_clone(tmp_path: Path, dueling: bool) -> None:
    """A clone made with ``activation: relu`` and the DQN's net_arch fits its Q-network."""
    rules = load_rules("official", num_players=2)
    clone_run = imitate.main(
        [
            "--config",
            str(TINY),
            "--no-progress",
            "--set",
            f"runs_dir={tmp_path}",
            "--set",
            "activation=relu",
            "--set",
            "eval_games=2",
        ]
    )
    overrides = [f"runs_dir={tmp_path}", f"init_from={clone_run.policy}", "total_steps=64"]
    if dueling:
        overrides.append("dqn.dueling=true")
    config = load_config(DQN_TINY, overrides)
    env = UnoVecEnv(config.num_envs, rules, opponents=resolve_opponents(["random"]), seed=0)
    try:
        model = algorithms.make_model(config, env)
        initialise_from(model, clone_run.policy, rules)
    finally:
        env.close()
    started = snapshot_policy(model, "dqn@0", "dqn", rules)
    clone = load_policy(clone_run.policy, rules=rules)
    demos = generate_demonstrations(rules, {"card_ranking": 1.0}, 2000, seed=9, progress=False)
    np.testing.assert_array_equal(
        started.act(demos.observations, demos.masks), clone.act(demos.observations, demos.masks)
    )


def test_a_tanh_clone_is_refused_by_a_relu_dqn(
    tiny_run: imitate.ImitationResult, tmp_path: Path
) -> None:
    """The activations must match too, not only the shapes: the error names both and the file."""
    rules = load_rules("official", num_players=2)
    config = load_config(DQN_TINY, [f"runs_dir={tmp_path}", "total_steps=64"])
    env = UnoVecEnv(config.num_envs, rules, opponents=resolve_opponents(["random"]), seed=0)
    try:
        model = algorithms.make_model(config, env)
        with pytest.raises(ValueError, match=r"tanh activations.*relu") as info:
            initialise_from(model, tiny_run.policy, rules)
    finally:
        env.close()
    assert str(tiny_run.policy) in str(info.value)


def test_expert_iteration_clones_the_search_agent(tmp_path: Path) -> None:
    """pimc is a teacher (played with the state through choose_actions),
    its budget set by teacher_budget; a tiny run records, fits, measures and exports."""
    rules = load_rules("official", num_players=2)
    assert teacher_factory("pimc", rules)(0).rollouts == PimcAgent().rollouts  # its default
    assert teacher_factory("pimc", rules, 4)(0).rollouts == 4
    guided = teacher_factory("pimc_guided", rules, 8)(0)  # the budget keeps the agent's prior
    assert isinstance(guided, PimcAgent) and guided.rollouts == 8
    assert guided.name == "pimc_guided:8" and guided._prior_for(rules) is not None
    tree = teacher_factory("ismcts", rules, 16)(0)  # the tree search: iterations per decision
    assert isinstance(tree, IsmctsAgent) and tree.iterations == 16
    with pytest.raises(ValueError, match=r"iterations must be in 1\.\.32768, got 40000"):
        teacher_factory("ismcts", rules, 40_000)
    demos = generate_demonstrations(
        rules, {"pimc": 1.0}, 1000, seed=3, games_per_batch=32, progress=False, teacher_budget=4
    )
    assert demos.teacher_names == ("pimc",)
    assert demos.masks[np.arange(len(demos)), demos.actions].all(), "every action is legal"
    again = generate_demonstrations(
        rules, {"pimc": 1.0}, 1000, seed=3, games_per_batch=32, progress=False, teacher_budget=4
    )
    np.testing.assert_array_equal(again.actions, demos.actions)  # deterministic for a seed
    result = imitate.main(
        [
            "--config",
            str(TINY),
            "--no-progress",
            "--set",
            f"runs_dir={tmp_path}",
            "--set",
            "teachers={pimc: 1.0}",
            "--set",
            "teacher_budget=4",
            "--set",
            "samples=1000",
            "--set",
            "eval_games=10",
        ]
    )
    assert set(result.report["strength"]) == {"clone", "pimc"}
    assert result.report["strength"]["pimc"]["random"]["games"] == 10
    meta = json.loads(result.policy.with_suffix(".json").read_text())
    assert meta["extra"]["teachers"] == {"pimc": 1.0}
    config = load_imitate_config(ROOT / "configs" / "experiments" / "pimc_2p.yaml")
    assert config.teachers == {"pimc": 1.0} and config.teacher_budget == 64
    assert load_config(
        ROOT / "configs" / "experiments" / "official_2p_from_pimc.yaml"
    ).init_from == ("runs/imitate_pimc_2p/imitate_pimc_2p.safetensors")


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("teacher_budget=0", "teacher_budget"),
        ("teacher_budget=1.5", "teacher_budget"),
        ("teachers={pimcc: 1.0}", "pimcc"),
    ],
)
def test_a_bad_search_teacher_is_named(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load_imitate_config(TINY, [override])


def _search_run(runs: Path, *overrides: str) -> imitate.ImitationResult:
    """A tiny imitation of pimc at 4 rollouts (seconds), with ``overrides``."""
    settings = [
        f"runs_dir={runs}",
        "teachers={pimc: 1.0}",
        "teacher_budget=4",
        "samples=1000",
        "eval_games=4",
        *overrides,
    ]
    args = ["--config", str(TINY), "--no-progress"]
    for setting in settings:
        args += ["--set", setting]
    return imitate.main(args)


def test_a_search_teacher_records_its_estimates() -> None:
    rules = load_rules("official", num_players=2)
    demos = generate_demonstrations(
        rules, {"pimc": 1.0}, 600, seed=5, games_per_batch=16, progress=False, teacher_budget=8
    )
    assert demos.values is not None and demos.values.shape == (600, C.NUM_ACTIONS)
    known = ~np.isnan(demos.values)
    assert not (known & ~demos.masks).any()  # estimates of legal actions only
    searched = np.flatnonzero(known.sum(axis=1) > 1)
    assert searched.size > 300
    rows = np.arange(len(demos))[searched]
    best = np.nanmax(demos.values[searched].astype(np.float32), axis=1)
    # The chosen action is the best estimated one (float16 rounding aside).
    chosen = demos.values[rows, demos.actions[rows]].astype(np.float32)
    np.testing.assert_allclose(chosen, best, atol=2e-3)
    bots = generate_demonstrations(rules, {"mixbot": 1.0}, 200, seed=5, progress=False)
    assert bots.values is None  # a bot teacher estimates nothing


def test_the_tree_search_teacher_records_its_estimates() -> None:
    rules = load_rules("official", num_players=2)
    demos = generate_demonstrations(
        rules, {"ismcts": 1.0}, 300, seed=5, games_per_batch=8, progress=False, teacher_budget=32
    )
    assert demos.values is not None and demos.values.shape == (300, C.NUM_ACTIONS)
    known = ~np.isnan(demos.values)
    assert not (known & ~demos.masks).any()  # estimates of legal actions only
    searched = np.flatnonzero(known.sum(axis=1) > 1)
    assert searched.size > 100
    # The chosen action (the most visited) was tried, and every estimate is a reward.
    assert known[searched, demos.actions[searched]].all()
    assert np.nanmin(demos.values) >= -1.0 and np.nanmax(demos.values) <= 1.0


def test_soft_targets_follow_the_estimates() -> None:
    nan = float("nan")
    values = torch.full((3, C.NUM_ACTIONS), nan)
    values[0, [2, 5]] = torch.tensor([0.5, -0.5])  # two estimates: a softmax over them
    values[1, 7] = 0.3  # one estimate (one candidate): the chosen action
    actions = torch.tensor([5, 7, 9])  # row 2: no estimate at all, the chosen action
    target = fit.soft_targets(values, actions, temperature=0.5)
    expected = torch.softmax(torch.tensor([1.0, -1.0]), dim=0)
    torch.testing.assert_close(target[0, [2, 5]], expected)
    assert target[0].sum() == pytest.approx(1.0) and target[0, 5] < target[0, 2]
    assert target[1, 7] == 1.0 and target[2, 9] == 1.0
    assert target[1].sum() == 1.0 and target[2].sum() == 1.0
    cold = fit.soft_targets(values, actions, temperature=1e-3)
    assert cold[0, 2] == pytest.approx(1.0)  # a low temperature: the best estimate alone


def test_the_validation_loss_uses_the_training_targets() -> None:
    """Under value_targets the held-out loss is against the softmax of the estimates (what
    the clone is fit to), so it can steer early stopping; without, the chosen actions."""
    rules = load_rules("official", num_players=2)
    demos = generate_demonstrations(
        rules, {"pimc": 1.0}, 400, seed=7, games_per_batch=16, progress=False, teacher_budget=8
    )
    assert demos.values is not None
    torch.manual_seed(0)
    net = MLPNet(OBS_DIM, [32], C.NUM_ACTIONS, "tanh").eval()
    rows = np.arange(len(demos))
    masks = torch.from_numpy(demos.masks)
    actions = torch.from_numpy(demos.actions)
    with torch.no_grad():
        log_probs = fit._masked_log_probs(net, torch.from_numpy(demos.observations), masks)
        targets = fit.soft_targets(torch.from_numpy(demos.values), actions, 0.1)
        soft = float(fit._loss(log_probs, masks, actions, 0.02, targets))
        hard = float(fit._loss(log_probs, masks, actions, 0.02))
    assert fit._validation_loss(net, demos, rows, 0.02, 0.1) == pytest.approx(soft, rel=1e-5)
    assert fit._validation_loss(net, demos, rows, 0.02) == pytest.approx(hard, rel=1e-5)
    assert soft != pytest.approx(hard, rel=1e-3)


def test_a_kept_recording_is_included_by_a_later_run(tmp_path: Path) -> None:
    """keep_demonstrations writes the recording; include trains on it with samples=0."""
    first = _search_run(tmp_path, "name=first", "keep_demonstrations=true")
    kept = first.run_dir / "demonstrations.npz"
    rules = load_rules("official", num_players=2)
    demos = load_demonstrations(kept, rules)
    assert len(demos) == 1000 and demos.values is not None
    assert demos.teacher_names == ("pimc",)
    assert first.report["data"]["with_estimates"] > 500
    both = _search_run(tmp_path, "name=both", f"include=[{kept}]", "value_targets=0.1")
    assert both.report["data"]["decisions"] == 2000
    assert both.report["data"]["games"] == 2 * first.report["data"]["games"]
    assert both.report["fit"]["value_targets"] == 0.1
    alone = _search_run(
        tmp_path, "name=alone", f"include=[{kept}, {kept}]", "samples=0", "eval_teachers=false"
    )
    assert alone.report["data"]["decisions"] == 2000
    assert set(alone.report["strength"]) == {"clone"}  # the teacher is not measured again
    assert set(both.report["strength"]) == {"clone", "pimc"}
    assert not (alone.run_dir / "demonstrations.npz").exists()
    merged = concat_demonstrations([demos, demos])
    assert np.intersect1d(merged.games[:1000], merged.games[1000:]).size == 0  # games apart


def test_a_recording_of_other_rules_is_refused(tmp_path: Path) -> None:
    rules = load_rules("official", num_players=2)
    demos = generate_demonstrations(rules, {"mixbot": 1.0}, 100, seed=1, progress=False)
    path = save_demonstrations(tmp_path / "demos.npz", demos, rules)
    assert load_demonstrations(path, rules).actions.tolist() == demos.actions.tolist()
    with pytest.raises(DemonstrationFileError, match=r"num_players: 2.*plays 4"):
        load_demonstrations(path, load_rules("official", num_players=4))
    (tmp_path / "junk.npz").write_bytes(b"not an archive")
    with pytest.raises(DemonstrationFileError, match=r"junk\.npz: not a demonstrations file"):
        load_demonstrations(tmp_path / "junk.npz", rules)


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("include=[runs/x/config.yaml]", r"include\[0\]: 'runs/x/config.yaml'"),
        ("samples=0", "samples=0: 0 is out of range.*0 only with demonstrations to include"),
        ("value_targets=0", "value_targets=0: 0"),
        ("keep_demonstrations=maybe", "keep_demonstrations"),
    ],
)
def test_bad_recording_keys_are_named(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load_imitate_config(TINY, [override])


def test_dagger_records_the_teacher_where_the_behaviour_plays() -> None:
    """behaviour: another player acts at a share of the teacher's decisions; the recorded
    action is still the teacher's, and the games then differ from the teacher's own."""
    rules = load_rules("official", num_players=2)
    plain = generate_demonstrations(
        rules, {"mixbot": 1.0}, 3000, seed=4, games_per_batch=64, progress=False
    )
    mixed = generate_demonstrations(
        rules,
        {"mixbot": 1.0},
        3000,
        seed=4,
        games_per_batch=64,
        progress=False,
        behaviour="random",
        behaviour_share=0.5,
    )
    mixbot = make_agent("mixbot", 0)
    for demos in (plain, mixed):  # every recorded action is mixbot's (deterministic)
        np.testing.assert_array_equal(mixbot.act(demos.observations, demos.masks), demos.actions)
    # The random player took half the decisions: later positions differ.
    assert not np.array_equal(plain.observations, mixed.observations)
    assert np.array_equal(plain.observations[:64], mixed.observations[:64])  # same deals
    with pytest.raises(ConfigError, match="--set behaviour=nobody: 'nobody'"):
        load_imitate_config(TINY, ["behaviour=nobody"])
    with pytest.raises(ConfigError, match="--set behaviour_share=0: 0"):
        load_imitate_config(TINY, ["behaviour=random", "behaviour_share=0"])
