"""``python -m unolab``: the ``uno-lab`` command."""

import sys

from unolab.cli import main

sys.exit(main())
