"""A missing optional extra is one line naming the extra and the pip command."""

from __future__ import annotations

import json
import sys

import pytest

from uno_env.console import missing_extra_message, require_extra
from unolab.agents.llm.client import LLMSetupError, require_openai
from unolab.agents.ray_backend import RayBackendError, require_ray


def test_an_installed_module_is_imported() -> None:
    assert require_extra("json", RuntimeError, "this test") is json


@pytest.mark.parametrize(
    ("module", "require", "error", "line"),
    [
        (
            "ray",
            require_ray,
            RayBackendError,
            "the ray backend needs the 'ray' extra (ray is not installed): "
            "pip install 'uno-lab[ray]'",
        ),
        (
            "openai",
            require_openai,
            LLMSetupError,
            "a language-model agent needs the 'llm' extra (openai is not installed): "
            "pip install 'uno-lab[llm]'",
        ),
    ],
)
def test_a_missing_extra_says_which_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, module: str, require: object, error: type, line: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(error) as raised:
        require()  # type: ignore[operator]
    assert str(raised.value) == line


def test_a_module_of_no_extra_asks_for_a_reinstall() -> None:
    err = ModuleNotFoundError("No module named 'uno_env_part'", name="uno_env_part")
    assert "reinstall uno-lab" in missing_extra_message(err)
    with pytest.raises(RuntimeError, match="'no_such_module_at_all' is missing"):
        require_extra("no_such_module_at_all", RuntimeError, "this test")


@pytest.mark.parametrize("benchmark", ["core", "envs"])
def test_a_speed_benchmark_without_rlcard_stops_before_timing_unless_told_to_skip_it(
    monkeypatch: pytest.MonkeyPatch, benchmark: str
) -> None:
    import importlib

    main = importlib.import_module(f"unolab.benchmarks.{benchmark}").main
    sizes = ["--batch-sizes", "4"] if benchmark == "core" else ["--vec-sizes", "4", "--no-ppo"]
    argv = ["--seconds", "0.05", "--repeats", "1", *sizes]
    monkeypatch.setitem(sys.modules, "rlcard", None)
    monkeypatch.delitem(sys.modules, "unolab.benchmarks.rlcard", raising=False)
    with pytest.raises(ModuleNotFoundError) as missing:
        main(argv)
    assert "pip install 'uno-lab[bench]'" in missing_extra_message(missing.value)
    figures = main([*argv, "--no-rlcard"])
    assert not any("rlcard" in name for name in figures) and figures
