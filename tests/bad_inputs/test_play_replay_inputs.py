"""Bad inputs to ``uno-lab play`` and ``uno-lab replay`` (a part of the bad-input catalogue).

Each case builds its input in a fresh folder, runs ``unolab.cli.main`` in-process (a few run
a real subprocess, where the exit path matters) and checks: (a) the exit code, (b) that the
message names the bad input, (c) no traceback, (d) nothing lost: every file that was there
is unchanged, only the files the case allows were created, and a good record still replays.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import ROOT

from uno_env import UnoGame, load_rules
from uno_env.console import run_main
from unolab.cli import main

AGENT_2P = str(ROOT / "agents/pretrained/ppo_official_2p.safetensors")
RULES_2P = load_rules("official", num_players=2).to_dict()


def record(tmp: Path, name: str = "game.json", text: str | None = None, **data: object) -> str:
    """Write a (possibly broken) recorded game into ``tmp`` and return its path."""
    path = tmp / name
    if text is None:
        base: dict[str, object] = {"rules": RULES_2P, "seed": 1, "names": ["you", "bot"]}
        base["hands"] = [[]]
        base.update(data)
        text = json.dumps({k: v for k, v in base.items() if v is not DROP})
    path.write_text(text)
    return str(path)


DROP = object()
"""A key to leave out of :func:`record`."""


def record_text() -> str:
    """The text of a good record, for cases that damage it as text (NaN...)."""
    return json.dumps({"rules": RULES_2P, "seed": 1, "names": ["you", "bot"], "hands": [[]]})


def finished_hands(count: int = 1, seed: int = 1) -> list[list[str]]:
    """The actions of ``count`` complete 2-player hands (always the first legal action)."""
    game = UnoGame(load_rules("official", num_players=2), seed=seed)
    hands = []
    for _ in range(count):
        while not game.over:
            game.step(game.legal_action_ids()[0])
        hands.append([a for _, a in game.history])
        if game.match_over:
            break
        game.next_hand()
    return hands


def finished_hand() -> list[str]:
    return finished_hands(1)[0]


def _binary(path: Path) -> str:
    path.write_bytes(b"\xff\xfe\x00binary")
    return str(path)


@dataclass(frozen=True)
class Case:
    """One bad input.

    Args:
        id: The case's name.
        argv: Builds the input files in the folder it is given and returns the arguments.
        says: Fragments the message must contain (``{tmp}`` is the folder).
        codes: Accepted exit codes.
        stdin: Lines typed at the prompts; then the input ends (``EOFError``), or
            ``KeyboardInterrupt`` if ``interrupt``.
        creates: Files the case may create in the folder.
        subprocess: Run ``python -m unolab.cli`` for real (stdin closed), not in-process.
        shell: A shell pipeline instead (for ``| head``), run in the folder.
        disk_full: Standard output fails with "no space left on device" at every write
            (in-process; ``/dev/full`` is not there on every machine).
    """

    id: str
    argv: Callable[[Path], list[str]]
    says: tuple[str, ...]
    codes: tuple[int, ...] = (2,)
    stdin: tuple[str, ...] = ()
    interrupt: bool = False
    creates: tuple[str, ...] = ()
    subprocess: bool = False
    shell: str | None = None
    disk_full: bool = False
    where: str = "err"
    extra: dict[str, object] = field(default_factory=dict)


def play(*args: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["play", "--no-colour", *[a.format(tmp=tmp) for a in args]]


def replay_of(make: Callable[[Path], str]) -> Callable[[Path], list[str]]:
    return lambda tmp: ["replay", make(tmp)]


CASES: list[Case] = [
    # ---- replay: the file ----------------------------------------------------------------
    Case(
        "replay-missing",
        lambda t: ["replay", str(t / "nothing.json")],
        ("nothing.json", "uno-lab play --record"),
    ),
    Case("replay-empty", replay_of(lambda t: record(t, text="")), ("game.json", "empty")),
    Case("replay-folder", lambda t: ["replay", str(t)], ("{tmp}", "is a folder")),
    Case(
        "replay-broken-json",
        replay_of(lambda t: record(t, text='{"rules": ')),
        ("game.json", "not valid JSON"),
    ),
    Case("replay-binary", replay_of(lambda t: _binary(t / "g.bin")), ("g.bin", "not UTF-8")),
    Case(
        "replay-list-at-top",
        replay_of(lambda t: record(t, text="[1, 2]")),
        ("game.json", "found a list"),
    ),
    Case(
        "replay-string-at-top",
        replay_of(lambda t: record(t, text='"game"')),
        ("game.json", "found a str"),
    ),
    # ---- replay: the keys ----------------------------------------------------------------
    Case(
        "replay-no-rules",
        replay_of(lambda t: record(t, rules=DROP)),
        ("game.json", "missing key(s) rules"),
    ),
    Case(
        "replay-no-seed",
        replay_of(lambda t: record(t, seed=DROP)),
        ("game.json", "missing key(s) seed"),
    ),
    Case(
        "replay-no-moves",
        replay_of(lambda t: record(t, hands=DROP)),
        ("game.json", "missing key(s) hands"),
    ),
    Case(
        "replay-format-a-number",
        replay_of(lambda t: record(t, format=2**64)),
        ("game.json", "'format'", "18446744073709551616"),
    ),
    Case(
        "replay-format-of-another-file",
        replay_of(lambda t: record(t, format="some other format")),
        ("game.json", "'format'", "'some other format'"),
    ),
    Case(
        "replay-agents-a-number",
        replay_of(lambda t: record(t, agents=2**64)),
        ("game.json", "'agents'", "18446744073709551616"),
    ),
    Case(
        "replay-agents-too-few",
        replay_of(lambda t: record(t, agents=["mixbot"])),
        ("game.json", "'agents'", "2 agent ids", "['mixbot']"),
    ),
    Case(
        "replay-match-over-a-list",
        replay_of(lambda t: record(t, match_over=[[[]]])),
        ("game.json", "'match_over'", "[[[]]]"),
    ),
    Case(
        "replay-saved-a-number",
        replay_of(lambda t: record(t, saved=2**64)),
        ("game.json", "'saved'", "18446744073709551616"),
    ),
    Case(
        "replay-rules-a-string",
        replay_of(lambda t: record(t, rules="official")),
        ("game.json", "'rules'", "'official'"),
    ),
    Case(
        "replay-unknown-rule",
        replay_of(lambda t: record(t, rules={**RULES_2P, "stack_all": True})),
        ("game.json", "stack_all"),
    ),
    Case(
        "replay-rule-out-of-range",
        replay_of(lambda t: record(t, rules={**RULES_2P, "num_players": 11})),
        ("game.json", "num_players", "11"),
    ),
    Case(
        "replay-rule-wrong-type",
        replay_of(lambda t: record(t, rules={**RULES_2P, "hand_size": "seven"})),
        ("game.json", "hand_size", "seven"),
    ),
    Case(
        "replay-seed-a-string",
        replay_of(lambda t: record(t, seed="one")),
        ("game.json", "'seed'", "'one'"),
    ),
    Case(
        "replay-seed-negative",
        replay_of(lambda t: record(t, seed=-3)),
        ("game.json", "'seed'", "-3"),
    ),
    Case(
        "replay-seed-a-float",
        replay_of(lambda t: record(t, seed=1.5)),
        ("game.json", "'seed'", "1.5"),
    ),
    Case(
        "replay-seed-past-64-bits",
        replay_of(lambda t: record(t, seed=2**64)),
        ("game.json", "'seed'", "18446744073709551616", "64-bit"),
    ),
    Case(
        "replay-seed-of-thirty-digits",
        replay_of(lambda t: record(t, seed=10**30)),
        ("game.json", "'seed'", "1000000000000000000000000000000"),
    ),
    Case(
        "replay-seed-nan",
        replay_of(lambda t: record(t, text=record_text().replace('"seed": 1', '"seed": NaN'))),
        ("game.json", "'seed'", "nan"),
    ),
    Case(
        "replay-action-of-a-million-characters",
        replay_of(lambda t: record(t, hands=[["x" * 10**6]])),
        ("game.json", "action 1", "xxx..."),
    ),
    Case(
        "replay-hands-a-string",
        replay_of(lambda t: record(t, hands="R1 R2")),
        ("game.json", "'hands'", "R1 R2"),
    ),
    Case(
        "replay-action-a-number",
        replay_of(lambda t: record(t, hands=[[5]])),
        ("game.json", "action 1", "5"),
    ),
    Case(
        "replay-unknown-action",
        replay_of(lambda t: record(t, hands=[["X9"]])),
        ("game.json", "move 1", "X9"),
    ),
    Case(
        "replay-illegal-action",
        replay_of(lambda t: record(t, hands=[["keep"]])),
        ("game.json", "move 1", "'keep'", "not legal"),
    ),
    Case(
        "replay-move-after-the-end",
        replay_of(lambda t: record(t, hands=[[*finished_hand(), "draw"]])),
        ("game.json", "'draw'", "already over"),
    ),
    Case(
        "replay-second-hand-too-early",
        replay_of(lambda t: record(t, hands=[[], ["draw"]])),
        ("game.json", "hand 2", "did not end"),
    ),
    Case(
        "replay-short-names",
        replay_of(lambda t: record(t, names=["you"])),
        ("game.json", "'names'", "1 name(s) for 2 players"),
    ),
    Case(
        "replay-names-not-strings",
        replay_of(lambda t: record(t, names=[1, 2])),
        ("game.json", "'names'", "[1, 2]"),
    ),
    Case(
        "replay-legacy-actions-not-a-list",
        replay_of(lambda t: record(t, hands=DROP, actions="draw")),
        ("game.json", "'actions'", "draw"),
    ),
    # ---- play: the options ---------------------------------------------------------------
    Case(
        "play-record-missing-folder",
        play("--record", "{tmp}/no/game.json"),
        ("{tmp}/no/game.json", "does not exist"),
    ),
    Case("play-record-a-folder", play("--record", "{tmp}"), ("--record {tmp}", "is a folder")),
    Case(
        "play-record-not-a-record",
        play("--record", "{tmp}/notes.txt"),
        ("notes.txt", "not a recorded game"),
    ),
    Case(
        "play-record-under-a-file",
        play("--record", "{tmp}/notes.txt/game.json"),
        ("notes.txt/game.json", "does not exist"),
    ),
    Case("play-seat-too-high", play("--seat", "5"), ("--seat", "5", "0..1")),
    Case("play-seat-negative", play("--seat", "-1"), ("--seat", "-1")),
    Case("play-players-one", play("--players", "1"), ("--players", "1")),
    Case("play-players-eleven", play("--players", "11"), ("--players", "11")),
    Case("play-unknown-opponent", play("--opponents", "nobody"), ("'nobody'", "give a bot name")),
    Case(
        "play-too-many-opponents",
        play("--players", "3", "--opponents", "random", "mixbot", "random"),
        ("--opponents", "1 or 2"),
    ),
    Case(
        "play-agent-wrong-table",
        play("--players", "3", "--opponents", "mixbot", AGENT_2P),
        ("ppo_official_2p", "trained for 2 players", "--players 2"),
    ),
    Case(
        "play-agent-missing-json",
        lambda t: ["play", "--opponents", str(_weights_only(t))],
        ("lonely",),
    ),
    Case("play-seed-negative", play("--seed", "-1"), ("--seed", "-1")),
    Case("play-unknown-rules", play("--rules", "strett"), ("'strett'", "preset")),
    Case("play-seat-not-a-number", play("--seat", "first"), ("--seat", "'first'")),
    # ---- play: the input ends ------------------------------------------------------------
    Case(
        "play-stdin-closed",
        play("--seed", "2"),
        ("Game abandoned (end of input)", "seed was 2"),
        codes=(0,),
        where="out",
    ),
    Case(
        "play-ctrl-d-mid-game",
        play("--seed", "2", "--record", "{tmp}/game.json"),
        ("Game abandoned (end of input)", "game.json"),
        codes=(0,),
        stdin=("1", "1", "1"),
        creates=("game.json",),
        where="out",
    ),
    Case(
        "play-q-writes-record",
        play("--seed", "2", "--record", "{tmp}/game.json"),
        ("Game abandoned (you stopped)", "game.json"),
        codes=(0,),
        stdin=("1", "q"),
        creates=("game.json",),
        where="out",
    ),
    Case(
        "play-ctrl-c",
        play("--seed", "2", "--record", "{tmp}/game.json"),
        ("interrupted", "game.json"),
        codes=(130,),
        stdin=("1",),
        interrupt=True,
        creates=("game.json",),
        where="both",
    ),
    Case(
        "play-help-then-eof",
        play("--seed", "2"),
        ("How to answer", "Game abandoned"),
        codes=(0,),
        stdin=("help", "99"),
        where="out",
    ),
    # ---- files that are not plain files, or that never end --------------------------------
    Case("replay-fifo", replay_of(lambda t: _fifo(t / "pipe.json")), ("pipe.json", "regular file")),
    Case("replay-dev-zero", lambda t: ["replay", "/dev/zero"], ("/dev/zero", "regular file")),
    Case(
        "replay-link-to-dev-zero",
        replay_of(lambda t: _link(t / "game.json", "/dev/zero")),
        ("game.json", "regular file"),
    ),
    Case("play-record-dev-null", play("--record", "/dev/null"), ("/dev/null", "regular file")),
    Case(
        "play-record-fifo",
        lambda t: ["play", "--record", _fifo(t / "pipe.json")],
        ("pipe.json", "regular file"),
    ),
    # ---- hostile records -----------------------------------------------------------------
    Case(
        "replay-nested-100k",
        replay_of(lambda t: record(t, text="[" * 100_000)),
        ("game.json", "nested too deeply"),
    ),
    Case(
        "replay-name-sets-the-title",
        replay_of(lambda t: record(t, names=["\x1b]0;owned\x07", "bot"], hands=[finished_hand()])),
        ("game.json", "not a plain name", "\\x1b"),
    ),
    Case(
        "replay-name-clears-the-screen",
        replay_of(lambda t: record(t, names=["you", "\x1b[2J\x1b[H"], hands=[finished_hand()])),
        ("game.json", "not a plain name"),
    ),
    Case(
        "replay-name-forges-a-line",
        replay_of(lambda t: record(t, names=["you\nplayer_1 wins", "bot"])),
        ("game.json", "not a plain name"),
    ),
    Case(
        "replay-huge-number",
        replay_of(lambda t: record(t, text='{"rules": {}, "seed": 1' + "0" * 5000 + "}")),
        ("game.json",),
    ),
    # ---- the output cannot be written ----------------------------------------------------
    Case(
        "rules-into-a-full-disk",
        lambda t: ["rules"],
        ("uno-lab rules: error:", "the standard output: no space left on device"),
        codes=(1,),
        disk_full=True,
    ),
    Case(
        "replay-into-a-full-disk",
        replay_of(lambda t: record(t, hands=finished_hands(2))),
        ("uno-lab replay: error:", "the standard output: no space left on device"),
        codes=(1,),
        disk_full=True,
    ),
    # ---- real processes ------------------------------------------------------------------
    Case(
        "subprocess-play-stdin-closed",
        play("--seed", "3"),
        ("Game abandoned (end of input)",),
        codes=(0,),
        subprocess=True,
        where="out",
    ),
    Case(
        "subprocess-replay-broken",
        replay_of(lambda t: record(t, text="{")),
        ("game.json", "not valid JSON"),
        subprocess=True,
    ),
    Case(
        "subprocess-replay-into-head",
        replay_of(lambda t: record(t, hands=finished_hands(6))),
        ("Replay of",),
        codes=(0, 141),
        shell="{cmd} --show-hands | head -n 1",
        creates=(),
        where="out",
    ),
]


class _FullDisk(io.TextIOBase):
    """A standard output on a full disk: every write fails as ``/dev/full``'s does."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _fifo(path: Path) -> str:
    """A named pipe with no writer: reading it would block for ever."""
    os.mkfifo(path)
    return str(path)


