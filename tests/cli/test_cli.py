"""The ``uno-lab`` command line, including a real terminal session driven through pexpect."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from support import ROOT

from unolab.cli import main
from unolab.shipped_configs import CONFIGS_DIR as SHIPPED


@pytest.mark.parametrize(
    "command", ["train", "tournament", "exploit", "play", "bench", "rules", "replay"]
)
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: uno-lab" in capsys.readouterr().out


# A command line's --help, and options it must list: those of the command it runs.
HELP_SHOWS: dict[str, list[str]] = {
    "train ppo --help": ["--config", "--set", "--resume", "--no-progress"],
    "train dqn --help": ["--config", "--set", "--resume"],
    "tournament --help": [
        "usage: uno-lab tournament",
        "--participants",
        "--deal-sets",
        "--sprt",
        "--fresh",
    ],
    "bench engine --help": [
        "usage: uno-lab bench engine",
        "--repeats",
        "--seconds",
        "--batch-sizes",
    ],
    "bench tournament --help": ["usage: uno-lab bench tournament", "--workers", "--games"],
    "bench --help": ["usage: uno-lab bench", "engine", "envs", "tournament", "inference"],
    "bench inference --help": ["usage: uno-lab bench inference", "--deals", "--bot"],
    "train --help": ["usage: uno-lab train", "ppo", "dqn"],
}


@pytest.mark.parametrize("command_line", HELP_SHOWS)
def test_help_shows_the_real_options(command_line: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` of a forwarding subcommand lists the options of the command it runs."""
    with pytest.raises(SystemExit) as exit_:
        main(command_line.split())
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in HELP_SHOWS[command_line]:
        assert option in out


def test_domain_errors_become_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever domain error a command raises, uno-lab prints one line and returns 2."""
    import uno_env.rules
    from uno_env.config_values import ConfigError

    for error in (
        ConfigError("bad key 'x'\nallowed: a, b"),
        FileNotFoundError(2, "No such file or directory", "gone.yaml"),
        IsADirectoryError(21, "Is a directory", "a_dir"),
        PermissionError(13, "Permission denied", "locked.yaml"),
    ):

        def fail(*args: object, error: Exception = error, **kwargs: object) -> None:
            raise error

        monkeypatch.setattr(uno_env.rules, "rules_table", fail)
        assert main(["rules"]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("uno-lab rules: error: "), captured.err
        assert "Traceback" not in captured.err + captured.out


# uno-lab train's words -> the training command and the options it gets (None: the words
# after "train", unchanged).
TRAIN_DISPATCH: list[tuple[list[str], str, list[str] | None]] = [
    (
        ["train", "ppo", "--config", "configs/ppo/tiny.yaml"],
        "ppo",
        ["--config", "configs/ppo/tiny.yaml"],
    ),
    # A shipped config's name, with or without its kind, and no config at all: the default.
    (["train", "ppo", "--config", "tiny"], "ppo", ["--config", str(SHIPPED / "ppo/tiny.yaml")]),
    (["train", "--config", "dqn/tiny"], "dqn", ["--config", str(SHIPPED / "dqn/tiny.yaml")]),
    (["train", "ppo"], "ppo", ["--config", str(SHIPPED / "ppo/quick.yaml")]),
    # The algorithm left out: the config's own (algorithm: ppo / dqn; teachers: imitate).
    (["train", "--config", "configs/ppo/tiny.yaml"], "ppo", ["--config", "configs/ppo/tiny.yaml"]),
    (["train", "--config=configs/dqn/tiny.yaml", "--no-progress"], "dqn", None),
    (
        ["train", "--set", "samples=100", "--config", "configs/imitate/tiny.yaml"],
        "imitate",
        ["--set", "samples=100", "--config", "configs/imitate/tiny.yaml"],
    ),
]


@pytest.mark.parametrize(("words", "algorithm", "options"), TRAIN_DISPATCH)
def test_train_runs_the_configs_algorithm(
    words: list[str],
    algorithm: str,
    options: list[str] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``uno-lab train --config FILE`` needs no algorithm: the config names it."""
    import unolab.train.imitate.run
    import unolab.train.run_cli

    calls: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(
        unolab.train.run_cli, "main", lambda alg, argv, prog: calls.append((alg, argv))
    )
    monkeypatch.setattr(
        unolab.train.imitate.run, "main", lambda argv, prog: calls.append(("imitate", argv))
    )
    monkeypatch.chdir(ROOT)
    assert main(words) == 0
    assert [call[0] for call in calls] == [algorithm]
    expected = options if options is not None else words[1:]
    assert calls[0][1] == expected


def test_train_resume_reads_the_runs_algorithm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import unolab.train.run_cli

    run_dir = tmp_path / "a_run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text("name: a_run\nalgorithm: dqn\n")
    calls: list[str] = []
    monkeypatch.setattr(unolab.train.run_cli, "main", lambda alg, argv, prog: calls.append(alg))
    assert main(["train", "--resume", str(run_dir)]) == 0
    assert calls == ["dqn"]


