"""Shared pytest set-up for the suite, whose folders mirror the lab's layers.

``tests/core`` (rules, observation, invariants, differential and property tests),
``tests/envs``, ``tests/agents``, ``tests/train``, ``tests/tournament`` and ``tests/cli``;
the golden results and the import contract sit at the top. Shared helpers live in the
``support`` package next to this file. The repository's tools (``tools/``: the docs
generators and measurement commands, not part of the installed package) are importable by
their file names (``import published``), as when they run as scripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # ``import support`` from every folder, any import mode
    sys.path.insert(0, str(TESTS))
TOOLS = TESTS.parent / "tools"
if str(TOOLS) not in sys.path:  # ``import published``: a tool imports its siblings so too
    sys.path.append(str(TOOLS))
