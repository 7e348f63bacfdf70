"""End to end in Chromium (issue 35, item 7): a reviewer with something waiting sees its count in the sidebar, opens
the Waiting for me page, follows the item's link to the page where it is done and settles it there; the count drops.
A screenshot of the Waiting for me page is written to tests/artifacts/waiting-page.png."""

from __future__ import annotations

import contextlib

import pytest

from tests.helpers.browser import browser_login, screenshot

pytestmark = pytest.mark.browser

RESPONSE = "paper-table-v"
TEXT = "The contract term is 36 months, not 24 (clause 4.1)."


def _reported_by_a_viewer(db) -> None:
    from register import Actor, Store
    from register.feedback.items import report_feedback

    with contextlib.closing(Store(db)) as store:
        claim = store.scalar("SELECT min(claim_id) FROM claims WHERE is_current AND response_id = ?", [RESPONSE])
        report_feedback(store, Actor("e2e-viewer", "viewer"), RESPONSE, TEXT, 0.6, claim_id=claim)


def test_a_reviewer_follows_the_sidebar_count_to_the_item_and_settles_it(start_app, page):
    server = start_app(prepare=_reported_by_a_viewer)
    page.set_default_timeout(180_000)  # a busy machine renders the overview's charts slowly
    browser_login(page, server["url"], "e2e-reviewer")
    sidebar = page.get_by_test_id("stSidebar")
    count = sidebar.get_by_role("link", name="Waiting for me: 1", exact=True)
    count.wait_for()
    count.click()
    page.get_by_role("heading", name="Waiting for me", exact=True).wait_for()
    page.get_by_role("heading", name="Feedback to validate (1)").wait_for()
    item = page.get_by_text(f"on {RESPONSE}", exact=False).first
    item.wait_for()
    assert TEXT[:40] in item.inner_text()
    assert page.url.endswith("/waiting")
    screenshot(page, "waiting-page")

    page.get_by_role("link", name="Open Feedback", exact=True).click()
    page.get_by_role("heading", name="Feedback", exact=True).wait_for()
    assert page.url.endswith("/feedback")
    page.get_by_role("heading", name="Validate or reject").wait_for()
    page.get_by_text("Reported by e2e-viewer").wait_for()  # the item it linked to is the one offered here
    page.get_by_role("button", name="Validate", exact=True).click()
    page.get_by_text("carries it and was rescored").wait_for()
    sidebar.get_by_role("link", name="Waiting for me: 0", exact=True).wait_for()
