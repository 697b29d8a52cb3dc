"""uno-lab: train, rank and play UNO agents on a vectorised engine.

The installed package holds the ``uno-lab`` command (:mod:`unolab.cli`) and the lab's layers
above the game core :mod:`uno_env`.
"""

from importlib import metadata

try:
    __version__ = metadata.version("uno-lab")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
