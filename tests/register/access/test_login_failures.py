"""Failed logins with names that are no account: one audit event per window with the count, nothing the
visitor typed in the trail, and the trail's growth bounded by time, not by the attacker's rate."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

from register import SYSTEM, Actor
from register.access import identity, login_failures
from register.db.audit import verify_chain
from register.db.store import utc_now
from register.errors import LoginFailed
from tests.helpers.actors import enrol

PASSWORD = "a long enough secret"
MARK = "zq-marker-7f3"  # in every hostile name: found anywhere in the database means a name was kept
HOSTILE = [f"{MARK} [click](https://evil.example/x.png) ![i](https://evil.example/i.png)",
           f"{MARK}' OR '1'='1' --", f"<img src=x onerror=alert(1)>{MARK}", f"{MARK}\x00\u202e\ud800",
           f"{MARK}" + "A" * 10_000, f"{MARK}\n2026-01-01 login ok admin"]


@pytest.fixture
def cheap_argon2(monkeypatch):
    """Hundreds of logins in a test: skip argon2's cost (test_login_timing.py checks every path runs it)."""
    monkeypatch.setattr(identity, "verify_password", lambda password_hash, password: False)


def _events(store, action: str) -> list[tuple]:
    return store.query("SELECT actor_name, actor_role, entity_type, entity_id, after FROM audit_events "
                       "WHERE action = ? ORDER BY seq", [action])


def _window(store, start) -> dict:
    return store.one("SELECT failures, len(name_digests) AS distinct_names, first_at, last_at, sealed "
                     "FROM login_unknown_windows WHERE window_start = ?", [start])


def _mid_window():
    """A moment well inside a window, so a test's few seconds never straddle two."""
    return login_failures.window_start(utc_now()) + timedelta(minutes=5)


def test_many_unknown_names_in_one_window_make_one_event_with_the_count(store, cheap_argon2):
    now = _mid_window()
    names = [f"{HOSTILE[i % len(HOSTILE)]}-{i}" for i in range(300)]
    for i, name in enumerate(names):
        with pytest.raises(LoginFailed):
            identity.authenticate(store, name, "guess", now=now + timedelta(seconds=i))
    events = _events(store, "login.failed_unknown")
    assert len(events) == 1 and _events(store, "login.failed") == []
    actor, role, entity_type, entity_id, after = events[0]
    start = login_failures.window_start(now)
    assert (actor, role, entity_type, entity_id) == ("(unknown name)", "anonymous", "login_window", start.isoformat())
    assert json.loads(after)["window_end"] == (start + login_failures.WINDOW).isoformat()
    window = _window(store, start)
    assert window["failures"] == 300 and window["distinct_names"] == login_failures.MAX_DIGESTS
    assert window["first_at"] == now and window["last_at"] == now + timedelta(seconds=299)


def test_nothing_the_visitor_typed_reaches_the_database(store, cheap_argon2):
    now = _mid_window()
    for name in HOSTILE:
        with pytest.raises(LoginFailed):
            identity.authenticate(store, name, "guess", now=now)
    for table in ("audit_events", "login_unknown_windows"):
        text = " ".join(str(row) for row in store.query(f"SELECT * FROM {table}"))  # noqa: S608 - fixed names
        assert MARK not in text and "evil.example" not in text and "onerror" not in text, table


def test_each_window_gets_one_event_that_seals_the_tally_of_the_one_before(store, cheap_argon2):
    first = _mid_window()
    plan = [(first, ["a", "b", "a", "c"]), (first + timedelta(minutes=15), ["x"] * 7),
            (first + timedelta(minutes=45), ["y"])]
    for start_at, names in plan:
        for i, name in enumerate(names):
            with pytest.raises(LoginFailed):
                identity.authenticate(store, name, "guess", now=start_at + timedelta(seconds=i))
    events = [json.loads(e[4]) for e in _events(store, "login.failed_unknown")]
    assert len(events) == 3
    assert events[0]["closed_windows"] == []
    assert [(w["failures"], w["distinct_names"]) for w in events[1]["closed_windows"]] == [(4, 3)]
    assert [(w["failures"], w["distinct_names"]) for w in events[2]["closed_windows"]] == [(7, 1)]
    assert events[1]["closed_windows"][0]["window_start"] == login_failures.window_start(first).isoformat()
    windows = login_failures.unknown_name_windows(store)
    assert [(w["failures"], w["sealed"]) for w in windows] == [(1, False), (7, True), (4, True)]
    assert verify_chain(store).ok


def test_known_accounts_keep_one_event_per_failure_and_their_lockout(store, cheap_argon2):
    identity.create_user(store, SYSTEM, "alice", "viewer")
    now = _mid_window()
    for _ in range(identity.FREE_ATTEMPTS):
        with pytest.raises(LoginFailed):
            identity.authenticate(store, "alice", "wrong", now=now)
        with pytest.raises(LoginFailed):
            identity.authenticate(store, "nobody", "wrong", now=now)
    failed = _events(store, "login.failed")
    assert [(e[0], json.loads(e[4])["failed_attempts"]) for e in failed] == [("alice", 1), ("alice", 2), ("alice", 3)]
    assert identity.get_user(store, "alice").locked_until == now + timedelta(seconds=identity.lock_seconds(3))
    assert len(_events(store, "login.failed_unknown")) == 1


def test_concurrent_unknown_name_failures_are_all_counted_under_one_event(store):
    now = _mid_window()

    def attempts(worker: int) -> None:
        for i in range(25):
            login_failures.record_unknown_name(store, f"w{worker}-{i}", now)

    threads = [threading.Thread(target=attempts, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _window(store, login_failures.window_start(now))["failures"] == 200
    assert len(_events(store, "login.failed_unknown")) == 1


def test_a_name_that_becomes_an_account_is_audited_as_that_account(store, cheap_argon2):
    now = _mid_window()
    with pytest.raises(LoginFailed):
        identity.authenticate(store, "carol", "guess", now=now)
    enrol(store, Actor("boss", "admin"))
    identity.create_user(store, Actor("boss", "admin"), "carol", "viewer")
    with pytest.raises(LoginFailed):
        identity.authenticate(store, "carol", "guess", now=now)
    assert [e[0] for e in _events(store, "login.failed")] == ["carol"]
    assert len(_events(store, "login.failed_unknown")) == 1
