"""The lab's one progress display: a rich bar on a terminal, plain lines everywhere else.

Every long job (training, imitation, evaluations, tournaments, exploitability estimates,
strength tables) shows its progress through :func:`progress_bar` and prints its status
lines through :func:`say`:

* **On a terminal** the bar is a :class:`rich.progress.Progress` on stderr: what runs, the
  bar, the share done, done/total in the job's unit, the rate, the time spent and an
  estimate of the time left. A line given to :func:`say` while a bar is drawn is printed
  above the bar, never through it.
* **Off a terminal** (a log file, a pipe, a notebook, a test) nothing is drawn: no ANSI
  codes, no carriage returns. A job that lasts says where it is in a plain line every
  :data:`PLAIN_EVERY_S` seconds (``training ppo_quick: 65,536/262,144 steps (25%) after
  40 s, about 2 min left``) and, when it has said anything, once more at its end. Status
  lines go out as they are, each on its own line.
* **One bar at a time.** A bar opened while another is open (the evaluations inside a
  training run) stays quiet: the outer bar is the one that is drawn.

A bar's total is what will really be counted (a training run shows the steps it will
really run, rounded up to whole rollouts); a count never passes its total: a bar whose
total is an estimate (:meth:`Bar.update` with a new ``total``) grows its total first.
"""

from __future__ import annotations

import errno
import io
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from uno_env.files import shown

__all__ = ["PLAIN_EVERY_S", "Bar", "PipeConsole", "check_log", "progress_bar", "say"]

PLAIN_EVERY_S = 10.0
"""Seconds between two plain progress lines off a terminal."""


class PipeConsole(Console):
    """A rich console that answers a reader gone away (``| head``) as every command does.

    Rich's own answer is ``SystemExit(1)``, the status of a machine fault, raised from
    whichever ``print`` found the pipe closed. This console raises
    :class:`BrokenPipeError` instead, which :func:`uno_env.console.run_main` and ``uno-lab``
    turn into a silent exit 141 (:data:`uno_env.console.BROKEN_PIPE_EXIT`).
    """

    def on_broken_pipe(self) -> None:
        """Write nothing more, and raise :class:`BrokenPipeError`."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")


def _count(value: float) -> str:
    """A count with thousands separators (a fraction only where there is one)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _duration(seconds: float) -> str:
    """``40 s``, ``2.5 min`` or ``1.2 h``."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    if seconds < 6000:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class _CountColumn(ProgressColumn):
    """``65,536/262,144 steps``."""

    def render(self, task: Task) -> Text:
        total = "?" if task.total is None else _count(task.total)
        unit = task.fields.get("unit", "")
        return Text(f"{_count(task.completed)}/{total} {unit}".rstrip(), style="progress.download")


class _RateColumn(ProgressColumn):
    """``1,234 steps/s`` (rich's own estimate over the last seconds)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("")
        unit = task.fields.get("unit", "") or "it"
        return Text(f"{speed:,.0f} {unit}/s" if speed >= 10 else f"{speed:.2f} {unit}/s")


class Bar:
    """One job's progress: a rich task on a terminal, plain lines off it, or nothing.

    Made by :func:`progress_bar`; the job calls :meth:`advance` (or :meth:`update`) as
    its units finish.

    Attributes:
        description: What runs (``training ppo_quick``).
        unit: What is counted (``steps``, ``hands``, ``decisions``).
        total: The units the job will count.
        completed: The units counted so far.
        live: Whether a rich bar is drawn on a terminal.
        shown: Whether the bar says anything at all (drawn, or plain lines).
    """

    def __init__(
        self,
        description: str,
        total: float,
        unit: str,
        completed: float,
        *,
        progress: Progress | None = None,
        console: Console | None = None,
        shown: bool = False,
        plain_lines: bool = True,
    ) -> None:
        self.description = description
        self.unit = unit
        self.total = float(total)
        self.completed = min(float(completed), self.total)
        self.live = progress is not None
        self.shown = shown
        self._progress = progress
        self._console = console
        self._plain = shown and progress is None and plain_lines
        self._task: TaskID | None = None
        self._start = time.perf_counter()
        self._first = self.completed
        self._last_line = self._start
        self._lines = 0
        self._note = ""
        if progress is not None:
            self._task = progress.add_task(
                description, total=self.total, completed=int(self.completed), unit=unit, note=""
            )

    def advance(self, amount: float = 1) -> None:
        """Count ``amount`` more units done (never past the total)."""
        self.update(self.completed + amount)

    def update(
        self, completed: float | None = None, *, total: float | None = None, note: str | None = None
    ) -> None:
        """Set the units done, the total (an estimate that changed) or the note after the bar.

        A count past the total is held at the total; give the larger total first when the
        estimate grows.
        """
        if total is not None:
            self.total = float(total)
        if completed is not None:
            self.completed = float(completed)
        self.completed = min(self.completed, self.total)
        if note is not None:
            self._note = note
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task, completed=self.completed, total=self.total, note=self._note
            )
        elif self._plain and time.perf_counter() - self._last_line >= PLAIN_EVERY_S:
            self._say_where(final=False)

    def line(self, *, final: bool = False) -> str:
        """The plain line saying where the job is (or, ``final``, where it ended)."""
        elapsed = time.perf_counter() - self._start
        share = f" ({100 * self.completed / self.total:.0f}%)" if self.total > 0 else ""
        unit = f" {self.unit}" if self.unit else ""
        text = f"{self.description}: {_count(self.completed)}/{_count(self.total)}{unit}{share}"
        if final:
            text += f" in {_duration(elapsed)}"
        else:
            text += f" after {_duration(elapsed)}"
            done = self.completed - self._first
            if done > 0 and self.completed < self.total:
                left = (self.total - self.completed) * elapsed / done
                text += f", about {_duration(left)} left"
        if self._note:
            text += f" ({self._note})"
        return text

    def _say_where(self, *, final: bool) -> None:
        self._last_line = time.perf_counter()
        self._lines += 1
        _write(self.line(final=final), self._console)

    def _close(self) -> None:
        if self._plain and self._lines:
            self._say_where(final=True)


