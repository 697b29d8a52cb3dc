"""The import contract: layers only look down, and no package imports itself in a circle.

The layers, bottom to top: ``uno_env`` < ``unolab.agents`` < ``unolab.train`` <
``unolab.tournament`` < ``unolab.benchmarks`` < ``unolab`` (the commands and the web table)
< ``tools`` (the repository's tools: docs generators and measurements, not installed; they
import each other by file name, as a script's folder is on ``sys.path``).
The middle four live in the repository's top-level folders and install under ``unolab``; no
module imports them by their folder's name. A module may import its own layer and those
below it, never one above. Every import counts, at module level, inside a function (a function-level import of
a higher layer is still a dependency on it) or for type checking only. Within each package
the graph of runtime imports (``if TYPE_CHECKING:`` blocks left out) must have no cycle.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT

LAYERS = (
    "uno_env",
    "unolab.agents",
    "unolab.train",
    "unolab.tournament",
    "unolab.benchmarks",
    "unolab",
    "tools",
)
FOLDERS = {"unolab.agents": "agents", "unolab.train": "train"} | {
    "unolab.tournament": "tournament",
    "unolab.benchmarks": "benchmarks",
}
"""Where each installed layer's code is in the repository (``unolab/<layer>`` links to it)."""


def layer_of(module: str) -> str:
    """The layer a lab module belongs to: the longest layer name it starts with."""
    return max(
        (layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), key=len
    )


def _modules() -> dict[str, Path]:
    out = {}
    for layer in LAYERS:
        folder = ROOT / FOLDERS.get(layer, layer)
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if layer == "unolab" and parts[0] in {f.split(".")[1] for f in FOLDERS}:
                continue  # a link to a layer of its own
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([layer, *parts])] = path
    return out


MODULES = _modules()
TOOLS = {path.stem: name for name, path in MODULES.items() if layer_of(name) == "tools"}
"""The tools by the name they import each other by (``import published``)."""


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return out


def _imports(name: str, path: Path, runtime_only: bool = False) -> Iterator[tuple[str, int]]:
    """The lab modules that ``name`` imports, with the line of each import."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield TOOLS.get(alias.name, alias.name), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            base = TOOLS.get(base, base)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in MODULES else base), node.lineno


def _edges(runtime_only: bool = False) -> list[tuple[str, str, int]]:
    out = []
    for name, path in MODULES.items():
        for target, line in _imports(name, path, runtime_only):
            while target and target not in MODULES:  # a.b.c imports a.b's __init__ too
                target = target.rpartition(".")[0]
            if target and target != name:
                out.append((name, target, line))
    return out


EDGES = _edges()
RUNTIME_EDGES = _edges(runtime_only=True)


def test_the_contract_sees_every_layer() -> None:
    assert {layer_of(name) for name in MODULES} == set(LAYERS)
    assert len(EDGES) > 100
    for layer, folder in FOLDERS.items():  # the installed name is the repository's folder
        assert (ROOT / "unolab" / layer.split(".")[1]).resolve() == (ROOT / folder).resolve()


def test_no_module_imports_a_layer_by_its_folders_name() -> None:
    """``from agents import ...`` would work in a checkout only, and load a second copy."""
    wrong = [
        f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
        for name, path in MODULES.items()
        for target, line in _imports(name, path)
        if target.split(".")[0] in set(FOLDERS.values())
    ]
    assert not wrong, "import the layers as unolab.<layer>:\n" + "\n".join(wrong)


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_a_layer_imports_no_layer_above_it(layer: str) -> None:
    above = set(LAYERS[LAYERS.index(layer) + 1 :])
    wrong = [
        f"{MODULES[src].relative_to(ROOT)}:{line} imports {dst}"
        for src, dst, line in EDGES
        if layer_of(src) == layer and layer_of(dst) in above
    ]
    assert not wrong, "layers only look down:\n" + "\n".join(wrong)


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES if layer_of(m) == package}
    for src, dst, _ in RUNTIME_EDGES:
        if src in graph and dst in graph:
            graph[src].add(dst)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle in {package}: {' -> '.join(err.args[1])}")


def test_the_contract_would_catch_a_violation(tmp_path: Path) -> None:
    """The checker itself: an upward import and a cycle are found in a made-up module."""
    source = (
        "from typing import TYPE_CHECKING\nfrom unolab.train.config import TrainConfig\n"
        "if TYPE_CHECKING:\n    from unolab.agents import Policy\n"
        "def f():\n    import unolab.cli\n    from published import main\n"
    )
    path = tmp_path / "bad.py"
    path.write_text(source)
    found = {target for target, _ in _imports("uno_env.bad", path)}
    assert {"unolab.train.config", "unolab.cli", "unolab.agents", "tools.published"} <= found
    assert {layer_of(t) for t in found if t in MODULES} >= {"unolab.train", "unolab", "tools"}
    runtime = {target for target, _ in _imports("uno_env.bad", path, runtime_only=True)}
    assert "unolab.agents" not in runtime and "unolab.cli" in runtime


def test_code_outside_the_engine_reaches_the_core_through_its_kernel_api() -> None:
    """Outside ``uno_env``, ``uno_env.core`` and ``uno_env.core.kernel`` only: the rest of
    the core is internal, and compiled callers see only the declared kernel API."""
    allowed = {"uno_env.core", "uno_env.core.kernel"}
    wrong = [
        f"{MODULES[src].relative_to(ROOT)}:{line} imports {dst}"
        for src, dst, line in EDGES
        if layer_of(src) != "uno_env" and dst.startswith("uno_env.core") and dst not in allowed
    ]
    assert not wrong, "use uno_env.core or uno_env.core.kernel:\n" + "\n".join(wrong)
