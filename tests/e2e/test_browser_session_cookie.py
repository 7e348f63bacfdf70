"""A login that survives a reload (issue 35, item 6), in Chromium against the console's launcher (``ui/server.py``,
whose routes set the cookie): log in, reload and open a new tab without logging in again; the cookie is HttpOnly
(no script sees it) and SameSite=Strict; a logout in one tab logs the other out at its next interaction and clears
the cookie."""

from __future__ import annotations

import pytest

from tests.helpers.browser import (
    SESSION_COOKIE,
    browser_login,
    browser_logout,
    screenshot,
    session_cookie,
    wait_for_session_cookie,
)

pytestmark = pytest.mark.browser

LOGIN_HEADING = "HRI console — log in"


def test_a_login_survives_a_reload_and_a_new_tab_until_a_logout_in_either(app_server, page):
    url = app_server["url"]
    browser_login(page, url, "e2e-reviewer")
    heading = page.get_by_role("heading", name="Overview")
    top_with_hand_over = heading.bounding_box()["y"]  # the hand-over's frame is drawn, hidden, above the page
    cookie = wait_for_session_cookie(page)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    assert cookie["expires"] == -1  # a browser-session cookie: the register ends the session when idle
    assert SESSION_COOKIE not in page.evaluate("document.cookie")  # no script of the page can read it

    page.reload()
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    page.get_by_text("Logged in as").wait_for(timeout=30_000)
    assert page.get_by_role("heading", name=LOGIN_HEADING).count() == 0
    assert "E2E reviewer (reviewer)" in page.get_by_text("Logged in as").inner_text()
    assert abs(heading.bounding_box()["y"] - top_with_hand_over) < 1  # the hidden frame took no room
    page.wait_for_timeout(1500)  # the figures draw after the heading
    screenshot(page, "session-after-reload")

    other = page.context.new_page()  # a new tab of the same browser
    other.goto(url)
    other.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    other.get_by_text("Logged in as").wait_for(timeout=30_000)
    assert other.get_by_role("heading", name=LOGIN_HEADING).count() == 0

    browser_logout(other)
    wait_for_session_cookie(other, present=False)  # the logout's hand-over cleared it

    page.get_by_role("link", name="Review queue").click()  # the first tab's next interaction
    page.get_by_role("heading", name=LOGIN_HEADING).wait_for(timeout=60_000)
    page.get_by_text("You logged out (in another tab or window)").wait_for(timeout=30_000)
    assert page.get_by_test_id("stMetricValue").count() == 0
    screenshot(page, "session-ended-in-another-tab")

    page.reload()  # and a reload does not bring it back
    page.get_by_role("heading", name=LOGIN_HEADING).wait_for(timeout=60_000)
    assert session_cookie(page) is None
