"""End to end in Chromium: an admin edits a weight, sees the live sum, previews the impact and saves a
draft; publishing it herself is refused (four eyes); a second admin logs in and publishes it, which
rescores every response. Both admins are real local accounts created in the database before the
server starts (the server then owns the file), and both log in through the login form.
"""

from __future__ import annotations

import pytest

from tests.helpers.browser import screenshot, wait_metric

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery staple"
ADMINS = ("ann-admin", "bob-admin")


@pytest.fixture
def scoring_server(start_app):
    """A demo database with two admin accounts, served by app.py; yields (url, stop, db, the version the next
    saved draft takes)."""
    app = start_app(accounts=dict.fromkeys(ADMINS, "admin"), password=PASSWORD)
    return app["url"], app["stop"], app["db"], app["expected"]["next_profile_version"]


def _login_and_open_profiles(page, url: str, username: str) -> None:
    page.goto(url)
    page.get_by_label("Username", exact=True).fill(username, timeout=60_000)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)  # logged in: the default page
    page.get_by_role("link", name="Scoring profiles").click(timeout=30_000)
    page.get_by_role("heading", name="Scoring profiles").wait_for(timeout=30_000)


def _publish(page, reason: str) -> None:
    page.get_by_role("tab", name="Impact & publish").click()
    page.get_by_label("Reason for publishing (required)").fill(reason)
    page.get_by_role("button", name="Publish and rescore").click()


def test_edit_preview_save_then_a_second_admin_publishes(scoring_server, page):
    url, stop, db, new = scoring_server
    _login_and_open_profiles(page, url, "ann-admin")
    wait_metric(page, "Weight sum", "1.0000")
    weight_f = page.get_by_label("F — Factual inconsistency", exact=True)
    weight_f.fill("0.35")
    weight_f.press("Enter")
    wait_metric(page, "Weight sum", "1.1000")  # the live sum
    page.get_by_text("must sum to 1").first.wait_for(timeout=15_000)
    page.get_by_role("button", name="Normalise weights to sum 1").click()
    wait_metric(page, "Weight sum", "1.0000")
    page.get_by_role("button", name="Preview impact of these edits").click()
    page.get_by_test_id("stMetricLabel").filter(has_text="Band changes").first.wait_for(timeout=60_000)
    page.get_by_text("Band transitions:").first.wait_for(timeout=15_000)
    screenshot(page, "scoring-editor-impact")
    page.get_by_role("button", name="Save as draft").click()
    page.get_by_text(f"Saved draft version {new}.").wait_for(timeout=30_000)

    _publish(page, "my own draft")  # four eyes: the author cannot publish
    page.get_by_text("cannot also approve it").wait_for(timeout=30_000)
    screenshot(page, "scoring-four-eyes")

    second = page.context.browser.new_context(viewport={"width": 1400, "height": 2000}).new_page()
    try:
        _login_and_open_profiles(second, url, "bob-admin")
        _publish(second, "Reviewed: F weighs more for contract answers")
        second.get_by_text(f"Published v{new} and rescored").wait_for(timeout=60_000)
        screenshot(second, "scoring-published")
    finally:
        second.context.close()
    stop()

    from register import Store
    from register.scoring.lenses import bound_use_cases

    store = Store(db)
    try:
        version, status, created_by, published_by, weights = store.query_one(
            "SELECT profile_version, status, created_by, published_by, params->>'$.weights.F' "
            "FROM scoring_profiles WHERE profile_version = ?", [new])
        assert (version, status, created_by, published_by) == (new, "active", "ann-admin", "bob-admin")
        assert float(weights) == pytest.approx(0.35 / 1.1, abs=1e-5)
        # every answer is rescored: under the new default, but the use cases the demo binds to profiles of their
        # own (register.demo.lenses) under those
        bound = bound_use_cases(store)
        assert bound
        by_version = dict(store.query(
            "SELECT coalesce(list_extract($versions::INTEGER[], list_position($cases::VARCHAR[], r.use_case)), $new), "
            "count(*) FROM responses r WHERE r.is_current GROUP BY 1",
            {"versions": list(bound.values()), "cases": list(bound), "new": new}))
        scored = dict(store.query("SELECT profile_version, count(*) FROM scores WHERE is_current GROUP BY 1"))
        assert scored == by_version and scored[new] > 0
        default_before = store.query_one("SELECT count(*) FROM scores WHERE NOT is_current AND profile_version = 1")[0]
        assert default_before >= scored[new]  # the old scores are kept
    finally:
        store.close()


def _three_versions(db) -> None:
    """Two more versions published and run over everything: with one view kept, version 1 is read by a join."""
    from register import Store
    from tests.helpers.profiles import publish_versions

    store = Store(db)
    try:
        publish_versions(store)
    finally:
        store.close()


def test_an_admin_keeps_a_view_of_a_version_read_by_a_join(start_app, page, monkeypatch):
    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", "1")  # the preparing runs and the server alike
    app = start_app(accounts={"ann-admin": "admin"}, password=PASSWORD, prepare=_three_versions)
    page.goto(app["url"])
    page.get_by_label("Username", exact=True).fill("ann-admin", timeout=60_000)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    # the overview's filter says when a version is read by a join
    page.get_by_label("Profile version", exact=True).click()
    page.get_by_role("option", name="Version 1", exact=True).click()
    page.get_by_text("Version 1 is read from its score rows").wait_for(timeout=30_000)
    screenshot(page, "scoring-version-joined-sidebar")
    page.get_by_role("link", name="Scoring profiles").click(timeout=30_000)
    page.get_by_role("heading", name="Scoring profiles").wait_for(timeout=30_000)
    page.get_by_role("tab", name="Version").click()
    page.get_by_role("tabpanel", name="Version").get_by_label("Version", exact=True).click()
    page.get_by_role("option", name="1", exact=True).click()
    page.get_by_text("by joining its score rows").wait_for(timeout=30_000)
    page.get_by_role("button", name="Keep a view of v1").click()
    page.get_by_text("The view of v1 is kept").wait_for(timeout=60_000)
    page.get_by_text("kept as a read model of its own").wait_for(timeout=30_000)
    screenshot(page, "scoring-keep-view")
    app["stop"]()

    from register import Store
    from register.readmodels import version_views

    store = Store(app["db"])
    try:
        assert version_views.view_state(store, 1) == "kept" and version_views.check(store) == []
    finally:
        store.close()
