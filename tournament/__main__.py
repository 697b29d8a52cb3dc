"""``python -m tournament``: see :mod:`tournament.cli`."""

import sys

from tournament.cli import main

sys.exit(main())
