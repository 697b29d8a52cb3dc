"""Tournaments: rank bots and agents with duplicate deals, ratings and honest error bars.

Run one from a YAML file (``configs/tournament/``) or from flags::

    python -m unolab.tournament --config configs/tournament/bots_round_robin.yaml

or from Python::

    from unolab.tournament import load_config, run_tournament
    summary = run_tournament(load_config("configs/tournament/bots_round_robin.yaml"))

Modules: ``config`` (the YAML schema), ``participants`` (bots and agents), ``design``
(tables, seatings, deal sets, chunks), ``play`` (batched play with forfeits), ``results``
(the crash-safe game log), ``storage`` (the run folder's bounded reads and atomic writes),
``analysis`` (scores and tables), ``ratings`` (Bradley-Terry Elo with bootstrap intervals,
openskill), ``sprt`` (sequential tests), ``variance`` (the gain of duplicate deals),
``summary``, ``report`` (JSON, CSV, plots, the terminal table), ``runner`` (the folder's
lock, resume, workers, early stop), ``cli`` and ``bench``. See ``docs/tournaments.md``.
"""

from unolab.tournament.config import ParticipantSpec, SprtConfig, TournamentConfig, load_config
from unolab.tournament.runner import run_tournament

__all__ = ["ParticipantSpec", "SprtConfig", "TournamentConfig", "load_config", "run_tournament"]
