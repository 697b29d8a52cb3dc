"""The optional parts of the lab and the pip command that installs each.

The lab's core needs only its own dependencies; some commands need an extra: the browser
table (``web``), Ray (``ray``), the RLCard peer of the benchmarks (``bench``), the notebooks
(``notebooks``). A command that reaches a missing one says which extra to install, in one
line, instead of ending in ``ModuleNotFoundError``.
"""

from __future__ import annotations

__all__ = ["EXTRA_OF_MODULE", "missing_extra_message"]

EXTRA_OF_MODULE: dict[str, str] = {
    "fastapi": "web",
    "starlette": "web",
    "uvicorn": "web",
    "ray": "ray",
    "rlcard": "bench",
    "jupyter": "notebooks",
    "nbformat": "notebooks",
    "nbclient": "notebooks",
    "ipykernel": "notebooks",
}
"""The top-level module of each optional dependency -> the extra that installs it."""

_INSTEAD: dict[str, str] = {"bench": ", or leave the peer out with --no-rlcard"}
"""What else a command without the extra can do, where there is something."""


def missing_extra_message(err: ModuleNotFoundError) -> str:
    """One line for a missing module: the extra and the pip command, when it is an extra's.

    Args:
        err: The import error.

    Returns:
        The message, e.g. ``this needs the 'web' extra (uvicorn is not installed): pip
        install 'uno-lab[web]'``.
    """
    module = (err.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is not None:
        instead = _INSTEAD.get(extra, "")
        return (
            f"this needs the '{extra}' extra ({module} is not installed): "
            f"pip install 'uno-lab[{extra}]'{instead}"
        )
    return (
        f"the module {module or err.name!r} is missing: reinstall uno-lab "
        "(pip install --force-reinstall uno-lab)"
    )
