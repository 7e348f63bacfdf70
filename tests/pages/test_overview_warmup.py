"""The Overview's reads computed in the background while the first visitor logs in (``ui.features.warmup``, issue 14):
the login page starts one thread per process, and the Overview that follows the login is served from what it
cached -- the same cache entries, so not one of the page's reads runs again."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from register.console.queries import authority as authority_queries
from register.console.queries import overview as overview_queries
from register.feedback import scope
from register.scoring import profiles
from tests.helpers.accounts import TEST_PASSWORD, ensure_account
from tests.helpers.paths import REPO_ROOT
from ui.features import warmup  # binds the UI's cached reads to the real register reads before `counted` wraps them
from ui.framework.text import compact_count

APP = str(REPO_ROOT / "app.py")
# the register reads behind the Overview's cached reads (each module's own name, as ui/ calls it)
_READS = ((overview_queries, "overview"), (overview_queries, "filter_options"),
          (authority_queries, "authority_overview"),
          (scope, "scope_feedback"), (profiles, "active_profile"))


class _Reads:
    """Calls of the Overview's register reads, by name (``counts``); after ``refuse()`` every further call fails."""

    def __init__(self) -> None:
        self.counts = {name: 0 for _, name in _READS}
        self.refused = False

    def refuse(self) -> None:
        self.refused = True

    def wrap(self, name: str, original):
        def wrapper(*args, **kwargs):
            if self.refused:
                raise AssertionError(f"{name} ran again: the overview was not served from the warm-up's cache")
            self.counts[name] += 1
            return original(*args, **kwargs)
        return wrapper


@pytest.fixture
def counted(monkeypatch) -> _Reads:
    reads = _Reads()
    for module, name in _READS:
        monkeypatch.setattr(module, name, reads.wrap(name, getattr(module, name)))
    return reads


def _log_in(at: AppTest) -> AppTest:
    at.text_input(key="login_username").input("test-reviewer")
    at.text_input(key="login_password").input(TEST_PASSWORD)
    return at.button(key="FormSubmitter:login-Log in").click().run()


def test_the_login_page_warms_the_overview_and_the_overview_after_login_reads_nothing_again(
        seeded_db, counted, monkeypatch):
    monkeypatch.setenv("HRI_CONSOLE_WARMUP", "1")
    ensure_account("test-reviewer", "reviewer")
    responses = seeded_db.scalar("SELECT count(*) FROM responses WHERE is_current")
    started = []
    original = warmup.warm_overview
    monkeypatch.setattr(warmup, "warm_overview", lambda: started.append(True) or original())
    at = AppTest.from_file(APP, default_timeout=60).run()  # the login page
    assert not at.exception and not at.metric, "nobody is logged in yet"
    deadline = time.monotonic() + 30
    while not started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started, "the login page started the warm-up"
    thread = warmup.ensure_overview_warm()
    assert thread is not None and thread is warmup.ensure_overview_warm(), "one warm-up per process"
    thread.join(60)
    assert not thread.is_alive()
    assert {name: n for name, n in counted.counts.items() if name != "active_profile"} == {
        "overview": 1, "filter_options": 1, "authority_overview": 1, "scope_feedback": 1}
    assert counted.counts["active_profile"] >= 1
    counted.refuse()  # from here on, any read of the overview's data fails the page
    at = _log_in(at)
    assert not at.exception, at.exception
    shown = {m.label: m.value for m in at.metric}
    assert shown["Responses"] == compact_count(responses)
    assert "Supported claims on failing sources" in shown, "the Authority tile is drawn (the demo cites sources)"
    assert "Highest scope s_H" in shown, "the validated-feedback tile is drawn"


def test_without_the_warm_up_the_overview_reads_its_data_on_the_first_visit(seeded_db, counted):

    ensure_account("test-reviewer", "reviewer")
    at = AppTest.from_file(APP, default_timeout=60).run()  # HRI_CONSOLE_WARMUP=0 (tests/conftest.py)
    assert warmup.ensure_overview_warm() is None
    assert counted.counts["overview"] == 0
    at = _log_in(at)
    assert not at.exception and at.metric
    assert counted.counts["overview"] == 1 and counted.counts["authority_overview"] == 1


def test_an_empty_database_is_not_warmed(counted):
    """First start: the demo seeding writes the database and clears the caches; nothing is read before it."""
    import os

    from register import SYSTEM, Store
    from register.scoring.profiles import ensure_default_profile

    store = Store(os.environ["HRI_DB"])
    ensure_default_profile(store, SYSTEM)
    store.close()
    assert warmup.warm_overview() is False
    assert counted.counts["overview"] == counted.counts["authority_overview"] == 0


def test_a_failing_warm_up_is_logged_and_the_page_computes_its_data(seeded_db, monkeypatch, caplog):

    def broken(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(overview_queries, "overview", broken)
    warmup._warm_quietly()
    assert "the overview's warm-up failed" in caplog.text and "disk on fire" in caplog.text


def test_the_login_page_loads_the_chart_library_with_an_empty_static_chart(seeded_db):
    from ui.framework import browser_preload

    """The browser's half of the warm-up (``ui.framework.browser_preload.preload_chart_library``): a chart and a
    table on the login page, so the browser fetches their libraries while the password is typed -- hidden, the chart
    without data."""
    ensure_account("test-reviewer", "reviewer")
    at = AppTest.from_file(APP, default_timeout=60).run()  # the login page (warm-up of the reads off)
    assert not at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    spec = json.loads(charts[0].proto.spec)
    assert spec.get("data", []) == []
    layout = spec["layout"]
    assert layout["height"] == 10 and layout["xaxis"]["visible"] is False and layout["yaxis"]["visible"] is False
    config = json.loads(charts[0].proto.config)
    assert config["staticPlot"] is True and config["displayModeBar"] is False
    assert len(at.dataframe) == 1
    assert any(f".st-key-{browser_preload.PRELOAD_KEY} {{display: none}}" in h.proto.body for h in at.get("html"))
    at = _log_in(at)
    assert not at.exception and at.metric
    assert all(json.loads(c.proto.spec)["layout"].get("height") != 10 for c in at.get("plotly_chart")), \
        "the logged-in pages do not draw it"


def test_the_warm_up_builds_the_overview_charts_from_what_it_read(seeded_db, monkeypatch):
    """Plotly loads the code that checks each kind of trace and layout property on a process's first figure of it:
    the warm-up builds the Overview's charts (and drops them) so that the first Overview does not pay for it."""

    built = []
    original = warmup.build_overview_figures
    monkeypatch.setattr(warmup, "build_overview_figures", lambda *args: built.extend(original(*args)) or built)
    assert warmup.warm_overview() is True
    assert [type(trace).__name__ for fig in built for trace in fig.data[:1]] == ["Bar"] * 5, \
        "the band mix, the dimensions, the histogram, the High + Critical share and the Authority chart, each drawn"
    assert all(len(fig.data[0].x or fig.data[0].y or ()) > 0 for fig in built), "built from the data it read"
