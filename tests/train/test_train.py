"""The training pipeline end to end: configs, PPO train/checkpoint/resume/export, learning."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import torch
from support import ROOT

from uno_env import ConfigError, core, load_rules
from uno_env.configuration import apply_overrides
from uno_env.folders import RunExistsError
from uno_env.observation import encode
from unolab.agents.learned import load_policy
from unolab.agents.policy_metadata import CheckpointMismatchError
from unolab.train import algorithms, run_cli
from unolab.train.algorithms import policy_layers
from unolab.train.checkpoint_state import initialise_from
from unolab.train.config import TrainConfig, load_config
from unolab.train.export import export_checkpoint, export_policy
from unolab.train.export import main as export_main
from unolab.train.run import train
from unolab.train.run_callback import LabCallback, League, evaluate_model

TINY = ROOT / "configs" / "ppo" / "tiny.yaml"


def test_every_shipped_config_is_valid() -> None:
    for path in sorted((ROOT / "configs").glob("*/*.yaml")):
        if path.parent.name in ("ppo", "dqn"):
            config = load_config(path)
            assert config.algorithm == path.parent.name, path


def test_set_overrides_nested_fields_and_parse_values() -> None:
    config = load_config(TINY, ["ppo.learning_rate=1e-4", "eval.bots=[random, mixbot]"])
    assert config.ppo.learning_rate == pytest.approx(1e-4)
    assert config.eval.bots == ("random", "mixbot")
    assert apply_overrides({"a": {"b": 1}}, ["a.c=true"]) == {"a": {"b": 1, "c": True}}


def test_set_changes_one_switch_of_a_named_preset() -> None:
    """``rules: street`` with ``--set rules.jump_in=false``: street, without jump-in."""
    data = apply_overrides({"rules": "street"}, ["rules.jump_in=false"])
    assert data == {"rules": {"preset": "street", "jump_in": False}}
    street = load_rules("street")
    changed = load_rules(data["rules"])
    assert changed.jump_in is False and street.jump_in is True
    assert dataclasses.replace(changed, jump_in=True) == street
    with pytest.raises(ConfigError, match="seed is 3, not a section"):
        apply_overrides({"seed": 3}, ["seed.x=1"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.learnig_rate=1", "unknown key(s) ['learnig_rate']"),
        ("algorithm=a2c", "choose one of ['ppo', 'dqn']"),
        ("eval.bots=[nobody]", "unknown bot(s) ['nobody']"),
        ("opponents.bots={random: 0}", "at least one bot needs a positive weight"),
        ("rules=street2", "unknown rules preset 'street2'"),
        ("num_players=11", "num_players must be 2..10"),
        ("total_steps", "--set expects key=value"),
        ("init_from=runs/x/best_policy.json", "init_from must be an SB3 checkpoint (.zip"),
    ],
)
def test_bad_configs_name_the_problem(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(TINY, [override])
    assert message in str(err.value)


def test_league_slots_play_as_a_bot_until_filled() -> None:
    config = load_config(TINY)
    rules = config.build_rules()
    league = League(config.opponents, rules, seed=0)
    assert len(league.slots) == 2 and league.slots[0].snapshot is None
    state = core.init(rules, 8, seed=0)
    masks = core.legal_action_mask(rules, state)
    actions = league.slots[0].act(encode(rules, state), masks)
    assert masks[np.arange(8), actions].all()


def test_ppo_trains_checkpoints_resumes_and_exports(tmp_path: Path) -> None:
    result = run_cli.main(
        "ppo", ["--config", str(TINY), "--set", f"runs_dir={tmp_path}", "--no-progress"]
    )
    run_dir = tmp_path / "ppo_tiny"
    assert result.steps >= 2048 and result.run_dir == run_dir
    for name in ("config.yaml", "latest.zip", "best.zip", "best_policy.safetensors", "tb"):
        assert (run_dir / name).exists(), name
    # The agent is named after its run (file and metadata); best_policy.* is the same export.
    assert result.policy == run_dir / "ppo_tiny.safetensors"
    assert load_policy(result.policy).name == "ppo_tiny"
    assert result.policy.read_bytes() == (run_dir / "best_policy.safetensors").read_bytes()
    meta = json.loads((run_dir / "latest.json").read_text())
    assert meta["algorithm"] == "ppo" and meta["obs_version"] >= 1 and meta["steps"] == result.steps
    assert meta["rules"]["num_players"] == 2 and "random" in meta["evaluations"]
    assert {"seed", "git_commit"} <= set(meta)

    resumed = run_cli.main(
        "ppo", ["--resume", str(run_dir), "--set", "total_steps=3072", "--no-progress"]
    )
    assert resumed.steps >= 3072 > result.steps
    # The learning curve: one line per evaluation, the resumed run's appended.
    curve = [json.loads(line) for line in (run_dir / "evaluations.jsonl").read_text().splitlines()]
    assert len(curve) >= 2 and curve[-1]["steps"] == resumed.steps
    assert [point["steps"] for point in curve] == sorted(point["steps"] for point in curve)
    assert curve[0]["results"]["random"]["games"] > 0

    rules = load_rules("official", num_players=2)
    policy = load_policy(run_dir / "best_policy.safetensors", rules=rules)
    state = core.init(rules, 32, seed=3)
    masks = core.legal_action_mask(rules, state)
    actions = policy.act(encode(rules, state), masks)
    assert masks[np.arange(32), actions].all()
    with pytest.raises(CheckpointMismatchError, match="num_players"):
        load_policy(
            run_dir / "best_policy.safetensors", rules=load_rules("official", num_players=4)
        )

    # Any checkpoint of the run exports without pickle, rules and algorithm from its config.
    weights = export_main([str(run_dir / "latest.zip"), str(tmp_path / "exported" / "tiny")])
    exported = load_policy(weights, rules=rules)
    assert exported.meta.extra["steps"] == resumed.steps and exported.meta.algorithm == "ppo"
    assert masks[np.arange(32), exported.act(encode(rules, state), masks)].all()
    with pytest.raises(SystemExit):
        export_main([str(tmp_path / "nowhere.zip"), str(tmp_path / "x")])


def test_resume_without_a_run_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ghost").mkdir()
    (tmp_path / "ghost" / "config.yaml").write_text(TINY.read_text())
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", ["--resume", str(tmp_path / "ghost"), "--no-progress"])
    assert exit_info.value.code == 2
    assert "error: cannot resume" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="cannot resume"):
        train(
            load_config(tmp_path / "ghost" / "config.yaml", [f"runs_dir={tmp_path}", "name=ghost"]),
            resume=True,
        )


def test_a_second_run_is_refused_unless_it_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    args += ["--set", "total_steps=256"]
    first = run_cli.main("ppo", args)
    run_dir = first.run_dir
    assert (run_dir / "league_slot1.safetensors").is_file()
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "already holds a run" in err and "--overwrite" in err and "--resume" in err
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    with pytest.raises(RunExistsError):
        train(load_config(TINY, [f"runs_dir={tmp_path}"]))

    # --overwrite starts over: the old files go first (no tb/ppo_2, no stale league slot).
    run_cli.main("ppo", [*args, "--overwrite", "--set", "opponents.pool_size=1"])
    assert [p.name for p in (run_dir / "tb").iterdir()] == ["ppo_1"]
    assert not (run_dir / "league_slot1.safetensors").exists()
    assert (run_dir / "ppo_tiny.safetensors").is_file()


def test_ctrl_c_saves_a_checkpoint_to_resume_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def interrupted(self: LabCallback) -> bool:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return True

    monkeypatch.setattr(LabCallback, "_on_step", interrupted)
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    with pytest.raises(SystemExit) as exit_info:
        run_cli.main("ppo", args)
    assert exit_info.value.code == 130
    out, err = capsys.readouterr()
    run_dir = tmp_path / "ppo_tiny"
    assert "Traceback" not in out + err
    assert f"saved {run_dir / 'latest.zip'}" in err and f"--resume {run_dir}" in err
    meta = json.loads((run_dir / "latest.json").read_text())
    assert 0 < meta["steps"] < 1024  # before the first evaluation
    assert not list(run_dir.glob("*.partial"))

    monkeypatch.undo()
    resumed = run_cli.main("ppo", ["--resume", str(run_dir), "--no-progress"])
    assert resumed.steps >= 2048
    assert [p.name for p in (run_dir / "tb").iterdir()] == ["ppo_1"]
    assert "evaluating vs random (40 hands)" in capsys.readouterr().err


def test_sigterm_saves_a_checkpoint_like_ctrl_c(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kill PID`` of a background run (which ignores SIGINT) saves latest.zip and stops."""
    calls = []

    def terminated(self: LabCallback) -> bool:
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return True

    monkeypatch.setattr(LabCallback, "_on_step", terminated)
    previous = signal.getsignal(signal.SIGTERM)
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    try:
        with pytest.raises(SystemExit) as exit_info:
            run_cli.main("ppo", args)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert exit_info.value.code == 130
    err = capsys.readouterr().err
    run_dir = tmp_path / "ppo_tiny"
    assert f"saved {run_dir / 'latest.zip'}" in err
    assert 0 < json.loads((run_dir / "latest.json").read_text())["steps"] < 1024