def _link(path: Path, target: str) -> str:
    path.symlink_to(target)
    return str(path)


def _weights_only(tmp: Path) -> Path:
    """An agent file without its JSON metadata beside it."""
    weights = tmp / "lonely.safetensors"
    weights.write_bytes((ROOT / "agents/pretrained/ppo_official_2p.safetensors").read_bytes())
    return weights


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_the_catalogue_is_big_enough() -> None:
    assert len(CASES) >= 15
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.timeout(300)  # a file that blocks or never ends must fail the case, not hang
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("my notes: keep them")
    monkeypatch.chdir(ROOT)
    argv = case.argv(tmp_path)
    before = _files(tmp_path)
    if case.shell is not None:
        cmd = " ".join([sys.executable, "-m", "unolab.cli", *argv])
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", case.shell.format(cmd=cmd)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    elif case.subprocess:
        proc = subprocess.run(
            [sys.executable, "-m", "unolab.cli", *argv],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        typed = iter(case.stdin)

        def fake_input(prompt: str = "") -> str:
            answer = next(typed, None)
            if answer is None:
                raise KeyboardInterrupt if case.interrupt else EOFError
            return answer

        monkeypatch.setattr(builtins, "input", fake_input)
        if case.disk_full:
            monkeypatch.setattr(sys, "stdout", _FullDisk())
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own errors
            code = exit_.code if isinstance(exit_.code, int) else 2
        out, err = capsys.readouterr()
    # (a) the exit code
    assert code in case.codes, (code, out[-2000:], err)
    # (b) the message names the bad input
    text = {"err": err, "out": out, "both": out + err}[case.where]
    for fragment in case.says:
        assert fragment.format(tmp=tmp_path).lower() in text.lower(), (fragment, text[-2000:])
    if code == 2:
        assert "error:" in err.strip().splitlines()[-1], err  # ends in one error line
    # (c) no traceback, anywhere
    assert "Traceback" not in out + err
    assert "Exception ignored" not in err
    # (d) nothing lost or overwritten; only the allowed files are new
    after = _files(tmp_path)
    for name, data in before.items():
        assert after.get(name) == data, f"{name} changed or vanished"
    assert set(after) - set(before) <= set(case.creates), set(after) - set(before)
    for name in case.creates:
        assert main(["replay", str(tmp_path / name)]) == 0  # what was saved replays
    capsys.readouterr()


def _full_disk_at(*full: Path) -> Callable[[Path, str | bytes], None]:
    """``write_atomically`` on a disk that is full in the folders of ``full``."""
    from uno_env.files import write_atomically

    def write(path: Path, data: str | bytes) -> None:
        if any(Path(path).parent == Path(folder) for folder in full):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        write_atomically(path, data)

    return write


@pytest.mark.parametrize("temp_full", [False, True], ids=["saved-elsewhere", "printed"])
def test_a_record_that_cannot_be_written_is_kept(
    temp_full: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full disk at the end of a game: one line, and the game is kept somewhere to replay."""
    import tempfile

    import unolab.records

    target = tmp_path / "games"
    target.mkdir()
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    full = (target, spare) if temp_full else (target,)
    monkeypatch.setattr(unolab.records, "write_atomically", _full_disk_at(*full))
    typed = iter(["1", "1", "q"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(typed))

    code = main(["play", "--no-colour", "--seed", "4", "--record", str(target / "game.json")])
    out, err = capsys.readouterr()

    assert code == 1, err
    assert "Traceback" not in out + err
    line = err.strip().splitlines()[-1]
    assert line.startswith("uno-lab play: error: --record"), line
    assert "no space left on device" in line
    assert not (target / "game.json").exists()
    monkeypatch.undo()
    if temp_full:
        assert "printed above" in line
        printed = [row for row in out.splitlines() if row.startswith("{")]
        assert len(printed) == 1
        kept = tmp_path / "kept.json"
        kept.write_text(printed[0])
    else:
        (kept,) = spare.glob("uno-lab-game-4-*.json")
        assert str(kept) in line
    assert main(["replay", str(kept)]) == 0  # the game replays
    assert json.loads(kept.read_text())["seed"] == 4


def test_a_script_into_a_full_disk_names_the_standard_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``python -m`` script (:func:`run_main`) whose output cannot be written: one line
    naming the standard output, exit 1, and the stream itself put back afterwards."""
    full = _FullDisk()
    monkeypatch.setattr(sys, "stdout", full)
    with pytest.raises(SystemExit) as exited:
        run_main(lambda: print("a result line"), "script")
    assert exited.value.code == 1
    assert sys.stdout is full
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["script: error: the standard output: no space left on device"], err
