"""The console's process: the Streamlit app (``app.py``) and the register's HTTP API (``/api/v1``) on one Starlette
server, so that the one process that holds the database file serves people and pipelines alike.

Started by ``make run`` and ``python -m register serve`` (``streamlit run ui/server.py`` with the repository as the
working directory); ``streamlit run app.py`` still serves the console alone, without the API.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from register.api import app as api
from register.db.store import Store

APP_SCRIPT = Path(__file__).resolve().parent.parent / "app.py"


def console_store() -> Store:
    """The console's one Store (``ui.framework.data.get_store``), imported on first use: importing the UI's cached
    reads before Streamlit's runtime exists would bind their caches to a storage of their own."""
    from ui.framework.data import get_store

    return get_store()


app = st.App(APP_SCRIPT, routes=api.routes(console_store))
