"""Command lines given paths, files, seeds and streams they cannot use: one line, exit 2.

Each case runs one command with one bad input, in process through the exit path a user's
shell sees (``uno-lab``'s ``main``; the ``python -m`` scripts through
:func:`uno_env.console.run_main`, which maps their errors to exit statuses). The classes:

- a path with a name longer than the file system holds (``ENAMETOOLONG``): refused as the
  input it is (exit 2, naming the path and saying the name is too long), not as a fault of
  the machine (exit 1, ``[Errno 36]``), and an ``--out`` checked before the work;
- ``uno-lab exploit --out`` naming a file that is not an exploit result (an agent's
  metadata or weights, the rules file it reads, a tournament's summary): left as it is;
- ``uno-lab serve`` with an empty ``--games-dir``/``--runs-dir``/``--agents-dir`` (``.``
  by accident) or a ``--trust-code`` file Python could not import (not UTF-8);
- ``uno-lab agents`` given a class that is no agent (``json:JSONDecoder``): said in words,
  never advice about a search's options;
- ``uno-lab play --seed`` beyond 64 bits, and a tournament naming a missing file in a
  search's options.

For every case: the exit status is 2, the last line on stderr is the one error line and
names the bad input, there is no traceback, and the scratch folder is byte for byte as
before. The tests after the table check what these inputs' good neighbours do: a seed up to
2**64 - 1 plays and replays, a Python class gets a card, ``play`` reads its moves bounded.
"""

from __future__ import annotations

import builtins
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import strength
from published import main as published_main
from support import ROOT

from uno_env.console import run_main
from uno_env.rng import derive_keys
from uno_env.rules import load_rules
from unolab import cli
from unolab.benchmarks import core as bench_core
from unolab.benchmarks import inference as bench_inference
from unolab.benchmarks import search as bench_search
from unolab.cli_tools import check_out_path
from unolab.play import MAX_INPUT_LINE, InputLineError, read_input_line
from unolab.tournament.chunks import ranks_problem
from unolab.tournament.results import GameRecord

L = "y" * 300
"""A name longer than any file system holds (255 bytes)."""

SHIPPED = ROOT / "agents" / "pretrained" / "ppo_official_2p"

BOT = '''import numpy as np


class Bot:
    """Plays the first legal move."""

    name = "first_legal"

    def act(self, observations, masks):
        return np.argmax(masks, axis=1)

    def reset(self, games=None):
        pass
'''


@dataclass(frozen=True)
class Case:
    """One bad command line.

    Attributes:
        id: The test id.
        argv: The arguments; ``{tmp}`` is the scratch folder, ``{L}`` an over-long name.
        names: What the error line must contain.
        run: ``uno-lab``, or a script run through ``run_main``: ``strength``,
            ``bench-core``, ``inference``, ``search``, ``published``.
        absent: What the error line must not contain (advice that does not fit).
    """

    id: str
    argv: tuple[str, ...]
    names: tuple[str, ...]
    run: str = "uno-lab"
    absent: tuple[str, ...] = ()


TOO_LONG = "too long"
EXPLOIT = ("exploit", "random", "--method", "search", "--search-hands", "1", "--rollouts", "1")
EXPLOIT_RUNS = ("--no-progress", "--runs-dir", "{tmp}/runs")

