"""What the participants report about their own play, and where they keep their decisions.

Telemetry. A participant's policy that has a ``telemetry()`` method (a language-model agent:
decisions, invalid answers, retries, fallbacks, timeouts, transport retries, latencies,
tokens) is asked for it after each chunk it played. The figures travel back from the worker
with the chunk (:class:`~unolab.tournament.chunks.ChunkResult`), are written to
``telemetry.jsonl`` with the chunk's games (one line per chunk played), and are merged over
the run by :func:`merge_telemetry`: counts add, and the latency mean and 90th percentile are
computed from the latencies of every decision (:class:`LatencySketch`: exact up to
:data:`EXACT_SAMPLES` latencies, a histogram of 1%-wide bins beyond, so memory stays
bounded). A resumed run reads the lines of the chunks it keeps, so its summary holds the
telemetry of the whole run.

The protocol, duck-typed so that any policy can report: ``telemetry()`` returns a mapping of
names to numbers, which add up over chunks (or to mappings of kinds to numbers, added kind
by kind); a list of numbers under ``latencies_s`` (the
latency of each decision that asked the model, in seconds) is merged into the sketch, and
the merged figures carry ``latency_mean_s`` and ``latency_p90_s`` instead (those two keys of
a single chunk's report are recomputed, not added).

When a report holds no ``latencies_s`` but the policy recorded its decisions (below), the
latencies of the chunk's requests are read from its records (``requests[].latency_s``,
answers replayed from records left out).

Decision records. A policy that has ``record_to(path)`` is told, for each chunk, to write
its decisions to ``decisions/<participant>/chunk-<n>.jsonl`` in the run folder
(:func:`decisions_file`; a participant's name is made a safe file name by
:func:`safe_file_name`), a JSON line per decision appended
(:mod:`unolab.agents.llm.records`). A policy that has ``use_cache(cache)`` is first handed
the decisions already recorded in that file
(:class:`~unolab.agents.llm.records.DecisionCache`): a chunk played again after a stop (its
games were not all written) answers them without asking the model again, and its file then
holds those decisions twice, the second time marked ``replayed``.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.config_values import ConfigError
from uno_env.console import one_line
from uno_env.files import UnreadableFileError, read_regular_file
from unolab.tournament.run_folder import MAX_LOG_BYTES, write_error, write_file

__all__ = [
    "DECISIONS_FOLDER",
    "EXACT_SAMPLES",
    "LATENCY_KEY",
    "TELEMETRY_FILE",
    "LatencySketch",
    "TelemetryLog",
    "chunk_report",
    "decisions_file",
    "merge_telemetry",
    "policy_telemetry",
    "safe_file_name",
]

TELEMETRY_FILE = "telemetry.jsonl"
"""The run folder's file of telemetry, one line per chunk played."""

DECISIONS_FOLDER = "decisions"
"""The run folder's folder of decision records, one folder per participant."""

LATENCY_KEY = "latencies_s"
"""The key of a report's latency samples (seconds, one per decision that asked the model)."""

EXACT_SAMPLES = 65_536
"""Latencies kept one by one: up to this many, the mean and the percentile are exact."""

_DERIVED = ("latency_mean_s", "latency_p90_s")
"""Figures of a report computed from its latencies, never added."""

_BIN_WIDTH = math.log(1.01)
"""A histogram bin spans 1% of latency: a percentile beyond the exact samples is within 1%."""

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 80


def safe_file_name(name: str) -> str:
    """``name`` as a file name on any system: readable, and distinct for distinct names.

    Letters, digits, ``.``, ``_`` and ``-`` are kept; any other run of characters (``:``,
    ``/``, spaces) becomes ``_``. A name changed that way (or cut to 80 characters, or
    starting with a dot) gets a short hash of the original, so two names never share a
    file: ``qwen2.5:7b`` -> ``qwen2.5_7b-<hash>``, ``mixbot`` -> ``mixbot``.
    """
    safe = _SAFE.sub("_", name)[:_MAX_NAME]
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if safe == name and safe:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe}-{digest}" if safe else digest


