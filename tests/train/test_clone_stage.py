"""A training config's ``imitate`` stage: clone teachers, then PPO from the clone, one command."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from support import ROOT

from uno_env import ConfigError
from uno_env.folders import RunExistsError
from unolab.agents.learned import load_policy
from unolab.train import algorithms, run, run_cli
from unolab.train.algorithms import policy_layers
from unolab.train.config import load_config
from unolab.train.imitate.config import ImitateConfig
from unolab.train.run import train

TINY = ROOT / "configs" / "ppo" / "tiny.yaml"
STAGE = "imitate={samples: 1000, epochs: 1, games_per_batch: 64, eval_games: 10}"


def _args(tmp_path: Path, *overrides: str) -> list[str]:
    args = ["--config", str(TINY), "--no-progress", "--set", f"runs_dir={tmp_path}"]
    for override in (STAGE, "total_steps=1024", "ppo.value_warmup_steps=1024", *overrides):
        args += ["--set", override]
    return args


def test_the_run_starts_from_the_clone_it_made(tmp_path: Path) -> None:
    result = run_cli.main("ppo", _args(tmp_path))
    clone = result.run_dir / "clone" / "clone.safetensors"
    assert clone.is_file() and (result.run_dir / "clone" / "imitation_report.json").is_file()
    # The policy was frozen for the whole (warm-up) run: it is still the clone, layer by layer.
    model = algorithms.load_checkpoint(result.run_dir / "latest.zip", "ppo")
    cloned = [m for m in load_policy(clone).net.layers if isinstance(m, torch.nn.Linear)]
    layers = policy_layers(model)[0]
    assert len(layers) == len(cloned)
    for (weight, bias), linear in zip(layers, cloned, strict=True):
        assert torch.equal(weight, linear.weight) and torch.equal(bias, linear.bias)
    saved = load_config(result.run_dir / "config.yaml")
    assert saved.imitate is not None and saved.imitate.samples == 1000


def test_the_clone_belongs_to_the_run(tmp_path: Path) -> None:
    """A new run does not train over it; --overwrite makes it again; --resume keeps it."""
    first = run_cli.main("ppo", _args(tmp_path))
    clone = first.run_dir / "clone" / "clone.safetensors"
    made = clone.stat().st_mtime_ns
    with pytest.raises(SystemExit):
        run_cli.main("ppo", _args(tmp_path))
    resumed = run_cli.main(
        "ppo", ["--resume", str(first.run_dir), "--set", "total_steps=2048", "--no-progress"]
    )
    assert resumed.steps >= 2048 and clone.stat().st_mtime_ns == made
    run_cli.main("ppo", [*_args(tmp_path), "--overwrite"])
    assert clone.stat().st_mtime_ns != made


def test_run_files_name_the_clone_folder(tmp_path: Path) -> None:
    config = load_config(TINY, [f"runs_dir={tmp_path}", STAGE])
    (config.run_dir / "clone").mkdir(parents=True)
    with pytest.raises(RunExistsError, match="clone"):
        train(config, progress_bar=False, log=None)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["imitate={samples: 5}"], "--set imitate={samples: 5}: samples: 5 is out of range"),
        (
            ["imitate={teachers: {nobody: 1}}"],
            "--set imitate={teachers: {nobody: 1}}: teachers: unknown bot 'nobody'",
        ),
        (["imitate={sample: 1000}"], "--set imitate={sample: 1000}: unknown key(s) ['sample']"),
        (["imitate={epochs: 0}"], "--set imitate={epochs: 0}: epochs: 0 is out of range"),
        ([STAGE, "init_from=start.zip"], "imitate and init_from both start the network"),
        ([STAGE, "algorithm=dqn"], "a clone stage starts PPO runs only"),
    ],
)
def test_a_bad_stage_is_named(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(TINY, overrides)
    assert message in str(err.value)


def test_ctrl_c_in_the_clone_stage_says_what_it_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(stage: ImitateConfig, **_: object) -> None:
        stage.run_dir.mkdir(parents=True)
        (stage.run_dir / "clone.safetensors").write_bytes(b"")
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "imitate", interrupted)
    with pytest.raises(SystemExit) as stop:
        run_cli.main("ppo", _args(tmp_path))
    assert stop.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted before training started" in err
    assert f"{tmp_path / 'ppo_tiny' / 'clone'} holds clone.safetensors" in err
