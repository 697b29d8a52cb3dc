"""The env speed benchmark (``uno-lab bench envs``) at a tiny size, its sharded figures
included: every figure it names is measured and printed."""

from __future__ import annotations

import pytest

from unolab.benchmarks.envs import main


def test_the_env_benchmark_times_the_sharded_env_beside_the_vec_env(
    capsys: pytest.CaptureFixture[str],
) -> None:
    figures = main(
        [
            "--seconds", "0.4", "--repeats", "1", "--vec-sizes", "1", "4",
            "--sharded-workers", "2", "--no-ppo", "--no-rlcard",
        ]
    )  # fmt: skip
    for shared in ("shared", "copied"):
        key = f"sharded_w2_n4_{shared}"
        assert figures[f"{key}_steps_per_s"] > 0
        assert figures[f"{key}_vs_vec"] == pytest.approx(
            figures[f"{key}_steps_per_s"] / figures["vec_n4_steps_per_s"]
        )
    assert not any(key.startswith("sharded_w2_n1_") for key in figures)  # 2 workers, 1 env
    printed = capsys.readouterr().out
    assert "ShardedUnoVecEnv 2 workers, n=4, observations shared:" in printed
    assert "vec_n1_vs_core" in printed  # the JSON line