CASES: list[Case] = [
    # a name longer than the file system holds
    Case("long_rules_preset", ("rules", "--preset", "{tmp}/{L}.yaml"), ("{L}.yaml", TOO_LONG)),
    Case("long_replay", ("replay", "{tmp}/{L}.json"), ("{L}.json", TOO_LONG)),
    Case(
        "long_play_record",
        ("play", "--record", "{tmp}/{L}.json", "--seed", "1"),
        ("--record", "{L}.json", TOO_LONG),
    ),
    Case(
        "long_play_rules", ("play", "--rules", "{tmp}/{L}.yaml", "--seed", "1"), ("{L}", TOO_LONG)
    ),
    Case("long_pimc_prior", ("agents", "pimc:prior={tmp}/{L}"), ("{L}", TOO_LONG)),
    Case(
        "long_serve_trust_code",
        ("serve", "--trust-code", "{tmp}/{L}.py"),
        ("--trust-code", "{L}.py", TOO_LONG),
    ),
    Case(
        "long_serve_agents_dir",
        ("serve", "--agents-dir", "{tmp}/{L}"),
        ("--agents-dir", "{L}", TOO_LONG),
    ),
    Case(
        "long_exploit_out",
        (*EXPLOIT, *EXPLOIT_RUNS, "--out", "{tmp}/{L}.json"),
        ("--out", "{L}.json", TOO_LONG),
    ),
    Case("long_tournament_config", ("tournament", "--config", "{tmp}/{L}.yaml"), ("{L}",)),
    Case(
        "long_strength_out",
        ("--games", "1", "--bots", "random", "--players", "2", "--out", "{tmp}/{L}.json"),
        ("--out", "{L}.json", TOO_LONG),
        run="strength",
    ),
    Case("long_strength_agent", ("--games", "1", "--agents", "{L}"), ("{L}",), run="strength"),
    Case(
        "long_bench_core_rules",
        ("--rules", "{tmp}/{L}.yaml"),
        ("{L}.yaml", TOO_LONG),
        run="bench-core",
    ),
    Case(
        "long_inference_out",
        ("--games", "1", "--deals", "1", "--out", "{tmp}/{L}.json"),
        ("--out", "{L}.json", TOO_LONG),
        run="inference",
    ),
    Case("long_published_root", ("--root", "{tmp}/{L}"), ("{L}", TOO_LONG), run="published"),
    # benchmarks.inference --out: checked before the games, not after
    Case(
        "inference_out_a_folder",
        ("--games", "1", "--deals", "1", "--out", "{tmp}/a_dir"),
        ("--out", "a_dir", "folder"),
        run="inference",
    ),
    Case(
        "inference_out_under_a_file",
        ("--games", "1", "--deals", "1", "--out", "{tmp}/a_file.txt/figures.json"),
        ("--out", "a_file.txt", "is a file"),
        run="inference",
    ),
    Case(
        "search_bench_out_a_folder",
        ("--out", "{tmp}/a_dir"),
        ("--out", "a_dir", "folder"),
        run="search",
    ),
    # exploit --out replaces only an exploit result
    Case(
        "exploit_out_agent_metadata",
        (*EXPLOIT, *EXPLOIT_RUNS, "--out", "{tmp}/ag.json"),
        ("--out", "ag.json", "not an exploit result", "not replaced"),
    ),
    Case(
        "exploit_out_agent_weights",
        (*EXPLOIT, *EXPLOIT_RUNS, "--out", "{tmp}/ag.safetensors"),
        ("--out", "ag.safetensors", "not an exploit result"),
    ),
    Case(
        "exploit_out_its_rules_file",
        (*EXPLOIT, *EXPLOIT_RUNS, "--rules", "{tmp}/r.yaml", "--out", "{tmp}/r.yaml"),
        ("--out", "r.yaml", "not an exploit result"),
    ),
    Case(
        "exploit_out_tournament_summary",
        (*EXPLOIT, *EXPLOIT_RUNS, "--out", "{tmp}/summary.json"),
        ("--out", "summary.json", "not an exploit result"),
    ),
    # serve: startup options that can never work
    Case("serve_games_dir_empty", ("serve", "--games-dir", ""), ("--games-dir", "empty path")),
    Case("serve_runs_dir_empty", ("serve", "--runs-dir", ""), ("--runs-dir", "empty path")),
    Case("serve_agents_dir_empty", ("serve", "--agents-dir", " "), ("--agents-dir", "empty path")),
    Case(
        "serve_trust_code_not_utf8",
        ("serve", "--trust-code", "{tmp}/latin.py"),
        ("--trust-code", "latin.py", "not utf-8", "byte 0xff"),
    ),
    # agents: a class that is no agent
    Case(
        "agents_module_class_no_agent",
        ("agents", "json:JSONDecoder"),
        ("json:JSONDecoder", "not an agent", "act()"),
        absent=("takes no options",),
    ),
    Case(
        "agents_file_class_missing",
        ("agents", "{tmp}/bot.py:Nope"),
        ("bot.py", "'Nope'", "Bot"),
        absent=("takes no options",),
    ),
    # seeds beyond 64 bits
    Case(
        "play_seed_2_pow_64",
        ("play", "--seed", str(2**64), "--no-colour"),
        ("--seed", str(2**64), str(2**64 - 1)),
    ),
    # a search's option naming a missing file, in a tournament
    Case(
        "tournament_pimc_prior_missing",
        (
            "tournament",
            "--name",
            "t",
            "--participants",
            "random",
            "pimc:prior={tmp}/m.zip",
            "--deal-sets",
            "2",
            "--no-progress",
            "--output-dir",
            "{tmp}/out",
        ),
        ("m.zip",),
    ),
]


