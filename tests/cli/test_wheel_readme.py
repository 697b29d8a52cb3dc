"""The README's "Five minutes" and every notebook, run from the installed wheel in an empty folder.

A user runs ``pip install uno-lab`` and then types the README's commands in a folder of their
own: nothing of the checkout is there. This test builds the wheel, installs it (``--no-deps``)
into a fresh venv whose site-packages also sees the project's ``.venv`` (a ``.pth`` line, so
torch and the other dependencies are not downloaded again), and from an empty folder runs

* every command of the README's "Five minutes" block, read from README.md itself, so a line
  added there that fails from a wheel (a checkout's path, a missing config) fails here; the
  long ones get small budgets through their documented options (``--set total_steps=...``,
  ``--deal-sets``, ``--steps``), everything else runs as written;
* ``uno-lab play`` in a pseudo-terminal: one move, then ``q``; ``uno-lab replay`` on a game
  recorded that way; ``uno-lab serve`` on a free port, asked for its page over HTTP, stopped;
* every notebook under notebooks/, in a kernel of that venv, in an empty folder.

One compile cache (``UNO_LAB_CACHE_DIR``, in a temporary folder) serves every command, so
only the first one compiles the engine cold.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pytest
from support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3000)]

README = ROOT / "README.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
COMMAND_TIMEOUT = 1200
"""Seconds for one command; the first compiles the engine (minutes on a busy machine)."""

BUDGETS: dict[tuple[str, ...], list[str]] = {
    ("train", "ppo"): [
        *("--set", "total_steps=512", "--set", "num_envs=8", "--set", "eval.games=8"),
        *("--set", "eval.every=512", "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=128"),
        "--no-progress",
    ],
    ("train", "imitate"): [
        *("--set", "samples=2000", "--set", "games_per_batch=64", "--set", "epochs=1"),
        *("--set", "net_arch=[16]", "--set", "eval_games=8", "--set", "eval_bots=[random]"),
        "--no-progress",
    ],
    ("tournament",): ["--deal-sets", "2", "--no-progress", "--no-plots"],
    ("exploit",): [
        *("--steps", "512", "--hands", "20", "--curve-points", "1", "--curve-hands", "10"),
        *("--num-envs", "8", "--rollouts", "2", "--search-hands", "4", "--no-progress"),
    ],
    ("bench", "engine"): ["--seconds", "0.3", "--repeats", "1", "--batch-sizes", "8"],
}
"""Small budgets for the README's long commands, through their documented options; a command
not listed runs exactly as the README writes it."""


def five_minutes() -> list[list[str]]:
    """The commands of the README's "Five minutes" section (its first ``bash`` block)."""
    section = re.search(r"^## Five minutes\n(.*?)(?=^## )", README.read_text(), re.M | re.S)
    assert section, 'README.md has no "## Five minutes" section'
    block = re.search(r"```bash\n(.*?)```", section.group(1), re.S)
    assert block, 'the "Five minutes" section has no bash block'
    commands = [
        shlex.split(line, comments=True)
        for line in block.group(1).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands and all(cmd[0] == "uno-lab" for cmd in commands), commands
    return commands


@dataclass(frozen=True)
class Installed:
    """The venv holding the wheel, an empty folder to run in, and the environment to use."""

    venv: Path
    folder: Path
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def uno_lab(self) -> Path:
        return self.venv / "bin" / "uno-lab"


_NOT_SOURCES = (".git", ".venv", "runs", "build", "dist", "site", "*.egg-info", "__pycache__")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """Build the wheel from a copy of the checkout and install it into a fresh venv."""
    # A build writes build/ and *.egg-info beside its sources: build from a copy.
    source = tmp_path_factory.mktemp("source") / "uno-lab"
    ignore = shutil.ignore_patterns(*_NOT_SOURCES, ".*_cache")
    shutil.copytree(ROOT, source, symlinks=True, ignore=ignore)
    wheels = tmp_path_factory.mktemp("wheel")
    build = ["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)]
    _check([sys.executable, "-m", "pip", *build], "building the wheel")
    (wheel,) = wheels.glob("uno_lab-*.whl")

    venv = tmp_path_factory.mktemp("venv") / "v"
    _check([sys.executable, "-m", "venv", "--without-pip", str(venv)], "making the venv")
    # The project's dependencies, seen through a .pth line (appended after the venv's own
    # site-packages, so the wheel's packages come first; the .pth files of the project's
    # venv, such as its editable install of the checkout, are not run).
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    deps = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "uno_lab_test_deps.pth").write_text("\n".join(deps) + "\n")
    # The project's pip installs into the new venv (made without pip: quicker).
    install = ["--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index"]
    _check([sys.executable, "-m", "pip", *install, "-q", str(wheel)], "installing the wheel")

    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {
        "HOME": str(home),
        "UNO_LAB_CACHE_DIR": str(home / "compiled"),  # one cache: only the first compiles
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "MPLBACKEND": "Agg",
        "TERM": "xterm",
    }
    folder = tmp_path_factory.mktemp("empty")
    yield Installed(venv, folder, env)


def _check(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{what} failed:\n{done.stdout}\n{done.stderr}"


def _run(installed: Installed, argv: list[str]) -> str:
    """Run a command in the empty folder; it must exit 0 with no traceback and no error."""
    done = subprocess.run(
        argv,
        cwd=installed.folder,
        env=installed.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    shown = shlex.join(str(a) for a in argv[1:])
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"uno-lab {shown}: exit {done.returncode}\n{out[-4000:]}"
    assert "Traceback" not in out and "error:" not in out, f"uno-lab {shown}:\n{out[-4000:]}"
    return out


def test_the_wheel_is_what_runs(installed: Installed) -> None:
    """The commands below import the wheel's packages, not the checkout's."""
    out = _run(
        installed,
        [str(installed.python), "-c", "import unolab, uno_env; print(unolab.__file__); print(uno_env.__file__)"],
    )  # fmt: skip
    for line in out.split():
        assert Path(line).is_relative_to(installed.venv), out
    assert not any(installed.folder.iterdir()), "the folder must start empty"


def _play(installed: Installed, args: list[str]) -> str:
    """``uno-lab play`` in a pseudo-terminal: make one move, then quit with ``q``."""
    child = pexpect.spawn(
        str(installed.uno_lab),
        [*args, "--seed", "5", "--no-colour"],
        cwd=str(installed.folder),
        env=installed.env,
        encoding="utf-8",
        timeout=COMMAND_TIMEOUT,
    )
    transcript: list[str] = []
    for answer in ("1", "q"):
        child.expect(r"Your move \(")
        transcript.append(child.before or "")
        child.sendline(answer)
    child.expect(pexpect.EOF)
    transcript.append(child.before or "")
    child.close()
    text = "".join(transcript)
    assert child.exitstatus == 0, text[-4000:]
    assert "Traceback" not in text and "error:" not in text, text[-4000:]
    return text


def _serve(installed: Installed, args: list[str]) -> None:
    """``uno-lab serve`` on a free port: its page answers over HTTP; then it stops."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(installed.uno_lab), *args, "--port", str(port)],
        cwd=installed.folder,
        env=installed.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
                    status, body = page.status, page.read().decode("utf-8")
                break
            except OSError:
                assert server.poll() is None, f"uno-lab serve exited: {server.communicate()[1]}"
                assert time.monotonic() < deadline, "uno-lab serve did not answer"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert status == 200 and "<html" in body.lower(), body[:500]


def test_the_readmes_five_minutes_run_from_the_wheel(installed: Installed) -> None:
    commands = five_minutes()
    assert {cmd[1] for cmd in commands} >= {"play", "train", "tournament", "serve"}
    for cmd in commands:
        args = cmd[1:]
        if args[0] == "play":
            _play(installed, args)
        elif args[0] == "serve":
            _serve(installed, args)
        elif args[0] == "replay":
            # The game it names, saved as its comment says (uno-lab play --record FILE).
            if not (installed.folder / args[1]).exists():
                _play(installed, ["play", "--record", args[1]])
            out = _run(installed, [str(installed.uno_lab), *args])
            assert f"Replay of {args[1]}" in out, out[:500]
        elif "my_model.yaml" in args:  # a language model: the scripted chat server plays it
            from unolab.benchmarks.chat_server import chat_server

            with chat_server() as server:
                spec = installed.folder / "my_model.yaml"
                spec.write_text(f"llm:\n  model: test-model\n  base_url: {server.base_url}\n")
                _run(installed, [str(installed.uno_lab), *args, *BUDGETS[("tournament",)]])
                assert server.served.requests > 0
        else:
            extra = next(
                (budget for key, budget in BUDGETS.items() if tuple(args[: len(key)]) == key), []
            )
            _run(installed, [str(installed.uno_lab), *args, *extra])


def test_a_line_that_fails_from_the_wheel_fails_here(installed: Installed) -> None:
    """What a README line naming a missing config would meet: one line, exit 2, caught."""
    missing = [str(installed.uno_lab), "train", "ppo", "--config", "configs/ppo/missing.yaml"]
    with pytest.raises(AssertionError, match="exit 2") as failed:
        _run(installed, missing)
    assert "config file 'configs/ppo/missing.yaml' does not exist" in str(failed.value)
    assert "uno-lab config list" in str(failed.value)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_a_notebook_runs_from_the_wheel(
    installed: Installed, notebook: Path, tmp_path: Path
) -> None:
    """The notebook, alone in an empty folder, in a kernel of the venv holding the wheel."""
    folder = tmp_path / "nb"
    folder.mkdir()
    shutil.copy(notebook, folder / notebook.name)
    # nbclient from the venv: the python3 kernel is the interpreter that starts it. A last
    # cell says where unolab came from.
    script = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "book = nbformat.read(sys.argv[1], as_version=4)\n"
        "book.cells.append(nbformat.v4.new_code_cell('import unolab; print(unolab.__file__)'))\n"
        "NotebookClient(book, timeout=900, kernel_name='python3',\n"
        "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "print('unolab from', book.cells[-1].outputs[0]['text'].strip())\n"
    )
    out = _run_in(installed, folder, [str(installed.python), "-c", script, notebook.name, "."])
    where = out.rpartition("unolab from ")[2].strip()
    assert Path(where).is_relative_to(installed.venv), out[-2000:]


def _run_in(installed: Installed, folder: Path, argv: list[str]) -> str:
    done = subprocess.run(
        argv,
        cwd=folder,
        env=installed.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    return out
