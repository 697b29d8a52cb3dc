"""Bad agent files: one clear domain error naming the file, nothing allocated, nothing lost.

Each case damages one file of a small, valid exported agent (its ``.safetensors`` weights or
its ``.json`` metadata), or names something that is not an agent, then loads it through
one public entry point: :func:`unolab.agents.learned.load_policy`, the resolver
(:func:`unolab.agents.resolve_policy`, :func:`unolab.agents.resolve_opponents`), a tournament's
:func:`unolab.tournament.participants.entrants_for`, or the ``uno-lab play`` command (in-process,
and once as a real process). For every case:

(a) the error is a domain exception (``AgentFileError``, ``CheckpointMismatchError``,
    ``FileNotFoundError``, ``ConfigError``, a plain ``ValueError`` from the resolver) and
    never a library's own (``SafetensorError``, ``json.JSONDecodeError``) or a bare
    ``KeyError``/``TypeError``/``RecursionError``/``MemoryError``...;
(b) its message names the bad file (or the bad name);
(c) a command exits with status 2 and prints ``error:`` without a traceback;
(d) no file was changed or removed, and a valid agent still loads and plays.

Huge sizes (``hidden: [1000000000]``, a header length of 2**63, a 300 MiB file) are refused
before anything is allocated, which keeps the whole table fast.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors import SafetensorError
from safetensors.torch import save_file
from support import ROOT

from uno_env import ConfigError, core
from uno_env.cards import NUM_ACTIONS
from uno_env.observation import OBS_DIM, OBS_VERSION, encode
from uno_env.rules import Rules
from unolab.agent_cards import agent_card
from unolab.agents import resolve_opponents, resolve_policy
from unolab.agents.agent_files import METADATA_KEYS, AgentFileError
from unolab.agents.learned import load_policy, save_policy
from unolab.agents.policy_metadata import CheckpointMismatchError, PolicyMetadata
from unolab.tournament.config import load_config
from unolab.tournament.participants import entrants_for

RULES = Rules(num_players=2)
HIDDEN = 8
FORBIDDEN = (
    SafetensorError,
    json.JSONDecodeError,
    UnicodeError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    ZeroDivisionError,
    RecursionError,
    MemoryError,
    OverflowError,
    RuntimeError,
)
"""Errors that mean the input reached code that did not check it."""


@dataclass(frozen=True)
class Agent:
    """A small valid exported agent in a test's own folder."""

    weights: Path
    meta: Path

    @property
    def folder(self) -> Path:
        return self.weights.parent


def _valid_tensors() -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return {
        "layer0.weight": torch.randn(HIDDEN, OBS_DIM, generator=gen),
        "layer0.bias": torch.zeros(HIDDEN),
        "layer1.weight": torch.randn(NUM_ACTIONS, HIDDEN, generator=gen),
        "layer1.bias": torch.zeros(NUM_ACTIONS),
    }


def _make_agent(folder: Path, name: str = "agent") -> Agent:
    meta = PolicyMetadata(
        name=name,
        algorithm="ppo",
        obs_version=OBS_VERSION,
        obs_dim=OBS_DIM,
        num_actions=NUM_ACTIONS,
        hidden=(HIDDEN,),
        activation="tanh",
        rules=RULES.to_dict(),
        extra={"note": "a test agent"},
    )
    tensors = _valid_tensors()
    layers = [(tensors[f"layer{i}.weight"], tensors[f"layer{i}.bias"]) for i in range(2)]
    weights = save_policy(folder / name, layers, meta)
    return Agent(weights, weights.with_suffix(".json"))


# --- ways to damage an agent; each returns the path to load -------------------------------

Damage = Callable[[Agent], Path]


def _weights_bytes(content: bytes | Callable[[bytes], bytes]) -> Damage:
    def damage(agent: Agent) -> Path:
        old = agent.weights.read_bytes()
        agent.weights.write_bytes(content(old) if callable(content) else content)
        return agent.weights

    return damage