def _through_run_main(main: Callable[[Sequence[str]], Any]) -> Callable[[Sequence[str]], Any]:
    """A script's ``main`` as its ``python -m`` entry runs it (statuses from its errors)."""

    def run(argv: Sequence[str]) -> Any:
        run_main(lambda: main(argv), "script")

    return run


IN_PROCESS: dict[str, Callable[[Sequence[str]], Any]] = {
    "uno-lab": cli.main,
    "strength": _through_run_main(strength.main),
    "bench-core": _through_run_main(bench_core.main),
    "inference": _through_run_main(bench_inference.main),
    "search": _through_run_main(bench_search.main),
    "published": _through_run_main(published_main),
}


def _scratch(tmp_path: Path) -> Path:
    scratch = tmp_path / "scratch"
    (scratch / "a_dir").mkdir(parents=True)
    (scratch / "a_file.txt").write_text("not a folder\n")
    shutil.copy(SHIPPED.with_suffix(".json"), scratch / "ag.json")
    shutil.copy(SHIPPED.with_suffix(".safetensors"), scratch / "ag.safetensors")
    (scratch / "r.yaml").write_text("num_players: 2\n")
    (scratch / "summary.json").write_text(json.dumps({"run": "t", "leaderboard": []}) + "\n")
    (scratch / "latin.py").write_bytes(b"class Bot:\n    pass\n# \xff\n")
    (scratch / "bot.py").write_text(BOT)
    return scratch


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_path_file_or_seed(
    case: Case,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scratch = _scratch(tmp_path)
    monkeypatch.chdir(scratch)

    def fill(text: str) -> str:
        return text.replace("{tmp}", str(scratch)).replace("{L}", L)

    argv = [fill(word) for word in case.argv]
    before = _snapshot(scratch)
    try:
        code = IN_PROCESS[case.run](argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2, (code, out[-1000:], err[-1000:])
    assert "Traceback" not in out + err
    line = err.strip().splitlines()[-1]
    assert "error:" in line, err
    for name in case.names:
        assert fill(name).lower() in line.lower(), (name, line)
    for name in case.absent:
        assert name not in line, (name, line)
    assert "[Errno" not in line, line
    assert _snapshot(scratch) == before, "nothing written or replaced"


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 25
    assert len({case.id for case in CASES}) == len(CASES)


# ---- the good neighbours -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "good"),
    [(0, True), (2**63, True), (2**64 - 1, True), (np.uint64(2**64 - 1), True), (2**64, False)],
    ids=["zero", "2_pow_63", "2_pow_64_minus_1", "uint64_max", "2_pow_64"],
)
def test_game_keys_take_every_64_bit_seed(seed: int, good: bool) -> None:
    if good:
        assert derive_keys(seed, 2).shape == (2,)
        return
    with pytest.raises(ValueError, match=rf"seed .*2\*\*64.*got {seed}"):
        derive_keys(seed, 2)


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1], ids=["2_pow_63", "2_pow_64_minus_1"])
def test_play_and_replay_take_a_64_bit_seed(
    seed: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    typed = iter(["1", "q"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(typed))
    record = tmp_path / "g.json"
    argv = ["play", "--seed", str(seed), "--opponents", "random", "random", "--players", "3"]
    assert cli.main([*argv, "--no-colour", "--record", str(record)]) == 0
    assert f"Seed {seed}" in capsys.readouterr().out
    assert json.loads(record.read_text())["seed"] == seed
    assert cli.main(["replay", str(record)]) == 0


def test_agents_describes_a_python_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    assert cli.main(["agents", f"{bot}:Bot"]) == 0
    card = capsys.readouterr().out
    assert card.startswith("# Bot")
    assert "Plays the first legal move." in card
    assert "`first_legal`" in card
    assert f"uno-lab play --opponents {bot}:Bot" in card


def test_exploit_out_takes_its_own_result_again(tmp_path: Path) -> None:
    """``--out`` naming an earlier exploit result is replaced (the check refuses only the rest)."""
    earlier = tmp_path / "result.json"
    result = {"agent": "a", "spec": "a", "rules": "official", "num_players": 2, "settings": {}}
    earlier.write_text(json.dumps(result))
    check_out_path(earlier)
    check_out_path(tmp_path / "new.json")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("3\n", "3"),
        ("draw\r\n", "draw"),
        ("q", "q"),
        ("", EOFError),
        ("x" * (MAX_INPUT_LINE + 5), InputLineError),
        ("\0" * 10_000, InputLineError),
    ],
    ids=["number", "crlf", "no_newline", "end", "too_long", "nul_stream"],
)
def test_moves_are_read_in_bounded_lines(
    typed: str, expected: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    if isinstance(expected, str):
        assert read_input_line("> ") == expected
        return
    with pytest.raises(expected):
        read_input_line("> ")


def test_a_closed_input_is_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = io.StringIO("1\n")
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)
    with pytest.raises(EOFError):
        read_input_line("> ")


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("shell", "says"),
    [
        ("{cmd} <&-", "standard input is closed"),
        ("{cmd} </dev/zero", f"longer than {MAX_INPUT_LINE:,} characters"),
    ],
    ids=["stdin_closed", "stdin_endless"],
)
def test_play_ends_on_an_input_it_cannot_read(shell: str, says: str, tmp_path: Path) -> None:
    cmd = f"{sys.executable} -m unolab.cli play --seed 1 --no-colour"
    done = subprocess.run(
        ["bash", "-c", shell.format(cmd=cmd)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uno-lab play: error: "), done.stderr
    assert says in lines[0]


def _won(turns: int, cards_left: tuple[int, int]) -> GameRecord:
    return GameRecord(
        deal=0,
        seating=0,
        variant=0,
        key=1,
        seats=("a", "b"),
        ranks=(0, 1),
        points=(12, 0),
        cards_left=cards_left,
        turns=turns,
        end="won",
        forfeit_seat=None,
        reason="",
    )


@pytest.mark.parametrize(
    ("record", "says"),
    [
        (_won(0, (0, 3)), "turns 0"),
        (_won(40, (5, 0)), "cards_left [5, 0]"),
    ],
    ids=["won_in_no_turn", "winner_holds_cards"],
)
def test_a_won_game_line_that_contradicts_itself(record: GameRecord, says: str) -> None:
    problem = ranks_problem(record, load_rules("official", num_players=2))
    assert says in problem


def test_a_won_game_line_that_holds_together() -> None:
    assert ranks_problem(_won(40, (0, 3)), load_rules("official", num_players=2)) == ""
