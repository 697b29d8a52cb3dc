"""``python -m unolab.tournament``: see :mod:`unolab.tournament.cli`."""

import sys

from unolab.tournament.cli import main

sys.exit(main())