def _raw(header: Any, data: bytes = b"", header_len: int | None = None) -> bytes:
    """A safetensors file from a header (a JSON value, or raw bytes) and data bytes."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if header_len is None else header_len) + raw + data


def _valid_header(**changes: Any) -> bytes:
    """A raw file whose header entries are the valid ones updated with ``changes``."""
    header: dict[str, Any] = {}
    offset = 0
    for name, tensor in _valid_tensors().items():
        size = tensor.numel() * 4
        header[name] = {
            "dtype": "F32",
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    for name, entry in changes.items():
        name = name.replace("__", ".")
        if entry is None:
            header.pop(name)
        else:
            header[name] = {**header.get(name, {}), **entry}
    return _raw(header, bytes(offset))


def _tensors(**changes: torch.Tensor | None) -> Damage:
    """Rewrite the weights with some tensors replaced (``layer0__bias``), added or removed."""

    def damage(agent: Agent) -> Path:
        tensors = _valid_tensors()
        for name, tensor in changes.items():
            name = name.replace("__", ".")
            if tensor is None:
                tensors.pop(name)
            else:
                tensors[name] = tensor
        save_file(tensors, str(agent.weights))
        _sign(agent)  # the metadata vouches for these weights: their own checks must refuse them
        return agent.weights

    return damage


def _sign(agent: Agent) -> None:
    """Rewrite the metadata's digest for the weights now on disk."""
    data = json.loads(agent.meta.read_text())
    meta = PolicyMetadata.from_dict({k: v for k, v in data.items() if k != "digest"})
    data["digest"] = meta.digest_of(agent.weights.read_bytes())
    agent.meta.write_text(json.dumps(data))


def _other_weights(agent: Agent) -> Path:
    """Another agent's weights (same shapes, other values) under this agent's metadata."""
    gen = torch.Generator().manual_seed(1)
    tensors = {name: torch.randn(t.shape, generator=gen) for name, t in _valid_tensors().items()}
    save_file(tensors, str(agent.weights))
    return agent.weights


_DELETE = object()


def _meta(**changes: Any) -> Damage:
    """Rewrite the metadata with some keys changed (or removed with ``_DELETE``)."""

    def damage(agent: Agent) -> Path:
        data = json.loads(agent.meta.read_text())
        for key, value in changes.items():
            if value is _DELETE:
                data.pop(key)
            else:
                data[key] = value
        agent.meta.write_text(json.dumps(data))
        return agent.weights

    return damage


def _meta_text(text: str | bytes) -> Damage:
    def damage(agent: Agent) -> Path:
        agent.meta.write_bytes(text.encode() if isinstance(text, str) else text)
        return agent.weights

    return damage


def _sparse(which: str, size: int) -> Damage:
    """Grow a file to ``size`` bytes without writing them (a sparse file: fast, no disk)."""

    def damage(agent: Agent) -> Path:
        with getattr(agent, which).open("r+b") as f:
            f.truncate(size)
        return agent.weights

    return damage


def _remove(which: str) -> Damage:
    def damage(agent: Agent) -> Path:
        getattr(agent, which).unlink()
        return agent.weights

    return damage


def _loop(which: str) -> Damage:
    """Make a file a symlink loop: it links to a link that links back to it."""

    def damage(agent: Agent) -> Path:
        target = getattr(agent, which)
        target.unlink()
        other = target.with_name(target.name + ".loop")
        other.symlink_to(target.name)
        target.symlink_to(other.name)
        return agent.weights

    return damage


def _elsewhere(relative: str) -> Damage:
    return lambda agent: agent.folder / relative