_open: list[Bar] = []
"""The bars open now, outermost first (only the first one says anything)."""


def _write(message: str, console: Console | None) -> None:
    """One plain line to the console's file (stderr unless the job gave its own)."""
    file = console.file if console is not None else sys.stderr
    file.write(message + "\n")
    file.flush()


def _interactive(console: Console) -> bool:
    """Whether a bar can be drawn: a real terminal (not a notebook, not a dumb one)."""
    return console.is_terminal and not console.is_dumb_terminal and not console.is_jupyter


@contextmanager
def progress_bar(
    description: str,
    total: float,
    *,
    unit: str = "",
    completed: float = 0,
    enabled: bool = True,
    console: Console | None = None,
    plain_lines: bool = True,
) -> Iterator[Bar]:
    """Show a job's progress while the ``with`` block runs.

    Args:
        description: What runs, in a few words.
        total: The units the job will count (the real total, not a target it may pass).
        unit: What is counted, plural (``hands``).
        completed: Units already done (a resumed job).
        enabled: False: a bar that says nothing (``--no-progress``).
        console: The rich console to draw on (default: one on stderr); off a terminal the
            plain lines go to its file.
        plain_lines: Off a terminal, print the periodic plain lines (False for a job that
            prints its own status lines as it goes).

    Yields:
        The :class:`Bar` to advance. Inside another bar's block it is quiet.
    """
    shown = enabled and not _open
    console = console or PipeConsole(stderr=True)
    live = shown and _interactive(console)
    progress: Progress | None = None
    if live:
        progress = Progress(
            TextColumn("{task.description}", markup=False, style="bold"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            _CountColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[note]}", markup=False),
            console=console,
        )
    bar = Bar(
        description,
        total,
        unit,
        completed,
        progress=progress,
        console=console,
        shown=shown,
        plain_lines=plain_lines,
    )
    _open.append(bar)
    try:
        if progress is None:
            yield bar
        else:
            with progress:
                yield bar
        bar._close()
    finally:
        _open.remove(bar)


def check_log(log: object, argument: str = "log") -> None:
    """Check a ``log`` argument: a text stream (what :func:`say` prints to) or None.

    Raises:
        TypeError: for a value without a ``write`` or a binary stream, naming ``argument``
            and the value as given.
    """
    binary = isinstance(log, (io.RawIOBase, io.BufferedIOBase))
    if log is not None and (binary or not callable(getattr(log, "write", None))):
        raise TypeError(
            f"{argument}: expected a text stream (sys.stderr, a file open for text) or None, "
            f"got {shown(log)}"
        )


def say(message: str, file: TextIO | None = None) -> None:
    """Print a status line to ``file`` (default: stderr), above the bar if one is drawn.

    While a bar is drawn on the terminal, a line meant for the terminal goes through the
    bar's console, so it lands on a line of its own above the bar; a line for another file
    (a log) is written there as it is.
    """
    target = sys.stderr if file is None else file
    drawn = next((bar for bar in _open if bar.live), None)
    if drawn is not None and drawn._console is not None and _is_terminal(target):
        drawn._console.print(message, markup=False, highlight=False, soft_wrap=True)
        return
    print(message, file=target, flush=True)


def _is_terminal(file: TextIO) -> bool:
    """Whether ``file`` writes to a terminal (rich's stand-in for stderr counts as one)."""
    if hasattr(file, "rich_proxied_file"):
        return True
    try:
        return file.isatty()
    except (AttributeError, ValueError, OSError):
        return False
