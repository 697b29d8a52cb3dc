"""The Ray plumbing shared by evaluations, tournaments and sweeps.

Ray is an optional extra (``pip install 'uno-lab[ray]'``): nothing here imports it at module
level, so the lab imports without it, and :func:`require_ray` turns its absence into one
line that says how to install it.

:func:`connect` joins a Ray cluster for the length of a ``with`` block: ``address=None``
starts a local Ray with ``num_cpus`` CPUs (and stops it afterwards), ``"auto"`` joins the
cluster started on this machine by ``ray start --head``, and ``HOST:PORT`` joins that head
node. An address that cannot be reached is refused within :data:`CONNECT_TIMEOUT_S` seconds,
naming it. A Ray already initialised in this process (a notebook, a test fixture) is used as
it is and left running.

Agents travel to the workers as files, never as pickled policy objects:
:class:`AgentFiles` holds the bytes of an exported agent (``.safetensors`` + ``.json``) or of
an SB3 ``.zip`` (which only the tournament's ``allow_pickle`` lets through), and
:meth:`AgentFiles.materialise` writes them once per machine into a cache folder named after
their digest, where the ordinary loaders read them. A cluster's nodes therefore need the lab
installed, not the agent files.
"""

from __future__ import annotations

import hashlib
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from uno_env.console import require_extra
from uno_env.files import write_atomically
from unolab.agents.agent_files import agent_paths

__all__ = [
    "BACKENDS",
    "CONNECT_TIMEOUT_S",
    "AgentFiles",
    "RayBackendError",
    "check_address",
    "cluster_cpus",
    "connect",
    "require_ray",
]

BACKENDS = ("local", "ray")
"""Where parallel work runs: this machine's processes, or a Ray cluster."""

"""How to install the optional Ray extra (the pinned ``ray[tune]``)."""

CONNECT_TIMEOUT_S = 20.0
"""Longest wait for a cluster address to answer before the run is refused (the issue asks
for a clear error within 30 s)."""

_AGENT_CACHE = Path(tempfile.gettempdir()) / "uno-lab-agents"
"""Where workers write the agent files they receive, one folder per digest."""


class RayBackendError(ValueError):
    """Ray is missing, or the cluster cannot be reached: the message says what to do."""


def require_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        RayBackendError: when Ray is not installed, with the command that installs it.
    """
    return require_extra("ray", RayBackendError, "the ray backend")


def check_address(address: str | None) -> str | None:
    """Validate a cluster address: ``None`` (a local Ray), ``auto`` or ``HOST:PORT``.

    A ``ray://HOST:PORT`` (Ray Client) address is accepted too.

    Raises:
        RayBackendError: naming the address and the forms accepted.
    """
    if address is None or address == "auto":
        return address
    _, port = _host_port(address)
    if port is None:
        raise RayBackendError(
            f"--address {address!r} is not a Ray address; give auto (the cluster started here "
            "by `ray start --head`) or HOST:PORT of its head node (e.g. 10.0.0.1:6379)"
        )
    return address


def _host_port(address: str) -> tuple[str, int | None]:
    """The host and port of ``[ray://]HOST:PORT`` (port None when it is not one)."""
    text = address.removeprefix("ray://")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdecimal() or not 0 < int(port) < 65536:
        return host, None
    return host.strip("[]"), int(port)


def _probe(address: str, timeout: float) -> None:
    """Refuse an address whose port does not answer, before Ray's own, longer, retries."""
    host, port = _host_port(address)
    assert port is not None
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        why = err.strerror or type(err).__name__
        raise RayBackendError(
            f"cannot reach the Ray cluster at {address} ({why}): start its head node with "
            "`ray start --head` and pass the address it prints, or check --address"
        ) from None


def _init_within(ray: Any, timeout: float, **kwargs: Any) -> None:
    """``ray.init(**kwargs)``, refused after ``timeout`` seconds (an address that accepts
    connections but is not a Ray head node would otherwise keep it waiting for minutes)."""
    outcome: dict[str, BaseException | None] = {}

    def init() -> None:
        try:
            ray.init(**kwargs)
            outcome["error"] = None
        except BaseException as err:  # handed to the caller's thread below
            outcome["error"] = err

    thread = threading.Thread(target=init, name="ray-init", daemon=True)
    thread.start()
    thread.join(timeout)
    address = kwargs.get("address")
    if "error" not in outcome:
        raise RayBackendError(
            f"the Ray cluster at {address} did not answer within {timeout:.0f} s: is it a Ray "
            "head node (`ray start --head` prints its address)? check --address"
        )
    error = outcome["error"]
    if error is None:
        return
    if isinstance(error, (ConnectionError, RuntimeError, ValueError, TimeoutError)):
        message = " ".join(str(error).split())[:300]
        where = "on this machine (`ray start --head` starts one)" if address == "auto" else ""
        raise RayBackendError(
            f"cannot connect to the Ray cluster at {address}{' ' + where if where else ''}: "
            f"{message}"
        ) from None
    raise error


@contextmanager
def connect(
    address: str | None = None, num_cpus: int | None = None, timeout: float = CONNECT_TIMEOUT_S
) -> Iterator[ModuleType]:
    """Join (or start) a Ray cluster for the length of the block; yield the ``ray`` module.

    Args:
        address: ``None`` starts a local Ray (stopped when the block ends); ``auto`` joins
            the cluster started on this machine; ``HOST:PORT`` joins that head node.
        num_cpus: The CPUs of a local Ray (default: every core); ignored when joining.
        timeout: Seconds to wait for an address before refusing it.

    Raises:
        RayBackendError: Ray is not installed, or the address is malformed or does not
            answer (naming it, within ``timeout`` seconds).
    """
    ray = require_ray()
    check_address(address)
    if ray.is_initialized():
        yield ray
        return
    quiet = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": False}
    if address is None:
        ray.init(num_cpus=num_cpus, **quiet)
    else:
        if address != "auto":
            _probe(address, timeout)
        _init_within(ray, timeout, address=address, logging_level="WARNING", log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs of the cluster joined (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@dataclass(frozen=True)
class AgentFiles:
    """The bytes of an agent's files, to rebuild it on another machine.

    Attributes:
        main: The name of the file the loaders are given (``x.safetensors`` or ``x.zip``).
        files: Every file of the agent by name (the ``.safetensors`` and its ``.json``, or
            the ``.zip``), with its bytes.
        digest: SHA-256 of the names and bytes: the cache folder on the workers.
    """

    main: str
    files: tuple[tuple[str, bytes], ...]
    digest: str

    @classmethod
    def read(cls, path: str | Path) -> AgentFiles:
        """Read an exported agent (given by either file or the stem) or an SB3 ``.zip``.

        Raises:
            FileNotFoundError: when a file is missing.
            AgentFileError: (a ValueError) for a folder or a name that is no agent file.
        """
        given = Path(path)
        paths: tuple[Path, ...] = (given,) if given.suffix == ".zip" else agent_paths(given)
        files = tuple((p.name, p.read_bytes()) for p in paths)
        sha = hashlib.sha256()
        for name, data in files:
            sha.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
        return cls(main=paths[0].name, files=files, digest=sha.hexdigest()[:32])

    def materialise(self, root: Path = _AGENT_CACHE) -> Path:
        """Write the files under ``root/<digest>/`` (once per machine); the main file's path."""
        folder = root / self.digest
        main = folder / self.main
        if all((folder / name).is_file() for name, _ in self.files):
            return main
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in self.files:
            # Written aside and renamed: several workers of one machine may race here.
            write_atomically(folder / name, data)
        return main
