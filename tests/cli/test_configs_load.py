"""Every YAML under configs/ loads with its own loader and says, in its first line, what it makes.

The loader of a file follows its folder (``rules``, ``ppo``, ``dqn``, ``imitate``,
``sweep``, ``tournament``); a file of ``configs/experiments/`` is a training or an imitation
config, told apart by its ``teachers``. The first line is a YAML comment: ``uno-lab config
list`` shows it next to the config's name. Every ``configs/...yaml`` path named in a config,
a doc or a shipped agent's metadata exists, so moving a config cannot leave a stale path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from support import ROOT

from uno_env.rules import Rules, load_rules
from unolab.shipped_configs import config_description, shipped_configs
from unolab.tournament.config import load_config as load_tournament_config
from unolab.train.config import load_config as load_train_config
from unolab.train.imitate.config import load_imitate_config
from unolab.train.sweep.config import load_sweep_config

CONFIGS = ROOT / "configs"
FILES = sorted(CONFIGS.rglob("*.yaml"))
KINDS = ("rules", "ppo", "dqn", "imitate", "sweep", "tournament", "experiments")


def _id(path: Path) -> str:
    return path.relative_to(CONFIGS).as_posix()


def _load(path: Path) -> object:
    kind = path.relative_to(CONFIGS).parts[0]
    if kind == "rules":
        rules = load_rules(path)
        assert isinstance(rules, Rules)
        return rules
    if kind in ("ppo", "dqn"):
        config = load_train_config(path)
        assert config.algorithm == kind
        return config
    if kind == "imitate":
        return load_imitate_config(path)
    if kind == "sweep":
        return load_sweep_config(path)
    if kind == "tournament":
        return load_tournament_config(path)
    if kind == "experiments":
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return load_imitate_config(path) if "teachers" in data else load_train_config(path)
    raise AssertionError(f"{_id(path)}: no loader for the folder {kind!r}; add it to this test")


def test_the_configs_folder_holds_only_known_kinds() -> None:
    assert FILES, CONFIGS
    for path in FILES:
        assert path.relative_to(CONFIGS).parts[0] in KINDS, _id(path)
    assert not list(CONFIGS.rglob("*.yml")), "name configs .yaml"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_a_config_loads_with_its_loader(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Paths inside configs (init_from, include, train_config) are relative to the root.
    monkeypatch.chdir(ROOT)
    assert _load(path) is not None


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_a_config_says_what_it_makes_in_its_first_line(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and len(first) > 20, f"{_id(path)}: {first!r}"
    assert config_description(path) == first[2:].strip()


def test_every_config_is_listed_by_name() -> None:
    listed = {path.resolve() for path in shipped_configs().values()}
    assert listed == {path.resolve() for path in FILES}


_PATH = re.compile(r"configs/[A-Za-z0-9_./-]+?\.yaml")


def _mentions() -> list[tuple[str, str]]:
    sources = [*FILES, *sorted((ROOT / "docs").rglob("*.md"))]
    sources += sorted((ROOT / "agents" / "pretrained").glob("*.json"))
    return [
        (source.relative_to(ROOT).as_posix(), match)
        for source in sources
        for match in _PATH.findall(source.read_text(encoding="utf-8"))
    ]


def test_every_config_path_named_in_configs_docs_and_agents_exists() -> None:
    mentions = _mentions()
    assert mentions
    missing = [f"{source}: {name}" for source, name in mentions if not (ROOT / name).is_file()]
    assert not missing, missing


_CONFIG_OPTION = re.compile(r"(?:--config|uno-lab config show)[ =\n]+([^\s`)'\"]+)")
_PLACEHOLDERS = ("FILE", "...", "NAME")


def test_every_config_a_doc_or_config_names_is_a_shipped_name() -> None:
    """The README, the docs, the model cards and the configs' own comments name configs the
    way ``uno-lab`` takes them in any folder (``--config ppo/quick``), not by a checkout path."""
    shipped = shipped_configs()
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *FILES]
    named = [
        (source.relative_to(ROOT).as_posix(), name)
        for source in sources
        for name in _CONFIG_OPTION.findall(source.read_text(encoding="utf-8"))
        if name not in _PLACEHOLDERS and "<" not in name
    ]
    assert len(named) > 20, named
    wrong = [f"{source}: --config {name}" for source, name in named if name not in shipped]
    assert not wrong, wrong


def test_a_shipped_sweep_finds_its_training_config_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """train_config is relative to the sweep file, so the shipped sweep works outside a
    checkout; a name that is nowhere is one error naming the key."""
    from unolab.train.sweep.config import load_sweep_config

    monkeypatch.chdir(tmp_path)
    sweep, base, dimensions = load_sweep_config(shipped_configs()["sweep/quick_lr_ent"])
    assert Path(sweep.train_config).resolve() == shipped_configs()["ppo/quick"].resolve()
    assert base.name == "quick" and dimensions
    broken = tmp_path / "sweep.yaml"
    broken.write_text("name: s\ntrain_config: nowhere.yaml\nsearch_space: {seed: {grid: [1]}}\n")
    with pytest.raises(ValueError, match=r"train_config: 'nowhere\.yaml' does not exist"):
        load_sweep_config(broken)