def _same_layers(a: object, b: object) -> bool:
    return all(
        torch.equal(wa, wb) and torch.equal(ba, bb)
        for (wa, ba), (wb, bb) in zip(policy_layers(a)[0], policy_layers(b)[0], strict=True)
    )


def test_init_from_a_checkpoint_or_an_export_copies_the_weights(tmp_path: Path) -> None:
    config = load_config(TINY, [f"runs_dir={tmp_path}"])
    rules = config.build_rules()
    trained = algorithms.make_model(config, _env(config))
    trained.save(tmp_path / "trained.zip")
    export_policy(trained, tmp_path / "trained", "trained", "ppo", rules, {})
    other = load_config(TINY, [f"runs_dir={tmp_path}", "seed=2"])

    from_zip = algorithms.make_model(other, _env(other))
    assert not _same_layers(from_zip, trained)
    initialise_from(from_zip, tmp_path / "trained.zip", rules)
    assert _same_layers(from_zip, trained)
    value_net = [p for n, p in from_zip.policy.named_parameters() if "value" in n]
    trained_value = [p for n, p in trained.policy.named_parameters() if "value" in n]
    assert all(torch.equal(a, b) for a, b in zip(value_net, trained_value, strict=True))

    from_export = algorithms.make_model(other, _env(other))
    initialise_from(from_export, tmp_path / "trained.safetensors", rules)
    assert _same_layers(from_export, trained)

    wide = load_config(TINY, [f"runs_dir={tmp_path}", "ppo.net_arch=[48, 48]"])
    with pytest.raises(ValueError, match="do not fit"):
        initialise_from(
            algorithms.make_model(wide, _env(wide)), tmp_path / "trained.safetensors", rules
        )
    with pytest.raises(ValueError, match="does not fit"):
        initialise_from(algorithms.make_model(wide, _env(wide)), tmp_path / "trained.zip", rules)
    with pytest.raises(FileNotFoundError, match="init_from"):
        initialise_from(from_zip, tmp_path / "missing.zip", rules)


