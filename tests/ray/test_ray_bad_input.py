"""Bad input to the Ray commands: one clear line naming the value, exit status 2.

* an address that cannot be reached (tournament, strength, sweep), refused within 30 s;
* a sweep key the training config does not have; an empty search space; a bad range;
* Ray missing: the command says how to install it;
* a tournament run folder held by another run: refused before Ray is asked for, naming the
  holder's pid (the driver holds the folder; the workers never touch it).

No Ray is started in this module.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from strength import main as strength_main
from support import ROOT
from support.optional import require

from uno_env.files import FolderLock
from unolab.tournament.cli import main as tournament_main
from unolab.train.sweep.run import main as sweep_main

UNREACHABLE = "127.0.0.1:9"
"""The discard port: nothing listens there."""


def _sweep_file(tmp: Path, **changes: Any) -> Path:
    data = {
        "name": "bad",
        "train_config": str(ROOT / "configs" / "ppo" / "tiny.yaml"),
        "search_space": {"ppo.learning_rate": {"grid": [1.0e-4]}},
        "output_dir": str(tmp / "sweeps"),
        **changes,
    }
    path = tmp / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_unreachable_address_is_refused_quickly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require("ray", "the ray backend connects through it")
    args = ["--name", "u", "--participants", "random", "mixbot", "--deal-sets", "2"]
    args += ["--output-dir", str(tmp_path), "--backend", "ray", "--address", UNREACHABLE]
    start = time.monotonic()
    assert tournament_main(args) == 2
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and UNREACHABLE in err and "ray start --head" in err
    assert not (tmp_path / "u").exists(), "nothing is written before the cluster answers"
    strength = ["--games", "10", "--players", "2", "--bots", "random", "--backend", "ray"]
    with pytest.raises(SystemExit) as exit_:
        strength_main([*strength, "--out", str(tmp_path / "s.json"), "--address", UNREACHABLE])
    assert exit_.value.code == 2
    assert UNREACHABLE in capsys.readouterr().err
    assert sweep_main(["--config", str(_sweep_file(tmp_path)), "--address", UNREACHABLE]) == 2
    assert UNREACHABLE in capsys.readouterr().err
    assert time.monotonic() - start < 60


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"search_space": {"ppo.learnin_rate": {"grid": [1.0e-4]}}}, "'ppo.learnin_rate'"),
        ({"search_space": {"no_such_key": {"choice": [1]}}}, "'no_such_key'"),
        ({"search_space": {}}, "search_space is empty"),
        ({"search_space": {"ppo.learning_rate": {"grid": [2.0]}}}, "learning_rate"),
        ({"search_space": {"ppo.learning_rate": {"uniform": [0.1, 0.01]}}}, "low < high"),
        ({"search_space": {"seed": {"sample": [1, 2]}}}, "unknown kind 'sample'"),
        ({"metric_bot": "pimc"}, "metric_bot 'pimc'"),
        ({"max_concurrent": 0}, "max_concurrent"),
    ],
)
def test_bad_sweep_configs_name_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], named: str
) -> None:
    path = _sweep_file(tmp_path, **changes)
    assert sweep_main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and str(path) in err
    assert not (tmp_path / "sweeps").exists()


def test_without_ray_the_commands_say_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    args = ["--name", "n", "--participants", "random", "mixbot", "--deal-sets", "2"]
    assert tournament_main([*args, "--output-dir", str(tmp_path), "--backend", "ray"]) == 2
    assert "pip install 'uno-lab[ray]'" in capsys.readouterr().err
    assert sweep_main(["--config", str(_sweep_file(tmp_path))]) == 2
    assert "pip install 'uno-lab[ray]'" in capsys.readouterr().err


def test_a_sweep_folder_of_another_config_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "sweeps" / "bad"
    folder.mkdir(parents=True)
    record = {"sweep": {"search_space": {"seed": {"grid": [1]}}}, "train": {}}
    (folder / "sweep_config.json").write_text(json.dumps(record))
    assert sweep_main(["--config", str(_sweep_file(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "another config" in err and "sweep.search_space" in err and "--fresh" in err


def test_a_held_run_folder_is_refused_before_ray_is_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # asking for Ray would say "pip install"
    (tmp_path / "held").mkdir()
    args = ["--name", "held", "--participants", "random", "mixbot", "--deal-sets", "2"]
    args += ["--output-dir", str(tmp_path), "--backend", "ray", "--address", UNREACHABLE]
    with FolderLock(tmp_path / "held", "tournament run"):
        start = time.monotonic()
        assert tournament_main(args) == 2
        assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"in use by another process (pid {os.getpid()})" in err
    assert [p.name for p in (tmp_path / "held").iterdir()] == [".lock"]
