"""The learning-curve experiments write their runs' evaluations into the docs' record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import training_curves


def test_an_experiment_records_every_evaluation_and_keeps_other_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = training_curves.EXPERIMENTS["ppo_discount"]["runs"]["gamma 1.0"]
    tiny = {
        **config,
        "name": "tiny_gamma_1.0",
        "total_steps": 1024,
        "num_envs": 8,
        "eval": {"every": 512, "games": 20, "bots": ["random"]},
        "ppo": {**config["ppo"], "n_steps": 32, "batch_size": 128, "n_epochs": 1},
    }
    monkeypatch.setattr(
        training_curves,
        "EXPERIMENTS",
        {"tiny": {"title": "tiny", "description": "a tiny run", "runs": {"gamma 1.0": tiny}}},
    )
    out = tmp_path / "curves.json"
    out.write_text(json.dumps({"description": "", "figures": {"kept": {"lines": []}}}))
    assert training_curves.main(["--out", str(out), "--runs-dir", str(tmp_path / "runs")]) == 0
    assert "tiny / gamma 1.0" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert set(record["figures"]) == {"kept", "tiny"}
    (line,) = record["figures"]["tiny"]["lines"]
    assert line["config"] == tiny and line["seconds"] > 0
    assert [p["steps"] for p in line["points"]] == [512, 1024]
    for point in line["points"]:
        assert point["opponent"] == "random" and point["games"] == 20
        assert point["ci_low"] <= point["win_rate"] <= point["ci_high"]
    # The dotted run name is exported whole.
    assert (tmp_path / "runs" / "tiny_gamma_1.0" / "tiny_gamma_1.0.safetensors").is_file()
