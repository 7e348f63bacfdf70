"""Web sessions (issue 35, item 6): started at a login, resolved on every page run, ended by a logout, idle time, a
disable, a password reset or a role change; the cookie's signature and the one-time nonces that hand it over."""

from __future__ import annotations

import json
import os
import stat
from datetime import timedelta

import pytest

from register import SYSTEM, Actor
from register.access import identity, session_keys, web_sessions
from register.db.store import utc_now
from register.errors import InvalidAccount, PermissionDenied, SessionKeyError
from tests.helpers.actors import enrol

ALICE = Actor("alice", "reviewer")
BOSS = Actor("boss", "admin")
OTHER = Actor("other", "admin")
IDLE = timedelta(minutes=30)


@pytest.fixture
def store(store):
    enrol(store, ALICE, BOSS, OTHER)
    return store


def _events(store, action: str) -> list[tuple[str, str, dict]]:
    rows = store.query("SELECT actor_name, actor_role, after FROM audit_events WHERE action = ? ORDER BY seq",
                       [action])
    return [(name, role, json.loads(after) if after else {}) for name, role, after in rows]


def _digest(started: web_sessions.Started) -> str:
    return started.session.session_hash


# --- start and resolve ---------------------------------------------------------------------------


def test_a_session_starts_audited_and_stores_only_the_hash_of_its_id(store):
    started = web_sessions.start(store, ALICE, "local")
    session = started.session
    assert len(started.session_id) == 43 and session.session_hash == web_sessions.session_hash(started.session_id)
    assert store.scalar("SELECT count(*) FROM web_sessions WHERE session_hash = ?", [started.session_id]) == 0
    dumped = " ".join(str(row) for row in store.query("SELECT * FROM web_sessions"))
    audit = " ".join(str(row) for row in store.query("SELECT before, after FROM audit_events"))
    assert started.session_id not in dumped and started.session_id not in audit  # the secret is kept nowhere
    assert (session.username, session.method, session.ended_at) == ("alice", "local", None)
    assert session.session_generation == identity.get_user(store, "alice").session_generation
    name, role, after = _events(store, "session.start")[-1]
    assert (name, role, after["session"], after["method"]) == ("alice", "reviewer", session.session_no, "local")
    resolved = web_sessions.resolve(store, _digest(started))
    assert resolved is not None and resolved.ended is None and resolved.actor == ALICE
    assert web_sessions.resolve(store, web_sessions.session_hash("no such session")) is None


def test_a_session_is_not_started_for_a_disabled_account_or_a_stale_role(store):
    identity.set_disabled(store, SYSTEM, "alice", True)
    with pytest.raises(PermissionDenied, match="disabled"):
        web_sessions.start(store, ALICE, "local")
    with pytest.raises(PermissionDenied, match="now admin"):
        web_sessions.start(store, Actor("boss", "viewer"), "local")
    with pytest.raises(InvalidAccount, match="login method"):
        web_sessions.start(store, BOSS, "telepathy")
    assert store.scalar("SELECT count(*) FROM web_sessions") == 0


def test_an_idle_session_expires_and_activity_keeps_it(store):
    at = utc_now()
    started = web_sessions.start(store, ALICE, "local", now=at)
    digest = _digest(started)
    # touched at most once a minute: a run within the minute writes nothing
    assert not web_sessions.touch(store, started.session, now=at + timedelta(seconds=59))
    assert web_sessions.touch(store, started.session, now=at + timedelta(minutes=20))
    later = at + timedelta(minutes=45)  # 25 minutes after the last activity: still on
    resolved = web_sessions.resolve(store, digest, now=later, idle=IDLE)
    assert resolved is not None and resolved.ended is None
    assert resolved.session.last_seen_at == at + timedelta(minutes=20)
    gone = web_sessions.resolve(store, digest, now=at + timedelta(minutes=51), idle=IDLE)
    assert gone is not None and gone.ended == "no activity for more than 30 minutes"
    assert gone.session.end_action == "session.expired" and gone.session.ended_at is not None
    assert not web_sessions.touch(store, gone.session, now=at + timedelta(minutes=52))  # an ended one stays ended
    again = web_sessions.resolve(store, digest, now=at + timedelta(minutes=52), idle=IDLE)
    assert again is not None and again.ended is not None
    assert len(_events(store, "session.expired")) == 1  # recorded once, by the run that found it


