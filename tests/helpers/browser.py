"""Real-browser helpers shared by the end-to-end tests: logging in and out through the login form, reading
st.metric values, and screenshots in tests/artifacts/ (fixtures are in tests/e2e/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.helpers.paths import REPO_ROOT

ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
E2E_PASSWORD = "e2e password for tests only"  # accounts created by the fixture; never an app default
SESSION_COOKIE = "hri_session"  # ui.framework.session_cookie.COOKIE_NAME: a login that survives a reload


def submit_login_form(page, username: str, password: str) -> None:
    """Fill the login form and submit it with the keyboard (Enter in the password box).

    Streamlit submits a form on Enter only while the form's submit button is registered and enabled; an Enter
    that comes before (a page still connecting, under load) is dropped without a trace and the page stays as it
    was. So the button is awaited first, and the form counts as submitted once the password box is cleared
    (the form clears on submit) or the login page is gone; a dropped Enter is pressed again, twice at most."""
    page.get_by_role("textbox", name="Username").fill(username, timeout=60_000)
    password_box = page.get_by_role("textbox", name="Password")
    password_box.fill(password)
    login_button = page.get_by_role("button", name="Log in", exact=True)
    for _ in range(3):
        expect(login_button).to_be_enabled(timeout=60_000)
        password_box.press("Enter")
        for _ in range(40):  # 10 s
            if _left_login_form(password_box, password):
                return
            page.wait_for_timeout(250)


def _left_login_form(password_box, password: str) -> bool:
    try:
        return not password_box.count() or password_box.input_value(timeout=1_000) != password
    except PlaywrightTimeoutError:  # the page changed between the two calls
        return True


def browser_login(page, url: str, username: str, password: str = E2E_PASSWORD) -> None:
    """Log in through the login form with the keyboard (Enter submits) and wait for the overview and the login's
    session cookie. A session cookie an earlier login of the test left (a restarted server on the same database
    would resume its session) is dropped first; waiting for the new one means its hand-over cannot land after a
    later call dropped it."""
    page.context.clear_cookies(name=SESSION_COOKIE)
    page.goto(url)
    submit_login_form(page, username, password)
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    wait_for_session_cookie(page)


def session_cookie(page) -> dict | None:
    """The console's session cookie in the page's browser context, or None."""
    return next((c for c in page.context.cookies() if c["name"] == SESSION_COOKIE), None)


def wait_for_session_cookie(page, present: bool = True, timeout_ms: int = 30_000) -> dict | None:
    """The session cookie once a login's hand-over has set it (``present``), or None once a logout's cleared it
    (``ui.framework.session_cookie``: the page posts a nonce, the server answers with the cookie)."""
    for _ in range(timeout_ms // 250):
        cookie = session_cookie(page)
        if (cookie is not None) == present:
            return cookie
        page.wait_for_timeout(250)
    raise AssertionError(f"the session cookie was {'never set' if present else 'not cleared'}")


def browser_logout(page) -> None:
    """Log out from the sidebar and wait for the login page."""
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=30_000)


def metrics(page) -> dict[str, str]:
    """The st.metric values on the page, by label."""
    labels = page.get_by_test_id("stMetricLabel").all_inner_texts()
    values = page.get_by_test_id("stMetricValue").all_inner_texts()
    return {label.strip(): value.strip() for label, value in zip(labels, values, strict=True)}


def cut_metric_values(page) -> list[str]:
    """Labels of the st.metric values drawn cut short: an element of the value wider than its box (the
    metric then shows an ellipsis, e.g. "escal…" for "escalate")."""
    return page.evaluate(
        """() => {
            const labels = [...document.querySelectorAll('[data-testid="stMetricLabel"]')];
            const values = [...document.querySelectorAll('[data-testid="stMetricValue"]')];
            return values.flatMap((v, i) => [v, ...v.querySelectorAll('*')]
                .some(e => e.scrollWidth > e.clientWidth + 1) ? [labels[i].innerText.trim()] : []);
        }""")


def wait_metric(page, label: str, value: str, timeout: float = 30_000) -> None:
    """Wait until the st.metric labelled ``label`` shows ``value`` (pages rerun asynchronously)."""
    page.wait_for_function(
        """([label, value]) => {
            const labels = [...document.querySelectorAll('[data-testid="stMetricLabel"]')];
            const i = labels.findIndex(l => l.innerText.trim() === label);
            if (i < 0) return false;
            const v = document.querySelectorAll('[data-testid="stMetricValue"]')[i];
            return v && v.innerText.trim() === value;
        }""", arg=[label, value], timeout=timeout)


def screenshot(page, name: str) -> Path:
    """A full-page PNG in tests/artifacts/ (git-ignored; the folder is created here), to be looked at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
