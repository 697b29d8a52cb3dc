"""Helpers shared by the test suite.

* :data:`ROOT`: the repository root, for tests that read its files (configs, docs, README);
* :mod:`support.reference_engine`: a small scalar UNO engine, written independently of the
  batched core, for the differential tests;
* :mod:`support.scenarios`: the harness of the table-driven rule scenarios (stacked decks,
  scripted moves, expected states).

``tests/conftest.py`` puts ``tests/`` on ``sys.path``, so any test imports ``support``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT"]

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""
