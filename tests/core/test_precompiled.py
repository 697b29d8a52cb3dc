"""The machine code shipped with the package (uno_env/precompiled), and the warm-up."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from uno_env import jit_cache
from unolab import warmup

_SUITED = (
    sys.platform == "linux"
    and platform.machine() == "x86_64"
    and sys.version_info[:2] == (3, 11)
    and {"avx2", "fma", "bmi2"} <= jit_cache._host_features()
)


def test_the_shipped_machine_code_is_built_from_these_sources() -> None:
    """On a machine the shipped code suits (CI's), it is found: the sources have not changed
    since it was built. After a change to the engine: python tools/precompile.py."""
    if not _SUITED and not os.environ.get("UNO_LAB_CI"):
        pytest.skip("the shipped code is for Linux x86-64 with AVX2 and CPython 3.11")
    manifests = sorted(Path(jit_cache.PRECOMPILED_ROOT).glob("*/manifest.json"))
    assert manifests, "no shipped machine code: run python tools/precompile.py"
    built = {json.loads(path.read_text())["digest"] for path in manifests}
    assert os.path.basename(jit_cache.CACHE_DIR) in built, (
        f"the shipped machine code was built from other sources ({built}); "
        "run python tools/precompile.py"
    )
    assert jit_cache.precompiled() is not None
    assert warmup.is_warm(), "the shipped code lacks the searches: run tools/precompile.py"


def _level(root: Path, **changes: object) -> Path:
    """A copy of the first shipped level under ``root``, its manifest changed."""
    (source,) = sorted(Path(jit_cache.PRECOMPILED_ROOT).glob("*/manifest.json"))[:1]
    manifest = json.loads(source.read_text()) | changes
    folder = root / "level"
    (folder / str(manifest["digest"])).mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize(
    "changes",
    [
        {"digest": "0123456789abcdef"},
        {"numba": "0.1.0"},
        {"python": "3.99"},
        {"triple": "aarch64-unknown-linux-gnu"},
        {"requires": ["avx2", "a-feature-no-cpu-has"]},
        {"requires": 7},
        {"cpu_name": None},
    ],
)
def test_shipped_code_for_another_machine_or_other_sources_is_not_used(
    tmp_path: Path, changes: dict[str, object]
) -> None:
    if not _SUITED:
        # On a user's other machine only: CI's machine is one the shipped code suits.
        assert not os.environ.get("UNO_LAB_CI"), "the shipped code does not suit CI's machine"
        pytest.skip("needs the shipped code's machine")
    _level(tmp_path)
    assert jit_cache._find_precompiled(str(tmp_path)) is not None  # the copy itself qualifies
    other = tmp_path / "other"
    _level(other, **changes)
    assert jit_cache._find_precompiled(str(other)) is None


@pytest.mark.parametrize("text", ["", "{", "[]", "null", '{"digest": 1}'])
def test_a_damaged_manifest_is_skipped(tmp_path: Path, text: str) -> None:
    (tmp_path / "level").mkdir()
    (tmp_path / "level" / "manifest.json").write_text(text)
    assert jit_cache._find_precompiled(str(tmp_path)) is None


def test_the_shipped_code_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNO_LAB_NO_PRECOMPILED", "1")
    assert jit_cache._find_precompiled() is None


def _fake_parts(calls: list[str]) -> list[tuple[str, object]]:
    return [(name, lambda name=name: calls.append(name)) for name in ("the rules", "the rest")]


def test_a_cold_start_says_what_it_compiles_and_marks_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not warm: one line saying so and how long, a line per part (not a terminal), the
    time it took; then the cache is marked and the next start says nothing."""
    calls: list[str] = []
    monkeypatch.setattr(jit_cache, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "precompiled", lambda: None)
    monkeypatch.setattr(warmup, "warmup_parts", lambda names=(): _fake_parts(calls))
    assert not warmup.is_warm()
    assert warmup.ensure_compiled() is True
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("uno-lab: compiling the game engine once for this install: about")
    assert err[-1].startswith("uno-lab: compiled in ")
    assert calls == ["the rules", "the rest"]
    assert warmup.is_warm()
    assert warmup.ensure_compiled() is False
    assert capsys.readouterr().err == ""


def test_a_failed_compile_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> None:
        raise ValueError("no luck")

    monkeypatch.setattr(jit_cache, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "precompiled", lambda: None)
    monkeypatch.setattr(warmup, "warmup_parts", lambda names=(): [("the rules", broken)])
    with pytest.raises(RuntimeError, match="compiling the rules failed: ValueError: no luck"):
        warmup.ensure_compiled()
    assert not warmup.is_warm()


def test_warmup_command_on_a_fresh_install(tmp_path: Path) -> None:
    """uno-lab warmup --check on an empty cache: ready from the shipped code where it suits,
    else 'not compiled yet' (exit 1); either way one line naming where the code is."""
    env = {**os.environ, "UNO_LAB_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "unolab", "warmup", "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr == ""
    if _SUITED:
        assert (done.returncode, done.stdout.split(":")[0]) == (0, "ready")
        assert re.search(r"shipped for x86-64-v[34] ", done.stdout), done.stdout
    else:
        assert (done.returncode, done.stdout.split(":")[0]) == (1, "not compiled yet")


def test_a_command_compiles_only_the_parts_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A game against bots needs the rules and the encoder, not the searches: only those
    compile, and the searches are still reported as not compiled."""
    calls: list[str] = []
    monkeypatch.setattr(jit_cache, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "precompiled", lambda: None)
    parts = {
        name: (label, lambda label=label: calls.append(label))
        for name, (label, _) in zip(warmup.PART_NAMES, warmup.warmup_parts(), strict=True)
    }
    monkeypatch.setattr(
        warmup, "warmup_parts", lambda names=warmup.PART_NAMES: [parts[n] for n in names]
    )
    assert warmup.ensure_compiled(names=warmup.GAME_PARTS) is True
    assert calls == ["the rules", "the observation encoder"]
    assert "about" in capsys.readouterr().err
    assert warmup.is_warm(warmup.GAME_PARTS)
    assert not warmup.is_warm()


def test_a_failed_compile_ends_the_command_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from unolab.cli import main

    def broken() -> None:
        raise ValueError("no luck")

    monkeypatch.setenv("UNO_LAB_NO_PRECOMPILED", "1")  # what uno-lab warmup sets
    monkeypatch.setattr(jit_cache, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "precompiled", lambda: None)
    monkeypatch.setattr(warmup, "warmup_parts", lambda names=(): [("the rules", broken)])
    assert main(["warmup"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("uno-lab warmup: error: compiling the rules failed: ValueError: no luck"), (
        err
    )
    assert "Traceback" not in "\n".join(err)
