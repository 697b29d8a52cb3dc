"""The compiled core's contract: checked states, in-place steps, a cache keyed by the sources."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from uno_env import core, jit
from uno_env.core import IllegalActionError
from uno_env.rules import Rules
from uno_env.sampling import uniform_legal_actions


def test_a_state_built_by_hand_is_checked() -> None:
    state = core.init(Rules(), 3, seed=0)
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
    assert Path(jit.CACHE_DIR).name == jit._source_digest()
    copy = tmp_path / "uno_env"
    shutil.copytree(jit._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = jit._source_digest(copy)
    assert original == Path(jit.CACHE_DIR).name
    sources = {f.relative_to(copy).as_posix() for f in jit._compiled_sources(copy)}
    assert {"jit.py", "cards.py", "rng.py", "sampling.py", "observation.py"} <= sources
    assert not any(name.startswith("envs/") for name in sources)

    def digest_after(edit: Path, text: str) -> str:
        before = edit.read_text() if edit.exists() else None
        edit.write_text(text)
        try:
            return jit._source_digest(copy)
        finally:
            if before is None:
                edit.unlink()
            else:
                edit.write_text(before)

    edited = [copy / "jit.py", copy / "cards.py", *sorted((copy / "core").glob("*.py"))]
    for file in edited:  # every core file, the compiler and the constants it reads
        assert digest_after(file, file.read_text() + "\n# an edit\n") != original, file.name
    assert digest_after(copy / "core" / "new_rules.py", "X = 1\n") != original
    assert jit._source_digest(copy) == original

    # A new compiled module anywhere in the package is found by its import of uno_env.jit,
    # and so are the modules it imports (absolute or relative), which it may compile in.
    (copy / "kernels.py").write_text(
        "from uno_env.jit import jit\nfrom uno_env import tallies\nfrom .limits import CAP\n"
    )
    (copy / "tallies.py").write_text("WEIGHTS = 1\n")
    (copy / "limits.py").write_text("CAP = 2\n")
    with_kernels = jit._source_digest(copy)
    assert with_kernels != original
    for name in ("tallies.py", "limits.py"):
        assert digest_after(copy / name, "CHANGED = 3\n") != with_kernels, name

    # Modules the compiled code does not import, users of the core included, leave it alone.
    (copy / "tool.py").write_text("from uno_env import core\nfrom uno_env.core import step\n")
    assert jit._source_digest(copy) == with_kernels
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
    import os
    import subprocess
    import sys

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
