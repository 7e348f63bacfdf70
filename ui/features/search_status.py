"""The search index in the console: its catch-up in the background, and the line that says how far behind it is.

The catch-up is one thread per process (``ensure_search_indexer``, a Streamlit resource like the inbox watcher's,
stopped when the resource is released; ``register.readmodels.search_catchup``), started by ``app.py`` and by the
server at start (``ui.server.start_background_work``). While it runs, the console's imports (the upload page, the
inbox, ``POST /api/v1/imports``) and every revision made in the console hand the index to it: their reports come
without waiting for it. ``HRI_SEARCH_INDEX_POLL_SECONDS=0`` turns it off, and the console's imports then index
before their report, as the command line's do.

While the index is behind, the Responses page shows ``index_note`` beside its search box (``show_index_note``):
read fresh, never cached (the thread moves the index's mark in the background, which no cached read would see),
from the revisions above the mark only, and again every ``NOTE_REFRESH_SECONDS`` (showing nothing once the index has
caught up, until the page's next run no longer starts it).
Search is complete meanwhile (what the index has not caught up with is read directly): the line says so.
"""

from __future__ import annotations

import streamlit as st

from register.db.store import database_path_from_env
from register.readmodels import search_catchup, search_index
from register.readmodels.search_index import IndexLag
from register.settings import settings
from ui.framework import data
from ui.framework.text import escape_markdown

__all__ = ["NOTE_REFRESH_SECONDS", "ensure_search_indexer", "index_note", "show_index_note"]

NOTE_REFRESH_SECONDS = 5  # how often the line is read again while the index catches up


def _release(indexer: search_catchup.BackgroundIndexer | None) -> None:
    if indexer is not None:
        indexer.stop()


@st.cache_resource(show_spinner=False, on_release=_release)
def _indexer(database: str, poll_seconds: float) -> search_catchup.BackgroundIndexer:
    """The background catch-up: a thread, not a read. One per process and (database, interval)."""
    return search_catchup.start_indexer(data.get_store(), poll_seconds=poll_seconds)


def ensure_search_indexer() -> search_catchup.BackgroundIndexer | None:
    """Start this process's background catch-up of the search index if it is not running
    (``HRI_SEARCH_INDEX_POLL_SECONDS=0``: none)."""
    poll = settings().search_index_poll_seconds
    if poll <= 0:
        return None
    indexer = _indexer(str(database_path_from_env().resolve()), poll)
    if not indexer.running:  # stopped (e.g. by a test): start again
        indexer.start()
    return indexer


def index_note(lag: IndexLag | None) -> str | None:
    """The line beside the search box while the index is behind (markdown, escaped), or None when it holds every
    revision."""
    if lag is None:
        return None
    revisions = f"{lag.pending:,} revision{'s' if lag.pending != 1 else ''}"
    return escape_markdown(f"Search index as of {lag.since:%Y-%m-%d %H:%M} UTC, catching up: {revisions} to index. "
                           "Search still finds them (read directly meanwhile, more slowly).")


def show_index_note() -> None:
    """Show ``index_note`` while the index is behind, read again every ``NOTE_REFRESH_SECONDS`` until it is not."""
    if search_index.lag(data.get_store()) is not None:  # caught up: no line, and no fragment reading it again
        _live_note()


@st.fragment(run_every=NOTE_REFRESH_SECONDS)
def _live_note() -> None:
    # read on every run of the fragment (a rerun replays its arguments: none, so nothing read before is shown
    # again); once the index has caught up it shows nothing, and the page's next run no longer starts it
    note = index_note(search_index.lag(data.get_store()))
    if note is not None:
        st.caption(note, help="The search index catches up in the background after an import; until it has, the "
                              "answers it has not reached are searched by reading their texts: the results are the "
                              "same, only slower.")
