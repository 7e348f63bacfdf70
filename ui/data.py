"""The app's one Store per process and its cached reads.

The Store is a Streamlit resource (one DuckDB read-write connection per process, as DuckDB
requires); read results are cached per query and cleared after every write.
"""

from __future__ import annotations

import streamlit as st

from register import SYSTEM, Store, queries
from register.profiles import ensure_default_profile
from register.store import database_path_from_env


@st.cache_resource(show_spinner=False)
def get_store() -> Store:
    """Open (and on first start migrate and seed) the database named by ``HRI_DB``."""
    store = Store(database_path_from_env())
    ensure_default_profile(store, SYSTEM)
    return store


def seed_if_empty(store: Store) -> bool:
    """Load the demo set into an empty database, with a progress bar. Returns True when it seeded."""
    if store.query_one("SELECT count(*) FROM responses")[0]:
        return False
    from register.demo import seed_demo

    bar = st.progress(0.0, text="First start: loading the demo data set...")

    def progress(done, total, message):
        bar.progress(min(1.0, done / total) if total else 0.5, text=message)

    seed_demo(store, SYSTEM, synthetic=2000, progress=progress)
    bar.empty()
    st.cache_data.clear()
    return True


@st.cache_data(show_spinner=False)
def scored_responses(limit: int = 500):
    return queries.scored_responses(get_store(), limit=limit)


@st.cache_data(show_spinner=False)
def totals() -> dict[str, int]:
    return queries.totals(get_store())


@st.cache_data(show_spinner=False)
def band_counts() -> dict[str, int]:
    return queries.band_counts(get_store())
