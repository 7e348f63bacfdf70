"""Local accounts: argon2 hashes, one-time passwords, one message for every failed login, exponential
locks recorded in the database and audited, stale edits refused, roles of SSO users from roles.toml."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from register import SYSTEM, Actor, StaleEdit
from register.access import identity
from register.db.store import utc_now
from register.errors import LOGIN_FAILED_MESSAGE, LoginFailed
from tests.helpers.actors import enrol

PASSWORD = "a long enough secret"


@pytest.fixture
def alice(store):
    """The reviewer alice with her own password, and the admins boss and other who manage her account."""
    enrol(store, Actor("boss", "admin"), Actor("other", "admin"))
    one_time = identity.create_user(store, SYSTEM, "alice", "reviewer", "Alice Example")
    identity.change_own_password(store, Actor("alice", "reviewer"), one_time, PASSWORD)
    return store


def _events(store, action: str) -> list[tuple]:
    return store.query("SELECT actor_name, actor_role, entity_id, after FROM audit_events WHERE action = ? "
                       "ORDER BY seq", [action])


def test_passwords_are_stored_only_as_argon2id_hashes(alice):
    stored = alice.query_one("SELECT password_hash FROM users WHERE username = 'alice'")[0]
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    audit_text = " ".join(str(r) for r in alice.query("SELECT before, after FROM audit_events"))
    assert "$argon2" not in audit_text and PASSWORD not in audit_text  # the hash never reaches the trail


def test_bootstrap_creates_one_admin_once_with_a_random_password_that_must_be_changed(store):
    first = identity.bootstrap_admin(store, SYSTEM)
    assert first and len(first) >= 16
    assert identity.bootstrap_admin(store, SYSTEM) is None  # accounts exist: nothing to do
    admin = identity.get_user(store, "admin")
    assert (admin.role, admin.must_change_password, admin.disabled) == ("admin", True, False)
    assert identity.authenticate(store, "admin", first).must_change_password


def test_no_built_in_password_two_bootstraps_differ(tmp_path):
    from register import Store

    passwords = []
    for i in range(2):
        s = Store(tmp_path / f"db{i}.duckdb")
        passwords.append(identity.bootstrap_admin(s, SYSTEM))
        s.close()
    assert passwords[0] != passwords[1]


@pytest.mark.parametrize("username, password", [
    ("alice", "wrong password!"), ("nobody", PASSWORD), ("", ""), ("alice' OR '1'='1", "x' OR '1'='1"),
    ("ALICE", PASSWORD),
])
def test_every_failed_login_says_the_same_thing(alice, username, password):
    with pytest.raises(LoginFailed) as caught:
        identity.authenticate(alice, username, password)
    assert str(caught.value) == LOGIN_FAILED_MESSAGE == "Invalid username or password"


def test_a_disabled_account_cannot_log_in_with_the_right_password(alice):
    identity.set_disabled(alice, SYSTEM, "alice", True)
    with pytest.raises(LoginFailed):
        identity.authenticate(alice, "alice", PASSWORD)
    assert json.loads(_events(alice, "login.failed")[-1][3])["reason"] == "account disabled"


def test_repeated_failures_lock_the_account_exponentially_and_are_audited(alice):
    now = utc_now()
    for attempt in range(1, 6):
        with pytest.raises(LoginFailed):
            identity.authenticate(alice, "alice", "wrong", now=now)
        failed, locked_until = alice.query_one("SELECT failed_attempts, locked_until FROM users "
                                               "WHERE username = 'alice'")
        assert failed == attempt
        expected = identity.lock_seconds(attempt)
        if expected:
            assert locked_until == now + timedelta(seconds=expected)
            now = locked_until  # wait out the lock before the next try
        else:
            assert locked_until is None
    assert [identity.lock_seconds(n) for n in range(1, 8)] == [0, 0, 5, 10, 20, 40, 80]
    assert identity.lock_seconds(40) == identity.MAX_LOCK_SECONDS
    events = _events(alice, "login.failed")
    assert len(events) == 5 and all(e[0] == "alice" for e in events)
    assert json.loads(events[-1][3])["failed_attempts"] == 5


def test_a_locked_account_refuses_even_the_right_password_until_the_lock_ends(alice):
    now = utc_now()
    for _ in range(identity.FREE_ATTEMPTS):
        with pytest.raises(LoginFailed):
            identity.authenticate(alice, "alice", "wrong", now=now)
    with pytest.raises(LoginFailed):
        identity.authenticate(alice, "alice", PASSWORD, now=now + timedelta(seconds=1))
    assert len(_events(alice, "login.refused_locked")) == 1
    user = identity.authenticate(alice, "alice", PASSWORD, now=now + timedelta(seconds=6))
    assert user.username == "alice" and user.failed_attempts == 0 and user.locked_until is None


def test_unknown_usernames_are_audited_per_window_without_the_name(alice):
    with pytest.raises(LoginFailed):
        identity.authenticate(alice, "mallory", "guess")
    assert _events(alice, "login.failed") == []
    actor, role, entity, _ = _events(alice, "login.failed_unknown")[-1]
    assert (actor, role) == ("(unknown name)", "anonymous") and "mallory" not in entity


def test_reset_password_gives_a_new_one_time_password_and_lifts_the_lock(alice):
    for _ in range(4):
        with pytest.raises(LoginFailed):
            identity.authenticate(alice, "alice", "wrong")
    new = identity.reset_password(alice, Actor("boss", "admin"), "alice")
    user = identity.authenticate(alice, "alice", new)
    assert user.must_change_password and user.failed_attempts == 0
    with pytest.raises(LoginFailed):
        identity.authenticate(alice, "alice", PASSWORD)  # the old password is gone


def test_a_password_reset_ends_the_accounts_sessions_as_disabling_does(alice):
    """Issue 34, class 9: a session opened before the reset (it recorded the account's session generation at login)
    is over after it; one opened with the new password is not. A disable ends them too, for good: enabling the
    account again does not bring them back."""
    before = identity.authenticate(alice, "alice", PASSWORD)
    assert identity.session_ended(identity.get_user(alice, "alice"), before.session_generation) is None
    new = identity.reset_password(alice, Actor("boss", "admin"), "alice")
    after = identity.get_user(alice, "alice")
    assert identity.session_ended(after, before.session_generation) == (
        "the account's sessions were ended (password reset or role change)")
    fresh = identity.authenticate(alice, "alice", new)
    assert identity.session_ended(identity.get_user(alice, "alice"), fresh.session_generation) is None
    reset = json.loads(_events(alice, "user.reset_password")[-1][3])
    assert reset["session_generation"] == before.session_generation + 1  # audited with the reset
    identity.set_disabled(alice, Actor("boss", "admin"), "alice", True)
    assert identity.session_ended(identity.get_user(alice, "alice"), fresh.session_generation) == (
        "account disabled or removed")
    identity.set_disabled(alice, Actor("boss", "admin"), "alice", False)
    assert identity.session_ended(identity.get_user(alice, "alice"), fresh.session_generation) is not None
    assert identity.session_ended(None, 0) == "account disabled or removed"


@pytest.mark.parametrize("new, message", [("short", "at least"), ("", "at least"), ("eleven char", "at least"),
                                          (PASSWORD, "differ")])
def test_weak_new_passwords_are_refused(alice, new, message):
    with pytest.raises(identity.InvalidAccount, match=message):
        identity.change_own_password(alice, Actor("alice", "reviewer"), PASSWORD, new)


def test_the_new_password_must_not_be_the_username_or_the_old_one(store):
    one_time = identity.create_user(store, SYSTEM, "longusername1", "viewer")
    with pytest.raises(identity.InvalidAccount, match="not be the username"):
        identity.change_own_password(store, Actor("longusername1", "viewer"), one_time, "LongUsername1")
    with pytest.raises(identity.InvalidAccount, match="current password"):
        identity.change_own_password(store, Actor("longusername1", "viewer"), "not it", "another good secret")


@pytest.mark.parametrize("username", ["a", "'; DROP TABLE users; --", "<script>", "x" * 65, " spaced name "])
def test_bad_usernames_are_refused(store, username):
    with pytest.raises(identity.InvalidAccount, match="username"):
        identity.create_user(store, SYSTEM, username, "viewer")
    assert store.query_one("SELECT count(*) FROM users")[0] == 0


def test_duplicate_username_and_unknown_role_are_refused(alice):
    with pytest.raises(identity.InvalidAccount, match="taken"):
        identity.create_user(alice, SYSTEM, "alice", "viewer")
    with pytest.raises(identity.InvalidAccount, match="not a role"):
        identity.create_user(alice, SYSTEM, "bob", "superuser")


def test_a_role_change_ends_the_accounts_sessions_however_it_is_made(alice):
    """Issue 35: a role change ends the account's sessions, as a password reset does (it used to apply at the
    session's next run, the session going on): by ``set_role``, by an approved admin request, and by the identity
    provider's mapping at a company login (only when the role it maps to differs)."""
    before = identity.get_user(alice, "alice").session_generation
    identity.set_role(alice, Actor("boss", "admin"), "alice", "annotator")
    assert identity.session_ended(identity.get_user(alice, "alice"), before) == identity.SESSIONS_ENDED
    generation = identity.get_user(alice, "alice").session_generation
    grant = identity.request_admin(alice, Actor("boss", "admin"), "alice")
    identity.approve_admin(alice, Actor("other", "admin"), grant)
    assert identity.get_user(alice, "alice").session_generation == generation + 1
    carol = identity.sign_in_external(alice, "carol@example.com", "viewer", kind="oidc")
    same = identity.sign_in_external(alice, "carol@example.com", "viewer", kind="oidc")
    assert same.session_generation == carol.session_generation  # the same role again: nothing ends
    promoted = identity.sign_in_external(alice, "carol@example.com", "reviewer", kind="oidc")
    assert promoted.session_generation == carol.session_generation + 1


def test_a_stale_edit_of_an_account_is_refused(alice):
    version = identity.get_user(alice, "alice").row_version
    identity.set_role(alice, Actor("boss", "admin"), "alice", "annotator", expected_version=version)
    with pytest.raises(StaleEdit, match="changed by boss"):
        identity.set_role(alice, Actor("other", "admin"), "alice", "viewer", expected_version=version)
    assert identity.get_user(alice, "alice").role == "annotator"


def test_account_changes_are_audited_with_before_and_after(alice):
    identity.set_role(alice, Actor("boss", "admin"), "alice", "annotator")
    name, role, entity, after = _events(alice, "user.set_role")[-1]
    before = alice.query_one("SELECT before FROM audit_events WHERE action = 'user.set_role'")[0]
    assert (name, role, entity) == ("boss", "admin", "alice")
    assert json.loads(before)["role"] == "reviewer" and json.loads(after)["role"] == "annotator"


# --- SSO roles ---------------------------------------------------------------------------------

CONFIG = {
    "emails": {"Carol@Example.com": "admin"},
    "domains": {"example.com": "viewer"},
    "claims": {"groups": {"hri-reviewers": "reviewer"}},
}


@pytest.mark.parametrize("claims, role", [
    ({"email": "carol@example.com"}, "admin"),                                # exact address beats the domain
    ({"email": "dan@example.com"}, "viewer"),                                 # domain
    ({"email": "dan@example.com", "groups": ["x", "hri-reviewers"]}, "reviewer"),  # highest rule wins
    ({"email": "eve@elsewhere.org"}, None),                                   # unknown: refused
    ({"email": "carol@example.com", "email_verified": False}, None),          # unverified address counts for nothing
    ({"sub": "123", "groups": "hri-reviewers"}, "reviewer"),                  # string claim
    ({}, None),
])
def test_roles_of_sso_users_come_from_the_config(claims, role):
    assert identity.role_for_identity(claims, CONFIG) == role


def test_default_role_applies_only_to_unmapped_users():
    config = {**CONFIG, "default_role": "viewer"}
    assert identity.role_for_identity({"email": "eve@elsewhere.org"}, config) == "viewer"
    assert identity.role_for_identity({"email": "carol@example.com"}, config) == "admin"


def test_the_shipped_roles_file_parses_and_refuses_unknown_users():
    config = identity.load_roles_config(identity.DEFAULT_ROLES_FILE)
    assert identity.role_for_identity({"email": "someone@unknown.invalid"}, config) is None


def test_a_roles_file_with_an_unknown_role_is_refused(tmp_path):
    path = tmp_path / "roles.toml"
    path.write_text('[emails]\n"a@b.c" = "root"\n')
    with pytest.raises(identity.InvalidAccount, match="root"):
        identity.load_roles_config(path)
