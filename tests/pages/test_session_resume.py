"""The login gate with web sessions (issue 35, item 6), under AppTest: a login starts a session and hands its cookie
over; a tab whose cookie names a live session (a reload, a new tab) is logged in to it; a logout, idle time or a
role change in the register logs every tab of the session out at its next run. AppTest has no cookies: a reload is a
new AppTest whose ``cookie_session`` answers what the browser's signed cookie would name."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest

from register import SYSTEM
from register.access import identity, web_sessions
from register.db.store import utc_now
from tests.helpers.accounts import TEST_PASSWORD, ensure_account
from tests.helpers.paths import REPO_ROOT
from ui.framework import auth, session_cookie

APP = str(REPO_ROOT / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=60)


def _login(username: str) -> AppTest:
    at = _app().run()
    at.text_input(key="login_username").input(username)
    at.text_input(key="login_password").input(TEST_PASSWORD)
    return at.button(key="FormSubmitter:login-Log in").click().run()


def _events(store, action: str) -> list[tuple]:
    return store.query("SELECT actor_name, after FROM audit_events WHERE action = ? ORDER BY seq", [action])


def _frames(at) -> list[str]:
    """The srcdoc of each frame the run drew (the cookie's hand-over)."""
    return [e.proto.srcdoc for e in at.get("iframe")]


@pytest.fixture
def cookie(monkeypatch):
    """``cookie["digest"] = ...``: what the next AppTests' handshake cookie names (None: no cookie)."""
    named: dict[str, str | None] = {"digest": None}
    monkeypatch.setattr(session_cookie, "cookie_session", lambda store: named["digest"])
    return named


def test_a_login_starts_a_session_and_hands_its_cookie_over(seeded_db, cookie):
    ensure_account("test-reviewer", "reviewer")
    at = _login("test-reviewer")
    assert not at.exception, at.exception
    assert at.title[0].value == "Overview"
    state = at.session_state[auth.SESSION_KEY]
    session = web_sessions.get(seeded_db, state["web_session"])
    assert session is not None and (session.username, session.method, session.ended_at) == (
        "test-reviewer", "local", None)
    assert _events(seeded_db, "session.start")[-1][0] == "test-reviewer"
    pending = at.session_state[session_cookie.HAND_OVER_KEY]
    assert pending["path"] == session_cookie.SET_PATH
    frames = _frames(at)
    assert len(frames) == 1 and pending["nonce"] in frames[0] and "/auth/session" in frames[0]
    assert "credentials: 'same-origin'" in frames[0]
    hand_over = web_sessions.COOKIE_NONCES.redeem(pending["nonce"], "set", seeded_db)  # what the route does
    assert hand_over is not None and web_sessions.session_hash(hand_over.session_id) == state["web_session"]
    at.run()
    assert _frames(at) == [] and session_cookie.HAND_OVER_KEY not in at.session_state  # drawn until used


def test_a_reload_or_a_new_tab_is_logged_in_to_the_live_session(seeded_db, cookie):
    ensure_account("test-reviewer", "reviewer")
    first = _login("test-reviewer")
    digest = first.session_state[auth.SESSION_KEY]["web_session"]
    logins = len(_events(seeded_db, "login"))
    cookie["digest"] = digest
    reloaded = _app().run()
    assert not reloaded.exception, reloaded.exception
    assert reloaded.title[0].value == "Overview"  # no login form
    assert any("Logged in as **Test reviewer** (reviewer" in c.value for c in reloaded.sidebar.caption)
    assert reloaded.session_state[auth.SESSION_KEY]["web_session"] == digest
    assert len(_events(seeded_db, "login")) == logins  # the session went on: nobody logged in
    assert _frames(reloaded) == []  # the browser has its cookie already


def test_a_cookie_of_an_ended_or_unknown_session_shows_the_login_form(seeded_db, cookie):
    ensure_account("test-reviewer", "reviewer")
    first = _login("test-reviewer")
    digest = first.session_state[auth.SESSION_KEY]["web_session"]
    web_sessions.end(seeded_db, identity.get_user(seeded_db, "test-reviewer").actor, digest)
    for named in (digest, web_sessions.session_hash("never issued")):
        cookie["digest"] = named
        at = _app().run()
        assert at.title[0].value == "HRI console — log in" and not at.metric


def test_a_logout_in_one_tab_logs_the_other_out_at_its_next_run(seeded_db, cookie):
    ensure_account("test-reviewer", "reviewer")
    first = _login("test-reviewer")
    cookie["digest"] = first.session_state[auth.SESSION_KEY]["web_session"]
    second = _app().run()
    assert second.title[0].value == "Overview"
    first.button(key="logout").click().run()
    assert first.title[0].value == "HRI console — log in"
    assert first.session_state[session_cookie.HAND_OVER_KEY]["path"] == session_cookie.CLEAR_PATH
    assert any(session_cookie.CLEAR_PATH in frame for frame in _frames(first))  # the cookie is cleared too
    second.run()
    assert second.title[0].value == "HRI console — log in" and not second.metric
    assert any("logged out (in another tab" in i.value for i in second.info)
    assert [name for name, _ in _events(seeded_db, "logout")] == ["test-reviewer"]  # one logout, one event


def test_a_role_change_ends_the_session_of_every_tab(seeded_db, cookie):
    ensure_account("test-reviewer", "reviewer")
    at = _login("test-reviewer")
    identity.set_role(seeded_db, SYSTEM, "test-reviewer", "viewer")
    at.run()
    assert at.title[0].value == "HRI console — log in"
    assert any("role changed" in i.value for i in at.info)
    name, after = _events(seeded_db, "session.revoked")[-1]
    assert name == "test-reviewer" and "role change" in json.loads(after)["reason"]


def test_an_idle_session_expires_for_every_tab(seeded_db, cookie, monkeypatch):
    monkeypatch.setenv("HRI_SESSION_MINUTES", "5")
    ensure_account("test-reviewer", "reviewer")
    at = _login("test-reviewer")
    digest = at.session_state[auth.SESSION_KEY]["web_session"]
    with seeded_db.cursor() as cursor:  # six minutes without a run in any tab
        cursor.execute("UPDATE web_sessions SET last_seen_at = ? WHERE session_hash = ?",
                       [utc_now() - timedelta(minutes=6), digest])
    at.run()
    assert at.title[0].value == "HRI console — log in"
    assert any("expired after 5 minutes" in i.value for i in at.info)
    assert _events(seeded_db, "session.expired")[-1][0] == "test-reviewer"
    cookie["digest"] = digest
    assert _app().run().title[0].value == "HRI console — log in"  # its cookie opens nothing either
