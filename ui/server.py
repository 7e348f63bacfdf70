"""The console's process: the Streamlit app (``app.py``) and the register's HTTP API (``/api/v1``) on one Starlette
server, so that the one process that holds the database file serves people and pipelines alike.

Started by ``make run`` and ``python -m register serve`` (``streamlit run ui/server.py`` with the repository as the
working directory); ``streamlit run app.py`` still serves the console alone, without the API.

Stopping: on SIGTERM or Ctrl+C the server stops taking requests, lets the running ones finish, stops the sessions,
then closes the database (a checkpoint: the file is whole, no log left to replay) and exits with status 0.
"""

from __future__ import annotations

import logging
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

log = logging.getLogger(__name__)
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


def start_background_work() -> None:
    """What the console's process runs whoever is signed in (or nobody): open the database (which starts the
    command-line hand-off listener), the inbox watcher and the monitors' worker. ``app.py`` starts the same on its
    first page run; started here too, a server that no browser visited yet still takes handed commands, imports
    dropped files and delivers alerts."""
    from ui.features import intake, monitors

    try:
        console_store()
        intake.ensure_inbox_watcher()
        monitors.ensure_monitor_worker()
    except Exception:  # noqa: BLE001 - logged; the first page run or API call tries again and shows the error
        log.exception("the console's background work did not start; the first page or API call tries again")


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """At start: the background work, in a thread of its own (opening a large database must not hold the server's
    start). After the server stopped serving: close the database the process opened."""
    threading.Thread(target=start_background_work, name="hri-console-start", daemon=True).start()
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
