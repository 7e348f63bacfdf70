"""End to end in Chromium: a viewer reports a problem with a claim on the Feedback page, a reviewer (a second
person) validates it, the response gets a new revision carrying the label, and the overview shows the
scope's s_H tile. Screenshots of the Feedback page and of the tile are written to tests/artifacts/."""

from __future__ import annotations

import pytest

from tests.helpers.browser import browser_login, browser_logout, screenshot

pytestmark = pytest.mark.browser

RESPONSE = "paper-table-v"


def _open_feedback(page) -> None:
    """Through the navigation (a page load would start a new session, logged out)."""
    page.get_by_role("link", name="Feedback", exact=True).click()
    page.get_by_role("heading", name="Feedback", exact=True).wait_for()


def test_viewer_reports_reviewer_validates_and_the_overview_shows_s_h(app_server, page):
    url, db = app_server["url"], app_server["db"]
    page.set_default_timeout(180_000)  # a busy machine renders the overview's charts slowly
    browser_login(page, url, "e2e-viewer")
    _open_feedback(page)
    response_box = page.get_by_label("Response id")
    response_box.fill(RESPONSE)
    response_box.press("Enter")
    page.get_by_label("What is wrong (required)").fill("The contract term is 36 months, not 24 (clause 4.1).")
    page.get_by_role("button", name="Report", exact=True).click()
    page.get_by_text("reported on").wait_for()
    browser_logout(page)

    browser_login(page, url, "e2e-reviewer")
    _open_feedback(page)
    page.get_by_text("Claim that carries the label").wait_for()
    page.get_by_label("Claim that carries the label").click()
    page.get_by_role("option").first.click()
    page.get_by_role("button", name="Validate", exact=True).click()
    page.get_by_text("carries it and was rescored").wait_for()
    screenshot(page, "feedback-page")

    page.get_by_role("link", name="Overview", exact=True).click()
    page.get_by_text("Highest scope s_H").wait_for()
    page.get_by_text("Show every scope and the trend").click()
    page.get_by_text("Validated feedback s_H per scope").first.wait_for()
    screenshot(page, "overview-feedback-tile")
    app_server["stop"]()

    from register import Store

    store = Store(db)
    try:
        # the demo's own history (register.demo.feedback) is another answer's, recorded by the demo's people
        item = store.one("SELECT state, reported_by, validated_by, validated_revision FROM feedback_items "
                         "WHERE response_id = ?", [RESPONSE])
        assert item == {"state": "validated", "reported_by": "e2e-viewer", "validated_by": "e2e-reviewer",
                        "validated_revision": 2}
        assert store.scalar("SELECT count(*) FROM claims WHERE response_id = ? AND is_current AND "
                            "list_contains(labels, 'VALIDATED_NEGATIVE_FEEDBACK')", [RESPONSE]) == 1
        assert [a for (a,) in store.query("SELECT action FROM audit_events WHERE action LIKE 'feedback.%' "
                                          "AND actor_name LIKE 'e2e-%' ORDER BY seq")] == ["feedback.report",
                                                                                           "feedback.validate"]
    finally:
        store.close()
