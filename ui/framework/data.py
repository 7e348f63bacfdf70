"""The app's one Store per process and its cached reads.

The Store is a Streamlit resource (one DuckDB read-write connection per process, as DuckDB
requires); read results are cached per query and arguments (``Filters`` is a frozen dataclass) and cleared
by what a write changed: ``after_write`` for a write to the record (every cached read may be stale),
``after_account_write`` for a login, logout, failed login or account change (only the reads of the
audit trail: a login must never make every user's next view of the data cold).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from hri_core.calibration import score_bins
from register import SYSTEM, Store
from register.access import four_eyes
from register.access.sources import mask_restricted_claims
from register.console import exports, review
from register.console.exports import CsvExport
from register.console.queries import detail, explorer
from register.console.queries import overview as overview_queries
from register.console.queries.filters import Filters
from register.db import audit
from register.db.store import database_path_from_env
from register.demo import is_empty, seed_demo
from register.labels import rubrics
from register.scoring import profiles, reproduce
from register.settings import settings


@st.cache_resource(show_spinner=False)
def get_store() -> Store:
    """Open (and on first start migrate) the database named by ``HRI_DB``, its DuckDB buffers bounded by
    ``HRI_CONSOLE_MEMORY_LIMIT`` (the server is one process for every user: its memory must stay bounded)."""
    store = Store(database_path_from_env(), memory_limit=settings().console_memory_limit)
    profiles.ensure_default_profile(store, SYSTEM)
    rubrics.ensure_default_rubric(store, SYSTEM)  # the labelling rubric in force (version 1: the shipped file)
    return store


def seed_if_empty(store: Store) -> bool:
    """Load the demo set into an empty database, with a progress bar. Returns True when it seeded.

    Adds ``HRI_DEMO_SYNTHETIC`` synthetic responses, like ``make run`` does. Checked once per session:
    a database that has responses never becomes empty again.
    """
    if st.session_state.get("_seed_checked"):
        return False
    st.session_state["_seed_checked"] = True
    if not is_empty(store):
        return False
    synthetic = settings().demo_synthetic
    bar = st.progress(0.0, text="First start: loading the demo data set...")

    def progress(done, total, message):
        bar.progress(min(1.0, done / total) if total else 0.5, text=message)

    seed_demo(store, SYSTEM, synthetic=synthetic, progress=progress)
    bar.empty()
    after_write()
    return True


def after_write() -> None:
    """A write to the record (responses, scores, registers, labels, profiles): clear every cached read."""
    st.cache_data.clear()
    reproduction.clear()


def after_account_write() -> None:
    """A write to accounts and the audit trail only (a session event, a password or role change).

    Clears the cached reads of the audit trail and its approvals, which show such events, and nothing
    else: no cached read depends on who is logged in (roles are passed as arguments, and service
    functions check the account's current state uncached).
    """
    for read in _ACCOUNT_READS:
        read.clear()


_ACCOUNT_READS: list = []


def account_read(func):
    """``st.cache_data`` for a read of accounts or the audit trail: cleared by ``after_account_write`` as
    well as by ``after_write``."""
    cached = st.cache_data(show_spinner=False)(func)
    _ACCOUNT_READS.append(cached)
    return cached


@st.cache_data(show_spinner=False)
def profile():
    return profiles.active_profile(get_store())


@st.cache_data(show_spinner=False)
def version_profile(version: int):
    """Profile ``version`` (its bands, band actions and weights: what a page shows scores under it with)."""
    return profiles.get_profile(get_store(), version)


@st.cache_data(show_spinner=False)
def filter_options() -> dict:
    return overview_queries.filter_options(get_store())


@st.cache_data(show_spinner=False)
def overview(f: Filters, weights: tuple[tuple[str, float], ...], bands: tuple[str, ...],
             bins: tuple[float, ...]) -> dict:
    """Every figure of the overview page (KPIs and the five charts' data) from one query."""
    return overview_queries.overview(get_store(), f, dict(weights), bands, bins=bins)


def overview_arguments(profile) -> tuple[tuple[tuple[str, float], ...], tuple[str, ...], tuple[float, ...]]:
    """What ``overview`` takes besides the filters, under ``profile``: its weights, its band names, and the
    histogram's bins (which never straddle a band bound and are read like bands, as the calibration page bins).
    One function for the page and the warm-up (``ui.features.warmup``), so both ask the cache for the same entry."""
    weights = tuple((d.value, w) for d, w in profile.weights.items())
    return weights, tuple(b.name for b in profile.bands), score_bins([b.upper for b in profile.bands])


@st.cache_data(show_spinner=False)
def responses_page(f: Filters, search: str | None, sort_by: str, descending: bool, limit: int, offset: int,
                   authority: str | None = None):
    return explorer.responses_page(get_store(), f, search=search, sort_by=sort_by, descending=descending,
                                   limit=limit, offset=offset, authority=authority)


def write_responses_export(path: Path, f: Filters, search: str | None, authority: str | None, *,
                           frame_up_to: int = 0) -> CsvExport:
    """The Responses page's export written by DuckDB to the CSV file ``path`` (not cached: it writes a file; the
    page keeps the file, never the rows)."""
    return exports.write_csv(get_store(), f, path, search=search, authority=authority, frame_up_to=frame_up_to)


@st.cache_data(show_spinner=False)
def response_detail(response_id: str, revision: int | None = None):
    return detail.response_detail(get_store(), response_id, revision)


@st.cache_data(show_spinner=False)
def review_queue(f: Filters, limit: int, offset: int):
    return review.review_queue(get_store(), f, limit=limit, offset=offset)


@st.cache_data(show_spinner=False)
def decisions_for(response_id: str):
    return review.decisions_for(get_store(), response_id)


@st.cache_data(show_spinner=False)
def get_profile(version: int):
    return profiles.get_profile(get_store(), version)


@st.cache_resource(show_spinner=False, max_entries=256)
def reproduction(response_id: str, keys: tuple[tuple[int, int], ...] | None = None) -> reproduce.Reproduction:
    """The response's current score recomputed from its stored labels and profile (``reproduce.reproduce``).

    ``keys``: its revisions' keys as (revision, key) pairs when the page has them (``response_detail``'s
    ``keys``): the id is then not looked up again (a scan of every id's hash, 15-40 ms at 10M answers).
    A resource, not ``st.cache_data``: the reproduction holds the stored response, a model ``st.cache_data``
    cannot pickle (see ``load_response``); it is frozen and the page only reads it, so every session may share it.
    Cleared by ``after_write`` like every cached read; at most 256 kept. Uncached it was most of a warm detail
    page's server time (0.1-0.2 s of 0.25-0.3 s at 10M answers, on every rerun)."""
    return reproduce.reproduce(get_store(), response_id, keys=None if keys is None else dict(keys))


def load_response(response_id: str, revision: int | None = None):
    """The stored response as an ``hri_core.Response`` (not cached: stored records are read back under
    ``NO_TEXT_LIMITS``, a model subclass ``st.cache_data`` cannot pickle; two small indexed queries)."""
    return reproduce.load_response(get_store(), response_id, revision)


def record_decision(actor, response_id: str, revision: int, decision: str, reason: str) -> int:
    """Record a review decision (a write: clears the cached reads)."""
    decision_id = review.record_decision(get_store(), actor, response_id, revision, decision, reason)
    after_write()
    return decision_id


@account_read
def audit_events(f, limit: int, offset: int):
    return audit.search_events(get_store(), f, limit=limit, offset=offset)


def audit_csv_writer(f) -> Callable[[Path], CsvExport]:
    """Writes the audit events matching ``f`` (newest first, at most 100,000) to a CSV file by DuckDB's COPY;
    the store is taken now, as a download runs the writer on a thread of its own."""
    store = get_store()
    return lambda path: audit.write_events_csv(store, f, path)


@account_read
def audit_options() -> dict:
    return audit.event_options(get_store())


@account_read
def audit_chain():
    return audit.verify_chain(get_store())


@account_read
def audit_head():
    return audit.head(get_store())


@account_read
def linked_approvals():
    return four_eyes.linked_approvals(get_store())



def claims_for_role(claims, role: str):
    """The claims with the spans of sources this role may not read withheld (never cached)."""
    return mask_restricted_claims(get_store(), claims, role)