def test_a_run_with_init_from_trains_and_records_it(tmp_path: Path) -> None:
    config = load_config(TINY, [f"runs_dir={tmp_path}"])
    algorithms.make_model(config, _env(config)).save(tmp_path / "start.zip")
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    args += ["--set", "total_steps=1024", "--set", f"init_from={tmp_path / 'start.zip'}"]
    result = run_cli.main("ppo", args)
    assert result.steps == 1024
    saved = load_config(result.run_dir / "config.yaml")
    assert saved.init_from == str(tmp_path / "start.zip")


def test_value_warmup_trains_the_value_network_with_the_policy_frozen(tmp_path: Path) -> None:
    config = load_config(TINY, [f"runs_dir={tmp_path}"])
    start = algorithms.make_model(config, _env(config))
    start.save(tmp_path / "start.zip")
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    args += ["--set", f"init_from={tmp_path / 'start.zip'}", "--set", "eval.every=100000"]

    def trained(name: str, steps: int, warmup: int) -> object:
        overrides = [f"name={name}", f"total_steps={steps}", f"ppo.value_warmup_steps={warmup}"]
        result = run_cli.main("ppo", args + [arg for o in overrides for arg in ("--set", o)])
        return algorithms.load_checkpoint(result.run_dir / "latest.zip", "ppo")

    def value_net(model: object) -> list[torch.Tensor]:
        named = model.policy.named_parameters()  # type: ignore[attr-defined]
        return [p.detach().clone() for n, p in named if "value" in n]

    warm = trained("warm", 1024, warmup=1024)
    assert _same_layers(warm, start)  # the policy did not move
    assert not all(map(torch.equal, value_net(warm), value_net(start)))  # the value did
    after = trained("after", 2048, warmup=1024)
    assert not _same_layers(after, start)  # trained as usual once warm
    with pytest.raises(ConfigError, match="value_warmup_steps"):
        load_config(TINY, ["ppo.value_warmup_steps=-1"])


