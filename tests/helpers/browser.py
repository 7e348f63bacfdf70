"""Real-browser helpers shared by the end-to-end tests: logging in and out through the login form, reading
st.metric values, and screenshots in tests/artifacts/ (fixtures are in tests/e2e/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import REPO_ROOT

ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
E2E_PASSWORD = "e2e password for tests only"  # accounts created by the fixture; never an app default


def browser_login(page, url: str, username: str, password: str = E2E_PASSWORD) -> None:
    """Log in through the login form with the keyboard (Enter submits) and wait for the overview."""
    page.goto(url)
    page.get_by_role("textbox", name="Username").fill(username)
    password_box = page.get_by_role("textbox", name="Password")
    password_box.fill(password)
    password_box.press("Enter")
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)


def browser_logout(page) -> None:
    """Log out from the sidebar and wait for the login page."""
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=30_000)


def metrics(page) -> dict[str, str]:
    """The st.metric values on the page, by label."""
    labels = page.get_by_test_id("stMetricLabel").all_inner_texts()
    values = page.get_by_test_id("stMetricValue").all_inner_texts()
    return {label.strip(): value.strip() for label, value in zip(labels, values, strict=True)}


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
