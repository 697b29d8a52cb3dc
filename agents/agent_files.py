"""The files of an exported agent, checked before anything is built from them.

An exported agent is a ``.safetensors`` file (plain tensors) with a ``.json`` metadata file
beside it. This module finds the two files, reads them with size limits, parses JSON safely
(encoding, syntax, nesting) and reads the safetensors header without loading any tensor, so
that :func:`unolab.agents.learned.load_policy` can check everything against the metadata first.
Anything wrong raises one :class:`AgentFileError` naming the file and what to do.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from uno_env.console import name_too_long, portable_path
from uno_env.files import UnreadableFileError, read_regular_file, why_missing
from uno_env.files import shown as shown
from uno_env.rules import Rules

__all__ = [
    "ACTIVATION_NAMES",
    "EXPORT_HINT",
    "FLOAT_DTYPE_BYTES",
    "MAX_AGENT_FILE_BYTES",
    "MAX_EXTRA_TEXT_CHARS",
    "MAX_HIDDEN_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_METADATA_BYTES",
    "MAX_NAME_CHARS",
    "METADATA_KEYS",
    "AgentFileError",
    "MissingAgentFileError",
    "RepeatedKeyError",
    "agent_paths",
    "agent_stem",
    "is_json_int",
    "metadata_object",
    "parse_json",
    "read_bounded",
    "tensor_header",
    "unique_keys",
]

MAX_AGENT_FILE_BYTES = 256 * 2**20
"""The largest ``.safetensors`` file accepted (the shipped agents are under 1 MiB)."""

MAX_METADATA_BYTES = 16 * 2**20
"""The largest ``.json`` metadata file, and the largest safetensors header, accepted."""

MAX_HIDDEN_LAYERS = 16
"""The most hidden layers a policy network may have."""

MAX_LAYER_WIDTH = 65_536
"""The most units a hidden layer may have."""

MAX_NAME_CHARS = 200
"""The longest ``name`` (and ``algorithm``) an agent's metadata may give."""

MAX_EXTRA_TEXT_CHARS = 65_536
"""The longest text anywhere in an agent's ``extra`` metadata (the shipped ones are under
400 characters)."""

ACTIVATION_NAMES = ("tanh", "relu")
"""The activations a network may use, by their name in the metadata."""

FLOAT_DTYPE_BYTES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}
"""Safetensors dtypes a weight may have (copied into the float32 network), and their sizes."""

EXPORT_HINT = "re-export the agent (python -m unolab.train.export CHECKPOINT OUT writes both files)"


class AgentFileError(ValueError):
    """An exported agent's file is malformed, inconsistent or too large.

    The message names the file, what is wrong with it and what to do.
    """


class MissingAgentFileError(AgentFileError, FileNotFoundError):
    """An exported agent's file (its ``.safetensors`` or its ``.json``) does not exist.

    A ``FileNotFoundError``, and a ``ValueError`` too: the path is what a user gave (a
    command's argument, a search's ``prior=``, a tournament's participant), so callers that
    answer bad input with one line (the CLI, the web server) answer this one as well.
    """


def is_json_int(value: Any) -> bool:
    """A JSON integer (``true``/``false`` parse as bools, which Python counts as ints)."""
    return isinstance(value, int) and not isinstance(value, bool)


