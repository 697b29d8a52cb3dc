"""``uno-lab bench training``: MaskablePPO steps per second per env worker count."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
import torch

from unolab.benchmarks import training
from unolab.cli_tools import BENCHMARKS

TINY = ["--envs", "8", "--n-steps", "8", "--batch-size", "32", "--epochs", "1",
        "--net-arch", "16", "--rollouts", "1"]  # fmt: skip


def test_it_is_a_bench_command() -> None:
    assert BENCHMARKS["training"] == "unolab.benchmarks.training"


def test_a_tiny_run_on_the_cpu_prints_a_table_and_one_json_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    out = tmp_path / "training.json"
    figures = training.main(["--workers", "1,2", "--device", "cpu", *TINY, "--out", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert json.loads(printed[-1]) == figures == json.loads(out.read_text())
    assert [(row["workers"], row["device"]) for row in figures["rows"]] == [(1, "cpu"), (2, "cpu")]
    assert all(row["steps_per_second"] > 0 and row["gpu_utilisation"] is None
               for row in figures["rows"])  # fmt: skip
    table = "\n".join(printed[:-1])
    assert "steps/s" in table and "n/a" in table and "1.00x" in table


def test_a_device_is_measured_beside_the_cpu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "a test GPU")

    def measure(args: argparse.Namespace, workers: int, device: str, runs: str) -> dict[str, Any]:
        speed = 1000.0 * workers * (3 if device == "cuda" else 1)
        util = 50.0 if device == "cuda" else None
        return {"workers": workers, "device": device, "steps_per_second": speed,
                "runs": [speed], "gpu_utilisation": util}  # fmt: skip

    monkeypatch.setattr(training, "measure", measure)
    figures = training.main(["--workers", "1,4", "--device", "auto", *TINY])
    assert [(r["workers"], r["device"]) for r in figures["rows"]] == [
        (1, "cuda"), (4, "cuda"), (1, "cpu"), (4, "cpu")
    ]  # fmt: skip
    assert figures["gpu"] == "a test GPU"
    table = capsys.readouterr().out
    assert "50%" in table and "n/a" in table and "4.00x" in table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--workers", "4", "--envs", "2"], "argument --workers: 4 workers for 2 games"),
        (["--workers", "1,,2"], "expected worker counts such as 1,4,16"),
        (["--workers", "0"], "expected an integer from 1 to 256, got '0'"),
        (["--device", "cuda"], "--device: cuda asks for a GPU, but torch sees none"),
    ],
)
def test_bad_options_are_one_line(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as done:
        training.main(argv)
    assert done.value.code == 2
    assert message in capsys.readouterr().err
