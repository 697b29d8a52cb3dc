"""Participants: turn config entries into picklable policy builders.

An :class:`Entrant` builds a fresh :class:`uno_env.policy.Policy` from an integer seed. Each
worker process builds its own policies for every chunk it plays (seeded from the config
seed, the chunk and the participant), so no policy object crosses a process boundary and the
same config always gives the same games.

Kinds of participant, each resolved by :func:`unolab.agents.resolve.policy_factory` (the
resolver of every agent name):

* a bot or a search by name, or a Python class by its spec (``my_bots.py:MyBot``,
  ``package.module:MyBot``: :mod:`unolab.agents.python_bots`), built in each worker from the
  spec (a file by its absolute path);
* an exported agent, ``.safetensors`` + ``.json``, or a shipped agent by name: plain tensors
  and a JSON description, nothing is unpickled;
* a language model's spec file (``my_model.yaml`` holding ``llm:``), built in each worker
  from the file: the agent asks the model for the decisions of every table of the chunk,
  ``concurrency`` requests at a time;
* an SB3 ``.zip`` checkpoint (MaskablePPO or the lab's DQN), only with ``allow_pickle``:
  SB3 zips are read with cloudpickle, which runs code from the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from uno_env.config_values import ConfigError
from uno_env.policy import Policy
from uno_env.rules import Rules
from unolab.agents.llm.spec import spec_suffix
from unolab.agents.resolve import policy_factory
from unolab.tournament.config import ParticipantSpec, TournamentConfig

__all__ = [
    "Entrant",
    "PolicyFactory",
    "SpecFactory",
    "entrants_for",
    "limit_torch_threads",
    "load_sb3_policy",
]


def limit_torch_threads() -> None:
    """One torch thread per process: the workers share the cores."""
    import torch

    torch.set_num_threads(1)


PolicyFactory = Callable[[int], Policy]
"""Builds one policy from an integer seed. Must be picklable to run in worker processes."""


def load_sb3_policy(path: str | Path, rules: Rules) -> Policy:
    """Load an SB3 zip checkpoint (MaskablePPO or the lab's DQN) as a deterministic policy.

    This unpickles the file: call it only for trusted files (the CLI asks for
    ``--allow-pickle``). An SB3 zip does not record the rules it was trained under, so
    unlike exported agents they are not checked; the network must take this lab's
    observations. Each process loads a file once.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: if the file is neither a MaskablePPO nor a DQN checkpoint.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"checkpoint {str(p)!r} does not exist")
    cache_key = (str(p.resolve()), p.stat().st_mtime_ns, rules)
    if cache_key not in _SB3_CACHE:
        _SB3_CACHE[cache_key] = _load_sb3(p, rules)
    return _SB3_CACHE[cache_key]


_SB3_CACHE: dict[tuple[str, int, Rules], Policy] = {}
"""Loaded SB3 policies by file (their argmax play is stateless, so one object serves all)."""


def _load_sb3(p: Path, rules: Rules) -> Policy:
    # torch and SB3 are imported only when an SB3 zip is played (the tournament imports
    # neither otherwise).
    from unolab.train.algorithms import ALGORITHMS, load_checkpoint
    from unolab.train.export import snapshot_policy

    errors = []
    for algorithm in ALGORITHMS.values():  # MaskablePPO first, then DQN
        try:
            model = load_checkpoint(p, algorithm.name)
            return snapshot_policy(model, p.stem, algorithm.name, rules)
        except Exception as err:  # not a zip of this algorithm: try the next one
            errors.append(f"{algorithm.label}: {err}")
    raise ValueError(f"{p}: not a MaskablePPO or DQN checkpoint ({'; '.join(errors)})")


@dataclass(frozen=True)
class SpecFactory:
    """The picklable builder of a configured participant (a bot name or an agent file): the
    local backend's workers get it pickled, the Ray backend sends the file's bytes instead.

    Every participant is resolved by :func:`unolab.agents.resolve.policy_factory`, in each
    process that builds it; an SB3 zip, which the resolver refuses (loading it runs code),
    is loaded by :func:`load_sb3_policy`, only with ``allow_pickle``."""

    spec: ParticipantSpec
    rules: Rules

    def __call__(self, seed: int) -> Policy:
        spec = self.spec
        if spec.is_pickle:  # the one form the resolver refuses: loading it runs code
            limit_torch_threads()
            return load_sb3_policy(str(spec.path), self.rules)
        if spec.path is not None and not spec_suffix(spec.path):  # a language model needs none
            limit_torch_threads()
        what = spec.bot if spec.bot is not None else str(spec.path)
        return policy_factory(what, self.rules, deterministic=spec.deterministic)(seed)


@dataclass(frozen=True)
class Entrant:
    """A named participant and the builder of its policy.

    Attributes:
        name: The leaderboard name.
        factory: Builds a fresh policy from a seed (picklable for multiprocessing).
        description: Where it comes from (a bot name or a file), for the summary.
        records: The run folder where its policy records its decisions, when it keeps
            records (:mod:`unolab.tournament.telemetry`); ``None``: no records.
    """

    name: str
    factory: PolicyFactory = field(compare=False)
    description: str = ""
    records: Path | None = field(default=None, compare=False)

    def build(self, seed: int) -> Policy:
        """A fresh policy seeded with ``seed``."""
        return self.factory(seed)


def entrants_for(
    config: TournamentConfig, overrides: Mapping[str, PolicyFactory] | None = None
) -> list[Entrant]:
    """The entrants of a config, by participant id, each loaded once to fail early.

    Args:
        config: The tournament.
        overrides: Factories that replace configured participants by name (tests use this
            for faulty agents; a library user for agents that are neither files nor
            importable classes). The run records their names: a replay of their games says
            it cannot rebuild them.

    Raises:
        ConfigError: for an override naming no participant, or a participant that cannot be
            loaded (missing or corrupt file, mismatched rules or observation version).
    """
    rules = config.game_rules()
    overrides = dict(overrides or {})
    names = [p.display_name for p in config.all_participants]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise ConfigError(f"overrides for unknown participant(s) {unknown}; names are {names}")
    out = []
    for spec in config.all_participants:
        name = spec.display_name
        if name in overrides:
            out.append(Entrant(name, overrides[name], "override"))
            continue
        factory = SpecFactory(spec, rules)
        try:
            built = factory(0)
            closer = getattr(built, "close", None)
            if callable(closer):  # a language model's client: its connections go now
                closer()
        except Exception as err:  # any loading failure (e.g. a corrupt file) is the file's
            message = " ".join(str(err).split()) or type(err).__name__
            where = "" if spec.path is None or spec.path in message else f" ({spec.path})"
            raise ConfigError(f"participant {name!r}{where}: {message}") from err
        out.append(Entrant(name, factory, spec.bot or str(spec.path)))
    return out
