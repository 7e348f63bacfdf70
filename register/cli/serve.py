"""``serve``: the console and the HTTP API in one process, in the foreground (what ``make run`` starts).

The process replaces itself with ``python -m ui.server`` (``os.execve``; the launcher runs Streamlit's server): its
PID is the server's, so a SIGTERM or Ctrl+C reaches the server, which stops the sessions, closes the database and
exits with status 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from register.db.store import database_path_from_env
from register.settings import child_environment, settings

REPOSITORY = Path(__file__).resolve().parents[2]


def add_serve(sub) -> None:
    serve = sub.add_parser("serve", help="serve the console and the HTTP API (/api/v1) on 127.0.0.1 until stopped")
    serve.add_argument("--port", type=int, help="the port (default: $HRI_PORT, else 8501)")
    serve.add_argument("--address", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1; put "
                                                              "a reverse proxy with TLS in front to serve others)")
    serve.set_defaults(func=cmd_serve, needs_store=False)


def server_command(port: int, address: str) -> list[str]:
    """The command line of the server process (the interpreter running this one)."""
    return [sys.executable, "-m", "ui.server", "--port", str(port), "--address", address]


def cmd_serve(_store: None, args) -> int:
    database = Path(args.db) if args.db else database_path_from_env()
    port = args.port or settings().port
    environment = child_environment(db=str(database.resolve()))
    os.chdir(REPOSITORY)  # `python -m` puts the working directory on sys.path: the packages import
    command = server_command(port, args.address)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, environment)
    return 0  # not reached: the process is the server now
