"""The console works offline in a real browser (Chromium headless): from the login page, through a failed
login (an error with an icon), to every page an admin can open, not one request leaves 127.0.0.1.

Streamlit turns a ``:material/...:`` page icon into a favicon fetched from an outside font host; the
console's icon is a bundled image instead. Every request the browser makes is recorded (network events)
and every resource URL the document refers to (icons, images, scripts, style sheets, fonts) is read back,
since a headless browser need not fetch a favicon it is pointed at.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.helpers.browser import E2E_PASSWORD, screenshot, submit_login_form

pytestmark = pytest.mark.browser

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "javascript"}  # never a network request

# every page of app.py's navigation, by its sidebar label and the heading it renders (an admin sees all)
PAGES = [("Overview", "Overview"), ("Responses", "Responses"), ("Response detail", "Response detail"),
         ("Review queue", "Review queue"), ("Scoring profiles", "Scoring profiles"),
         ("Weight elicitation", "Weight elicitation"), ("Calibration", "Calibration"),
         ("Source register", "Source register"), ("Claims register", "Claims register"),
         ("Evidence rules", "Minimum evidence rules"), ("Pre-submission checklist", "Pre-submission checklist"),
         ("Audit trail", "Audit trail"), ("Users", "Users")]

# every URL the document refers to: icons and other links, images, scripts, frames, and what was loaded
DOCUMENT_URLS = """() => [
    ...[...document.querySelectorAll('link[href]')].map(e => e.href),
    ...[...document.querySelectorAll('img[src], script[src], iframe[src], source[src]')].map(e => e.src),
    ...performance.getEntriesByType('resource').map(e => e.name),
]"""


def _outside(urls) -> list[str]:
    """The URLs that would reach a host other than this machine's loopback."""
    found = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in LOCAL_SCHEMES or not parts.scheme:
            continue
        if (parts.hostname or "") not in LOCAL_HOSTS:
            found.append(url)
    return sorted(set(found))


def test_login_and_every_page_make_no_request_outside_localhost(app_server, page):
    requested: list[str] = []
    page.context.on("request", lambda request: requested.append(request.url))
    seen_in_document: list[str] = []
    url = app_server["url"]

    page.goto(url)
    page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=60_000)
    # a failed login first: its error box carries an icon
    submit_login_form(page, "nobody-here", "not the password")
    page.get_by_text("Invalid username or password").wait_for(timeout=30_000)
    seen_in_document += page.evaluate(DOCUMENT_URLS)

    submit_login_form(page, "e2e-admin", E2E_PASSWORD)
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    nav = page.get_by_test_id("stSidebarNav")
    for label, heading in PAGES:
        nav.get_by_role("link", name=label).click()
        page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)
        page.wait_for_timeout(800)  # late requests: charts, grids, the favicon a page sets
        seen_in_document += page.evaluate(DOCUMENT_URLS)
    screenshot(page, "offline-last-page")

    assert len({u for u in requested if urlsplit(u).hostname in LOCAL_HOSTS}) > 10  # the recorder saw the app
    assert _outside(requested) == []
    assert _outside(seen_in_document) == []
    favicons = page.evaluate("[...document.querySelectorAll('link[rel~=\"icon\"]')].map(e => e.href)")
    assert favicons and all(urlsplit(f).hostname in LOCAL_HOSTS for f in favicons), favicons
