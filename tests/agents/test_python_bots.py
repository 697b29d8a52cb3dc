"""Bots named by their Python class: ``file.py:ClassName`` and ``package.module:ClassName``.

The one resolver (:func:`unolab.agents.make_agent`, under :func:`resolve_policy`,
:func:`policy_factory`, the tournament and ``uno-lab play``) builds them, and every way a
class can fail to be a bot is one line naming the spec and what is wrong.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.bot_files import write_bot_file

from uno_env.policy import Policy
from unolab.agents import make_agent, policy_factory, resolve_opponents, resolve_policy
from unolab.agents.python_bots import (
    canonical_class_spec,
    class_spec_name,
    is_class_spec,
    load_bot_class,
)
from unolab.agents.registry import is_agent_spec
from unolab.cli import build_parser


@pytest.fixture
def bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A bot file in the working folder, and the same file as a package's module (forgotten
    after the test)."""
    write_bot_file(tmp_path)
    package = tmp_path / "lib" / "my_package"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    write_bot_file(package, "bots.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    yield tmp_path
    for name in ("my_package.bots", "my_package"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(
    ("spec", "is_class"),
    [
        ("my_bots.py:MyBot", True),
        ("path/to/file.py:Bot", True),
        ("/abs/path/file.PY:Bot", True),
        ("C:\\bots\\file.py:Bot", True),
        ("my_package.bots:MyBot", True),
        ("pimc:2048", False),
        ("pimc:rollouts=8,prior_weight=0.1", False),
        ("mixbot", False),
        ("runs/x/x.safetensors", False),
        ("my_bots.py", False),
        ("my_bots.py:", False),
        (":MyBot", False),
        ("my_bots.py:class", False),
        ("my-bots:MyBot", False),
        ("my_bots.py:My.Bot", False),
    ],
)
def test_the_class_form_is_told_by_its_shape(spec: str, is_class: bool) -> None:
    assert is_class_spec(spec) is is_class


def test_a_file_class_is_built_by_every_resolver(bots: Path) -> None:
    agent = make_agent("my_bots.py:FirstLegal")
    assert type(agent).__name__ == "FirstLegal" and agent.name == "first_legal"
    assert isinstance(agent, Policy)
    assert is_agent_spec("my_bots.py:FirstLegal")
    masks = np.zeros((3, 80), dtype=bool)
    masks[:, [5, 60]] = True
    assert agent.act(np.zeros((3, 1), np.float32), masks).tolist() == [5, 5, 5]
    assert resolve_policy("my_bots.py:RandomLegal", seed=7).seed == 7  # type: ignore[attr-defined]
    factory = policy_factory("my_bots.py:RandomLegal")
    assert factory.name == "my_bots.py:RandomLegal"
    assert factory(11).seed == 11  # type: ignore[attr-defined]
    (opponent,) = resolve_opponents(["my_bots.py:FirstLegal"])  # type: ignore[misc]
    assert opponent(0).name == "first_legal"


def test_a_files_factory_rebuilds_it_from_another_folder(bots: Path, tmp_path: Path) -> None:
    """The factory names the file by its absolute path: a worker in another working folder
    (or a pickled env) builds the same class."""
    factory = pickle.loads(pickle.dumps(policy_factory("my_bots.py:RandomLegal")))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chdir(elsewhere)
    assert factory(3).name == "random_legal"
    assert canonical_class_spec("my_bots.py:X") == f"{elsewhere.resolve()}/my_bots.py:X"
    assert canonical_class_spec("my_package.bots:X") == "my_package.bots:X"
    assert canonical_class_spec("pimc:2048") == "pimc:2048"
    assert class_spec_name("/a/b.py:MyBot") == "MyBot"


def test_a_modules_class_is_imported(bots: Path) -> None:
    agent = resolve_policy("my_package.bots:FirstLegal")
    assert agent.name == "first_legal"
    assert type(agent).__module__ == "my_package.bots"


def test_a_file_runs_once_and_again_when_it_changes(bots: Path) -> None:
    first = load_bot_class("my_bots.py:FirstLegal")
    loads = sys.modules[first.__module__].LOADS
    assert load_bot_class("my_bots.py:RandomLegal").__module__ == first.__module__
    assert loads == [1]  # the second class came from the same run of the file
    path = bots / "my_bots.py"
    path.write_text(path.read_text() + "\n# edited\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    again = load_bot_class("my_bots.py:FirstLegal")
    assert again is not first and sys.modules[again.__module__].LOADS == [1]


def test_a_registered_name_comes_before_the_class_form(bots: Path) -> None:
    assert make_agent("pimc:32").name == "pimc:32"
    with pytest.raises(ValueError, match="'mixbot' takes no options"):
        make_agent("mixbot:FirstLegal")


BAD_SPECS = [
    ("gone.py:Bot", "agent 'gone.py:Bot': the bot file 'gone.py' does not exist"),
    ("lib.py:Bot", "agent 'lib.py:Bot': the bot file 'lib.py' does not exist"),
    (
        "lib/my_package:Bot",
        "agent 'lib/my_package:Bot' is neither an exported agent nor a Python class "
        "(path/to/file.py:ClassName or package.module:ClassName)",
    ),
    (
        "no_such_module:Bot",
        "agent 'no_such_module:Bot': no module named 'no_such_module'; install it or add its "
        "folder to PYTHONPATH, or name a file by its path: path/to/file.py:Bot",
    ),
    (
        "my_bots:FirstLegal",
        "agent 'my_bots:FirstLegal': no module named 'my_bots'; to load the file my_bots.py "
        "give its path: my_bots.py:FirstLegal",
    ),
    ("my_bots.py:Nope", "agent 'my_bots.py:Nope': 'my_bots.py' has no class 'Nope'; its "),
    ("my_bots.py:not_a_class", "'not_a_class' in 'my_bots.py' is a function, not a class"),
    (
        "my_bots.py:NoReset",
        "agent 'my_bots.py:NoReset': class NoReset is not an agent: it lacks reset(); an "
        "agent has a name (str), act(observations, masks) and reset(games=None)",
    ),
    ("json:JSONDecoder", "class JSONDecoder is not an agent: it lacks act() and reset()"),
    ("my_bots.py:NoName", "class NoName is not an agent: its objects have no name"),
    (
        "my_bots.py:NeedsWidth",
        "agent 'my_bots.py:NeedsWidth': NeedsWidth() requires width; an agent is built as "
        "NeedsWidth(seed=...) or NeedsWidth(): give it a default",
    ),
    (
        "my_bots.py:Explodes",
        "agent 'my_bots.py:Explodes': Explodes(seed=0) failed: RuntimeError: no cards today",
    ),
    ("broken.py:Bot", "agent 'broken.py:Bot': loading 'broken.py' failed: SyntaxError: "),
    ("quits.py:Bot", "agent 'quits.py:Bot': loading 'quits.py' failed: SystemExit: 3"),
    (
        "imports.py:Bot",
        "agent 'imports.py:Bot': loading 'imports.py' failed: ModuleNotFoundError: No module "
        "named 'not_installed_anywhere'",
    ),
]


@pytest.mark.parametrize(("spec", "says"), BAD_SPECS)
def test_each_failure_is_one_line_naming_the_spec(bots: Path, spec: str, says: str) -> None:
    (bots / "broken.py").write_text("def bot(:\n")
    (bots / "quits.py").write_text("raise SystemExit(3)\n")
    (bots / "imports.py").write_text("import not_installed_anywhere\n")
    with pytest.raises(ValueError) as caught:
        resolve_policy(spec)
    message = str(caught.value)
    assert says in message and "\n" not in message, message


def test_uno_lab_play_refuses_a_bad_class_in_one_line_before_dealing(bots: Path) -> None:
    """``uno-lab play --opponents`` resolves each opponent first: a bad class is the
    ValueError that ``uno-lab`` prints as its one ``error:`` line."""
    args = build_parser().parse_args(["play", "--opponents", "my_bots.py:NoReset"])
    with pytest.raises(ValueError) as caught:
        args.func(args, [])
    message = str(caught.value)
    assert "class NoReset is not an agent: it lacks reset()" in message and "\n" not in message
