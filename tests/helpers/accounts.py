"""Local accounts for AppTest page tests, in the app's own database (HRI_DB)."""

from __future__ import annotations

import os
import time

TEST_PASSWORD = "correct horse battery staple"  # test accounts only; never a default of the app


def create_accounts(store, accounts: dict[str, str], password: str = TEST_PASSWORD, label: str = "Test") -> None:
    """A local account per ``{username: role}`` with a known password (the one-time-password step done), named
    ``"<label> <role>"``; an existing account is left as it is."""
    from register import SYSTEM, Actor
    from register.access.identity import change_own_password, create_user, get_user

    for username, role in accounts.items():
        if get_user(store, username) is None:
            one_time = create_user(store, SYSTEM, username, role, f"{label} {role}")
            change_own_password(store, Actor(username, role), one_time, password)


def ensure_account(username: str, role: str, password: str = TEST_PASSWORD) -> int:
    """A local account in the HRI_DB database with a known password (no one-time-password step); returns its
    session generation, which a login records in the session (``ui.framework.auth``)."""
    from register import Store
    from register.access.identity import get_user

    store = Store(os.environ["HRI_DB"])
    try:
        create_accounts(store, {username: role}, password)
        user = get_user(store, username)
        return user.session_generation if user is not None else 0
    finally:
        store.close()


def login(at, role: str, username: str | None = None) -> str:
    """Log an AppTest session in as a local account ``test-<role>`` (created if missing); returns its name.

    Call before ``at.run()``. The login gate (ui.framework.shell.page_frame) re-reads the account on every run,
    so it lives in the app's database (HRI_DB).
    """
    username = username or f"test-{role}"
    generation = ensure_account(username, role)
    at.session_state["hri_auth"] = {"username": username, "role": role, "display_name": f"Test {role}",
                                    "method": "local", "last_seen": time.time(), "must_change": False,
                                    "generation": generation}
    return username


def open_page(page: str, role: str, username: str | None = None, *, timeout: float = 60):
    """An AppTest of app.py logged in as ``test-<role>`` (or ``username``), switched to ``page`` and checked to
    have run without an exception."""
    from streamlit.testing.v1 import AppTest

    from tests.helpers.paths import REPO_ROOT

    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=timeout)
    login(at, role, username)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at
