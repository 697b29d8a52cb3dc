"""The lab's progress display: plain lines off a terminal, one rich bar on it, totals kept."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from uno_env import load_rules
from unolab.agents import make_agent, progress
from unolab.agents.arena import evaluate_vs
from unolab.agents.progress import PipeConsole, progress_bar, say

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _clean(text: str) -> None:
    """No escape codes, no carriage returns, no cursor-up fragments."""
    assert "\x1b" not in text and "\r" not in text and "[A" not in text, repr(text)


class _Terminal(io.StringIO):
    """A file that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_long_job_prints_plain_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    with progress_bar("playing", 200, unit="hands") as bar:
        for _ in range(4):
            bar.advance(50)
        say("a status line")
    err = capsys.readouterr().err
    _clean(err)
    lines = err.splitlines()
    assert lines[0].startswith("playing: 50/200 hands (25%) after ")
    assert "left" in lines[0]
    assert "a status line" in lines
    assert lines[-1].startswith("playing: 200/200 hands (100%) in ")


def test_a_short_job_off_a_terminal_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar("playing", 10, unit="hands") as bar:
        bar.advance(10)
    assert capsys.readouterr().err == ""


def test_a_count_never_passes_its_total(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    with progress_bar("training", 1000, unit="steps") as bar:
        bar.advance(600)
        bar.advance(600)
        assert bar.completed == bar.total == 1000
        bar.update(total=1500)  # an estimate that grows
        bar.update(1200)
        assert (bar.completed, bar.total) == (1200, 1500)
    err = capsys.readouterr().err
    counts = [tuple(map(int, m)) for m in re.findall(r"([\d,]+)/([\d,]+)", err.replace(",", ""))]
    assert counts and all(done <= total for done, total in counts)


def test_a_bar_inside_another_stays_quiet(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    with progress_bar("training", 2, unit="steps") as outer:
        with progress_bar("evaluating", 5, unit="hands") as inner:
            inner.advance(5)
            assert not inner.shown
        outer.advance(2)
    err = capsys.readouterr().err
    assert "evaluating" not in err and "training: 2/2 steps" in err
    with progress_bar("quiet", 3, enabled=False) as off:
        off.advance(3)
    assert capsys.readouterr().err == ""


def test_on_a_terminal_status_lines_go_above_the_bar() -> None:
    screen = _Terminal()
    console = Console(file=screen, force_terminal=True, width=120)
    with progress_bar("training quick", 100, unit="steps", console=console) as bar:
        assert bar.live
        bar.advance(40)
        say("[quick] step 40: win rate vs random 80.0%", _Terminal())
        bar.advance(60)
    text = ANSI.sub("", screen.getvalue())
    # The status line was printed whole by the bar's console, on a line of its own.
    assert "\n[quick] step 40: win rate vs random 80.0%\n" in text.replace("\r", "\n")
    assert "100/100 steps" in text


def test_an_evaluation_off_a_terminal_is_clean_and_counts_hands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    rules = load_rules("official", num_players=2)
    evaluate_vs(rules, make_agent("mixbot", 1), "random", 64, seed=3, batch_size=16)
    err = capsys.readouterr().err
    _clean(err)
    assert err.splitlines()[-1].startswith("mixbot vs random: 64/64 hands (100%) in ")


def test_counting_decisions_ends_at_the_true_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search's evaluation counts decisions against an estimate; the bar ends at the
    decisions really played, never past its total on the way."""
    seen: list[tuple[float, float]] = []
    original = progress.Bar.update

    def spy(self: progress.Bar, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        seen.append((self.completed, self.total))

    monkeypatch.setattr(progress.Bar, "update", spy)
    rules = load_rules("official", num_players=2)
    result = evaluate_vs(
        rules,
        make_agent("mixbot", 1),
        "random",
        40,
        seed=3,
        batch_size=8,
        decisions_per_hand=5.0,  # far too few: the total must grow
    )
    done, total = seen[-1]
    assert done == total == round(result.mean_turns * result.games)
    assert all(d <= t for d, t in seen)


class _ClosedPipe(io.StringIO):
    """A stream whose reader went away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_pipe_console_answers_a_reader_gone_away_with_broken_pipe_error() -> None:
    """Rich would raise SystemExit(1), a machine fault's status; the lab's commands turn a
    BrokenPipeError into a silent exit 141."""
    console = PipeConsole(file=_ClosedPipe())
    with pytest.raises(BrokenPipeError):
        console.print("a leaderboard")
    console.print("nothing more is written")  # quiet now: no second error
