"""``python -m polyparse.parser.cli``: the ``polyparse`` command."""

import sys

from . import main

sys.exit(main())
