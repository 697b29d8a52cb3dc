"""The compiled core's contract: checked states, in-place steps, a cache keyed by the sources."""

from __future__ import annotations

import dataclasses
import inspect
import io
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from uno_env import core, jit, jit_cache, jit_sources
from uno_env.core import IllegalActionError
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions


def test_a_state_built_by_hand_is_checked() -> None:
    state = core.init(Rules(num_players=4), 3, seed=0)
    with pytest.raises(ValueError, match=r"UnoState.hands must be int8 of shape \(3, 4, 54\)"):
        state.with_fields(hands=state.hands.astype(np.int16))
    with pytest.raises(ValueError, match=r"UnoState\.deck must be int8 of shape"):
        state.with_fields(deck=state.deck[:, :100])
    with pytest.raises(ValueError, match="C-contiguous"):
        state.with_fields(scores=np.zeros((4, 3), np.int32).T)
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.hands = state.hands.copy()  # type: ignore[misc]
    assert state.with_fields(turn=state.turn.copy()).batch_size == 3


def test_in_place_steps_match_copying_steps() -> None:
    rules = Rules(num_players=3)
    rng = np.random.default_rng(1)
    pure = core.init(rules, 16, seed=1)
    owned = pure.copy()
    for _ in range(150):
        actions = uniform_legal_actions(core.legal_action_mask(rules, pure), rng)
        before = pure.copy()
        pure = core.step(rules, pure, actions)
        assert core.step(rules, owned, actions, in_place=True) is owned
        for name, arr in owned.array_fields().items():
            np.testing.assert_array_equal(arr, getattr(pure, name), err_msg=name)
        for name, arr in before.array_fields().items():  # the copying step left its input
            assert arr is not getattr(pure, name)
    np.testing.assert_array_equal(
        core.legal_action_mask(rules, owned), core.legal_action_mask(rules, pure)
    )


def test_an_illegal_in_place_step_changes_nothing() -> None:
    rules = Rules(num_players=2)
    state = core.init(rules, 4, seed=3)
    snapshot = state.copy()
    mask = core.legal_action_mask(rules, state)
    actions = uniform_legal_actions(mask, np.random.default_rng(0))
    actions[2] = int(np.flatnonzero(~mask[2])[0])
    with pytest.raises(IllegalActionError, match="game 2"):
        core.step(rules, state, actions, in_place=True)
    for name, arr in snapshot.array_fields().items():
        np.testing.assert_array_equal(getattr(state, name), arr, err_msg=name)


