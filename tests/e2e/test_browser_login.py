"""Login in a real browser (Chromium headless): a local account with the keyboard, a company account
through OIDC against a local provider (oidc-provider-mock), role-appropriate navigation, logout; and
hostile text in claims shown as text with no script run."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import E2E_PASSWORD, browser_login, browser_logout, screenshot, submit_login_form

pytestmark = pytest.mark.browser


def _nav_links(page) -> set[str]:
    page.get_by_test_id("stSidebarNav").wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    more = page.get_by_test_id("stSidebarNav").get_by_text(re.compile(r"View \d+ more"))
    if more.count():  # a long navigation is collapsed
        more.first.click()
        page.wait_for_timeout(300)
    texts = page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()
    return {t.strip().splitlines()[-1].strip() for t in texts if t.strip()}  # the icon's name comes first


def test_local_login_role_pages_and_logout(app_server, page):
    url = app_server["url"]
    page.goto(url)
    page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=60_000)
    assert page.get_by_test_id("stMetricValue").count() == 0  # no data before login
    # the chart and table libraries load while the password is typed
    # (ui.framework.browser_preload.preload_chart_library): a chart and a table in a hidden container, nothing of
    # them on screen
    preload = page.locator(".st-key-hri_preload")
    preload.locator(".js-plotly-plot").first.wait_for(state="attached", timeout=30_000)
    # hidden once the page has settled: the container's style is an element of its own, drawn beside it, so the
    # moment the chart attaches can come before it (one run in many sampled it visible; its screenshot, taken just
    # after, showed nothing of it)
    expect(preload).to_be_hidden(timeout=10_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)
    expect(page.locator(".js-plotly-plot").first).to_be_hidden()

    # a wrong password: one neutral message, still the login page
    submit_login_form(page, "e2e-reviewer", "not the password")
    page.get_by_text("Invalid username or password").wait_for(timeout=30_000)
    screenshot(page, "login-failed")

    browser_login(page, url, "e2e-reviewer", E2E_PASSWORD)
    links = _nav_links(page)
    assert {"Overview", "Review queue", "Audit trail"} <= links and "Users" not in links
    page.get_by_text("Logged in as").wait_for(timeout=10_000)
    page.get_by_role("link", name="Audit trail").click()
    page.get_by_text("The audit chain verifies").wait_for(timeout=30_000)
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Download CSV").wait_for(timeout=10_000)
    page.wait_for_timeout(1500)  # the canvas grid hydrates after the element appears
    screenshot(page, "audit-trail")
    browser_logout(page)

    browser_login(page, url, "e2e-viewer", E2E_PASSWORD)
    links = _nav_links(page)
    assert "Audit trail" not in links and "Users" not in links
    page.get_by_role("link", name="Review queue").click()
    page.get_by_text("recording a decision needs the reviewer").wait_for(timeout=30_000)
    assert page.get_by_role("button", name="Record decision").count() == 0
    browser_logout(page)

    browser_login(page, url, "e2e-admin", E2E_PASSWORD)
    assert {"Audit trail", "Users"} <= _nav_links(page)
    page.get_by_role("link", name="Users").click()
    page.get_by_role("heading", name="Users").wait_for(timeout=30_000)
    screenshot(page, "users")
    browser_logout(page)


HOSTILE_CLAIM = "<img src=x onerror=alert(1)>"


def test_hostile_claim_text_is_shown_as_text_and_no_script_runs(start_app, page, tmp_path):
    record = {"response_id": "xss-1", "use_case": "<script>alert(2)</script>",
              "question": "'; DROP TABLE responses; --",
              "answer": f"Intro. {HOSTILE_CLAIM} and <script>alert(3)</script> end.",
              "claims": [{"claim_id": "xss-1-1", "text": HOSTILE_CLAIM, "labels": ["CONTRADICTED"], "criticality": 3,
                          "span": "<svg onload=alert(4)>"}]}
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(record) + "\n")
    server = start_app(imports=(path,))
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    browser_login(page, server["url"], "e2e-reviewer")
    # a reload would start a new session (login again): move inside the app instead
    page.get_by_role("link", name="Response detail").click()
    page.get_by_role("heading", name="Response detail").wait_for(timeout=60_000)
    box = page.get_by_role("textbox", name="Response id")
    box.fill("xss-1")
    box.press("Enter")
    # the question, as text (markdown typography turns its "--" into a dash; the stored value is exact)
    page.get_by_text("'; DROP TABLE responses;").wait_for(timeout=30_000)
    page.get_by_text(HOSTILE_CLAIM, exact=False).first.wait_for(timeout=30_000)  # the answer shows the tag as text
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
    page.wait_for_timeout(2000)  # give any injected handler time to fire
    screenshot(page, "hostile-text")
    assert dialogs == []
    assert page.evaluate("document.querySelectorAll('img[src=\"x\"], svg[onload]').length") == 0
    assert page.evaluate("[...document.scripts].filter(s => s.textContent.includes('alert(')).length") == 0


def _sso_login(page, url: str, subject: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="Log in with your company account").click()
    page.get_by_role("button", name=subject, exact=True).click()  # the provider's predefined-user button


def _sso_logout(page) -> None:
    """Log out; Streamlit may pass through the provider's end-session page (confirm it) or not."""
    page.get_by_role("button", name="Log out").click()
    login_heading = page.get_by_role("heading", name="HRI console — log in")
    for _ in range(120):
        if "/oauth2/end_session" in page.url and page.get_by_role("button", name="End session").count():
            page.get_by_role("button", name="End session").click(no_wait_after=True)
            break
        if "/oauth2/" not in page.url and login_heading.count():
            break
        page.wait_for_timeout(500)
    login_heading.wait_for(timeout=30_000)


def test_sso_login_through_a_local_oidc_provider(sso_app_server, page):
    url = sso_app_server["url"]
    _sso_login(page, url, "carol")
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    page.get_by_text("Logged in as").wait_for(timeout=10_000)
    assert {"Overview", "Audit trail", "Users"} <= _nav_links(page)  # carol@example.com -> admin
    screenshot(page, "sso-admin")
    _sso_logout(page)

    _sso_login(page, url, "dan")
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    links = _nav_links(page)
    assert "Users" not in links and "Audit trail" not in links  # example.com -> viewer
    _sso_logout(page)

    _sso_login(page, url, "eve")  # not in roles.toml: refused
    page.get_by_text("has no role in this console").wait_for(timeout=60_000)
    assert page.get_by_test_id("stMetricValue").count() == 0

    screenshot(page, "sso-refused")
