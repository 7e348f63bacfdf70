"""What the command modules share: the exit codes, the acting user of CLI writes, the one place errors
reach the terminal, the parser class (usage errors exit 64), argument types (paths among them), progress lines
on stderr, the first use of a fresh database, and what a command handed to the console's process knows of the
command line that sent it (``HANDED``)."""

from __future__ import annotations

import argparse
import getpass
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from hri_core import HRIError
from register.access.permissions import SYSTEM_ROLE
from register.db.store import Actor, Store
from register.errors import RegisterError
from register.settings import settings

EXIT_OK, EXIT_FAILED, EXIT_QUARANTINED, EXIT_USAGE = 0, 1, 2, 64


@dataclass(frozen=True)
class HandedCommand:
    """A command carried out by the console's process for a command line (``register.cli.handoff``): that command
    line's working directory (its relative paths name files there) and its acting user."""

    cwd: Path
    actor: str


# Set by the console's runner (``register.cli.handoff_server``) in the thread that runs a handed command: a context
# variable, so that two commands handed at once each see their own, and the console's other threads none
HANDED: ContextVar[HandedCommand | None] = ContextVar("hri_handed_command", default=None)


def cli_actor() -> Actor:
    """The acting user of CLI writes: ``HRI_ACTOR``, else the login name; role ``system`` (whoever runs
    commands against the database file operates the machine: every permission, no four-eyes check). A command
    handed to the console acts as the command line that sent it: its ``HRI_ACTOR`` or login name."""
    handed = HANDED.get()
    if handed is not None:
        return Actor(name=handed.actor, role=SYSTEM_ROLE)
    name = settings().actor
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name in some containers
            name = "unknown"
    return Actor(name=name, role=SYSTEM_ROLE)


def render_error(error: BaseException, stream=None) -> None:
    """The one place errors reach the terminal: ``title: message`` on stderr.

    The register's errors (a database held by another process is ``DatabaseInUse``) and ``hri_core``'s
    carry their own title and a message that says what to do; anything else is unexpected.
    """
    stream = stream or sys.stderr
    message = str(error)
    if isinstance(error, (RegisterError, HRIError)):
        title = error.title
    elif isinstance(error, OSError):
        title = "File error"
    else:
        title = "Unexpected error"
        message = f"{type(error).__name__}: {message}"
    print(f"{title}: {message}", file=stream)


class Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors; 2 means "records quarantined" here, so use 64."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        print(f"Usage error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def positive(text: str) -> int:
    """An argparse type: an integer >= 1 (``--chunk-size 0`` would import nothing, forever)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def client_path(text: str) -> str:
    """An argparse type for a file or folder argument: the text as given, or, for a command handed to the console's
    process, resolved against the working directory of the command line that sent it (the console's process has a
    working directory of its own, which it shares between threads and must not change)."""
    handed = HANDED.get()
    if handed is None or not text:
        return text
    return str(handed.cwd / text)  # an absolute path stays as it is


def client_file_or_name(text: str) -> str:
    """``client_path`` for an argument that names a file or, when no such file exists, a bundled one by name (a judge
    profile): a handed command's relative path resolves only when the client has that file."""
    resolved = client_path(text)
    return resolved if Path(resolved).is_file() else text


def progress(done: int, total: int | None, message: str) -> None:
    print(f"  {done:,}" + (f"/{total:,}" if total else "") + f"  {message}", file=sys.stderr, flush=True)


def initialise(store: Store) -> None:
    """A fresh database file gets what ``init`` gives it (the migrations ran on opening): the default profile,
    written as the command line's actor (``cli_actor``: on a fresh file only ``system`` can, as no account exists)."""
    from register.scoring.profiles import ensure_default_profile

    if store.scalar("SELECT count(*) FROM scoring_profiles") == 0:
        version = ensure_default_profile(store, cli_actor())
        print(f"initialised {store.path}: schema created, default scoring profile v{version} active",
              file=sys.stderr)