class RepeatedKeyError(ValueError):
    """A JSON object gives a key twice (the key is the error's ``key``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {shown(key)} is given twice")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (``json.loads``'s
    ``object_pairs_hook``): Python's parser keeps the last value, another reader the first,
    so the same file would describe two different things.

    Raises:
        RepeatedKeyError: naming the key.
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKeyError(key)
        out[key] = value
    return out


def parse_json(raw: bytes, where: str, what: str) -> Any:
    """Parse JSON bytes; any failure (encoding, syntax, nesting depth, a key given twice) is
    an AgentFileError."""
    if not raw.strip():
        raise AgentFileError(f"{where}: the {what} is empty; {EXPORT_HINT}")
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys)
    except RepeatedKeyError as err:
        raise AgentFileError(f"{where}: the {what} is not valid: {err}; {EXPORT_HINT}") from None
    except UnicodeDecodeError as err:
        raise AgentFileError(
            f"{where}: the {what} is not UTF-8 text ({err.reason} at byte {err.start}); "
            f"{EXPORT_HINT}"
        ) from None
    except json.JSONDecodeError as err:
        raise AgentFileError(
            f"{where}: the {what} is not valid JSON ({err.msg} at line {err.lineno} column "
            f"{err.colno}); {EXPORT_HINT}"
        ) from None
    except RecursionError:
        raise AgentFileError(
            f"{where}: the {what} is nested too deeply to be read; {EXPORT_HINT}"
        ) from None
    except ValueError:  # an integer of thousands of digits (Python's int-to-str guard)
        raise AgentFileError(
            f"{where}: the {what} holds a number too long to be read; {EXPORT_HINT}"
        ) from None


METADATA_KEYS = (
    "name",
    "algorithm",
    "obs_version",
    "obs_dim",
    "num_actions",
    "hidden",
    "activation",
    "rules",
    "extra",
)
"""The keys every agent's metadata holds (``digest`` is optional: older files lack it)."""


def metadata_object(data: Any, where: str) -> dict[str, Any]:
    """Parsed metadata, checked to be a JSON object holding every key of :data:`METADATA_KEYS`,
    each of its type and within bounds: what every reader of an agent's ``.json`` checks
    first, so that each reports a bad file the same way.

    Keys the lab does not know are ignored. Sizes must be positive integers, with at most
    :data:`MAX_HIDDEN_LAYERS` hidden layers of at most :data:`MAX_LAYER_WIDTH` units, so the
    network described is always small enough to build; ``name`` and ``algorithm`` are short
    printable text (:data:`MAX_NAME_CHARS`), and every text in ``extra`` is at most
    :data:`MAX_EXTRA_TEXT_CHARS` characters of writable Unicode.

    Raises:
        AgentFileError: naming ``where``, the key and the bad value (or the missing keys).
    """
    if not isinstance(data, dict):
        raise AgentFileError(
            f"{where}: expected a JSON object of metadata keys, got {shown(data)}; {EXPORT_HINT}"
        )
    missing = [key for key in METADATA_KEYS if key not in data]
    if missing:
        raise AgentFileError(
            f"{where}: not an exported agent's metadata: missing key(s) {missing}; {EXPORT_HINT}"
        )

    def bad(key: str, expected: str) -> AgentFileError:
        return AgentFileError(
            f"{where}: {key!r} must be {expected}, got {shown(data[key])}; {EXPORT_HINT}"
        )

    for key in ("name", "algorithm"):
        text = data[key]
        # isprintable() refuses NUL, other control characters and lone surrogates (which
        # no file or terminal can be written): the name reaches leaderboards and files.
        if not isinstance(text, str) or not text or len(text) > MAX_NAME_CHARS:
            raise bad(key, f"a non-empty string of at most {MAX_NAME_CHARS} characters")
        if not text.isprintable():
            raise bad(key, "printable text (no control characters or lone surrogates)")
    for key in ("obs_version", "obs_dim", "num_actions"):
        if not is_json_int(data[key]) or data[key] < 1:
            raise bad(key, "a positive integer")
    if data["obs_dim"] > MAX_LAYER_WIDTH or data["num_actions"] > MAX_LAYER_WIDTH:
        key = "obs_dim" if data["obs_dim"] > MAX_LAYER_WIDTH else "num_actions"
        raise bad(key, f"at most {MAX_LAYER_WIDTH}")
    hidden = data["hidden"]
    if not isinstance(hidden, list) or len(hidden) > MAX_HIDDEN_LAYERS:
        raise bad("hidden", f"a list of at most {MAX_HIDDEN_LAYERS} layer sizes")
    for i, width in enumerate(hidden):
        if not is_json_int(width) or not 1 <= width <= MAX_LAYER_WIDTH:
            raise AgentFileError(
                f"{where}: 'hidden'[{i}] must be an integer from 1 to {MAX_LAYER_WIDTH}, "
                f"got {shown(width)}; {EXPORT_HINT}"
            )
    if not isinstance(data["activation"], str) or data["activation"] not in ACTIVATION_NAMES:
        raise bad("activation", f"one of {list(ACTIVATION_NAMES)}")
    for key in ("rules", "extra"):
        if not isinstance(data[key], dict):
            raise bad(key, "a JSON object")
    _check_texts(data["extra"], f"{where}: 'extra'")
    try:
        Rules.from_dict(data["rules"], where=f"{where}: rules")
    except ValueError as err:
        raise AgentFileError(f"{err}; {EXPORT_HINT}") from None
    digest = data.get("digest")
    if digest is not None and not (
        isinstance(digest, str)
        and digest.startswith("sha256:")
        and len(digest) == 71
        and all(c in "0123456789abcdef" for c in digest[7:])
    ):
        raise bad("digest", "'sha256:' and 64 hexadecimal digits")
    return data