def test_the_idle_limit_is_the_session_minutes_setting(store, monkeypatch):
    monkeypatch.setenv("HRI_SESSION_MINUTES", "5")
    at = utc_now()
    digest = _digest(web_sessions.start(store, ALICE, "local", now=at))
    assert web_sessions.resolve(store, digest, now=at + timedelta(minutes=4)).ended is None
    assert web_sessions.resolve(store, digest, now=at + timedelta(minutes=6)).ended == (
        "no activity for more than 5 minutes")


def test_a_logout_ends_the_session_audited_once(store):
    started = web_sessions.start(store, ALICE, "local")
    with pytest.raises(InvalidAccount, match="not a session of boss"):
        web_sessions.end(store, BOSS, _digest(started))
    assert web_sessions.end(store, ALICE, _digest(started))
    assert not web_sessions.end(store, ALICE, _digest(started))  # already ended: nothing more is written
    resolved = web_sessions.resolve(store, _digest(started))
    assert resolved.ended == "logout" and resolved.session.end_action == "logout"
    (name, role, after), = _events(store, "logout")
    assert (name, role, after["session"], after["reason"]) == ("alice", "reviewer", started.session.session_no,
                                                                "logout")


@pytest.mark.parametrize("change, reason", [
    (lambda s: identity.reset_password(s, BOSS, "alice"), identity.SESSIONS_ENDED),
    (lambda s: identity.set_role(s, BOSS, "alice", "annotator"), identity.SESSIONS_ENDED),
    (lambda s: identity.set_disabled(s, BOSS, "alice", True), "account disabled or removed"),
], ids=["password reset", "role change", "disabling"])
def test_a_password_reset_a_role_change_or_disabling_ends_the_session(store, change, reason):
    started = web_sessions.start(store, ALICE, "local")
    change(store)
    resolved = web_sessions.resolve(store, _digest(started))
    assert resolved is not None and resolved.ended == reason
    assert resolved.session.end_action == "session.revoked"
    name, _, after = _events(store, "session.revoked")[-1]
    assert name == "alice" and after["reason"] == reason and after["session"] == started.session.session_no
    if reason != "account disabled or removed":  # a new login starts a session that goes on
        fresh = web_sessions.start(store, identity.get_user(store, "alice").actor, "local")
        assert web_sessions.resolve(store, _digest(fresh)).ended is None


def test_naming_a_second_admin_ends_the_named_accounts_sessions(store):
    """A role change made by the sole-admin exception (``register.access.second_admin``) ends them too."""
    from register.access.second_admin import name_second_admin

    identity.set_role(store, SYSTEM, OTHER.name, "viewer")  # boss is now the only admin
    started = web_sessions.start(store, ALICE, "local")
    name_second_admin(store, BOSS, "alice", "cover for the holidays")
    resolved = web_sessions.resolve(store, _digest(started))
    assert resolved.ended == identity.SESSIONS_ENDED and resolved.user.role == "admin"


def test_a_demo_session_ends_when_demo_mode_is_off(store, monkeypatch):
    monkeypatch.setenv("HRI_DEMO_MODE", "1")
    demo = identity.sign_in_external(store, "demo-viewer", "viewer", kind="demo")
    started = web_sessions.start(store, demo.actor, "demo")
    assert web_sessions.resolve(store, _digest(started)).ended is None
    monkeypatch.delenv("HRI_DEMO_MODE")
    assert web_sessions.resolve(store, _digest(started)).ended == "demo mode is off"


