"""What a language-model agent asked and was answered: a JSON line per decision, and the
cache that answers a recorded prompt again without asking the model.

:class:`DecisionWriter` appends one JSON object per decision to a file and flushes it, so
that a run cut short keeps every decision made before. Its fields (:func:`decision_record`
builds them):

* ``model``, ``agent``: what answered, and the agent's name;
* ``game`` (the game's key), ``seat``, ``hand_no``, ``turn``: which decision;
* ``messages``: the messages of this decision in order, the model's answers included (the
  system message and the first prompt; an invalid answer and the feedback on it; the
  second answer), and ``history``: how many messages of the same conversation came before
  (the ``"changes"`` view sends them again; they are in the earlier records);
* ``responses``: the raw text of each answer;
* ``requests``: per answer, its ``key`` (:func:`messages_key`), ``latency_s``,
  ``tokens_in``, ``tokens_out``, ``retries`` (transport), ``timeouts`` and ``replayed``;
* ``action`` (notation) and ``action_id``, ``form`` (the form the accepted answer was read
  in, ``null`` for a fallback), ``invalid`` (0, 1 or 2 invalid answers), ``retried``,
  ``fallback``, ``errors`` (why each invalid answer was refused);
* ``latency_s``, ``tokens_in``, ``tokens_out``: the decision's totals.

No record holds the API key: the agent never has it (the client reads it).

:class:`DecisionCache` reads such files back: each recorded answer is filed under the
hash of the model and the messages that asked it, and handed out again, once per
recording, in the order recorded. An agent with a cache asks the model only for prompts
it does not hold (``replayed`` in its telemetry).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from uno_env import cards as C
from uno_env.config_values import ConfigError
from uno_env.files import shown, why_missing
from uno_env.text.answers import Answer
from uno_env.text.prompt import Prompt
from unolab.agents.llm.client import Completion, Message

__all__ = [
    "Decision",
    "DecisionCache",
    "DecisionWriter",
    "Telemetry",
    "decision_record",
    "failure_record",
    "messages_key",
]


def messages_key(model: str, messages: Sequence[Message]) -> str:
    """The cache key of a request: a hash of the model's name and the messages, in order."""
    text = json.dumps([model, list(messages)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class DecisionWriter:
    """Appends decision records to ``path``, one JSON line each, flushed per line.

    Thread-safe. The file is created with its folder if need be.

    Raises:
        OSError: if the file cannot be opened for appending.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")
        if self._file.tell() and not _ends_a_line(self.path):
            self._file.write("\n")  # a line cut short by a stop mid-write stays a line apart
        self._lock = threading.Lock()

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is None:
                raise ValueError(f"decision records {str(self.path)!r}: the file is closed")
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        """Close the file (writing after raises)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _ends_a_line(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, 2)
        return file.read(1) == b"\n"


class DecisionCache:
    """Recorded answers by the hash of what asked them (:func:`messages_key`).

    Each recorded answer is handed out once, in the order recorded: two decisions that
    asked the same thing (the same deal played twice) get back what each got.
    """

    def __init__(self) -> None:
        self._answers: dict[str, deque[Completion]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The answers it still holds."""
        with self._lock:
            return sum(len(queue) for queue in self._answers.values())

    def add(self, key: str, completion: Completion) -> None:
        """File an answer under ``key``."""
        with self._lock:
            self._answers.setdefault(key, deque()).append(completion)

    def take(self, key: str) -> Completion | None:
        """The next answer filed under ``key`` (marked replayed, without latency), or None."""
        with self._lock:
            queue = self._answers.get(key)
            if not queue:
                return None
            found = queue.popleft()
        return Completion(
            text=found.text,
            tokens_in=found.tokens_in,
            tokens_out=found.tokens_out,
            replayed=True,
        )

    def add_records(self, records: Iterable[Mapping[str, Any]]) -> None:
        """File the answers of decision records (as :class:`DecisionWriter` writes them)."""
        for record in records:
            answers = [
                (
                    str(request["key"]),
                    Completion(
                        text=str(text),
                        tokens_in=int(request.get("tokens_in", 0)),
                        tokens_out=int(request.get("tokens_out", 0)),
                    ),
                )
                for request, text in zip(record["requests"], record["responses"], strict=True)
            ]  # all read before any is filed: a malformed record files nothing
            for key, completion in answers:
                self.add(key, completion)

    @classmethod
    def load(cls, *paths: str | Path) -> DecisionCache:
        """A cache of the answers recorded in ``paths`` (missing files hold none).

        A last line cut short (a run stopped while writing it) is skipped.

        Raises:
            ConfigError: naming the file and the line, for a line that is not a decision
                record, or a file that cannot be read.
        """
        cache = cls()
        for path in paths:
            p = Path(path)
            if not p.exists():
                if p.is_symlink():
                    raise ConfigError(f"decision records {str(p)!r} {why_missing(p)}")
                continue
            try:
                lines = p.read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError) as err:
                raise ConfigError(f"decision records {str(p)!r} cannot be read: {err}") from None
            for number, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    cache.add_records([json.loads(line)])
                except (ValueError, KeyError, TypeError, AttributeError) as err:
                    if number == len(lines) - 1:  # no newline after it: cut short mid-write
                        continue  # the decision is asked again
                    raise ConfigError(
                        f"decision records {str(p)!r}, line {number + 1}: not a decision "
                        f"record ({type(err).__name__}: {err}; it begins {shown(line[:40])})"
                    ) from None
        return cache


@dataclass
class Decision:
    """One row's decision while it is asked: what is sent, what came back."""

    row: int
    game: int
    seat: int
    view: dict[str, Any]
    prompt: Prompt
    history: int
    """Messages of the conversation sent before this decision (not recorded again)."""
    sending: list[Message]
    keys: list[str] = field(default_factory=list)
    completions: list[Completion] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    failure: BaseException | None = None
    action: int = 0
    fallback: bool = False

    @property
    def settled(self) -> bool:
        """Whether no further request is needed (a valid answer, a failure, two answers)."""
        return self.failure is not None or (
            bool(self.answers) and (self.answers[-1].valid or len(self.answers) >= 2)
        )


def decision_record(
    d: Decision, model: str, agent: str, answered: list[Message], turn: int, hand_no: int
) -> dict[str, Any]:
    """The JSON record of a settled decision (the fields: see the module).

    Args:
        d: The decision.
        model: The model that answered.
        agent: The agent's name.
        answered: The messages sent and the last answer.
        turn: The game's turn counter at the decision.
        hand_no: The hand it was taken in.
    """
    completions = d.completions
    return {
        "model": model,
        "agent": agent,
        "game": d.game,
        "seat": d.seat,
        "hand_no": hand_no,
        "turn": turn,
        "history": d.history,
        "messages": answered[d.history :],
        "responses": [c.text for c in completions],
        "requests": [
            {
                "key": key,
                "latency_s": round(c.latency_s, 6),
                "tokens_in": c.tokens_in,
                "tokens_out": c.tokens_out,
                "retries": c.retries,
                "timeouts": c.timeouts,
                "replayed": c.replayed,
            }
            for key, c in zip(d.keys, completions, strict=True)
        ],
        "action": C.action_name(d.action),
        "action_id": d.action,
        "form": None if d.fallback else d.answers[-1].form,
        "invalid": sum(not a.valid for a in d.answers),
        "retried": len(d.answers) > 1,
        "fallback": d.fallback,
        "errors": [a.error for a in d.answers if not a.valid],
        "latency_s": round(sum(c.latency_s for c in completions), 6),
        "tokens_in": sum(c.tokens_in for c in completions),
        "tokens_out": sum(c.tokens_out for c in completions),
    }


class Telemetry:
    """What an agent did, counted as its decisions settle (:meth:`as_dict` for the fields)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.forms: Counter[str] = Counter()
        """Accepted answers by the form they were read in."""
        self.latencies: list[float] = []
        """Seconds of each request answered by the model (replayed answers have none)."""

    def settled(self, d: Decision) -> None:
        """Count a settled decision: its answers, retry, fallback and requests."""
        counts = self.counts
        counts["decisions"] += 1
        counts["invalid"] += sum(not a.valid for a in d.answers)
        counts["retries"] += len(d.answers) - 1
        counts["fallbacks"] += d.fallback
        if not d.fallback:
            self.forms[d.answers[-1].form] += 1
        for c in d.completions:
            if c.replayed:
                counts["replayed"] += 1
                continue
            counts["requests"] += 1
            counts["transport_retries"] += c.retries
            counts["timeouts"] += c.timeouts
            counts["tokens_in"] += c.tokens_in
            counts["tokens_out"] += c.tokens_out
            self.latencies.append(c.latency_s)

    def failed(self, err: BaseException) -> None:
        """Count a request given up (its game forfeits), with the tries it took."""
        self.counts["failed_requests"] += 1
        self.counts["transport_retries"] += getattr(err, "retries", 0)
        self.counts["timeouts"] += getattr(err, "timeouts", 0)

    def as_dict(self) -> dict[str, Any]:
        """The counts as :meth:`unolab.agents.llm.agent.LLMAgent.telemetry` reports them."""
        c = self.counts
        lat = np.asarray(self.latencies, dtype=np.float64)
        out: dict[str, Any] = {
            key: int(c[key])
            for key in (
                "decisions", "requests", "replayed", "invalid", "retries", "fallbacks",
                "timeouts", "transport_retries", "failed_requests", "tokens_in", "tokens_out",
            )
        }  # fmt: skip
        out["latency_mean_s"] = float(lat.mean()) if lat.size else None
        out["latency_p90_s"] = float(np.percentile(lat, 90)) if lat.size else None
        out["forms"] = dict(sorted(self.forms.items()))
        return out


def failure_record(
    model: str, agent: str, key: int, seat: int, hand_no: int, turn: int, action: int, why: str
) -> dict[str, Any]:
    """The record of a decision the endpoint failed, whose game played ``action`` (the
    fallback) instead: no messages or answers, ``endpoint_error`` saying why (the fields:
    see the module)."""
    return {
        "model": model, "agent": agent, "game": key, "seat": seat, "hand_no": hand_no,
        "turn": turn, "history": 0, "messages": [], "responses": [], "requests": [],
        "action": C.action_name(action), "action_id": action, "form": None, "invalid": 0,
        "retried": False, "fallback": True, "errors": [why], "endpoint_error": why,
        "latency_s": 0.0, "tokens_in": 0, "tokens_out": 0,
    }  # fmt: skip