def _check_texts(value: Any, where: str) -> None:
    """Every string in ``value`` (keys included) is at most :data:`MAX_EXTRA_TEXT_CHARS`
    characters that can be written as UTF-8 (no lone surrogates).

    Raises:
        AgentFileError: naming ``where`` and the text, cut short.
    """
    # Iterative: the JSON parser already bounded the nesting, but a walk must not recurse.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if len(item) > MAX_EXTRA_TEXT_CHARS:
                raise AgentFileError(
                    f"{where}: a text of {len(item):,} characters ({shown(item)}), more than "
                    f"{MAX_EXTRA_TEXT_CHARS:,}; {EXPORT_HINT}"
                )
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise AgentFileError(
                    f"{where}: the text {shown(item)} holds a lone surrogate, which no file "
                    f"can hold; {EXPORT_HINT}"
                ) from None


def agent_paths(path: str | Path) -> tuple[Path, Path]:
    """The ``.safetensors`` and ``.json`` files of an agent given either, or their stem."""
    if not str(path).strip():
        raise AgentFileError(
            f"an empty agent path {shown(str(path))}; give an exported agent's .safetensors "
            "file (its .json metadata beside it)"
        )
    too_long = name_too_long(path)
    if too_long:  # the file system would answer [Errno 36]
        raise AgentFileError(too_long)
    given = portable_path(path)  # a path from another system's record: either separator
    if given.is_dir():
        raise AgentFileError(
            f"{str(given)!r} is a directory; give an exported agent's .safetensors file "
            "(its .json metadata beside it)"
        )
    suffix = given.suffix.lower()
    base = agent_stem(given)
    if not base.name:
        raise AgentFileError(
            f"{str(path)!r} is not an agent file; give an exported agent's .safetensors file"
        )
    # The file given keeps its own spelling (B.SAFETENSORS); its partner is looked up in
    # either case.
    weights = given if suffix == ".safetensors" else _beside(base, ".safetensors")
    meta_path = given if suffix == ".json" else _beside(base, ".json")
    for p in (weights, meta_path):
        if p.is_dir():
            raise AgentFileError(
                f"{str(p)!r} is a directory, not a file; an exported agent is a .safetensors "
                "file with its .json metadata beside it"
            )
        if p.exists() and not p.is_file():
            raise AgentFileError(
                f"{str(p)!r} is not a regular file (a pipe or device); an exported agent is "
                "a .safetensors file with its .json metadata beside it"
            )
        if not p.is_file():
            raise MissingAgentFileError(
                f"exported policy file {str(p)!r} {why_missing(p)}: an exported agent is a "
                ".safetensors file with its .json metadata beside it (python -m unolab.train.export "
                "CHECKPOINT OUT writes both)"
            )
    return weights, meta_path


def agent_stem(path: str | Path) -> Path:
    """An agent's path without its ``.safetensors`` or ``.json`` suffix (any other dot is
    part of its name: ``runs/gamma_0.99`` names ``gamma_0.99.safetensors``)."""
    given = portable_path(path)
    return given.with_suffix("") if given.suffix.lower() in (".safetensors", ".json") else given