def test_the_cache_is_keyed_by_every_compiled_source(tmp_path: Path) -> None:
    """Editing any file of the compiled code, or adding one, starts a fresh cache; editing
    a module the compiled code cannot reach keeps it. Checked on a copy of the package."""
    assert Path(jit_cache.CACHE_DIR).name == jit_sources.source_digest()
    copy = tmp_path / "uno_env"
    shutil.copytree(jit_sources.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = jit_sources.source_digest(copy)
    assert original == Path(jit_cache.CACHE_DIR).name
    sources = {f.relative_to(copy).as_posix() for f in jit_sources.compiled_sources(copy)}
    assert {"jit.py", "cards.py", "rng.py", "sampling.py", "observation.py"} <= sources
    assert not any(name.startswith("envs/") for name in sources)

    def digest_after(edit: Path, text: str) -> str:
        before = edit.read_text() if edit.exists() else None
        edit.write_text(text)
        try:
            return jit_sources.source_digest(copy)
        finally:
            if before is None:
                edit.unlink()
            else:
                edit.write_text(before)

    edited = [copy / "jit.py", copy / "cards.py", *sorted((copy / "core").glob("*.py"))]
    for file in edited:  # every core file, the compiler and the constants it reads
        assert digest_after(file, file.read_text() + "\n# an edit\n") != original, file.name
    assert digest_after(copy / "core" / "new_rules.py", "X = 1\n") != original
    assert jit_sources.source_digest(copy) == original

    # A new compiled module anywhere in the package is found by its import of uno_env.jit,
    # and so are the modules it imports (absolute or relative), which it may compile in.
    (copy / "kernels.py").write_text(
        "from uno_env.jit import jit\nfrom uno_env import tallies\nfrom .limits import CAP\n"
    )
    (copy / "tallies.py").write_text("WEIGHTS = 1\n")
    (copy / "limits.py").write_text("CAP = 2\n")
    with_kernels = jit_sources.source_digest(copy)
    assert with_kernels != original
    for name in ("tallies.py", "limits.py"):
        assert digest_after(copy / name, "CHANGED = 3\n") != with_kernels, name

    # Modules the compiled code does not import, users of the core included, leave it alone.
    (copy / "tool.py").write_text("from uno_env import core\nfrom uno_env.core import step\n")
    assert jit_sources.source_digest(copy) == with_kernels
    for file in (copy / "tool.py", copy / "envs" / "__init__.py"):
        assert digest_after(file, file.read_text() + "\n# an edit\n") == with_kernels, file


_PLAY_ALL_PRESETS = """
import hashlib
import numpy as np
from uno_env import core
from uno_env.observation import encode
from uno_env.rules import PRESETS
from uno_env.sampling import uniform_legal_actions

digest = hashlib.sha256()
for name, rules in sorted(PRESETS.items()):
    for n in (4,) if rules.teams else (2, 3, 5):
        r = rules if rules.teams else rules.replace(num_players=n)
        state = core.init(r, 6, seed=n)
        rng = np.random.default_rng(n)
        for _ in range(150):
            digest.update(encode(r, state).tobytes())
            mask = core.legal_action_mask(r, state)
            state = core.step(r, state, uniform_legal_actions(mask, rng))
        for arr in state.array_fields().values():
            digest.update(arr.tobytes())
print(digest.hexdigest())
"""


def test_plain_python_mode_plays_the_same_games() -> None:
    """NUMBA_DISABLE_JIT=1 (for pdb and coverage) runs the very same rules, bit for bit.

    Run as plain Python, numpy's int8 arithmetic would wrap where compiled int64 does not,
    so the rule functions cast state scalars before index arithmetic; this keeps them honest.
    """

    def run(disable: str) -> str:
        env = {**os.environ, "NUMBA_DISABLE_JIT": disable}
        done = subprocess.run(
            [sys.executable, "-c", _PLAY_ALL_PRESETS],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        return done.stdout.strip()

    assert run("1") == run("0")


def test_the_core_builds_states_that_pass_the_checks() -> None:
    """States the core builds skip the checks, so they must pass them: dealt from a stacked
    (broadcast) deck, reset, selected and stepped."""
    from uno_env.cards import CANONICAL_DECK

    rules = Rules(num_players=3)
    state = core.init(rules, 4, keys=np.arange(1, 9, 2, dtype=np.uint64), decks=CANONICAL_DECK)
    state = core.reset_games(rules, state, np.array([1, 3]), np.array([5, 6], dtype=np.uint64))
    state = state.select(np.array([True, False, True, True]))
    state = core.step(
        rules,
        state,
        uniform_legal_actions(core.legal_action_mask(rules, state), np.random.default_rng(0)),
    )
    rebuilt = core.UnoState(**state.array_fields())  # runs every check
    assert rebuilt.batch_size == 3


def _damage(path: Path, kind: str) -> None:
    """Damage the cache file at ``path`` the way a full disk, a crash or a mistake would."""
    data = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbled":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, len(data), np.uint8).tobytes())
    elif kind == "bit-flipped":
        flipped = bytearray(data)
        flipped[len(flipped) // 2] ^= 0x10
        path.write_bytes(bytes(flipped))
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "folder":
        path.unlink()
        path.mkdir()
        (path / "inside").write_bytes(data)
    else:
        raise AssertionError(kind)


_DAMAGE = ["truncated", "empty", "garbled", "bit-flipped", "fifo", "folder"]


def _read_back(path: Path) -> object:
    """What the checked cache reads from ``path`` (an index or a data file), or raise."""
    raw = jit_cache._read_regular(str(path))
    assert raw is not None, path
    if path.suffix == ".nbi":
        stream = io.BytesIO(raw)
        pickle.load(stream)  # numba's version
        raw = stream.read()
    return pickle.loads(jit_cache._unseal(raw))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("which", ["index", "data"])
@pytest.mark.parametrize("kind", _DAMAGE)
def test_a_damaged_cache_file_is_dropped_and_saved_anew(
    tmp_path: Path, kind: str, which: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Whatever is wrong with a cache file, loading drops the function's files with one
    line on stderr and finds nothing (so numba compiles), and the next save works."""
    cache = jit_cache._CheckedCacheFile(
        cache_path=str(tmp_path), filename_base="rules.f-7.py311", source_stamp=b"stamp"
    )
    cache.save(("sig", 1), {"code": b"x" * 500})
    cache.save(("sig", 2), {"code": b"y" * 500})
    index, data = tmp_path / "rules.f-7.py311.nbi", tmp_path / "rules.f-7.py311.1.nbc"
    assert cache.load(("sig", 1)) == {"code": b"x" * 500}
    _damage(index if which == "index" else data, kind)

    assert cache.load(("sig", 1)) is None
    assert sorted(tmp_path.iterdir()) == []  # the index and both data files
    err = capfd.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"uno-lab: compile cache file {tmp_path}/rules.f-7.py311."), err
    assert err.endswith(": dropped it, compiling again\n"), err

    cache.save(("sig", 1), {"code": b"z"})
    assert cache.load(("sig", 1)) == {"code": b"z"}
    assert _read_back(index) and _read_back(data)
    assert capfd.readouterr().err == ""


_PLAY_A_FEW_GAMES = """
import numpy as np
from uno_env import core
from uno_env.observation import encode
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions

rules = Rules(num_players=3)
state = core.init(rules, 4, seed=1)
rng = np.random.default_rng(0)
total = 0
for _ in range(60):
    total += int(encode(rules, state).sum())
    state = core.step(rules, state, uniform_legal_actions(core.legal_action_mask(rules, state), rng))
print(total, state.turn.tolist(), state.scores.tolist())
"""

# Small functions' entries, each kind of cache at each kind of file: numba ufuncs (loaded when
# their module is imported) and compiled functions (loaded at their first call).
_DAMAGED_ENTRIES = (
    "rng._mix-*.nbi",
    "rng.uniform_of-*.1.nbc",
    "sampling._pick-*.nbi",
    "observation._encode-*.1.nbc",
)


def _play(cache_root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PLAY_A_FEW_GAMES],
        # Compiled here, not loaded from the machine code shipped with the package.
        env={**os.environ, "UNO_LAB_CACHE_DIR": str(cache_root), "UNO_LAB_NO_PRECOMPILED": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of the compile cache holding the games' functions, and what the games print."""
    root = tmp_path_factory.mktemp("warm")
    _play(root)  # fills the cache
    played = _play(root)
    assert played.returncode == 0 and played.stderr == "", played.stderr
    return root, played.stdout


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", _DAMAGE)
def test_games_play_on_a_damaged_cache(
    warm_cache: tuple[Path, str], tmp_path: Path, kind: str
) -> None:
    """A damaged entry costs one line on stderr and a compile: the games play the same,
    nothing hangs, and the entry is written anew for the next start."""
    warm, games = warm_cache
    root = tmp_path / "cache"
    shutil.copytree(warm, root)
    # The entries of the engine's own package folder.
    folder = jit_cache.cache_subpath("uno_env.rng", jit.__file__)
    damaged = []
    for pattern in _DAMAGED_ENTRIES:
        (path,) = root.glob(f"*/{folder}/{pattern}")
        _damage(path, kind)
        damaged.append(path)

    played = _play(root)
    assert played.returncode == 0, played.stderr
    assert "Traceback" not in played.stderr
    lines = played.stderr.splitlines()
    assert len(lines) == len(damaged), played.stderr
    assert all(line.startswith("uno-lab: compile cache file ") for line in lines), lines
    assert played.stdout == games
    for path in damaged:
        assert _read_back(path), path

    again = _play(root)  # the fresh entries load
    assert (again.returncode, again.stderr, again.stdout) == (0, "", games)


def test_the_cache_folder_prunes_only_old_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old caches go (the newest few stay), and so do an old stray file or dangling link
    named like a cache, and a stray file where the cache belongs; anything else stays."""
    monkeypatch.setenv("UNO_LAB_CACHE_DIR", str(tmp_path))
    digest = jit_sources.source_digest()
    (tmp_path / digest).write_bytes(b"not a folder")
    old = [tmp_path / f"{n:016x}" for n in range(1, 6)]
    for age, path in enumerate(old):  # the first is the newest
        path.mkdir()
        os.utime(path, (10_000 - age, 10_000 - age))
    stray = tmp_path / "abcdef0123456789"
    stray.write_bytes(b"")
    os.utime(stray, (50, 50))
    link = tmp_path / "0123456789abcdef"
    link.symlink_to(tmp_path / "nowhere")
    os.utime(link, (40, 40), follow_symlinks=False)
    others = [tmp_path / "notes.txt", tmp_path / "ABCDEF0123456789", tmp_path / "sub"]
    others[0].write_text("mine")
    others[1].mkdir()
    others[2].mkdir()
    for path in others:
        os.utime(path, (1, 1))

    here = jit_cache._cache_dir()
    assert here == str(tmp_path / digest) and os.path.isdir(here)
    kept = {p.name for p in tmp_path.iterdir()}
    assert kept == {digest, *(p.name for p in old[:3]), *(p.name for p in others)}


def test_a_stray_file_where_a_source_folder_cache_belongs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jit_cache, "CACHE_DIR", str(tmp_path))
    source = inspect.getfile(uniform_legal_actions)
    folder = tmp_path / jit_cache.cache_subpath(uniform_legal_actions.__module__, source)
    folder.write_bytes(b"stray")
    locator = jit_cache._Locator.from_function(uniform_legal_actions, source)
    assert locator is not None and locator.get_cache_path() == str(folder)
    assert folder.is_dir()


_HELPER = "from uno_env.jit import jit\n\n\n@jit\ndef bonus(x):\n    return x + {step}\n"
_KERNEL = (
    "from uno_env.jit import jit\n\nfrom kernelpkg.helper import bonus\n\n\n"
    "@jit\ndef total(x):\n    return bonus(x) * 10\n"
)


def test_an_edit_to_a_compiled_helper_in_another_file_gives_fresh_machine_code(
    tmp_path: Path,
) -> None:
    """numba checks only a function's own file; the lab's cache key sees the helper's too."""
    package = tmp_path / "src" / "kernelpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "kernel.py").write_text(_KERNEL)
    env = {**os.environ, "UNO_LAB_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "src"), env.get("PYTHONPATH", "")])

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", "from kernelpkg.kernel import total; print(total(1))"],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout.strip()

    (package / "helper.py").write_text(_HELPER.format(step=1))
    assert run() == "20"
    assert run() == "20"  # from the cache
    cached = list((tmp_path / "cache").glob("*/caller-*/*/kernel.total-*.nbc"))
    assert len(cached) == 1, "the kernel's machine code is cached"
    (package / "helper.py").write_text(_HELPER.format(step=2))
    assert run() == "30"


def test_every_compiled_module_is_under_a_cache_key() -> None:
    """A module that compiles code is either in the engine's digest or keyed by all it
    reaches, and that includes every lab module it imports."""
    digest_sources = set(jit_sources.compiled_sources())
    root = Path(jit.__file__).resolve().parents[1]
    compiled = [
        path
        for folder in ("uno_env", "agents", "train", "tournament", "benchmarks", "unolab")
        for path in (root / folder).rglob("*.py")
        if "uno_env.jit" in path.read_text() and path.name != "jit.py"
    ]
    outside = [p for p in compiled if not p.resolve().is_relative_to(root / "uno_env")]
    assert {p.name for p in outside} >= {"rollout.py", "ismcts.py", "search_base.py"}
    for path in compiled:
        if path in outside:
            module = "unolab." + ".".join(path.relative_to(root).with_suffix("").parts)
            reached = {file.resolve() for file in jit_sources.caller_sources(str(path), module)}
            assert jit_sources.caller_digest(str(path), module) is not None
            if "uno_env.core.kernel" in path.read_text():
                assert (root / "uno_env" / "core" / "kernel.py") in reached
            assert (root / "uno_env" / "jit.py") in reached
            if path.name == "ismcts.py":  # its compiled helpers in other files
                assert (root / "agents" / "rollout.py") in reached
                assert (root / "agents" / "search_base.py") in reached
        else:
            assert path.resolve() in digest_sources, path


def test_the_shipped_machine_code_plays_the_same_games(
    warm_cache: tuple[Path, str], tmp_path: Path
) -> None:
    """A fresh cache on a machine the wheel's code suits loads the shipped code, compiles
    nothing (no entry is saved) and plays what the locally compiled code plays."""
    if jit_cache.precompiled() is None:
        # On a user's other machine only: CI's machine is one the shipped code suits.
        assert not os.environ.get("UNO_LAB_CI"), "no shipped machine code suits CI's machine"
        pytest.skip("no shipped machine code suits this machine")
    _, games = warm_cache
    root = tmp_path / "fresh"
    played = subprocess.run(
        [sys.executable, "-c", _PLAY_A_FEW_GAMES],
        env={**os.environ, "UNO_LAB_CACHE_DIR": str(root)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert (played.returncode, played.stderr, played.stdout) == (0, "", games)
    assert not list(root.rglob("*.nbi")), "nothing was compiled"