@pytest.mark.parametrize(
    ("words", "prefix"),
    [
        (["train", "dqn", "--config", "configs/ppo/quick.yaml"], "uno-lab train dqn: error: "),
        (
            ["train", "imitate", "--config", "configs/ppo/quick.yaml"],
            "uno-lab train imitate: error: configs/ppo/quick.yaml is a training config "
            "(algorithm: ppo), not an imitation config; train it with uno-lab train ppo",
        ),
    ],
)
def test_training_errors_name_the_command(
    words: list[str],
    prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A training command's own errors read like argparse's: ``<command>: error: ...``."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exit_:
        main(words)
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), lines


def test_ctrl_c_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uno_env.rules

    def interrupt() -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(uno_env.rules, "rules_table", interrupt)
    assert main(["rules"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "uno-lab rules: interrupted"


def test_closed_pipe_ends_quietly() -> None:
    """``uno-lab rules | head -1``: the reader goes away, uno-lab stops without a word."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unolab.cli", "rules"],
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before uno-lab writes its first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def _closing(fd: int) -> Callable[[], None]:
    return lambda: os.close(fd)


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
@pytest.mark.parametrize(
    "command",
    [("unolab.cli", "rules"), ("unolab.cli", "nonsense"), ("unolab.benchmarks.rlcard", "--help")],
    ids=["uno-lab-rules", "uno-lab-bad-command", "python-m-script"],
)
def test_a_closed_standard_stream_ends_quietly_before_anything_runs(
    tmp_path: Path, closed: int, command: tuple[str, str]
) -> None:
    """``uno-lab rules >&-``: nowhere to answer, so nothing runs and the exit is 120."""
    module, argument = command
    proc = subprocess.run(
        [sys.executable, "-m", module, argument],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        preexec_fn=_closing(closed),
        timeout=120,
    )
    assert proc.returncode == 120
    assert proc.stdout == b"" and proc.stderr == b""  # the open stream got no word either
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "argv", "status", "named"),
    [
        (
            "python tools/strength.py",
            ["--games", "2", "--bots", "random", "--out", "{tmp}/s.json", "--seed", str(2**64)],
            2,
            str(2**64),
        ),
        (
            "python -m unolab.benchmarks.inference",
            ["--games", "1", "--deals", "1", "--out", "{tmp}"],
            2,
            "a folder",
        ),
    ],
    ids=["a-library-refuses-a-value", "out-is-a-folder"],
)
def test_a_script_answers_an_input_error_in_one_line(
    tmp_path: Path, command: str, argv: list[str], status: int, named: str
) -> None:
    """An error a script does not answer itself still ends in one line, never a traceback."""
    words = [str(ROOT / w) if w.startswith("tools/") else w for w in command.split()[1:]]
    proc = subprocess.run(
        [sys.executable, *words, *(a.replace("{tmp}", str(tmp_path)) for a in argv)],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{command}: error: "), lines
    assert named in lines[0] and "Traceback" not in proc.stdout + proc.stderr


def test_strength_writes_outside_the_docs_by_default() -> None:
    import strength

    assert Path("runs/strength/bot_strength.json") == strength.DEFAULT_OUT
    help_text = strength.build_parser().format_help()
    assert "docs/bot_strength.json" in help_text and "runs/strength" in help_text


def test_rules_lists_every_switch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "stack_draw_two" in out and "seven_zero" in out and "Presets:" in out


def test_errors_say_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--opponents", "nobody"]) == 2
    assert "give a bot name" in capsys.readouterr().err
    assert main(["replay", "missing.json"]) == 2
    assert "uno-lab play --record" in capsys.readouterr().err
    assert main(["rules", "--preset", "nope"]) == 2


def test_terminal_play_full_game_and_replay(tmp_path: Path) -> None:
    """A real session in a pseudo-terminal: bad input re-prompts, the game plays to the end."""
    record = tmp_path / "game.json"
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "unolab.cli",
            "play",
            "--players",
            "3",
            "--opponents",
            "random",
            "mixbot",
            "--seed",
            "4",
            "--no-colour",
            "--record",
            str(record),
        ],
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
    )
    prompt = r"Your move \("  # the question itself, not the "Your moves:" list above it
    child.expect(prompt)
    assert "you" in child.before and "player_1" in child.before
    child.sendline("not-a-move")
    child.expect("Sorry")
    child.expect(prompt)
    child.sendline("99")  # out of range: asked again (the loop below answers)
    moves = 0
    while True:
        index = child.expect([prompt, "Game over", r"Deal the next hand\?"])
        if index == 1:
            break
        if index == 2:  # one hand is enough: stop the match there
            child.sendline("n")
            continue
        child.sendline("1")
        moves += 1
        assert moves < 2000
    child.expect(pexpect.EOF)
    assert record.is_file()
    replayed = pexpect.run(
        f"{sys.executable} -m unolab.cli replay {record}", cwd=str(ROOT), encoding="utf-8"
    )
    assert "Replay of" in replayed and ("won with" in replayed or "max_turns" not in replayed)


def test_version_and_bare_command(capsys: pytest.CaptureFixture[str]) -> None:
    import uno_env
    import unolab

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"uno-lab {unolab.__version__}"
    assert unolab.__version__ == uno_env.__version__ != "0+unknown"
    assert main([]) == 0  # a bare uno-lab prints the help, not an error
    out = capsys.readouterr().out
    assert out.startswith("usage: uno-lab") and "serve" in out


def test_python_dash_m_unolab_runs_the_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "unolab", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("uno-lab ")


@pytest.mark.parametrize(
    ("argv", "blocked", "extra"),
    [
        (["serve", "--port", "1"], ("uvicorn", "fastapi"), "web"),
        (["bench", "engine", "--seconds", "0.01", "--repeats", "1"], ("rlcard",), "bench"),
        (
            [
                "tournament",
                "--name",
                "t",
                "--participants",
                "random",
                "mixbot",
                "--backend",
                "ray",
                "--deal-sets",
                "1",
            ],
            ("ray",),
            "ray",
        ),
    ],
    ids=["web", "bench", "ray"],
)
@pytest.mark.timeout(120)  # a block that failed would start the real command
def test_a_missing_extra_names_its_install_command(
    argv: list[str],
    blocked: tuple[str, ...],
    extra: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An extra that is not installed: one line with the pip command, never a traceback."""
    monkeypatch.chdir(tmp_path)
    for module in blocked:  # None in sys.modules: "import uvicorn" raises ModuleNotFoundError
        for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, module, None)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().count("\n") == 0, err
    assert f"pip install 'uno-lab[{extra}]'" in err, err


def test_config_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "list"]) == 0
    listed = capsys.readouterr().out
    for name in (
        "ppo/quick",
        "ppo/tiny",
        "dqn/tiny",
        "imitate/tiny",
        "tournament/bots_round_robin",
    ):
        assert name in listed
    assert main(["config", "show", "ppo/quick"]) == 0
    assert capsys.readouterr().out == (SHIPPED / "ppo/quick.yaml").read_text()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["config", "show", "ppo/nope"], ["unknown config 'ppo/nope'", "ppo/quick"]),
        (["train", "ppo", "--config", "nope"], ["unknown config 'nope'", "ppo/quick", "ppo/tiny"]),
        (["tournament", "--config", "nope"], ["tournament/bots_round_robin"]),
        (["train", "--config", "tiny"], ["'tiny' names several shipped configs", "ppo/tiny"]),
    ],
)
def test_an_unknown_config_name_lists_the_shipped_ones(
    argv: list[str], says: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for fragment in says:
        assert fragment in err


def test_a_file_named_like_a_shipped_config_is_read_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import unolab.train.run_cli

    (tmp_path / "quick").write_text((SHIPPED / "ppo/tiny.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    calls: list[list[str]] = []
    monkeypatch.setattr(unolab.train.run_cli, "main", lambda alg, argv, prog: calls.append(argv))
    assert main(["train", "ppo", "--config", "quick"]) == 0
    assert calls == [["--config", "quick"]]
    assert "reading the file quick, not the shipped config of that name" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["train", "ppo", "--config", "configs/ppo/quick.yaml"], "ppo/quick"),
        (["train", "ppo", "--config", "./configs/ppo/quick.yaml"], "ppo/quick"),
        (["train", "ppo", "--config=ppo/quick.yaml"], "ppo/quick"),
        (["train", "ppo", "--config", "quick.yaml"], "ppo/quick"),
        (["train", "--config", "configs/dqn/tiny.yaml"], "dqn/tiny"),
        (["train", "imitate", "--config", "configs/imitate/mixbot_2p.yaml"], "imitate/mixbot_2p"),
        (["tournament", "--config", "configs/tournament/bots_round_robin.yaml"], None),
    ],
)
def test_a_checkout_path_run_elsewhere_is_the_shipped_config(
    argv: list[str],
    name: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A path from the docs of a checkout, run in a folder without it: the shipped config."""
    import unolab.train.imitate.run
    import unolab.train.run_cli
    from unolab.tournament import cli as tournament_cli

    calls: list[list[str]] = []
    monkeypatch.setattr(unolab.train.run_cli, "main", lambda alg, argv, prog: calls.append(argv))
    monkeypatch.setattr(unolab.train.imitate.run, "main", lambda argv, prog: calls.append(argv))
    monkeypatch.setattr(tournament_cli, "main", lambda argv: calls.append(list(argv)) or 0)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    expected = name or "tournament/bots_round_robin"
    (called,) = calls
    assert str(SHIPPED / f"{expected}.yaml") in " ".join(called)
    note = capsys.readouterr().err.strip().splitlines()
    assert len(note) == 1 and note[0].startswith("note: no file "), note
    assert f"using the shipped config {expected}" in note[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "ppo", "--config", "configs/ppo/nope.yaml"],
        ["train", "ppo", "--config", "my_quick.yaml"],
        ["tournament", "--config", "configs/tournament/nope.yaml"],
        ["config", "show", "configs/ppo/nope.yaml"],
    ],
)
def test_a_missing_config_file_says_so_and_points_at_the_list(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert f"config file '{argv[-1]}' does not exist" in line
    assert "uno-lab config list" in line and "Traceback" not in err