def _beside(base: Path, suffix: str) -> Path:
    """``base`` with ``suffix``, or with the suffix in capitals if only that file exists."""
    lower = base.with_name(base.name + suffix)
    upper = base.with_name(base.name + suffix.upper())
    return upper if not lower.exists() and upper.is_file() else lower


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, refusing a file larger than ``limit`` (or not a regular file)."""
    try:
        size = path.stat().st_size
    except OSError as err:
        raise AgentFileError(f"{path}: cannot be read: {err.strerror or err}") from None
    if size > limit:
        raise AgentFileError(
            f"{path}: {size:,} bytes, more than the {limit:,} an agent file may have; "
            "check that this is an exported agent"
        )
    try:
        return read_regular_file(path, limit, "agent file")
    except UnreadableFileError as err:
        raise AgentFileError(f"{err}; check that this is an exported agent") from None


def tensor_header(weights: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The dtype and shape of each tensor of a safetensors file, from its header alone.

    The format: an 8-byte little-endian header length, a JSON header giving each tensor's
    dtype, shape and byte range, then the tensor bytes, which are not read here.

    Raises:
        AgentFileError: if the file is too large or short, or the header is malformed or
            does not account exactly for the tensor bytes.
    """
    hint = "the file is damaged or not an exported agent; copy it again or " + EXPORT_HINT
    size = weights.stat().st_size
    if size > MAX_AGENT_FILE_BYTES:
        raise AgentFileError(
            f"{weights}: {size:,} bytes, more than the {MAX_AGENT_FILE_BYTES:,} an agent file "
            "may have; check that this is an exported agent"
        )
    with weights.open("rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            raise AgentFileError(
                f"{weights}: {size} bytes, too short for a safetensors file; {hint}"
            )
        header_len = int.from_bytes(prefix, "little")
        if not 2 <= header_len <= min(size - 8, MAX_METADATA_BYTES):
            raise AgentFileError(
                f"{weights}: the header length {header_len:,} does not fit a file of "
                f"{size:,} bytes; {hint}"
            )
        raw = f.read(header_len)
    header = parse_json(raw, str(weights), "safetensors header")
    if not isinstance(header, dict):
        raise AgentFileError(f"{weights}: the safetensors header is not a JSON object; {hint}")
    data_size = size - 8 - header_len
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    ranges: list[tuple[int, int, str]] = []
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise AgentFileError(
                    f"{weights}: the header's __metadata__ must map names to strings; {hint}"
                )
            continue
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise AgentFileError(
                f"{weights}: tensor {shown(name)} needs exactly dtype, shape and "
                f"data_offsets, got {shown(entry)}; {hint}"
            )
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(dtype, str) or dtype not in FLOAT_DTYPE_BYTES:
            raise AgentFileError(
                f"{weights}: tensor {name!r} has dtype {shown(dtype)}; weights must be "
                f"floating point ({', '.join(FLOAT_DTYPE_BYTES)}); {EXPORT_HINT}"
            )
        if not isinstance(shape, list) or not all(is_json_int(d) and d >= 0 for d in shape):
            raise AgentFileError(
                f"{weights}: tensor {name!r} has shape {shown(shape)}, not a list of sizes; {hint}"
            )
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(is_json_int(o) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= data_size
            or offsets[1] - offsets[0] != math.prod(shape) * FLOAT_DTYPE_BYTES[dtype]
        ):
            raise AgentFileError(
                f"{weights}: tensor {name!r} ({dtype}, shape {shown(shape)}) has byte range "
                f"{shown(offsets)}, which does not fit the {data_size:,} data bytes; {hint}"
            )
        out[name] = (dtype, tuple(shape))
        ranges.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, _name in sorted(ranges):
        if begin != end:
            break
        end = stop
    if end != data_size:
        raise AgentFileError(
            f"{weights}: the tensors' byte ranges do not cover the {data_size:,} data bytes "
            f"exactly (overlapping, gaps or trailing bytes); {hint}"
        )
    return out