@pytest.mark.parametrize("algorithm", ["ppo", "dqn"])
def test_the_registry_round_trips_a_checkpoint(tmp_path: Path, algorithm: str) -> None:
    """Build through the registry, save, load through it, export, load the export."""
    config = load_config(
        ROOT / "configs" / algorithm / "tiny.yaml",
        [f"runs_dir={tmp_path}", f"{algorithm}.net_arch=[16]"],
    )
    rules = config.build_rules()
    model = algorithms.make_model(config, _env(config))
    assert type(model) is algorithms.ALGORITHMS[algorithm].model_class
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(config.to_yaml())
    model.save(run_dir / "latest.zip")

    loaded = algorithms.load_checkpoint(run_dir / "latest.zip", algorithm)
    assert type(loaded) is type(model) and _same_layers(loaded, model)
    assert algorithms.algorithm_for_model(loaded).name == algorithm

    weights = export_checkpoint(run_dir / "latest.zip", tmp_path / "exported")
    policy = load_policy(weights, rules=rules)
    assert policy.meta.algorithm == algorithm and policy.meta.hidden == (16,)
    state = core.init(rules, 32, seed=5)
    masks = core.legal_action_mask(rules, state)
    obs = encode(rules, state)
    actions = policy.act(obs, masks)
    expected, _ = loaded.predict(obs, deterministic=True, action_masks=masks.copy())
    assert masks[np.arange(32), actions].all()
    assert np.array_equal(actions, expected)  # the export plays as the checkpoint does

    with pytest.raises(ValueError, match="unknown algorithm 'a2c'"):
        algorithms.load_checkpoint(run_dir / "latest.zip", "a2c")


@pytest.mark.slow
def test_ppo_improves_against_random(tmp_path: Path) -> None:
    """A learning test with a small budget: the win rate against `random` must rise."""
    overrides = [
        f"runs_dir={tmp_path}",
        "name=learning",
        "total_steps=120000",
        "num_envs=64",
        "opponents.self_play=0",
        "eval.every=1000000",
        "eval.games=600",
        "ppo.n_steps=128",
        "ppo.batch_size=2048",
        "ppo.n_epochs=4",
        "ppo.net_arch=[64, 64]",
    ]
    config: TrainConfig = load_config(TINY, overrides)
    rules = config.build_rules()
    before_model = algorithms.make_model(config, _env(config))
    before = evaluate_model(before_model, config, rules, 0)["random"]
    args = ["--config", str(TINY), "--no-progress"]
    for item in overrides:
        args += ["--set", item]
    result = run_cli.main("ppo", args)
    after = result.evaluations["random"]
    assert after["ci_low"] > before.ci_high, (before.win_rate, after["win_rate"])
    assert after["win_rate"] > 0.45, after


def _env(config: TrainConfig):  # type: ignore[no-untyped-def]
    from uno_env.envs.vec_env import UnoVecEnv

    return UnoVecEnv(4, config.build_rules(), seed=0)
