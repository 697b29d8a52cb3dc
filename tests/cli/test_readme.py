"""Every Python example in the README runs (the README's commands are tested)."""

from __future__ import annotations

import re

import pytest
from support import ROOT

README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    namespace: dict[str, object] = {}
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), namespace)


def test_makefile_has_the_two_commands() -> None:
    makefile = (README.parent / "Makefile").read_text()
    assert re.search(r"^run:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)
    text = README.read_text()
    assert text.index("make run") < text.index("## ") and text.index("make test") < text.index(
        "## "
    )
