"""The built wheel, installed into a fresh venv, used from a folder that is not the checkout.

The wheel must expose exactly ``uno_env`` and ``unolab`` and carry what the commands use
(the shipped agents, the configs, the web files). The commands then run from a folder
holding its own ``agents/`` package and ``train.py``, as a user's RL project often does:
neither may be imported. Installing needs the package index the set-up uses (pip's cache
makes it quick); where pip cannot install, the test skips, except in CI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from support import ROOT
from support.optional import in_ci

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

SHIPPED_AGENTS = ("ppo_official_2p", "ppo_official_2p_exit", "ppo_official_4p", "dqn_official_2p")
TRAPS = {
    "agents/__init__.py": 'raise ImportError("the project\'s own agents package was imported")\n',
    "train.py": 'raise SystemExit("the project\'s own train.py ran")\n',
    "tournament.py": 'raise SystemExit("the project\'s own tournament.py ran")\n',
}
"""A user's project: modules named like the lab's folders, which the lab must not import."""


def _run(*argv: str | Path, cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the checkout (a build writes beside its sources)."""
    source = tmp_path_factory.mktemp("source") / "uno-lab"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = out.glob("uno_lab-*.whl")
    return found


_NOT_SOURCES = (".git", ".venv", "runs", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with torch==2.13.0 (first, as the set-up does) and the wheel with [web]."""
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q"]
    for args in (["torch==2.13.0"], [f"{wheel}[web]"]):
        done = subprocess.run([*pip, *args], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            message = f"pip install {' '.join(args)} failed: {done.stderr.strip()[-500:]}"
            if in_ci():
                pytest.fail(message)
            pytest.skip(message)
    return where


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    for name, text in TRAPS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """No PYTHONPATH (the checkout must not leak in); its own compile cache and HOME."""
    home = tmp_path_factory.mktemp("home")
    out = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return out | {"HOME": str(home), "UNO_LAB_CACHE_DIR": str(home / "cache")}


def test_the_wheel_exposes_two_packages_and_carries_the_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"uno_env", "unolab"}
    for agent in SHIPPED_AGENTS:
        for suffix in (".safetensors", ".json"):
            assert f"unolab/agents/pretrained/{agent}{suffix}" in names
    for config in ("ppo/quick", "ppo/tiny", "dqn/tiny", "imitate/tiny", "rules/street"):
        assert f"unolab/configs/{config}.yaml" in names
    assert "unolab/configs/tournament/bots_round_robin.yaml" in names
    assert {
        "unolab/web/static/index.html",
        "unolab/web/static/js/main.js",
        "unolab/web/strength.json",
        "unolab/py.typed",
        "uno_env/py.typed",
    } <= set(names)
    for layer in ("agents", "train", "tournament", "benchmarks"):
        assert f"unolab/{layer}/__init__.py" in names
        assert not any(name.startswith(f"{layer}/") for name in names)


def test_the_commands_work_from_a_users_project(
    venv: Path, project: Path, env: dict[str, str]
) -> None:
    bin_ = venv / "bin"
    out = _run(bin_ / "uno-lab", "--version", cwd=project, env=env)
    assert out.split() == ["uno-lab", _version()]

    # A tournament of a shipped network, the search guided by a shipped network, and a bot.
    out = _run(
        bin_ / "uno-lab", "tournament", "--name", "t",
        "--participants", "ppo_official_2p", "pimc_guided", "mixbot",
        "--deal-sets", "2", "--output-dir", "out", "--no-progress", "--no-plots",
        cwd=project, env=env,
    )  # fmt: skip
    assert "played 12 games" in out
    for name in ("ppo_official_2p", "pimc_guided", "mixbot"):
        assert name in out
    assert (project / "out" / "t" / "summary.json").is_file()

    # Training from a shipped config, named.
    out = _run(
        bin_ / "uno-lab", "train", "ppo", "--config", "tiny", "--set", "runs_dir=runs",
        "--no-progress", cwd=project, env=env,
    )  # fmt: skip
    assert (project / "runs" / "ppo_tiny" / "ppo_tiny.safetensors").is_file(), out

    # The library: a shipped agent by name.
    out = _run(
        bin_ / "python", "-c",
        "import unolab, uno_env\n"
        "from unolab.agents import load_policy\n"
        "policy = load_policy('ppo_official_2p')\n"
        "print(policy.meta.rules['num_players'], unolab.__file__, uno_env.__version__)",
        cwd=project, env=env,
    )  # fmt: skip
    players, where, version = out.split()
    assert players == "2" and str(venv) in where and version == _version()

    # python -m unolab, and the shipped configs.
    assert "usage: uno-lab" in _run(bin_ / "python", "-m", "unolab", cwd=project, env=env)
    listed = _run(bin_ / "uno-lab", "config", "list", cwd=project, env=env)
    assert "ppo/quick" in listed and "tournament/bots_round_robin" in listed


def test_serve_offers_the_shipped_agents(venv: Path, project: Path, env: dict[str, str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(venv / "bin" / "uno-lab"), "serve", "--port", str(port)],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                url = f"http://127.0.0.1:{port}/api/options"
                with urllib.request.urlopen(url, timeout=5) as answer:
                    options = __import__("json").loads(answer.read())
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "uno-lab serve did not answer"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)
    labels = {agent["label"] for agent in options["agents"]}
    assert {"ppo_official_2p", "ppo_official_4p", "mixbot", "pimc_guided"} <= labels


def test_a_missing_extra_names_its_install_command(
    venv: Path, project: Path, env: dict[str, str]
) -> None:
    """Without the web extra (its import blocked), ``serve`` says what to install."""
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sys\nsys.modules['uvicorn'] = None\nfrom unolab.cli import main\n"
            "sys.exit(main(['serve']))",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'uno-lab[web]'" in lines[0], done.stderr


def _version() -> str:
    import tomllib

    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])
