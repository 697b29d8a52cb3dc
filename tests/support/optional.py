"""Optional parts of a test (Ray, the browser): skip on a user's machine, fail in CI.

CI exports ``UNO_LAB_CI=1`` (see ``.ci/run``); there a missing part is a failure, so a test
can never silently skip in CI.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest

__all__ = ["in_ci", "require", "require_program"]


def in_ci() -> bool:
    """Whether the suite runs in CI (``UNO_LAB_CI=1``)."""
    return os.environ.get("UNO_LAB_CI", "") not in ("", "0")


def _missing(what: str, why: str) -> None:
    message = f"{what} is missing: {why}"
    if in_ci():
        pytest.fail(f"{message} (UNO_LAB_CI is set: a missing part fails in CI)")
    pytest.skip(message)


def require(module: str, why: str) -> object:
    """Import ``module``, or skip (fail in CI) saying why the test needs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        _missing(f"the module {module}", why)
        raise  # unreachable: skip and fail raise


def require_program(name: str, why: str, candidates: tuple[str, ...] = ()) -> Path:
    """The path of a program (one of ``candidates``, else ``name`` on PATH), or skip/fail."""
    for candidate in candidates:
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    found = shutil.which(name)
    if found is None:
        _missing(f"the program {name}", why)
        raise AssertionError("unreachable")
    return Path(found)
