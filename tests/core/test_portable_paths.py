"""Paths in configs and records work with either separator: a config or a record written on
Windows (``agents\\mine.safetensors``) is read on Linux and macOS as the same path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from uno_env.console import portable_path
from unolab.agents.learned import load_policy
from unolab.agents.registry import shipped_agent_path
from unolab.agents.resolve import policy_factory
from unolab.tournament.config import load_config
from unolab.tournament.run_folder import TournamentFolder


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
