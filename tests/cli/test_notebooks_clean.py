"""Notebooks are committed with their outputs, from one clean run, so readers see the plots.

CI also executes them (nbmake); these checks keep the committed outputs honest: every code
cell ran, in order, without an error.
"""

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
        "05_bring_your_own_agent",
        "06_house_rules_study",
    } <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_come_from_one_clean_run(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    counts = [cell.execution_count for cell in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: rerun it top to bottom"
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", f"{path.name}: a cell failed"
            text = "".join(output.get("text", ""))
            assert "Warning" not in text, f"{path.name}: a warning in the outputs: {text[:200]}"
    assert any(cell.outputs for cell in code), f"{path.name}: no outputs"


def test_the_docs_site_lists_every_notebook() -> None:
    listed = (ROOT / "mkdocs.yml").read_text()
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}" in listed, path.name
