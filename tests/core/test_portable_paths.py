"""Paths in configs and records work with either separator: a config or a record written on
Windows (``agents\\mine.safetensors``) is read on Linux and macOS as the same path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from uno_env.config_values import ConfigError
from uno_env.console import portable_path
from unolab.agents.learned import load_policy
from unolab.agents.registry import shipped_agent_path
from unolab.agents.resolve import policy_factory
from unolab.tournament.config import TournamentConfig, load_config
from unolab.tournament.run_folder import TournamentFolder
from unolab.train.config import load_config as load_train_config
from unolab.train.exploit.config import ExploitConfig
from unolab.train.imitate.config import load_imitate_config
from unolab.train.sweep.config import SweepConfig


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("agents\\mine.safetensors", "agents/mine.safetensors"),
        ("runs\\tournaments", "runs/tournaments"),
        ("runs/tournaments", "runs/tournaments"),
        ("plain", "plain"),
    ],
)
def test_a_backslash_is_a_separator_where_no_such_name_exists(
    given: str, read: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert portable_path(given) == Path(read)


def test_an_existing_name_with_a_backslash_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Linux a backslash is a character a name may hold: a file so named is that file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "odd\\name.json").write_text("{}")
    assert portable_path("odd\\name.json") == Path("odd\\name.json")


def _agent_in(folder: Path) -> Path:
    shipped = shipped_agent_path("ppo_official_2p")
    assert shipped is not None
    folder.mkdir(parents=True)
    for suffix in (".safetensors", ".json"):
        shutil.copy(shipped.with_suffix(suffix), folder / f"mine{suffix}")
    return folder / "mine.safetensors"


def test_an_agent_path_written_on_windows_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _agent_in(tmp_path / "agents")
    native = load_policy("agents/mine.safetensors", seed=0)
    for given in ("agents\\mine.safetensors", "agents\\mine"):
        policy = load_policy(given, seed=0)
        assert type(policy) is type(native)
        assert policy_factory(given)(0) is not None


def test_a_tournament_config_written_on_windows_runs_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _agent_in(tmp_path / "agents")
    config_file = tmp_path / "t.yaml"
    config_file.write_text(
        "name: across\n"
        "output_dir: out\\tournaments\n"
        "participants:\n"
        "  - bot: random\n"
        "  - path: agents\\mine.safetensors\n"
    )
    config = load_config(config_file)
    assert config.output_dir == "out/tournaments"
    assert [p.path for p in config.participants] == [None, "agents/mine.safetensors"]
    assert config.participants[1].display_name == "mine"
    assert TournamentFolder(config).path == Path("out/tournaments/across")


def test_a_training_config_written_on_windows_runs_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    init = _agent_in(tmp_path / "agents")
    base = {"name": "across", "algorithm": "ppo", "runs_dir": "out\\runs"}
    config = load_train_config(None, base={**base, "init_from": "agents\\mine.safetensors"})
    assert config.runs_dir == "out/runs"
    assert config.init_from == "agents/mine.safetensors"
    assert Path(config.init_from).resolve() == init.resolve()
    assert config.run_dir == Path("out/runs/across")
    # A later stage's checkpoint, under runs_dir: not there yet, and still found as that path.
    staged = load_train_config(None, base={**base, "init_from": "out\\runs\\a\\latest.zip"})
    assert staged.init_from == "out/runs/a/latest.zip"


def test_an_imitation_config_written_on_windows_runs_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _agent_in(tmp_path / "agents")
    config = load_imitate_config(
        None,
        base={
            "name": "across",
            "teachers": {"agents\\mine.safetensors": 1.0, "mixbot": 1.0},
            "behaviour": "agents\\mine.safetensors",
            "include": ["runs\\a\\demonstrations.npz"],
            "runs_dir": "out\\runs",
        },
    )
    assert config.teachers == {"agents/mine.safetensors": 1.0, "mixbot": 1.0}
    assert config.behaviour == "agents/mine.safetensors"
    assert config.include == ("runs/a/demonstrations.npz",)
    assert config.run_dir == Path("out/runs/across")


def test_exploit_and_sweep_settings_written_on_windows_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    exploit = ExploitConfig(agent="agents\\mine.safetensors", runs_dir="out\\runs")
    assert (exploit.agent, exploit.runs_dir) == ("agents/mine.safetensors", "out/runs")
    sweep = SweepConfig(name="s", train_config="..\\ppo\\quick.yaml", output_dir="out\\sweeps")
    assert (sweep.train_config, sweep.output_dir) == ("../ppo/quick.yaml", "out/sweeps")
    assert sweep.folder == Path("out/sweeps/s")


def test_an_empty_output_folder_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a path portably never turns an empty one into the working folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="output_dir: '' is empty"):
        TournamentConfig(name="t", participants=(), output_dir="")
    with pytest.raises(ConfigError, match="runs_dir: '' is empty"):
        ExploitConfig(agent="mixbot", runs_dir="")
