"""Training from a script or a notebook: ``unolab.train.run.train_algorithm`` and
``unolab.train.imitate.run.train`` take a config object, a YAML file or a mapping, and return the run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support import ROOT

from uno_env import ConfigError
from unolab.agents.learned import load_policy
from unolab.train.config import load_config
from unolab.train.imitate import run as imitate
from unolab.train.run import train_algorithm

TINY = {
    "ppo": ROOT / "configs/ppo/tiny.yaml",
    "dqn": ROOT / "configs/dqn/tiny.yaml",
}


@pytest.mark.parametrize("form", ["path", "mapping", "object"])
def test_ppo_train_takes_a_path_a_mapping_or_a_config(form: str, tmp_path: Path) -> None:
    overrides = ["total_steps=512", f"runs_dir={tmp_path / 'runs'}", "eval.every=512"]
    overrides += ["eval.games=8"]
    source: object = TINY["ppo"]
    if form == "mapping":
        source = {k: v for k, v in yaml.safe_load(TINY["ppo"].read_text()).items()}
        del source["algorithm"]  # the function's algorithm is taken
    elif form == "object":
        source = load_config(TINY["ppo"])
    result = train_algorithm("ppo", source, overrides, progress_bar=False, log=None)  # type: ignore[arg-type]
    assert result.run_dir == tmp_path / "runs" / "ppo_tiny"
    assert result.steps >= 512
    assert result.policy is not None and result.policy.is_file()
    assert load_policy(result.policy).meta.algorithm == "ppo"


def test_dqn_train_runs_a_dqn_config(tmp_path: Path) -> None:
    overrides = ["total_steps=256", f"runs_dir={tmp_path}", "eval.every=256", "eval.games=8"]
    result = train_algorithm("dqn", TINY["dqn"], overrides, progress_bar=False, log=None)
    assert result.steps >= 256
    assert (result.run_dir / "latest.zip").is_file()


def test_a_config_of_another_algorithm_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="uno-lab train ppo"):
        train_algorithm("dqn", TINY["ppo"], [f"runs_dir={tmp_path}"], progress_bar=False, log=None)
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_imitate_train_returns_the_clone(tmp_path: Path) -> None:
    overrides = [f"runs_dir={tmp_path}", "samples=1000", "eval_games=8", "epochs=1"]
    result = imitate.train(ROOT / "configs/imitate/tiny.yaml", overrides, progress=False, log=None)
    assert result.policy.is_file()
    assert load_policy(result.policy).meta.name == "imitate_tiny"


def test_an_sb3_model_is_rated_through_its_one_line_adapter(tmp_path: Path) -> None:
    from uno_env import load_rules
    from unolab.agents.arena import evaluate_vs
    from unolab.train.algorithms import load_checkpoint
    from unolab.train.export import as_policy

    overrides = ["total_steps=256", f"runs_dir={tmp_path}", "eval.every=256", "eval.games=8"]
    result = train_algorithm("ppo", TINY["ppo"], overrides, progress_bar=False, log=None)
    rules = load_rules("official", num_players=2)
    model = load_checkpoint(result.run_dir / "latest.zip", "ppo")
    with pytest.raises(TypeError, match=r"as_policy\(model, rules\)"):
        evaluate_vs(rules, model, "random", 10, progress=False)
    rated = evaluate_vs(rules, as_policy(model, rules), "random", 10, progress=False)
    assert rated.games == 10 and rated.candidate == "ppo"