def decisions_file(run: Path, name: str, chunk: int) -> Path:
    """Where participant ``name`` records its decisions of ``chunk`` in the run folder ``run``."""
    return run / DECISIONS_FOLDER / safe_file_name(name) / f"chunk-{chunk}.jsonl"


def policy_telemetry(policy: object) -> dict[str, Any] | None:
    """What ``policy`` reports about its play (``None`` when it has no ``telemetry()``)."""
    method = getattr(policy, "telemetry", None)
    if not callable(method):
        return None
    report = method()
    return dict(report) if isinstance(report, Mapping) else None


class LatencySketch:
    """Latencies merged over chunks: their count, sum and distribution, in bounded memory.

    Up to :data:`EXACT_SAMPLES` values are kept one by one (the mean and percentiles are
    exact); beyond, a histogram of bins 1% wide (a percentile within 1%).
    """

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.samples: list[float] | None = []
        self.bins: dict[int, int] = {}

    def add(self, values: Iterable[float]) -> None:
        """Take some latencies (seconds)."""
        for value in values:
            v = float(value)
            if not math.isfinite(v) or v < 0:
                continue
            self.count += 1
            self.total += v
            if self.samples is not None:
                self.samples.append(v)
                if len(self.samples) > EXACT_SAMPLES:
                    self._to_bins()
            else:
                self._bin(v)

    def merge(self, other: LatencySketch) -> None:
        """Take every latency of ``other``."""
        if other.samples is not None:
            self.add(other.samples)
            return
        if self.samples is not None:
            self._to_bins()
        self.count += other.count
        self.total += other.total
        for b, n in other.bins.items():
            self.bins[b] = self.bins.get(b, 0) + n

    def _bin(self, v: float) -> None:
        b = math.floor(math.log(max(v, 1e-9)) / _BIN_WIDTH)
        self.bins[b] = self.bins.get(b, 0) + 1

    def _to_bins(self) -> None:
        for v in self.samples or ():
            self._bin(v)
        self.samples = None

    @property
    def mean(self) -> float | None:
        """The mean latency (``None`` without any)."""
        return self.total / self.count if self.count else None

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1), ``None`` without any latency: interpolated between the
        samples as :func:`numpy.percentile` does, or the middle of its bin."""
        if not self.count:
            return None
        if self.samples is not None:
            return float(np.percentile(np.asarray(self.samples), 100.0 * q))
        rank = max(1, math.ceil(q * self.count))
        keys = sorted(self.bins)
        cumulative = []
        seen = 0
        for b in keys:
            seen += self.bins[b]
            cumulative.append(seen)
        b = keys[bisect.bisect_left(cumulative, rank)]
        return math.exp((b + 0.5) * _BIN_WIDTH)  # the middle of the bin

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (:meth:`from_json` reads it back)."""
        if self.samples is not None:
            return {"samples": self.samples}
        return {"count": self.count, "total": self.total, "bins": self.bins}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LatencySketch:
        """Read :meth:`to_json`'s form back.

        Raises:
            ValueError: for anything else.
        """
        sketch = cls()
        if "samples" in data:
            sketch.add(float(v) for v in data["samples"])
            return sketch
        sketch.samples = None
        sketch.count = int(data["count"])
        sketch.total = float(data["total"])
        sketch.bins = {int(b): int(n) for b, n in dict(data["bins"]).items()}
        return sketch


