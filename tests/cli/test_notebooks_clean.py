"""Notebooks are committed with their outputs stripped (CI executes them with nbmake)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from support import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_research_notebooks_exist() -> None:
    names = {p.stem for p in NOTEBOOKS}
    assert {
        "01_quickstart",
        "02_train_and_evaluate",
        "03_tournament_analysis",
        "04_your_runs",
    } <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_are_stripped(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: strip outputs"
