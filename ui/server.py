"""The console's process: the Streamlit app (``app.py``) and the register's HTTP API (``/api/v1``) on one Starlette
server, so that the one process that holds the database file serves people and pipelines alike.

Started by ``make run`` and ``python -m register serve`` (``streamlit run ui/server.py`` with the repository as the
working directory); ``streamlit run app.py`` still serves the console alone, without the API.

Stopping: on SIGTERM or Ctrl+C the server stops taking requests, lets the running ones finish, stops the sessions,
then closes the database (a checkpoint: the file is whole, no log left to replay) and exits with status 0.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from register.api import app as api
from register.cli import handoff_server
from register.db.store import Store

APP_SCRIPT = Path(__file__).resolve().parent.parent / "app.py"
_opened: list[Store] = []


def console_store() -> Store:
    """The console's one Store (``ui.framework.data.get_store``), imported on first use: importing the UI's cached
    reads before Streamlit's runtime exists would bind their caches to a storage of their own."""
    from ui.framework.data import get_store

    store = get_store()
    if not _opened:
        _opened.append(store)
    return store


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """After the server stopped serving: close the database the process opened."""
    yield
    handoff_server.stop_listener()  # first: no command of `python -m register` is handed over to a closed database
    for store in _opened:
        store.close()


def _exit_cleanly(_signum: int, _frame: Any) -> None:
    # The server (uvicorn) catches SIGTERM and SIGINT while it runs, shuts down gracefully, then raises the signal
    # again for the handler that was there before it: this one, which ends the process with status 0 rather than
    # as killed by the signal (a supervisor reads a stop it asked for as a clean one).
    sys.exit(0)


if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGTERM, _exit_cleanly)

app = st.App(APP_SCRIPT, routes=api.routes(console_store), lifespan=lifespan)
