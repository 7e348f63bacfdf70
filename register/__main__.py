"""Entry point of ``python -m register`` (see ``register.cli``)."""

import sys

from register.cli import main

sys.exit(main())
