"""Tournaments: rank bots and agents with duplicate deals, ratings and honest error bars.

Run one from a YAML file (a shipped one by name: ``uno-lab config list``) or from flags::

    uno-lab tournament --config tournament/bots_round_robin

or from Python::

    from unolab.tournament import load_config, run_tournament
    summary = run_tournament(load_config("my_tournament.yaml"))

Modules: ``config`` (the YAML schema), ``participants`` (bots and agents), ``design``
(tables, seatings, deal sets, chunks), ``chunks`` (playing one chunk through the lab's play
loop), ``results`` (the crash-safe game log and its one line encoder), ``run_folder`` (the
folder's config, lock and same-tournament check), ``resume`` (the checks of a resumed log),
``storage`` (bounded reads and atomic writes), ``pool`` and ``ray_runner`` (where chunks are
played), ``analysis`` (scores and tables), ``ratings`` (Bradley-Terry Elo with bootstrap
intervals, openskill), ``sprt`` (sequential tests), ``variance`` (the gain of duplicate
deals), ``summary``, ``report`` (JSON, CSV, plots, the terminal table), ``runner`` (the run
loop: resume, workers, early stop) and ``cli``. See ``docs/tournaments.md``.
"""

from unolab.tournament.config import ParticipantSpec, SprtConfig, TournamentConfig, load_config
from unolab.tournament.runner import run_tournament

__all__ = ["ParticipantSpec", "SprtConfig", "TournamentConfig", "load_config", "run_tournament"]
