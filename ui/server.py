"""The console's process: the Streamlit app (``app.py``) and the register's HTTP API (``/api/v1``) on one Starlette
server, so that the one process that holds the database file serves people and pipelines alike.

Started by ``make run`` and ``python -m register serve``, which run ``python -m ui.server --port N`` with the
repository as the working directory (``streamlit run ui/server.py`` serves the same app, but binds its socket before
this module mends it: see ``_listen_without_delay``); ``streamlit run app.py`` still serves the console alone,
without the API.

Stopping: on SIGTERM or Ctrl+C the server stops taking requests, lets the running ones finish, stops the sessions,
then closes the database (a checkpoint: the file is whole, no log left to replay) and exits with status 0.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.web.server.starlette import starlette_server

from register.api import app as api
from register.cli import handoff_server
from register.db.store import Store
from register.readmodels import search_catchup

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
    command-line hand-off listener), the inbox watcher, the monitors' worker and the search index's background
    catch-up. ``app.py`` starts the same on its first page run; started here too, a server that no browser visited
    yet still takes handed commands, imports dropped files, delivers alerts and indexes what an API import stored."""
    from ui.features import intake, monitors, search_status

    try:
        console_store()
        search_status.ensure_search_indexer()  # first: the inbox's imports hand the index on to it
        intake.ensure_inbox_watcher()
        monitors.ensure_monitor_worker()
    except Exception:  # noqa: BLE001 - logged; the first page run or API call tries again and shows the error
        log.exception("the console's background work did not start; the first page or API call tries again")


def stop_background_work() -> None:
    """Stop the inbox watcher and the monitors' worker, each after its current step, before the database closes."""
    from ui.features import intake, monitors

    for stop in (intake.stop_inbox_watcher, monitors.stop_monitor_worker):
        try:
            stop()
        except Exception:  # noqa: BLE001 - a worker that fails to stop must not keep the database open
            log.exception("stopping the console's background work")


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """At start: the background work, in a thread of its own (opening a large database must not hold the server's
    start). After the server stopped serving: stop the search index's catch-up and close the database the process
    opened."""
    threading.Thread(target=start_background_work, name="hri-console-start", daemon=True).start()
    yield
    handoff_server.stop_listener()  # first: no command of `python -m register` is handed over to a closed database
    stop_background_work()
    for store in _opened:
        indexer = search_catchup.running_indexer(store)
        if indexer is not None:  # its slice being written commits first; what is left waits for the next start
            indexer.stop()
        store.close()


def _exit_cleanly(_signum: int, _frame: Any) -> None:
    # The server (uvicorn) catches SIGTERM and SIGINT while it runs, shuts down gracefully, then raises the signal
    # again for the handler that was there before it: this one, which ends the process with status 0 rather than
    # as killed by the signal (a supervisor reads a stop it asked for as a clean one).
    sys.exit(0)


def _listen_without_delay(bind: Callable[..., socket.socket]) -> Callable[..., socket.socket]:
    """Streamlit binds the listening socket itself (``_bind_socket``), with protocol 0, so asyncio does not set
    TCP_NODELAY on the connections it accepts: every response after a keep-alive connection's first waited for the
    client's delayed ACK, about 40 ms (docs/performance.md, "The HTTP API"). Accepted sockets inherit the option from
    the listening one, so it is set there -- when this module is imported before the server binds, as ``main`` does
    (``streamlit run`` binds first and imports the launcher later)."""

    def bind_without_delay(*args: Any, **kwargs: Any) -> socket.socket:
        sock = bind(*args, **kwargs)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    return bind_without_delay


if hasattr(starlette_server, "_bind_socket"):  # a Streamlit without it binds another way: nothing to mend
    starlette_server._bind_socket = _listen_without_delay(starlette_server._bind_socket)

if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGTERM, _exit_cleanly)

def session_cookie_routes() -> list[Any]:
    """The session cookie's routes (``ui.framework.session_cookie``: ``POST /auth/session``, ``/auth/session/end``),
    imported here as the store is: the launcher imports no ui module at its top (it has no cached read, but the rule
    is kept whole)."""
    from ui.framework import session_cookie

    return session_cookie.routes(console_store)


app = st.App(APP_SCRIPT, routes=api.routes(console_store) + session_cookie_routes(), lifespan=lifespan)


def main(argv: list[str] | None = None) -> None:
    """``python -m ui.server --port N [--address A]``: serve until SIGTERM or Ctrl+C."""
    parser = argparse.ArgumentParser(prog="python -m ui.server", description="the console and the HTTP API")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--address", default="127.0.0.1")
    args = parser.parse_args(argv)
    app.run(config={"server.port": args.port, "server.address": args.address, "server.headless": True,
                    "browser.gatherUsageStats": False})


if __name__ == "__main__":
    main()
