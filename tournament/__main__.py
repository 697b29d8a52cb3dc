"""``python -m unolab.tournament``: see :mod:`unolab.tournament.cli`."""

from uno_env.console import run_main
from unolab.tournament.cli import main

run_main(main, "python -m unolab.tournament")
