"""Sweeps on Ray Tune (``uno-lab sweep``, :mod:`unolab.train.sweep`), on a local Ray (``ray.init(num_cpus=2)``).

A 2-trial sweep of the tiny training config finishes and writes its results table, its plot
and one normal training run per trial; running it again restores the finished sweep from
Tune's state instead of training again. A sweep whose driver is killed with ``kill -9``
resumes: Tune restores it and the trial continues its run from ``latest.zip``.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from support import ROOT

from unolab.train.sweep.config import load_sweep_config
from unolab.train.sweep.run import main, run_sweep


def _write_sweep(tmp: Path, **changes: Any) -> Path:
    path = tmp / "tiny_sweep.yaml"
    data = {
        "name": "tiny_lr",
        "train_config": str(ROOT / "configs" / "ppo" / "tiny.yaml"),
        "search_space": {"ppo.learning_rate": {"grid": [1.0e-4, 3.0e-4]}},
        "max_concurrent": 2,
        "scheduler": {"kind": "asha", "grace_evaluations": 1},
        "output_dir": str(tmp / "sweeps"),
        **changes,
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_two_trial_sweep_writes_its_table(ray_cluster: ModuleType, tmp_path: Path) -> None:
    config = _write_sweep(tmp_path)
    assert main(["--config", str(config), "--quiet"]) == 0
    folder = tmp_path / "sweeps" / "tiny_lr"
    with (folder / "results.csv").open() as table:
        rows = list(csv.DictReader(table))
    assert len(rows) == 2
    assert sorted(float(r["ppo.learning_rate"]) for r in rows) == [1.0e-4, 3.0e-4]
    for row in rows:
        low, rate, high = (float(row[k]) for k in ("ci_low", "win_rate", "ci_high"))
        assert 0 <= low <= rate <= high <= 1
        assert int(row["steps"]) >= int(row["best_steps"]) > 0
        run = folder / "runs" / row["trial"]
        assert (run / "config.yaml").is_file() and (run / "tb").is_dir()
        assert (run / f"{row['trial']}.safetensors").is_file(), "each trial exports its agent"
        record = json.loads((run / "sweep_trial.json").read_text())
        assert record["params"] == {"ppo.learning_rate": float(row["ppo.learning_rate"])}
        assert record["steps"] == int(row["steps"]) and record["seconds"] > 0
        trained = yaml.safe_load((run / "config.yaml").read_text())
        assert trained["torch_threads"] == 1
        assert trained["ppo"]["learning_rate"] == float(row["ppo.learning_rate"])
    assert any(int(row["steps"]) >= 2048 for row in rows), "the best trial ran to its end"
    assert (folder / "win_rate.png").stat().st_size > 0
    summary = json.loads((folder / "sweep.json").read_text())
    assert summary["trials"] == 2 and not summary["errors"]
    assert summary["overhead_per_trial_s"] > 0
    # Run again: Tune restores the finished sweep; no trial trains again.
    latest = sorted((folder / "runs").glob("*/latest.zip"))
    stamps = [p.stat().st_mtime_ns for p in latest]
    sweep, base, dimensions = load_sweep_config(config)
    again = run_sweep(sweep, base, dimensions, verbose=0)
    assert [p.stat().st_mtime_ns for p in latest] == stamps
    assert [r["win_rate"] for r in again["rows"]] == [r["win_rate"] for r in summary["rows"]]


def test_interrupted_sweep_resumes(ray_cluster: ModuleType, tmp_path: Path) -> None:
    config = _write_sweep(
        tmp_path,
        name="long",
        search_space={"seed": {"grid": [4]}},
        overrides=["total_steps=16384"],
        max_concurrent=1,
        scheduler={"kind": "none"},
    )
    address = ray_cluster.get_runtime_context().gcs_address
    args = [sys.executable, "-m", "unolab", "sweep", "--config", str(config), "--quiet"]
    driver = subprocess.Popen(
        [*args, "--address", address], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    folder = tmp_path / "sweeps" / "long"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None:
        saved = list((folder / "runs").glob("*/sweep_trial.json"))  # after latest.zip
        if saved and list((folder / "tune").glob("experiment_state*.json")):
            break
        time.sleep(0.05)
    assert driver.poll() is None, "the sweep ended before it could be killed"
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    (run,) = (folder / "runs").iterdir()
    assert json.loads((run / "sweep_trial.json").read_text())["steps"] < 16384, "killed mid-way"
    assert main(args[4:]) == 0  # the same words after "uno-lab sweep"
    record = json.loads((run / "sweep_trial.json").read_text())
    assert record["resumed"], "the trial continued its run from latest.zip"
    (row,) = json.loads((folder / "sweep.json").read_text())["rows"]
    assert row["steps"] >= 16384 and not row["error"]