def _directory_as_weights(agent: Agent) -> Path:
    other = agent.folder / "dir_agent.safetensors"
    other.mkdir()
    agent.meta.rename(agent.folder / "dir_agent.json")
    return other


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- the catalogue --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: The test id.
        damage: Damages the agent's files; returns the path to give.
        expected: The domain exception(s) allowed.
        names: What the message must name: ``weights`` or ``meta`` (that file's name),
            ``given`` (the name of the path given) or any other literal text.
        via: ``load`` (load_policy), ``load_any_rules`` (load_policy without rules to
            check against), ``resolve`` (resolve_policy), ``opponents``
            (resolve_opponents), ``tournament`` (entrants_for), ``card`` (the agent's card,
            as ``uno-lab agents PATH`` prints it), ``cli`` (uno-lab play, in-process) or
            ``process`` (uno-lab play in a subprocess).
        also: More text the message must contain (what is wrong).
    """

    id: str
    damage: Damage
    expected: tuple[type[BaseException], ...] = (AgentFileError,)
    names: str = "weights"
    via: str = "load"
    also: str = ""


_MISMATCH = (CheckpointMismatchError,)
_MISSING = (FileNotFoundError,)

CASES: list[Case] = [
    # The weights file: empty, truncated, garbage, a broken header.
    Case("weights_zero_length", _weights_bytes(b""), also="too short"),
    Case("weights_shorter_than_header_length", _weights_bytes(b"\x10\x00\x00"), also="short"),
    Case("weights_truncated_in_header", _weights_bytes(lambda old: old[:40]), also="header"),
    Case("weights_truncated_in_data", _weights_bytes(lambda old: old[:-100]), also="bytes"),
    Case("weights_trailing_bytes", _weights_bytes(lambda old: old + b"\0" * 64), also="bytes"),
    Case(
        "weights_garbage",
        _weights_bytes(np.random.default_rng(0).bytes(4096)),
        also="damaged",
    ),
    Case("weights_text_file", _weights_bytes(b"hello, I am not an agent\n"), also="header"),
    Case("header_length_zero", _weights_bytes(_raw(b"{}", header_len=0)), also="header length"),
    Case(
        "header_length_huge",
        _weights_bytes(_raw(b"{}", header_len=2**63 + 5)),
        also="header length",
    ),
    Case("header_not_json", _weights_bytes(_raw(b"{not json")), also="not valid JSON"),
    Case("header_not_utf8", _weights_bytes(_raw(b'{"\xff\xfe": 1}')), also="UTF-8"),
    Case("header_not_an_object", _weights_bytes(_raw([1, 2, 3])), also="not a JSON object"),
    Case(
        "header_nested_10000_deep",
        _weights_bytes(_raw(_nested(10_000).encode())),
        also="nested too deeply",
    ),
    Case(
        "header_entry_not_an_object",
        _weights_bytes(_raw({"layer0.bias": 5})),
        also="layer0.bias",
    ),
    Case(
        "header_dtype_unknown",
        _weights_bytes(_valid_header(layer0__bias={"dtype": "Q99"})),
        also="dtype",
    ),
    Case(
        "header_shape_negative",
        _weights_bytes(_valid_header(layer0__bias={"shape": [-8]})),
        also="shape",
    ),
    Case(
        "header_shape_huge",
        _weights_bytes(_valid_header(layer0__weight={"shape": [10**9, 10**9]})),
        also="byte range",
    ),
    Case(
        "header_offsets_out_of_range",
        _weights_bytes(_valid_header(layer1__bias={"data_offsets": [10**12, 10**12 + 320]})),
        also="byte range",
    ),
    Case(
        "header_offsets_overlap",
        _weights_bytes(_valid_header(layer0__bias={"data_offsets": [32, 64]})),
        also="cover",
    ),
    Case(
        "header_offsets_not_integers",
        _weights_bytes(_valid_header(layer0__bias={"data_offsets": ["0", "32"]})),
        also="byte range",
    ),
    Case(
        "header_metadata_not_strings",
        _weights_bytes(_valid_header(__metadata__={"dtype": 1})),
        also="dtype",
    ),
    Case("weights_too_large", _sparse("weights", 300 * 2**20), also="more than"),
    # The tensors against the metadata.
    Case("tensor_missing", _tensors(layer1__bias=None), also="missing ['layer1.bias']"),
    Case("tensor_extra", _tensors(layer2__weight=torch.zeros(3, 3)), also="layer2.weight"),
    Case("tensor_wrong_shape", _tensors(layer0__weight=torch.zeros(HIDDEN, 7)), also="[8, 7]"),
    Case("tensor_transposed", _tensors(layer1__weight=torch.zeros(HIDDEN, 80)), also="[80, 8]"),
    Case(
        "tensor_integer_dtype",
        _tensors(layer0__bias=torch.zeros(HIDDEN, dtype=torch.int32)),
        also="I32",
    ),
    Case(
        "tensor_bool_dtype",
        _tensors(layer0__bias=torch.ones(HIDDEN, dtype=torch.bool)),
        also="BOOL",
    ),
    Case(
        "tensor_nan",
        _tensors(layer0__bias=torch.full((HIDDEN,), float("nan"))),
        also="NaN",
    ),
    Case("tensor_no_tensors", _tensors(**dict.fromkeys(_valid_tensors())), also="missing"),
    Case("meta_hidden_bigger_than_tensors", _meta(hidden=[16]), also="needs [16, "),
    Case("meta_extra_layer", _meta(hidden=[8, 8]), also="layer2"),
    # The metadata file.
    Case("meta_zero_length", _meta_text(""), names="meta", also="empty"),
    Case("meta_whitespace", _meta_text("  \n"), names="meta", also="empty"),
    Case("meta_garbage", _meta_text("{hidden: [8"), names="meta", also="not valid JSON"),
    Case("meta_not_utf8", _meta_text(b'{"name": "\xff"}'), names="meta", also="UTF-8"),
    Case("meta_not_an_object", _meta_text("[1, 2, 3]"), names="meta", also="JSON object"),
    Case("meta_null", _meta_text("null"), names="meta", also="JSON object"),
    Case(
        "meta_nested_10000_deep",
        _meta_text('{"hidden": ' + _nested(10_000) + "}"),
        names="meta",
        also="nested too deeply",
    ),
    Case("meta_missing_hidden", _meta(hidden=_DELETE), names="meta", also="'hidden'"),
    Case("meta_missing_rules", _meta(rules=_DELETE), names="meta", also="'rules'"),
    Case("meta_hidden_huge", _meta(hidden=[1_000_000_000]), names="meta", also="1000000000"),
    Case("meta_hidden_negative", _meta(hidden=[-8]), names="meta", also="-8"),
    Case("meta_hidden_zero", _meta(hidden=[0]), names="meta", also="'hidden'[0]"),
    Case("meta_hidden_fractional", _meta(hidden=[8.5]), names="meta", also="8.5"),
    Case("meta_hidden_bool", _meta(hidden=[True]), names="meta", also="True"),
    Case("meta_hidden_string", _meta(hidden="8"), names="meta", also="'8'"),
    Case("meta_hidden_string_item", _meta(hidden=["8"]), names="meta", also="'8'"),
    Case("meta_hidden_object", _meta(hidden={"a": 8}), names="meta", also="'hidden'"),
    Case("meta_hidden_too_many_layers", _meta(hidden=[8] * 17), names="meta", also="at most 16"),
    Case("meta_hidden_nested", _meta(hidden=[[8]]), names="meta", also="[8]"),
    Case("meta_obs_dim_string", _meta(obs_dim=str(OBS_DIM)), names="meta", also="'obs_dim'"),
    Case("meta_obs_dim_bool", _meta(obs_dim=True), names="meta", also="'obs_dim'"),
    Case("meta_obs_dim_negative", _meta(obs_dim=-OBS_DIM), names="meta", also="'obs_dim'"),
    Case("meta_obs_dim_huge", _meta(obs_dim=10**12), names="meta", also="'obs_dim'"),
    Case("meta_num_actions_null", _meta(num_actions=None), names="meta", also="'num_actions'"),
    Case("meta_obs_version_float", _meta(obs_version=3.5), names="meta", also="'obs_version'"),
    Case("meta_activation_unknown", _meta(activation="sigmoid"), names="meta", also="sigmoid"),
    Case("meta_activation_list", _meta(activation=["tanh"]), names="meta", also="activation"),
    Case("meta_name_number", _meta(name=5), names="meta", also="'name'"),
    Case("meta_rules_string", _meta(rules="official"), names="meta", also="'rules'"),
    Case("meta_rules_unknown_key", _meta(rules={"bogus": 1}), names="meta", also="bogus"),
    Case(
        "meta_rules_bad_value",
        _meta(rules={**RULES.to_dict(), "num_players": "two"}),
        names="meta",
        also="num_players",
    ),
    Case("meta_extra_list", _meta(extra=[]), names="meta", also="'extra'"),
    Case("meta_too_large", _sparse("meta", 20 * 2**20), names="meta", also="more than"),
    # Made for something else.
    Case(
        "meta_obs_version_other",
        _meta(obs_version=OBS_VERSION + 1),
        _MISMATCH,
        also="observation version",
    ),
    Case("meta_obs_dim_other", _meta(obs_dim=OBS_DIM - 1), _MISMATCH, also=str(OBS_DIM - 1)),
    Case("meta_num_actions_other", _meta(num_actions=81), _MISMATCH, also="81 actions"),
    Case(
        "meta_rules_other",
        _meta(rules={**RULES.to_dict(), "num_players": 3}),
        _MISMATCH,
        also="num_players",
    ),
    # Metadata that does not belong to its weights: the digest tells.
    Case("meta_of_other_weights", _other_weights, names="meta", also="digest does not match"),
    Case(
        "meta_rules_edited",
        _meta(rules={**RULES.to_dict(), "num_players": 3}),
        names="meta",
        via="load_any_rules",
        also="digest does not match",
    ),
    Case(
        "meta_algorithm_edited",
        _meta(algorithm="dqn"),
        names="meta",
        also="digest does not match",
    ),
    Case("meta_digest_malformed", _meta(digest="md5:0"), names="meta", also="'digest'"),
    Case("meta_digest_number", _meta(digest=7), names="meta", also="'digest'"),
    Case(
        "meta_number_of_5000_digits",
        _meta_text('{"name": "a", "obs_dim": 1' + "0" * 5000 + "}"),
        names="meta",
        also="number too long",
    ),
    # Not there, or not a file.
    Case("weights_missing", _remove("weights"), _MISSING, also="does not exist"),
    Case("meta_missing", _remove("meta"), _MISSING, names="meta", also="does not exist"),
    Case("path_does_not_exist", _elsewhere("nowhere/ghost.safetensors"), _MISSING, "given"),
    Case("directory_given", _elsewhere("."), names="is a directory"),
    Case("weights_is_a_directory", _directory_as_weights, names="given", also="directory"),
    # Every key the metadata must hold, missing: named the same way by loading and by cards.
    *(
        Case(
            f"meta_lacks_{key}_{via}",
            _meta(**{key: _DELETE}),
            names="meta",
            via=via,
            also=f"missing key(s) ['{key}']",
        )
        for key in METADATA_KEYS
        for via in ("load", "card")
    ),
    # A symlink loop is named as one, not as a missing file.
    Case("weights_symlink_loop", _loop("weights"), _MISSING, also="symlink loop"),
    Case("meta_symlink_loop", _loop("meta"), _MISSING, names="meta", also="symlink loop"),
    Case(
        "resolve_symlink_loop",
        _loop("weights"),
        (ValueError,),
        via="resolve",
        also="symlink loop",
    ),
    # Through the resolver, tournaments and the command line.
    Case("resolve_truncated", _weights_bytes(b"\x00" * 5), via="resolve", also="too short"),
    Case("resolve_hidden_huge", _meta(hidden=[10**9]), names="meta", via="resolve"),
    Case(
        "resolve_meta_missing",
        _remove("meta"),
        (ValueError,),
        names="meta",
        via="resolve",
        also="does not exist",
    ),
    Case(
        "resolve_path_does_not_exist",
        _elsewhere("nowhere/ghost.safetensors"),
        (ValueError,),
        names="given",
        via="resolve",
    ),
    Case(
        "opponents_rules_other",
        _meta(rules={**RULES.to_dict(), "uno_call": False}),
        _MISMATCH,
        via="opponents",
        also="uno_call",
    ),
    Case("opponents_garbage", _weights_bytes(b"x" * 100), via="opponents", also="header"),
    Case(
        "tournament_garbage",
        _weights_bytes(b"garbage" * 100),
        (ConfigError,),
        via="tournament",
        also="participant",
    ),
    Case(
        "tournament_nested_meta",
        _meta_text(_nested(10_000)),
        (ConfigError,),
        names="meta",
        via="tournament",
    ),
    Case(
        "tournament_missing",
        _remove("weights"),
        (ConfigError,),
        via="tournament",
        also="does not exist",
    ),
    # Text in the metadata that no leaderboard, terminal or file can show or hold.
    Case("meta_name_nul", _meta(name="a\x00b"), names="meta", also="'name'"),
    Case("meta_name_lone_surrogate", _meta(name="\ud800"), names="meta", also="'name'"),
    Case("meta_name_huge", _meta(name="n" * 100_000), names="meta", also="at most 200"),
    Case("meta_algorithm_control", _meta(algorithm="ppo\x1b[2J"), names="meta", also="'algorithm'"),
    Case(
        "meta_extra_huge_text",
        _meta(extra={"note": "y" * 5_000_000}),
        names="meta",
        also="5,000,000 characters",
    ),
    Case(
        "meta_extra_lone_surrogate",
        _meta(extra={"runs": [{"\udfff": 1}]}),
        names="meta",
        also="lone surrogate",
    ),
    # A card checks the metadata as loading does: no absurd network is described.
    Case("card_hidden_huge", _meta(hidden=[10**9]), names="meta", via="card", also="1000000000"),
    Case("card_hidden_2_pow_64", _meta(hidden=[2**64]), names="meta", via="card"),
    Case("card_name_nul", _meta(name="a\x00b"), names="meta", via="card", also="'name'"),
    Case("cli_play_truncated", _weights_bytes(lambda old: old[:100]), via="cli"),
    Case("cli_play_hidden_negative", _meta(hidden=[-1]), names="meta", via="cli"),
    Case("cli_play_missing", _elsewhere("ghost.safetensors"), names="given", via="cli"),
    Case("cli_play_rules_other", _meta(rules={**RULES.to_dict(), "num_players": 4}), via="cli"),
    Case("process_play_garbage", _weights_bytes(b"\x01" * 64), via="process"),
]


# --- running a case -------------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, object]:
    """Every file's bytes (its size and time for the huge sparse ones), every folder."""

    def content(p: Path) -> object:
        if p.is_symlink():
            return ("link", os.readlink(p))
        if p.is_dir():
            return None
        stat = p.stat()
        return (stat.st_size, stat.st_mtime_ns) if stat.st_size > 2**20 else p.read_bytes()

    return {str(p.relative_to(folder)): content(p) for p in sorted(folder.rglob("*"))}


def _plays(policy: Any) -> None:
    state = core.init(RULES, 4, seed=1)
    masks = core.legal_action_mask(RULES, state)
    actions = policy.act(encode(RULES, state), masks)
    assert masks[np.arange(4), actions].all()


def _command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``uno-lab`` in-process; it must exit 2 with one error and no traceback."""
    from unolab.cli import main

    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's way out
        code = exit_.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert "error:" in err
    assert "Traceback" not in out + err
    return err


def _process(argv: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "unolab.cli", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "error:" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done.stderr


def _tournament(path: Path, out_dir: Path) -> None:
    config = load_config(
        {
            "name": "bad_agent",
            "participants": ["random", str(path)],
            "deal_sets": 2,
            "output_dir": str(out_dir),
        }
    )
    entrants_for(config)


def _run(case: Case, path: Path, agent: Agent, capsys: pytest.CaptureFixture[str]) -> str:
    """Give ``path`` through ``case.via``; return the error message."""
    players = ["play", "--players", "2", "--opponents", str(path)]
    if case.via == "cli":
        return _command(players, capsys)
    if case.via == "process":
        return _process(players)
    calls: dict[str, Callable[[], object]] = {
        "load": lambda: load_policy(path, rules=RULES),
        "load_any_rules": lambda: load_policy(path),
        "resolve": lambda: resolve_policy(str(path), rules=RULES, seed=0),
        "opponents": lambda: resolve_opponents([str(path), "mixbot"], rules=RULES),
        "tournament": lambda: _tournament(path, agent.folder.parent / "tournament_out"),
        "card": lambda: agent_card(str(path)),
    }
    with pytest.raises(BaseException) as info:  # the type is checked below
        calls[case.via]()
    err = info.value
    assert isinstance(err, case.expected), f"{type(err).__name__}: {err}"
    assert not isinstance(err, FORBIDDEN), f"{type(err).__name__}: {err}"
    message = str(err)
    assert "\n" not in message, message
    return message


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    """A valid agent, loaded after every case to show nothing else was disturbed."""
    return _make_agent(tmp_path_factory.mktemp("reference"), "reference")


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 25
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_agent_file(
    case: Case, tmp_path: Path, reference: Agent, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = _make_agent(tmp_path / "agents")
    path = case.damage(agent)
    before = _snapshot(tmp_path)

    message = _run(case, path, agent, capsys)

    needle = {"weights": agent.weights.name, "meta": agent.meta.name, "given": path.name}
    assert needle.get(case.names, case.names) in message, message
    assert case.also in message, message
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("tournament_out")} == before
    _plays(load_policy(reference.weights, rules=RULES))


def test_an_export_carries_the_digest_of_its_weights(tmp_path: Path) -> None:
    agent = _make_agent(tmp_path)
    data = json.loads(agent.meta.read_text())
    meta = PolicyMetadata.from_dict(data)
    assert data["digest"] == meta.digest_of(agent.weights.read_bytes())
    assert load_policy(agent.weights).meta.digest == data["digest"]


def test_metadata_without_a_digest_loads_unchecked(tmp_path: Path) -> None:
    """Agents exported before digests existed still load (their pairing is not checked)."""
    agent = _make_agent(tmp_path)
    data = json.loads(agent.meta.read_text())
    del data["digest"]
    agent.meta.write_text(json.dumps(data))
    assert load_policy(agent.weights, rules=RULES).meta.digest is None


def test_every_shipped_agent_is_signed() -> None:
    for meta_path in sorted((ROOT / "agents/pretrained").glob("*.json")):
        policy = load_policy(meta_path.with_suffix(".safetensors"))
        assert policy.meta.digest is not None, meta_path.name


def test_the_required_keys_are_the_fields_of_the_metadata() -> None:
    """Every field but the optional digest is required, by one list that every reader checks."""
    fields = set(PolicyMetadata.__dataclass_fields__) - {"digest"}
    assert set(METADATA_KEYS) == fields


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"rules": 7}, ValueError, "'7'"),
        ({"rules": "no_such_preset"}, ValueError, "'no_such_preset'"),
        ({"seed": -1}, ValueError, "-1"),
        ({"seed": "x"}, ValueError, "'x'"),
        ({"seed": 1.5}, ValueError, "1.5"),
        ({"seed": 2**64}, ValueError, "18446744073709551616"),
        ({"deterministic": "no"}, TypeError, "'no'"),
        ({"deterministic": 1}, TypeError, "deterministic"),
    ],
)
def test_bad_load_policy_arguments(
    kwargs: dict[str, Any], error: type[Exception], says: str, reference: Agent
) -> None:
    with pytest.raises(error) as info:
        load_policy(reference.weights, **kwargs)
    message = str(info.value)
    assert "\n" not in message and says in message, message


def test_load_policy_takes_rules_by_name_and_numpy_seeds(reference: Agent) -> None:
    seed: Any = np.uint64(2**64 - 1)  # NumPy integers are accepted wherever an int is
    policy = load_policy(reference.weights, rules="official", seed=seed)
    _plays(policy)
    with pytest.raises(ValueError, match="an empty agent path ''"):
        load_policy("")
