"""Entry point of ``python -m hri_core``."""

import sys

from .cli import main

sys.exit(main())