# --- the cookie's signature ------------------------------------------------------------------------


def test_the_session_key_is_made_once_beside_the_database_mode_0600(store):
    path = session_keys.key_path(store.path)
    assert path == store.path.with_name(store.path.name + ".session-key") and not path.exists()
    key = session_keys.session_key(store.path)
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert session_keys.session_key(store.path) == key  # kept, not made again


def test_a_session_key_open_to_others_is_refused(store):
    session_keys.session_key(store.path)
    path = session_keys.key_path(store.path)
    os.chmod(path, 0o644)
    with pytest.raises(SessionKeyError, match="chmod 600"):
        session_keys.session_key(store.path)


def test_a_signed_cookie_verifies_and_a_forged_or_unsigned_one_does_not(store, tmp_path):
    started = web_sessions.start(store, ALICE, "local")
    key = session_keys.session_key(store.path)
    value = session_keys.sign(key, started.session_id)
    assert session_keys.verify(key, value) == started.session_id
    version, session_id, mac = value.split(".")
    other_key = session_keys.session_key(tmp_path / "another.duckdb")
    forged_id = ("A" if session_id[0] != "A" else "B") + session_id[1:]
    forged_mac = ("A" if mac[0] != "A" else "B") + mac[1:]
    for refused in (None, "", started.session_id,                       # unsigned: the bare id
                    f"{version}.{forged_id}.{mac}",                        # another id under the same signature
                    f"{version}.{session_id}.{forged_mac}",                # an edited signature
                    f"v2.{session_id}.{mac}",                              # another format
                    session_keys.sign(other_key, started.session_id),      # signed with another database's key
                    value + "=", value.replace(".", "|"), "v1..", "x" * 4000):
        assert session_keys.verify(key, refused) is None, refused


# --- the one-time nonces that hand the cookie over ---------------------------------------------------


def test_a_nonce_is_redeemed_once_for_its_purpose_and_database(store, tmp_path):
    nonces = web_sessions.CookieNonces()
    started = web_sessions.start(store, ALICE, "local")
    nonce = nonces.issue(store, "set", _digest(started), started.session_id)
    assert nonces.pending(nonce)
    found = nonces.redeem(nonce, "set", store)
    assert found is not None and (found.session_id, found.session_hash) == (started.session_id, _digest(started))
    assert not nonces.pending(nonce)
    assert nonces.redeem(nonce, "set", store) is None  # single use

    wrong_purpose = nonces.issue(store, "clear", _digest(started))
    assert nonces.redeem(wrong_purpose, "set", store) is None
    assert nonces.redeem(wrong_purpose, "clear", store) is None  # a wrong try used it up

    from register import Store
    other = Store(tmp_path / "other.duckdb", keep_anchors=False)
    try:
        elsewhere = nonces.issue(store, "set", _digest(started), started.session_id)
        assert nonces.redeem(elsewhere, "set", other) is None  # issued for another database
    finally:
        other.close()
    assert nonces.redeem("made-up", "set", store) is None
    with pytest.raises(ValueError, match="session's own id"):
        nonces.issue(store, "set", _digest(started), "not its id")


def test_a_nonce_expires_after_its_lifetime(store):
    nonces = web_sessions.CookieNonces(lifetime=timedelta(seconds=60))
    started = web_sessions.start(store, ALICE, "local")
    at = utc_now()
    late = nonces.issue(store, "set", _digest(started), started.session_id, now=at)
    assert nonces.pending(late, now=at + timedelta(seconds=59))
    assert not nonces.pending(late, now=at + timedelta(seconds=61))
    assert nonces.redeem(late, "set", store, now=at + timedelta(seconds=61)) is None
    in_time = nonces.issue(store, "set", _digest(started), started.session_id, now=at)
    assert nonces.redeem(in_time, "set", store, now=at + timedelta(seconds=59)) is not None
