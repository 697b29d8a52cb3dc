"""The tournament's telemetry, piece by piece: safe file names for participants, latencies
merged exactly (then within 1% in bounded memory), counts added over chunks, and the
``telemetry.jsonl`` log that a resumed run reads back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from uno_env.config_values import ConfigError
from unolab.tournament.telemetry import (
    EXACT_SAMPLES,
    LatencySketch,
    TelemetryLog,
    chunk_report,
    decisions_file,
    merge_telemetry,
    safe_file_name,
)


def test_a_participant_s_name_becomes_a_safe_distinct_file_name() -> None:
    assert safe_file_name("mixbot") == "mixbot"
    assert safe_file_name("my_model-2.yaml") == "my_model-2.yaml"
    names = ["qwen2.5:7b", "qwen2.5/7b", "qwen2.5 7b", "..", ".hidden", "", "a" * 300]
    safe = [safe_file_name(n) for n in names]
    assert len(set(safe)) == len(names)
    assert safe[0].startswith("qwen2.5_7b-")
    for name in safe:
        assert name and "/" not in name and ":" not in name and not name.startswith(".")
        assert len(name) <= 90
    path = decisions_file(Path("run"), "org/model:7b", 3)
    assert path.parent.parent == Path("run", "decisions") and path.name == "chunk-3.jsonl"


def test_latencies_merge_exactly_then_within_a_percent_in_bounded_memory() -> None:
    rng = np.random.default_rng(0)
    parts = [rng.lognormal(-1.5, 0.5, size=n) for n in (7, 500, 3000)]
    merged = LatencySketch()
    for part in parts:
        one = LatencySketch()
        one.add(part.tolist())
        merged.merge(LatencySketch.from_json(json.loads(json.dumps(one.to_json()))))
    every = np.concatenate(parts)
    assert merged.count == every.size
    assert merged.mean == pytest.approx(every.mean(), rel=1e-12)
    assert merged.quantile(0.9) == pytest.approx(np.percentile(every, 90), rel=1e-12)
    big = rng.lognormal(-1.5, 0.5, size=EXACT_SAMPLES + 5000)
    sketch = LatencySketch()
    sketch.add(big[:1000].tolist())
    rest = LatencySketch()
    rest.add(big[1000:].tolist())
    assert rest.samples is None and len(rest.bins) < 2000  # bins 1% wide, not samples
    sketch.merge(LatencySketch.from_json(rest.to_json()))
    assert sketch.count == big.size and sketch.mean == pytest.approx(big.mean(), rel=1e-9)
    assert sketch.quantile(0.9) == pytest.approx(np.percentile(big, 90), rel=0.01)
    assert LatencySketch().quantile(0.9) is None and LatencySketch().mean is None


def test_counts_add_over_chunks_and_latencies_are_recomputed() -> None:
    first = chunk_report(
        {"decisions": 3, "invalid": 1, "latency_mean_s": 9.0, "latency_p90_s": 9.0,
         "latencies_s": [0.1, 0.2, 0.3], "forms": {"tag": 2, "json": 1}, "flag": True,
         "note": "text"}
    )  # fmt: skip
    assert "latency_mean_s" not in first and "flag" not in first and "note" not in first
    second = chunk_report({"decisions": 2, "invalid": 0, "latencies_s": [0.4], "forms": {"tag": 1}})
    merged = merge_telemetry([{"m": first}, {"m": second}, {"bot": {"moves": 5}}])
    assert merged["m"]["decisions"] == 5 and merged["m"]["invalid"] == 1
    assert merged["m"]["forms"] == {"json": 1, "tag": 3}
    assert merged["m"]["latency_mean_s"] == pytest.approx(0.25)
    assert merged["m"]["latency_p90_s"] == pytest.approx(np.percentile([0.1, 0.2, 0.3, 0.4], 90))
    assert merged["bot"] == {"moves": 5}  # no latencies: no latency figures


def _piece(chunk: int, first: int, end: int, decisions: int) -> str:
    line = {"chunk": chunk, "deals": [first, end], "telemetry": {"m": {"decisions": decisions}}}
    return json.dumps(line) + "\n"


def test_the_log_keeps_the_lines_of_the_games_kept(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    log = TelemetryLog(path)
    assert log.load(lambda *_: True) == []
    log.append(json.loads(_piece(0, 0, 2, 10)))
    log.append(json.loads(_piece(1, 2, 4, 20)))
    with path.open("a") as f:
        f.write(_piece(1, 2, 4, 21))  # the chunk played again after a stop: the last counts
        f.write(_piece(2, 4, 6, 30))  # its games were not written
        f.write(_piece(3, 6, 8, 40)[:25])  # cut short
    kept = log.load(lambda chunk, first, end: chunk < 2)
    assert [p["telemetry"]["m"]["decisions"] for p in kept] == [10, 21]
    assert path.read_text() == "".join(
        json.dumps(p, separators=(",", ":")) + "\n" for p in kept
    )  # rewritten without the others
    path.write_text(_piece(0, 0, 2, 10) + "not json\n" + _piece(1, 2, 4, 20))
    with pytest.raises(ConfigError) as err:
        log.load(lambda *_: True)
    assert str(err.value).startswith(f"{path}: line 2 is not telemetry")