def chunk_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """One chunk's report as ``telemetry.jsonl`` keeps it: the counts, and the latencies as a
    sketch (under :data:`LATENCY_KEY`)."""
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key in _DERIVED:
            continue
        if key == LATENCY_KEY:
            sketch = LatencySketch()
            sketch.add(value)
            out[key] = sketch.to_json()
        elif _number(value):
            out[key] = value
        elif isinstance(value, Mapping):  # counts by kind (answers by form): added per kind
            counts = {str(k): v for k, v in value.items() if _number(v)}
            if counts:
                out[key] = counts
    return out


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def merge_telemetry(
    parts: Iterable[Mapping[str, Mapping[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """Merge chunk reports (participant name -> :func:`chunk_report`'s form) over a run.

    Returns:
        Participant name -> its counts added up over the chunks, with ``latency_mean_s``
        and ``latency_p90_s`` (``None`` when no decision asked the model) when any report
        held latencies. Names that reported nothing are absent.
    """
    counts: dict[str, dict[str, Any]] = {}
    latencies: dict[str, LatencySketch] = {}
    for part in parts:
        for name, report in part.items():
            into = counts.setdefault(name, {})
            for key, value in report.items():
                if key == LATENCY_KEY:
                    sketch = latencies.setdefault(name, LatencySketch())
                    sketch.merge(
                        LatencySketch.from_json(value)
                        if isinstance(value, Mapping)
                        else _sketch_of(value)
                    )
                elif _number(value):
                    if key not in _DERIVED:
                        into[key] = into.get(key, 0) + value
                elif isinstance(value, Mapping):
                    kinds = into.setdefault(key, {})
                    for kind, n in value.items():
                        if _number(n):
                            kinds[kind] = kinds.get(kind, 0) + n
    for name, sketch in latencies.items():
        counts[name]["latency_mean_s"] = sketch.mean
        counts[name]["latency_p90_s"] = sketch.quantile(0.9)
    return {
        name: {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in figures.items()}
        for name, figures in counts.items()
    }


def _sketch_of(values: Iterable[float]) -> LatencySketch:
    sketch = LatencySketch()
    sketch.add(values)
    return sketch


Piece = dict[str, Any]
"""One line of ``telemetry.jsonl``: ``chunk``, ``deals`` ([first, end) of the deal sets the
chunk played) and ``telemetry`` (participant name -> :func:`chunk_report`)."""


class TelemetryLog:
    """The run's ``telemetry.jsonl``: one line per chunk played, appended with its games.

    Args:
        path: The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, keep: Callable[[int, int, int], bool]) -> list[Piece]:
        """The lines of the chunks whose games the run keeps; the others are removed.

        A line of a chunk whose games were not all written (a stop between the two
        appends), a torn last line and a line repeated by a chunk played again are dropped,
        and the file is rewritten without them.

        Args:
            keep: ``keep(chunk, first_deal, end_deal)``: whether the games of that piece
                are all on disk.

        Raises:
            ConfigError: naming the file and line, for a line that is not telemetry (not at
                the end).
        """
        if not self.path.exists() and not self.path.is_symlink():
            return []
        try:
            raw = read_regular_file(self.path, MAX_LOG_BYTES, "telemetry log")
        except UnreadableFileError as err:
            raise ConfigError(f"{err}; move it away, or rerun with --fresh to start over") from None
        lines = raw.split(b"\n")
        kept: dict[tuple[int, int, int], Piece] = {}
        changed = bool(lines[-1])  # a torn last line (no newline after it)
        lines.pop()
        for number, line in enumerate(lines, start=1):
            try:
                piece = json.loads(line.decode())
                chunk, (first, end) = int(piece["chunk"]), piece["deals"]
                key = (chunk, int(first), int(end))
                if not isinstance(piece["telemetry"], dict):
                    raise ValueError("'telemetry' is not a mapping")
            except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
                if number == len(lines):  # cut short by a stop while it was written
                    changed = True
                    continue
                raise ConfigError(
                    f"{self.path}: line {number} is not telemetry ({one_line(err)}); delete "
                    "that line, or rerun with --fresh to discard every game"
                ) from None
            if key in kept or not keep(*key):
                changed = True
            kept[key] = piece
        pieces = [p for key, p in kept.items() if keep(*key)]
        if changed:
            text = "".join(json.dumps(p, separators=(",", ":")) + "\n" for p in pieces)
            write_file(self.path, text)
        return pieces

    def append(self, piece: Piece) -> None:
        """Append one chunk's line durably (``fsync``).

        Raises:
            OSError: one line naming the file.
        """
        data = (json.dumps(piece, separators=(",", ":")) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as err:
            raise write_error(err, self.path, "cannot open the telemetry log") from None
        try:
            before = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError as err:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                raise write_error(err, self.path, "cannot append telemetry to") from None
        finally:
            os.close(fd)
