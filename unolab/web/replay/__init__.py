"""The Replay tab: games already played, shown frame by frame.

Modules: ``frames`` (a recorded game as the table before each decision), ``records`` (saved
web games and uploaded ``uno-lab play --record`` files), ``tournament`` (a tournament's game
played again exactly, from the runs the Lab tab's walk finds) and ``routes``.
"""
