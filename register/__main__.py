"""Entry point of ``python -m register`` (see ``register.cli``)."""

import sys

from .cli import main

sys.exit(main())
