"""The Overview's reads computed while the first visitor after a restart logs in.

Every cached read of the console starts cold when its process starts, and the Overview is everyone's first
page: at scale its reads take seconds on a cold DuckDB (docs/performance.md). The login page (``app.py``,
nobody logged in) calls ``ensure_overview_warm``: the first call in a process starts one background thread
that fills the very cache entries the Overview asks for when no filter is chosen -- the active profile, the
filter options, the page's figures (``ui.features.overview.overview`` with ``ui.features.overview.overview_arguments``,
the function the page itself uses), the Authority figures and the validated-feedback tile for its default window --
while the visitor types a password. A login that comes first waits for the thread's result rather than running the
query twice (Streamlit computes one cache entry once, under a lock per entry); a write that clears the caches
while the thread computes makes Streamlit discard what it computed (its caches count their clears), so the
warm-up never leaves a stale figure behind.

The browser is warmed too, whatever ``HRI_CONSOLE_WARMUP`` says: the login page holds an empty chart and a one-cell
table, hidden (``ui.framework.browser_preload``, part of the login page).

Off with ``HRI_CONSOLE_WARMUP=0`` (the tests turn it off: a thread reading a test's database while the test runs
would make what they count depend on timing). An empty database is left alone (first start: the demo seeding
writes it and clears the caches). A failure is logged and otherwise ignored: the page computes what it needs.
"""

from __future__ import annotations

import logging
import threading

import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from register.console.queries.filters import Filters
from register.db.store import database_path_from_env
from register.demo import is_empty
from register.settings import settings
from ui.features import authority, feedback, figures, overview
from ui.framework import data

__all__ = ["build_overview_figures", "ensure_overview_warm", "warm_overview"]

_LOG = logging.getLogger(__name__)


def warm_overview() -> bool:
    """Compute the Overview's cached reads for no filter (see the module); False when the database is empty."""
    if is_empty(data.get_store()):
        return False
    profile = data.profile()
    data.filter_options()
    no_filter = Filters()
    weights, band_names, bins = overview.overview_arguments(profile)
    found = overview.overview(no_filter, weights, band_names, bins)
    sources = authority.overview(no_filter)
    feedback.scope_scores(window_days=feedback.DEFAULT_WINDOW, decay_lambda=profile.decay_lambda,
                          as_of=feedback.window_end(feedback.today()), use_cases=(), models=())
    build_overview_figures(found, band_names, profile.bands, sources)
    return True


def build_overview_figures(found: dict, band_names: tuple[str, ...], bands, sources: dict) -> list[go.Figure]:
    """The Overview's charts built from its figures (``found``: ``ui.features.overview.overview``; ``sources``: the
    Authority figures), and dropped: Plotly loads the code that checks each kind of trace and each layout property the
    first time a figure uses it, which the first Overview after a restart would otherwise pay (less of it after the
    login page's empty chart; docs/performance.md, "Figures behind the code")."""
    built = [figures.band_mix_figure(found["band_mix_by_week"], band_names),
             figures.dimension_contribution_figure(found["dimension_contributions"]),
             figures.score_histogram_figure(found["score_histogram"], bands),
             figures.high_share_figure(found["high_share_by_use_case"], "use case")]
    if sources.get("supported_sourced"):
        built.append(authority.authority_figure(sources))
    return built


def _warm_quietly() -> None:
    try:
        warm_overview()
    except Exception:  # the page computes it then; a warm-up must never be the reason a page fails
        _LOG.warning("the overview's warm-up failed; the first visit computes it", exc_info=True)


@st.cache_resource(show_spinner=False)
def _warmer(_database: str) -> threading.Thread:
    """One warm-up thread per process and database file (a Streamlit resource: started once)."""
    thread = threading.Thread(target=_warm_quietly, name="hri-overview-warmup", daemon=True)
    # the login page's run context: Streamlit's caches expect one in the thread that fills them
    add_script_run_ctx(thread, get_script_run_ctx(suppress_warning=True))
    thread.start()
    return thread


def ensure_overview_warm() -> threading.Thread | None:
    """Start this process's warm-up of the Overview unless it ran already or ``HRI_CONSOLE_WARMUP`` is 0."""
    if not settings().console_warmup:
        return None
    return _warmer(str(database_path_from_env().resolve()))
